"""Google ADK agents: compact every model call's contents, or record every model call for the
checker, as ``before_model_callback``s.

``pip install hybrid-compaction[google-adk]`` (``google-adk`` 2.x). ADK calls an agent's
``before_model_callback`` by keyword, ``(callback_context=..., llm_request=...)``, before every
model call; ``llm_request.contents`` (google-genai ``Content`` objects) is rebuilt from the
session for every call and the model receives exactly it, the system prompt being
``llm_request.config.system_instruction``. So:

* :class:`CompactionCallback` runs :class:`hybrid_compaction.Compactor` on the contents of every
  call (``LlmAgent(before_model_callback=CompactionCallback(policy))``): the contents are
  written as the converter's ``gemini`` format (SPEC TRN-22: a ``Content`` is one message, kept
  or dropped whole; calls without ids paired by name and position), the system instruction as
  its ``system`` (always kept); ``llm_request.contents`` becomes the bounded list, the caller's
  own ``Content`` objects where one was kept, the reducer's own where it added one, and
  ``Content`` objects for what the library made. The ``reducer`` gets and returns ``Content``
  objects; it is never trusted. A termination raises
  :class:`~hybrid_compaction.CompactionTerminated`.
* :class:`TraceCallback` records each call as an observed record (SPEC TRC-13) around the
  agent's own callback (``inner``): the history is the contents before it, what was sent the
  contents after it (nothing when it answered instead of the model).

Runs are ADK invocations (``callback_context.invocation_id``): a compactor keeps one
:class:`~hybrid_compaction.Compactor` per invocation; a recorder names runs ``google-adk-1``,
``google-adk-2``, ... and ends one (``runEnd``) when the next begins or on ``close()``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

from google.genai import types

from ._frameworks import RunCompactor, check_policy, kept_ids, recorder_writer
from .compact import UNBOUNDED, Compactor, TraceWriter

__all__ = ["CompactionCallback", "TraceCallback", "to_json", "from_json", "system_of"]

Json = Any
FORMAT = "gemini"


def to_json(contents: List[Any]) -> List[Json]:
    """``Content`` objects as the converter's JSON (``model_dump(mode="json",
    exclude_none=True)``, SPEC TRN-22), id-less calls given ids.

    ADK sends calls without ids (it strips its own). The converter would pair them by name and
    position (TRN-22, TRN-14), and a call's paired id would then depend on the turns before it,
    which a compaction drops. So here the ``j``-th id-less call of a name in a ``model`` content
    gets the id ``hc-<digest of the content>-<name>-<j>``, and the ``j``-th id-less response of
    that name in the content right after it the same id: a turn's ids depend only on its own
    content. (The ids are the converter's JSON only; the objects are not changed.)"""
    out: List[Json] = []
    made: Dict[Any, str] = {}
    for c in contents:
        d: Json = c.model_dump(mode="json", exclude_none=True)
        parts = d.get("parts") or []
        if d.get("role") == "model":
            digest = hashlib.sha256(
                json.dumps(d, sort_keys=True, ensure_ascii=False).encode("utf-8")
            ).hexdigest()[:16]
            made = {}
            for key, name, v in _idless(parts, "function_call"):
                v["id"] = made[key] = f"hc-{digest}-{name}-{key[1]}"
        else:
            for key, _, v in _idless(parts, "function_response"):
                if key in made:
                    v["id"] = made[key]
            made = {}
        out.append(d)
    return out


def _idless(parts: List[Json], member: str) -> List[Any]:
    """``((name, j), name, value)`` for the ``j``-th id-less ``member`` of each name."""
    seen: Dict[str, int] = {}
    found: List[Any] = []
    for p in parts:
        v = p.get(member) if isinstance(p, dict) else None
        if isinstance(v, dict) and not v.get("id") and isinstance(v.get("name"), str):
            name = v["name"]
            seen[name] = seen.get(name, 0) + 1
            found.append(((name, seen[name]), name, v))
    return found


def from_json(content: Json) -> Any:
    """One content of the converter's JSON as a ``Content``."""
    return types.Content.model_validate(content)


def system_of(llm_request: Any) -> Optional[Json]:
    """The request's system instruction as the converter's ``system`` (a string, or a
    ``Content`` or parts as JSON), ``None`` when it has none."""
    config = getattr(llm_request, "config", None)
    s = getattr(config, "system_instruction", None) if config is not None else None
    if s is None or s == "":
        return None
    if isinstance(s, str):
        return s
    if isinstance(s, list):
        return [p if isinstance(p, str) else p.model_dump(mode="json", exclude_none=True) for p in s]
    dumped: Json = s.model_dump(mode="json", exclude_none=True)
    return dumped


class CompactionCallback:
    """The ADR's compaction before every model call of an ADK agent (see the module docs):
    ``policy`` a wire policy and ``estimator`` one as :class:`~hybrid_compaction.Compactor`
    takes it (both validated here), ``reducer`` a callable (sync or ``async``) on ``Content``
    objects, ``trace`` a :class:`~hybrid_compaction.TraceWriter` or a path that receives every
    call's full record."""

    def __init__(
        self,
        policy: Mapping[str, Json],
        reducer: Optional[Callable[[List[Any]], Any]] = None,
        *,
        estimator: Union[None, str, Mapping[str, Json]] = None,
        trace: Union[None, str, TraceWriter, Any] = None,
    ) -> None:
        self._runs = RunCompactor(policy, reducer, estimator, trace, FORMAT, "google-adk")

    async def __call__(self, *, callback_context: Any, llm_request: Any) -> None:
        llm_request.contents = await self._runs.compact(
            getattr(callback_context, "invocation_id", None), list(llm_request.contents),
            to_json, from_json, system=system_of(llm_request))

    def close(self) -> None:
        """Ends the current run in the trace, and closes a trace opened from a path."""
        self._runs.close()


class TraceCallback:
    """Records every model call of an ADK agent around its own ``before_model_callback``
    (``inner``, sync or async; see the module docs). ``policy`` is what every call is judged
    against (by default no hard limit to speak of, a retention of 1, UTF-8 bytes); ``trace`` a
    :class:`~hybrid_compaction.TraceWriter`, a path, or ``None``: the ``pytest --hc-trace DIR``
    session's directory."""

    def __init__(
        self,
        policy: Optional[Mapping[str, Json]] = None,
        trace: Union[None, str, TraceWriter, Any] = None,
        inner: Optional[Callable[..., Any]] = None,
        *,
        run: str = "google-adk",
    ) -> None:
        check_policy(policy)
        if inner is not None and not callable(inner):
            raise TypeError(f"inner must be callable, got {type(inner).__name__}")
        self.trace, self._owned = recorder_writer(trace)
        self.policy: Mapping[str, Json] = policy if policy is not None else UNBOUNDED
        self.inner = inner
        self._prefix = run
        self._count = 0
        self._run: Optional[str] = None
        self._key: Any = None
        self._lock = threading.Lock()

    def _name(self, key: Any) -> str:
        with self._lock:
            if self._run is None or key != self._key:
                if self._run is not None:
                    self.trace.end_run(self._run)
                self._count += 1
                self._key, self._run = key, f"{self._prefix}-{self._count}"
            return self._run

    async def __call__(self, *, callback_context: Any, llm_request: Any) -> Any:
        run = self._name(getattr(callback_context, "invocation_id", None))
        system = system_of(llm_request)
        held = list(llm_request.contents)
        history = to_json(held)
        answer = None
        try:
            if self.inner is not None:
                answer = self.inner(callback_context=callback_context, llm_request=llm_request)
                if inspect.isawaitable(answer):
                    answer = await answer
        except BaseException:
            self.trace.observe(history, None, policy=self.policy, run=run, format=FORMAT,
                               system=system, dispatch="failed", note="the inner callback raised")
            raise
        if answer:
            self.trace.observe(history, None, policy=self.policy, run=run, format=FORMAT,
                               system=system, note="the callback answered instead of the model")
            return answer
        sending = list(llm_request.contents)
        sent = to_json(sending)
        sent_system = system_of(llm_request)
        ids, sent_ids = kept_ids(FORMAT, held, history, system, sending, sent, sent_system)
        self.trace.observe(history, sent, policy=self.policy, run=run, format=FORMAT,
                           system=system, sent_system=sent_system, ids=ids, sent_ids=sent_ids)
        return None

    def close(self) -> None:
        """Ends the run, and closes a trace this recorder opened."""
        with self._lock:
            if self._run is not None and not self.trace.closed:
                self.trace.end_run(self._run)
            self._run = self._key = None
        if self._owned:
            self.trace.close()
