"""hybrid_compaction: the conformance oracle of hybrid context compaction (ADR-0007) in Python.

The library (the optimized engine and the per-provider-call node) and the oracle (with the
executable specification, ``docs/SPEC.md``) run inside this process through a native module: no
subprocess, no Rust toolchain. Three uses (``docs/PYTHON.md``): judge a reducer's compaction
(``verify``), compact with one (``compact``, ``Compactor``), check a recorded trace (``check``,
``TraceWriter``). Results are plain dicts in the wire format of ``docs/WIRE.md``.

>>> import hybrid_compaction as hc
>>> p = hc.policy(hard_limit=100, trigger_margin=10, recent_message_retention_count=1,
...               maximum_compaction_attempts=1, preservation_label="demo", preservation_version=1)
>>> original = hc.from_openai([{"role": "system", "content": "be brief"},
...                            {"role": "user", "content": "hi"}])
>>> hc.verify(original, [e["id"] for e in original], p)["outcome"]
'Accepted'
"""

from ._core import (
    ENDINGS,
    IMPLEMENTATIONS,
    TRANSCRIPT_FORMATS,
    HybridCompactionError,
    InternalError,
    InvalidCaseError,
    SpecError,
    TranscriptError,
    UnsupportedContentError,
    CompactionTerminated,
    TraceWriteError,
    assemble,
    check,
    count_tokens,
    evaluate,
    policy,
    run,
    schema,
    verify,
    workload,
)
from ._native import __version__
from .compact import Compaction, Compactor, TraceWriter, compact
from .convert import (
    anthropic_messages,
    entries_from_messages,
    from_anthropic,
    from_langchain,
    from_openai_responses,
    from_openai,
    langchain_messages,
    openai_messages,
    wire_value,
)

__all__ = [
    "__version__",
    "IMPLEMENTATIONS",
    "HybridCompactionError",
    "InvalidCaseError",
    "InternalError",
    "SpecError",
    "TranscriptError",
    "UnsupportedContentError",
    "CompactionTerminated",
    "TraceWriteError",
    "Compaction",
    "Compactor",
    "TraceWriter",
    "compact",
    "run",
    "policy",
    "verify",
    "assemble",
    "check",
    "evaluate",
    "schema",
    "openai_messages",
    "anthropic_messages",
    "langchain_messages",
    "from_openai",
    "from_anthropic",
    "from_langchain",
    "from_openai_responses",
    "entries_from_messages",
    "wire_value",
    "workload",
    "count_tokens",
    "TRANSCRIPT_FORMATS",
    "ENDINGS",
]
