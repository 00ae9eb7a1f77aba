"""Converters: the library's one mapping (SPEC TRN-1 .. TRN-13) reached from Python, every shape
mapped or refused with its place, and the same entries as the CLI for the same transcript."""

import json
import subprocess
import sys

import pytest

import hybrid_compaction as hc

# A realistic OpenAI chat-completions transcript: system, user, an assistant turn calling two
# tools (one argument object nested), the two tool results, and the assistant's answer.
TRANSCRIPT = [
    {"role": "system", "content": "You are a travel agent. Be brief."},
    {"role": "user", "content": "Weather in Paris and Oslo tomorrow?", "name": "ann"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "weather", "arguments": '{"city": "Paris", "days": 1}'}},
            {"id": "call_2", "type": "function",
             "function": {"name": "weather", "arguments": '{"city":"Oslo","opts":{"units":"C","alerts":true}}'}},
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "Paris: 18C, sun"},
    {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "Oslo: 9C, rain"}]},
    {"role": "assistant", "content": "Paris 18C and sunny; Oslo 9C with rain."},
    {"role": "user", "content": "Thanks! And Rome?"},
]


def cli(case):
    """The command line (the oracle's own, in-process through ``python -m``) on one case."""
    out = subprocess.run([sys.executable, "-m", "hybrid_compaction", "run", "-"],
                         input=json.dumps(case), capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_openai_maps_the_closed_content_model():
    ms = hc.openai_messages(TRANSCRIPT)
    assert ms[1] == {"role": "user", "author": "ann", "parts": [{"text": "Weather in Paris and Oslo tomorrow?"}]}
    assert ms[2]["parts"] == [
        {"call": {"callId": "call_1", "name": "weather",
                  "arguments": {"city": "Paris", "days": {"raw": "1"}}}},
        {"call": {"callId": "call_2", "name": "weather",
                  "arguments": {"city": "Oslo", "opts": {"map": {"alerts": True, "units": "C"}}}}},
    ]
    assert ms[4]["parts"] == [{"result": {"callId": "call_2", "value": "Oslo: 9C, rain"}}]
    entries = hc.from_openai(TRANSCRIPT)
    assert [e["kind"] for e in entries] == [
        "SystemInstruction", "ConversationalMessage", "ToolExchange", "ToolExchange",
        "ToolExchange", "ConversationalMessage", "ConversationalMessage",
    ]
    assert all(len(e["id"].split(":")[0]) == 64 and e["id"].endswith(":0") for e in entries)


def test_entries_verify_and_evaluate_like_the_wire(demo_policy):
    entries = hc.from_openai(TRANSCRIPT)
    assert hc.verify(entries, [e["id"] for e in entries], demo_policy)["outcome"] == "Accepted"
    wire = cli({"op": "evaluate", "policy": demo_policy,
                "transcript": {"format": "openai-chat", "messages": TRANSCRIPT}})
    assert hc.evaluate(entries, demo_policy)["entrySizes"] == wire["evaluation"]["entrySizes"]


@pytest.mark.parametrize("fmt", hc.TRANSCRIPT_FORMATS)
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_same_transcript_gives_the_same_entries_as_the_cli(fmt, seed, demo_policy):
    """Over the workload generator: ids, kinds, roles and texts as the CLI's `entry` answer,
    and per-entry sizes (which read every part) as the CLI's `evaluate` of the transcript."""
    t = hc.workload(60, seed=seed, format=fmt)
    overrides = {int(k): v for k, v in t.get("overrides", {}).items()}
    if fmt == "openai-chat":
        entries = hc.from_openai(t["messages"], ids=t.get("ids"), overrides=overrides)
    elif fmt == "anthropic-messages":
        entries = hc.from_anthropic(t["messages"], t.get("system"), ids=t.get("ids"), overrides=overrides)
    elif fmt == "openai-responses":
        entries = hc.from_openai_responses(t["messages"], t.get("system"), ids=t.get("ids"), overrides=overrides)
    else:
        entries = hc.from_langchain(t["messages"], ids=t.get("ids"), overrides=overrides)
    wire = cli({"op": "entry", "transcript": t})["entries"]
    assert [(e["id"], e["kind"], e["role"]) for e in entries] == [
        (e["id"], e["kind"], e["role"]) for e in wire]
    texts = ["".join(p["text"] for p in e["parts"] if "text" in p) for e in entries]
    assert texts == [e["text"] for e in wire]
    sized = cli({"op": "evaluate", "policy": demo_policy, "transcript": t})["evaluation"]
    assert hc.evaluate(entries, demo_policy)["entrySizes"] == sized["entrySizes"]
    if fmt == "langchain":
        lc = pytest.importorskip("langchain_core.messages")
        objects = lc.convert_to_messages(t["messages"])
        assert hc.from_langchain(objects, ids=t.get("ids"), overrides=overrides) == entries


def test_anthropic_with_a_system_prompt():
    entries = hc.from_anthropic(
        [{"role": "user", "content": "Weather in Paris?"},
         {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                           {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}]},
         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "18C"}]}],
        system=[{"type": "text", "text": "Be brief."}],
    )
    assert [(e["kind"], e["role"]) for e in entries] == [
        ("SystemInstruction", "system"), ("ConversationalMessage", "user"),
        ("ToolExchange", "assistant"), ("ToolExchange", "tool")]
    assert entries[0]["parts"] == [{"text": "Be brief."}]
    assert entries[2]["parts"][1] == {"call": {"callId": "t1", "name": "weather", "arguments": {"city": "Paris"}}}


