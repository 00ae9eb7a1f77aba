"""Type stub of the native module ``hybrid_compaction._native`` (python/src/lib.rs)."""

from typing import Any, Callable, Dict, List, Literal, Optional, Tuple

__version__: str

def run_case(
    case: Any, implementation: str
) -> Tuple[Literal["ok", "invalid", "internal"], str, str]:
    """Runs one case given as a Python value (a dict) on ``"model"`` or ``"engine"``.

    ``("ok", output_json, "")``, ``("invalid", json_path, reason)`` or
    ``("internal", implementation, reason)``. Never raises.
    """

def trace_lines(records: Any) -> Tuple[Literal["ok", "invalid"], str, str]:
    """Trace records (a list of dicts) as JSON Lines text: ``("ok", text, "")``, or
    ``("invalid", json_path, reason)`` for a value JSON cannot hold. Never raises."""

def check_json(
    trace: str, implementation: str
) -> Tuple[Literal["ok", "invalid", "internal"], str, str]:
    """Checks a trace (JSON Lines text) by replaying it on ``"model"`` or ``"engine"``.

    ``("ok", report_json, "")``, ``("invalid", "line N", reason)`` or
    ``("internal", implementation, reason)``. Never raises.
    """

def check_file(
    path: str, implementation: str
) -> Tuple[Literal["ok", "invalid", "internal"], str, str]:
    """Checks the trace file at ``path`` as :func:`check_json` checks text, reading it in
    blocks (never whole); ``("invalid", "file", reason)`` if it cannot be opened. Never raises.
    """

def schema_json(which: Optional[str] = None) -> Optional[str]:
    """The JSON Schema(s) as JSON text (``"case"``, ``"output"``, ``"vector-file"``, ``"trace"``,
    or all but the trace); ``None`` for an unknown ``which``."""

def main(argv: List[str]) -> int:
    """The ``hybrid-compaction`` command on ``argv`` (program name first); its exit code."""

def workload_json(
    messages: int, seed: int, format: str, ending: Optional[str] = None
) -> Tuple[Literal["ok", "invalid"], str, str]:
    """A seeded agent conversation as transcript JSON text, or ``("invalid", argument, reason)``."""

def count_tokens(texts: List[str], encoding: str) -> Optional[List[int]]:
    """BPE token counts of ``texts`` (``o200k_base``/``cl100k_base``); ``None`` for another name."""

def inherits_policy(
    case: Any, policy: Any
) -> Tuple[Literal["ok", "invalid"], str, str]:
    """Whether ``case`` inherits the group policy ``policy``, by the oracle's rule:
    ``("ok", "inherit" | "keep", "")``, or ``("invalid", json_path, reason)`` for a case or
    policy (paths under ``$.policy``) that is not valid wire input. Never raises."""

def vector_file_cases(path: str) -> Tuple[Literal["ok", "invalid"], str, str]:
    """The cases of a vector file with their group's policy applied by the oracle's loader, as
    one JSON array (file order): ``("ok", array_json, "")`` or ``("invalid", "file", reason)``.
    Never raises."""

def transcript_entries(
    transcript: Any,
) -> Tuple[Literal["ok", "refused"], str, str, str]:
    """A transcript's entries as JSON text: ``("ok", entries_json, "", "")`` or
    ``("refused", kind, path, reason)``. Never raises."""

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
    ) -> Tuple[Literal["ok", "invalid", "refused", "transcript"], str, str, str]:
        """An observed record line (SPEC TRC-13): ``("ok", line, "", "")``, ``("invalid", path,
        reason, "")``, ``("refused", "kind:field", reason, "")`` or ``("transcript", kind, path,
        reason)``. Never raises."""
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
    ) -> Tuple[Literal["ok", "terminated", "failed", "refused"], str, List[List[Any]], Optional[BaseException]]:
        """Compacts one call: ``(status, payload_json, the reducer's answers, its exception)``."""
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
    ) -> Optional[Tuple[Literal["ok", "terminated", "failed", "refused"], str, List[List[Any]], Optional[BaseException]]]:
        """:meth:`compact` converting only the messages not provably unchanged since the last
        call; ``None`` when the whole transcript must be converted (a refusal, an exception)."""
    def take_record(self, recorder: TraceRecorder) -> Optional[str]:
        """The trace line of the last call, once."""
    def memo_stats(self) -> Tuple[int, int, int]: ...
    def end_run(self, recorder: TraceRecorder) -> Optional[str]: ...

def new_session(
    policy: Any, persistent: bool, workflow: str
) -> Tuple[Literal["ok", "invalid", "refused"], Optional[Session], str, str]:
    """A session for a wire policy, or ``("invalid", path, reason)`` / ``("refused", "kind:field", reason)``."""
