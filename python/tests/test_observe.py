"""hc.TraceWriter.observe: observed records (SPEC TRC-13) of any system's provider calls.

Each test records what a framework's compaction would send for a growing agent conversation
(a question, an assistant message with two parallel tool calls, their results) and checks the
trace with the package's own checker: a conformant system checks clean, each kind of damage is
flagged at its call with its clause.
"""

import io
import json

import pytest

import hybrid_compaction as hc

lc = pytest.importorskip("langchain_core.messages")
AIMessage, HumanMessage, SystemMessage, ToolMessage = (
    lc.AIMessage, lc.HumanMessage, lc.SystemMessage, lc.ToolMessage)

SYSTEM = SystemMessage("You are a research agent. Be brief. ✓")


def turn(t):
    """Turn ``t``: a question, two parallel tool calls, their results (LangChain ids)."""
    return [
        HumanMessage(f"question {t}: über café", id=f"u{t}"),
        AIMessage("", id=f"c{t}", tool_calls=[
            {"name": "search", "args": {"q": f"x{t}"}, "id": f"q{t}"},
            {"name": "fetch", "args": {"url": f"y{t}"}, "id": f"f{t}"}]),
        ToolMessage("r" * 80, tool_call_id=f"q{t}", id=f"rq{t}"),
        ToolMessage("s" * 80, tool_call_id=f"f{t}", id=f"rf{t}"),
    ]


def history(t):
    h = [SYSTEM]
    for k in range(t + 1):
        h += turn(k)
    return h


def records(text):
    return [json.loads(line) for line in text.splitlines()[1:]]


def violations(text):
    return [(v["clause"], v["call"]) for v in hc.check(text)["violations"]]


def test_a_system_that_sends_its_history_checks_clean_and_defines_each_entry_once():
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        for t in range(4):
            trace.observe(history(t), history(t), run="agent-1")
        trace.end_run("agent-1")
    text = buffer.getvalue()
    assert json.loads(text.splitlines()[0])["trace"] == 3
    report = hc.check(text)
    assert (report["calls"], report["observed"], report["violations"]) == (4, 4, [])
    defs = sum(len(r.get("defs", [])) for r in records(text))
    assert defs == len(history(3)), "every entry is defined once per run"
    assert [r["call"] for r in records(text)[:-1]] == ["model-1", "model-2", "model-3", "model-4"]
    assert "über" not in text, "redacted by default"


def test_dropping_the_ai_message_of_the_latest_tool_results_is_flagged_at_that_call():
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        trace.observe(history(0), history(0))
        h = history(1)
        trace.observe(h, [m for m in h if m.id != "c1"])
    found = violations(buffer.getvalue())
    assert ("TRC-5", "model-2") in found and ("TRC-3", "model-2") in found, found
    assert {call for _, call in found} == {"model-2"}


def test_a_message_changed_in_place_keeps_its_id_and_is_seen_as_changed():
    h = history(0)
    cleared = [m if m.id != "rq0" else ToolMessage("[cleared]", tool_call_id="q0", id="rq0")
               for m in h]
    buffer = io.StringIO()
    with hc.TraceWriter(buffer, content=True) as trace:
        trace.observe(h, cleared)
    sent = records(buffer.getvalue())[0]
    table = sent["defs"]
    assert [e["id"] for e in table].count("rq0") == 2, "the new content is a second entry"
    assert violations(buffer.getvalue()) == [("TRC-3", "model-1")]
    assert "[cleared]" in buffer.getvalue(), "content=True writes the messages"


def test_a_summary_the_framework_made_has_its_own_id_and_verifies():
    h = history(2)
    summary = HumanMessage("Here is a summary of the conversation so far: ...", id="summary-1")
    sent = [SYSTEM, summary] + turn(2)
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        trace.observe(h, sent)
    assert violations(buffer.getvalue()) == []


def test_messages_without_ids_get_stable_content_digests():
    plain = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"},
             {"role": "assistant", "content": "hello"}, {"role": "user", "content": "again"}]
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        trace.observe(plain[:2], plain[:2])
        trace.observe(plain, plain)
    first, second = records(buffer.getvalue())
    assert len(first["defs"]) == 2 and len(second["defs"]) == 2, "the same messages, the same ids"
    assert violations(buffer.getvalue()) == []


def test_a_hard_limit_and_a_token_estimator_judge_the_size():
    tight = hc.policy(hard_limit=40, trigger_margin=5, recent_message_retention_count=1,
                      maximum_compaction_attempts=1, preservation_label="t", preservation_version=1,
                      estimator="tokens:o200k_base")
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        trace.observe(history(0), history(0), policy=tight)
    record = records(buffer.getvalue())[0]
    assert record["policy"]["estimator"] == {"kind": "recorded", "unit": "EstimatedTokens"}
    assert violations(buffer.getvalue()) == [("TRC-2", "model-1")]


def test_call_records_of_compact_and_observed_records_share_one_trace():
    policy = hc.policy(hard_limit=100_000, trigger_margin=10, recent_message_retention_count=1,
                       maximum_compaction_attempts=1, preservation_label="t", preservation_version=1)
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        with hc.Compactor(policy, trace=trace) as agent:
            for t in range(2):
                sent = agent.compact(history(t)).messages
                trace.observe(history(t), sent, policy=policy, run="agent-1")
    report = hc.check(buffer.getvalue())
    assert (report["calls"], report["observed"], report["violations"]) == (4, 2, [])


