"""hybrid_compaction.langchain on real ``create_agent`` runs (langchain, langgraph from PyPI, at
the newest and the oldest releases the extra admits; a scripted fake chat model, no network):
TraceMiddleware records what every model call held and sent, the checker judges it;
CompactionMiddleware's runs check clean."""

import asyncio
import io
import json
import subprocess
import sys
import warnings

import pytest

pytest.importorskip("langchain.agents")

import hybrid_compaction as hc  # noqa: E402
from hybrid_compaction.langchain import (  # noqa: E402
    CompactionMiddleware,
    TraceMiddleware,
    pre_model_hook,
)
from langchain.agents.middleware import (  # noqa: E402
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    SummarizationMiddleware,
    before_model,
)
from langchain_core.messages import AIMessage, RemoveMessage  # noqa: E402

import fake_agents  # noqa: E402

POLICY = hc.policy(hard_limit=24_000, trigger_margin=4_000, recent_message_retention_count=2,
                   maximum_compaction_attempts=2, preservation_label="agent", preservation_version=1)


@before_model
def drop_latest_call(state, runtime):
    """A careless compaction: drops the assistant message whose tool calls the latest results
    answer."""
    messages = state["messages"]
    if messages and messages[-1].type == "tool":
        calls = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls]
        return {"messages": [RemoveMessage(id=calls[-1].id)]}
    return None


def observed(text):
    return [json.loads(line) for line in text.splitlines()[1:]
            if json.loads(line).get("type") == "observed"]


def count(refs):
    return sum(r[1] - r[0] + 1 if isinstance(r, list) else 1 for r in refs)


def run(middleware_for, rounds=6, **kw):
    """Runs the agent with ``middleware_for(trace)`` and returns (trace text, final state)."""
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        state = fake_agents.agent(middleware_for(trace), rounds=rounds, **kw).invoke(
            fake_agents.question())
    return buffer.getvalue(), state


def test_a_compaction_that_drops_the_latest_tool_calls_is_flagged_by_check(tmp_path):
    path = tmp_path / "agent.jsonl"
    tracer = TraceMiddleware(str(path), POLICY)
    fake_agents.agent([tracer, drop_latest_call], rounds=4).invoke(fake_agents.question())
    tracer.close()
    report = hc.check(path.read_text(encoding="utf-8"))
    assert report["observed"] == 5
    first = report["violations"][0]
    assert (first["clause"], first["run"], first["call"]) == ("TRC-3", "agent-1", "model-2")
    assert {"TRC-3", "TRC-4", "TRC-5"} <= {v["clause"] for v in report["violations"]}
    cli = subprocess.run([sys.executable, "-m", "hybrid_compaction", "check", str(path)],
                         capture_output=True, text=True)
    assert cli.returncode == 1, cli.stderr
    assert "TRC-5" in cli.stdout and "model-2" in cli.stdout, cli.stdout


def test_the_same_agent_with_compaction_middleware_checks_clean_over_every_model_call():
    def middleware(trace):
        return [TraceMiddleware(policy=POLICY, trace=trace), CompactionMiddleware(POLICY, trace=trace)]

    text, state = run(middleware, rounds=10)
    report = hc.check(text)
    assert report["violations"] == []
    assert report["observed"] == 11 and report["calls"] == 22, "every model call, twice"
    shortened = [r for r in observed(text) if count(r["sent"]["refs"]) < count(r["history"]["refs"])]
    assert shortened, "the run was long enough to compact"
    assert state["messages"][-1].content == "Here is what I found."


def test_compaction_middleware_with_a_reducer_that_cannot_be_trusted_still_checks_clean():
    def careless(messages):                   # drops every assistant message with tool calls
        return [m for m in messages if not (isinstance(m, AIMessage) and m.tool_calls)]

    def middleware(trace):
        return [TraceMiddleware(policy=POLICY, trace=trace),
                CompactionMiddleware(POLICY, reducer=careless, trace=trace)]

    text, _ = run(middleware, rounds=10)
    assert hc.check(text)["violations"] == []


def test_summarization_is_judged_against_the_history_before_it_ran():
    def middleware(trace):
        return [TraceMiddleware(policy=POLICY, trace=trace),
                SummarizationMiddleware(model=fake_agents.summarizer_model(),
                                        trigger=("tokens", 4000), keep=("messages", 4))]

    text, _ = run(middleware, rounds=8)
    records = observed(text)
    summarized = [r for r in records if count(r["sent"]["refs"]) < count(r["history"]["refs"])]
    assert summarized, "the summarizer ran"
    first = summarized[0]
    assert count(first["history"]["refs"]) > count(first["sent"]["refs"]) + 2, (
        "the history is the state before the summarizer rewrote it")
    report = hc.check(text)
    assert report["observed"] == len(records) == 9
    # Judged, whatever the verdict: every violation names its clause and call.
    assert all(v["clause"].startswith("TRC-") and v["call"].startswith("model-")
               for v in report["violations"])


