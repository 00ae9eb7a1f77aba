"""OpenAI Agents SDK: record every model call of an agent run for the checker, or compact it, at
the SDK's per-call seam (``RunConfig(call_model_input_filter=...)``).

``pip install hybrid-compaction[openai-agents]``. Before every model call the SDK hands the
filter a ``CallModelData`` whose ``model_data`` is a ``ModelInputData(input, instructions)``:
``input`` a shallow copy of the run's items (OpenAI Responses input items, the caller's own
objects: a user message ``{"role": "user", "content": ...}``, each call its own
``function_call`` item, each result a ``function_call_output``), ``instructions`` the agent's
system prompt, outside the list. The filter returns the ``ModelInputData`` to send; a run
config takes one filter. So:

* :class:`CompactionFilter` runs :class:`hybrid_compaction.Compactor` on the items of every
  call (format ``openai-responses``, SPEC TRN-17; the instructions as the top-level system)
  and returns the bounded list: the items it keeps are the same objects (the SDK refuses
  rebuilt copies of items in server-managed conversations), the reducer's own items where it
  added some (a summary). A termination raises :class:`~hybrid_compaction.CompactionTerminated`;
  nothing over budget is ever sent.
* :class:`TraceFilter` records each call as an observed record (SPEC TRC-13): the history is
  the items the SDK passed in, the instructions in front; what was sent is what its ``inner``
  filter (for example the SDK's own ``ToolOutputTrimmer``, or a :class:`CompactionFilter`)
  returned, the last step before the model. Without ``inner`` it sends the input unchanged.

Both are ``async`` callables (the SDK awaits a filter's awaitable, in ``Runner.run`` and
``Runner.run_sync`` alike). The SDK tells a filter nothing about runs: all calls are one run
(``run``) until :meth:`end_run` (call it between ``Runner.run`` calls, or use one filter per
run); :meth:`close` ends the run and closes a trace file the filter opened.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import threading
from typing import Any, Callable, List, Mapping, Optional, Union, cast

from agents.run_config import CallModelData, ModelInputData

from .compact import UNBOUNDED, Compactor, TraceTarget, TraceWriter, _trace_writer

__all__ = ["CompactionFilter", "TraceFilter"]

Json = Any
#: A ``call_model_input_filter``: sync or async, ``CallModelData`` to ``ModelInputData``.
Filter = Callable[[CallModelData[Any]], Any]

_FORMAT = "openai-responses"


def _with_instructions(items: List[Any], instructions: Optional[str]) -> List[Any]:
    """The items with the instructions in front as a system message (how an observed record
    takes a prompt kept outside the list, :meth:`TraceWriter.observe`)."""
    if not instructions:
        return items
    return [{"role": "system", "content": instructions}, *items]


class CompactionFilter:
    """The ADR's compaction at every model call of an Agents SDK run (see the module docs):
    ``RunConfig(call_model_input_filter=CompactionFilter(policy))``.

    ``policy`` is a wire policy (:func:`hybrid_compaction.policy`, validated here);
    ``reducer`` your reducer, a callable (sync or ``async``) from Responses input items (the
    instructions apart, not among them) to Responses input items, never trusted (absent: none,
    so a history over the trigger falls back to the required items); ``estimator`` replaces the
    policy's; ``trace`` (a :class:`~hybrid_compaction.TraceWriter` or a file path, opened here)
    receives every call's full record.
    """

    def __init__(
        self,
        policy: Mapping[str, Json],
        reducer: Optional[Callable[[List[Any]], Any]] = None,
        *,
        estimator: Union[None, str, Mapping[str, Json]] = None,
        trace: TraceTarget = None,
    ) -> None:
        Compactor(policy, reducer=reducer, estimator=estimator)  # refuses a bad policy now
        self._trace, self._owned = _trace_writer(trace)
        self._policy, self._reducer, self._estimator = policy, reducer, estimator
        self._lock = threading.Lock()
        self._compactor = self._make()

    def _make(self) -> Compactor:
        return Compactor(self._policy, reducer=self._reducer, estimator=self._estimator,
                         trace=self._trace, format=_FORMAT, workflow="openai-agents")

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        with self._lock:
            compactor = self._compactor
        result = await compactor.acompact(list(model_data.input), system=model_data.instructions)
        return ModelInputData(input=result.messages, instructions=model_data.instructions)

    def end_run(self) -> None:
        """Ends the current run (a ``runEnd`` record in the trace); later calls are the next
        run, with a fresh estimate memo."""
        with self._lock:
            ended, self._compactor = self._compactor, self._make()
        ended.close()

    def close(self) -> None:
        """Ends the run, and closes the trace file this filter opened (``trace=`` a path)."""
        self._compactor.close()
        if self._owned and self._trace is not None:
            self._trace.close()


class TraceFilter:
    """Records every model call of an Agents SDK run (see the module docs):
    ``RunConfig(call_model_input_filter=TraceFilter(policy, inner=ToolOutputTrimmer()))``.

    ``policy`` (:func:`hybrid_compaction.policy`) is what every call is judged against (by
    default no hard limit to speak of, a retention of 1, UTF-8 bytes); ``trace`` a
    :class:`~hybrid_compaction.TraceWriter` or a file path (``None``: a file in the
    ``pytest --hc-trace DIR`` session's directory); ``inner`` the filter whose answer is sent
    (sync or async; ``None``: the input as is). ``content=True`` writes item content (redacted
    by default). It changes nothing the run does.
    """

    def __init__(
        self,
        policy: Optional[Mapping[str, Json]] = None,
        trace: TraceTarget = None,
        inner: Optional[Filter] = None,
        *,
        content: bool = False,
        run: str = "openai-agents",
    ) -> None:
        if policy is not None:
            Compactor(policy)  # refuses a policy that does not validate, by its path, now
        if inner is not None and not callable(inner):
            raise TypeError(f"inner must be a call_model_input_filter, got {type(inner).__name__}")
        self.policy: Mapping[str, Json] = policy if policy is not None else UNBOUNDED
        writer, owned = _trace_writer(trace)
        self.trace = writer if writer is not None else TraceWriter(None, content=content)
        self._owned = owned or writer is None
        self.inner = inner
        self._prefix = run
        self._runs = itertools.count(1)
        self.run = f"{run}-{next(self._runs)}"
        self._lock = threading.Lock()

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        given = data.model_data
        # A copy as the SDK passed it: an inner filter may rewrite the items it was given.
        history = _with_instructions(copy.deepcopy(list(given.input)), given.instructions)
        if self.inner is None:
            sent: Any = given
        else:
            try:
                sent = self.inner(data)
                if inspect.isawaitable(sent):
                    sent = await sent
            except BaseException:
                self._record(history, None, "the inner filter raised; nothing was sent")
                raise
        if isinstance(sent, ModelInputData):
            self._record(history, _with_instructions(list(sent.input), sent.instructions), None)
        else:  # the SDK refuses it with a UserError; record that nothing was sent
            self._record(history, None, "the inner filter did not return a ModelInputData")
        return cast(ModelInputData, sent)

    def _record(self, history: List[Any], sent: Optional[List[Any]], note: Optional[str]) -> None:
        with self._lock:
            run = self.run
        self.trace.observe(history, sent, policy=self.policy, run=run, format=_FORMAT, note=note)

    def end_run(self) -> None:
        """Ends the current run (a ``runEnd`` record); later calls are the next run."""
        with self._lock:
            self.trace.end_run(self.run)
            self.run = f"{self._prefix}-{next(self._runs)}"

    def close(self) -> None:
        """Ends the run, flushes the trace, and closes it if this filter opened it."""
        if not self.trace.closed:
            self.end_run()
        if self._owned:
            self.trace.close()
        else:
            self.trace.flush()
