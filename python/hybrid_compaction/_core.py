"""Running wire cases in-process: ``run`` and its convenience wrappers.

Every function here builds a wire case (``docs/WIRE.md``), hands it to the native oracle as JSON
text and returns the output as plain dicts. ``run`` returns the output exactly as the CLI prints
it (a typed error is an answer: ``{"error": {...}}``); the wrappers (``verify``, ``assemble``,
``evaluate``) return the operation's own object and raise :class:`SpecError` for a typed error.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union, cast

from . import _native
from ._errors import (
    CompactionTerminated,
    HybridCompactionError,
    InternalError,
    InvalidCaseError,
    SpecError,
    TraceWriteError,
    TranscriptError,
    UnsupportedContentError,
)
from ._types import AssembleResult, CheckReport, Entry, Evaluation, Policy, Verification

__all__ = [
    "IMPLEMENTATIONS",
    "HybridCompactionError",
    "InvalidCaseError",
    "InternalError",
    "SpecError",
    "TranscriptError",
    "UnsupportedContentError",
    "CompactionTerminated",
    "TraceWriteError",
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
TRANSCRIPT_FORMATS = ("openai-chat", "anthropic-messages", "langchain", "openai-responses")

#: The shapes of a workload's last message, in the order seeds cycle through them.
ENDINGS = ("user-question", "tool-results", "pending-call", "final-answer")

#: The two implementations of the SPEC the oracle runs: the executable specification and the
#: optimized engine. Both pass the whole vector corpus.
IMPLEMENTATIONS = ("model", "engine")

Json = Any
Case = Mapping[str, Json]
Output = Dict[str, Json]


def _overrides_member(overrides: object) -> Optional[Dict[str, Json]]:
    """``overrides`` (message index -> entry kind, SPEC CLS-1 step 3) as a transcript's or a
    case's ``overrides`` member (keys as decimal text), ``None`` when empty or absent;
    ``TypeError`` when it is not a mapping (its keys and kinds are the converter's to judge)."""
    if overrides is None:
        return None
    if not isinstance(overrides, Mapping):
        raise TypeError(
            f"overrides must be a mapping of message index to entry kind, got {type(overrides).__name__}"
        )
    return {str(k): v for k, v in overrides.items()} or None


def _require_list(value: object, name: str) -> None:
    """``TypeError`` where a list is expected and a ``str``, ``bytes``, ``None`` or a mapping
    arrives (a string is iterable, and would be read as its characters)."""
    if value is None or isinstance(value, (str, bytes, Mapping)):
        raise TypeError(f"{name} must be a list, got {type(value).__name__}")


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
    # and nesting past 128 refused by path), reads it with the CLI's strict reader and raises
    # InvalidCaseError or InternalError itself.
    output: Output = json.loads(_native.run_case(case, implementation))
    return output


def check(
    trace: Union[str, "os.PathLike[str]", Sequence[Mapping[str, Json]]],
    implementation: str = "model",
) -> CheckReport:
    """Checks a recorded trace (``docs/TRACE.md``): every call replayed through
    ``implementation`` (``"model"``, the default, as ``hybrid-compaction check`` does, or
    ``"engine"``) and every TRC invariant of the SPEC checked.

    ``trace`` is the JSON Lines text, a list of its records (header first), or the path of a
    trace file (a :class:`pathlib.Path` or any ``os.PathLike``; a ``str`` is always text). A
    file is read in blocks as the command reads it, never whole, so memory stays constant in
    the trace's length. Returns the report ``hybrid-compaction check --json`` prints:
    ``calls``, ``runs``, ``replayed``, ``violations`` (each with its clause, run, call, line
    and explanation) and ``counterexamples``; a conformant trace has no violations. Raises
    :class:`InvalidCaseError` (with ``path`` = ``"line N"``) for an unreadable trace (a file
    that is not UTF-8 included), or (``path`` = ``"$[i]..."``) for a record JSON cannot hold;
    a file that cannot be opened raises the ``OSError`` Python's ``open`` raises.
    """
    if implementation not in IMPLEMENTATIONS:
        raise ValueError(f"implementation must be 'model' or 'engine', got {implementation!r}")
    if isinstance(trace, os.PathLike):
        path = os.fsdecode(os.fspath(trace))
        with open(path, "rb"):  # FileNotFoundError, IsADirectoryError, ... as Python names them
            pass
        report = _native.check_file(path, implementation)
    elif isinstance(trace, str):
        report = _native.check_json(trace, implementation)
    else:
        report = _native.check_json(_native.trace_lines(list(trace)), implementation)
    return cast(CheckReport, json.loads(report))


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
) -> Policy:
    """A wire policy (SPEC POL-1). Every number is required: the SPEC has no defaults.

    ``estimator`` is a name as the CLI spells it (``"utf8"``, the production default of EST-2;
    ``"utf8-text"``; ``"tokens:o200k_base"`` or ``"tokens:cl100k_base"``, EST-6) or a whole
    estimator object (``{"kind": "constant", "size": 3}``, ``{"kind": "table", ...}``). Values
    are validated when a case runs (POL-2), not here.
    """
    return {
        "hardLimit": hard_limit,
        "triggerMargin": trigger_margin,
        "recentMessageRetentionCount": recent_message_retention_count,
        "maximumCompactionAttempts": maximum_compaction_attempts,
        "preservationLabel": preservation_label,
        "preservationVersion": preservation_version,
        "estimator": estimator_object(estimator),
    }


