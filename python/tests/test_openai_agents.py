"""hybrid_compaction.openai_agents on real OpenAI Agents SDK runs (``openai-agents`` from PyPI,
its own ``ScriptedModel``, no network): CompactionFilter's runs check clean with every call
recorded, kept items go back as the same objects, and a filter that orphans a tool result,
recorded by TraceFilter, fails the check with its TRC clause."""

import asyncio
import io
import json

import pytest

pytest.importorskip("agents")

import hybrid_compaction as hc  # noqa: E402
from hybrid_compaction.openai_agents import CompactionFilter, TraceFilter  # noqa: E402
from agents.extensions import ToolOutputTrimmer  # noqa: E402
from agents.run_config import ModelInputData  # noqa: E402

import fake_openai_agents as fake  # noqa: E402

POLICY = hc.policy(hard_limit=24_000, trigger_margin=4_000, recent_message_retention_count=2,
                   maximum_compaction_attempts=2, preservation_label="agent", preservation_version=1)


def observed(text):
    return [r for r in map(json.loads, text.splitlines()[1:]) if r["type"] == "observed"]


def count(refs):
    return sum(r[1] - r[0] + 1 if isinstance(r, list) else 1 for r in refs)


def orphaning(data):
    """A careless filter: drops the latest call item, leaving its output orphaned."""
    items = list(data.model_data.input)
    calls = [i for i, item in enumerate(items) if isinstance(item, dict)
             and item.get("type") == "function_call"]
    if calls and items[-1].get("type") == "function_call_output":
        del items[calls[-1]]
    return ModelInputData(input=items, instructions=data.model_data.instructions)


def test_compaction_filter_bounds_every_call_and_checks_clean_with_the_recorder_around_it():
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        compaction = CompactionFilter(POLICY, trace=trace)
        recorder = TraceFilter(POLICY, trace=trace, inner=compaction)
        result, model = fake.run(recorder, rounds=8)
        compaction.close()
        recorder.close()
    assert result.final_output == fake.ANSWER
    text = buffer.getvalue()
    report = hc.check(text)
    assert (report["calls"], report["observed"], report["violations"]) == (18, 9, [])
    assert len(model.calls) == 9
    shortened = [r for r in observed(text) if count(r["sent"]["refs"]) < count(r["history"]["refs"])]
    assert shortened, "the run was long enough to compact"
    for call in model.calls:  # what the model received, measured by the policy's estimator
        entries = hc.from_openai_responses(call.input, call.system_instructions)
        assert hc.evaluate(entries, POLICY)["estimatedSize"] <= POLICY["hardLimit"]
        assert call.system_instructions == fake.INSTRUCTIONS


def test_kept_items_go_back_as_the_same_objects_and_the_reducer_gets_the_items():
    seen = []

    def reducer(items):
        seen.append(items)
        return items[-3:]

    items = [{"role": "user", "content": "q"}]
    for k in range(4):
        items.append({"type": "function_call", "call_id": f"c{k}", "name": "search",
                      "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": f"c{k}", "output": "é" * 3000})
    data = _data(items, "be brief")
    out = asyncio.run(CompactionFilter(POLICY, reducer)(data))
    assert isinstance(out, ModelInputData) and out.instructions == "be brief"
    assert all(any(o is i for i in items) for o in out.input), "kept items are the caller's"
    assert len(out.input) < len(items)
    assert seen and all(isinstance(i, dict) for i in seen[0])
    assert not any(i.get("role") == "system" for i in seen[0]), "the instructions stay apart"


def test_an_async_reducer_is_awaited():
    awaited = []

    async def reducer(items):
        await asyncio.sleep(0)
        awaited.append(len(items))
        return items[-2:]

    items = [{"role": "user", "content": "x" * 30_000}]
    for k in range(3):
        items += [{"role": "assistant", "content": f"answer {k}"}, {"role": "user", "content": f"q{k}"}]
    out = asyncio.run(CompactionFilter(POLICY, reducer)(_data(items, None)))
    assert awaited == [7] and out.input[-1] is items[-1] and len(out.input) < len(items)


