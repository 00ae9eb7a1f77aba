"""Times a ``hc.Compactor``'s cold call and its repeat call on history + 1 message.

    python python/bench/repeat_call.py [--messages 10000] [--runs 5]

For each format (OpenAI dicts, LangChain dicts as ``hc.workload`` writes them, LangChain message
objects) and estimator (``utf8``, ``tokens:o200k_base``): the cold call (a new compactor, the whole
history) and the repeat call (a compactor that compacted the first N - 1 messages, called on all
N), the median of ``--runs`` runs each, and their ratio; then, in the same run, the repeat call
of a compactor that converts the whole transcript every call (``_reuse=False``, the path before
conversions were kept, and ``hc.compact``'s) and the time of its Python writer
(``hc.convert.transcript``). The policy never compacts (a hard limit far
above the history), so the times are the per-call path itself: conversion, estimation, assembly.
Prints one line per case; ``uptime`` first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any, Callable, Dict, List

import hybrid_compaction as hc

POLICY = hc.policy(
    hard_limit=2**31 - 1,
    trigger_margin=1,
    recent_message_retention_count=2,
    maximum_compaction_attempts=1,
    preservation_label="bench",
    preservation_version=1,
)


def median_ms(f: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def histories(n: int) -> Dict[str, List[Any]]:
    out: Dict[str, List[Any]] = {"openai": hc.workload(n, 0, format="openai")["messages"]}
    lc = hc.workload(n, 0, format="langchain")["messages"]
    out["langchain-dicts"] = lc
    try:
        from langchain_core.messages import convert_to_messages

        out["langchain-objects"] = list(convert_to_messages(lc))
    except ImportError:
        pass
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print("uptime:", os.popen("uptime").read().strip())
    for name, msgs in histories(args.messages).items():
        fmt = "openai-chat" if name == "openai" else "langchain"
        for est in ("utf8", "tokens:o200k_base"):
            cold = median_ms(lambda: hc.Compactor(POLICY, estimator=est, format=fmt).compact(msgs), args.runs)

            def repeat(reuse: bool) -> float:
                c = hc.Compactor(POLICY, estimator=est, format=fmt, _reuse=reuse)
                c.compact(msgs[:-1])
                t0 = time.perf_counter()
                r = c.compact(msgs)
                dt = (time.perf_counter() - t0) * 1000
                assert len(r.messages) == len(msgs)
                return dt

            warm = statistics.median(repeat(True) for _ in range(args.runs))
            whole = statistics.median(repeat(False) for _ in range(args.runs))
            conv = median_ms(lambda: hc.convert.transcript(msgs, fmt), args.runs)
            print(
                f"{name:18} {est:18} cold {cold:8.1f} ms  repeat {warm:7.1f} ms  "
                f"ratio {warm / cold:5.3f}  | whole conversion: repeat {whole:7.1f} ms "
                f"(its Python writer {conv:6.1f} ms)"
            )


if __name__ == "__main__":
    main()
