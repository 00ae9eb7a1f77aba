"""Microsoft Agent Framework: record every model call of an agent for the checker, or compact it,
at the framework's per-call seam (chat middleware).

``pip install hybrid-compaction[agent-framework]`` (``agent-framework-core>=1.12,<2``). In a chat
client composed the framework's way (``FunctionInvocationLayer`` outside
``ChatMiddlewareLayer``), chat middleware runs once per model call of the tool loop, on the
messages the agent holds, before the client's compaction strategy
(``Agent(compaction_strategy=...)``: truncation, sliding windows, tool-result compaction,
summarization) rewrites them; the client then sends the compacted list. So:

* :class:`TraceMiddleware` (a ``ChatMiddleware``; list it first) records each call as an
  observed record (SPEC TRC-13): the history is the messages the middleware sees, with the
  agent's ``instructions`` (sent as a system message by the provider, outside the message
  list) in front; what was sent is what the client's ``_inner_get_response`` receives after
  compaction (a pass-through wrapper, installed once per client, that reports to the recorder
  of the running call only), the instructions in front. It changes nothing the agent does.
* :class:`CompactionMiddleware` (a ``ChatMiddleware``) runs :class:`hybrid_compaction.Compactor`
  on the messages of every call and hands the bounded list on (configure no compaction
  strategy beside it). A termination raises :class:`~hybrid_compaction.CompactionTerminated`.

Messages are written in LangChain's dict shapes for the library's converter: a text message as
its text, an assistant's ``function_call`` contents as tool calls, each ``function_result`` as
a tool message of its own (one framework message may carry several results; the entries get
``message_id#k``). Ids are the framework's ``message_id`` where it has one, else TRN-5's
content hash. Other content (images, reasoning, ...) is refused by the converter at its path.
"""

from __future__ import annotations

import contextvars
import itertools
import json
import threading
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Tuple, Union

from agent_framework import ChatContext, ChatMiddleware, Message

from .compact import UNBOUNDED, Compactor, TraceTarget, TraceWriter, _trace_writer

__all__ = ["TraceMiddleware", "CompactionMiddleware", "to_langchain"]

Json = Any
_Sent = List[Tuple[List[Any], Dict[str, Any]]]
_SINK: "contextvars.ContextVar[Optional[_Sent]]" = contextvars.ContextVar("hc_sent", default=None)

#: Content types that carry nothing a provider is sent as conversation content.
_METADATA = ("usage",)


def _block(c: Any) -> Dict[str, Json]:
    """A content that is neither text nor a call, as a LangChain content block carrying all of it
    (SPEC TRN-15): a URI or inline data of a media type as LangChain's standard ``image``,
    ``audio`` or ``file`` block; anything else as the content's own dict."""
    media = getattr(c, "media_type", None)
    if c.type in ("uri", "data") and isinstance(media, str):
        kind = media.split("/", 1)[0]
        block = {"image": "image", "audio": "audio"}.get(kind, "file")
        return {"type": block, "url": c.uri, "mime_type": media}
    d: Dict[str, Json] = c.to_dict()
    return d


def _role(m: Any) -> str:
    role = getattr(m.role, "value", m.role)
    return str(role)


def _arguments(c: Any) -> Any:
    args = c.arguments
    if isinstance(args, str):
        try:
            return json.loads(args) if args.strip() else {}
        except ValueError:
            return args  # not JSON: the converter refuses it by path
    return dict(args) if isinstance(args, Mapping) else (args if args is not None else {})


