"""The peers' reducers, run without an LLM, and the mapping of their output back to entry ids.

Every reducer takes one conversation (built once per framework from the workload's LangChain
transcript, ``hc.workload(n, seed, format="langchain")``) and a budget in one unit (``utf8``
bytes or ``o200k`` tokens, with a counter of that kind handed to the framework), and returns
the framework's own message objects. :func:`neutral` reduces any framework message to
``(role, text, calls, results)`` so the output can be mapped back to entry ids by the bridge
rules (SPEC BRG-2): a kept id (LangChain ``id``, Agent Framework ``message_id``) or the same
object (Semantic Kernel keeps its objects) is that entry when its content is unchanged;
otherwise the first not-yet-matched original with equal content; anything else is new (a
summary, or fabricated tool content).

The framework imports are local to each builder, so ``--smoke`` needs only langchain-core.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import hybrid_compaction as hc

#: A fixed summary: what every stub summarizer answers.
STUB_SUMMARY = "Summary of the earlier conversation: the user asked about the build; tools were run."

Neutral = Tuple[str, str, Tuple[Tuple[str, str, str], ...], Tuple[Tuple[str, str], ...]]


def args_json(args: Any) -> str:
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return args
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


def neutral_of_dict(m: Dict[str, Any]) -> Neutral:
    """A workload message (LangChain dict) in the neutral form."""
    role = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}[m["type"]]
    calls = tuple((c["id"], c["name"], args_json(c["args"])) for c in m.get("tool_calls") or [])
    results = ((m["tool_call_id"], m["content"]),) if role == "tool" else ()
    return role, "" if role == "tool" else m["content"], calls, results


def text_of(n: Neutral) -> str:
    """What a counter measures of a message: its text, call names and arguments, result texts."""
    role, text, calls, results = n
    parts = [text]
    parts += [name + a for _, name, a in calls]
    parts += [r for _, r in results]
    return "".join(parts)


# -- counters of the two kinds -------------------------------------------------------------

def utf8_count(texts: Sequence[str]) -> List[int]:
    return [len(t.encode("utf-8")) for t in texts]


def o200k_count(texts: Sequence[str]) -> List[int]:
    # 3 tokens of chat overhead per message, as provider token counting does.
    return [c + 3 for c in hc.count_tokens(list(texts), "o200k_base")]


COUNTERS: Dict[str, Callable[[Sequence[str]], List[int]]] = {"utf8": utf8_count, "o200k": o200k_count}


# -- LangChain --------------------------------------------------------------------------------

def lc_messages(transcript: Dict[str, Any]) -> List[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: List[Any] = []
    for m in transcript["messages"]:
        t = m["type"]
        if t == "system":
            out.append(SystemMessage(content=m["content"], id=m["id"]))
        elif t == "human":
            out.append(HumanMessage(content=m["content"], id=m["id"]))
        elif t == "ai":
            calls = [{"id": c["id"], "name": c["name"], "args": c["args"], "type": "tool_call"}
                     for c in m.get("tool_calls") or []]
            out.append(AIMessage(content=m["content"], tool_calls=calls, id=m["id"]))
        else:
            out.append(ToolMessage(content=m["content"], tool_call_id=m["tool_call_id"], id=m["id"]))
    return out


def lc_neutral(m: Any) -> Neutral:
    role = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}.get(m.type, m.type)
    content = m.content if isinstance(m.content, str) else "".join(
        b.get("text", "") if isinstance(b, dict) else str(b) for b in m.content)
    calls = tuple((c["id"], c["name"], args_json(c["args"])) for c in getattr(m, "tool_calls", None) or [])
    if role == "tool":
        return role, "", (), ((m.tool_call_id, content),)
    return role, content, calls, ()


def lc_counter(kind: str) -> Callable[[List[Any]], int]:
    """A list token counter, the shape trim_messages documents (called on candidate lists)."""
    count = COUNTERS[kind]

    def counter(messages: List[Any]) -> int:
        return sum(count([text_of(lc_neutral(m)) for m in messages]))

    return counter


def lc_trim(**settings: Any) -> Callable[[List[Any], int, str], List[Any]]:
    def run(messages: List[Any], budget: int, kind: str) -> List[Any]:
        from langchain_core.messages import trim_messages

        return trim_messages(messages, max_tokens=budget, token_counter=lc_counter(kind), **settings)

    return run


# -- Semantic Kernel --------------------------------------------------------------------------

def sk_messages(transcript: Dict[str, Any]) -> List[Any]:
    from semantic_kernel.contents import (ChatMessageContent, FunctionCallContent,
                                          FunctionResultContent, TextContent)
    from semantic_kernel.contents.utils.author_role import AuthorRole

    names: Dict[str, str] = {}
    out: List[Any] = []
    for m in transcript["messages"]:
        t = m["type"]
        if t == "tool":
            item = FunctionResultContent(id=m["tool_call_id"], call_id=m["tool_call_id"],
                                         function_name=names[m["tool_call_id"]], result=m["content"])
            out.append(ChatMessageContent(role=AuthorRole.TOOL, items=[item]))
            continue
        role = {"system": AuthorRole.SYSTEM, "human": AuthorRole.USER, "ai": AuthorRole.ASSISTANT}[t]
        items: List[Any] = [TextContent(text=m["content"])] if m["content"] else []
        for c in m.get("tool_calls") or []:
            names[c["id"]] = c["name"]
            items.append(FunctionCallContent(id=c["id"], call_id=c["id"], function_name=c["name"],
                                             arguments=json.dumps(c["args"], ensure_ascii=False)))
        out.append(ChatMessageContent(role=role, items=items))
    return out


def sk_neutral(m: Any) -> Neutral:
    from semantic_kernel.contents import FunctionCallContent, FunctionResultContent, TextContent

    role = str(m.role.value if hasattr(m.role, "value") else m.role)
    text = "".join(i.text for i in m.items if isinstance(i, TextContent))
    calls = tuple((i.id, i.function_name, args_json(i.arguments)) for i in m.items
                  if isinstance(i, FunctionCallContent))
    results = tuple((i.id, str(i.result)) for i in m.items if isinstance(i, FunctionResultContent))
    if role == "tool":
        return role, "", (), results
    return role, text, calls, ()


def sk_fitting_count(neutrals: List[Neutral], budget: int, kind: str) -> int:
    """The caller's best effort: the largest k such that the system message and the last k
    messages fit the budget by the same counter (the reducers take a message count)."""
    sizes = COUNTERS[kind]([text_of(n) for n in neutrals])
    total = sizes[0]
    k = 0
    for s in reversed(sizes[1:]):
        if total + s > budget:
            break
        total += s
        k += 1
    return max(k, 1)


class _StubService:
    """Built lazily: a ChatCompletionClientBase whose every answer is STUB_SUMMARY."""

    cls: Any = None

    @classmethod
    def make(cls) -> Any:
        if cls.cls is None:
            from semantic_kernel.connectors.ai.chat_completion_client_base import ChatCompletionClientBase
            from semantic_kernel.contents import ChatMessageContent
            from semantic_kernel.contents.utils.author_role import AuthorRole

            class Stub(ChatCompletionClientBase):  # type: ignore[misc]
                async def _inner_get_chat_message_contents(self, chat_history: Any, settings: Any) -> Any:
                    return [ChatMessageContent(role=AuthorRole.ASSISTANT, content=STUB_SUMMARY)]

            cls.cls = Stub
        return cls.cls(ai_model_id="stub-summarizer")


def sk_reducer(summarize: bool) -> Callable[[List[Any], int, str], List[Any]]:
    def run(messages: List[Any], budget: int, kind: str) -> List[Any]:
        from semantic_kernel.contents.history_reducer.chat_history_summarization_reducer import (
            ChatHistorySummarizationReducer)
        from semantic_kernel.contents.history_reducer.chat_history_truncation_reducer import (
            ChatHistoryTruncationReducer)

        k = sk_fitting_count([sk_neutral(m) for m in messages], budget, kind)
        if summarize:
            r = ChatHistorySummarizationReducer(service=_StubService.make(), target_count=k,
                                                messages=list(messages))
        else:
            r = ChatHistoryTruncationReducer(target_count=k, messages=list(messages))
        asyncio.run(r.reduce())
        return list(r.messages)

    return run


# -- Microsoft Agent Framework ----------------------------------------------------------------

def af_messages(transcript: Dict[str, Any]) -> List[Any]:
    from agent_framework import Content, Message

    out: List[Any] = []
    for m in transcript["messages"]:
        t = m["type"]
        if t == "tool":
            contents = [Content.from_function_result(m["tool_call_id"], result=m["content"])]
            out.append(Message("tool", contents, message_id=m["id"]))
            continue
        role = {"system": "system", "human": "user", "ai": "assistant"}[t]
        contents = [Content.from_text(m["content"])] if m["content"] else []
        for c in m.get("tool_calls") or []:
            contents.append(Content.from_function_call(c["id"], c["name"], arguments=c["args"]))
        out.append(Message(role, contents, message_id=m["id"]))
    return out


def af_neutral(m: Any) -> Neutral:
    role = str(m.role)
    text = "".join(c.text or "" for c in m.contents if c.type == "text")
    calls = tuple((c.call_id, c.name, args_json(c.arguments)) for c in m.contents
                  if c.type == "function_call")
    results = tuple((c.call_id, str(c.result)) for c in m.contents if c.type == "function_result")
    if role == "tool":
        return role, "", (), results
    return role, text, calls, ()


class AfTokenizer:
    """The framework's TokenizerProtocol with a counter of the pair's kind (it is handed each
    message serialized as JSON)."""

    def __init__(self, kind: str) -> None:
        self.count = COUNTERS[kind]

    def count_tokens(self, text: str) -> int:
        return self.count([text])[0]


def af_strategy(name: str) -> Callable[[List[Any], int, str], List[Any]]:
    def run(messages: List[Any], budget: int, kind: str) -> List[Any]:
        import agent_framework as af

        tok = AfTokenizer(kind)
        if name == "truncation":
            s = af.TruncationStrategy(max_n=budget, compact_to=budget, tokenizer=tok)
        elif name == "token-budget":
            s = af.TokenBudgetComposedStrategy(
                token_budget=budget, tokenizer=tok,
                strategies=[af.ToolResultCompactionStrategy(keep_last_tool_call_groups=1)])
        else:
            s = af.ContextWindowCompactionStrategy(
                max_context_window_tokens=budget, max_output_tokens=0, tokenizer=tok)
        return list(asyncio.run(af.apply_compaction(list(messages), strategy=s, tokenizer=tok)))

    return run


# -- the catalogue ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Reducer:
    """One reducer under test."""

    key: str
    framework: str
    title: str
    invocation: str
    promise: str
    run: Callable[[List[Any], int, str], List[Any]]
    neutral: Callable[[Any], Neutral]
    message_id: Callable[[Any], Optional[str]]


def _lc_id(m: Any) -> Optional[str]:
    return getattr(m, "id", None)


def _af_id(m: Any) -> Optional[str]:
    return getattr(m, "message_id", None)


def _no_id(m: Any) -> Optional[str]:
    return None


REDUCERS: List[Reducer] = [
    Reducer("lc-default", "langchain", "LangChain `trim_messages` (defaults)",
            "trim_messages(msgs, max_tokens=B, token_counter=counter)",
            "\"reduce the size of a chat history to a specified token or message count\"; the "
            "docstring lists what a valid result needs (start on a human message, tool messages "
            "after their AIMessage, keep the SystemMessage) and which settings achieve it",
            lc_trim(), lc_neutral, _lc_id),
    Reducer("lc-recommended", "langchain", "LangChain `trim_messages` (documented settings)",
            "trim_messages(msgs, max_tokens=B, token_counter=counter, strategy=\"last\", "
            "start_on=\"human\", include_system=True, allow_partial=False)",
            "the docstring's example for a history that \"should be valid\": starts with a "
            "SystemMessage followed by a HumanMessage, keeps recent messages and the system message",
            lc_trim(strategy="last", start_on="human", include_system=True, allow_partial=False),
            lc_neutral, _lc_id),
    Reducer("lc-first", "langchain", "LangChain `trim_messages` (strategy=\"first\")",
            "trim_messages(msgs, max_tokens=B, token_counter=counter, strategy=\"first\")",
            "keeps the first messages up to `max_tokens`",
            lc_trim(strategy="first"), lc_neutral, _lc_id),
    Reducer("sk-truncation", "semantic-kernel", "Semantic Kernel `ChatHistoryTruncationReducer`",
            "ChatHistoryTruncationReducer(target_count=k, messages=msgs).reduce(), k = the most "
            "recent messages that fit B with the system message (computed by the caller)",
            "\"target_count: the target message count; threshold_count: the threshold count to "
            "avoid orphaning messages\"; the first system message is preserved",
            sk_reducer(summarize=False), sk_neutral, _no_id),
    Reducer("sk-summarization", "semantic-kernel",
            "Semantic Kernel `ChatHistorySummarizationReducer` (stub summarizer)",
            "ChatHistorySummarizationReducer(service=stub, target_count=k, messages=msgs).reduce()",
            "summarizes older messages past `target_count`, never splitting function call/result "
            "pairs; the first system message is preserved",
            sk_reducer(summarize=True), sk_neutral, _no_id),
    Reducer("af-truncation", "agent-framework", "Agent Framework `TruncationStrategy`",
            "apply_compaction(msgs, strategy=TruncationStrategy(max_n=B, compact_to=B, "
            "tokenizer=counter), tokenizer=counter)",
            "\"excludes whole groups (never partial tool-call groups) ... Protected groups are never "
            "excluded, so the result may remain above compact_to when those groups alone exceed it\"",
            af_strategy("truncation"), af_neutral, _af_id),
    Reducer("af-token-budget", "agent-framework",
            "Agent Framework `TokenBudgetComposedStrategy` (+ `ToolResultCompactionStrategy`)",
            "apply_compaction(msgs, strategy=TokenBudgetComposedStrategy(token_budget=B, "
            "tokenizer=counter, strategies=[ToolResultCompactionStrategy(keep_last_tool_call_groups=1)]))",
            "\"a deterministic fallback excludes oldest groups (and finally anchors when necessary) "
            "to enforce the limit ... The result may remain above the budget when that group alone "
            "exceeds it\"",
            af_strategy("token-budget"), af_neutral, _af_id),
    Reducer("af-context-window", "agent-framework", "Agent Framework `ContextWindowCompactionStrategy`",
            "apply_compaction(msgs, strategy=ContextWindowCompactionStrategy("
            "max_context_window_tokens=B, max_output_tokens=0, tokenizer=counter))",
            "tool-result eviction at 50 % and truncation at 80 % of the input budget; \"if protected "
            "groups still exceed the input budget after truncation, the strategy preserves them and "
            "emits a structured warning\"",
            af_strategy("context-window"), af_neutral, _af_id),
]

BUILDERS: Dict[str, Callable[[Dict[str, Any]], List[Any]]] = {
    "langchain": lc_messages,
    "semantic-kernel": sk_messages,
    "agent-framework": af_messages,
}


def map_back(reducer: Reducer, originals: List[Any], output: List[Any],
             neutrals: List[Neutral], ids: List[str]) -> List[Any]:
    """The output as proposal items: an original's id, or ``("new", neutral)``."""
    by_object = {id(o): i for i, o in enumerate(originals)}
    by_id = {m: i for i, m in enumerate(ids)}
    by_content: Dict[Neutral, List[int]] = {}
    for j, o in enumerate(neutrals):
        by_content.setdefault(o, []).append(j)
    used = set()
    items: List[Any] = []
    for m in output:
        n = reducer.neutral(m)
        i = by_object.get(id(m))
        if i is None:
            i = by_id.get(reducer.message_id(m) or "")
        if i is not None and i not in used and neutrals[i] == n:
            used.add(i)
            items.append(ids[i])
            continue
        # Content comparison (BRG-2): the first not-yet-matched equal original.
        match = next((j for j in by_content.get(n, []) if j not in used), None)
        if match is not None:
            used.add(match)
            items.append(ids[match])
        else:
            items.append(("new", n))
    return items
