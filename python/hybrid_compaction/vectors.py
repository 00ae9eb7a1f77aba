"""The vector corpus from Python: load vector files, derive each case, compare outputs strictly.

A harness for any Python implementation of hybrid context compaction (or for the oracle itself,
as this package's own test suite does)::

    from hybrid_compaction import vectors
    for v in vectors.load("vectors/"):
        actual = my_implementation(v.case)
        diff = vectors.first_difference(v.expected, actual)
        assert diff is None, f"tcId {v.tc_id} [{v.topic}]: {diff}"

Comparison follows ``docs/WIRE.md`` ("Comparison"): JSON values, object member order
irrelevant, arrays in order, ``error.message`` ignored, and **types exact**: ``True`` is not
``1`` and ``1`` is not ``1.0`` (Python's ``==`` says both are equal; JSON and the SPEC do not).

A group's policy is inherited by the oracle's own rule (:func:`effective_case` asks the native
module), so this module and the Rust loader cannot disagree about which cases inherit it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Union

from . import _native

__all__ = ["Vector", "load", "load_file", "effective_case", "comparable", "first_difference"]

Json = Any

#: The ``schema`` of every vector file this module reads.
VECTOR_SCHEMA = "hybrid-compaction-vectors/v1"


@dataclass(frozen=True)
class Vector:
    """One test vector with its group's policy already applied to the case."""

    topic: str
    tc_id: int
    comment: str
    flags: List[str]
    clauses: List[str]
    case: Dict[str, Json]
    expected: Dict[str, Json]


def effective_case(case: Dict[str, Json], group_policy: Optional[Json]) -> Dict[str, Json]:
    """The case with the group's policy filled in where the case's operation takes a policy and
    the case has none (``docs/WIRE.md``, "Group policy inheritance").

    The rule is the oracle's (``corpus::file::effective_case`` in Rust), applied by the native
    module, so it is defined once. Raises :class:`~hybrid_compaction.InvalidCaseError` when the
    case, or the group policy (paths under ``$.policy``), is not valid wire input.
    """
    if group_policy is None:
        return dict(case)
    if _native.inherits_policy(case, group_policy):
        return {**case, "policy": group_policy}
    return dict(case)


def load_file(path: Union[str, "os.PathLike[str]"]) -> List[Vector]:
    """The vectors of one file, in file order. Raises :class:`ValueError` on a malformed file."""
    with open(path, encoding="utf-8") as f:
        suite = json.load(f)
    if suite.get("schema") != VECTOR_SCHEMA:
        raise ValueError(f"{path}: schema {suite.get('schema')!r}, expected {VECTOR_SCHEMA!r}")
    out = []
    for group in suite["testGroups"]:
        for t in group["tests"]:
            out.append(
                Vector(
                    topic=suite["topic"],
                    tc_id=t["tcId"],
                    comment=t["comment"],
                    flags=list(t["flags"]),
                    clauses=list(t["clauses"]),
                    case=effective_case(t["case"], group.get("policy")),
                    expected=t["expected"],
                )
            )
    if len(out) != suite["numberOfTests"]:
        raise ValueError(f"{path}: numberOfTests is {suite['numberOfTests']}, found {len(out)}")
    return out


def load(path: Union[str, "os.PathLike[str]"]) -> Iterator[Vector]:
    """Every vector of a corpus directory (its ``*.json`` files, sorted by name) or of one file."""
    if os.path.isfile(path):
        yield from load_file(path)
        return
    names = sorted(n for n in os.listdir(path) if n.endswith(".json"))
    if not names:
        raise ValueError(f"{path}: no *.json vector files")
    for name in names:
        yield from load_file(os.path.join(path, name))


def comparable(output: Json) -> Json:
    """A deep copy of ``output`` without ``error.message`` (informative, never compared)."""
    copy = json.loads(json.dumps(output))
    if isinstance(copy, dict) and isinstance(copy.get("error"), dict):
        copy["error"].pop("message", None)
    return copy


def first_difference(expected: Json, actual: Json) -> Optional[str]:
    """``None`` if ``actual`` matches ``expected`` (after :func:`comparable`), else the first
    difference as ``"$.path: expected X, got Y"``."""
    return _walk("$", comparable(expected), comparable(actual))


def _walk(path: str, e: Json, a: Json) -> Optional[str]:
    if isinstance(e, dict) and isinstance(a, dict):
        for k, ev in e.items():
            if k not in a:
                return f"{path}.{k}: expected {_short(ev)}, got nothing"
            d = _walk(f"{path}.{k}", ev, a[k])
            if d is not None:
                return d
        for k in a:
            if k not in e:
                return f"{path}.{k}: expected nothing, got {_short(a[k])}"
        return None
    if isinstance(e, list) and isinstance(a, list) and len(e) == len(a):
        for i, (x, y) in enumerate(zip(e, a)):
            d = _walk(f"{path}[{i}]", x, y)
            if d is not None:
                return d
        return None
    # type() rather than isinstance: bool is a subclass of int, and 1 == 1.0 in Python.
    if type(e) is type(a) and e == a:
        return None
    return f"{path}: expected {_short(e)}, got {_short(a)}"


def _short(v: Json) -> str:
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 120 else s[:117] + "..."