def test_context_editing_that_clears_tool_results_in_place_is_seen_as_changed():
    def middleware(trace):
        edit = ClearToolUsesEdit(trigger=2000, keep=1)
        return [TraceMiddleware(policy=POLICY, trace=trace), ContextEditingMiddleware(edits=[edit])]

    text, _ = run(middleware, rounds=6)
    report = hc.check(text)
    assert "TRC-3" in {v["clause"] for v in report["violations"]}, report["violations"]


def test_the_recorder_changes_nothing_the_agent_does():
    plain = fake_agents.agent([CompactionMiddleware(POLICY)], rounds=8).invoke(fake_agents.question())
    _, traced = run(lambda trace: [TraceMiddleware(trace=trace), CompactionMiddleware(POLICY)], rounds=8)
    shape = lambda s: [(type(m).__name__, m.content, getattr(m, "tool_calls", None))  # noqa: E731
                       for m in s["messages"]]
    assert shape(plain) == shape(traced)


def test_async_agents_are_recorded_and_compacted_alike():
    buffer = io.StringIO()

    async def main():
        with hc.TraceWriter(buffer) as trace:
            agent = fake_agents.agent([TraceMiddleware(policy=POLICY, trace=trace),
                                       CompactionMiddleware(POLICY, trace=trace)], rounds=10)
            return await agent.ainvoke(fake_agents.question())

    asyncio.run(main())
    report = hc.check(buffer.getvalue())
    assert (report["observed"], report["violations"]) == (11, [])


def test_a_budget_the_required_messages_exceed_raises_compaction_terminated():
    tiny = hc.policy(hard_limit=300, trigger_margin=50, recent_message_retention_count=1,
                     maximum_compaction_attempts=1, preservation_label="agent", preservation_version=1)
    with pytest.raises(hc.CompactionTerminated) as e:
        fake_agents.agent([CompactionMiddleware(tiny)], rounds=3).invoke(fake_agents.question())
    assert e.value.outcome == "Irreducible"


def test_bad_policies_are_refused_when_the_middleware_is_made():
    with pytest.raises(hc.SpecError):
        CompactionMiddleware({**POLICY, "recentMessageRetentionCount": 0})
    with pytest.raises(hc.InvalidCaseError) as e:
        CompactionMiddleware({**POLICY, "hardLimit": "big"})
    assert e.value.path.startswith("policy.hardLimit")
    with pytest.raises(hc.TraceWriteError):
        TraceMiddleware()  # no path, no pytest --hc-trace session


def test_langgraph_prebuilt_agent_compacts_through_its_pre_model_hook():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        hook = pre_model_hook(POLICY, trace=trace, system_prompt=fake_agents.SYSTEM_PROMPT)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agent = create_react_agent(fake_agents.FakeChatModel(messages=fake_agents.script(10)),
                                       fake_agents.TOOLS, prompt=fake_agents.SYSTEM_PROMPT,
                                       pre_model_hook=hook)
        state = agent.invoke(fake_agents.question())
    report = hc.check(buffer.getvalue())
    assert (report["calls"], report["violations"]) == (11, [])
    assert state["messages"][-1].content == "Here is what I found."


def test_a_recorder_refuses_a_bad_policy_and_a_message_it_cannot_map_by_place():
    with pytest.raises(hc.InvalidCaseError) as e:
        TraceMiddleware(trace=hc.TraceWriter(io.StringIO()), policy={**POLICY, "hardLimit": "big"})
    assert e.value.path.startswith("policy.hardLimit")
    with pytest.raises(hc.SpecError):
        TraceMiddleware(trace=hc.TraceWriter(io.StringIO()), policy={**POLICY, "hardLimit": -1})
    buffer = io.StringIO()
    # A call without an id cannot be answered (TRN-9): refused at its place.
    from langchain_core.messages import AIMessage, HumanMessage

    broken = {"messages": [HumanMessage("what is this?"), AIMessage(content="", invalid_tool_calls=[
        {"name": "f", "args": "{oops", "id": None, "error": "bad json", "type": "invalid_tool_call"}])]}
    with hc.TraceWriter(buffer) as trace:
        with pytest.raises(hc.UnsupportedContentError) as u:
            fake_agents.agent([TraceMiddleware(policy=POLICY, trace=trace)], rounds=1).invoke(broken)
    assert u.value.path == "history.messages[2].invalid_tool_calls[0]", u.value.path
    assert len(buffer.getvalue().splitlines()) == 1, "nothing half-written: the header only"
