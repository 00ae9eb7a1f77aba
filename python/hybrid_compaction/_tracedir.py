"""Where a recorder built without a path writes: the trace directory of a ``pytest --hc-trace
DIR`` session (``hybrid_compaction.pytest_plugin``).

The plugin sets the directory when the session starts and the running test's name before each
test; :func:`new_path` gives every recorder a file of its own there
(``<test name>-<n>.jsonl``), and :func:`register` keeps each open writer so the plugin can close
it before it checks the directory. Outside such a session there is no directory, and a recorder
without a path is refused (``TraceWriteError``). The directory is also read from the environment
variable ``HC_TRACE_DIR``, which the plugin sets, so a subprocess of a test records there too.
"""

from __future__ import annotations

import itertools
import os
import re
import threading
import weakref
from typing import Any, List, Optional

#: The environment variable naming the trace directory (set by the plugin).
ENV = "HC_TRACE_DIR"

_lock = threading.Lock()
_directory: Optional[str] = None
_test = "session"
_counter = itertools.count(1)
_open: "weakref.WeakSet[Any]" = weakref.WeakSet()


def configure(directory: Optional[str]) -> None:
    """Sets (or, with ``None``, clears) the session's trace directory."""
    global _directory, _counter
    with _lock:
        _directory = directory
        _counter = itertools.count(1)
    if directory is None:
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = directory


def set_test(name: str) -> None:
    """Names the files of recorders made from now on after test ``name``."""
    global _test
    _test = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")[:120] or "test"


def directory() -> Optional[str]:
    """The trace directory, if a session (or the environment) names one."""
    return _directory or os.environ.get(ENV) or None


def new_path() -> Optional[str]:
    """A fresh file in the trace directory, or ``None`` when there is none."""
    d = directory()
    if d is None:
        return None
    with _lock:
        n = next(_counter)
    return os.path.join(d, f"{_test}-{os.getpid()}-{n}.jsonl")


def register(writer: Any) -> None:
    """Keeps ``writer`` (open, writing into the directory) for :func:`close_all`."""
    _open.add(writer)


def close_all() -> List[Any]:
    """Closes every open writer of the directory; returns them."""
    writers = list(_open)
    for w in writers:
        w.close()
    return writers
