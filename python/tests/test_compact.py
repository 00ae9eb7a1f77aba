"""hc.compact / hc.Compactor: the library's per-call path with a Python reducer (SPEC NODE-2 ..
NODE-5, BRG-1 .. BRG-3, ASM-7, ASM-9), messages back in the caller's format and types, traces
that check clean, and the corpus's upstream-reducer vectors answered the same as by the wire."""

import asyncio
import io
import json
import subprocess
import sys

import pytest

import hybrid_compaction as hc
from hybrid_compaction import vectors

from conftest import VECTORS

lc = pytest.importorskip("langchain_core.messages")


def policy(hard, margin=10, attempts=2, retention=1, estimator="utf8"):
    return hc.policy(hard_limit=hard, trigger_margin=margin, recent_message_retention_count=retention,
                     maximum_compaction_attempts=attempts, preservation_label="t",
                     preservation_version=1, estimator=estimator)


def history():
    """System, an old exchange with a tool call and its (large) result, the latest question."""
    return [
        lc.SystemMessage("Be brief."),
        lc.HumanMessage("What is the weather in Paris?", id="h1"),
        lc.AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "c1"}], id="a1"),
        lc.ToolMessage("Paris: 18C and sunny all week. " * 8, tool_call_id="c1", id="t1"),
        lc.AIMessage("It is 18C and sunny.", id="a2"),
        lc.HumanMessage("And tomorrow?", id="h2"),
    ]


def test_a_valid_smaller_proposal_is_reduced_and_langchain_objects_come_back():
    h = history()
    calls = []

    def summarize(messages):
        calls.append(messages)
        return [messages[0], lc.AIMessage("Earlier: Paris is 18C and sunny."), messages[-1]]

    r = hc.compact(h, policy(200), reducer=summarize)
    assert r.outcome == "Reduced" and len(calls) == 1
    assert calls[0] == h and all(a is b for a, b in zip(calls[0], h))  # the caller's own objects
    assert r.messages[0] is h[0] and r.messages[2] is h[-1]
    assert isinstance(r.messages[1], lc.AIMessage) and r.messages[1].content.startswith("Earlier")
    assert r.assembly["stages"] == ["SnapshotCaptured", "ReducerAttempt", "SnapshotCaptured", "SnapshotCaptured"]
    assert r.diagnostics["outcome"] == "Reduced" and r.diagnostics["measurementUnit"] == "Utf8Bytes"
    assert [e["kind"] for e in r.events] == ["Started", "Completed", "Composed"]


def test_a_proposal_that_orphans_a_tool_result_ends_the_attempts():
    h = history()
    calls = []

    def drop_the_call(messages):
        calls.append(1)
        return [m for m in messages if m.id != "a1"]  # keeps the result, drops its call

    r = hc.compact(h, policy(300, attempts=3), reducer=drop_the_call)  # 339 bytes, trigger 290
    assert r.outcome == "PreservationFallback" and len(calls) == 1  # ASM-7: invalid ends them
    assert "DeterministicFallback" in r.assembly["stages"]
    sent = hc.from_langchain(r.messages)
    report = hc.run({"op": "analyze", "entries": sent})["analysis"]
    assert report["orphanResultEntryIds"] == [] and report["orphanedCallEntryIds"] == []
    assert all(any(m is o for o in h) for m in r.messages)


def test_valid_proposals_over_the_hard_limit_use_every_attempt_then_fall_back():
    h = history()
    calls = []

    shrink = iter(["x" * 20, "x" * 10, "x" * 5])

    def always_over(messages):  # valid and smaller each time (310, 300, 295), never <= 150
        calls.append(1)
        return [messages[0], lc.AIMessage(next(shrink)), *[m for m in messages if m.id in ("a1", "t1", "h2")]]

    r = hc.compact(h, policy(150, attempts=3), reducer=always_over)
    assert len(calls) == 3 and r.outcome == "PreservationFallback"
    assert r.assembly["attemptCount"] == 3