def langchain():
    return pytest.importorskip("langchain_core.messages")


def test_a_chat_anthropic_tool_turn_converts():
    lc = langchain()
    turn = lc.AIMessage(
        content=[{"type": "text", "text": "Checking."},
                 {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}}],
        tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "toolu_1"}],
        id="run-1")
    entries = hc.from_langchain([lc.HumanMessage("Weather?"), turn,
                                 lc.ToolMessage("18C", tool_call_id="toolu_1")])
    assert entries[1]["id"] == "run-1" and entries[1]["kind"] == "ToolExchange"
    assert entries[1]["parts"] == [
        {"text": "Checking."},
        {"call": {"callId": "toolu_1", "name": "weather", "arguments": {"city": "Paris"}}}]


def test_everything_convert_to_messages_accepts_converts_like_its_messages():
    lc = langchain()
    given = ["hi", ("ai", "hello"), ("system", "rules"), {"role": "user", "content": "and you?"},
             lc.AIMessageChunk(content="", tool_calls=[{"name": "f", "args": {"n": 1}, "id": "c1"}]),
             lc.ToolMessageChunk(content="ok", tool_call_id="c1"),
             lc.HumanMessageChunk(content="chunk"), lc.SystemMessageChunk(content="late")]
    ours = hc.from_langchain(given)
    theirs = hc.from_langchain(lc.convert_to_messages(given))
    assert [(e["kind"], e["role"], e["parts"]) for e in ours] == [
        (e["kind"], e["role"], e["parts"]) for e in theirs]
    dicts = lc.messages_to_dict(lc.convert_to_messages(given))
    assert [e["parts"] for e in hc.from_langchain(dicts)] == [e["parts"] for e in ours]


def refusal(call, *args, **kwargs):
    with pytest.raises(hc.TranscriptError) as e:
        call(*args, **kwargs)
    assert isinstance(e.value, ValueError)
    assert str(e.value) == f"{e.value.path}: {e.value.reason}"
    return e.value


def test_content_beyond_text_is_carried_as_blocks_and_the_rest_refused_with_its_place():
    # SPEC TRN-15: an image is a media block, carried as given (its JSON) with its token bound.
    image = {"role": "user", "content": [{"type": "text", "text": "look"},
                                         {"type": "image_url", "image_url": {"url": "data:,"}}]}
    entries = hc.from_openai([TRANSCRIPT[0], image])
    block = entries[1]["parts"][1]["block"]
    assert (block["kind"], block["type"], block["tokens"]) == ("Media", "image_url", 1445)
    assert block["json"] == image["content"][1]
    block = hc.from_anthropic([{"role": "user", "content": [{"type": "image", "source": {}}]}])[0]["parts"][0]["block"]
    assert (block["kind"], block["tokens"]) == ("Media", 1640)
    # SPEC TRN-11: a spoken reply kept by the provider cannot be sent back as given: refused.
    e = refusal(hc.from_openai, [{"role": "assistant", "content": "", "audio": {"id": "a1"}}])
    assert isinstance(e, hc.UnsupportedContentError) and e.kind == "NotSupported"
    assert e.path == "messages[0].audio"
    # SPEC TRN-16: a deprecated function_call is a call; without its arguments it is malformed.
    e = refusal(hc.from_openai, [{"role": "assistant", "content": None, "function_call": {"name": "f"}}])
    assert e.kind == "InvalidArgument" and e.path == "messages[0].function_call.arguments"


