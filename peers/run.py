#!/usr/bin/env python3
"""The peer harness: the reducers of LangChain, Semantic Kernel and Microsoft Agent Framework
run on the project's seeded workload and judged by the oracle; writes ``docs/PEERS.md`` and
``docs/peers.png``.

Usage (from anywhere; paths are relative to the repository)::

    python3 peers/run.py            # full run: creates target/peers/venv, installs
                                    # peers/requirements.txt (exact pins) and this project's
                                    # wheel (maturin, release), then re-runs itself inside it
    python3 peers/run.py --smoke    # CI: 2 conversations, LangChain only, current interpreter
                                    # (needs hybrid_compaction + langchain-core), report in a
                                    # temporary directory; exit 1 if the harness is broken

For every conversation (``hc.workload(n, seed, format="langchain")``) and budget (10 / 30 / 60 %
of the conversation, in UTF-8 bytes or o200k tokens by the oracle's estimators), each reducer
runs once on the framework's own message objects with a counter of the same kind, in a forked
child with a timeout; its output is mapped back to entry ids (``reducers.map_back``) and the
oracle answers: ``verify`` (outcome, rejection reasons), the size of the output in both units
against the budget, and what the project's assembler does with the same conversation and
budget (outcome, kept entries). Times are the reducer call alone (message objects built
beforehand); our assembly's time comes from ``hybrid-compaction bench`` on the same conversation,
policy and estimator kind.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import multiprocessing
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from typing import Any, Dict, List, Optional, Tuple

ROOT = pathlib.Path(__file__).resolve().parents[1]
VENV = ROOT / "target" / "peers" / "venv"
WHEELS = ROOT / "target" / "peers" / "wheels"

FULL_PLAN = [(100, list(range(30))), (1000, list(range(6))), (10000, list(range(1)))]
SMOKE_PLAN = [(100, [0, 1])]
PERCENTS = [10, 30, 60]
KINDS = ["utf8", "o200k"]
ESTIMATOR = {"utf8": {"kind": "utf8"}, "o200k": {"kind": "tokens", "encoding": "o200k_base"}}
BENCH_ESTIMATOR = {"utf8": "utf8", "o200k": "tokens:o200k_base",
                   "o200k-memo": "memo:tokens:o200k_base"}
#: Recency units every proposal must keep (the verifier's policy, PRE-1.5): the last two (the
#: question being answered and the tool round answering it, or the previous answer).
RETENTION = 2
#: Endings after which the latest user message is the question the model must answer next.
OPEN_QUESTION = ("user-question", "tool-results")


# -- the environment ----------------------------------------------------------------------------

def bootstrap() -> None:
    """Creates the venv with the pinned peers and this project's wheel, then re-runs inside it."""
    py = VENV / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + ["-r", str(ROOT / "peers" / "requirements.txt")], check=True)
    env = dict(os.environ, CARGO_TARGET_DIR=str(ROOT / "target"))
    subprocess.run([str(VENV / "bin" / "maturin"), "build", "--release", "-q", "-m",
                    str(ROOT / "python" / "Cargo.toml"), "-i", str(py), "-o", str(WHEELS)],
                   check=True, env=env)
    wheel = sorted(WHEELS.glob("hybrid_compaction-*.whl"), key=lambda p: p.stat().st_mtime)[-1]
    subprocess.run(pip + ["--force-reinstall", "--no-deps", str(wheel)], check=True)
    os.execve(str(py), [str(py), __file__, *sys.argv[1:]], dict(os.environ, HC_PEERS_VENV="1"))


# -- one call in a forked child ------------------------------------------------------------------

def call(reducer: Any, objs: List[Any], budget: int, kind: str, neutrals: List[Any],
         ids: List[str], timeout: float) -> Tuple[str, float, Any]:
    """``(status, seconds, items)``: status ``ok``, ``error`` (items = the message) or
    ``timeout``. The child has the objects already (fork); only the mapped items come back."""
    from reducers import map_back

    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def child() -> None:
        try:
            started = time.perf_counter()
            out = reducer.run(objs, budget, kind)
            seconds = time.perf_counter() - started
            send.send(("ok", seconds, map_back(reducer, objs, out, neutrals, ids)))
        except BaseException as e:  # noqa: BLE001 - any failure of a peer is a result
            send.send(("error", 0.0, f"{type(e).__name__}: {e}"[:300]))

    p = ctx.Process(target=child, daemon=True)
    p.start()
    result: Tuple[str, float, Any] = ("timeout", timeout, None)
    if receive.poll(timeout):
        result = receive.recv()
    if p.is_alive():
        p.kill()
    p.join()
    receive.close()
    return result


# -- the oracle ----------------------------------------------------------------------------------