def estimator_object(estimator: Union[str, Mapping[str, Json]]) -> Dict[str, Json]:
    """A wire estimator from the CLI's spelling (``"tokens:o200k_base"``) or an object."""
    if isinstance(estimator, str):
        kind, _, encoding = estimator.partition(":")
        if kind == "tokens" and encoding:
            return {"kind": "tokens", "encoding": encoding}
        return {"kind": estimator}
    if isinstance(estimator, Mapping):
        return dict(estimator)
    raise TypeError(f"estimator must be a name or a dict, got {type(estimator).__name__}")


def verify(
    original: Sequence[Mapping[str, Json]],
    proposed: Sequence[Union[str, Mapping[str, Json]]],
    policy: Mapping[str, Json],
    *,
    implementation: str = "engine",
) -> Verification:
    """``Verify(original, proposed)`` (SPEC VER-1): is ``proposed`` an acceptable compaction?

    ``original`` is a list of wire entries (``hc.from_openai(...)`` and the other converters
    make them); each ``proposed`` item is the id of an original entry or a whole entry (a
    summary, say). Returns the ``verification`` object: ``outcome`` (``Accepted``/``Rejected``),
    ``rejectionReasons``, ``missingRequiredEntryIds``, ``invalidEntryIds``,
    ``preservationOnlyFallbackEntryIds``. A ``str`` or ``None`` where a list belongs is a
    ``TypeError``.
    """
    _require_list(original, "original")
    _require_list(proposed, "proposed")
    _require_policy(policy)
    case = {
        "op": "verify",
        "policy": policy,
        "original": list(original),
        "proposed": list(proposed),
    }
    return cast(Verification, _answer(run(case, implementation), "verification"))


def assemble(
    policy: Mapping[str, Json],
    entries: Optional[Sequence[Mapping[str, Json]]] = None,
    *,
    snapshots: Optional[Sequence[Mapping[str, Json]]] = None,
    reducer: Optional[Mapping[str, Json]] = None,
    cancel: Optional[str] = None,
    transcript: Optional[Mapping[str, Json]] = None,
    implementation: str = "engine",
) -> AssembleResult:
    """Runs the assembler (SPEC ASM-7) and diagnostics (DIA-5) on a scripted history.

    ``entries`` is a static history (SNAP-3), or ``transcript`` one as a transcript object
    (``{"format": "openai-chat", "messages": [...]}``, SPEC TRN-1; the answer then has
    ``finalTranscript``, TRN-6), and/or ``snapshots`` a schedule (SNAP-5); ``reducer`` a
    scripted, upstream or message-counting reducer (absent: one that echoes); ``cancel`` a
    cancellation point (``"before"``, ``"capture:K"``, ``"reducer:K"``). Returns
    ``{"assembly": {...}, "diagnostics": {...}}``. To compact with a Python reducer, use
    :func:`compact`.
    """
    _require_policy(policy)
    case: Dict[str, Json] = {"op": "assemble", "policy": policy}
    if entries is not None:
        _require_list(entries, "entries")
        case["entries"] = list(entries)
    if transcript is not None:
        case["transcript"] = dict(transcript)
    if snapshots is not None:
        case["snapshots"] = list(snapshots)
    if reducer is not None:
        case["reducer"] = reducer
    if cancel is not None:
        case["cancel"] = cancel
    output = run(case, implementation)
    _answer(output, "assembly")
    return cast(AssembleResult, output)


