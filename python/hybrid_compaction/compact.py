"""Compacting a Python agent's history with its own reducer: ``compact``, ``Compactor``,
``TraceWriter``.

:func:`compact` runs the library's per-provider-call path (``hybrid_compaction::node``, SPEC
NODE-2 .. NODE-5) on the caller's messages, with the caller's callable as the untrusted upstream
reducer (SPEC BRG-1): capture of the history, eviction, at most ``maximumCompactionAttempts``
reducer calls, each proposal verified independently (VER-1), the preservation-only fallback
(ASM-9), and a termination raised, never forwarded (NODE-4). The answer is a
:class:`Compaction` whose ``messages`` are in the caller's format and types: the caller's own
objects where a message was kept, the reducer's own objects where it added one (a summary).

A :class:`Compactor` keeps what a long-lived agent needs across calls: every message's
conversion, reused while the message is provably unchanged (``docs/PYTHON.md``, "Repeat
calls"), the estimate memo (SPEC EST-7; a repeat call on history + k messages converts and
estimates the k new ones) and one run scope (SPEC LSE-6), so its calls are the calls of one run
in a trace. ``acompact`` awaits an ``async``
reducer: the node runs in a worker thread with the GIL released, and each reducer call is
scheduled on the caller's event loop.

:class:`TraceWriter` writes every call as a full record of ``docs/TRACE.md`` with the oracle's
own trace writer, so ``hybrid-compaction check`` (or :func:`hybrid_compaction.check`) judges it.
"""

from __future__ import annotations

import abc
import asyncio
import importlib
import inspect
import json
import os
import sys
import threading
from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union, cast

from . import _native
from ._core import (
    TraceWriteError,
    _overrides_member,
    _require_list,
    _require_policy,
    estimator_object,
)
from ._types import Assembly, Diagnostics, Event, Outcome
from .convert import (
    _LANGCHAIN_FIELDS,
    SYSTEM_FORMATS,
    _format,
    _langchain_json,
    serialize,
    transcript,
)

__all__ = ["Compaction", "Compactor", "TraceWriter", "compact", "Reducer", "TraceTarget"]

Json = Any
#: A reducer: messages in the caller's format in, messages in that format out (or ``None``,
#: which the SPEC calls a contract error, BRG-1). Never trusted: every answer is verified.
Reducer = Callable[[List[Any]], Any]


class Compaction:
    """The result of one compaction (a success: ``WithinLimit``, ``Reduced`` or
    ``PreservationFallback``).

    ``messages`` is what to send, in the format and types the history was given in;
    ``system`` is the top-level system prompt, Anthropic's ``system`` or the Responses
    ``instructions``, as given (``None`` for the other formats);
    ``outcome`` the assembly outcome; ``diagnostics`` the privacy-safe record (SPEC DIA-1, the
    wire's diagnostics dict); ``events`` the progress events (``Started``, ``Completed``,
    ``Composed``, SPEC EVT-2); ``assembly`` the assembler's result (stages, sizes, attempts).
    """

    def __init__(
        self,
        messages: List[Any],
        system: Any,
        payload: Mapping[str, Json],
        format: str,
    ) -> None:
        self.messages = messages
        self.system = system
        self.format = format
        self.assembly = cast(Assembly, payload["assembly"])
        self.outcome: Outcome = self.assembly["outcome"]
        self.diagnostics = cast(Diagnostics, payload["diagnostics"])
        self.events = cast(List[Event], payload["events"])

    def __repr__(self) -> str:
        return (
            f"Compaction(outcome={self.outcome!r}, messages={len(self.messages)}, "
            f"size={self.assembly['finalEstimatedSize']}/{self.assembly['hardLimit']})"
        )


