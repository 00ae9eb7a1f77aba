#!/usr/bin/env python3
"""Golden token counts for SPEC EST-6, produced once with Python tiktoken (not run in CI).

    pip install tiktoken
    python3 tests/golden/make_token_golden.py --make-sample   # (re)write token_sample.json
    python3 tests/golden/make_token_golden.py                 # write token_golden.json

tiktoken normally downloads its BPE files; this machine has no such access, so the ranks are
loaded from the files bundled in the tiktoken-rs crate (the same bytes the Rust estimator
uses), with the pattern strings and special tokens of `tiktoken_ext.openai_public`. The path of
the crate's `assets` directory is found under ~/.cargo/registry or given as TIKTOKEN_RS_ASSETS.

The counting rule below is an independent transcription of SPEC EST-6 (per message: 3 + T(role)
+ T(text) + [T(name) + 1] + per call (T(name) + T(compact JSON arguments) + 1) + per result
T(result text)), with T = len(encode_ordinary(.)) and the EST-6 compact JSON (numbers in the
EST-2 .NET invariant text).
"""

import decimal
import glob
import hashlib
import json
import math
import os
import random
import sys

import tiktoken
from tiktoken.load import load_tiktoken_bpe
from tiktoken_ext import openai_public

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "token_sample.json")
GOLDEN = os.path.join(HERE, "token_golden.json")
ENCODINGS = ["o200k_base", "cl100k_base"]


def assets_dir():
    if os.environ.get("TIKTOKEN_RS_ASSETS"):
        return os.environ["TIKTOKEN_RS_ASSETS"]
    found = sorted(glob.glob(os.path.expanduser(
        "~/.cargo/registry/src/*/tiktoken-rs-0.12.*/assets")))
    if not found:
        sys.exit("tiktoken-rs assets not found; set TIKTOKEN_RS_ASSETS")
    return found[-1]


def encoding(name):
    """The encoding `name` as tiktoken_ext.openai_public defines it (pattern string, special
    tokens), its ranks read from the bundled file after checking tiktoken's expected SHA-256."""
    path = os.path.join(assets_dir(), name + ".tiktoken")

    def local(url, expected_hash=None):
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        if expected_hash is not None and digest != expected_hash:
            sys.exit(f"{path}: sha256 {digest} differs from tiktoken's {expected_hash} ({url})")
        return load_tiktoken_bpe(path)

    openai_public.load_tiktoken_bpe = local
    spec = getattr(openai_public, name)()
    return tiktoken.Encoding(**spec)


def dotnet_float(x):
    """EST-2: .NET invariant shortest round-trip text of a float (f64, precision 17)."""
    if x != x:
        return "NaN"
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if math.isinf(x):
        return sign + "Infinity"
    if x == 0:
        return sign + "0"
    t = decimal.Decimal(repr(abs(x))).as_tuple()
    digits = list(t.digits)
    exp = t.exponent
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exp += 1
    while len(digits) > 1 and digits[0] == 0:
        digits.pop(0)
    k = len(digits)
    scale = k + exp
    ds = "".join(str(d) for d in digits)
    if scale > max(k, 17) or scale < -3:
        e = scale - 1
        body = ds[0] + ("." + ds[1:] if k > 1 else "")
        return sign + body + "E" + ("-" if e < 0 else "+") + "%02d" % abs(e)
    if scale <= 0:
        return sign + "0." + "0" * (-scale) + ds
    if scale >= k:
        return sign + ds + "0" * (scale - k)
    return sign + ds[:scale] + "." + ds[scale:]


