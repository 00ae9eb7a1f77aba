"""hybrid_compaction.pydantic_ai on real pydantic-ai runs (pydantic-ai-slim from PyPI, its own
``FunctionModel``, no network): a tool loop with parallel calls and large results runs under
CompactionProcessor with every call recorded and checks clean; a processor that orphans tool
returns, recorded by the Recorder, fails the check with its TRC clause."""

import asyncio
import io
import json
import textwrap

import pytest

pytest.importorskip("pydantic_ai")

import hybrid_compaction as hc  # noqa: E402
from hybrid_compaction.pydantic_ai import CompactionProcessor, Recorder, from_json, to_json  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities import ProcessHistory  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

POLICY = hc.policy(hard_limit=16_000, trigger_margin=3_000, recent_message_retention_count=2,
                   maximum_compaction_attempts=2, preservation_label="pydantic-ai",
                   preservation_version=1)
ROUNDS = 6


def scripted(calls):
    """A model that calls two tools in parallel ``ROUNDS`` times, then answers."""

    def model(messages, info: AgentInfo):
        calls.append(list(messages))
        k = len(calls)
        if k <= ROUNDS:
            return ModelResponse(parts=[
                TextPart(f"Round {k}: searching."),
                ToolCallPart("search", {"query": f"Zürich {k}"}, f"s{k}"),
                ToolCallPart("fetch", {"page": k}, f"f{k}"),
            ])
        return ModelResponse(parts=[TextPart("Here is what I found.")])

    return FunctionModel(model)


def agent(capabilities, calls):
    a = Agent(scripted(calls), system_prompt="You are a research agent. Be brief.",
              capabilities=capabilities)

    @a.tool_plain
    def search(query: str) -> str:
        return f"results for {query}: " + "ä lot of text. " * 180

    @a.tool_plain
    def fetch(page: int) -> str:
        return f"page {page}: " + "content " * 300

    return a


def run(capabilities_for):
    buffer = io.StringIO()
    calls = []
    with hc.TraceWriter(buffer) as trace:
        caps = capabilities_for(trace)
        result = agent(caps, calls).run_sync("Research the weather in Zürich.")
    return buffer.getvalue(), result, calls


def test_compaction_processor_recorded_checks_clean_and_bounds_every_call():
    recorder = []

    def caps(trace):
        r = Recorder(policy=POLICY, trace=trace)
        recorder.append(r)
        return [ProcessHistory(r.history), CompactionProcessor(POLICY), ProcessHistory(r.sent)]

    text, result, calls = run(caps)
    recorder[0].close()
    assert result.output == "Here is what I found."
    report = hc.check(text)
    assert report["observed"] == len(calls) == ROUNDS + 1
    assert report["violations"] == []
    sizes = [len(json.dumps(to_json(c), ensure_ascii=False).encode()) for c in calls]
    assert max(sizes) < 3 * 16_000  # the JSON (metadata included) of a bounded request
    # the history grows past the limit, so the later calls were compacted
    assert len(calls[-1]) < 2 * ROUNDS + 2


def test_kept_messages_are_the_callers_objects_and_a_reducer_gets_framework_objects():
    seen = []

    def reducer(messages):
        seen.append(messages)
        assert all(isinstance(m, (ModelRequest, ModelResponse)) for m in messages)
        # the last two exchanges are the retained recency units (two messages each)
        return [messages[0], ModelResponse(parts=[TextPart("Summary: searched Zürich.")]), *messages[-4:]]

    processor = CompactionProcessor(POLICY, reducer)
    history = [ModelRequest.user_text_prompt("hi")]
    for k in range(8):
        history.append(ModelResponse(parts=[ToolCallPart("search", {"q": k}, f"c{k}")]))
        history.append(ModelRequest(parts=[ToolReturnPart("search", "x" * 3000, f"c{k}")]))

    class Ctx:
        run_id = "r1"

    out = asyncio.run(processor(Ctx(), history))  # type: ignore[arg-type]
    assert seen, "the history is over the trigger: the reducer was asked"
    assert len(out) == 6
    assert out[0] is history[0] and all(a is b for a, b in zip(out[-4:], history[-4:]))
    assert isinstance(out[1], ModelResponse) and out[1].parts[0].content.startswith("Summary")