class TraceWriter:
    """Writes a trace (``docs/TRACE.md``, version 3) that ``hybrid-compaction check`` judges:
    the calls of :func:`compact` and :class:`Compactor` as full call records, and with
    :meth:`observe` the provider calls of any system (a framework's own compaction, or none) as
    observed records (SPEC TRC-13), both in the compact profile (an entry is defined once per
    run, referred to by index afterwards).

    ``path_or_stream`` is a file path (written, UTF-8), a text stream (``write`` is enough), or
    ``None``: a file of its own in the trace directory of a ``pytest --hc-trace DIR`` session
    (refused outside one). By default entries are redacted (sizes, digests and structure, no
    content); ``content=True`` writes the messages too. Every line is written whole and flushed;
    a writer that cannot write raises :class:`TraceWriteError` (naming the file and why), also
    once it is closed. Use it as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        path_or_stream: Union[None, str, "os.PathLike[str]", IO[str]] = None,
        *,
        content: bool = False,
        producer: str = "hybrid-compaction (python)",
    ) -> None:
        from . import _tracedir

        self.path: Optional[str] = None
        session = path_or_stream is None
        if path_or_stream is None:
            path_or_stream = _tracedir.new_path()
            if path_or_stream is None:
                raise TraceWriteError(
                    "hc-trace",
                    "no path or stream was given, and no pytest session with --hc-trace DIR "
                    f"(or ${_tracedir.ENV}) names a trace directory",
                )
        if isinstance(path_or_stream, (str, os.PathLike)):
            self.path = os.fspath(path_or_stream)
            try:
                self._stream: IO[str] = open(self.path, "w", encoding="utf-8")
            except OSError as e:
                raise TraceWriteError(self.path, e.strerror or str(e)) from e
            self._owned = True
        elif hasattr(path_or_stream, "write"):
            self._stream = path_or_stream
            self._owned = False
        else:
            raise TypeError(
                f"path_or_stream must be a path or a text stream, got {type(path_or_stream).__name__}"
            )
        self._native = _native.TraceRecorder(content)
        self._lock = threading.Lock()
        self._closed = False
        self._calls: Dict[str, int] = {}
        self._write(_native.TraceRecorder.header_line(producer))
        if session:  # the session closes it before it checks the directory
            _tracedir.register(self)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def _where(self) -> str:
        return self.path if self.path is not None else "<stream>"

    def _emit(self, line: str) -> None:
        """Writes one whole line and flushes (the caller holds the lock)."""
        if self._closed:
            raise TraceWriteError(self._where(), "the trace writer is closed")
        try:
            self._stream.write(line + "\n")
            self._stream.flush()
        except (OSError, ValueError) as e:
            raise TraceWriteError(self._where(), str(e)) from e

    def _write(self, line: str) -> None:
        with self._lock:
            self._emit(line)

    def _record(self, session: Any) -> None:
        """Writes the session's last call (the recorder names runs and calls in line order)."""
        with self._lock:
            if self._closed:
                raise TraceWriteError(self._where(), "the trace writer is closed")
            line = session.take_record(self._native)
            if line is not None:
                self._emit(line)

    def observe(
        self,
        history: Sequence[Any],
        sent: Optional[Sequence[Any]],
        *,
        policy: Optional[Mapping[str, Json]] = None,
        run: str = "observed-1",
        call: Optional[str] = None,
        format: Optional[str] = None,
        dispatch: Optional[str] = None,
        note: Optional[str] = None,
        system: Any = None,
        sent_system: Any = None,
        ids: Optional[Sequence[str]] = None,
        sent_ids: Optional[Sequence[str]] = None,
    ) -> str:
        """Records one provider call of any system as an observed record (SPEC TRC-13) and
        returns its call id.

        ``history`` is everything the system held for the call, before any compaction, **its
        system prompt first** (a framework that keeps the prompt outside its message list
        passes it in front); ``sent`` what the provider received, the prompt included (``None``:
        nothing was sent). Messages are in any format :func:`compact` takes (detected from the
        history unless ``format``); entry ids are TRN-5's: a LangChain message's own ``id`` (a
        message changed in place keeps it, with its new content; a message the framework made
        has its own), else the content hash of CLS-2. ``policy`` (:func:`hybrid_compaction.
        policy`) is what the call is judged against: its hard limit, retention and estimator,
        which measures every entry (by default no hard limit to speak of, a retention of 1,
        UTF-8 bytes). ``run`` names the run (an agent invocation); ``call`` the call (by default
        ``model-<n>``, counted per run); ``dispatch`` ``"answered"`` (the default when ``sent``),
        ``"failed"`` or ``"refused"``. A message the converters cannot map raises
        :class:`TranscriptError` with its path (``history.messages[3].content[1]``); nothing is
        written then. ``system`` is the top-level system prompt of a format that has one
        (Anthropic's ``system``, the Responses ``instructions``, Gemini's system instruction),
        in front of the history; ``sent_system`` the one sent (by default ``system``). ``ids`` and
        ``sent_ids`` give the entry ids (one per message, a system first; TRN-5) where the
        content hash cannot tell identical messages apart.
        """
        _require_list(history, "history")
        if sent is not None:
            _require_list(sent, "sent")
        chosen = policy if policy is not None else UNBOUNDED
        _require_policy(chosen)
        objects = list(history)
        fmt = _format(format) if format is not None else _detect(objects)
        h = transcript(objects, fmt, system=system, ids=ids)
        if sent_system is None:
            sent_system = system
        s = (transcript(list(sent), fmt, system=sent_system, ids=sent_ids)
             if sent is not None else None)
        with self._lock:
            if call is None:
                n = self._calls.get(run, 0) + 1
                self._calls[run] = n
                call = f"model-{n}"
            # TranscriptError, InvalidCaseError (the policy) or SpecError are raised natively.
            self._emit(self._native.observed(run, call, dict(chosen), h, s, dispatch, note))
            return call

    def end_run(self, run: str = "observed-1") -> None:
        """Ends the observed run ``run`` (a ``runEnd`` record): the checker forgets its state,
        and this writer its entry table."""
        with self._lock:
            self._emit(self._native.end_observed_run(run))
            self._calls.pop(run, None)

    def flush(self) -> None:
        """Flushes the stream."""
        if not self._closed:
            self._stream.flush()

    def close(self) -> None:
        """Flushes, and closes a file this writer opened; later writes raise
        :class:`TraceWriteError`. Closing twice is harmless."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._stream.flush()
            finally:
                if self._owned:
                    self._stream.close()

    def __enter__(self) -> "TraceWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"TraceWriter({self._where()!r}, {state})"


#: What every ``trace=`` parameter takes: an open :class:`TraceWriter`, or the path of a trace
#: file to write (a :class:`TraceWriter` opened on it at construction), or ``None`` (no trace).
TraceTarget = Union[None, TraceWriter, str, "os.PathLike[str]"]


def _trace_writer(trace: object, parameter: str = "trace") -> Tuple[Optional[TraceWriter], bool]:
    """The one rule of every ``trace=`` parameter (the core API and every integration): a
    :class:`TraceWriter` as given, a path (``str`` or ``os.PathLike``) opened as one (returned
    with ``True``: the caller owns it and closes it), ``None`` as is; anything else is a
    ``TypeError`` naming ``parameter``, raised where the object is constructed."""
    if trace is None or isinstance(trace, TraceWriter):
        return trace, False
    if isinstance(trace, (str, os.PathLike)):
        return TraceWriter(trace), True
    raise TypeError(
        f"{parameter} must be a hybrid_compaction.TraceWriter or the path of a trace file "
        f"(str or os.PathLike), got {type(trace).__name__}"
    )


#: The policy an observed call is judged against when none is given: structure only (no hard
#: limit to speak of; the last recency unit required; UTF-8 bytes).
UNBOUNDED: Dict[str, Json] = {
    "hardLimit": 2**31 - 1,
    "triggerMargin": 1,
    "recentMessageRetentionCount": 1,
    "maximumCompactionAttempts": 1,
    "preservationLabel": "observed",
    "preservationVersion": 1,
    "estimator": {"kind": "utf8"},
}


#: What the LangChain writer reads of a message object (``_langchain_json``): its ``type``, then
#: its fields; a repeat call compares these attributes' objects to prove a message unchanged.
_WRITER_READS = ("type",) + _LANGCHAIN_FIELDS


def _pydantic_getattr() -> Any:
    """pydantic v2's ``BaseModel.__getattr__`` when pydantic is loaded (what a LangChain message's
    missing attribute runs; the native reader answers it from the instance without calling it),
    else ``None``."""
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not str(getattr(pydantic, "VERSION", "")).startswith("2."):
        return None
    return getattr(pydantic, "BaseModel").__dict__.get("__getattr__")


#: The ``type`` of a Responses item that is not a call or an output (TRN-17); every type ending in
#: ``_call`` or ``_output`` is one too. A dict of any other ``type`` is read as LangChain's.
_RESPONSES_ITEMS = frozenset(
    ["message", "reasoning", "compaction", "item_reference", "mcp_list_tools",
     "mcp_approval_request", "mcp_approval_response"]
)

#: Content part types only the Responses API uses.
_RESPONSES_PARTS = frozenset(["input_text", "output_text", "input_image", "input_file"])


def _detect(messages: Sequence[Any], system: Any = None) -> str:
    """The format of ``messages``: ``openai-responses`` when a dict is a Responses item (a
    Responses item ``type``, a ``call_id``, or ``input_text`` / ``output_text`` /
    ``input_image`` / ``input_file`` content); ``langchain`` for message objects, strings,
    tuples and dicts of any other ``type``; else ``anthropic-messages`` when a ``system`` is
    given apart, and OpenAI chat."""
    for m in messages:
        if not isinstance(m, Mapping):
            return "langchain"
        kind = m.get("type")
        if (
            kind in _RESPONSES_ITEMS
            or (isinstance(kind, str) and kind.endswith(("_call", "_output")))
            or "call_id" in m
            or _responses_content(m.get("content"))
        ):
            return "openai-responses"
        if "type" in m and "role" not in m:
            return "langchain"
    return "anthropic-messages" if system is not None else "openai-chat"


def _responses_content(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(p, Mapping) and p.get("type") in _RESPONSES_PARTS for p in content
    )


def _serialize_answer(answer: Any, format: str) -> Any:
    """The reducer's answer as ``(objects, converter JSON)`` (called from the native reducer)."""
    if isinstance(answer, (str, bytes, Mapping)) or not hasattr(answer, "__iter__"):
        raise TypeError(f"the reducer must return a list of messages, got {type(answer).__name__}")
    return serialize(answer, format)


