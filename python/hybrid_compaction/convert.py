"""Transcripts to wire entries, through the library's one converter (``src/transcript/``).

The mapping of every format is the library's (SPEC TRN-1 .. TRN-17), reached through the native
module: this file only *writes* what the caller holds as the converter's JSON input (a
LangChain message object as its fields, a tuple as a list) and turns the converter's refusals
into exceptions. So the entries here are the entries ``hybrid-compaction run`` gives for the
same transcript (``python/tests/test_convert.py`` checks it over the workload generator).

* :func:`from_openai`, :func:`from_anthropic`, :func:`from_langchain`,
  :func:`from_openai_responses`: a transcript as wire
  entries (``{"id", "kind", "role", "author"?, "parts"}``) with the ids of TRN-5 and the kinds
  of CLS-1, for ``verify``, ``evaluate`` and ``assemble``.
* :func:`openai_messages`, :func:`anthropic_messages`, :func:`langchain_messages`: the same as
  wire messages (without ``id`` and ``kind``).
* :func:`entries_from_messages`: wire messages adapted by the default classifier (CLS-1, CLS-2).

Content a message cannot carry back as given (an OpenAI ``audio`` reply, LangChain's
``RemoveMessage``) raises :class:`UnsupportedContentError`, anything malformed
:class:`TranscriptError`, both ``ValueError`` subclasses with ``.path``
(``messages[3].content[1]``) and ``.reason``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, cast

from . import _native
from ._core import _entries_of, _overrides_member, _require_list, run
from ._types import Entry

__all__ = [
    "FORMATS",
    "from_openai",
    "from_anthropic",
    "from_langchain",
    "from_openai_responses",
    "openai_messages",
    "anthropic_messages",
    "langchain_messages",
    "entries_from_messages",
    "transcript",
    "wire_value",
]

Json = Any
WireMessage = Dict[str, Json]

#: The transcript formats (SPEC TRN-1), with the short names the functions accept.
FORMATS = {
    "openai-chat": "openai-chat",
    "openai": "openai-chat",
    "anthropic-messages": "anthropic-messages",
    "anthropic": "anthropic-messages",
    "langchain": "langchain",
    "openai-responses": "openai-responses",
    "responses": "openai-responses",
    # pydantic-ai ModelMessages as ModelMessagesTypeAdapter dumps them (SPEC TRN-21).
    "pydantic-ai": "pydantic-ai",
    # Gemini Contents as model_dump(mode="json", exclude_none=True) gives them (SPEC TRN-22).
    "gemini": "gemini",
    # The Vercel AI SDK's ModelMessages as JSON (SPEC TRN-20).
    "ai-sdk": "ai-sdk",
}

#: The formats with a top-level system prompt beside their messages (``system=``): Anthropic's
#: ``system``, the Responses ``instructions`` and Gemini's system instruction (SPEC TRN-1).
SYSTEM_FORMATS = ("anthropic-messages", "openai-responses", "gemini")

#: The LangChain message fields the converter reads (TRN-4, TRN-7 .. TRN-10); the rest
#: (``additional_kwargs``, ``response_metadata``, ``usage_metadata``, ``artifact``, ...) is
#: metadata a provider is not sent as content, and is kept on the caller's own objects.
_LANGCHAIN_FIELDS = (
    "content",
    "name",
    "id",
    "tool_calls",
    "invalid_tool_calls",
    "tool_call_id",
    "status",
    "role",
)
_LANGCHAIN_METADATA = (
    "additional_kwargs",
    "response_metadata",
    "usage_metadata",
    "artifact",
    "tool_call_chunks",
    "example",
)


def _langchain_json(m: Any) -> Json:
    """One LangChain message-like value as the converter's JSON: a message object (chunks
    included) as ``{"type", ...fields}``, a tuple as a ``[role, content]`` list, a dict without
    its metadata members, a string as itself (TRN-7)."""
    if isinstance(m, str):
        return m
    if isinstance(m, tuple):
        return list(m)
    if isinstance(m, Mapping):
        d = {k: v for k, v in m.items() if k not in _LANGCHAIN_METADATA}
        data = d.get("data")
        if isinstance(data, Mapping):
            d["data"] = {k: v for k, v in data.items() if k not in _LANGCHAIN_METADATA}
        kwargs = d.get("kwargs")
        if d.get("lc") == 1 and isinstance(kwargs, Mapping):
            d["kwargs"] = {k: v for k, v in kwargs.items() if k not in _LANGCHAIN_METADATA}
        return d
    kind = getattr(m, "type", None)
    if not isinstance(kind, str):
        return m  # not a message: the converter names it (or the writer refuses it by path)
    out: Dict[str, Json] = {"type": kind}
    for field in _LANGCHAIN_FIELDS:
        value = getattr(m, field, None)
        if value is not None:
            out[field] = value
    return out


def _format(format: str) -> str:
    try:
        return FORMATS[format]
    except KeyError:
        raise ValueError(
            "format must be 'openai-chat', 'anthropic-messages', 'langchain', "
            f"'openai-responses', 'pydantic-ai', 'gemini' or 'ai-sdk', got {format!r}"
        ) from None


def serialize(messages: Any, format: str) -> Tuple[List[Any], List[Json]]:
    """``(the objects as a list, their converter JSON)`` for messages in ``format``; a
    ``TypeError`` for something that is not a list of messages."""
    _require_list(messages, "messages")
    objects = list(messages)
    if _format(format) == "langchain":
        return objects, [_langchain_json(m) for m in objects]
    return objects, objects


def transcript(
    messages: Iterable[Any],
    format: str,
    *,
    system: Optional[Json] = None,
    ids: Optional[Sequence[Optional[str]]] = None,
    overrides: Optional[Mapping[int, str]] = None,
) -> Dict[str, Json]:
    """The transcript object (SPEC TRN-1) of ``messages`` in ``format``, as the converter reads
    it: ``{"format", "messages", "system"?, "ids"?, "overrides"?}``. ``ids`` has one id per
    adapted message (a top-level system first); ``None`` items take TRN-5's id."""
    format = _format(format)
    _, written = serialize(messages, format)
    t: Dict[str, Json] = {"format": format, "messages": written}
    if system is not None:
        if format not in SYSTEM_FORMATS:
            raise ValueError(
                "system= is Anthropic's top-level system prompt, the Responses instructions or "
                "Gemini's system instruction (format 'anthropic-messages', 'openai-responses' "
                f"or 'gemini'), not a member of {format!r}"
            )
        t["system"] = system
    member = _overrides_member(overrides)
    if member is not None:
        t["overrides"] = member
    if ids is not None:
        _require_list(ids, "ids")
        t["ids"] = list(ids)
    return t


