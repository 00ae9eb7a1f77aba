"""``pytest --hc-trace DIR``: check every agent a test suite runs (registered as the ``pytest11``
entry point ``hybrid_compaction``, so installing the package is enough).

* Every recorder made during the session without a path (``hc.TraceWriter()``,
  ``TraceMiddleware()``, the Agent Framework middleware) writes a file of its own in ``DIR``,
  named after the test that made it (``<test>-<pid>-<n>.jsonl``); ``HC_TRACE_DIR`` is set, so a
  test's subprocess records there too.
* When the session ends, the plugin closes those recorders and checks every trace written in
  ``DIR`` during the session (new or modified ``*.jsonl`` files) with the package's own binding
  of the checker (:func:`hybrid_compaction.check`, in this process: no binary, no Rust
  toolchain), prints the violation table in the terminal summary (trace, clause, run, call,
  line, explanation; then per clause the count and the first violating call) and makes the
  session fail (exit 1) on a violation or an unreadable trace.
* ``--hc-trace-json FILE`` writes the same report as JSON for machines.

Without ``--hc-trace`` the plugin does nothing.
"""

from __future__ import annotations

import json
import os
import pathlib
import time
from typing import Any, Dict, List, Optional

import pytest

from . import _tracedir

_KEY = pytest.StashKey[Dict[str, Any]]()


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("hybrid-compaction", "checking agents' model calls (docs/CI.md)")
    group.addoption(
        "--hc-trace",
        metavar="DIR",
        default=None,
        help="give every hybrid-compaction recorder a trace file in DIR and check the traces "
        "when the session ends (fails the session on a violation)",
    )
    group.addoption(
        "--hc-trace-json",
        metavar="FILE",
        default=None,
        help="also write the check report of --hc-trace as JSON to FILE",
    )


def pytest_configure(config: Any) -> None:
    directory = config.getoption("--hc-trace")
    if directory is None:
        if config.getoption("--hc-trace-json") is not None:
            raise pytest.UsageError("--hc-trace-json needs --hc-trace DIR")
        return
    shown, directory = directory, os.path.abspath(directory)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise pytest.UsageError(f"--hc-trace {directory}: cannot create it: {e.strerror}") from e
    before = {p: os.stat(p).st_mtime_ns for p in _traces(directory)}
    config.stash[_KEY] = {
        "directory": directory,
        "shown": shown.rstrip("/") or shown,
        "before": before,
        "previous": (_tracedir._directory, os.environ.get(_tracedir.ENV)),
        "report": None,
    }
    _tracedir.configure(directory)


def pytest_unconfigure(config: Any) -> None:
    state = config.stash.get(_KEY, None)
    if state is None:
        return
    directory, env = state["previous"]
    _tracedir.configure(directory)
    if env is None:
        os.environ.pop(_tracedir.ENV, None)
    else:
        os.environ[_tracedir.ENV] = env


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: Any) -> None:
    if _KEY in item.config.stash:
        _tracedir.set_test(item.nodeid.rsplit("/", 1)[-1])


def _traces(directory: str) -> List[str]:
    return sorted(
        os.path.join(directory, n) for n in os.listdir(directory) if n.endswith(".jsonl")
    )


def check_directory(directory: str, before: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    """The report of every trace in ``directory`` that is not in ``before`` (path to
    modification time) or changed since: ``{"traces": [...], "violations": [...], "calls",
    "observed", "unreadable": [...]}``; each violation carries its ``trace`` (file name)."""
    from . import _core

    before = before or {}
    report: Dict[str, Any] = {"traces": [], "violations": [], "unreadable": [],
                              "calls": 0, "observed": 0}
    for path in _traces(directory):
        if before.get(path) == os.stat(path).st_mtime_ns:
            continue
        name = os.path.basename(path)
        try:
            # Read in blocks by the checker (constant memory); a line that is not UTF-8 is
            # unreadable, named by its number, as `hybrid-compaction check` names it.
            r = _core.check(pathlib.Path(path))
        except _core.InvalidCaseError as e:
            report["unreadable"].append({"trace": name, "where": e.path, "reason": e.reason})
            continue
        report["traces"].append({"trace": name, "calls": r["calls"], "runs": r["runs"],
                                 "observed": r["observed"],
                                 "violations": len(r["violations"])})
        report["calls"] += r["calls"]
        report["observed"] += r["observed"]
        report["violations"] += [{"trace": name, **v} for v in r["violations"]]
    return report


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    state = session.config.stash.get(_KEY, None)
    if state is None:
        return
    _tracedir.close_all()
    started = time.perf_counter()
    report = check_directory(state["directory"], state["before"])
    report["seconds"] = round(time.perf_counter() - started, 3)
    state["report"] = report
    out = session.config.getoption("--hc-trace-json")
    if out is not None:
        with open(out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2, ensure_ascii=False)
            f.write("\n")
    if (report["violations"] or report["unreadable"]) and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _table(rows: List[List[str]]) -> List[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1] for r in rows]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    state = config.stash.get(_KEY, None)
    if state is None or state["report"] is None:
        return
    r = state["report"]
    tr = terminalreporter
    tr.section("hybrid-compaction check")
    tr.write_line(
        f"{len(r['traces'])} trace(s) in {state['shown']}: {r['calls']} call(s) checked, "
        f"{r['observed']} observed, {len(r['violations'])} violation(s)"
    )
    for u in r["unreadable"]:
        tr.write_line(f"unreadable trace {u['trace']}: {u['where']}: {u['reason']}", red=True)
    if not r["violations"]:
        return
    rows = [["trace", "clause", "run", "call", "line", "explanation"]]
    rows += [[v["trace"], v["clause"], v["run"], v["call"], str(v["line"]), v["message"]]
             for v in r["violations"]]
    for line in _table(rows):
        tr.write_line(line)
    first: Dict[str, Dict[str, Any]] = {}
    counts: Dict[str, int] = {}
    for v in r["violations"]:
        counts[v["clause"]] = counts.get(v["clause"], 0) + 1
        first.setdefault(v["clause"], v)
    tr.write_line("")
    for clause in sorted(counts):
        f = first[clause]
        tr.write_line(f"{clause}: {counts[clause]} violation(s); first at {f['trace']} run "
                      f"{f['run']} call {f['call']}", red=True)