def test_an_orphaning_processor_fails_the_check_with_its_trc_clause():
    def orphaning(messages):
        # drops every response that made calls, keeping the returns: orphaned tool returns
        return [m for m in messages if not (isinstance(m, ModelResponse)
                                            and any(isinstance(p, ToolCallPart) for p in m.parts))]

    recorders = []

    def caps(trace):
        r = Recorder(trace=trace)
        recorders.append(r)
        return [ProcessHistory(r.history), ProcessHistory(orphaning), ProcessHistory(r.sent)]

    text, _, calls = run(caps)
    recorders[0].close()
    report = hc.check(text)
    assert report["observed"] == len(calls)
    clauses = {v["clause"] for v in report["violations"]}
    assert clauses and all(c.startswith("TRC-") for c in clauses), report["violations"]
    assert "TRC-3" in clauses, report["violations"]


def test_messages_map_one_to_one_and_new_ones_read_back():
    m = [ModelRequest.user_text_prompt("hi"), ModelResponse(parts=[TextPart("yo")])]
    entries = hc.convert._entries(hc.convert.transcript(to_json(m), "pydantic-ai"))
    assert [e["role"] for e in entries] == ["user", "assistant"]
    back = from_json({"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "s"}]})
    assert isinstance(back, ModelRequest)


@pytest.mark.parametrize("make, where", [
    (lambda: CompactionProcessor(POLICY, trace=42), "trace"),
    (lambda: Recorder(trace=3.5), "trace"),
    (lambda: CompactionProcessor(POLICY, reducer="no"), "reducer"),
])
def test_bad_arguments_are_refused_at_construction(make, where):
    with pytest.raises(TypeError, match=where):
        make()


def test_a_bad_policy_or_estimator_is_refused_at_construction():
    with pytest.raises(hc.InvalidCaseError, match="policy"):
        CompactionProcessor({"hardLimit": "ten"})
    with pytest.raises(hc.InvalidCaseError, match="policy"):
        Recorder(policy={"hardLimit": "ten"})
    with pytest.raises((hc.InvalidCaseError, ValueError)):
        CompactionProcessor(POLICY, estimator="tokens:nope")


def test_trace_accepts_a_path(tmp_path):
    path = tmp_path / "run.jsonl"
    p = CompactionProcessor(POLICY, trace=str(path))
    a = agent([p], [])
    a.run_sync("Research the weather in Zürich.")
    p.close()
    assert hc.check(path)["violations"] == []


ORPHANING = textwrap.dedent('''
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from hybrid_compaction.pydantic_ai import Recorder

    def model(messages, info):
        if len(messages) < 5:
            return ModelResponse(parts=[ToolCallPart("search", {"q": "x"}, f"c{len(messages)}")])
        return ModelResponse(parts=[TextPart("done")])

    def orphaning(messages):
        return [m for m in messages if not (isinstance(m, ModelResponse)
                and any(isinstance(p, ToolCallPart) for p in m.parts))]

    def test_orphaning_agent():
        r = Recorder()
        a = Agent(FunctionModel(model), capabilities=[
            ProcessHistory(r.history), ProcessHistory(orphaning), ProcessHistory(r.sent)])

        @a.tool_plain
        def search(q: str) -> str:
            return "found " * 10

        a.run_sync("go")
        r.close()
''')


def test_pytest_hc_trace_fails_a_session_with_an_orphaning_processor(pytester):
    pytester.makepyfile(test_agent=ORPHANING)
    result = pytester.runpytest("--hc-trace", str(pytester.path / "traces"))
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*TRC-3*"])


def test_a_repeated_message_kept_is_recorded_as_the_copy_it_is():
    """Identical messages have content-hash ids numbered by position (TRN-5); a processor that
    drops the first copy keeps the second, which the recorder must not read as the first."""
    ask = [ModelRequest.user_text_prompt(q) for q in ("a", "b", "c")]
    same = [ModelResponse(parts=[TextPart("Here is what I found.")]) for _ in range(2)]
    history = [ask[0], same[0], ask[1], same[1], ask[2]]
    buffer = io.StringIO()
    policy = dict(POLICY, recentMessageRetentionCount=2)

    class Ctx:
        run_id = "r1"

    with hc.TraceWriter(buffer) as trace:
        r = Recorder(policy=policy, trace=trace)
        asyncio.run(r.history(Ctx(), history))  # type: ignore[arg-type]
        asyncio.run(r.sent(Ctx(), history[2:]))  # type: ignore[arg-type]
        r.close()
    assert hc.check(buffer.getvalue())["violations"] == []