def _entries(t: Dict[str, Json]) -> List[Entry]:
    # Ids that are all given go to the converter (TRN-5); with gaps, the gaps keep TRN-5's id.
    given = t.pop("ids", None) if None in t.get("ids", ()) else None
    # A refusal is raised by the native module: TranscriptError (UnsupportedContentError).
    entries = cast(List[Entry], json.loads(_native.transcript_entries(t)))
    if given is not None:
        if len(given) != len(entries):
            raise ValueError(
                f"ids: {len(given)} ids for {len(entries)} messages (a top-level system counts as the first)"
            )
        for e, i in zip(entries, given):
            if i is not None:
                e["id"] = i
    return entries


def from_openai(
    messages: Iterable[Mapping[str, Json]],
    *,
    ids: Optional[Sequence[Optional[str]]] = None,
    overrides: Optional[Mapping[int, str]] = None,
) -> List[Entry]:
    """An OpenAI chat transcript as wire entries (SPEC TRN-2, TRN-11, TRN-12; CLS-1; ids TRN-5)."""
    return _entries(transcript(messages, "openai-chat", ids=ids, overrides=overrides))


def from_anthropic(
    messages: Iterable[Mapping[str, Json]],
    system: Optional[Json] = None,
    *,
    ids: Optional[Sequence[Optional[str]]] = None,
    overrides: Optional[Mapping[int, str]] = None,
) -> List[Entry]:
    """An Anthropic Messages transcript as wire entries (SPEC TRN-3, TRN-10): ``system`` (a
    string or text blocks) is the first entry, a ``SystemInstruction``."""
    return _entries(
        transcript(messages, "anthropic-messages", system=system, ids=ids, overrides=overrides)
    )


def from_openai_responses(
    items: Iterable[Mapping[str, Json]],
    instructions: Optional[Json] = None,
    *,
    ids: Optional[Sequence[Optional[str]]] = None,
    overrides: Optional[Mapping[int, str]] = None,
) -> List[Entry]:
    """OpenAI Responses input items as wire entries (SPEC TRN-17): ``instructions`` (a string or
    ``input_text`` parts) is the first entry, a ``SystemInstruction``; each item one entry (a
    ``*_call`` item a call, its ``*_output`` the result, reasoning and provider-run tools
    blocks)."""
    return _entries(
        transcript(items, "openai-responses", system=instructions, ids=ids, overrides=overrides)
    )