def _materialize(rendered: Json, like: Sequence[Any], format: str) -> Any:
    """A message the library rendered (SPEC TRN-6) in the caller's types: a LangChain message
    object when the history held objects (and ``langchain_core`` is installed), else the dict."""
    if format == "langchain" and any(not isinstance(m, Mapping) for m in like):
        try:  # langchain_core is optional: imported by name, only here
            messages = importlib.import_module("langchain_core.messages")
        except ImportError:  # pragma: no cover - only without langchain_core
            return rendered
        return messages.convert_to_messages([rendered])[0]
    return rendered


class Compactor:
    """Compaction across the calls of one agent run (see the module docs).

    ``policy`` is a wire policy (:func:`hybrid_compaction.policy`); ``estimator`` replaces its
    estimator (a name as the CLI spells it, ``"tokens:o200k_base"``, or an object); ``reducer``
    is the agent's reducer (absent: none, so a history over the trigger goes to the
    preservation-only fallback); ``trace`` a :class:`TraceWriter` or the path of a trace file
    (opened here, closed by :meth:`close`; anything else is a ``TypeError``); ``format`` the
    messages' format (``"openai-chat"``, ``"anthropic-messages"``, ``"langchain"``,
    ``"openai-responses"``, ``"pydantic-ai"``, ``"gemini"``, ``"ai-sdk"``; by default detected: Responses
    items (their ``type``s, ``call_id``, ``input_text`` content) are Responses, LangChain objects, strings, tuples and other ``type``
    dicts LangChain, role dicts Anthropic when a ``system`` is given apart, else OpenAI chat).
    Calls of one compactor are serialized (the run's gate, SPEC NODE-2).
    """

    def __init__(
        self,
        policy: Mapping[str, Json],
        *,
        reducer: Optional[Reducer] = None,
        estimator: Union[None, str, Mapping[str, Json]] = None,
        trace: TraceTarget = None,
        format: Optional[str] = None,
        workflow: str = "hybrid-compaction",
        _persistent: bool = True,
        _reuse: bool = True,
    ) -> None:
        _require_policy(policy)
        if reducer is not None and not callable(reducer):
            raise TypeError(f"reducer must be callable, got {type(reducer).__name__}")
        p = dict(policy)
        if estimator is not None:
            p["estimator"] = estimator_object(estimator)
        # InvalidCaseError (path ``policy...``) or SpecError (POL-2) are raised natively.
        self._session = _native.new_session(p, _persistent, workflow)
        self._reducer = reducer
        self._format = _format(format) if format is not None else None
        # Last: a file is opened only for a compactor that is otherwise valid.
        self._trace, self._owns_trace = _trace_writer(trace)
        self._reuse = _reuse
        self._lock = threading.Lock()

    @property
    def memo_stats(self) -> Dict[str, int]:
        """The estimate memo's counters (SPEC EST-7): ``hits``, ``misses``, ``cached``."""
        hits, misses, cached = self._session.memo_stats()
        return {"hits": hits, "misses": misses, "cached": cached}

    def compact(
        self,
        messages: Sequence[Any],
        *,
        system: Any = None,
        overrides: Optional[Mapping[int, str]] = None,
    ) -> Compaction:
        """Compacts ``messages`` (SPEC NODE-2 .. NODE-5) and returns the :class:`Compaction`.

        ``overrides`` maps a message index to an entry kind (CLS-1 step 3), e.g.
        ``{3: "AuthoritativeSessionState"}`` for a message that must always be kept.

        Raises :class:`CompactionTerminated` when nothing may be sent (``Irreducible``,
        ``ConcurrentMutationLimit``), :class:`SpecError` with kind ``ReducerFailed`` when the
        reducer raised (the exception is its ``__cause__``) or answered something that is not
        messages, ``ReducerContract`` when it answered ``None`` or invented tool content (BRG-1,
        BRG-3), and :class:`TranscriptError` (``.path``) for a message the converters refuse.
        """
        return self._compact(messages, system, overrides, self._reducer)

    async def acompact(
        self,
        messages: Sequence[Any],
        *,
        system: Any = None,
        overrides: Optional[Mapping[int, str]] = None,
    ) -> Compaction:
        """:meth:`compact` for an ``async`` reducer (a plain one works too): the node runs in a
        worker thread, the reducer's coroutines on this event loop."""
        loop = asyncio.get_running_loop()
        reducer = self._reducer

        def bridge(ms: List[Any]) -> Any:
            answer = reducer(ms) if reducer is not None else ms
            if inspect.isawaitable(answer):
                return asyncio.run_coroutine_threadsafe(_awaited(answer), loop).result()
            return answer

        chosen: Optional[Reducer] = bridge if reducer is not None else None
        return await loop.run_in_executor(None, self._compact, messages, system, overrides, chosen)

    def close(self) -> None:
        """Ends the run in the trace (a ``runEnd`` record, SPEC TRC) if one is being written,
        and closes a trace file this compactor opened (``trace=`` a path)."""
        if self._trace is not None and not self._trace.closed:
            with self._lock, self._trace._lock:
                line = self._session.end_run(self._trace._native)
                if line is not None:
                    self._trace._emit(line)
            if self._owns_trace:
                self._trace.close()

    def __enter__(self) -> "Compactor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _compact(
        self,
        messages: Sequence[Any],
        system: Any,
        overrides: Optional[Mapping[int, str]],
        reducer: Optional[Reducer],
    ) -> Compaction:
        _require_list(messages, "messages")
        objects = list(messages)
        format = self._format or _detect(objects, system)
        with self._lock:
            answer = None
            # Whether the native session answered (the node ran, or the transcript was refused):
            # its call is then recorded, whether it returned or raised. The native session raises
            # CompactionTerminated, TranscriptError and SpecError (the reducer's exception, or
            # its answer's TranscriptError, as the cause) itself.
            answered = False
            try:
                if self._reuse and (system is None or format in SYSTEM_FORMATS):
                    # Only the messages not provably unchanged since the last call are converted
                    # (docs/PYTHON.md, "Repeat calls"); a refusal is raised by the whole
                    # conversion.
                    member = _overrides_member(overrides)
                    answered = True
                    answer = self._session.compact_objects(
                        format,
                        objects,
                        system,
                        member,
                        _langchain_json,
                        _WRITER_READS,
                        _pydantic_getattr(),
                        cast(int, abc.get_cache_token()),
                        reducer,
                        _serialize_answer,
                    )
                    answered = answer is not None
                if answer is None:
                    t = transcript(objects, format, system=system, overrides=overrides)
                    answered = True
                    answer = self._session.compact(t, objects, reducer, _serialize_answer)
            finally:
                if answered and self._trace is not None:
                    self._trace._record(self._session)
        text, returned = answer
        payload: Dict[str, Json] = json.loads(text)
        return self._compaction(payload, objects, returned, system, format)

    def _compaction(
        self,
        payload: Mapping[str, Json],
        objects: List[Any],
        returned: List[List[Any]],
        system: Any,
        format: str,
    ) -> Compaction:
        offset = 1 if system is not None else 0
        kept_system = None
        out: List[Any] = []
        for source in payload["final"]:
            if source[0] == "o":  # a run of the caller's own messages: position, count
                i, k = source[1], source[2]
                if i < offset:  # the top-level system, then the objects
                    kept_system = system
                    i, k = i + 1, k - 1
                out.extend(objects[i - offset : i - offset + k])
            elif source[0] == "r":  # objects a reducer returned: attempt, index, count
                a, i, k = source[1], source[2], source[3]
                out.extend(returned[a][i : i + k])
            else:
                out.append(_materialize(source[1], objects, format))
        return Compaction(out, kept_system, payload, format)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def compact(
    messages: Sequence[Any],
    policy: Mapping[str, Json],
    *,
    reducer: Optional[Reducer] = None,
    estimator: Union[None, str, Mapping[str, Json]] = None,
    trace: TraceTarget = None,
    format: Optional[str] = None,
    system: Any = None,
    overrides: Optional[Mapping[int, str]] = None,
) -> Compaction:
    """Compacts one provider call's ``messages`` against ``policy`` with ``reducer``: the
    library's per-call path (see the module docs and :meth:`Compactor.compact`). ``system`` is
    the top-level system prompt, Anthropic's ``system`` or the Responses ``instructions`` (the
    format is then ``anthropic-messages`` unless the messages are Responses items); the reducer
    is given the messages without it, and the system is kept (it is required content, PRE-1).
    ``trace`` is a :class:`TraceWriter` or the path of a trace file, written with this one call
    and closed."""
    compactor = Compactor(
        policy,
        reducer=reducer,
        estimator=estimator,
        trace=trace,
        format=format,
        _persistent=False,
        _reuse=False,
    )
    try:
        return compactor.compact(messages, system=system, overrides=overrides)
    finally:
        if compactor._owns_trace and compactor._trace is not None:
            compactor._trace.close()
