"""The Python half of ``benches/node_vs_python/run.sh``: a ``hc.Compactor``'s cold call on a
10 000-message history and its repeat call on history + 1, as ``compact.cjs`` times them in Node.

    python compact.py MESSAGES RUNS

The history is ``hc.workload(MESSAGES, 0, format="openai-chat")["messages"]`` (OpenAI chat dicts);
the policy never compacts (a hard limit far above the history), so the time is the per-call path
itself: conversion, estimation, assembly, the answer. For each estimator (``utf8``,
``tokens:o200k_base``): the cold call (a new compactor, the whole history), the repeat call (a
compactor that compacted the first MESSAGES - 1, called on all MESSAGES) and the repeat call of
a compactor converting the whole transcript every call (``_reuse=False``); the median of RUNS
runs each, in milliseconds, as one JSON line per estimator.
"""

import json
import statistics
import sys
import time

import hybrid_compaction as hc

POLICY = hc.policy(hard_limit=2**31 - 1, trigger_margin=1, recent_message_retention_count=2,
                   maximum_compaction_attempts=1, preservation_label="bench",
                   preservation_version=1)


def ms(f):
    t0 = time.perf_counter()
    f()
    return (time.perf_counter() - t0) * 1000


def repeat(msgs, est, reuse):
    c = hc.Compactor(POLICY, estimator=est, format="openai-chat", _reuse=reuse)
    c.compact(msgs[:-1])
    t0 = time.perf_counter()
    r = c.compact(msgs)
    dt = (time.perf_counter() - t0) * 1000
    assert len(r.messages) == len(msgs)
    return dt


def main():
    n, runs = int(sys.argv[1]), int(sys.argv[2])
    msgs = hc.workload(n, 0, format="openai-chat")["messages"]
    for est in ("utf8", "tokens:o200k_base"):
        cold = statistics.median(
            ms(lambda: hc.Compactor(POLICY, estimator=est, format="openai-chat").compact(msgs))
            for _ in range(runs))
        warm = statistics.median(repeat(msgs, est, True) for _ in range(runs))
        whole = statistics.median(repeat(msgs, est, False) for _ in range(runs))
        print(json.dumps({"side": "python", "estimator": est, "cold": cold, "repeat": warm,
                          "whole": whole}), flush=True)


if __name__ == "__main__":
    main()
