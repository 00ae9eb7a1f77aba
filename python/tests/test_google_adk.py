"""hybrid_compaction.google_adk on real Google ADK runs (google-adk from PyPI, a ``BaseLlm``
subclass as the model with ``InMemoryRunner``, no network): a tool loop with parallel calls and
large results runs under CompactionCallback with every call recorded and checks clean; a
callback that orphans function responses, recorded by TraceCallback, fails the check with its
TRC clause."""

import asyncio
import io
import textwrap
from typing import Any, AsyncGenerator, List

import pytest

pytest.importorskip("google.adk")

import hybrid_compaction as hc  # noqa: E402
from hybrid_compaction.google_adk import CompactionCallback, TraceCallback, from_json, to_json  # noqa: E402
from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.genai import types  # noqa: E402

POLICY = hc.policy(hard_limit=16_000, trigger_margin=3_000, recent_message_retention_count=2,
                   maximum_compaction_attempts=2, preservation_label="google-adk",
                   preservation_version=1)
ROUNDS = 6


class Scripted(BaseLlm):
    """Calls two tools in parallel ``ROUNDS`` times, then answers; records what it receives."""

    model: str = "scripted"
    calls: List[Any] = []
    ids: bool = True

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.calls.append([c.model_copy(deep=True) for c in llm_request.contents])
        k = len(self.calls)
        if k <= ROUNDS:
            parts = [types.Part(text=f"Round {k}: searching."),
                     types.Part(function_call=types.FunctionCall(name="search", args={"query": f"Zürich {k}"})),
                     types.Part(function_call=types.FunctionCall(name="fetch", args={"page": k}))]
        else:
            parts = [types.Part(text="Here is what I found.")]
        yield LlmResponse(content=types.Content(role="model", parts=parts))


def search(query: str) -> str:
    """Searches the web."""
    return f"results for {query}: " + "ä lot of text. " * 180


def fetch(page: int) -> str:
    """Fetches a page."""
    return f"page {page}: " + "content " * 300


async def _run(callback: Any, model: Scripted) -> str:
    agent = LlmAgent(name="researcher", model=model, instruction="You are a research agent. Be brief.",
                     tools=[search, fetch], before_model_callback=callback)
    runner = InMemoryRunner(agent=agent, app_name="test")
    session = await runner.session_service.create_session(app_name="test", user_id="u")
    text = ""
    message = types.Content(role="user", parts=[types.Part(text="Research the weather in Zürich.")])
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        if event.content and event.content.parts and event.content.parts[0].text:
            text = event.content.parts[0].text
    return text


def run(callback_for):
    buffer = io.StringIO()
    model = Scripted(calls=[])
    with hc.TraceWriter(buffer) as trace:
        callback = callback_for(trace)
        answer = asyncio.run(_run(callback, model))
        callback.close()
    return buffer.getvalue(), answer, model.calls


def test_compaction_callback_recorded_checks_clean_and_bounds_every_call():
    text, answer, calls = run(lambda t: TraceCallback(policy=POLICY, trace=t,
                                                      inner=CompactionCallback(POLICY)))
    assert answer == "Here is what I found."
    report = hc.check(text)
    assert report["observed"] == len(calls) == ROUNDS + 1
    assert report["violations"] == []
    # the history grew past the limit: the later calls were compacted
    assert len(calls[-1]) < 2 * ROUNDS + 1


def test_without_compaction_the_recorder_sees_the_hard_limit_broken():
    text, _, calls = run(lambda t: TraceCallback(policy=POLICY, trace=t))
    report = hc.check(text)
    assert report["observed"] == len(calls)
    assert {v["clause"] for v in report["violations"]} == {"TRC-2"}


def orphaning(*, callback_context, llm_request):
    """Drops the model's calls, keeping the responses: orphaned function responses."""
    llm_request.contents = [c for c in llm_request.contents
                            if not (c.role == "model" and any(p.function_call for p in c.parts or []))]


def test_an_orphaning_callback_fails_the_check_with_its_trc_clause():
    text, _, calls = run(lambda t: TraceCallback(trace=t, inner=orphaning))
    report = hc.check(text)
    assert report["observed"] == len(calls)
    clauses = {v["clause"] for v in report["violations"]}
    assert "TRC-3" in clauses and all(c.startswith("TRC-") for c in clauses), report["violations"]


