"""Type stub of the native module ``hybrid_compaction._native`` (python/src/lib.rs).

Failures raise the package's own exceptions (``hybrid_compaction._errors``, constructed by the
native module itself, python/src/errors.rs): ``InvalidCaseError``, ``InternalError``,
``SpecError``, ``TranscriptError`` / ``UnsupportedContentError`` and ``CompactionTerminated``.
"""

from typing import Any, Callable, Dict, List, Optional, Tuple

__version__: str

def run_case(case: Any, implementation: str) -> str:
    """Runs one case given as a Python value (a dict) on ``"model"`` or ``"engine"``: the output
    as JSON text. Raises ``InvalidCaseError(json_path, reason)`` or
    ``InternalError(implementation, reason)``."""

def trace_lines(records: Any) -> str:
    """Trace records (a list of dicts) as JSON Lines text; ``InvalidCaseError(json_path,
    reason)`` for a value JSON cannot hold."""

def check_json(trace: str, implementation: str) -> str:
    """Checks a trace (JSON Lines text) by replaying it on ``"model"`` or ``"engine"``: the
    report as JSON text. Raises ``InvalidCaseError("line N", reason)`` or ``InternalError``."""

def check_file(path: str, implementation: str) -> str:
    """Checks the trace file at ``path`` as :func:`check_json` checks text, reading it in
    blocks (never whole); ``InvalidCaseError("file", reason)`` if it cannot be opened."""

def schema_json(which: Optional[str] = None) -> Optional[str]:
    """The JSON Schema(s) as JSON text (``"case"``, ``"output"``, ``"vector-file"``, ``"trace"``,
    or all but the trace); ``None`` for an unknown ``which``."""

def main(argv: List[str]) -> int:
    """The ``hybrid-compaction`` command on ``argv`` (program name first); its exit code."""

def workload_json(
    messages: int, seed: int, format: str, ending: Optional[str] = None
) -> str:
    """A seeded agent conversation as transcript JSON text; ``InvalidCaseError(argument,
    reason)`` for a bad argument."""

def count_tokens(texts: List[str], encoding: str) -> Optional[List[int]]:
    """BPE token counts of ``texts`` (``o200k_base``/``cl100k_base``); ``None`` for another name."""

def inherits_policy(case: Any, policy: Any) -> bool:
    """Whether ``case`` inherits the group policy ``policy``, by the oracle's rule (the case's
    operation takes a policy and the case has none); ``InvalidCaseError(path, reason)`` for a
    case or policy (paths under ``$.policy``) that is not valid wire input."""

def vector_file_cases(path: str) -> str:
    """The cases of a vector file with their group's policy applied by the oracle's loader, as
    one JSON array (file order); ``InvalidCaseError("file", reason)`` for a file it cannot
    load."""

def transcript_entries(transcript: Any) -> str:
    """A transcript's entries as JSON text; ``TranscriptError(kind, path, reason)``
    (``UnsupportedContentError`` for kind ``NotSupported``) for a refusal."""

class TraceRecorder:
    """The oracle's trace writer for one trace (names runs and calls, keeps entry tables)."""

    def __init__(self, content: bool) -> None: ...
    @staticmethod
    def header_line(producer: str) -> str: ...
    def observed(
        self,
        run: str,
        call: str,
        policy: Any,
        history: Any,
        sent: Optional[Any],
        dispatch: Optional[str] = None,
        note: Optional[str] = None,
    ) -> str:
        """An observed record line (SPEC TRC-13). Raises ``InvalidCaseError`` (a policy that is
        not wire input, path ``policy...``; an unknown ``dispatch``), ``SpecError`` (a policy the
        SPEC refuses) or ``TranscriptError`` (path ``history....`` or ``sent....``)."""
    def end_observed_run(self, run: str) -> str:
        """The ``runEnd`` line of an observed run."""

class Session:
    """One compactor's state: the memoized policy and its run scope."""

    def compact(
        self,
        transcript: Any,
        objects: List[Any],
        reducer: Optional[Callable[[List[Any]], Any]],
        serialize: Callable[[Any, str], Any],
    ) -> Tuple[str, List[List[Any]]]:
        """Compacts one call: ``(payload_json, the reducer's answers)``. Raises
        ``TranscriptError`` for a refused transcript, ``CompactionTerminated``, or ``SpecError``
        (from the reducer's exception, or its answer's ``TranscriptError``, as ``__cause__``)."""
    def compact_objects(
        self,
        format: str,
        objects: List[Any],
        system: Any,
        overrides: Optional[Dict[str, str]],
        writer: Callable[[Any], Any],
        names: Tuple[str, ...],
        pydantic_getattr: Any,
        token: int,
        reducer: Optional[Callable[[List[Any]], Any]],
        serialize: Callable[[Any, str], Any],
    ) -> Optional[Tuple[str, List[List[Any]]]]:
        """:meth:`compact` converting only the messages not provably unchanged since the last
        call; ``None`` when the whole transcript must be converted (a refusal, an exception)."""
    def take_record(self, recorder: TraceRecorder) -> Optional[str]:
        """The trace line of the last call, once."""
    def memo_stats(self) -> Tuple[int, int, int]: ...
    def end_run(self, recorder: TraceRecorder) -> Optional[str]: ...

def new_session(policy: Any, persistent: bool, workflow: str) -> Session:
    """A session for a wire policy. Raises ``InvalidCaseError`` (path ``policy...``) or
    ``SpecError`` (a policy the SPEC refuses, POL-2)."""
