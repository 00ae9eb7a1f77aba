"""The pytest plugin (``pytest --hc-trace DIR``), run by pytester on agents that violate the
SPEC and on agents that conform: traces land in DIR, the checker's table is in the terminal
summary, and a violation fails the session."""

import json
import pathlib

import pytest

pytest.importorskip("langchain.agents")

FAKES = (pathlib.Path(__file__).parent / "fake_agents.py").read_text(encoding="utf-8")

AGENTS = '''
import hybrid_compaction as hc
from hybrid_compaction.langchain import CompactionMiddleware, TraceMiddleware
from langchain.agents.middleware import before_model
from langchain_core.messages import AIMessage, RemoveMessage

import fake_agents

POLICY = hc.policy(hard_limit=24_000, trigger_margin=4_000, recent_message_retention_count=2,
                   maximum_compaction_attempts=2, preservation_label="agent", preservation_version=1)


@before_model
def drop_latest_call(state, runtime):
    messages = state["messages"]
    if messages and messages[-1].type == "tool":
        calls = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls]
        return {"messages": [RemoveMessage(id=calls[-1].id)]}
    return None
'''

CARELESS = AGENTS + '''

def test_careless_agent():
    fake_agents.agent([TraceMiddleware(policy=POLICY), drop_latest_call], rounds=3).invoke(
        fake_agents.question())
'''

CONFORMANT = AGENTS + '''

def test_compacting_agent():
    fake_agents.agent([TraceMiddleware(policy=POLICY), CompactionMiddleware(POLICY)],
                      rounds=10).invoke(fake_agents.question())


def test_plain_writer():
    with hc.TraceWriter() as trace:
        trace.observe([("system", "be brief"), ("human", "hi")], [("system", "be brief"), ("human", "hi")])
'''


def test_a_violating_agent_fails_the_session_with_its_clause(pytester):
    pytester.makepyfile(fake_agents=FAKES, test_agent=CARELESS)
    traces = pytester.path / "traces"
    result = pytester.runpytest("--hc-trace", str(traces), "--hc-trace-json", "report.json")
    result.assert_outcomes(passed=1)
    assert result.ret == 1, "the test passed, the session fails on the violation"
    result.stdout.fnmatch_lines([
        "*= hybrid-compaction check =*",
        "1 trace(s) in *: 4 call(s) checked, 4 observed, * violation(s)*",
        "trace*clause*run*call*line*explanation",
        "*test_careless_agent-*.jsonl*TRC-3*agent-1*model-2*",
        "TRC-5: * violation(s); first at *test_careless_agent-*.jsonl run agent-1 call model-2",
    ])
    [trace] = list(traces.iterdir())
    assert "test_careless_agent-" in trace.name
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    assert report["calls"] == 4 and {v["clause"] for v in report["violations"]} >= {"TRC-3", "TRC-5"}
    assert report["violations"][0]["trace"] == trace.name


def test_a_conformant_agent_passes_and_old_traces_are_not_checked_again(pytester):
    pytester.makepyfile(fake_agents=FAKES, test_agent=CONFORMANT)
    traces = pytester.path / "traces"
    traces.mkdir()
    (traces / "stale.jsonl").write_text("not a trace\n", encoding="utf-8")
    result = pytester.runpytest("--hc-trace", str(traces))
    result.assert_outcomes(passed=2)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["2 trace(s) in *: 12 call(s) checked, 12 observed, 0 violation(s)*"])
    assert len(list(traces.iterdir())) == 3


def test_an_unreadable_trace_written_in_the_session_fails_it(pytester):
    pytester.makepyfile(test_broken='''
import os

def test_writes_garbage():
    with open(os.path.join(os.environ["HC_TRACE_DIR"], "broken.jsonl"), "w") as f:
        f.write("not a trace\\n")
''')
    result = pytester.runpytest("--hc-trace", "traces")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["unreadable trace broken.jsonl: line 1*"])


def test_without_the_flag_nothing_happens_and_json_alone_is_a_usage_error(pytester):
    pytester.makepyfile(test_none="def test_ok():\n    pass\n")
    result = pytester.runpytest()
    assert result.ret == 0 and "hybrid-compaction check" not in result.stdout.str()
    result = pytester.runpytest("--hc-trace-json", "x.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


AGENTS_SDK = '''
import hybrid_compaction as hc
from hybrid_compaction.openai_agents import CompactionFilter, TraceFilter
from agents.run_config import ModelInputData

import fake_openai_agents as fake

POLICY = hc.policy(hard_limit=24_000, trigger_margin=4_000, recent_message_retention_count=2,
                   maximum_compaction_attempts=2, preservation_label="agent", preservation_version=1)


def orphaning(data):
    items = list(data.model_data.input)
    calls = [i for i, item in enumerate(items) if item.get("type") == "function_call"]
    if calls and items[-1].get("type") == "function_call_output":
        del items[calls[-1]]
    return ModelInputData(input=items, instructions=data.model_data.instructions)


def test_careless_filter():
    fake.run(TraceFilter(POLICY, inner=orphaning), rounds=3)


def test_compacting_filter():
    fake.run(TraceFilter(POLICY, inner=CompactionFilter(POLICY)), rounds=8)
'''


def test_an_agents_sdk_session_with_an_orphaning_filter_fails_and_ours_passes(pytester):
    pytest.importorskip("agents")
    fakes = (pathlib.Path(__file__).parent / "fake_openai_agents.py").read_text(encoding="utf-8")
    pytester.makepyfile(fake_openai_agents=fakes, test_sdk=AGENTS_SDK)
    traces = pytester.path / "traces"
    result = pytester.runpytest("--hc-trace", str(traces), "-k", "careless")
    result.assert_outcomes(passed=1, deselected=1)
    assert result.ret == 1, "the test passed, the session fails on the violation"
    result.stdout.fnmatch_lines(["*test_careless_filter-*.jsonl*TRC-3*openai-agents-1*model-2*"])
    result = pytester.runpytest("--hc-trace", str(pytester.path / "clean"), "-k", "compacting")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["1 trace(s) in *: 9 call(s) checked, 9 observed, 0 violation(s)*"])
