"""Converters from agent-framework transcripts to wire messages and entries.

Two levels:

* ``openai_messages`` / ``langchain_messages``: pure Python, a transcript to wire **messages**
  (``{"role", "author"?, "parts"}``, ``docs/WIRE.md`` "Messages"), the SPEC's closed content
  model (ENT-3): text parts, tool calls, tool results.
* ``from_openai`` / ``from_langchain``: those messages adapted to wire **entries** by the
  oracle's own default classifier (SPEC CLS-1, CLS-2: kind by precedence, id
  ``"{sha256 of the rendering}:{n}"``), exactly as a host using the default classifier sees them;
  the entries can go anywhere a case takes entries (``verify``, ``assemble``, ``evaluate``).

Mapping (OpenAI chat completions format; LangChain messages are mapped through the same rules):

=====================================  ====================================================
OpenAI                                 wire
=====================================  ====================================================
``role``                               ``role``; ``developer`` becomes ``system`` (it is the
                                       system instruction of newer models, CLS-1 step 2)
``name``                               ``author``
``content`` string                     one text part (an empty string next to tool calls is
                                       dropped: the API's placeholder for "no text")
``content`` parts                      ``text`` / ``refusal`` parts become text parts; any other
                                       part type (image, audio, file) becomes
                                       ``{"unsupported": type}``, which the SPEC answers with a
                                       typed ``NotSupported`` error (ENT-3, DEP-19)
``tool_calls[i]`` (type ``function``)  a call part: ``callId`` = ``id``, ``name``,
                                       ``arguments`` = the parsed JSON object, each value as
                                       raw JSON (ENT-4), as .NET's chat clients keep them
role ``tool``                          one result part: ``callId`` = ``tool_call_id``,
                                       ``value`` = the content text (``null`` if absent)
=====================================  ====================================================

Anything the SPEC cannot express (a legacy ``function_call``, role ``function``, arguments that
are not a JSON object) raises :class:`ValueError` naming the message index and member.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from ._core import _entries_of, run

__all__ = [
    "openai_messages",
    "langchain_messages",
    "from_openai",
    "from_langchain",
    "entries_from_messages",
    "wire_value",
]

Json = Any
WireMessage = Dict[str, Json]


def wire_value(value: Json, path: str = "$") -> Json:
    """A Python value as a wire value (``docs/WIRE.md`` "Values"), tagging where JSON is ambiguous.

    ``None``, ``bool``, ``str``, ``int`` (in the 64-bit range), finite ``float`` and lists stay
    plain; a ``dict`` becomes ``{"map": ...}``; NaN and infinities become ``{"f64": "NaN"}``
    etc. Anything else raises :class:`ValueError` naming ``path``.
    """
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
        return {"map": {_key(k, path): wire_value(v, f"{path}.{k}") for k, v in value.items()}}
    if isinstance(value, (list, tuple)):
        return [wire_value(v, f"{path}[{i}]") for i, v in enumerate(value)]
    raise ValueError(f"{path}: {type(value).__name__} is not a wire value")


def _key(k: Json, path: str) -> str:
    if not isinstance(k, str):
        raise ValueError(f"{path}: map key {k!r} is not a string")
    return k


def _raw_arguments(arguments: Mapping[str, Json], path: str) -> Dict[str, Json]:
    """Each argument as raw JSON (compact text), the .NET `JsonElement` of the parsed object."""
    out = {}
    for k, v in arguments.items():
        try:
            text = json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{path}.{k}: not JSON: {e}") from None
        out[_key(k, path)] = {"raw": text}
    return out


def _text_of(content: Json, path: str) -> Optional[str]:
    """The concatenated text of a content string or list of text parts (tool results)."""
    if content is None or isinstance(content, str):
        return content
    texts = []
    for i, part in enumerate(_list(content, path)):
        kind = _get(part, "type", f"{path}[{i}]")
        if kind != "text":
            raise ValueError(f"{path}[{i}]: a tool result part of type {kind!r} is not text")
        texts.append(_str(_get(part, "text", f"{path}[{i}]"), f"{path}[{i}].text"))
    return "".join(texts)


def _content_parts(content: Json, path: str, has_calls: bool) -> List[Dict[str, Json]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [] if content == "" and has_calls else [{"text": content}]
    parts: List[Dict[str, Json]] = []
    for i, part in enumerate(_list(content, path)):
        p = f"{path}[{i}]"
        kind = _get(part, "type", p)
        if kind == "text":
            parts.append({"text": _str(_get(part, "text", p), f"{p}.text")})
        elif kind == "refusal":
            parts.append({"text": _str(_get(part, "refusal", p), f"{p}.refusal")})
        else:
            parts.append({"unsupported": str(kind)})
    return parts


def _call_part(call_id: Json, name: Json, arguments: Json, path: str) -> Dict[str, Json]:
    call: Dict[str, Json] = {
        "callId": _str(call_id, f"{path}.id"),
        "name": _str(name, f"{path}.name"),
    }
    if isinstance(arguments, str):
        if arguments.strip() == "":
            arguments = None
        else:
            try:
                arguments = json.loads(arguments)
            except ValueError as e:
                raise ValueError(f"{path}.arguments: not JSON: {e}") from None
    if arguments is not None:
        if not isinstance(arguments, Mapping):
            raise ValueError(f"{path}.arguments: expected a JSON object")
        call["arguments"] = _raw_arguments(arguments, f"{path}.arguments")
    return {"call": call}


def _message(role: str, author: Optional[str], parts: List[Dict[str, Json]]) -> WireMessage:
    m: WireMessage = {"role": "system" if role == "developer" else role}
    if author is not None:
        m["author"] = author
    m["parts"] = parts
    return m


def openai_messages(messages: Iterable[Mapping[str, Json]]) -> List[WireMessage]:
    """OpenAI chat-completions messages (dicts) as wire messages. Pure Python; see the module doc."""
    out = []
    for i, m in enumerate(messages):
        path = f"messages[{i}]"
        role = _str(_get(m, "role", path), f"{path}.role")
        if role == "function" or m.get("function_call") is not None:
            raise ValueError(f"{path}: legacy function calling has no call id; use tool_calls")
        author = m.get("name")
        if role == "tool":
            value = _text_of(m.get("content"), f"{path}.content")
            call_id = _get(m, "tool_call_id", path)
            result = {"callId": _str(call_id, f"{path}.tool_call_id"), "value": value}
            out.append(_message(role, author, [{"result": result}]))
            continue
        calls = m.get("tool_calls") or []
        parts = _content_parts(m.get("content"), f"{path}.content", bool(calls))
        if m.get("refusal"):
            parts.append({"text": _str(m["refusal"], f"{path}.refusal")})
        for j, tc in enumerate(_list(calls, f"{path}.tool_calls")):
            p = f"{path}.tool_calls[{j}]"
            if tc.get("type", "function") != "function":
                raise ValueError(f"{p}: tool call type {tc.get('type')!r} is not a function call")
            fn = _get(tc, "function", p)
            parts.append(
                _call_part(tc.get("id"), fn.get("name"), fn.get("arguments"), f"{p}.function")
            )
        out.append(_message(role, author, parts))
    return out


_LANGCHAIN_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def langchain_messages(messages: Iterable[Any]) -> List[WireMessage]:
    """LangChain message objects (``langchain_core.messages``) as wire messages.

    Duck-typed on ``type``, ``content``, ``name``, ``tool_calls`` and ``tool_call_id``, so
    ``langchain_core`` is not a dependency of this package (install it yourself, or
    ``pip install hybrid-compaction[langchain]``). ``SystemMessage``, ``HumanMessage``,
    ``AIMessage`` (with ``tool_calls``) and ``ToolMessage`` are mapped as their OpenAI
    equivalents; ``ChatMessage`` keeps its ``role``; anything else raises :class:`ValueError`.
    """
    out = []
    for i, m in enumerate(messages):
        path = f"messages[{i}]"
        kind = getattr(m, "type", None)
        role = getattr(m, "role", None) if kind == "chat" else _LANGCHAIN_ROLES.get(str(kind))
        if not isinstance(role, str):
            raise ValueError(f"{path}: a LangChain message of type {kind!r} has no wire role")
        author = getattr(m, "name", None)
        content = getattr(m, "content", None)
        if role == "tool":
            value = _text_of(content, f"{path}.content")
            call_id = _str(getattr(m, "tool_call_id", None), f"{path}.tool_call_id")
            out.append(_message(role, author, [{"result": {"callId": call_id, "value": value}}]))
            continue
        calls = list(getattr(m, "tool_calls", None) or [])
        parts = _content_parts(content, f"{path}.content", bool(calls))
        for j, tc in enumerate(calls):
            p = f"{path}.tool_calls[{j}]"
            parts.append(_call_part(tc.get("id"), tc.get("name"), tc.get("args") or {}, p))
        out.append(_message(role, author, parts))
    return out


def entries_from_messages(
    messages: Sequence[Mapping[str, Json]], *, implementation: str = "engine"
) -> List[Dict[str, Json]]:
    """Wire messages adapted to wire entries by the default classifier (SPEC CLS-1, CLS-2).

    Runs the ``entry`` operation for the ids and kinds, then keeps each message's role, author
    and parts, so the entries carry the full content (calls, arguments, results) into ``verify``
    or ``assemble``. A message the SPEC refuses raises :class:`~hybrid_compaction.SpecError`.
    """
    messages = list(messages)
    adapted = _entries_of(run({"op": "entry", "messages": messages}, implementation))
    if len(adapted) != len(messages):
        raise AssertionError("adaptation is one entry per message (SPEC CLS-1)")
    entries = []
    for e, m in zip(adapted, messages):
        entry = {"id": e["id"], "kind": e["kind"], "role": m["role"]}
        if "author" in m:
            entry["author"] = m["author"]
        entry["parts"] = m.get("parts", [{"text": m["text"]}] if "text" in m else [])
        entries.append(entry)
    return entries


def from_openai(
    messages: Iterable[Mapping[str, Json]], *, implementation: str = "engine"
) -> List[Dict[str, Json]]:
    """An OpenAI chat transcript as wire entries, as the default classifier adapts it."""
    return entries_from_messages(openai_messages(messages), implementation=implementation)


def from_langchain(messages: Iterable[Any], *, implementation: str = "engine") -> List[Dict[str, Json]]:
    """A LangChain message list as wire entries, as the default classifier adapts it."""
    return entries_from_messages(langchain_messages(messages), implementation=implementation)


def _get(obj: Json, key: str, path: str) -> Json:
    if not isinstance(obj, Mapping):
        raise ValueError(f"{path}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise ValueError(f"{path}.{key}: missing")
    return obj[key]


def _str(v: Json, path: str) -> str:
    if not isinstance(v, str):
        raise ValueError(f"{path}: expected a string, got {type(v).__name__}")
    return v


def _list(v: Json, path: str) -> List[Json]:
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"{path}: expected a list, got {type(v).__name__}")
    return list(v)
