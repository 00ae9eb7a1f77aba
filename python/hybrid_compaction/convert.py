"""Converters from agent-framework transcripts to wire messages and entries.

Two levels:

* ``openai_messages`` / ``langchain_messages``: pure Python, a transcript to wire **messages**
  (``{"role", "author"?, "parts"}``, ``docs/WIRE.md`` "Messages"), the SPEC's closed content
  model (ENT-3): text parts, tool calls, tool results.
* ``from_openai`` / ``from_langchain``: those messages adapted to wire **entries** by the
  oracle's own classifier (SPEC CLS-1; ids by CLS-2 ``"{sha256 of the rendering}:{n}"`` unless
  given), exactly as a host adapting the transcript sees them; the entries can go anywhere a
  case takes entries (``verify``, ``assemble``, ``evaluate``).

The mapping is the one of the SPEC's transcript clauses (TRN-1, TRN-2 for OpenAI chat, TRN-4 for
LangChain, ids by TRN-5):

=====================================  ====================================================
OpenAI chat completions                wire
=====================================  ====================================================
``role``                               ``role``; ``developer`` becomes ``system``
``name``                               ``author``
``content`` string                     one text part
``content`` parts                      ``text`` / ``refusal`` parts (and plain strings)
                                       become text parts, in order; any other part (image,
                                       audio, file) becomes ``{"unsupported": type}``, which
                                       the SPEC answers with a typed ``NotSupported`` error
``tool_calls[i]`` (type ``function``)  a call part: ``callId`` = ``id``, ``name``,
                                       ``arguments`` = the object parsed from the JSON string
                                       (blank: absent)
role ``tool``                          one result part: ``callId`` = ``tool_call_id``,
                                       ``value`` = the concatenated content text
``function_call``, role ``function``   ``{"unsupported": "function_call"}`` (NotSupported)
=====================================  ====================================================

Argument values: string, boolean and null as themselves, a number as raw JSON holding the
number's text (as the oracle's JSON reader renders it), an array as a list, an object as a map.
Malformed input (a missing ``role``, arguments that are not a JSON object, ...) raises
:class:`ValueError` naming the message index and member.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

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


def _number_text(n: float | int) -> str:
    """The text serde_json gives a JSON number: integers exactly (64-bit), others as ``f64`` in
    ryu's shortest form (``1.5``, ``100000.0``, ``1e16``, ``1.5e-7``, ``0.0001``)."""
    if isinstance(n, int) and -(2**63) <= n < 2**64:
        return str(n)
    x = float(n)
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    k = int(exponent) + len(digits) - len(ds)  # value = ds * 10^k
    kk = len(ds) + k  # 10^(kk-1) <= |value| < 10^kk
    lead = "-" if sign else ""
    if 0 <= k and kk <= 16:
        return f"{lead}{ds}{'0' * k}.0"
    if 0 < kk <= 16:
        return f"{lead}{ds[:kk]}.{ds[kk:]}"
    if -5 < kk <= 0:
        return f"{lead}0.{'0' * -kk}{ds}"
    mantissa = ds if len(ds) == 1 else f"{ds[0]}.{ds[1:]}"
    return f"{lead}{mantissa}e{kk - 1}"


def _value(j: Json, path: str) -> Json:
    """A parsed JSON argument as a wire value (TRN-1)."""
    if j is None or isinstance(j, (bool, str)):
        return j
    if isinstance(j, (int, float)):
        if isinstance(j, float) and not math.isfinite(j):
            raise ValueError(f"{path}: {j} is not a JSON number")
        return {"raw": _number_text(j)}
    if isinstance(j, (list, tuple)):
        return [_value(v, f"{path}[{i}]") for i, v in enumerate(j)]
    if isinstance(j, Mapping):
        return {"map": {_key(k, path): _value(v, f"{path}.{k}") for k, v in j.items()}}
    raise ValueError(f"{path}: {type(j).__name__} is not JSON")


def _arguments(args: Json, path: str) -> Dict[str, Json]:
    if not isinstance(args, Mapping):
        raise ValueError(f"{path}: expected a JSON object of arguments")
    return {_key(k, path): _value(v, f"{path}.{k}") for k, v in args.items()}


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _parsed_arguments(text: Json, path: str) -> Optional[Dict[str, Json]]:
    """OpenAI's ``function.arguments``: a JSON string holding an object; blank means absent."""
    text = _str(text, path)
    if text.strip() == "":
        return None
    try:
        parsed = json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        raise ValueError(f"{path}: expected a JSON object in a string") from None
    return _arguments(parsed, path)


