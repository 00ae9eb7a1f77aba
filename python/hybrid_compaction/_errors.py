"""The package's exceptions, in one place for both halves of the package.

The native module (``python/src/errors.rs``) raises these classes itself, as pydantic-core raises
its own ``ValidationError``: it imports each class from this module once, on first use, and
constructs it with the arguments below, so no Python code maps a native status to an exception
or parses an error's text. The Python layer raises the same classes for what it checks itself
(argument types, a trace file it cannot write). This module imports nothing of the package, so
the native module can import it at any time. Re-exported by ``hybrid_compaction`` (and
``hybrid_compaction._core``) under the same names.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

__all__ = [
    "HybridCompactionError",
    "InvalidCaseError",
    "InternalError",
    "SpecError",
    "TranscriptError",
    "UnsupportedContentError",
    "CompactionTerminated",
    "TraceWriteError",
]

Json = Any


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


class SpecError(HybridCompactionError, ValueError):
    """The SPEC rejects the input: a typed error answer (``docs/WIRE.md``, "Typed errors").

    Raised by the convenience wrappers and :func:`compact`; :func:`run` returns the answer as
    ``{"error": {...}}``. ``kind`` is one of the ERR-1 kinds (``OutOfRange``, ``InvalidArgument``,
    ``ReducerFailed``, ...); ``field`` and ``entry_id`` are set when the error names one;
    ``answer`` is the whole ``error`` object. A ``ValueError``: the input was refused.
    """

    def __init__(self, answer: Mapping[str, Json]) -> None:
        self.answer: Dict[str, Json] = dict(answer)
        self.kind: str = self.answer.get("kind", "")
        self.field: Optional[str] = self.answer.get("field")
        self.entry_id: Optional[str] = self.answer.get("entryId")
        self.message: str = self.answer.get("message", "")
        named = self.field or self.entry_id
        super().__init__(f"{self.kind}{f' ({named})' if named else ''}: {self.message}")


class TranscriptError(HybridCompactionError, ValueError):
    """A transcript the converters cannot map (SPEC TRN): ``path`` names the place
    (``messages[3].content[1]``, ``overrides.0``), ``reason`` what is wrong there, ``kind`` the
    ERR-1 kind (``InvalidArgument`` for a malformed message, ``NotSupported`` for content the
    closed content model cannot hold). ``str(e)`` is ``"{path}: {reason}"``."""

    def __init__(self, kind: str, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}" if path else reason)
        self.kind = kind
        self.path = path
        self.reason = reason


class UnsupportedContentError(TranscriptError):
    """Content the closed content model (SPEC ENT-3) cannot hold: an image, audio, a file, a
    thinking block, a ``RemoveMessage``, an invalid tool call (SPEC TRN-1, TRN-7 .. TRN-11).
    Sizing it would be a guess and dropping it would change the request, so it is refused."""


class CompactionTerminated(HybridCompactionError, RuntimeError):
    """Compaction terminated (SPEC NODE-4; the ADR: "throws rather than ever forwarding an
    over-budget or stale context"): nothing may be sent. ``outcome`` is ``Irreducible`` (the
    required content does not fit) or ``ConcurrentMutationLimit``; ``final_size`` and
    ``hard_limit`` are the sizes in the policy's unit. It carries nothing else."""

    def __init__(self, outcome: str, final_size: int, hard_limit: int) -> None:
        super().__init__(
            f"context compaction terminated ({outcome}): final estimated size {final_size} "
            f"exceeds what can be sent within hard limit {hard_limit}"
        )
        self.outcome = outcome
        self.final_size = final_size
        self.hard_limit = hard_limit


class TraceWriteError(HybridCompactionError, OSError):
    """A trace cannot be written: ``path`` names the file (or ``<stream>``, or ``hc-trace`` when
    no path was given and no ``pytest --hc-trace DIR`` session is running), ``reason`` what went
    wrong (the file cannot be opened, a write failed, the writer is closed). Nothing
    half-written is left: every line is written whole, then flushed."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot write the trace {path}: {reason}")
        self.path = path
        self.reason = reason
