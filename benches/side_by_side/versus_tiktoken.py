#!/usr/bin/env python3
"""Our token estimation beside Python tiktoken on the same texts, in one run (SPEC EST-6, EST-7).

    cargo build --release                      # the hybrid-compaction binary
    python3 benches/side_by_side/versus_tiktoken.py   # 2,000 generated messages, 10 iterations
    python3 benches/side_by_side/versus_tiktoken.py --messages 10000 --iterations 5 --json out.json
    python3 benches/side_by_side/versus_tiktoken.py --input conv.json   # your own transcript

What runs, back to back in this one process:

1. `hybrid-compaction workload` generates the conversation (or `--input` names a transcript);
2. `hybrid-compaction bench --json --texts T` times our estimators on it (`utf8` and both token
   encodings, cold: a fresh estimator sums every entry; memoized: a memo warmed on the history
   sums it again, SPEC EST-7) and writes T: per entry the texts the token estimator counts (role,
   author, message text, call names and argument JSON, result texts), the fixed overhead tokens
   and our chat counts;
3. Python tiktoken (`requirements.txt`, pinned, installed from PyPI into a venv in the temp
   directory, `/tmp/hc-side-by-side-venv`, or `$HC_SIDE_BY_SIDE_VENV_DIR`) counts the
   same texts with `len(Encoding.encode_ordinary(t))`, one call per text as a host would,
   timed the same way (one untimed warm-up pass, then the median of `--iterations` passes);
   every entry's count (overhead + the texts' counts) must equal ours, or the script fails;
4. steps 2 and 3 repeat `--rounds` times (default 3): on a shared machine the load changes
   between minutes, so each round's ratios come from one back-to-back pair, and the summary is
   the median of the rounds' ratios.

tiktoken downloads its BPE rank files at run time (and caches them); nothing here downloads
them. The script loads the rank files bundled in the `bpe-openai` crate's sources
(`data/<encoding>.tiktoken.gz` under `~/.cargo/registry/src`, the very files the crate's build
script turns into the tables our counter uses), decompressed into the scratch directory, after
checking each against the SHA-256 that tiktoken itself expects for that encoding; tiktoken's
own `tiktoken_ext.openai_public` constructor supplies the pattern and special tokens, with its
loader replaced by one that reads that local file (tiktoken's cache turned off).

Reported: each median, its throughput over the texts' UTF-8 bytes, the ratios the issue targets
(Python tiktoken / our cold pass, per encoding; our memoized pass / our cold UTF-8 pass), the
token totals, and the load average before and after each half (`os.getloadavg`, 1 minute).
"""

import argparse
import glob
import gzip
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("HC_SIDE_BY_SIDE_VENV_DIR")
            or Path(tempfile.gettempdir()) / "hc-side-by-side-venv")
REQUIREMENTS = Path(__file__).resolve().parent / "requirements.txt"
ENCODINGS = ["o200k_base", "cl100k_base"]


def ensure_venv():
    """Creates the venv with the pinned requirements, then re-runs this script inside it."""
    py = VENV / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + ["-r", str(REQUIREMENTS)], check=True)
    os.execve(str(py), [str(py), __file__, *sys.argv[1:]], dict(os.environ, HC_SIDE_BY_SIDE_VENV="1"))


def rank_file(name, scratch):
    """The encoding's rank file from the bpe-openai crate sources, decompressed into scratch."""
    found = sorted(glob.glob(os.path.expanduser(
        f"~/.cargo/registry/src/*/bpe-openai-0.3.*/data/{name}.tiktoken.gz")))
    if not found:
        sys.exit(f"{name}: bpe-openai's data/{name}.tiktoken.gz not found under ~/.cargo/registry "
                 "(build the project first: cargo build --release)")
    path = Path(scratch) / f"{name}.tiktoken"
    path.write_bytes(gzip.decompress(Path(found[-1]).read_bytes()))
    return str(path), found[-1]


