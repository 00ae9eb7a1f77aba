"""What the pydantic-ai and Google ADK integrations share: the ``trace=`` argument (a
:class:`TraceWriter` or a path, refused otherwise at construction), and the mapping of the
library's answer back onto the caller's own objects."""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from .compact import Compactor, TraceWriter
from .convert import _entries, transcript

Json = Any


def trace_writer(trace: Any, parameter: str = "trace") -> Tuple[Optional[TraceWriter], bool]:
    """``(the writer, whether it was opened here)`` for a ``trace=`` argument: ``None``, a
    :class:`TraceWriter`, or a path (a file this integration opens and closes); anything else
    is a ``TypeError`` naming the parameter."""
    if trace is None or isinstance(trace, TraceWriter):
        return trace, False
    if isinstance(trace, (str, os.PathLike)):
        return TraceWriter(trace), True
    raise TypeError(
        f"{parameter} must be a hybrid_compaction.TraceWriter or a path, got {type(trace).__name__}"
    )


def recorder_writer(trace: Any) -> Tuple[TraceWriter, bool]:
    """A recorder's writer: as :func:`trace_writer`, ``None`` the ``pytest --hc-trace`` session's
    directory."""
    writer, owned = trace_writer(trace)
    if writer is None:
        return TraceWriter(None), True
    return writer, owned


def check_policy(policy: Optional[Mapping[str, Json]]) -> None:
    """Refuses a policy that does not validate, by its path, now (not at the first call)."""
    if policy is not None:
        Compactor(policy)


class RunCompactor:
    """One :class:`Compactor` per agent run, the caller's objects in and out: what the
    pydantic-ai processor and the ADK callback share. ``policy`` and ``estimator`` are validated
    at construction, ``reducer`` must be callable, ``trace`` as :func:`trace_writer` takes it. A
    new run ends the previous one in the trace."""

    def __init__(
        self,
        policy: Mapping[str, Json],
        reducer: Optional[Callable[[List[Any]], Any]],
        estimator: Union[None, str, Mapping[str, Json]],
        trace: Any,
        format: str,
        workflow: str,
    ) -> None:
        if reducer is not None and not callable(reducer):
            raise TypeError(f"reducer must be callable, got {type(reducer).__name__}")
        self._trace, self._owned = trace_writer(trace)
        self._policy = policy
        self._estimator = estimator
        self._reducer = reducer
        self._format = format
        self._workflow = workflow
        Compactor(policy, estimator=estimator)  # refuses a bad policy or estimator now
        self._lock = threading.Lock()
        self.runs: Dict[Any, Compactor] = {}

    def _compactor(self, run: Any) -> Compactor:
        with self._lock:
            c = self.runs.get(run)
            if c is None:
                for old in self.runs.values():
                    old.close()  # a new run began: the last one ended
                c = Compactor(self._policy, estimator=self._estimator, trace=self._trace,
                              format=self._format, workflow=self._workflow)
                self.runs = {run: c}
            return c

    async def compact(
        self,
        run: Any,
        messages: List[Any],
        write: Callable[[List[Any]], List[Json]],
        read: Callable[[Json], Any],
        system: Optional[Json] = None,
    ) -> List[Any]:
        """``messages`` (the caller's objects, written by ``write``) compacted in ``run``'s
        compactor; the answer as the caller's objects (kept ones identical, others ``read``)."""
        compactor = self._compactor(run)
        objects = Objects(write)
        written = objects.written(list(messages))
        compactor._reducer = objects.reducer(self._reducer) if self._reducer is not None else None
        result = await compactor.acompact(written, system=system)
        return [objects.back(d, read) for d in result.messages]

    def close(self) -> None:
        """Ends the current run in the trace, and closes a trace opened from a path."""
        with self._lock:
            for c in self.runs.values():
                c.close()
            self.runs = {}
        if self._owned and self._trace is not None:
            self._trace.close()


class Objects:
    """The caller's objects behind the converter's JSON of one call: each written dict (by
    identity) -> the object it was written from, so the answer goes back as the caller's own
    objects (kept ones identical)."""

    def __init__(self, write: Callable[[List[Any]], List[Json]]) -> None:
        self._write = write
        self._objects: Dict[int, Tuple[Json, Any]] = {}

    def written(self, objects: List[Any]) -> List[Json]:
        """The JSON of ``objects``, remembered."""
        out = self._write(objects)
        for d, o in zip(out, objects):
            self._objects[id(d)] = (d, o)
        return out

    def reducer(self, reducer: Callable[[List[Any]], Any]) -> Callable[[List[Json]], Any]:
        """``reducer`` on the caller's objects, as a reducer on their JSON: its kept objects go
        back as the JSON they were written as, its own objects written now."""

        def on_json(ds: List[Json]) -> Any:
            answer = reducer([self.back(d, None) for d in ds])
            if hasattr(answer, "__await__"):
                return self._awaited(answer)
            return self._json(answer)

        return on_json

    async def _awaited(self, answer: Any) -> Any:
        return self._json(await answer)

    def _json(self, answer: Any) -> Any:
        if answer is None or isinstance(answer, (str, bytes, Mapping)) or not hasattr(answer, "__iter__"):
            return answer  # the library names what is wrong with it (BRG-1)
        objects = list(answer)
        by_object = {id(o): d for d, o in self._objects.values()}
        out: List[Json] = []
        fresh = [o for o in objects if id(o) not in by_object]
        written = iter(self.written(fresh) if fresh else [])
        for o in objects:
            out.append(by_object[id(o)] if id(o) in by_object else next(written))
        return out

    def back(self, d: Json, read: Optional[Callable[[Json], Any]]) -> Any:
        """The object ``d`` was written from, else (a message the library rendered) ``read(d)``."""
        hit = self._objects.get(id(d))
        if hit is not None and hit[0] is d:
            return hit[1]
        return read(d) if read is not None else d


def kept_ids(
    format: str,
    held: List[Any], history: List[Json], system: Optional[Json],
    sending: List[Any], sent: List[Json], sent_system: Optional[Json] = None,
) -> Tuple[List[str], List[str]]:
    """The entry ids of a recorded call's history and of what was sent (SPEC TRN-5, a system
    first), a message sent being the caller's own object having the id it has in the history.
    These frameworks' messages carry no ids, and content-hash ids number identical messages (an
    agent's repeated answer) by position, which dropping an earlier copy would shift."""
    h = [e["id"] for e in _entries(transcript(history, format, system=system))]
    s = [e["id"] for e in _entries(transcript(sent, format, system=sent_system))]
    ho, so = int(system is not None), int(sent_system is not None)
    by_object = {id(o): h[i + ho] for i, o in enumerate(held)}
    if so and ho and sent_system == system:
        s[0] = h[0]
    for k, o in enumerate(sending):
        s[k + so] = by_object.get(id(o), s[k + so])
    return h, s