def _result(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value if value is not None else ""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def to_langchain(
    messages: List[Any], instructions: Optional[str] = None
) -> Tuple[List[Dict[str, Json]], List[Tuple[Optional[int], int]]]:
    """Agent Framework messages (and the agent's instructions) as LangChain message dicts for
    the library's converter, and for each dict its source: ``(message index or None for the
    instructions, part number)``."""
    out: List[Dict[str, Json]] = []
    sources: List[Tuple[Optional[int], int]] = []
    if instructions:
        out.append({"type": "system", "content": instructions, "id": "instructions"})
        sources.append((None, 0))
    kinds = {"system": "system", "user": "human", "assistant": "ai", "tool": "tool"}
    for i, m in enumerate(messages):
        role = _role(m)
        contents = [c for c in m.contents if c.type not in _METADATA]
        mid = m.message_id
        results = [c for c in contents if c.type == "function_result"]
        if results and len(results) == len(contents):
            for k, c in enumerate(results):
                d: Dict[str, Json] = {"type": "tool", "content": _result(c.result),
                                      "tool_call_id": c.call_id}
                if c.exception is not None:
                    d["status"] = "error"
                if mid:
                    d["id"] = mid if len(results) == 1 else f"{mid}#{k}"
                out.append(d)
                sources.append((i, k))
            continue
        texts = [c for c in contents if c.type == "text"]
        calls = [c for c in contents if c.type == "function_call"]
        rest = [_block(c) for c in contents if c.type not in ("text", "function_call")]
        d = {"type": kinds.get(role, role)}
        if rest:
            d["content"] = [{"type": "text", "text": c.text} for c in texts] + rest
        else:
            d["content"] = "".join(c.text or "" for c in texts)
        if calls:
            d["tool_calls"] = [{"name": c.name, "args": _arguments(c), "id": c.call_id}
                               for c in calls]
        if m.author_name and role == "user":
            d["name"] = m.author_name
        if mid:
            d["id"] = mid
        out.append(d)
        sources.append((i, 0))
    return out, sources


def _install(client: Any) -> None:
    """Wraps the client's ``_inner_get_response`` once: it reports what it is sent to the
    recorder of the running call (a context variable), and passes everything through."""
    if getattr(client, "_hc_observed", False):
        return
    inner = client._inner_get_response

    def observed(*, messages: Any, stream: bool, options: Any, **kw: Any) -> Any:
        sink = _SINK.get()
        if sink is not None:
            sink.append((list(messages), dict(options or {})))
        return inner(messages=messages, stream=stream, options=options, **kw)

    client._inner_get_response = observed
    client._hc_observed = True


def _instructions(options: Any) -> Optional[str]:
    value = (options or {}).get("instructions")
    return value if isinstance(value, str) and value else None


def _ided(
    written: List[Dict[str, Json]], sources: List[Tuple[Optional[int], int]], messages: List[Any]
) -> List[Dict[str, Json]]:
    """The history as written when the call began, with the ``message_id`` the framework gave a
    message during the call (it names new messages as it sends them): the content is the
    content the agent held, the id the one the sent message carries."""
    for d, (i, k) in zip(written, sources):
        if i is None or "id" in d or not messages[i].message_id:
            continue
        mid = messages[i].message_id
        n = sum(1 for c in messages[i].contents if c.type == "function_result")
        d["id"] = f"{mid}#{k}" if d["type"] == "tool" and n > 1 else mid
    return written


class TraceMiddleware(ChatMiddleware):
    """Records every model call of an Agent Framework agent (see the module docs).

    ``path`` is the trace file (``None``: the ``pytest --hc-trace DIR`` session's directory),
    or give ``trace`` (an open :class:`~hybrid_compaction.TraceWriter` or a file path);
    ``policy`` what every call is judged against (by default no hard
    limit to speak of, a retention of 1, UTF-8 bytes). All calls are one run (``run``) until
    :meth:`end_run`; :meth:`close` ends it and closes a trace this middleware opened.
    """

    def __init__(
        self,
        path: Optional[str] = None,
        policy: Optional[Mapping[str, Json]] = None,
        *,
        trace: TraceTarget = None,
        content: bool = False,
        run: str = "agent-framework",
    ) -> None:
        if policy is not None:
            Compactor(policy)  # refuses a policy that does not validate, by its path, now
        self.policy: Mapping[str, Json] = policy if policy is not None else UNBOUNDED
        writer, owned = _trace_writer(trace)
        self.trace = writer if writer is not None else TraceWriter(path, content=content)
        self._owned = owned or writer is None
        self._prefix = run
        self._runs = itertools.count(1)
        self.run = f"{run}-{next(self._runs)}"
        self._lock = threading.Lock()

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        _install(context.client)
        held = list(context.messages)
        history, sources = to_langchain(held, _instructions(context.options))
        sent: _Sent = []
        token = _SINK.set(sent)
        try:
            await call_next()
        except BaseException:
            self._record(_ided(history, sources, held), sent, failed=True)
            raise
        finally:
            _SINK.reset(token)
        self._record(_ided(history, sources, held), sent, failed=False)

    def _record(self, history: List[Any], sent: _Sent, failed: bool) -> None:
        with self._lock:
            run = self.run
        if not sent:
            self.trace.observe(history, None, policy=self.policy, run=run, format="langchain",
                               note="the client was not invoked")
        for k, (messages, options) in enumerate(sent):
            written, _ = to_langchain(messages, _instructions(options))
            last = k == len(sent) - 1
            self.trace.observe(history, written, policy=self.policy, run=run, format="langchain",
                               dispatch="failed" if failed and last else "answered")

    def end_run(self) -> None:
        """Ends the current run (a ``runEnd`` record); later calls are the next run."""
        with self._lock:
            self.trace.end_run(self.run)
            self.run = f"{self._prefix}-{next(self._runs)}"

    def close(self) -> None:
        """Ends the run, flushes the trace, and closes it if this middleware opened it."""
        if not self.trace.closed:
            self.end_run()
        if self._owned:
            self.trace.close()


class CompactionMiddleware(ChatMiddleware):
    """The ADR's compaction at every model call of an Agent Framework agent (see the module
    docs): ``policy`` a wire policy (validated here), ``reducer`` a callable on LangChain
    message dicts (the instructions first), never trusted; ``trace`` (a
    :class:`~hybrid_compaction.TraceWriter` or a file path) receives every call's full record.
    One run for all calls until :meth:`close`."""

    def __init__(
        self,
        policy: Mapping[str, Json],
        reducer: Optional[Callable[[List[Any]], Any]] = None,
        trace: TraceTarget = None,
        *,
        estimator: Union[None, str, Mapping[str, Json]] = None,
    ) -> None:
        self._compactor = Compactor(policy, reducer=reducer, estimator=estimator, trace=trace,
                                    format="langchain", workflow="agent-framework")

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        messages = list(context.messages)
        written, sources = to_langchain(messages, _instructions(context.options))
        result = await self._compactor.acompact(written)
        index = {id(d): s for d, s in zip(written, sources)}
        bounded: List[Any] = []
        parts: Dict[int, List[int]] = {}
        for d in result.messages:
            source = index.get(id(d))
            if source is None:  # the reducer's own message (a summary)
                bounded.append(Message(_ai_role(d), [str(d.get("content", ""))]))
                continue
            i, k = source
            if i is None:
                continue  # the instructions: sent by the provider from the options
            if i in parts:
                parts[i].append(k)
                continue
            parts[i] = [k]
            bounded.append(i)
        context.messages = [_rebuilt(messages[x], parts[x]) if isinstance(x, int) else x
                            for x in bounded]
        await call_next()

    def close(self) -> None:
        """Ends the run in the trace (and closes a trace file it opened)."""
        self._compactor.close()


def _ai_role(d: Mapping[str, Any]) -> str:
    return {"human": "user", "ai": "assistant", "system": "system"}.get(str(d.get("type")), "user")


def _rebuilt(m: Any, kept: List[int]) -> Any:
    """``m`` itself, or (when only some of its tool results were kept) a tool message of
    those."""
    results = [c for c in m.contents if c.type == "function_result"]
    if not results or len(kept) == len(results):
        return m
    return Message("tool", [results[k] for k in kept])