def evaluate(
    entries: Sequence[Mapping[str, Json]],
    policy: Mapping[str, Json],
    *,
    implementation: str = "engine",
) -> Evaluation:
    """Trigger evaluation (SPEC POL-3): the estimated size of ``entries`` against the policy.

    Returns the ``evaluation`` object (``entrySizes``, ``estimatedSize``, ``triggerThreshold``,
    ``triggered``, ...).
    """
    _require_list(entries, "entries")
    _require_policy(policy)
    case = {"op": "evaluate", "policy": policy, "entries": list(entries)}
    return cast(Evaluation, _answer(run(case, implementation), "evaluation"))


def _require_policy(policy: object) -> None:
    if not isinstance(policy, Mapping):
        raise TypeError(
            f"policy must be a policy dict (build one with hc.policy(...)), got {type(policy).__name__}"
        )


def schema(which: Optional[str] = None) -> Dict[str, Json]:
    """The JSON Schemas (draft 2020-12) of the wire format, as ``hybrid-compaction schema``.

    ``which``: ``None`` for ``{"case", "output", "vectorFile"}``, or one of ``"case"``,
    ``"output"``, ``"vector-file"``, ``"trace"`` (every line of a trace, ``docs/TRACE.md``).
    """
    text = _native.schema_json(which)
    if text is None:
        raise ValueError(
            f"which must be None, 'case', 'output', 'vector-file' or 'trace', got {which!r}"
        )
    result: Dict[str, Json] = json.loads(text)
    return result


def _entries_of(output: Output) -> List[Entry]:
    return cast(List[Entry], _answer(output, "entries"))


def workload(
    messages: int, seed: int = 1, format: str = "openai-chat", ending: Optional[str] = None
) -> Dict[str, Json]:
    """A seeded agent conversation of exactly ``messages`` messages, as a transcript dict
    (``{"format", "messages", "ids"?, "system"?, "overrides"}``): the same as
    ``hybrid-compaction workload --messages N --seed S --format F``, and what the Rust benches and
    the peer harness (``peers/run.py``) use.

    A system message, user turns, assistant turns with 1-3 parallel tool calls and their results
    (some 2-20 KB, non-ASCII included), summaries (kind override ``Summary``); every message has
    the stable id ``m{i}`` (Responses: a turn's further call items ``m{i}.{k}``). ``format`` is one
    of :data:`TRANSCRIPT_FORMATS` (``"openai"``, ``"anthropic"`` and ``"responses"`` are accepted
    too); ``ending`` one of :data:`ENDINGS` (default: by seed, seed %
    4). Raises :class:`InvalidCaseError` naming the argument for a bad one.
    """
    aliases = {"openai": "openai-chat", "anthropic": "anthropic-messages", "responses": "openai-responses"}
    format = aliases.get(format, format)
    if isinstance(messages, bool) or not isinstance(messages, int) or messages < 0:
        raise InvalidCaseError("messages", f"expected a whole number, got {messages!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise InvalidCaseError("seed", f"expected a whole number from 0 to 2^64 - 1, got {seed!r}")
    result: Dict[str, Json] = json.loads(_native.workload_json(messages, seed, format, ending))
    return result


def count_tokens(texts: Sequence[str], encoding: str = "o200k_base") -> List[int]:
    """The BPE token count of each text with ``encoding`` (``"o200k_base"`` or
    ``"cl100k_base"``): the ranks the token estimator uses (SPEC EST-6), bundled, no network.
    ``texts`` is a list of strings (a lone ``str`` is a ``TypeError``, not its characters)."""
    _require_list(texts, "texts")
    counts = _native.count_tokens(list(texts), encoding)
    if counts is None:
        raise ValueError(f"encoding must be 'o200k_base' or 'cl100k_base', got {encoding!r}")
    return counts