def test_arguments_given_as_text_are_carried_and_sent_back_as_given(demo_policy):
    # SPEC TRN-18: arguments a model cut off, a free-form custom tool's input, a Responses call
    # whose arguments are not JSON: providers accept them in history, so they pass through.
    chat = [
        {"role": "user", "content": "Patch it"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "edit", "arguments": '{"path": "sr'}},
            {"id": "b", "type": "custom", "custom": {"name": "apply_patch", "input": "*** Begin Patch"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "invalid JSON"},
        {"role": "tool", "tool_call_id": "b", "content": "Done"},
    ]
    calls = [p["call"] for p in hc.from_openai(chat)[1]["parts"]]
    assert calls == [{"callId": "a", "name": "edit", "arguments": {"arguments": '{"path": "sr'}},
                     {"callId": "b", "name": "apply_patch", "arguments": {"input": "*** Begin Patch"}}]
    assert hc.compact(chat, demo_policy).messages == chat
    items = [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "naïve text"},
             {"type": "function_call_output", "call_id": "c", "output": "ok"}]
    assert hc.from_openai_responses(items)[0]["parts"][0]["call"]["arguments"] == {"arguments": "naïve text"}


def test_langchain_shapes_that_cannot_be_held_are_refused_with_their_place():
    lc = langchain()
    e = refusal(hc.from_langchain, [lc.HumanMessage("hi"), lc.RemoveMessage(id="m1")])
    assert isinstance(e, hc.UnsupportedContentError) and e.path == "messages[1]"
    # SPEC TRN-9, TRN-18: a call whose arguments did not parse is a call holding its text...
    invalid = lc.AIMessage(content="", invalid_tool_calls=[
        {"name": "f", "args": "{oops", "id": "c1", "error": "bad json", "type": "invalid_tool_call"}])
    parts = hc.from_langchain([invalid])[0]["parts"]
    assert parts[-1] == {"call": {"callId": "c1", "name": "f", "arguments": {"arguments": "{oops"}}}
    # ...but one without an id cannot be answered: refused at its place.
    anonymous = lc.AIMessage(content="", invalid_tool_calls=[
        {"name": "f", "args": "{oops", "id": None, "error": "bad json", "type": "invalid_tool_call"}])
    e = refusal(hc.from_langchain, [anonymous])
    assert e.path == "messages[0].invalid_tool_calls[0]"
    # SPEC TRN-15: a thinking block is a reasoning block, not a refusal.
    thinking = lc.AIMessage(content=[{"type": "thinking", "thinking": "hmm", "signature": "s"},
                                     {"type": "text", "text": "ok"}])
    parts = hc.from_langchain([thinking])[0]["parts"]
    assert parts[0]["block"]["kind"] == "Reasoning" and parts[1] == {"text": "ok"}
    e = refusal(hc.from_langchain, [("critic", "no")])
    assert e.kind == "InvalidArgument" and e.path == "messages[0][0]"


def test_tool_error_status_is_content_and_artifact_is_not():
    lc = langchain()
    call = lc.AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}])
    failed = hc.from_langchain([call, lc.ToolMessage("boom", tool_call_id="c1", status="error",
                                                     artifact=object())])
    assert failed[1]["parts"] == [{"result": {"callId": "c1", "value": {"map": {"content": "boom", "status": "error"}}}}]
    ok = hc.from_langchain([call, lc.ToolMessage("boom", tool_call_id="c1")])
    assert ok[1]["parts"] == [{"result": {"callId": "c1", "value": "boom"}}]
    # A judge sees a changed status as a changed message.
    p = hc.policy(hard_limit=1000, trigger_margin=10, recent_message_retention_count=1,
                  maximum_compaction_attempts=1, preservation_label="t", preservation_version=1)
    assert hc.verify(failed, ok, p)["outcome"] == "Rejected"


def test_openai_refusal_is_text():
    entries = hc.from_openai([{"role": "user", "content": "x"},
                              {"role": "assistant", "content": None, "refusal": "I can't help."}])
    assert entries[1]["parts"] == [{"text": "I can't help."}]


