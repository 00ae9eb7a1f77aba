"""Type stub of the native module ``hybrid_compaction._native`` (python/src/lib.rs)."""

from typing import Any, List, Literal, Optional, Tuple

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

def schema_json(which: Optional[str] = None) -> Optional[str]:
    """The JSON Schema(s) as JSON text; ``None`` for an unknown ``which``."""

def main(argv: List[str]) -> int:
    """The ``hybrid-compaction`` command on ``argv`` (program name first); its exit code."""

def workload_json(
    messages: int, seed: int, format: str, ending: Optional[str] = None
) -> Tuple[Literal["ok", "invalid"], str, str]:
    """A seeded agent conversation as transcript JSON text, or ``("invalid", argument, reason)``."""

def count_tokens(texts: List[str], encoding: str) -> Optional[List[int]]:
    """BPE token counts of ``texts`` (``o200k_base``/``cl100k_base``); ``None`` for another name."""
