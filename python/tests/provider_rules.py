"""What the providers' own request rules say of a message list, written from their documentation,
not from this project's verifier: the judge of the real-data test (``test_realdata.py``).

Each function takes the list a caller would send (and Anthropic's top-level ``system``) and
returns the broken rules, one line each, empty when the provider would accept the list's
structure. Only the rules a compaction can break are judged: tool calls and their results kept
together and in order, results answering a call, reasoning kept with what it precedes. Content
a compaction keeps verbatim (images, files, thinking blocks) is not looked into.

Sources (the rule each check implements, with the provider's own error text where it has one):

* OpenAI Chat Completions, "Function calling" and the API reference for ``messages``: a
  ``tool`` message answers a ``tool_call_id`` of the assistant message with ``tool_calls``
  right before the run of tool messages it is in ("messages with role 'tool' must be a response
  to a preceding message with 'tool_calls'"), and an assistant message with ``tool_calls`` is
  followed by a tool message for each id ("An assistant message with 'tool_calls' must be
  followed by tool messages responding to each 'tool_call_id'"). The deprecated
  ``function_call`` is answered by the ``role: "function"`` message right after it.
* Anthropic Messages, "Messages" and "Tool use": consecutive turns of one role are combined into
  one turn; every ``tool_use`` block of an assistant turn has a
  ``tool_result`` block with its id in the very next message, and a ``tool_result`` answers a
  ``tool_use`` of the turn right before it ("tool_use ids were found without tool_result
  blocks immediately after"; "unexpected tool_use_id found in tool_result blocks"), and in the
  turn that holds tool results they come first ("the tool_result blocks must come FIRST in the
  content array, any text must come AFTER all tool results"). A server
  tool (``server_tool_use``) has its result in the same assistant turn.
* OpenAI Responses, "Function calling" and "Reasoning": a ``function_call_output`` (and the
  other ``*_call_output`` items) answers a call with its ``call_id`` earlier in the input ("No
  tool call found for function call output with call_id"; any earlier item with that ``call_id``,
  such as a client-run ``tool_search_call``), a function call in the input has its output ("No
  tool output found for function call"), and a ``reasoning`` item is followed by the
  item it was produced with ("Item of type 'reasoning' was provided without its required
  following item").
"""

from __future__ import annotations

from typing import Any, List, Optional, Set

Json = Any


def openai_chat(messages: List[Json]) -> List[str]:
    """The broken rules of an OpenAI Chat Completions ``messages`` list."""
    broken: List[str] = []
    open_calls: Optional[Set[str]] = None  # the ids the tool messages after a call answer
    open_function: Optional[str] = None  # a legacy function_call awaiting its function message
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "tool":
            if open_calls is None or m.get("tool_call_id") not in open_calls:
                broken.append(f"[{i}] a tool message answers no call of the assistant message before")
            else:
                open_calls.discard(m["tool_call_id"])
            continue
        if role == "function":
            if open_function is None or m.get("name") != open_function:
                broken.append(f"[{i}] a function message answers no function_call right before it")
            open_function = None
            continue
        if open_calls:
            broken.append(f"[{i}] tool calls {sorted(open_calls)} have no tool message")
        if open_function is not None:
            broken.append(f"[{i}] function_call {open_function!r} has no function message")
        open_calls, open_function = None, None
        if role == "assistant":
            calls = m.get("tool_calls") or []
            if calls:
                open_calls = {c.get("id") for c in calls}
            fc = m.get("function_call")
            if fc:
                open_function = fc.get("name")
    if open_calls:
        broken.append(f"[end] tool calls {sorted(open_calls)} have no tool message")
    if open_function is not None:
        broken.append(f"[end] function_call {open_function!r} has no function message")
    return broken


def _blocks(m: Json) -> List[Json]:
    content = m.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _turns(messages: List[Json]) -> List[Json]:
    """Consecutive messages of one role combined into one turn (as the API combines them), each
    with its first message's index."""
    turns: List[Json] = []
    for i, m in enumerate(messages):
        blocks = _blocks(m) or [{"type": "text"}]
        if turns and turns[-1]["role"] == m.get("role"):
            turns[-1]["blocks"].extend(blocks)
        else:
            turns.append({"role": m.get("role"), "index": i, "blocks": list(blocks)})
    return turns


def anthropic_messages(messages: List[Json]) -> List[str]:
    """The broken rules of an Anthropic Messages ``messages`` list."""
    broken: List[str] = []
    pending: Set[str] = set()  # tool_use ids of the previous assistant turn
    for turn in _turns(messages):
        i, blocks = turn["index"], turn["blocks"]
        kinds = [b.get("type") == "tool_result" for b in blocks]
        if any(kinds) and kinds != sorted(kinds, reverse=True):
            broken.append(f"[{i}] tool_result blocks after other content in their turn")
        results = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
        for r in sorted(results - pending, key=str):
            broken.append(f"[{i}] tool_result {r!r} answers no tool_use of the message before")
        for u in sorted(pending - results, key=str):
            broken.append(f"[{i}] tool_use {u!r} has no tool_result in the next message")
        pending = set()
        if turn["role"] == "assistant":
            pending = {b.get("id") for b in blocks if b.get("type") == "tool_use"}
            server = {b.get("id") for b in blocks if b.get("type") in ("server_tool_use", "mcp_tool_use")}
            answered = {b.get("tool_use_id") for b in blocks if b.get("type", "").endswith("_result")}
            for s in sorted(server - answered, key=str):
                broken.append(f"[{i}] server tool use {s!r} has no result in its message")
    for u in sorted(pending, key=str):
        broken.append(f"[end] tool_use {u!r} has no tool_result")
    return broken


#: Responses input items the client must answer with an output item.
_CALLS = ("function_call", "custom_tool_call", "computer_call", "local_shell_call")


def openai_responses(items: List[Json]) -> List[str]:
    """The broken rules of an OpenAI Responses ``input`` list."""
    broken: List[str] = []
    seen: Set[str] = set()  # every call_id of an earlier item
    calls: Set[str] = set()  # the call_ids of calls the client answers
    answered: Set[str] = set()
    for i, it in enumerate(items):
        t = it.get("type", "message")
        cid = it.get("call_id")
        if t.endswith("_output"):
            # A server-run tool's output (`call_id` null) answers the server's own call.
            if cid is not None and cid not in seen:
                broken.append(f"[{i}] {t} {cid!r} answers no call before it")
            answered.add(cid)
        elif cid is not None:
            seen.add(cid)
            if t in _CALLS:
                calls.add(cid)
        elif t == "reasoning" and (i + 1 >= len(items) or items[i + 1].get("type") == "reasoning"):
            broken.append(f"[{i}] a reasoning item without the item it precedes")
    for cid in sorted(calls - answered, key=str):
        broken.append(f"call {cid!r} has no output")
    return broken


JUDGES = {
    "openai-chat": openai_chat,
    "anthropic-messages": anthropic_messages,
    "openai-responses": openai_responses,
}