def encoding(name, scratch):
    """tiktoken's encoding `name` (its pattern and special tokens) over the bundled ranks,
    refused unless their SHA-256 is the one tiktoken expects."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import openai_public

    path, source = rank_file(name, scratch)
    # tiktoken copies any file it loads into its cache directory (the temp dir's data-gym-cache
    # by default); an empty TIKTOKEN_CACHE_DIR turns that off, so nothing is left behind.
    os.environ["TIKTOKEN_CACHE_DIR"] = ""

    def local(url, expected_hash=None):
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        if digest != expected_hash:
            sys.exit(f"{source}: sha256 {digest} differs from tiktoken's {expected_hash} ({url})")
        return load_tiktoken_bpe(path)

    openai_public.load_tiktoken_bpe = local
    return tiktoken.Encoding(**getattr(openai_public, name)())


def load():
    return os.getloadavg()[0]


def workload(args, scratch):
    """The conversation: `--input`, or `hybrid-compaction workload` generated into scratch."""
    if args.input is not None:
        return args.input
    conv = str(Path(scratch) / "conv.json")
    with open(conv, "w") as f:
        subprocess.run([args.bin, "workload", "--messages", str(args.messages),
                        "--seed", str(args.seed)], stdout=f, check=True)
    return conv


def ours(args, conv, scratch):
    """Runs `hybrid-compaction bench`; returns its JSON document, the texts file and the loads."""
    texts = Path(scratch) / "texts.json"
    before = load()
    out = subprocess.run(
        [args.bin, "bench", conv, "--json", "--iterations", str(args.iterations),
         "--estimators", "utf8,tokens:o200k_base,tokens:cl100k_base", "--texts", str(texts)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
    return json.loads(out.stdout), json.loads(texts.read_text()), (before, load())


def timed(iterations, f):
    """Median seconds of `iterations` calls of f after one untimed call (as `bench` does)."""
    f()
    samples = []
    for _ in range(iterations):
        t = time.perf_counter()
        f()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def check(encodings, entries):
    """Every entry's count (overhead + tiktoken's count of each text) must equal ours."""
    for name, enc in encodings.items():
        encode = enc.encode_ordinary
        differing = sum(
            1 for e in entries
            if e["overhead"] + sum(len(encode(t)) for t in e["texts"]) != e[name])
        if differing:
            sys.exit(f"{name}: {differing} of {len(entries)} entries counted differently by "
                     "Python tiktoken and by us")


def theirs(args, encodings, entries):
    """Times tiktoken over every text, one `encode_ordinary` call per text."""
    texts = [t for e in entries for t in e["texts"]]
    before = load()
    rows = {}
    for name, enc in encodings.items():
        encode = enc.encode_ordinary

        def count_all():
            n = 0
            for t in texts:
                n += len(encode(t))
            return n

        rows[name] = {"median_s": timed(args.iterations, count_all),
                      "tokens": sum(e[name] for e in entries)}
    return rows, texts, (before, load())


def report(doc, py, texts, loads):
    text_bytes = sum(len(t.encode("utf-8")) for t in texts)
    median = {r["measure"]: r["medianNs"] / 1e9 for r in doc["rows"]}
    mbs = lambda s: text_bytes / s / 1e6
    lines = [
        f"{doc['entries']} entries, {len(texts)} texts, {text_bytes} UTF-8 bytes of text "
        f"({doc['utf8Bytes']} EST-2 bytes); {doc['iterations']} iterations per measure",
        f"load average (1 min): ours {loads[0][0]:.2f} -> {loads[0][1]:.2f}, "
        f"Python {loads[1][0]:.2f} -> {loads[1][1]:.2f}",
        "",
        "| measure | median | MB/s of text | Python tiktoken / this |",
        "|---|---:|---:|---:|",
    ]
    result = {"entries": doc["entries"], "texts": len(texts), "textBytes": text_bytes,
              "iterations": doc["iterations"], "load": loads, "rows": [], "ratios": {}}

    def row(label, seconds, versus):
        ratio = f"{versus / seconds:.2f}x" if versus else ""
        lines.append(f"| {label} | {seconds * 1e3:.3f} ms | {mbs(seconds):.1f} | {ratio} |")
        result["rows"].append({"measure": label, "medianS": seconds, "mbPerS": mbs(seconds)})

    import tiktoken
    for name in ENCODINGS:
        py_s = py[name]["median_s"]
        row(f"Python tiktoken {tiktoken.__version__} {name} encode_ordinary", py_s, py_s)
        row(f"ours tokens:{name} cold", median[f"estimate tokens:{name} cold"], py_s)
        row(f"ours tokens:{name} memoized", median[f"estimate tokens:{name} memoized"], py_s)
        result["ratios"][f"python/{name} cold"] = py_s / median[f"estimate tokens:{name} cold"]
    row("ours utf8 cold", median["estimate utf8 cold"], None)
    cold_utf8 = median["estimate utf8 cold"]
    lines.append("")
    for name in ENCODINGS:
        memo = median[f"estimate tokens:{name} memoized"] / cold_utf8
        result["ratios"][f"{name} memoized/utf8 cold"] = memo
        lines.append(
            f"* {name}: Python tiktoken / our cold pass = "
            f"{result['ratios'][f'python/{name} cold']:.2f}x (target >= 2.5x); our memoized pass "
            f"= {memo:.2f}x our cold UTF-8 pass (target <= 5x); {py[name]['tokens']} tokens, "
            "every entry's count identical")
    return "\n".join(lines) + "\n", result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "hybrid-compaction"))
    ap.add_argument("--input", help="a transcript or wire case (default: a generated workload)")
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3,
                    help="ours then Python, this many times (the load of a shared machine "
                         "changes; each round's ratio is measured back to back)")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    ap.add_argument("--no-venv", action="store_true", help="use the current interpreter as it is")
    args = ap.parse_args()
    if not (args.no_venv or os.environ.get("HC_SIDE_BY_SIDE_VENV")):
        ensure_venv()
    if not Path(args.bin).exists():
        sys.exit(f"{args.bin}: not found (cargo build --release, or --bin PATH)")
    with tempfile.TemporaryDirectory(prefix="hc-side-by-side-") as scratch:
        conv = workload(args, scratch)
        encodings = {name: encoding(name, scratch) for name in ENCODINGS}
        rounds = []
        for r in range(args.rounds):
            doc, texts_doc, our_load = ours(args, conv, scratch)
            if r == 0:
                check(encodings, texts_doc["entries"])
            py, texts, py_load = theirs(args, encodings, texts_doc["entries"])
            rounds.append(report(doc, py, texts, (our_load, py_load)))
    for r, (table, _) in enumerate(rounds):
        sys.stdout.write(f"## round {r + 1} of {len(rounds)}\n\n{table}\n")
    results = [result for _, result in rounds]
    summary = {key: statistics.median(res["ratios"][key] for res in results)
               for key in results[0]["ratios"]}
    sys.stdout.write(f"## median over {len(rounds)} rounds\n\n")
    for key, value in summary.items():
        sys.stdout.write(f"* {key}: {value:.2f}x (rounds: "
                         + ", ".join(f"{res['ratios'][key]:.2f}x" for res in results) + ")\n")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"rounds": results, "medianRatios": summary}, indent=2) + "\n")

if __name__ == "__main__":
    main()