def jtext(v):
    """EST-6 compact JSON."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return dotnet_float(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(jtext(i) for i in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jtext(v[k])
                              for k in sorted(v)) + "}"
    raise TypeError(type(v))


def counts(enc, m):
    def t(s):
        return len(enc.encode_ordinary(s)) if s else 0
    text = "".join(p["text"] for p in m["parts"] if "text" in p)
    chat = 3 + t(m["role"]) + t(text)
    if "name" in m:
        chat += t(m["name"]) + 1
    for p in m["parts"]:
        if "call" in p:
            c = p["call"]
            args = jtext(c["arguments"]) if "arguments" in c else ""
            chat += t(c["name"]) + t(args) + 1
        elif "result" in p:
            v = p["result"]["value"]
            chat += t(v if isinstance(v, str) else jtext(v))
    return {"content": t(text), "chat": chat}


# ---------------------------------------------------------------- the sample (deterministic)

WORDS = ("the quick brown fox jumps over lazy dog context window compaction agent tool "
         "history summary provider token budget entry kind artifact reference lease").split()
SNIPPETS = [
    "日本語のテキストとカタカナ、ひらがな。",
    "中文文本：上下文压缩，令牌预算。",
    "한국어 문장입니다. 토큰을 셉니다.",
    "Ελληνικά κείμενα και ακόμη περισσότερα",
    "Русский текст с пунктуацией — «кавычки».",
    "العربية: نص من اليمين إلى اليسار",
    "עברית עם ניקוד: שָׁלוֹם",
    "ภาษาไทยไม่มีช่องว่างระหว่างคำ",
    "हिन्दी में लिखा गया वाक्य।",
    "e\u0301 a\u0308 o\u0303 n\u0303 combining marks: Z\u0351\u0362a\u0334l\u0315g\u0360o",
    "emoji 😀👍🏽👨‍👩‍👧‍👦🇫🇷🇯🇵 ❤️ 🧑🏿‍💻",
    "math ∑∫√∞ ≤ ≥ ≠ ±  arrows ← → ↔  box ┌─┐",
    "<|endoftext|> is just text here <|endofprompt|>",
    "fn main() {\n    println!(\"{}\", 1 + 2);\n}\n",
    "   leading spaces and\ttabs\t\tand trailing   ",
    "line one\r\nline two\r\n\r\n\nline four",
    "URL https://example.com/a/b?c=1&d=%20x#frag and email a.b@example.org",
    "numbers 1234567890 3.14159 -42 1e10 0x1F 1_000_000",
    "MIXED case CamelCase snake_case kebab-case SCREAMING_CASE",
    "\u200b zero width \u200d joiner \ufeff bom \u00a0 nbsp",
]


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def text(rng):
    r = rng.random()
    if r < 0.35:
        return rng.choice(SNIPPETS)
    if r < 0.6:
        return words(rng, rng.randint(1, 40)).capitalize() + rng.choice([".", "?", "!", ""])
    if r < 0.8:
        return " ".join(rng.choice(SNIPPETS + [words(rng, 5)]) for _ in range(rng.randint(2, 6)))
    return ""


def value(rng, depth=0):
    r = rng.random()
    if depth > 2 or r < 0.25:
        return rng.choice([words(rng, rng.randint(1, 6)), rng.choice(SNIPPETS), "", "a\"b\\c\n\u0001"])
    if r < 0.35:
        return rng.randint(-10**12, 10**12)
    if r < 0.45:
        return rng.choice([0.5, 3.14159, -2.5e-7, 1e21, 100.0, 0.0001, 12345.678, 1.0 / 3])
    if r < 0.5:
        return rng.choice([True, False, None])
    if r < 0.75:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(WORDS + ["ключ", "キー", "é", "Z", "a b"]): value(rng, depth + 1)
            for _ in range(rng.randint(0, 4))}


def make_sample():
    rng = random.Random(20261130)
    msgs = []
    call_no = 0
    while len(msgs) < 240:
        r = rng.random()
        if r < 0.08:
            msgs.append({"role": rng.choice(["system", "developer"]), "parts": [{"text": text(rng) or "You are helpful."}]})
        elif r < 0.45:
            m = {"role": "user", "parts": [{"text": text(rng)} for _ in range(rng.randint(1, 3))]}
            if rng.random() < 0.2:
                m["name"] = rng.choice(["alice", "bob_42", "Zoë", "user-007"])
            msgs.append(m)
        elif r < 0.7:
            msgs.append({"role": "assistant", "parts": [{"text": text(rng)}]})
        else:
            parts, results = [], []
            for _ in range(rng.randint(1, 3)):
                call_no += 1
                cid = "call_%04d" % call_no
                call = {"id": cid, "name": rng.choice(["search", "read_file", "get_weather", "run_sql", "日本語ツール"])}
                if rng.random() < 0.9:
                    call["arguments"] = {k: value(rng, 1) for k in rng.sample(WORDS, rng.randint(0, 4))}
                parts.append({"call": call})
                results.append({"result": {"id": cid, "value": value(rng)}})
            if rng.random() < 0.3:
                parts.insert(0, {"text": text(rng)})
            msgs.append({"role": "assistant", "parts": parts})
            msgs.append({"role": "tool", "parts": results})
    # Long texts: 8 messages of 5 to 40 KB mixing scripts.
    for i in range(8):
        n = rng.randint(5000, 40000)
        chunks, size = [], 0
        while size < n:
            c = rng.choice(SNIPPETS + [words(rng, 30)]) + rng.choice([" ", "\n", "\n\n", ". "])
            chunks.append(c)
            size += len(c.encode())
        msgs.append({"role": rng.choice(["user", "assistant", "tool"]) if i % 3 else "user",
                     "parts": [{"text": "".join(chunks)}]})
    # tool-role long text must be a result to be a tool message; keep it plain text otherwise.
    for m in msgs:
        if m["role"] == "tool" and any("text" in p for p in m["parts"]):
            m["role"] = "user"
    return msgs


def main():
    if "--make-sample" in sys.argv:
        with open(SAMPLE, "w", encoding="utf-8") as f:
            json.dump(make_sample(), f, ensure_ascii=False, indent=1)
            f.write("\n")
    with open(SAMPLE, encoding="utf-8") as f:
        sample = json.load(f)
    encs = {name: encoding(name) for name in ENCODINGS}
    golden = [{name: counts(enc, m) for name, enc in encs.items()} for m in sample]
    with open(GOLDEN, "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(json.dumps(g, sort_keys=True) for g in golden) + "\n]\n")
    print(f"{len(sample)} messages, golden counts written to {GOLDEN}")


if __name__ == "__main__":
    main()