def _text_parts(content: Json, path: str, refusal: bool) -> List[Dict[str, Json]]:
    """Text content: a string, or an array of strings and text blocks (and ``refusal`` blocks
    when ``refusal``); any other block is ``{"unsupported": type}``."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}]
    parts: List[Dict[str, Json]] = []
    for i, block in enumerate(_list(content, path)):
        p = f"{path}[{i}]"
        if isinstance(block, str):
            parts.append({"text": block})
            continue
        kind = _str(_get(block, "type", p), f"{p}.type")
        if kind == "text" or (refusal and kind == "refusal"):
            parts.append({"text": _str(_get(block, kind, p), f"{p}.{kind}")})
        else:
            parts.append({"unsupported": kind})
    return parts


def _tool_result(call_id: str, texts: List[Dict[str, Json]]) -> List[Dict[str, Json]]:
    unsupported = [t for t in texts if "unsupported" in t]
    if unsupported:
        return unsupported[:1]
    value = "".join(t["text"] for t in texts)
    return [{"result": {"callId": call_id, "value": value}}]


def _message(role: str, author: Json, parts: List[Dict[str, Json]], path: str) -> WireMessage:
    m: WireMessage = {"role": "system" if role == "developer" else role}
    if author is not None:
        m["author"] = _str(author, f"{path}.name")
    m["parts"] = parts
    return m


def openai_messages(messages: Iterable[Mapping[str, Json]]) -> List[WireMessage]:
    """OpenAI chat-completions messages (dicts) as wire messages (SPEC TRN-2). Pure Python."""
    out = []
    for i, m in enumerate(messages):
        path = f"messages[{i}]"
        role = _str(_get(m, "role", path), f"{path}.role")
        author = m.get("name")
        if role == "function" or m.get("function_call") is not None:
            out.append(_message(role, author, [{"unsupported": "function_call"}], path))
            continue
        texts = _text_parts(m.get("content"), f"{path}.content", refusal=True)
        if role == "tool":
            call_id = _str(_get(m, "tool_call_id", path), f"{path}.tool_call_id")
            out.append(_message(role, author, _tool_result(call_id, texts), path))
            continue
        parts = texts
        calls = m.get("tool_calls")
        for j, tc in enumerate(_list(calls, f"{path}.tool_calls") if calls is not None else []):
            p = f"{path}.tool_calls[{j}]"
            kind = _get_opt(tc, "type", p)
            if kind is not None and kind != "function":
                parts.append({"unsupported": str(kind)})
                continue
            fn = _get(tc, "function", p)
            fp = f"{p}.function"
            call: Dict[str, Json] = {
                "callId": _str(_get(tc, "id", p), f"{p}.id"),
                "name": _str(_get(fn, "name", fp), f"{fp}.name"),
            }
            arguments = _parsed_arguments(_get(fn, "arguments", fp), f"{fp}.arguments")
            if arguments is not None:
                call["arguments"] = arguments
            parts.append({"call": call})
        out.append(_message(role, author, parts, path))
    return out


_LANGCHAIN_ROLES = {
    "system": "system",
    "human": "user",
    "ai": "assistant",
    "AIMessageChunk": "assistant",
    "tool": "tool",
}
_LANGCHAIN_FIELDS = ("content", "name", "id", "tool_calls", "tool_call_id", "role")


def _langchain_fields(m: Any, path: str) -> Tuple[str, Dict[str, Json]]:
    """``(type, fields)`` of a LangChain message object, a ``model_dump()`` dict or a
    ``messages_to_dict()`` item (``{"type", "data": {...}}``)."""
    if isinstance(m, Mapping):
        kind = _str(_get(m, "type", path), f"{path}.type")
        data = m.get("data")
        return kind, dict(data if isinstance(data, Mapping) else m)
    attribute = getattr(m, "type", None)
    if not isinstance(attribute, str):
        raise ValueError(f"{path}: not a LangChain message (no string `type`)")
    return attribute, {f: getattr(m, f, None) for f in _LANGCHAIN_FIELDS}


def _langchain(messages: Iterable[Any]) -> Tuple[List[WireMessage], List[Optional[str]]]:
    out: List[WireMessage] = []
    ids: List[Optional[str]] = []
    for i, m in enumerate(messages):
        path = f"messages[{i}]"
        kind, d = _langchain_fields(m, path)
        given = d.get("id")
        ids.append(given if isinstance(given, str) and given.strip() else None)
        if kind == "function":
            out.append(_message("function", None, [{"unsupported": "function"}], path))
            continue
        if kind == "chat":
            role = _str(d.get("role"), f"{path}.role")
        elif kind in _LANGCHAIN_ROLES:
            role = _LANGCHAIN_ROLES[kind]
        else:
            raise ValueError(f"{path}.type: unknown message type {kind!r}")
        texts = _text_parts(d.get("content"), f"{path}.content", refusal=False)
        if role == "tool":
            call_id = _str(d.get("tool_call_id"), f"{path}.tool_call_id")
            out.append(_message(role, d.get("name"), _tool_result(call_id, texts), path))
            continue
        parts = texts
        calls = d.get("tool_calls")
        for j, tc in enumerate(_list(calls, f"{path}.tool_calls") if calls is not None else []):
            p = f"{path}.tool_calls[{j}]"
            call = {
                "callId": _str(_get(tc, "id", p), f"{p}.id"),
                "name": _str(_get(tc, "name", p), f"{p}.name"),
                "arguments": _arguments(_get_opt(tc, "args", p), f"{p}.args"),
            }
            parts.append({"call": call})
        out.append(_message(role, d.get("name"), parts, path))
    return out, ids


def langchain_messages(messages: Iterable[Any]) -> List[WireMessage]:
    """LangChain messages as wire messages (SPEC TRN-4).

    Takes message objects (``SystemMessage``, ``HumanMessage``, ``AIMessage`` with
    ``tool_calls``, ``ToolMessage``, ``ChatMessage``), their ``model_dump()`` dicts, or
    ``messages_to_dict()`` items. Duck-typed, so ``langchain_core`` is not a dependency of this
    package (``pip install hybrid-compaction[langchain]`` installs it for you).
    """
    return _langchain(messages)[0]


def entries_from_messages(
    messages: Sequence[Mapping[str, Json]],
    *,
    ids: Optional[Sequence[Optional[str]]] = None,
    overrides: Optional[Mapping[int, str]] = None,
    implementation: str = "engine",
) -> List[Dict[str, Json]]:
    """Wire messages adapted to wire entries by the default classifier (SPEC CLS-1, CLS-2).

    Runs the ``entry`` operation for the ids and kinds, then keeps each message's role, author
    and parts, so the entries carry the full content (calls, arguments, results) into ``verify``
    or ``assemble``. ``ids`` gives an id per message (``None`` items keep the content-hash id,
    TRN-5); ``overrides`` maps a message index to a kind (the classifier override of CLS-1 step
    3). A message the SPEC refuses raises :class:`~hybrid_compaction.SpecError`.
    """
    messages = list(messages)
    case: Dict[str, Json] = {"op": "entry", "messages": messages}
    if overrides:
        case["overrides"] = {str(k): v for k, v in overrides.items()}
    adapted = _entries_of(run(case, implementation))
    if len(adapted) != len(messages):
        raise AssertionError("adaptation is one entry per message (SPEC CLS-1)")
    if ids is not None and len(ids) != len(messages):
        raise ValueError(f"ids: {len(ids)} ids for {len(messages)} messages")
    entries = []
    for i, (e, m) in enumerate(zip(adapted, messages)):
        given = ids[i] if ids is not None else None
        entry = {"id": given if given is not None else e["id"], "kind": e["kind"], "role": m["role"]}
        if "author" in m:
            entry["author"] = m["author"]
        entry["parts"] = m.get("parts", [{"text": m["text"]}] if "text" in m else [])
        entries.append(entry)
    return entries


def from_openai(
    messages: Iterable[Mapping[str, Json]],
    *,
    ids: Optional[Sequence[Optional[str]]] = None,
    overrides: Optional[Mapping[int, str]] = None,
    implementation: str = "engine",
) -> List[Dict[str, Json]]:
    """An OpenAI chat transcript as wire entries (SPEC TRN-2, CLS-1; ids by TRN-5)."""
    return entries_from_messages(
        openai_messages(messages), ids=ids, overrides=overrides, implementation=implementation
    )


def from_langchain(
    messages: Iterable[Any],
    *,
    ids: Optional[Sequence[Optional[str]]] = None,
    overrides: Optional[Mapping[int, str]] = None,
    implementation: str = "engine",
) -> List[Dict[str, Json]]:
    """LangChain messages as wire entries (SPEC TRN-4, CLS-1). Ids by TRN-5: ``ids`` if given,
    else a message's own non-blank ``id``, else the content hash (CLS-2)."""
    wire, own = _langchain(messages)
    chosen = list(ids) if ids is not None else own
    return entries_from_messages(
        wire, ids=chosen, overrides=overrides, implementation=implementation
    )


def _get(obj: Json, key: str, path: str) -> Json:
    if not isinstance(obj, Mapping):
        raise ValueError(f"{path}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise ValueError(f"{path}.{key}: missing")
    return obj[key]


def _get_opt(obj: Json, key: str, path: str) -> Json:
    if not isinstance(obj, Mapping):
        raise ValueError(f"{path}: expected an object, got {type(obj).__name__}")
    return obj.get(key)


def _str(v: Json, path: str) -> str:
    if not isinstance(v, str):
        raise ValueError(f"{path}: expected a string, got {type(v).__name__}")
    return v


def _list(v: Json, path: str) -> List[Json]:
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"{path}: expected a list, got {type(v).__name__}")
    return list(v)