def test_required_content_that_cannot_fit_terminates():
    # Required: the system (9 bytes) and the latest question (13): more than a hard limit of 20.
    with pytest.raises(hc.CompactionTerminated) as e:
        hc.compact(history(), policy(20, margin=5), reducer=lambda ms: ms[-2:])
    assert e.value.outcome == "Irreducible" and e.value.hard_limit == 20
    assert e.value.final_size == 22 and isinstance(e.value, RuntimeError)


def test_reducer_failures_are_the_specs():
    class Boom(Exception):
        pass

    def raises(_):
        raise Boom("no model")

    with pytest.raises(hc.SpecError) as e:
        hc.compact(history(), policy(200), reducer=raises)
    assert e.value.kind == "ReducerFailed" and isinstance(e.value.__cause__, Boom)
    with pytest.raises(hc.SpecError) as e:
        hc.compact(history(), policy(200), reducer=lambda ms: None)
    assert e.value.kind == "ReducerContract"
    with pytest.raises(hc.SpecError) as e:  # BRG-3: invented tool content
        hc.compact(history(), policy(200), reducer=lambda ms: [
            ms[0], lc.AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "zz"}]), ms[-1]])
    assert e.value.kind == "ReducerContract"
    with pytest.raises(hc.SpecError) as e:
        hc.compact(history(), policy(200), reducer=lambda ms: [lc.RemoveMessage(id="m1")])
    assert e.value.kind == "ReducerFailed"
    assert isinstance(e.value.__cause__, hc.UnsupportedContentError)
    assert e.value.__cause__.path == "messages[0]"
    with pytest.raises(hc.SpecError) as e:
        hc.compact(history(), policy(200), reducer=lambda ms: "not a list")
    assert e.value.kind == "ReducerFailed" and isinstance(e.value.__cause__, TypeError)


def test_below_the_trigger_nothing_is_called_and_openai_dicts_come_back():
    h = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    r = hc.compact(h, policy(1000), reducer=lambda ms: pytest.fail("not called"))
    assert r.outcome == "WithinLimit" and r.messages == h and r.messages[1] is h[1]
    with pytest.raises(hc.UnsupportedContentError) as e:
        hc.compact([{"role": "assistant", "content": "", "audio": {"id": "a1"}}], policy(1000))
    assert e.value.path == "messages[0].audio"
    with pytest.raises(TypeError):
        hc.compact("hello", policy(1000))


def test_overrides_that_are_not_a_mapping_are_refused_naming_them():
    h = [{"role": "user", "content": "hi"}]
    compactor = hc.Compactor(policy(1000))
    calls = [
        lambda ov: hc.compact(h, policy(1000), overrides=ov),
        lambda ov: compactor.compact(h, overrides=ov),  # the repeat-call path
        lambda ov: hc.from_openai(h, overrides=ov),
        lambda ov: hc.entries_from_messages([{"role": "user", "parts": [{"text": "hi"}]}], overrides=ov),
    ]
    for call in calls:
        for bad in ([1], "Summary", 5):
            with pytest.raises(TypeError) as e:
                call(bad)
            assert str(e.value).startswith("overrides must be a mapping of message index to entry kind, got ")
        # a mapping is the converter's to judge, with the member's path
        with pytest.raises((hc.TranscriptError, hc.InvalidCaseError)) as r:
            call({"x": "Summary"})
        assert "x" in str(r.value)


def test_anthropic_with_a_system_prompt_keeps_it():
    ms = [{"role": "user", "content": "old question " * 10},
          {"role": "assistant", "content": "old answer " * 10},
          {"role": "user", "content": "latest?"}]
    seen = []

    def keep_last(messages):
        seen.append(messages)
        return messages[-1:]

    r = hc.compact(ms, policy(120), reducer=keep_last, system="Be brief.")
    assert seen[0] == ms  # the reducer sees the messages, the system is the node's
    assert r.outcome == "Reduced" and r.system == "Be brief." and r.messages == [ms[-1]]


