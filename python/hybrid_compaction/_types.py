"""The shapes of the package's results, as TypedDicts (the wire's camelCase members, ``docs/WIRE.md``).

Outcomes, stages, reasons, units and kinds are ``Literal`` types, so a type checker (``mypy
--strict``) sees ``result["outcome"] == "Reduced"`` as a comparison of closed sets and a typo as
an error. The dicts are the ones ``hc.run`` returns; nothing here changes a value.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

__all__ = [
    "Outcome",
    "Stage",
    "VerificationOutcome",
    "RejectionReason",
    "MeasurementUnit",
    "EntryKind",
    "EventKind",
    "Verification",
    "Assembly",
    "CategoryContribution",
    "Diagnostics",
    "AssembleResult",
    "Evaluation",
    "Entry",
    "Policy",
    "Event",
    "Violation",
    "CheckReport",
]

#: Assembly outcomes (SPEC ASM-1): three successes, then the two terminations.
Outcome = Literal[
    "WithinLimit", "Reduced", "PreservationFallback", "Irreducible", "ConcurrentMutationLimit"
]
#: Assembly stages (SPEC ASM-2), in execution order in a result.
Stage = Literal[
    "SnapshotCaptured",
    "RecoverableBodyEviction",
    "ReducerAttempt",
    "RestartedAfterMutation",
    "DeterministicFallback",
]
#: The verifier's answer (SPEC VER-1).
VerificationOutcome = Literal["Accepted", "Rejected"]
#: Rejection reasons (SPEC VER-3), in their declaration order.
RejectionReason = Literal[
    "MissingRequiredEntry",
    "RequiredEntryOutOfOrder",
    "RequiredEntryContentMismatch",
    "OrphanedToolCall",
    "OrphanedToolResult",
    "DuplicateToolCall",
    "DuplicateToolResult",
    "ReorderedToolGroup",
    "CrossGroupToolResult",
    "ForgedStructuralEntry",
    "RetainedOriginalEntryMutated",
]
#: Measurement units (SPEC EST-1).
MeasurementUnit = Literal["Utf8Bytes", "EstimatedTokens", "HostDefinedUnits"]
#: Entry kinds (SPEC ENT-1).
EntryKind = Literal[
    "SystemInstruction",
    "AuthoritativeSessionState",
    "ApprovalSecurityState",
    "ToolExchange",
    "ArtifactReference",
    "ConversationalMessage",
    "Summary",
    "RecoverableContextSegment",
    "OptionalContext",
]
#: Progress event kinds (SPEC EVT-2).
EventKind = Literal["Started", "Completed", "Terminated", "Composed"]


class Verification(TypedDict):
    """``Verify``'s result (SPEC VER-3)."""

    outcome: VerificationOutcome
    rejectionReasons: List[RejectionReason]
    missingRequiredEntryIds: List[str]
    invalidEntryIds: List[str]
    preservationOnlyFallbackEntryIds: List[str]


class Assembly(TypedDict):
    """An assembly result (SPEC ASM-3)."""

    outcome: Outcome
    finalEntryIds: Optional[List[str]]
    originalEstimatedSize: int
    finalEstimatedSize: int
    hardLimit: int
    attemptCount: int
    stages: List[Stage]
    requiredEntryIds: List[str]
    latestSnapshotVersion: int
    finalVerification: Optional[Verification]


class CategoryContribution(TypedDict):
    """One kind's share of the final list (SPEC DIA-6)."""

    category: EntryKind
    size: int
    entryCount: int


class Diagnostics(TypedDict):
    """The privacy-safe diagnostics record (SPEC DIA-1): enums and numbers only."""

    outcome: Outcome
    measurementUnit: MeasurementUnit
    originalSize: int
    finalSize: int
    triggerThreshold: int
    hardLimit: int
    attemptCount: int
    stages: List[Stage]
    categoryContributions: List[CategoryContribution]
    finalSequenceValid: Optional[bool]


class _AssembleResult(TypedDict):
    assembly: Assembly
    diagnostics: Diagnostics


class AssembleResult(_AssembleResult, total=False):
    """What :func:`hybrid_compaction.assemble` returns (``finalTranscript`` with a transcript)."""

    finalTranscript: Dict[str, Any]


class Evaluation(TypedDict):
    """Trigger evaluation (SPEC POL-3)."""

    measurementUnit: MeasurementUnit
    entrySizes: List[int]
    estimatedSize: int
    hardLimit: int
    triggerMargin: int
    triggerThreshold: int
    triggered: bool


class _Entry(TypedDict):
    id: str
    kind: EntryKind
    role: str
    parts: List[Dict[str, Any]]


class Entry(_Entry, total=False):
    """A wire entry as the converters return it: ``parts`` in the wire's part shapes."""

    author: str


class Policy(TypedDict):
    """A wire policy (SPEC POL-1), as :func:`hybrid_compaction.policy` builds it."""

    hardLimit: int
    triggerMargin: int
    recentMessageRetentionCount: int
    maximumCompactionAttempts: int
    preservationLabel: str
    preservationVersion: int
    estimator: Dict[str, Any]


class _Event(TypedDict):
    kind: EventKind
    assemblyId: str
    sequence: int


class Event(_Event, total=False):
    """A progress event (SPEC EVT-1 .. EVT-6) in the trace's image: names and numbers only
    (``Started`` has the unit, hard limit and threshold; the others the diagnostics)."""

    measurementUnit: MeasurementUnit
    hardLimit: int
    triggerThreshold: int
    diagnostics: Diagnostics


class Violation(TypedDict):
    """One violated invariant of a trace (SPEC TRC)."""

    clause: str
    run: str
    call: str
    line: int
    message: str


class CheckReport(TypedDict):
    """The report of :func:`hybrid_compaction.check` (``hybrid-compaction check --json``)."""

    calls: int
    runs: int
    replayed: int
    #: Observed records among the calls (SPEC TRC-13, trace version 3).
    observed: int
    implementation: str
    violations: List[Violation]
    counterexamples: List[Dict[str, Any]]


#: An estimator as :func:`hybrid_compaction.policy` takes it: a name or a wire estimator.
EstimatorSpec = Union[str, Dict[str, Any]]
