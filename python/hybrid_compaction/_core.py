"""Running wire cases in-process: ``run`` and its convenience wrappers.

Every function here builds a wire case (``docs/WIRE.md``), hands it to the native oracle as JSON
text and returns the output as plain dicts. ``run`` returns the output exactly as the CLI prints
it (a typed error is an answer: ``{"error": {...}}``); the wrappers (``verify``, ``assemble``,
``evaluate``) return the operation's own object and raise :class:`SpecError` for a typed error.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _native

__all__ = [
    "IMPLEMENTATIONS",
    "HybridCompactionError",
    "InvalidCaseError",
    "InternalError",
    "SpecError",
    "run",
    "policy",
    "verify",
    "assemble",
    "evaluate",
    "schema",
    "workload",
    "count_tokens",
    "TRANSCRIPT_FORMATS",
    "ENDINGS",
]

#: The transcript formats (SPEC TRN-1) a workload is exported in.
TRANSCRIPT_FORMATS = ("openai-chat", "anthropic-messages", "langchain")

#: The shapes of a workload's last message, in the order seeds cycle through them.
ENDINGS = ("user-question", "tool-results", "pending-call", "final-answer")

#: The two implementations of the SPEC the oracle runs: the executable specification and the
#: optimized engine. Both pass the whole vector corpus.
IMPLEMENTATIONS = ("model", "engine")

Json = Any
Case = Mapping[str, Json]
Output = Dict[str, Json]


class HybridCompactionError(Exception):
    """Base class of every exception this package raises."""


class InvalidCaseError(HybridCompactionError, ValueError):
    """The case is not valid wire input (the CLI's exit 2).

    ``path`` is the JSON path of the offending value (``$.entries[0].kind``), ``reason`` what was
    expected there.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class InternalError(HybridCompactionError, RuntimeError):
    """An implementation failed internally (a bug; the CLI's exit 1)."""

    def __init__(self, implementation: str, reason: str) -> None:
        super().__init__(f"internal failure of the {implementation}: {reason}")
        self.implementation = implementation
        self.reason = reason


class SpecError(HybridCompactionError):
    """The SPEC rejects the input: a typed error answer (``docs/WIRE.md``, "Typed errors").

    Raised by the convenience wrappers only; :func:`run` returns the answer as
    ``{"error": {...}}``. ``kind`` is one of the ERR-1 kinds (``OutOfRange``, ``InvalidArgument``,
    ...); ``field`` and ``entry_id`` are set when the error names one; ``answer`` is the whole
    ``error`` object.
    """

    def __init__(self, answer: Mapping[str, Json]) -> None:
        self.answer: Dict[str, Json] = dict(answer)
        self.kind: str = self.answer.get("kind", "")
        self.field: Optional[str] = self.answer.get("field")
        self.entry_id: Optional[str] = self.answer.get("entryId")
        self.message: str = self.answer.get("message", "")
        named = self.field or self.entry_id
        super().__init__(f"{self.kind}{f' ({named})' if named else ''}: {self.message}")


def run(case: Case, implementation: str = "engine") -> Output:
    """Runs one wire case on ``implementation`` (``"engine"``, the default, or ``"model"``).

    Returns the output object exactly as ``hybrid-compaction run`` prints it: one member named
    after the operation (``verification``, ``assembly`` + ``diagnostics``, ...), or ``error`` for
    a typed error answer. Raises :class:`InvalidCaseError` for input the wire format cannot
    express (``path`` and ``reason`` exactly as the CLI words them, plus values JSON cannot hold:
    NaN, bytes, sets, non-string keys) and :class:`InternalError` if an implementation fails.
    """
    if implementation not in IMPLEMENTATIONS:
        raise ValueError(f"implementation must be 'model' or 'engine', got {implementation!r}")
    if not isinstance(case, Mapping):
        raise InvalidCaseError(
            "$", f"expected an object with `op`, got a Python {type(case).__name__}"
        )
    # The native module converts the dict itself (exact types; NaN, bytes, sets, non-string keys
    # and nesting past 128 refused by path) and reads it with the CLI's strict reader.
    status, first, second = _native.run_case(case, implementation)
    if status == "ok":
        output: Output = json.loads(first)
        return output
    if status == "invalid":
        raise InvalidCaseError(first, second)
    raise InternalError(first, second)


def check(
    trace: Union[str, Sequence[Mapping[str, Json]]], implementation: str = "model"
) -> Dict[str, Json]:
    """Checks a recorded trace (``docs/TRACE.md``): every call replayed through
    ``implementation`` (``"model"``, the default, as ``hybrid-compaction check`` does, or
    ``"engine"``) and every TRC invariant of the SPEC checked.

    ``trace`` is the JSON Lines text or a list of its records (header first). Returns the report
    ``hybrid-compaction check --json`` prints: ``calls``, ``runs``, ``replayed``,
    ``violations`` (each with its clause, run, call, line and explanation) and
    ``counterexamples``; a conformant trace has no violations. Raises
    :class:`InvalidCaseError` (with ``path`` = ``"line N"``) for an unreadable trace, or
    (``path`` = ``"$[i]..."``) for a record JSON cannot hold.
    """
    if implementation not in IMPLEMENTATIONS:
        raise ValueError(f"implementation must be 'model' or 'engine', got {implementation!r}")
    if isinstance(trace, str):
        text = trace
    else:
        lines, path, reason = _native.trace_lines(list(trace))
        if lines != "ok":
            raise InvalidCaseError(path, reason)
        text = path
    status, first, second = _native.check_json(text, implementation)
    if status == "ok":
        report: Dict[str, Json] = json.loads(first)
        return report
    if status == "invalid":
        raise InvalidCaseError(first, second)
    raise InternalError(first, second)


def _answer(output: Output, member: str) -> Json:
    if "error" in output:
        raise SpecError(output["error"])
    return output[member]


def policy(
    *,
    hard_limit: int,
    trigger_margin: int,
    recent_message_retention_count: int,
    maximum_compaction_attempts: int,
    preservation_label: str,
    preservation_version: int,
    estimator: Union[str, Mapping[str, Json]] = "utf8",
) -> Dict[str, Json]:
    """A wire policy (SPEC POL-1). Every number is required: the SPEC has no defaults.

    ``estimator`` is a kind name (``"utf8"``, the production default of EST-2, or
    ``"utf8-text"``) or a whole estimator object (``{"kind": "constant", "size": 3}``,
    ``{"kind": "table", ...}``). Values are validated when a case runs (POL-2), not here.
    """
    return {
        "hardLimit": hard_limit,
        "triggerMargin": trigger_margin,
        "recentMessageRetentionCount": recent_message_retention_count,
        "maximumCompactionAttempts": maximum_compaction_attempts,
        "preservationLabel": preservation_label,
        "preservationVersion": preservation_version,
        "estimator": {"kind": estimator} if isinstance(estimator, str) else dict(estimator),
    }


def verify(
    original: Sequence[Mapping[str, Json]],
    proposed: Sequence[Union[str, Mapping[str, Json]]],
    policy: Mapping[str, Json],
    *,
    implementation: str = "engine",
) -> Dict[str, Json]:
    """``Verify(original, proposed)`` (SPEC VER-1): is ``proposed`` an acceptable compaction?

    ``original`` is a list of wire entries; each ``proposed`` item is the id of an original entry
    or a whole entry (a summary, say). Returns the ``verification`` object: ``outcome``
    (``Accepted``/``Rejected``), ``rejectionReasons``, ``missingRequiredEntryIds``,
    ``invalidEntryIds``, ``preservationOnlyFallbackEntryIds``.
    """
    case = {
        "op": "verify",
        "policy": policy,
        "original": list(original),
        "proposed": list(proposed),
    }
    return _answer(run(case, implementation), "verification")  # type: ignore[no-any-return]


def assemble(
    policy: Mapping[str, Json],
    entries: Optional[Sequence[Mapping[str, Json]]] = None,
    *,
    snapshots: Optional[Sequence[Mapping[str, Json]]] = None,
    reducer: Optional[Mapping[str, Json]] = None,
    cancel: Optional[str] = None,
    implementation: str = "engine",
) -> Dict[str, Json]:
    """Runs the assembler (SPEC ASM-7) and diagnostics (DIA-5) on a scripted history.

    ``entries`` is a static history (SNAP-3) and/or ``snapshots`` a schedule (SNAP-5);
    ``reducer`` a scripted, upstream or message-counting reducer (absent: one that echoes);
    ``cancel`` a cancellation point (``"before"``, ``"capture:K"``, ``"reducer:K"``). Returns
    ``{"assembly": {...}, "diagnostics": {...}}``.
    """
    case: Dict[str, Json] = {"op": "assemble", "policy": policy}
    if entries is not None:
        case["entries"] = list(entries)
    if snapshots is not None:
        case["snapshots"] = list(snapshots)
    if reducer is not None:
        case["reducer"] = reducer
    if cancel is not None:
        case["cancel"] = cancel
    output = run(case, implementation)
    _answer(output, "assembly")
    return output


def evaluate(
    entries: Sequence[Mapping[str, Json]],
    policy: Mapping[str, Json],
    *,
    implementation: str = "engine",
) -> Dict[str, Json]:
    """Trigger evaluation (SPEC POL-3): the estimated size of ``entries`` against the policy.

    Returns the ``evaluation`` object (``entrySizes``, ``estimatedSize``, ``triggerThreshold``,
    ``triggered``, ...).
    """
    case = {"op": "evaluate", "policy": policy, "entries": list(entries)}
    return _answer(run(case, implementation), "evaluation")  # type: ignore[no-any-return]


def schema(which: Optional[str] = None) -> Dict[str, Json]:
    """The JSON Schemas (draft 2020-12) of the wire format, as ``hybrid-compaction schema``.

    ``which``: ``None`` for ``{"case", "output", "vectorFile"}``, or one of ``"case"``,
    ``"output"``, ``"vector-file"``.
    """
    text = _native.schema_json(which)
    if text is None:
        raise ValueError(f"which must be None, 'case', 'output' or 'vector-file', got {which!r}")
    result: Dict[str, Json] = json.loads(text)
    return result


def _entries_of(output: Output) -> List[Dict[str, Json]]:
    return _answer(output, "entries")  # type: ignore[no-any-return]


def workload(
    messages: int, seed: int = 1, format: str = "openai-chat", ending: Optional[str] = None
) -> Dict[str, Json]:
    """A seeded agent conversation of exactly ``messages`` messages, as a transcript dict
    (``{"format", "messages", "ids"?, "system"?, "overrides"}``): the same as
    ``hybrid-compaction workload --messages N --seed S --format F``, and what the Rust benches and
    the peer harness (``peers/run.py``) use.

    A system message, user turns, assistant turns with 1-3 parallel tool calls and their results
    (some 2-20 KB, non-ASCII included), summaries (kind override ``Summary``); every message has
    the stable id ``m{i}``. ``format`` is one of :data:`TRANSCRIPT_FORMATS` (``"openai"`` and
    ``"anthropic"`` are accepted too); ``ending`` one of :data:`ENDINGS` (default: by seed, seed %
    4). Raises :class:`InvalidCaseError` naming the argument for a bad one.
    """
    format = {"openai": "openai-chat", "anthropic": "anthropic-messages"}.get(format, format)
    if isinstance(messages, bool) or not isinstance(messages, int) or messages < 0:
        raise InvalidCaseError("messages", f"expected a whole number, got {messages!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise InvalidCaseError("seed", f"expected a whole number from 0 to 2^64 - 1, got {seed!r}")
    status, first, second = _native.workload_json(messages, seed, format, ending)
    if status != "ok":
        raise InvalidCaseError(first, second)
    result: Dict[str, Json] = json.loads(first)
    return result


def count_tokens(texts: Sequence[str], encoding: str = "o200k_base") -> List[int]:
    """The BPE token count of each text with ``encoding`` (``"o200k_base"`` or
    ``"cl100k_base"``): the ranks the token estimator uses (SPEC EST-6), bundled, no network."""
    counts = _native.count_tokens(list(texts), encoding)
    if counts is None:
        raise ValueError(f"encoding must be 'o200k_base' or 'cl100k_base', got {encoding!r}")
    return counts