def test_integers_beyond_64_bits_stay_exact_or_are_refused():
    def call(n):
        return {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function",
                "function": {"name": "f", "arguments": json.dumps({"n": n})}}]}
    a, b = hc.from_openai([call(2**70)]), hc.from_openai([call(2**70 + 1)])
    assert a[0]["parts"][0]["call"]["arguments"]["n"] == {"raw": str(2**70)}
    assert a != b
    lc = langchain()
    e = refusal(hc.from_langchain, [lc.AIMessage("", tool_calls=[{"name": "f", "args": {"n": 2**70}, "id": "c"}])])
    assert e.path == "messages[0].tool_calls[0].args.n" and "beyond 64 bits" in e.reason


def test_overrides_that_cannot_apply_are_refused():
    ms = [{"role": "system", "content": "rules"}, {"role": "user", "content": "state: paid"}]
    e = refusal(hc.from_openai, ms, overrides={0: "OptionalContext"})
    assert e.path == "overrides.0" and "SystemInstruction" in e.reason
    entries = hc.from_openai(ms, ids=["s", None], overrides={1: "AuthoritativeSessionState"})
    assert entries[0]["id"] == "s" and entries[1]["kind"] == "AuthoritativeSessionState"
    with pytest.raises(ValueError):
        hc.from_openai(ms, ids=["s"])


def test_a_list_is_required():
    for bad in ("hello", None, {"role": "user"}):
        with pytest.raises(TypeError):
            hc.from_openai(bad)
    with pytest.raises(TypeError):
        hc.count_tokens("hello")
    with pytest.raises(TypeError):
        hc.verify(hc.from_openai(TRANSCRIPT), "abc", hc.policy(
            hard_limit=10, trigger_margin=1, recent_message_retention_count=1,
            maximum_compaction_attempts=1, preservation_label="t", preservation_version=1))


def test_langchain_objects_convert_like_their_openai_equivalents():
    lc = langchain()
    messages = [
        lc.SystemMessage("You are a travel agent. Be brief."),
        lc.HumanMessage("Weather in Paris and Oslo tomorrow?", name="ann"),
        lc.AIMessage("", tool_calls=[
            {"name": "weather", "args": {"city": "Paris", "days": 1}, "id": "call_1"},
            {"name": "weather", "args": {"city": "Oslo", "opts": {"units": "C", "alerts": True}}, "id": "call_2"},
        ]),
        lc.ToolMessage("Paris: 18C, sun", tool_call_id="call_1"),
        lc.ToolMessage("Oslo: 9C, rain", tool_call_id="call_2"),
        lc.AIMessage("Paris 18C and sunny; Oslo 9C with rain."),
        lc.HumanMessage("Thanks! And Rome?"),
    ]
    openai = [dict(m) for m in TRANSCRIPT]
    openai[2]["content"] = ""
    assert hc.langchain_messages(messages) == hc.openai_messages(openai)
    assert hc.from_langchain(messages) == hc.from_openai(openai)
    assert hc.langchain_messages([m.model_dump() for m in messages]) == hc.openai_messages(openai)
    assert hc.openai_messages(lc.convert_to_openai_messages(messages)) == hc.openai_messages(openai)


def test_wire_value_tags_what_json_cannot_say():
    assert hc.wire_value({"a": [1, 1.5, True, None, float("nan"), float("-inf")]}) == {
        "map": {"a": [1, 1.5, True, None, {"f64": "NaN"}, {"f64": "-Infinity"}]}}
    with pytest.raises(ValueError):
        hc.wire_value(2**64)
    with pytest.raises(ValueError):
        hc.wire_value({1: "x"})


def test_ai_sdk_model_messages_convert_trn_20():
    """The Vercel AI SDK's ModelMessages as JSON (SPEC TRN-20): format ``ai-sdk``."""
    t = hc.convert.transcript([
        {"role": "system", "content": "Sei kurz."},
        {"role": "user", "content": [{"type": "text", "text": "Wetter in Zürich?"}]},
        {"role": "assistant", "content": [
            {"type": "tool-call", "toolCallId": "c1", "toolName": "weather", "input": {"city": "Zürich"}}]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "c1", "toolName": "weather",
             "output": {"type": "text", "value": "12 °C"}}]},
    ], "ai-sdk")
    entries = hc.convert._entries(t)
    assert [(e["kind"], e["role"]) for e in entries] == [
        ("SystemInstruction", "system"), ("ConversationalMessage", "user"),
        ("ToolExchange", "assistant"), ("ToolExchange", "tool")]
    with pytest.raises(ValueError, match="'gemini' or 'ai-sdk'"):
        hc.convert.transcript([], "vercel")