def test_a_writer_closed_mid_run_leaves_whole_lines_and_refuses_more(tmp_path):
    path = tmp_path / "trace.jsonl"
    trace = hc.TraceWriter(path)
    trace.observe(history(0), history(0))
    trace.close()
    with pytest.raises(hc.TraceWriteError) as e:
        trace.observe(history(1), history(1))
    assert e.value.path == str(path) and "closed" in e.value.reason
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and len(text.splitlines()) == 2
    assert hc.check(text)["calls"] == 1
    trace.close()  # twice is harmless


def test_a_failing_stream_raises_naming_the_writer():
    class Full(io.StringIO):
        def write(self, s):
            if '"observed"' in s:
                raise OSError(28, "No space left on device")
            return super().write(s)

    trace = hc.TraceWriter(Full())
    with pytest.raises(hc.TraceWriteError, match="<stream>: .*No space left"):
        trace.observe(history(0), history(0))


def test_bad_input_is_refused_by_place_and_nothing_is_written(tmp_path):
    with pytest.raises(hc.TraceWriteError) as e:
        hc.TraceWriter(tmp_path / "missing" / "trace.jsonl")
    assert e.value.path.endswith("trace.jsonl") and "No such file" in e.value.reason
    buffer = io.StringIO()
    trace = hc.TraceWriter(buffer)
    removal = lc.RemoveMessage(id="i")
    with pytest.raises(hc.UnsupportedContentError) as u:
        trace.observe(history(0), [SYSTEM, removal])
    assert u.value.path == "sent.messages[1]"
    with pytest.raises(TypeError):
        trace.observe(history(0), history(0), policy="tight")
    with pytest.raises(hc.InvalidCaseError) as p:
        trace.observe(history(0), history(0), policy={**POLICY, "hardLimit": "big"})
    assert p.value.path.startswith("policy.hardLimit"), p.value.path
    with pytest.raises(hc.SpecError) as s:
        trace.observe(history(0), history(0), policy={**POLICY, "recentMessageRetentionCount": 0})
    assert s.value.kind == "OutOfRange"
    with pytest.raises(hc.InvalidCaseError) as d:
        trace.observe(history(0), history(0), dispatch="maybe")
    assert d.value.path == "dispatch"
    with pytest.raises(TypeError):
        trace.observe("not messages", None)
    assert len(buffer.getvalue().splitlines()) == 1, "only the header: nothing half-written"


POLICY = hc.policy(hard_limit=1000, trigger_margin=10, recent_message_retention_count=1,
                   maximum_compaction_attempts=1, preservation_label="t", preservation_version=1)


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses"])
def test_a_kept_message_equal_to_a_dropped_one_keeps_its_history_id(fmt):
    # SPEC TRC-13: messages without ids have content-hash ids counted among equal ones (CLS-2);
    # the sent ones that are the history's are identified against it, from the end, so keeping
    # the second "ok" after dropping the first is not read as a changed or missing entry.
    h = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "ok"},
         {"role": "user", "content": "b"}, {"role": "assistant", "content": "ok"},
         {"role": "user", "content": "c ✓"}]
    policy = {"hardLimit": 100000, "triggerMargin": 10, "recentMessageRetentionCount": 2,
              "maximumCompactionAttempts": 1, "preservationLabel": "t", "preservationVersion": 1,
              "estimator": {"kind": "utf8"}}
    buffer = io.StringIO()
    with hc.TraceWriter(buffer) as trace:
        trace.observe(h, h[2:], policy=policy, format=fmt)
        summary = {"role": "user", "content": "Earlier: asked a, got ok."}
        trace.observe(h, [summary] + h[2:], policy=policy, format=fmt)
        # Equal messages are told apart by position only: the kept "ok" is the latest one before
        # the next kept message (the required one here); dropping both is still flagged.
        trace.observe(h, [h[1]] + h[4:], policy=policy, format=fmt)
        trace.observe(h, [h[0]] + h[4:], policy=policy, format=fmt)
    assert violations(buffer.getvalue()) == [("TRC-3", "model-4"), ("TRC-4", "model-4")]


def test_a_split_turn_and_a_split_approval_are_flagged_and_a_pending_request_is_not():
    """SPEC TRN-23, TRN-24 in the checker: a Responses call sent without its reasoning item, an
    approval response sent without its request, are violations; a request awaiting its answer is
    sent as it is, clean."""
    user = {"role": "user", "content": "Deploy, bitte"}
    rs = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"}
    fc = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "lookup", "arguments": "{}"}
    out = {"type": "function_call_output", "call_id": "c1", "output": "found"}
    req = {"type": "mcp_approval_request", "id": "mcpr_1", "name": "deploy", "arguments": "{}",
           "server_label": "ops"}
    resp = {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True}
    history = [user, rs, fc, out, req, resp]
    policy = hc.policy(hard_limit=10**5, trigger_margin=10, recent_message_retention_count=1,
                       maximum_compaction_attempts=1, preservation_label="t", preservation_version=1)
    cases = [
        (history, history, []),
        (history, [user, fc, out, req, resp], ["TRC-3"]),
        (history, [user, rs, fc, out, resp], ["TRC-3", "TRC-4", "TRC-5"]),
        (history[:5], history[:5], []),
    ]
    for h, sent, clauses in cases:
        buffer = io.StringIO()
        with hc.TraceWriter(buffer) as trace:
            trace.observe(h, sent, format="openai-responses", policy=policy)
        assert sorted({c for c, _ in violations(buffer.getvalue())}) == clauses, sent
