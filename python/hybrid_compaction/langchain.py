"""LangChain agents: record every model call of ``create_agent`` for the checker, or compact it.

``pip install hybrid-compaction[langchain]`` (``langchain``, ``langchain-core`` and ``langgraph``
1.x, from the oldest releases this package is tested with). Two middleware for
``langchain.agents.create_agent``:

* :class:`TraceMiddleware` records every model call as an observed record (SPEC TRC-13):
  **listed first**, so its ``before_model`` hook runs before any other middleware's (LangChain
  runs ``before_model`` hooks in list order) and sees the agent state's messages as they are,
  before a summarizer or a trimming hook rewrites them; that, with the agent's system prompt in
  front (``request.system_message`` at the outermost ``wrap_model_call``, where no other
  middleware has changed it), is the call's history. What the model receives is recorded by the
  model itself: the recorder hands the inner middleware a shallow copy of the chat model with
  one more callback handler, whose ``on_chat_model_start`` gets the exact message list the
  model is invoked with, after every other middleware, the system message included. It
  changes nothing the agent does.
* :class:`CompactionMiddleware` runs :func:`hybrid_compaction.compact` (through one
  :class:`~hybrid_compaction.Compactor` per agent run: the memo and one run scope) on the exact
  request at every model call: the system message and the messages, with an optional reducer
  as the untrusted proposer. **Listed last**, it is the innermost ``wrap_model_call`` and sees
  the request as every other middleware left it. A termination raises
  :class:`~hybrid_compaction.CompactionTerminated`; nothing over budget is ever sent.

Runs are agent invocations: ``before_agent`` opens one (``agent-1``, ``agent-2``, ...),
``after_agent`` ends it (``runEnd``). Model calls are paired with their run by the graph's
thread (``configurable.thread_id``) and namespace; concurrent invocations of one agent need
distinct thread ids. :func:`pre_model_hook` is the same compaction for LangGraph's prebuilt
``create_react_agent``.
"""

from __future__ import annotations

import threading
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Tuple, Union

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.messages import BaseMessage, SystemMessage

from .compact import UNBOUNDED, Compactor, Reducer, TraceTarget, TraceWriter, _trace_writer

__all__ = ["TraceMiddleware", "CompactionMiddleware", "pre_model_hook"]

Json = Any
#: What pairs a model call with its agent run: the graph's thread id and namespace.
_Key = Tuple[Any, Any]


def _key() -> _Key:
    """The running agent's ``(thread_id, namespace)``: a node's ``checkpoint_ns`` is its
    graph's namespace plus ``node:task`` (``parent|node:task`` in a subgraph), so the graph's
    own is what comes before the last ``|``. ``(None, "")`` outside a graph."""
    try:
        from langgraph.config import get_config

        configurable = get_config().get("configurable", {})
    except Exception:  # outside a runnable context: one anonymous run
        return (None, "")
    ns = str(configurable.get("checkpoint_ns") or "")
    return (configurable.get("thread_id"), ns.rsplit("|", 1)[0] if "|" in ns else "")


class _Sent(BaseCallbackHandler):
    """Collects what the chat model is invoked with (``on_chat_model_start``) and how each
    invocation ended, in order."""

    run_inline = True  # an async agent calls it in the model's own task, in order

    def __init__(self) -> None:
        self.calls: List[List[Any]] = []
        self.ended: Dict[Any, str] = {}
        self.order: List[Any] = []

    def on_chat_model_start(
        self, serialized: Dict[str, Any], messages: List[List[BaseMessage]], *, run_id: Any, **kw: Any
    ) -> None:
        for batch in messages:
            self.calls.append(list(batch))
            self.order.append(run_id)

    def on_llm_end(self, response: Any, *, run_id: Any, **kw: Any) -> None:
        self.ended[run_id] = "answered"

    def on_llm_error(self, error: BaseException, *, run_id: Any, **kw: Any) -> None:
        self.ended[run_id] = "failed"

    def dispatches(self) -> List[Tuple[List[Any], str]]:
        return [(m, self.ended.get(r, "failed")) for m, r in zip(self.calls, self.order)]