class Conversation:
    """One workload conversation: its entries, per-entry sizes in both units, budgets."""

    def __init__(self, n: int, seed: int) -> None:
        import hybrid_compaction as hc
        from reducers import neutral_of_dict

        self.n, self.seed = n, seed
        self.transcript = hc.workload(n, seed=seed, format="langchain")
        msgs = self.transcript["messages"]
        self.ending = hc.ENDINGS[seed % 4]
        self.ids = [m["id"] for m in msgs]
        self.neutrals = [neutral_of_dict(m) for m in msgs]
        overrides = {int(k): v for k, v in self.transcript["overrides"].items()}
        self.entries = hc.from_langchain(msgs, overrides=overrides)
        self.by_id = {e["id"]: e for e in self.entries}
        self.sizes = {k: dict(zip(self.ids, hc.evaluate(self.entries, policy(k, 10**9))["entrySizes"]))
                      for k in KINDS}
        self.total = {k: sum(self.sizes[k].values()) for k in KINDS}
        self.last_user = max(i for i, m in enumerate(msgs) if m["type"] == "human")
        self.input_verifies = verify(self.entries, self.ids, policy("utf8", 10**9))["outcome"] == "Accepted"

    def budget(self, kind: str, percent: int) -> int:
        return max(1, self.total[kind] * percent // 100)


def policy(kind: str, budget: int) -> Dict[str, Any]:
    import hybrid_compaction as hc

    return hc.policy(hard_limit=budget, trigger_margin=max(1, budget // 10),
                     recent_message_retention_count=RETENTION, maximum_compaction_attempts=1,
                     preservation_label="peers", preservation_version=1,
                     estimator=ESTIMATOR[kind])


def verify(original: List[Dict[str, Any]], proposed: List[Any], p: Dict[str, Any]) -> Dict[str, Any]:
    import hybrid_compaction as hc

    return hc.verify(original, proposed, p)


def new_entry(k: int, neutral: Any) -> Dict[str, Any]:
    """A message the peer made (a summary, or fabricated tool content) as a wire entry."""
    import hybrid_compaction as hc

    role, text, calls, results = neutral
    lc_type = {"user": "human", "assistant": "ai", "system": "system", "tool": "tool"}.get(role, "ai")
    if results:
        d = {"type": "tool", "content": results[0][1], "tool_call_id": results[0][0]}
    else:
        d = {"type": lc_type, "content": text,
             "tool_calls": [{"id": i, "name": nm, "args": json.loads(a)} for i, nm, a in calls]}
    parts = hc.langchain_messages([d])[0]["parts"]
    kind = "ToolExchange" if calls or results else "Summary"
    return {"id": f"peer-new-{k}", "kind": kind, "role": role, "parts": parts}


def judge(conv: Conversation, items: List[Any], kind: str, percent: int) -> Dict[str, Any]:
    """The oracle's verdict on a proposal plus its size in both units against the budgets."""
    import hybrid_compaction as hc

    proposed: List[Any] = []
    news: List[Dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            proposed.append(item)
        else:
            e = new_entry(len(news), item[1])
            news.append(e)
            proposed.append(e)
    v = verify(conv.entries, proposed, policy(kind, conv.budget(kind, percent)))
    size = {}
    for k in KINDS:
        s = sum(conv.sizes[k][i] for i in proposed if isinstance(i, str))
        if news:
            s += sum(hc.evaluate(news, policy(k, 10**9))["entrySizes"])
        size[k] = s
    kept = [i for i in proposed if isinstance(i, str)]
    return {
        "budget": conv.budget(kind, percent),
        "outcome": v["outcome"],
        "reasons": v["rejectionReasons"],
        "size": size,
        "over": {k: size[k] > conv.budget(k, percent) for k in KINDS},
        "kept": len(kept),
        "new": len(news),
        "systemKept": conv.ids[0] in kept,
        "lastUserKept": conv.ids[conv.last_user] in kept if conv.ending in OPEN_QUESTION else None,
        "empty": not proposed,
    }


def ours(conv: Conversation, kind: str, percent: int) -> Dict[str, Any]:
    """The project's assembler on the same conversation and budget (echoing reducer, ASM-7)."""
    import hybrid_compaction as hc

    p = policy(kind, conv.budget(kind, percent))
    a = hc.assemble(p, conv.entries)["assembly"]
    final = a["finalEntryIds"]
    if final is None:
        return {"assemblyOutcome": a["outcome"], "outcome": None, "reasons": [], "kept": 0,
                "over": {k: False for k in KINDS}, "size": None, "new": 0,
                "systemKept": None, "lastUserKept": None, "empty": False}
    verdict = judge(conv, final, kind, percent)
    verdict["assemblyOutcome"] = a["outcome"]
    return verdict


def bench_ours(conv: Conversation, kind: str, percent: int, work: pathlib.Path) -> Optional[float]:
    """Median seconds of one assembly of ``conv`` (``hybrid-compaction bench``, same policy)."""
    path = work / f"conv-{conv.n}-{conv.seed}.json"
    if not path.exists():
        path.write_text(json.dumps(conv.transcript, ensure_ascii=False))
    p = policy(kind.split("-")[0], 1)
    cmd = [sys.executable, "-m", "hybrid_compaction", "bench", str(path), "--json",
           "--estimators", "utf8", "--iterations", "5", "--estimator", BENCH_ESTIMATOR[kind],
           "--budget-percent", str(percent), "--policy", json.dumps(p)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"bench failed: {out.stderr.strip()}", file=sys.stderr)
        return None
    doc = json.loads(out.stdout)
    row = next(r for r in doc["rows"] if r["measure"].startswith("assemble"))
    return float(row["medianNs"]) / 1e9


class _Sink(list):  # type: ignore[type-arg]
    """The records, also appended to a JSON Lines file as they come (a long run can be
    reported on, or merged with another, even if it is stopped)."""

    def __init__(self, path: Optional[pathlib.Path]) -> None:
        super().__init__()
        self.path = path

    def append(self, rec: Dict[str, Any]) -> None:
        super().append(rec)
        if self.path is not None:
            with self.path.open("a") as f:
                f.write(json.dumps(rec, default=str) + "\n")


def warm_up(reducers: List[Any]) -> None:
    """One untimed call of every reducer in this process, so that lazy imports and caches are
    in place before the forked children are timed."""
    from reducers import BUILDERS

    conv = Conversation(20, 1)
    for r in reducers:
        for kind in KINDS:
            r.run(BUILDERS[r.framework](conv.transcript), conv.budget(kind, 30), kind)


# -- the run -------------------------------------------------------------------------------------

def run(plan: List[Tuple[int, List[int]]], frameworks: List[str], timeout: float,
        work: pathlib.Path, smoke: bool = False,
        sink: Optional[pathlib.Path] = None) -> Dict[str, Any]:
    from reducers import BUILDERS, REDUCERS

    reducers = [r for r in REDUCERS if r.framework in frameworks]
    warm_up(reducers)
    records: List[Dict[str, Any]] = _Sink(sink)
    timed_out: set = set()
    bench: Dict[Tuple[int, str], float] = {}
    started = time.time()
    for n, seeds in plan:
        for seed in seeds:
            conv = Conversation(n, seed)
            print(f"[{time.time() - started:7.1f}s] n={n} seed={seed} ({conv.ending}, "
                  f"{conv.total['utf8']} bytes, {conv.total['o200k']} tokens)", file=sys.stderr)
            base = {"n": n, "seed": seed, "ending": conv.ending, "inputVerifies": conv.input_verifies}
            for kind in KINDS:
                for pct in PERCENTS:
                    rec = dict(base, reducer="ours", kind=kind, percent=pct, status="ok", seconds=None)
                    rec.update(ours(conv, kind, pct))
                    records.append(rec)
                if seed == seeds[0] and not smoke:
                    for b in [kind, "o200k-memo"] if kind == "o200k" else [kind]:
                        t = bench_ours(conv, b, 30, work)
                        if t is not None:
                            bench[(n, b)] = t
                            records.append({"bench": f"{n}:{b}", "seconds": t})
            for fw in frameworks:
                objs = BUILDERS[fw](conv.transcript)
                for r in (r for r in reducers if r.framework == fw):
                    for kind in KINDS:
                        for pct in PERCENTS:
                            rec = dict(base, reducer=r.key, kind=kind, percent=pct)
                            if (r.key, n) in timed_out:
                                rec.update(status="skipped", seconds=None)
                                records.append(rec)
                                continue
                            budget = conv.budget(kind, pct)
                            status, seconds, items = call(r, objs, budget, kind, conv.neutrals,
                                                          conv.ids, timeout)
                            rec.update(status=status, seconds=seconds)
                            if status == "ok":
                                rec.update(judge(conv, items, kind, pct))
                            elif status == "error":
                                rec["error"] = items
                            else:
                                timed_out.add((r.key, n))
                            records.append(rec)
    return {"records": [r for r in records if "bench" not in r],
            "bench": {f"{n}:{k}": v for (n, k), v in bench.items()},
            "seconds": time.time() - started}


def load(paths: List[pathlib.Path]) -> Dict[str, Any]:
    """Merges the JSON Lines of one or more runs (``--records``) into one result."""
    records, bench = [], {}
    seconds = 0.0
    for p in paths:
        lines = [json.loads(x) for x in p.read_text().splitlines() if x.strip()]
        for rec in lines:
            if "bench" in rec:
                bench[rec["bench"]] = rec["seconds"]
            elif "runSeconds" in rec:
                # Parts of one run may have run side by side: the longest is the wall time.
                seconds = max(seconds, rec["runSeconds"])
            else:
                records.append(rec)
    totals: Dict[Tuple[int, int, str], int] = {}
    for rec in records:
        if "budget" in rec or rec.get("size") is None:
            continue
        # Records of runs before budgets were recorded: recompute the conversation's size.
        key = (rec["n"], rec["seed"], rec["kind"])
        if key not in totals:
            import hybrid_compaction as hc

            t = hc.workload(rec["n"], seed=rec["seed"], format="langchain")
            case = {"op": "evaluate", "policy": policy(rec["kind"], 10**9), "transcript": t}
            totals[key] = hc.run(case)["evaluation"]["estimatedSize"]
        rec["budget"] = max(1, totals[key] * rec["percent"] // 100)
    return {"records": records, "bench": bench, "seconds": seconds}


# -- the report ----------------------------------------------------------------------------------

def pct(a: int, b: int) -> str:
    return f"{a} ({100 * a / b:.0f} %)" if b else "0"


def plural(k: int, word: str) -> str:
    return f"{k} {word}" if k == 1 else f"{k} {word}s"


def fmt_s(x: Optional[float]) -> str:
    if x is None:
        return "—"
    if x >= 1:
        return f"{x:.2f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.1f} ms"
    return f"{x * 1e6:.0f} µs"


def versions() -> Dict[str, str]:
    from importlib import metadata

    out = {}
    for name in ["langchain-core", "semantic-kernel", "agent-framework-core", "hybrid-compaction"]:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def stats(recs: List[Dict[str, Any]]) -> Dict[str, Any]:
    done = [r for r in recs if r["status"] == "ok"]
    judged = [r for r in done if r.get("outcome") is not None]
    rejected = [r for r in judged if r["outcome"] == "Rejected"]
    over = [r for r in judged if r["over"][r["kind"]]]
    either = [r for r in judged if r["outcome"] == "Rejected" or r["over"][r["kind"]]]
    return {
        "pairs": len(recs), "done": len(done), "judged": len(judged),
        "timeouts": sum(r["status"] == "timeout" for r in recs),
        "skipped": sum(r["status"] == "skipped" for r in recs),
        "errors": sum(r["status"] == "error" for r in recs),
        "rejected": len(rejected), "over": len(over), "either": len(either),
        "overBy5": sum(r["size"][r["kind"]] > 1.05 * r["budget"] for r in over),
        "reasons": Counter(x for r in rejected for x in r["reasons"]),
        "systemDropped": sum(r["systemKept"] is False for r in judged),
        "lastUserDropped": sum(r["lastUserKept"] is False for r in judged),
        "empty": sum(bool(r.get("empty")) for r in judged),
        # Nothing to send: our terminations (Irreducible), a peer's timeout or error.
        "noAnswer": len(recs) - len(judged) - sum(r["status"] == "skipped" for r in recs),
    }


def median_time(recs: List[Dict[str, Any]], n: int, kind: str) -> Optional[float]:
    xs = [r["seconds"] for r in recs if r["n"] == n and r["kind"] == kind and r["status"] == "ok"]
    return statistics.median(xs) if xs else None


def chart(per: Dict[str, Dict[str, Any]], titles: Dict[str, str], path: pathlib.Path) -> bool:
    try:
        import matplotlib
    except ImportError:  # the CI smoke venv has no matplotlib: the table is the report
        print("peers: matplotlib is not installed; no chart", file=sys.stderr)
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = list(per)
    labels = [titles[k] for k in keys]
    rej = [100 * per[k]["rejected"] / max(1, per[k]["judged"]) for k in keys]
    over = [100 * per[k]["over"] / max(1, per[k]["judged"]) for k in keys]
    either = [100 * per[k]["either"] / max(1, per[k]["judged"]) for k in keys]
    none = [100 * per[k]["noAnswer"] / max(1, per[k]["pairs"] - per[k]["skipped"]) for k in keys]
    fig, ax = plt.subplots(figsize=(11, 5.5))
    xs = range(len(keys))
    w = 0.2
    ax.bar([x - 1.5 * w for x in xs], rej, w, label="rejected by the verifier", color="#c0392b")
    ax.bar([x - 0.5 * w for x in xs], over, w, label="over the budget", color="#e67e22")
    ax.bar([x + 0.5 * w for x in xs], either, w, label="either (of the lists returned)", color="#34495e")
    ax.bar([x + 1.5 * w for x in xs], none, w, color="#95a5a6",
           label="nothing returned (ours: Irreducible; peers: timeout or error)")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("% of (conversation, budget) pairs")
    ax.set_ylim(0, 105)
    ax.set_title("Violations per reducer, all (conversation, budget) pairs; ours on the right")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


#: What each rejection reason means for the request a reducer would send (SPEC VER-1).
MEANING = {
    "MissingRequiredEntry": "dropped an entry every compaction must keep (the system message, "
                            "the last two turn units, or the entries of an unfinished tool exchange)",
    "RequiredEntryOutOfOrder": "reordered required entries",
    "RequiredEntryContentMismatch": "changed the content of a required entry",
    "OrphanedToolCall": "kept a tool call without its result (providers refuse such a request)",
    "OrphanedToolResult": "kept a tool result without its call (providers refuse such a request)",
    "DuplicateToolCall": "repeated a tool call",
    "DuplicateToolResult": "repeated a tool result",
    "ReorderedToolGroup": "moved a result before its call",
    "CrossGroupToolResult": "attached a result to another call group",
    "ForgedStructuralEntry": "invented structural content (tool calls or results no one made)",
    "RetainedOriginalEntryMutated": "kept an entry under its id but changed it",
}


def findings(recs: List[Dict[str, Any]], keys: List[str], titles: Dict[str, str]) -> List[str]:
    """One line per reducer a maintainer can act on, from the measured counts. Rejections are
    those on valid input: a pending-call conversation is rejected whatever one keeps."""
    out = []
    for k in keys:
        if k == "ours":
            continue
        s = stats([r for r in recs if r["reducer"] == k])
        v = stats([r for r in recs if r["reducer"] == k and r["inputVerifies"]])
        line = f"* **{titles[k]}**: "
        parts = []
        if v["rejected"]:
            top = v["reasons"].most_common(2)
            why = " and ".join(f"{MEANING.get(reason, reason)} (`{reason}`, {c})" for reason, c in top)
            parts.append(f"on valid input rejected in {v['rejected']} of {v['judged']} pairs: it {why}")
        else:
            parts.append(f"on valid input never rejected ({v['judged']} pairs)")
        if s["systemDropped"]:
            parts.append(f"dropped the system message in {s['systemDropped']}")
        if s["lastUserDropped"]:
            parts.append(f"dropped the question the model must answer next in {s['lastUserDropped']}")
        if s["over"]:
            parts.append(f"over the budget in {s['over']} ({s['overBy5']} by more than 5 %)")
        if s["timeouts"]:
            parts.append(f"timed out in {s['timeouts']} (then {s['skipped']} pairs skipped)")
        out.append(line + ("; ".join(parts) if parts else "no violation found") + ".")
    return out


def report(result: Dict[str, Any], out: pathlib.Path, png: pathlib.Path, command: str,
           note: Optional[str] = None) -> str:
    from reducers import REDUCERS

    recs = result["records"]
    keys = [r.key for r in REDUCERS if any(x["reducer"] == r.key for x in recs)] + ["ours"]
    titles = {r.key: r.title for r in REDUCERS}
    titles["ours"] = "hybrid-compaction assembler (ours)"
    short = {r.key: r.key for r in REDUCERS}
    short["ours"] = "ours"
    per = {k: stats([r for r in recs if r["reducer"] == k]) for k in keys}
    chart(per, short, png)
    ns = sorted({r["n"] for r in recs})
    convs = sorted({(r["n"], r["seed"]) for r in recs})
    v = versions()
    L: List[str] = []
    L.append("# Peers: the reducers agent developers run, judged by the oracle")
    L.append("")
    L.append(f"Regenerate with `{command}` (creates `target/peers/venv`, installs the exact pins of "
             "`peers/requirements.txt` and this project's wheel, then runs every reducer; the "
             f"longest part of the run below took {result['seconds'] / 60:.0f} minutes on the "
             "development machine). Everything below is "
             "what that run measured; nothing is edited by hand.")
    if note:
        L.append("")
        L.append(note)
    L.append("")
    L.append(f"Run: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
             f"{platform.machine()} {os.cpu_count()} CPU, Python {platform.python_version()}; "
             + ", ".join(f"{k} {x}" for k, x in v.items()) + ".")
    L.append("")
    L.append("## Method")
    L.append("")
    L.append(f"* **Conversations**: `hc.workload(n, seed)` (the generator of `hybrid-compaction workload`), "
             + ", ".join(f"n = {n}: {plural(len([c for c in convs if c[0] == n]), 'seed')}" for n in ns)
             + "; each ends (by seed) with a user question, complete tool results, a pending call or "
             "a final answer. Parallel tool calls (1-3), results up to 20 KB, non-ASCII text, summaries.")
    L.append("* **Budgets**: 10 / 30 / 60 % of the conversation's size in UTF-8 bytes (EST-2) or o200k "
             "tokens (EST-6), six budgets per conversation. Each framework gets a counter of the "
             "same kind: UTF-8 bytes, or o200k tokens (`hc.count_tokens`, the oracle's bundled BPE, "
             "plus 3 per message) of each message's text, call names and arguments, and results. "
             "Semantic Kernel's reducers take a message count: the caller computes the largest "
             "count of recent messages that fits the budget with the system message.")
    L.append("* **Summarizers** get a stub model that answers a fixed summary; no LLM is called.")
    L.append("* **Mapping back** (SPEC BRG-2): a kept id (LangChain `id`, Agent Framework "
             "`message_id`) or the same object (Semantic Kernel) with unchanged content is that "
             "entry; else the first unmatched original with equal content; else a new entry (a "
             "`Summary`, or `ToolExchange` when it holds tool content).")
    L.append(f"* **Oracle**: `verify` with the policy of the pair (retention {RETENTION} recency units, "
             "so the system message, the last two turn units and any incomplete exchange are "
             "required, PRE-1); sizes in both units from the oracle's estimators; *over budget* is the size in "
             "the pair's unit above the budget. *Ours* is `assemble` on the same entries and "
             "budget (hard limit = budget, echoing reducer: eviction, then the deterministic "
             "fallback, ASM-9), verified and sized the same way.")
    L.append("* **Pending-call conversations** (a quarter of the seeds) hold a call without its result: "
             "the verifier rejects every list that keeps it (`OrphanedToolCall`) and every list that "
             "drops it (`MissingRequiredEntry`, PRE-1.4), ours included, so the assembler answers "
             "`Irreducible` there. The tables count all pairs; the column *on valid input* excludes them.")
    L.append("* *Over budget* is measured by the oracle's estimator (EST-2 counts a message's text, "
             "call ids, names and arguments, result call ids and values); the counter handed to a peer "
             "measures nearly the same text, so an overrun of a few bytes or tokens right at the "
             "budget may come from that difference; the table also counts the overruns above 105 % "
             "of the budget.")
    L.append(f"* **Load**: the machine (2 vCPU) was shared with other jobs during the run (load "
             f"average {os.getloadavg()[0]:.1f} when this report was written): every time is wall "
             "clock and inflated, reducers and ours alike; what matters is the order of magnitude "
             "and the ratios of calls made under the same conditions.")
    L.append("* *Open question dropped*: a harness check, not a verifier rule: the conversation ends "
             "with a user question or with the tool results for it, and the output lacks that user "
             "message.")
    L.append("* **Timing**: the reducer call alone, in a forked child (per-call timeout; after a "
             "timeout the reducer's remaining pairs at that n are skipped). Ours: `hybrid-compaction "
             "bench` (median of 5) on the same conversation, policy and estimator kind at 30 %.")
    L.append("")
    L.append("## Findings")
    L.append("")
    L.extend(findings(recs, keys, titles))
    L.append("")
    L.append("## Summary")
    L.append("")
    L.append("![violations per reducer](peers.png)")
    L.append("")
    L.append("| reducer | pairs judged | rejected | on valid input | over budget | rejected or over | system dropped | open question dropped | timeouts / skipped / errors |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k in keys:
        s = per[k]
        valid = stats([r for r in recs if r["reducer"] == k and r["inputVerifies"]])
        L.append(f"| {titles[k]} | {s['judged']} | {pct(s['rejected'], s['judged'])} | "
                 f"{pct(valid['rejected'], valid['judged'])} | {pct(s['over'], s['judged'])}, {s['overBy5']} by > 5 % | "
                 f"{pct(s['either'], s['judged'])} | {s['systemDropped']} | {s['lastUserDropped']} | "
                 f"{s['timeouts']} / {s['skipped']} / {s['errors']} |")
    o = [r for r in recs if r["reducer"] == "ours"]
    outcomes = Counter(r["assemblyOutcome"] for r in o)
    L.append("")
    L.append("Ours: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
             + f" of {len(o)} pairs. A termination (`Irreducible`) sends nothing: the required entries "
             "alone do not fit the budget, or the input itself fails verification; ours never returns "
             "an over-budget or rejected list.")
    L.append("")
    L.append("## Time per call")
    L.append("")
    L.append("Median seconds per call by history size and counter kind; ours is the assembler on "
             "the same conversation (first seed, 30 % budget).")
    L.append("")
    L.append("| reducer | " + " | ".join(f"n = {n} utf8 | n = {n} o200k" for n in ns) + " |")
    L.append("|---|" + "---:|" * (2 * len(ns)))
    for k in keys:
        if k == "ours":
            cells = [fmt_s(result["bench"].get(f"{n}:{kind}")) for n in ns for kind in KINDS]
            L.append(f"| {titles[k]} | " + " | ".join(cells) + " |")
            cells = [fmt_s(result["bench"].get(f"{n}:o200k-memo")) if kind == "o200k" else "—"
                     for n in ns for kind in KINDS]
            L.append("| ours, token estimator behind its memo (EST-7), warm | " + " | ".join(cells) + " |")
            continue
        else:
            rs = [r for r in recs if r["reducer"] == k]
            cells = [fmt_s(median_time(rs, n, kind)) for n in ns for kind in KINDS]
        L.append(f"| {titles[k]} | " + " | ".join(cells) + " |")
    n_max = max(ns)
    L.append("")
    L.append(f"Ratios at n = {n_max} (median of the reducer's calls over the median of ours; "
             "a reducer call that timed out is not in its median, so its ratio is a lower bound):")
    L.append("")
    for kind, ours_kind, label in [("utf8", "utf8", "UTF-8 byte counter vs our UTF-8 estimator"),
                                   ("o200k", "o200k", "o200k counter vs our token estimator, cold"),
                                   ("o200k", "o200k-memo", "o200k counter vs our token estimator behind its warm memo")]:
        ours_t = result["bench"].get(f"{n_max}:{ours_kind}")
        for key in ["lc-default", "lc-recommended", "lc-first"]:
            t = median_time([r for r in recs if r["reducer"] == key], n_max, kind)
            if ours_t and t:
                L.append(f"* {label}: `{key}` {fmt_s(t)}, ours {fmt_s(ours_t)}: "
                         f"**{t / ours_t:,.1f}x**.")
    L.append("")
    L.append("## Per reducer")
    for r in REDUCERS:
        if r.key not in per:
            continue
        s = per[r.key]
        L.append("")
        L.append(f"### {r.title}")
        L.append("")
        L.append(f"* Invocation: `{r.invocation}`")
        L.append(f"* What its docs promise: {r.promise}.")
        L.append(f"* Pairs: {s['pairs']} ({s['judged']} judged, {s['timeouts']} timed out, "
                 f"{s['skipped']} skipped after a timeout, {s['errors']} errors); rejected "
                 f"{pct(s['rejected'], s['judged'])}, over budget {pct(s['over'], s['judged'])}, "
                 f"system message dropped {s['systemDropped']}, open question dropped "
                 f"{s['lastUserDropped']}, empty output {s['empty']}.")
        errs = Counter(x.get("error", "")[:120] for x in recs if x["reducer"] == r.key and x["status"] == "error")
        for e, c in errs.most_common(3):
            L.append(f"* Error ({c}x): `{e}`")
        L.append("")
        L.append("| rejection reason (oracle) | pairs |")
        L.append("|---|---:|")
        for reason, c in s["reasons"].most_common():
            L.append(f"| `{reason}` | {pct(c, s['judged'])} |")
        if not s["reasons"]:
            L.append("| (none) | 0 |")
        L.append("")
        L.append("| n | pairs judged | rejected | over budget | ours: rejected / over budget / terminated |")
        L.append("|---:|---:|---:|---:|---:|")
        for n in ns:
            sn = stats([x for x in recs if x["reducer"] == r.key and x["n"] == n])
            on = [x for x in recs if x["reducer"] == "ours" and x["n"] == n]
            term = sum(x["outcome"] is None for x in on)
            so = stats(on)
            L.append(f"| {n} | {sn['judged']} | {pct(sn['rejected'], sn['judged'])} | "
                     f"{pct(sn['over'], sn['judged'])} | {so['rejected']} / {so['over']} / {term} |")
    L.append("")
    text = "\n".join(L) + "\n"
    text += kept_runtime_section(out)
    out.write_text(text)
    return text


def kept_runtime_section(out: pathlib.Path) -> str:
    """The runtime section ``peers/runtime.py`` wrote into the page (between its markers), kept
    when this harness rewrites the rest."""
    from runtime import BEGIN, END

    if not out.exists():
        return ""
    page = out.read_text(encoding="utf-8")
    if BEGIN not in page or END not in page:
        return ""
    return "\n" + page[page.index(BEGIN): page.index(END) + len(END)] + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", action="store_true", help="2 conversations, LangChain only (CI)")
    ap.add_argument("--quick", action="store_true",
                    help="the smoke plan (2 conversations) with --frameworks, report in a temp dir")
    ap.add_argument("--no-venv", action="store_true", help="use the current interpreter as it is")
    ap.add_argument("--timeout", type=float, default=45.0, help="seconds per reducer call")
    ap.add_argument("--frameworks", default="langchain,semantic-kernel,agent-framework")
    ap.add_argument("--out", type=pathlib.Path, default=None, help="report path (default docs/PEERS.md)")
    ap.add_argument("--sizes", default=None,
                    help="only these n, comma-separated (with --seeds: a part of a run)")
    ap.add_argument("--seeds", type=int, default=None, help="seeds 0..K-1 for each n of --sizes")
    ap.add_argument("--records", type=pathlib.Path, default=None,
                    help="append every record to this JSON Lines file as it is measured")
    ap.add_argument("--note", default=None, help="a paragraph for the report's header")
    ap.add_argument("--bench-only", action="store_true",
                    help="only time our assembly (hybrid-compaction bench) on each n's first seed")
    ap.add_argument("--report-from", type=pathlib.Path, nargs="+", default=None,
                    help="write the report from the --records files of earlier runs, run nothing")
    args = ap.parse_args()
    if not (args.smoke or args.no_venv or os.environ.get("HC_PEERS_VENV")):
        bootstrap()
    sys.path.insert(0, str(ROOT / "peers"))
    # The peers log a warning whenever they cannot meet a budget; the report counts those cases.
    logging.disable(logging.WARNING)
    if args.smoke:
        try:
            import langchain_core  # noqa: F401
        except ImportError:
            print("peers smoke: langchain-core is not installed; skipped", file=sys.stderr)
            return 0
    work = pathlib.Path(tempfile.mkdtemp(prefix="hc-peers-"))
    plan = SMOKE_PLAN if args.smoke or args.quick else FULL_PLAN
    frameworks = ["langchain"] if args.smoke else args.frameworks.split(",")
    scratch = args.smoke or args.quick
    out = args.out or (work / "PEERS.md" if scratch else ROOT / "docs" / "PEERS.md")
    if args.sizes:
        sizes = [int(x) for x in args.sizes.split(",")]
        seeds = dict(FULL_PLAN)
        plan = [(n, list(range(args.seeds or len(seeds.get(n, [0]))))) for n in sizes]
    if args.bench_only:
        sink = args.records or work / "records.jsonl"
        with sink.open("a") as f:
            for n, seeds in plan:
                conv = Conversation(n, seeds[0])
                for b in BENCH_ESTIMATOR:
                    t = bench_ours(conv, b, 30, work)
                    if t is not None:
                        f.write(json.dumps({"bench": f"{n}:{b}", "seconds": t}) + "\n")
        return 0
    if args.report_from:
        result = load(args.report_from)
    else:
        sink = args.records or work / "records.jsonl"
        result = run(plan, frameworks, args.timeout, work, smoke=args.smoke, sink=sink)
        with sink.open("a") as f:
            f.write(json.dumps({"runSeconds": result["seconds"]}) + "\n")
    (work / "records.json").write_text(json.dumps(result, default=str))
    command = "python3 peers/run.py"
    report(result, out, out.parent / "peers.png", command, args.note)
    print(f"peers: wrote {out} ({len(result['records'])} records, "
          f"raw records in {work / 'records.json'})", file=sys.stderr)
    if args.smoke:
        # The smoke's scratch directory holds nothing anyone reads afterwards.
        code = smoke_check(result["records"])
        shutil.rmtree(work, ignore_errors=True)
        return code
    return 0


def smoke_check(recs: List[Dict[str, Any]]) -> int:
    """The harness works: every pair judged, the documented LangChain defaults drop the system
    message, ours is never rejected or over budget."""
    problems = []
    peers = [r for r in recs if r["reducer"] != "ours"]
    if len(peers) != 2 * 3 * len(KINDS) * len(PERCENTS):
        problems.append(f"expected 36 peer records, got {len(peers)}")
    if any(r["status"] != "ok" for r in peers):
        problems.append("a LangChain call failed: " + str([r.get("error") for r in peers if r["status"] != "ok"][:1]))
    if any(r.get("new") for r in peers):
        problems.append("trim_messages output did not map back to entry ids (it only drops messages)")
    if not any(r["reducer"] == "lc-default" and r.get("systemKept") is False for r in peers):
        problems.append("trim_messages defaults kept the system message everywhere (unexpected)")
    for r in recs:
        if r["reducer"] == "ours" and r["outcome"] is not None:
            if r["outcome"] != "Accepted" or r["over"][r["kind"]]:
                problems.append(f"ours rejected or over budget: {r}")
    for p in problems:
        print(f"peers smoke: {p}", file=sys.stderr)
    print(f"peers smoke: {len(recs)} records, " + ("FAILED" if problems else "ok"), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
