"""One rule for every ``trace=`` parameter (the core API and each integration): a
``TraceWriter`` or the path of a trace file (``str`` or ``os.PathLike``), anything else a
``TypeError`` naming the parameter at construction; policies and estimators are refused at
construction too."""

import asyncio
import io
import pathlib

import pytest

import hybrid_compaction as hc

POLICY = hc.policy(hard_limit=24_000, trigger_margin=4_000, recent_message_retention_count=2,
                   maximum_compaction_attempts=2, preservation_label="agent", preservation_version=1)
BAD_TRACES = (42, io.StringIO(), b"run.jsonl", ["run.jsonl"])
MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "é" * 30_000},
            {"role": "assistant", "content": "ok"}, {"role": "user", "content": "and now?"}]


@pytest.mark.parametrize("bad", BAD_TRACES, ids=lambda b: type(b).__name__)
def test_the_core_api_refuses_a_trace_that_is_neither_a_writer_nor_a_path(bad):
    with pytest.raises(TypeError, match=r"^trace must be a hybrid_compaction\.TraceWriter or the "
                                        r"path of a trace file \(str or os\.PathLike\), got "):
        hc.Compactor(POLICY, trace=bad)
    with pytest.raises(TypeError, match="^trace must be"):
        hc.compact(MESSAGES, POLICY, trace=bad)


def test_a_path_is_opened_at_construction_and_closed_with_the_compactor(tmp_path):
    path = tmp_path / "run.jsonl"
    compactor = hc.Compactor(POLICY, trace=path)
    assert path.exists(), "opened at construction"
    compactor.compact(MESSAGES)
    compactor.compact(MESSAGES + [{"role": "assistant", "content": "done"}])
    compactor.close()
    report = hc.check(path)
    assert (report["calls"], report["violations"]) == (2, [])
    hc.compact(MESSAGES, POLICY, trace=str(tmp_path / "one.jsonl"))
    assert hc.check(tmp_path / "one.jsonl")["calls"] == 1


def test_nothing_is_opened_for_a_compactor_refused_for_its_policy_or_estimator(tmp_path):
    path = tmp_path / "never.jsonl"
    with pytest.raises(hc.HybridCompactionError):
        hc.Compactor({**POLICY, "hardLimit": -1}, trace=path)
    with pytest.raises(TypeError, match="^estimator must be a name or a dict"):
        hc.Compactor(POLICY, estimator=3, trace=path)
    with pytest.raises(hc.HybridCompactionError):
        hc.Compactor(POLICY, estimator="no-such-estimator", trace=path)
    with pytest.raises(TypeError, match="^policy must be a policy dict"):
        hc.Compactor("POLICY", trace=path)
    assert not path.exists()


def test_langchain_middleware_take_a_path_and_refuse_anything_else(tmp_path, monkeypatch):
    pytest.importorskip("langchain.agents")
    import fake_agents
    from hybrid_compaction.langchain import CompactionMiddleware, TraceMiddleware, pre_model_hook

    monkeypatch.chdir(tmp_path)
    compaction = CompactionMiddleware(POLICY, trace="run.jsonl")
    recorder = TraceMiddleware(policy=POLICY, trace=pathlib.Path("observed.jsonl"))
    fake_agents.agent([recorder, compaction], rounds=8).invoke(fake_agents.question())
    compaction.close()
    recorder.close()
    report = hc.check(tmp_path / "run.jsonl")
    assert report["calls"] == 9 and report["violations"] == []
    assert hc.check(tmp_path / "observed.jsonl")["observed"] == 9
    for bad in BAD_TRACES:
        with pytest.raises(TypeError, match="^trace must be"):
            CompactionMiddleware(POLICY, trace=bad)
        with pytest.raises(TypeError, match="^trace must be"):
            TraceMiddleware(trace=bad)
        with pytest.raises(TypeError, match="^trace must be"):
            pre_model_hook(POLICY, trace=bad)
    with pytest.raises(TypeError, match="^estimator must be"):
        CompactionMiddleware(POLICY, estimator=3)
    with pytest.raises(hc.HybridCompactionError):
        TraceMiddleware(policy={**POLICY, "triggerMargin": -1}, trace="x.jsonl")


def test_agent_framework_middleware_take_a_path_and_refuse_anything_else(tmp_path):
    pytest.importorskip("agent_framework")
    import fake_af
    from hybrid_compaction.agent_framework import CompactionMiddleware, TraceMiddleware

    compaction = CompactionMiddleware(POLICY, trace=tmp_path / "run.jsonl")
    recorder = TraceMiddleware(policy=POLICY, trace=str(tmp_path / "observed.jsonl"))
    agent = fake_af.agent([recorder, compaction], rounds=8)
    asyncio.run(agent.run(fake_af.QUESTION))
    compaction.close()
    recorder.close()
    assert hc.check(tmp_path / "run.jsonl")["violations"] == []
    assert hc.check(tmp_path / "observed.jsonl")["observed"] == agent.client.calls
    for bad in BAD_TRACES:
        with pytest.raises(TypeError, match="^trace must be"):
            CompactionMiddleware(POLICY, trace=bad)
        with pytest.raises(TypeError, match="^trace must be"):
            TraceMiddleware(trace=bad)
    with pytest.raises(TypeError, match="^estimator must be"):
        CompactionMiddleware(POLICY, estimator=3)