def test_kept_contents_are_the_callers_objects_and_a_reducer_gets_contents():
    seen = []

    def reducer(contents):
        seen.append(contents)
        assert all(isinstance(c, types.Content) for c in contents)
        summary = types.Content(role="model", parts=[types.Part(text="Summary: searched.")])
        return [contents[0], summary, *contents[-4:]]

    history = [types.Content(role="user", parts=[types.Part(text="hi")])]
    for k in range(8):
        history.append(types.Content(role="model", parts=[
            types.Part(function_call=types.FunctionCall(name="search", args={"q": k}))]))
        history.append(types.Content(role="user", parts=[
            types.Part(function_response=types.FunctionResponse(name="search", response={"r": "x" * 3000}))]))

    class Request:
        contents = list(history)
        config = types.GenerateContentConfig(system_instruction="Be brief.")

    class Ctx:
        invocation_id = "i1"

    request = Request()
    asyncio.run(CompactionCallback(POLICY, reducer)(callback_context=Ctx(), llm_request=request))
    out = request.contents
    assert seen and len(out) == 6
    assert out[0] is history[0] and all(a is b for a, b in zip(out[-4:], history[-4:]))
    assert out[1].parts[0].text == "Summary: searched."


def test_contents_map_one_to_one_and_new_ones_read_back():
    c = [types.Content(role="user", parts=[types.Part(text="hi")]),
         types.Content(role="model", parts=[types.Part(text="yo")])]
    entries = hc.convert._entries(hc.convert.transcript(to_json(c), "gemini", system="Be brief."))
    assert [e["role"] for e in entries] == ["system", "user", "assistant"]
    assert isinstance(from_json({"role": "user", "parts": [{"text": "s"}]}), types.Content)


@pytest.mark.parametrize("make, where", [
    (lambda: CompactionCallback(POLICY, trace=42), "trace"),
    (lambda: TraceCallback(trace=b"x"), "trace"),
    (lambda: TraceCallback(inner=3), "inner"),
    (lambda: CompactionCallback(POLICY, reducer=[]), "reducer"),
])
def test_bad_arguments_are_refused_at_construction(make, where):
    with pytest.raises(TypeError, match=where):
        make()


def test_a_bad_policy_is_refused_at_construction():
    with pytest.raises(hc.InvalidCaseError, match="policy"):
        CompactionCallback({"hardLimit": "ten"})
    with pytest.raises(hc.InvalidCaseError, match="policy"):
        TraceCallback(policy={"hardLimit": "ten"})


def test_trace_accepts_a_path(tmp_path):
    path = tmp_path / "run.jsonl"
    callback = CompactionCallback(POLICY, trace=str(path))
    asyncio.run(_run(callback, Scripted(calls=[])))
    callback.close()
    assert hc.check(path)["violations"] == []


ORPHANING = textwrap.dedent('''
    import asyncio
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.genai import types
    from hybrid_compaction.google_adk import TraceCallback

    class Model(BaseLlm):
        model: str = "m"

        async def generate_content_async(self, llm_request, stream=False):
            if len(llm_request.contents) < 5:
                part = types.Part(function_call=types.FunctionCall(name="search", args={"q": "x"}))
            else:
                part = types.Part(text="done")
            yield LlmResponse(content=types.Content(role="model", parts=[part]))

    def search(q: str) -> str:
        """Searches."""
        return "found " * 10

    def orphaning(*, callback_context, llm_request):
        llm_request.contents = [c for c in llm_request.contents
                                if not (c.role == "model" and any(p.function_call for p in c.parts or []))]

    async def go(callback):
        agent = LlmAgent(name="a", model=Model(), tools=[search], before_model_callback=callback)
        runner = InMemoryRunner(agent=agent, app_name="t")
        s = await runner.session_service.create_session(app_name="t", user_id="u")
        msg = types.Content(role="user", parts=[types.Part(text="go")])
        async for _ in runner.run_async(user_id="u", session_id=s.id, new_message=msg):
            pass

    def test_orphaning_agent():
        callback = TraceCallback(inner=orphaning)
        asyncio.run(go(callback))
        callback.close()
''')


def test_pytest_hc_trace_fails_a_session_with_an_orphaning_callback(pytester):
    pytester.makepyfile(test_agent=ORPHANING)
    result = pytester.runpytest("--hc-trace", str(pytester.path / "traces"))
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*TRC-3*"])