def from_langchain(
    messages: Iterable[Any],
    *,
    ids: Optional[Sequence[Optional[str]]] = None,
    overrides: Optional[Mapping[int, str]] = None,
) -> List[Entry]:
    """LangChain messages as wire entries (SPEC TRN-4, TRN-7 .. TRN-10): message objects (chunk
    classes included), their ``model_dump()`` dicts, ``messages_to_dict()`` items and everything
    ``convert_to_messages`` accepts (strings, ``(role, content)`` tuples, role dicts,
    constructor envelopes). Ids by TRN-5: ``ids`` if given, else a message's own non-blank
    ``id``, else the content hash (CLS-2). Duck-typed: ``langchain_core`` is not a dependency."""
    return _entries(transcript(messages, "langchain", ids=ids, overrides=overrides))


def _messages(entries: List[Entry]) -> List[WireMessage]:
    return [{k: v for k, v in e.items() if k not in ("id", "kind")} for e in entries]


def openai_messages(messages: Iterable[Mapping[str, Json]]) -> List[WireMessage]:
    """OpenAI chat messages as wire messages (``{"role", "author"?, "parts"}``, SPEC TRN-2)."""
    return _messages(from_openai(messages))


def anthropic_messages(
    messages: Iterable[Mapping[str, Json]], system: Optional[Json] = None
) -> List[WireMessage]:
    """Anthropic messages (and ``system``) as wire messages (SPEC TRN-3)."""
    return _messages(from_anthropic(messages, system))


def langchain_messages(messages: Iterable[Any]) -> List[WireMessage]:
    """LangChain messages as wire messages (SPEC TRN-4, TRN-7 .. TRN-10)."""
    return _messages(from_langchain(messages))


def entries_from_messages(
    messages: Sequence[Mapping[str, Json]],
    *,
    ids: Optional[Sequence[Optional[str]]] = None,
    overrides: Optional[Mapping[int, str]] = None,
    implementation: str = "engine",
) -> List[Entry]:
    """Wire messages adapted to wire entries by the default classifier (SPEC CLS-1, CLS-2).

    Runs the ``entry`` operation for the ids and kinds, then keeps each message's role, author
    and parts, so the entries carry the full content into ``verify`` or ``assemble``. ``ids``
    gives an id per message (``None`` keeps the content-hash id); ``overrides`` maps a message
    index to a kind (CLS-1 step 3). A message the SPEC refuses raises
    :class:`~hybrid_compaction.SpecError`.
    """
    _require_list(messages, "messages")
    messages = list(messages)
    case: Dict[str, Json] = {"op": "entry", "messages": messages}
    member = _overrides_member(overrides)
    if member is not None:
        case["overrides"] = member
    adapted = _entries_of(run(case, implementation))
    if ids is not None and len(ids) != len(messages):
        raise ValueError(f"ids: {len(ids)} ids for {len(messages)} messages")
    entries: List[Entry] = []
    for i, (e, m) in enumerate(zip(adapted, messages)):
        given = ids[i] if ids is not None else None
        entry = cast(Entry, {"id": given if given is not None else e["id"], "kind": e["kind"], "role": m["role"]})
        if "author" in m:
            entry["author"] = m["author"]
        entry["parts"] = m.get("parts", [{"text": m["text"]}] if "text" in m else [])
        entries.append(entry)
    return entries


def wire_value(value: Json, path: str = "$") -> Json:
    """A Python value as a wire value (``docs/WIRE.md`` "Values"), tagging where JSON is ambiguous:
    a ``dict`` becomes ``{"map": ...}``, NaN and infinities ``{"f64": "NaN"}`` etc.; ``None``,
    ``bool``, ``str``, 64-bit ``int``, finite ``float`` and lists stay plain. Anything else raises
    :class:`ValueError` naming ``path``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if not -(2**63) <= value < 2**64:
            raise ValueError(f"{path}: integer {value} is outside the 64-bit range")
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return {"f64": "NaN"}
        if math.isinf(value):
            return {"f64": "Infinity" if value > 0 else "-Infinity"}
        return value
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"{path}: map key {k!r} is not a string")
            out[k] = wire_value(v, f"{path}.{k}")
        return {"map": out}
    if isinstance(value, (list, tuple)):
        return [wire_value(v, f"{path}[{i}]") for i, v in enumerate(value)]
    raise ValueError(f"{path}: {type(value).__name__} is not a wire value")