def _with_callback(model: Any, handler: BaseCallbackHandler) -> Optional[Any]:
    """A shallow copy of the chat model with ``handler`` among its callbacks, or ``None`` for a
    model that has no callbacks of its own to extend."""
    if not hasattr(model, "model_copy") or not hasattr(model, "callbacks"):
        return None
    existing = model.callbacks
    if existing is None:
        callbacks: Any = [handler]
    elif isinstance(existing, BaseCallbackManager):
        callbacks = existing.copy()
        callbacks.add_handler(handler, inherit=False)
    else:
        callbacks = [*existing, handler]
    return model.model_copy(update={"callbacks": callbacks})


def _system_first(request: ModelRequest) -> List[Any]:
    system = request.system_message
    return ([system] if system is not None else []) + list(request.messages)


class _Runs:
    """Per agent run state, keyed by the graph's thread (see the module docs)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self.names: Dict[_Key, str] = {}

    def open(self, key: _Key, prefix: str) -> str:
        with self._lock:
            self._count += 1
            name = f"{prefix}-{self._count}"
            self.names[key] = name
            return name

    def name(self, key: _Key, prefix: str) -> str:
        with self._lock:
            found = self.names.get(key)
        return found if found is not None else self.open(key, prefix)

    def close(self, key: _Key) -> Optional[str]:
        with self._lock:
            return self.names.pop(key, None)


class TraceMiddleware(AgentMiddleware):
    """Records every model call of a ``create_agent`` agent (see the module docs); list it
    **first** in ``middleware=[...]``.

    ``path`` is the trace file (``None``: a file in the ``pytest --hc-trace DIR`` session's
    directory), or give ``trace``: an open :class:`~hybrid_compaction.TraceWriter` (e.g. the
    one a :class:`CompactionMiddleware` writes its call records into) or a file path. ``policy``
    (:func:`hybrid_compaction.policy`) is what every call is judged against: hard limit,
    retention and estimator (by default no hard limit to speak of, a retention of 1, UTF-8
    bytes). ``content=True`` writes message content (redacted by default). :meth:`close`
    flushes and closes a trace it opened.
    """

    def __init__(
        self,
        path: Optional[str] = None,
        policy: Optional[Mapping[str, Json]] = None,
        *,
        trace: TraceTarget = None,
        content: bool = False,
        run_prefix: str = "agent",
    ) -> None:
        super().__init__()
        if policy is not None:
            Compactor(policy)  # refuses a policy that does not validate, by its path, now
        self.policy: Mapping[str, Json] = policy if policy is not None else UNBOUNDED
        writer, owned = _trace_writer(trace)
        self.trace = writer if writer is not None else TraceWriter(path, content=content)
        self._owned = owned or writer is None
        self._prefix = run_prefix
        self._runs = _Runs()
        self._history: Dict[_Key, List[Any]] = {}
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "hybrid_compaction.TraceMiddleware"

    def before_agent(self, state: Any, runtime: Any) -> None:
        self._runs.open(_key(), self._prefix)
        return None

    def after_agent(self, state: Any, runtime: Any) -> None:
        run = self._runs.close(_key())
        if run is not None:
            self.trace.end_run(run)
        return None

    def before_model(self, state: Any, runtime: Any) -> None:
        with self._lock:
            self._history[_key()] = list(state["messages"])
        return None

    def _prepare(self, request: ModelRequest) -> Tuple[List[Any], _Sent, ModelRequest, _Key]:
        key = _key()
        with self._lock:
            held = self._history.pop(key, None)
        messages = held if held is not None else list(request.state.get("messages", request.messages))
        system = request.system_message
        history = ([system] if system is not None else []) + messages
        sent = _Sent()
        model = _with_callback(request.model, sent)
        inner = request.override(model=model) if model is not None else request
        return history, sent, inner, key

    def _record(self, key: _Key, history: List[Any], sent: _Sent, raised: bool) -> None:
        run = self._runs.name(key, self._prefix)
        seen = sent.dispatches()
        if not seen:
            note = "the model call failed before the model was invoked" if raised else (
                "the model was not invoked (a middleware answered, or replaced the model)")
            self.trace.observe(history, None, policy=self.policy, run=run, format="langchain",
                               note=note)
        for messages, dispatch in seen:
            self.trace.observe(history, messages, policy=self.policy, run=run,
                               format="langchain", dispatch=dispatch)

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        history, sent, inner, key = self._prepare(request)
        try:
            response = handler(inner)
        except BaseException:
            self._record(key, history, sent, True)
            raise
        self._record(key, history, sent, False)
        return response

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        history, sent, inner, key = self._prepare(request)
        try:
            response = await handler(inner)
        except BaseException:
            self._record(key, history, sent, True)
            raise
        self._record(key, history, sent, False)
        return response

    def close(self) -> None:
        """Flushes the trace, and closes it if this middleware opened it."""
        if self._owned:
            self.trace.close()
        else:
            self.trace.flush()


class CompactionMiddleware(AgentMiddleware):
    """The ADR's compaction at every model call of a ``create_agent`` agent (see the module
    docs); list it **last** in ``middleware=[...]``.

    ``policy`` is a wire policy (:func:`hybrid_compaction.policy`, validated here);
    ``reducer`` your reducer, a callable from LangChain messages (the system message first) to
    LangChain messages, never trusted (absent: none, so a history over the trigger falls back
    to the required messages); ``trace`` a :class:`~hybrid_compaction.TraceWriter` or a file
    path (opened here; :meth:`close` closes it) receiving every call's full record (they check
    clean); ``estimator`` replaces the policy's. Raises
    :class:`~hybrid_compaction.CompactionTerminated` when nothing may be sent.
    """

    def __init__(
        self,
        policy: Mapping[str, Json],
        reducer: Optional[Reducer] = None,
        trace: TraceTarget = None,
        *,
        estimator: Union[None, str, Mapping[str, Json]] = None,
    ) -> None:
        super().__init__()
        Compactor(policy, reducer=reducer, estimator=estimator)  # refuses a bad policy now
        self._trace, self._owned = _trace_writer(trace)
        self._policy, self._reducer, self._estimator = policy, reducer, estimator
        self._compactors: Dict[_Key, Compactor] = {}
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "hybrid_compaction.CompactionMiddleware"

    def _make(self) -> Compactor:
        return Compactor(self._policy, reducer=self._reducer, estimator=self._estimator,
                         trace=self._trace, format="langchain", workflow="langchain-agent")

    def before_agent(self, state: Any, runtime: Any) -> None:
        with self._lock:
            self._compactors[_key()] = self._make()
        return None

    def after_agent(self, state: Any, runtime: Any) -> None:
        with self._lock:
            compactor = self._compactors.pop(_key(), None)
        if compactor is not None:
            compactor.close()
        return None

    def _compactor(self) -> Compactor:
        key = _key()
        with self._lock:
            found = self._compactors.get(key)
            if found is None:
                found = self._compactors[key] = self._make()
            return found

    @staticmethod
    def _bounded(request: ModelRequest, messages: List[Any]) -> ModelRequest:
        system = request.system_message
        if system is not None and messages and messages[0] is system:
            return request.override(messages=messages[1:])
        if messages and isinstance(messages[0], SystemMessage) and system is not None:
            return request.override(system_message=messages[0], messages=messages[1:])
        return request.override(messages=messages)

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        result = self._compactor().compact(_system_first(request))
        return handler(self._bounded(request, result.messages))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        result = await self._compactor().acompact(_system_first(request))
        return await handler(self._bounded(request, result.messages))

    def close(self) -> None:
        """Closes the trace file this middleware opened (``trace=`` a path)."""
        if self._owned and self._trace is not None:
            self._trace.close()


def pre_model_hook(
    policy: Mapping[str, Json],
    reducer: Optional[Reducer] = None,
    trace: TraceTarget = None,
    *,
    system_prompt: Optional[str] = None,
) -> Callable[[Mapping[str, Any]], Dict[str, Any]]:
    """The same compaction as LangGraph's prebuilt ``create_react_agent(pre_model_hook=...)``:
    a node that compacts the state's messages (with ``system_prompt``, the agent's ``prompt``,
    measured in front: give it, or its size is not counted) and answers them as
    ``llm_input_messages`` (the state keeps its full history). One run for all calls."""
    compactor = Compactor(policy, reducer=reducer, trace=trace, format="langchain",
                          workflow="langgraph-agent")
    system = [SystemMessage(system_prompt)] if system_prompt is not None else []

    def hook(state: Mapping[str, Any]) -> Dict[str, Any]:
        result = compactor.compact(system + list(state["messages"]))
        return {"llm_input_messages": result.messages[len(system):]}

    return hook
