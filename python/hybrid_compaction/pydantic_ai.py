"""pydantic-ai agents: compact every model request's history, or record every model call for
the checker, as history processors.

``pip install hybrid-compaction[pydantic-ai]`` (``pydantic-ai-slim`` 2.x, from 2.68). pydantic-ai
runs an agent's history processors, in order, before every model request; each gets the
message list (``ModelRequest`` / ``ModelResponse`` objects) and returns the list to send, which
also becomes the run's history. So:

* :class:`CompactionProcessor` runs :class:`hybrid_compaction.Compactor` on the messages of
  every request (``Agent(capabilities=[ProcessHistory(CompactionProcessor(policy))])``, or the
  processor itself as a capability: ``Agent(capabilities=[CompactionProcessor(policy)])``). The
  messages are written as the converter's ``pydantic-ai`` format (SPEC TRN-21: a request or a
  response is one message, kept or dropped whole, so parallel calls and their returns stay
  together); what comes back is the caller's own objects where a message was kept, the
  reducer's own objects where it added one, and ``ModelRequest`` / ``ModelResponse`` objects
  for what the library made. The ``reducer`` gets and returns pydantic-ai messages; it is
  never trusted. A termination raises :class:`~hybrid_compaction.CompactionTerminated`.
* :class:`Recorder` records each call as an observed record (SPEC TRC-13): list its
  ``history`` processor first and its ``sent`` processor last around the agent's own
  processors; the history is what the first saw, what was sent what the last returned.
  pydantic-ai repairs the request before the model sees it (it drops orphaned returns and
  invents returns for unanswered calls): a compaction must not rely on that repair, so the
  recorder records the last processor's output, which is what the compaction made.

Runs are agent runs (``RunContext.run_id``): a compactor keeps one
:class:`~hybrid_compaction.Compactor` per run (its memo, one run scope); a recorder names runs
``pydantic-ai-1``, ``pydantic-ai-2``, ... and ends one (``runEnd``) when the next begins or on
:meth:`Recorder.close`.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

from pydantic_ai import RunContext
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from ._frameworks import RunCompactor, check_policy, kept_ids, recorder_writer
from .compact import UNBOUNDED, Compactor, TraceWriter

__all__ = ["CompactionProcessor", "Recorder", "to_json", "from_json"]

Json = Any
FORMAT = "pydantic-ai"


def to_json(messages: List[ModelMessage]) -> List[Json]:
    """pydantic-ai messages as the converter's JSON (``ModelMessagesTypeAdapter``'s JSON dump,
    one dict per message; SPEC TRN-21)."""
    out: List[Json] = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
    return out


def from_json(message: Json) -> ModelMessage:
    """One message of the converter's JSON as a pydantic-ai message."""
    return ModelMessagesTypeAdapter.validate_python([message])[0]


def _run_id(ctx: Any) -> Any:
    return getattr(ctx, "run_id", None) or id(ctx)


class CompactionProcessor(ProcessHistory[Any]):
    """The ADR's compaction before every model request of a pydantic-ai agent (see the module
    docs): ``policy`` a wire policy and ``estimator`` one as :class:`~hybrid_compaction.
    Compactor` takes it (both validated here), ``reducer`` a callable (sync or ``async``) on
    pydantic-ai messages, ``trace`` a :class:`~hybrid_compaction.TraceWriter` or a path that
    receives every call's full record. A history processor and a capability."""

    def __init__(
        self,
        policy: Mapping[str, Json],
        reducer: Optional[Callable[[List[ModelMessage]], Any]] = None,
        *,
        estimator: Union[None, str, Mapping[str, Json]] = None,
        trace: Union[None, str, TraceWriter, Any] = None,
    ) -> None:
        self._runs = RunCompactor(policy, reducer, estimator, trace, FORMAT, "pydantic-ai")
        self.processor = self.__call__

    def __repr__(self) -> str:
        return f"CompactionProcessor(runs={len(self._runs.runs)})"

    async def __call__(self, ctx: RunContext[Any], messages: List[ModelMessage]) -> List[ModelMessage]:
        return await self._runs.compact(_run_id(ctx), messages, to_json, from_json)

    def close(self) -> None:
        """Ends the current run in the trace, and closes a trace opened from a path."""
        self._runs.close()


class Recorder:
    """Records every model call of a pydantic-ai agent (see the module docs):
    ``Agent(capabilities=[ProcessHistory(r.history), *own, ProcessHistory(r.sent)])``.

    ``policy`` is what every call is judged against (by default no hard limit to speak of, a
    retention of 1, UTF-8 bytes); ``trace`` a :class:`~hybrid_compaction.TraceWriter`, a path,
    or ``None``: the ``pytest --hc-trace DIR`` session's directory.
    """

    def __init__(
        self,
        policy: Optional[Mapping[str, Json]] = None,
        trace: Union[None, str, TraceWriter, Any] = None,
        *,
        run: str = "pydantic-ai",
    ) -> None:
        check_policy(policy)
        self.trace, self._owned = recorder_writer(trace)
        self.policy: Mapping[str, Json] = policy if policy is not None else UNBOUNDED
        self._prefix = run
        self._count = 0
        self._run: Optional[str] = None
        self._key: Any = None
        self._held: Dict[Any, List[ModelMessage]] = {}
        self._lock = threading.Lock()

    def _name(self, key: Any) -> str:
        with self._lock:
            if key != self._key:
                if self._run is not None:
                    self.trace.end_run(self._run)
                self._count += 1
                self._key, self._run = key, f"{self._prefix}-{self._count}"
            assert self._run is not None
            return self._run

    async def history(self, ctx: RunContext[Any], messages: List[ModelMessage]) -> List[ModelMessage]:
        """The first processor: remembers the history as the call's, and changes nothing."""
        self._held[_run_id(ctx)] = list(messages)
        return messages

    async def sent(self, ctx: RunContext[Any], messages: List[ModelMessage]) -> List[ModelMessage]:
        """The last processor: records the call (the remembered history, and ``messages`` as
        sent), and changes nothing."""
        key = _run_id(ctx)
        run = self._name(key)
        history = self._held.pop(key, None)
        if history is None:
            history = list(messages)
        sending = list(messages)
        written, sent = to_json(history), to_json(sending)
        ids, sent_ids = kept_ids(FORMAT, history, written, None, sending, sent)
        self.trace.observe(written, sent, policy=self.policy, run=run, format=FORMAT, ids=ids,
                           sent_ids=sent_ids)
        return messages

    def close(self) -> None:
        """Ends the run, and closes a trace this recorder opened."""
        with self._lock:
            if self._run is not None and not self.trace.closed:
                self.trace.end_run(self._run)
            self._run = self._key = None
        if self._owned:
            self.trace.close()
