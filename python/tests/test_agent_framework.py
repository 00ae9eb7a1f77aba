"""hybrid_compaction.agent_framework on real Agent Framework runs (agent-framework-core
from PyPI; a scripted fake chat client, no network): the recorder at the per-call seam (chat
middleware) judges the framework's own compaction strategies at every intermediate tool round;
CompactionMiddleware's runs check clean."""

import asyncio
import io
import json

import pytest

pytest.importorskip("agent_framework")

import hybrid_compaction as hc  # noqa: E402
from hybrid_compaction.agent_framework import CompactionMiddleware, TraceMiddleware, to_langchain  # noqa: E402
from agent_framework import (  # noqa: E402
    Content,
    Message,
    SlidingWindowStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
)

import fake_af  # noqa: E402

POLICY = hc.policy(hard_limit=24_000, trigger_margin=4_000, recent_message_retention_count=2,
                   maximum_compaction_attempts=2, preservation_label="agent", preservation_version=1)


class Bytes:
    """The framework's tokenizer protocol, counting UTF-8 bytes (the policy's unit)."""

    def count_tokens(self, text):
        return len(text.encode("utf-8"))


def run(middleware_for, strategy=None, rounds=10):
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        middleware = middleware_for(trace)
        agent = fake_af.agent(middleware, rounds=rounds, compaction_strategy=strategy)
        response = asyncio.run(agent.run(fake_af.QUESTION))
    return buffer.getvalue(), response, agent


def observed(text):
    return [r for r in map(json.loads, text.splitlines()[1:]) if r["type"] == "observed"]


def count(refs):
    return sum(r[1] - r[0] + 1 if isinstance(r, list) else 1 for r in refs)


def test_every_model_call_of_the_tool_loop_is_judged_and_no_compaction_breaks_the_hard_limit():
    text, response, agent = run(lambda t: [TraceMiddleware(policy=POLICY, trace=t)])
    assert response.text == "Here is what I found."
    report = hc.check(text)
    assert report["observed"] == agent.client.calls == 11
    assert {v["clause"] for v in report["violations"]} == {"TRC-2"}
    first = report["violations"][0]
    assert first["call"] == "model-8" and first["message"].startswith("sent size ")


def test_the_frameworks_truncation_is_judged_at_the_call_where_it_drops_required_entries():
    text, _, _ = run(lambda t: [TraceMiddleware(policy=POLICY, trace=t)],
                     TruncationStrategy(max_n=6, compact_to=3))
    records = observed(text)
    cut = [r for r in records if count(r["sent"]["refs"]) < count(r["history"]["refs"])]
    assert cut, "the strategy ran"
    assert count(cut[0]["history"]["refs"]) >= 7, "the history is what the agent held before it"
    report = hc.check(text)
    assert ("TRC-4", "model-4") in {(v["clause"], v["call"]) for v in report["violations"]}


def test_a_sliding_window_and_a_token_budget_are_judged_too():
    sliding, _, _ = run(lambda t: [TraceMiddleware(policy=POLICY, trace=t)],
                        SlidingWindowStrategy(keep_last_groups=2))
    assert hc.check(sliding)["violations"] == []
    budget = TokenBudgetComposedStrategy(token_budget=20_000, tokenizer=Bytes(),
                                         strategies=[ToolResultCompactionStrategy(keep_last_tool_call_groups=1)])
    text, _, _ = run(lambda t: [TraceMiddleware(policy=POLICY, trace=t)], budget)
    report = hc.check(text)
    assert report["observed"] == 11
    assert all(v["call"].startswith("model-") for v in report["violations"])


def test_compaction_middleware_checks_clean_and_the_recorder_changes_nothing():
    def both(trace):
        return [TraceMiddleware(policy=POLICY, trace=trace), CompactionMiddleware(POLICY, trace=trace)]

    text, response, agent = run(both)
    report = hc.check(text)
    assert (report["calls"], report["observed"], report["violations"]) == (22, 11, [])
    shortened = [r for r in observed(text) if count(r["sent"]["refs"]) < count(r["history"]["refs"])]
    assert shortened, "the run was long enough to compact"
    plain = asyncio.run(fake_af.agent([CompactionMiddleware(POLICY)], rounds=10).run(fake_af.QUESTION))
    assert plain.text == response.text


def test_framework_messages_map_to_the_converters_shapes():
    messages = [
        Message("user", ["hi"]),
        Message("assistant", [Content.from_function_call(call_id="c1", name="f", arguments='{"a": 1}'),
                              Content.from_function_call(call_id="c2", name="g", arguments={"b": 2})]),
        Message("tool", [Content.from_function_result(call_id="c1", result="one"),
                         Content.from_function_result(call_id="c2", result={"x": [1]})],
                message_id="t"),
    ]
    written, sources = to_langchain(messages, "be brief")
    assert [d["type"] for d in written] == ["system", "human", "ai", "tool", "tool"]
    assert written[2]["tool_calls"][0]["args"] == {"a": 1}
    assert [d.get("id") for d in written[3:]] == ["t#0", "t#1"]
    assert written[4]["content"] == '{"x": [1]}'
    assert sources == [(None, 0), (0, 0), (1, 0), (2, 0), (2, 1)]
    entries = hc.from_langchain(written)
    assert [e["kind"] for e in entries] == ["SystemInstruction", "ConversationalMessage",
                                           "ToolExchange", "ToolExchange", "ToolExchange"]


def test_an_image_is_carried_as_a_media_block():
    # SPEC TRN-15: content beyond text is a block, carried as given (no refusal).
    image = Message("user", [Content.from_uri("https://example.com/a.png", media_type="image/png")])
    out = io.StringIO()
    with hc.TraceWriter(out) as trace:
        written, _ = to_langchain([image])
        trace.observe(written, written)
    parts = hc.from_langchain(written)[0]["parts"]
    assert [p["block"]["kind"] for p in parts if "block" in p] == ["Media"]
    assert hc.check(out.getvalue())["violations"] == []
