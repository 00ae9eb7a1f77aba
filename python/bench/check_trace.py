"""Times ``hc.check`` on a recorded trace: calls checked per CPU-second of this process.

    python python/bench/check_trace.py TRACE.jsonl [--implementation engine] [--runs 5]

The trace is read into a ``str`` once (not timed); each run checks it with ``hc.check`` and is
timed in CPU time (user + system, every thread of the process, ``resource.getrusage``) and wall
time. A trace that checks with violations fails the run: a checker that finds something does
other work. Prints the load average, then each run and the median. The traces of
``docs/PERFORMANCE.md`` ("Trace checking") are written by the oracle's ignored test
``write_bench_traces`` (``BENCH_TRACE_DIR=DIR cargo test --release -p hybrid-compaction-oracle
--test trace write_bench_traces -- --ignored``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from typing import Tuple

import hybrid_compaction as hc


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one_run(text: str, implementation: str) -> Tuple[int, float, float]:
    """The calls checked, the CPU seconds and the wall seconds of one ``hc.check``."""
    cpu, wall = cpu_seconds(), time.perf_counter()
    report = hc.check(text, implementation)
    cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    if report["violations"]:
        raise SystemExit(f"the trace has violations: {report['violations'][:3]}")
    return report["calls"], cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", help="a trace file (JSON Lines, docs/TRACE.md)")
    parser.add_argument("--implementation", default="engine", choices=["engine", "model"])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    try:
        with open(args.trace, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise SystemExit(f"check_trace.py: cannot read {args.trace}: {e}")
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")
    rates = []
    for i in range(args.runs):
        calls, cpu, wall = one_run(text, args.implementation)
        rates.append(calls / cpu)
        print(f"run {i + 1}: {calls} calls, {cpu * 1000:.1f} ms CPU, {wall * 1000:.1f} ms wall, "
              f"{calls / cpu:,.0f} calls per CPU-second")
    print(f"median: {statistics.median(rates):,.0f} calls per CPU-second "
          f"({len(text.encode('utf-8')):,} bytes, implementation {args.implementation})")


if __name__ == "__main__":
    main()