def test_an_orphaning_filter_recorded_by_trace_filter_fails_the_check_with_its_clause():
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        recorder = TraceFilter(POLICY, trace=trace, inner=orphaning)
        result, _ = fake.run(recorder, rounds=3)
        recorder.close()
    assert result.final_output == fake.ANSWER
    report = hc.check(buffer.getvalue())
    assert report["observed"] == 4
    assert "TRC-3" in {v["clause"] for v in report["violations"]}


def test_the_sdks_tool_output_trimmer_is_judged_and_a_run_without_inner_sends_as_is():
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        recorder = TraceFilter(POLICY, trace=trace, inner=ToolOutputTrimmer(recent_turns=1))
        fake.run(recorder, rounds=8)
        plain = TraceFilter(POLICY, trace=trace, run="plain")
        fake.run(plain, rounds=8)
    report = hc.check(buffer.getvalue())
    assert report["observed"] == 18
    # The trimmer never touches what follows the last user message (all of a one-question run):
    # every call is sent whole, so past the hard limit the calls break TRC-2.
    assert {v["clause"] for v in report["violations"]} == {"TRC-2"}


def test_trace_is_a_writer_or_a_path_and_anything_else_is_refused_at_construction(tmp_path):
    path = tmp_path / "run.jsonl"
    compaction = CompactionFilter(POLICY, trace=str(path))
    fake.run(compaction, rounds=4)
    compaction.close()
    assert hc.check(path)["violations"] == []
    recorder = TraceFilter(trace=tmp_path / "observed.jsonl")
    fake.run(recorder, rounds=2)
    recorder.close()
    assert hc.check(tmp_path / "observed.jsonl")["observed"] == 3
    for bad in (42, io.StringIO(), b"run.jsonl"):
        with pytest.raises(TypeError, match="trace must be a hybrid_compaction.TraceWriter"):
            CompactionFilter(POLICY, trace=bad)
        with pytest.raises(TypeError, match="trace must be"):
            TraceFilter(trace=bad)
    with pytest.raises(TypeError, match="inner must be a call_model_input_filter"):
        TraceFilter(inner="trim")
    with pytest.raises(hc.HybridCompactionError):
        CompactionFilter({**POLICY, "hardLimit": -1})
    with pytest.raises(TypeError, match="estimator"):
        CompactionFilter(POLICY, estimator=3)
    with pytest.raises(TypeError, match="reducer must be callable"):
        CompactionFilter(POLICY, "summarize")


def _data(items, instructions):
    from agents.run_config import CallModelData

    return CallModelData(model_data=ModelInputData(input=list(items), instructions=instructions),
                         agent=None, context=None)


def test_an_async_run_is_compacted_alike():
    from agents import RunConfig, Runner

    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        compaction = CompactionFilter(POLICY, trace=trace)
        agent, model = fake.agent(rounds=8)
        config = RunConfig(call_model_input_filter=TraceFilter(POLICY, trace=trace, inner=compaction),
                           tracing_disabled=True)
        result = asyncio.run(Runner.run(agent, fake.QUESTION, run_config=config, max_turns=10))
        compaction.close()
    assert result.final_output == fake.ANSWER and len(model.calls) == 9
    report = hc.check(buffer.getvalue())
    assert (report["calls"], report["observed"], report["violations"]) == (18, 9, [])


def test_a_conversation_of_several_runs_the_trimmer_rewrites_results_ours_checks_clean():
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        results, model = fake.conversation(TraceFilter(POLICY, trace=trace, run="trimmer",
                                                       inner=ToolOutputTrimmer()), rounds=9)
        compaction = CompactionFilter(POLICY, trace=trace)
        fake.conversation(TraceFilter(POLICY, trace=trace, run="ours", inner=compaction), rounds=9)
        compaction.close()
    assert [r.final_output for r in results] == [fake.answer(q) for q in range(3)]
    assert len(model.calls) == 12
    report = hc.check(buffer.getvalue())
    assert report["observed"] == 24
    # The third question's calls get the first question's outputs trimmed: a tool result the
    # history never held (SPEC VER-1 check 2).
    assert {v["run"] for v in report["violations"]} == {"trimmer-1"}, "ours checks clean"
    forged = [v for v in report["violations"] if v["clause"] == "TRC-3"]
    assert {v["call"] for v in forged} == {"model-9", "model-10", "model-11", "model-12"}
    assert all("ForgedStructuralEntry" in v["message"] for v in forged)