def responses_items():
    """A Responses input (TRN-17): a question, reasoning, a function call and its large output,
    the answer, the next question."""
    return [
        {"role": "user", "content": "Weather in Zürich?"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA" * 20},
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "weather",
         "arguments": '{"city": "Zürich"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "Zürich: 12 °C. " * 20},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "12 °C.", "annotations": []}]},
        {"role": "user", "content": [{"type": "input_text", "text": "And tomorrow?"}]},
    ]


def test_responses_items_with_instructions_are_detected_kept_and_compacted():
    items = responses_items()
    whole = hc.compact(items, policy(10**6), system="Be brief.")
    assert whole.format == "openai-responses" and whole.outcome == "WithinLimit"
    assert all(a is b for a, b in zip(whole.messages, items)) and whole.system == "Be brief."
    seen = []

    def keep_last(messages):
        seen.append(messages)
        return messages[-1:]

    r = hc.compact(items, policy(200), reducer=keep_last, system="Be brief.")
    assert seen[0] == items  # the reducer sees the items, the instructions are the node's
    assert r.outcome == "Reduced" and r.system == "Be brief." and r.messages == [items[-1]]
    # a call without its output is refused (EXC): the fallback answers instead
    broken = hc.compact(items, policy(200), reducer=lambda ms: ms[1:3] + ms[-1:], system="Be brief.")
    assert broken.outcome == "PreservationFallback" and broken.messages == [items[-1]]
    assert broken.assembly["stages"].count("ReducerAttempt") == 1
    # a compactor's repeat calls (kept conversions, TRN-17 instructions included) answer the same
    with hc.Compactor(policy(200), reducer=keep_last) as c:
        for _ in range(2):
            again = c.compact(items, system="Be brief.")
            assert again.messages == r.messages and again.system == "Be brief."
        assert c.compact(items, system="Be briefer.").system == "Be briefer."


def test_a_system_prompt_only_where_the_format_has_one():
    with pytest.raises(ValueError, match="openai-responses"):
        hc.compact([{"role": "user", "content": "hi"}], policy(100), system="x", format="openai-chat")
    with pytest.raises(ValueError, match="openai-responses"):
        hc.compact([{"role": "user", "content": "hi"}], policy(100), format="responses-api")


def test_tokens_estimator_by_the_cli_spelling():
    r = hc.compact(history(), policy(1000, estimator="tokens:o200k_base"))
    assert r.diagnostics["measurementUnit"] == "EstimatedTokens"
    r = hc.compact(history(), policy(1000), estimator="tokens:cl100k_base")
    assert r.diagnostics["measurementUnit"] == "EstimatedTokens"


def test_a_compactor_memoizes_and_records_one_run_that_checks_clean(tmp_path):
    path = tmp_path / "trace.jsonl"
    h = history()
    with hc.TraceWriter(path) as w, hc.Compactor(
            policy(200), reducer=lambda ms: [ms[0], lc.AIMessage("summary"), ms[-1]], trace=w) as c:
        c.compact(h[:2])
        first = c.memo_stats["misses"]
        c.compact(h[:2] + [lc.AIMessage("It is sunny.", id="x")])
        assert c.memo_stats["misses"] - first == 1  # only the new message is estimated (EST-7)
        r = c.compact(h)
        assert r.outcome == "Reduced"
    report = hc.check(path.read_text(encoding="utf-8"))
    assert report["violations"] == [] and report["calls"] == 3 and report["runs"] == 1
    out = subprocess.run([sys.executable, "-m", "hybrid_compaction", "check", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_terminations_and_failures_are_recorded_too():
    buf = io.StringIO()
    w = hc.TraceWriter(buf, content=True)
    with pytest.raises(hc.CompactionTerminated):
        hc.compact(history(), policy(20, margin=5), reducer=lambda ms: ms[-2:], trace=w)
    with pytest.raises(hc.SpecError):
        hc.compact(history(), policy(200), reducer=lambda ms: None, trace=w)
    lines = buf.getvalue().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["trace"] == 3  # observed records possible
    assert hc.check(buf.getvalue())["violations"] == []


def test_acompact_awaits_an_async_reducer():
    async def summarize(messages):
        await asyncio.sleep(0)
        return [messages[0], lc.AIMessage("summary"), messages[-1]]

    async def main():
        c = hc.Compactor(policy(200), reducer=summarize)
        return await asyncio.gather(c.acompact(history()), c.acompact(history()))

    for r in asyncio.run(main()):
        assert r.outcome == "Reduced" and r.messages[1].content == "summary"


# --- the corpus: every vector with an upstream reducer that a transcript can express ---------

def _vectors():
    out = []
    for name in ("bridge.json", "generated.json"):
        for v in vectors.load(str(VECTORS / name)):
            if v.case.get("op") == "assemble" and v.case.get("reducer", {}).get("kind") == "upstream":
                out.append(v)
    return out


def _message(m):
    """A wire message (or entry) as a LangChain dict, or None when LangChain cannot say it."""
    parts = m.get("parts", [{"text": m["text"]}] if "text" in m else [])
    role = m.get("role")
    calls = [p["call"] for p in parts if "call" in p]
    results = [p["result"] for p in parts if "result" in p]
    texts = [p["text"] for p in parts if "text" in p]
    if any(c.get("informationalOnly") or c.get("arguments") for c in calls):
        return None
    if results:
        if len(results) != 1 or texts or not isinstance(results[0].get("value"), str):
            return None
        return {"type": "tool", "content": results[0]["value"], "tool_call_id": results[0]["callId"]}
    role = role or ("assistant" if calls else "user")
    kind = {"system": "system", "user": "human", "assistant": "ai"}.get(role)
    if kind is None or len(texts) > 1 or (calls and role != "assistant"):
        return None
    d = {"type": kind, "content": texts[0] if texts else ""}
    if not texts and not calls:
        return None  # no parts at all: LangChain content is at least ""
    if calls:
        d["tool_calls"] = [{"id": c["callId"], "name": c["name"], "args": {}} for c in calls]
    return d


def _expressible(v):
    if "entries" not in v.case or "snapshots" in v.case or "cancel" in v.case:
        return None
    ms, overrides = [], {}
    for i, e in enumerate(v.case["entries"]):
        if e["kind"] == "RecoverableContextSegment":
            return None
        m = _message({**e, "role": e.get("role") or ("system" if e["kind"] == "SystemInstruction" else None)})
        if m is None:
            return None
        m["id"] = e["id"]
        ms.append(m)
        if e["kind"] in ("AuthoritativeSessionState", "ApprovalSecurityState", "Summary", "OptionalContext"):
            overrides[i] = e["kind"]
    kinds = [e["kind"] for e in hc.from_langchain(ms, overrides=overrides)]
    if kinds != [e["kind"] for e in v.case["entries"]]:
        return None
    for step in v.case["reducer"]["steps"]:
        if isinstance(step, dict) and "return" in step and any(_message(m) is None for m in step["return"]):
            return None
    return ms, overrides


CORPUS = _vectors()


def test_the_corpus_has_upstream_vectors_to_compare():
    assert sum(_expressible(v) is not None for v in CORPUS) >= 15


@pytest.mark.parametrize("v", CORPUS, ids=lambda v: f"tc{v.tc_id}")
def test_a_python_reducer_answers_as_the_wire(v):
    shaped = _expressible(v)
    if shaped is None:
        pytest.skip("a snapshot schedule, a cancellation, a recovered segment or content LangChain cannot hold")
    ms, overrides = shaped
    steps = iter(v.case["reducer"]["steps"])

    def reducer(messages):
        step = next(steps, "echo")
        if step == "echo":
            return messages
        if step == "null":
            return None
        if "fail" in step:
            raise RuntimeError(step["fail"])
        return [_message(m) for m in step["return"]]

    expected = v.expected
    try:
        r = hc.compact(ms, v.case["policy"], reducer=reducer, format="langchain", overrides=overrides)
    except hc.CompactionTerminated as e:
        a = expected["assembly"]
        assert (e.outcome, e.final_size, e.hard_limit) == (
            a["outcome"], a["finalEstimatedSize"], a["hardLimit"])
        return
    except hc.SpecError as e:
        assert e.kind == expected["error"]["kind"]
        return
    assert "error" not in expected, expected
    assert vectors.first_difference(expected["assembly"], r.assembly) is None
    assert vectors.first_difference(expected["diagnostics"], r.diagnostics) is None
    kept = [m["id"] for m in r.messages if "id" in m]
    assert kept == [i for i in expected["assembly"]["finalEntryIds"] if not i.startswith("upstream-summary-")]


def test_a_call_id_reused_across_turns_is_paired_and_a_reducer_keeping_its_second_use_is_read_back():
    # SPEC TRN-14: call_X answered, later a new call_X answered (as tau-bench's agent writes it).
    def call(city):
        return {"role": "assistant", "content": None, "tool_calls": [{"id": "call_X", "type": "function",
                "function": {"name": "weather", "arguments": json.dumps({"city": city})}}]}

    history = [
        {"role": "user", "content": "Paris? " + "x" * 400},
        call("Paris"),
        {"role": "tool", "tool_call_id": "call_X", "content": "sunny " + "y" * 400},
        {"role": "user", "content": "Köln?"},
        call("Köln"),
        {"role": "tool", "tool_call_id": "call_X", "content": "rain"},
    ]
    policy = {"hardLimit": 300, "triggerMargin": 20, "recentMessageRetentionCount": 1,
              "maximumCompactionAttempts": 1, "preservationLabel": "p", "preservationVersion": 1,
              "estimator": {"kind": "utf8"}}
    fits = hc.compact(history, {**policy, "hardLimit": 100000})
    assert fits.outcome == "WithinLimit" and all(a is b for a, b in zip(fits.messages, history))
    # The reducer keeps the last turn: its second call_X is the history's, read back paired.
    c = hc.compact(history, policy, reducer=lambda ms: ms[3:])
    assert c.outcome == "Reduced", c
    assert all(a is b for a, b in zip(c.messages, history[3:])) and len(c.messages) == 3


def test_a_turn_is_kept_or_dropped_whole_and_its_items_are_the_callers():
    """SPEC TRN-23: a reasoning item and the call it precedes are one turn: a reducer that keeps
    the call but drops its reasoning item keeps the turn whole (the caller's own objects), and
    Anthropic's run of assistant messages answered by one user message is one exchange."""
    items = responses_items()
    r = hc.compact(items, policy(570), reducer=lambda ms: ms[2:], system="Be brief.")
    assert r.outcome == "Reduced"
    assert r.messages == items[1:] and all(a is b for a, b in zip(r.messages, items[1:]))
    run = [
        {"role": "user", "content": "Refund order 123, bitte. " * 8},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "search", "input": {}}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c2", "name": "load", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "refund"},
            {"type": "tool_result", "tool_use_id": "c2", "content": "loaded"}]},
        {"role": "assistant", "content": "Erstattet."},
    ]
    whole = hc.compact(run, policy(10**6), format="anthropic-messages", system="Kurz.")
    assert whole.outcome == "WithinLimit" and all(a is b for a, b in zip(whole.messages, run))
    cut = hc.compact(run, policy(230), reducer=lambda ms: ms[1:], format="anthropic-messages",
                     system="Kurz.")
    assert cut.outcome == "Reduced" and all(a is b for a, b in zip(cut.messages, run[1:]))
    assert len(cut.messages) == 4 and cut.system == "Kurz."
