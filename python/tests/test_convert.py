"""Converters: OpenAI chat dicts and LangChain message objects to wire messages and entries."""

import json

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


def test_openai_messages_map_the_closed_content_model():
    ms = hc.openai_messages(TRANSCRIPT)
    assert ms[0] == {"role": "system", "parts": [{"text": "You are a travel agent. Be brief."}]}
    assert ms[1] == {"role": "user", "author": "ann", "parts": [{"text": "Weather in Paris and Oslo tomorrow?"}]}
    assert ms[2] == {
        "role": "assistant",
        "parts": [
            {"call": {"callId": "call_1", "name": "weather",
                      "arguments": {"city": "Paris", "days": {"raw": "1"}}}},
            {"call": {"callId": "call_2", "name": "weather",
                      "arguments": {"city": "Oslo", "opts": {"map": {"units": "C", "alerts": True}}}}},
        ],
    }
    assert ms[3] == {"role": "tool", "parts": [{"result": {"callId": "call_1", "value": "Paris: 18C, sun"}}]}
    assert ms[4]["parts"] == [{"result": {"callId": "call_2", "value": "Oslo: 9C, rain"}}]


def test_from_openai_adapts_with_the_default_classifier():
    entries = hc.from_openai(TRANSCRIPT)
    assert [e["kind"] for e in entries] == [
        "SystemInstruction", "ConversationalMessage", "ToolExchange", "ToolExchange",
        "ToolExchange", "ConversationalMessage", "ConversationalMessage",
    ]
    # CLS-2: "{sha256 of the rendering}:{n}", the same on the model and the engine.
    assert all(len(e["id"].split(":")[0]) == 64 and e["id"].endswith(":0") for e in entries)
    assert entries == hc.from_openai(TRANSCRIPT, implementation="model")
    analysis = hc.run({"op": "analyze", "entries": entries})["analysis"]
    assert analysis["sequenceValid"] is True
    assert analysis["groups"][0]["allEntryIds"] == [entries[2]["id"], entries[3]["id"], entries[4]["id"]]


def test_repeated_messages_get_distinct_ids():
    entries = hc.from_openai([{"role": "user", "content": "ok"}, {"role": "user", "content": "ok"}])
    assert entries[0]["id"].split(":")[0] == entries[1]["id"].split(":")[0]
    assert [e["id"][-2:] for e in entries] == [":0", ":1"]


def _policy(limit=10_000):
    return hc.policy(hard_limit=limit, trigger_margin=limit // 10, recent_message_retention_count=1,
                     maximum_compaction_attempts=2, preservation_label="travel", preservation_version=1)


def test_verifying_a_compacted_openai_transcript():
    original = hc.from_openai(TRANSCRIPT)
    summary = {"role": "assistant", "content": "Earlier: Paris 18C sun, Oslo 9C rain."}
    # A compaction that summarises the tool round trip and keeps the system and latest messages.
    good = [TRANSCRIPT[0], summary, TRANSCRIPT[6]]
    result = hc.verify(original, hc.from_openai(good), _policy())
    assert result["outcome"] == "Accepted", result
    # One that drops the system instruction is rejected, and says what is missing.
    bad = hc.verify(original, hc.from_openai([summary, TRANSCRIPT[6]]), _policy())
    assert bad["outcome"] == "Rejected"
    assert bad["missingRequiredEntryIds"] == [original[0]["id"]]
    # One that keeps a tool call without its result breaks the tool exchange.
    torn = hc.verify(original, hc.from_openai(TRANSCRIPT[:4] + TRANSCRIPT[5:]), _policy())
    assert torn["outcome"] == "Rejected", torn


def test_a_transcript_over_the_trigger():
    evaluation = hc.evaluate(hc.from_openai(TRANSCRIPT), _policy(limit=200))
    assert evaluation["triggered"] is True
    assert evaluation["estimatedSize"] == sum(evaluation["entrySizes"])


def test_developer_is_system_and_refusals_are_text():
    ms = hc.openai_messages([
        {"role": "developer", "content": [{"type": "text", "text": "rules"}, "more"]},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "I can't help with that."}]},
    ])
    assert ms == [
        {"role": "system", "parts": [{"text": "rules"}, {"text": "more"}]},
        {"role": "assistant", "parts": [{"text": "I can't help with that."}]},
    ]
    assert hc.from_openai([{"role": "developer", "content": "rules"}])[0]["kind"] == "SystemInstruction"


def test_images_are_outside_the_closed_content_model():
    image = {"role": "user", "content": [{"type": "text", "text": "what is this?"},
                                         {"type": "image_url", "image_url": {"url": "data:..."}}]}
    assert hc.openai_messages([image])[0]["parts"][1] == {"unsupported": "image_url"}
    with pytest.raises(hc.SpecError) as e:
        hc.from_openai([image])
    assert e.value.kind == "NotSupported"


@pytest.mark.parametrize(
    "message, where",
    [
        ({"content": "no role"}, "messages[0].role"),
        ({"role": "assistant", "tool_calls": [{"id": "k", "type": "function",
          "function": {"name": "f"}}]}, "messages[0].tool_calls[0].function.arguments"),
        ({"role": "assistant", "tool_calls": [{"id": "k", "type": "function",
          "function": {"name": "f", "arguments": '{"x": NaN}'}}]}, "messages[0].tool_calls[0].function.arguments"),
        ({"role": "user", "content": 3}, "messages[0].content"),
        ({"role": "assistant", "tool_calls": [{"id": "k", "type": "function",
          "function": {"name": "f", "arguments": "{not json"}}]}, "messages[0].tool_calls[0].function.arguments"),
        ({"role": "assistant", "tool_calls": [{"id": "k", "type": "function",
          "function": {"name": "f", "arguments": "[1]"}}]}, "messages[0].tool_calls[0].function.arguments"),
        ({"role": "tool", "content": "x"}, "messages[0].tool_call_id"),
    ],
)
def test_what_the_spec_cannot_express_is_a_value_error(message, where):
    with pytest.raises(ValueError) as e:
        hc.openai_messages([message])
    assert str(e.value).startswith(where)


def test_legacy_function_calling_is_not_supported():
    for m in ({"role": "function", "name": "f", "content": "x"},
              {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}}):
        assert hc.openai_messages([m])[0]["parts"] == [{"unsupported": "function_call"}]
        with pytest.raises(hc.SpecError) as e:
            hc.from_openai([m])
        assert e.value.kind == "NotSupported"


def test_empty_arguments_and_empty_content():
    # TRN-2: a content string is one text part, even an empty one; blank arguments are absent.
    ms = hc.openai_messages([{"role": "assistant", "content": "", "tool_calls": [
        {"id": "k", "type": "function", "function": {"name": "now", "arguments": " "}},
        {"id": "j", "type": "function", "function": {"name": "now", "arguments": "{}"}}]}])
    assert ms[0]["parts"] == [{"text": ""}, {"call": {"callId": "k", "name": "now"}},
                              {"call": {"callId": "j", "name": "now", "arguments": {}}}]
    tool = hc.openai_messages([{"role": "tool", "tool_call_id": "k", "content": None}])
    assert tool[0]["parts"] == [{"result": {"callId": "k", "value": ""}}]


@pytest.mark.parametrize(
    "text, raw",
    [
        ("1", "1"), ("-7", "-7"), ("18446744073709551615", "18446744073709551615"),
        ("1.0", "1.0"), ("1.50", "1.5"), ("1e2", "100.0"), ("2.5", "2.5"), ("-0.0", "-0.0"),
        ("0.0001", "0.0001"), ("0.00001234", "0.00001234"), ("1e-7", "1e-7"),
        ("1.5e-7", "1.5e-7"), ("1e16", "1e16"), ("1234e13", "1.234e16"),
        ("123456789012345680", "123456789012345680"), ("1e300", "1e300"),
        ("18446744073709551616", "1.8446744073709552e19"),
    ],
)
def test_argument_numbers_are_raw_json_in_the_oracle_s_rendering(text, raw):
    # TRN-1: a number becomes raw JSON holding its text as the oracle's JSON reader (serde_json,
    # shortest round-trip floats) renders it.
    ms = hc.openai_messages([{"role": "assistant", "content": None, "tool_calls": [
        {"id": "k", "type": "function", "function": {"name": "f", "arguments": f'{{"n": {text}}}'}}]}])
    assert ms[0]["parts"][0]["call"]["arguments"] == {"n": {"raw": raw}}


def test_wire_value_tags_what_json_cannot_say():
    assert hc.wire_value({"a": [1, 1.5, True, None, float("nan"), float("-inf")]}) == {
        "map": {"a": [1, 1.5, True, None, {"f64": "NaN"}, {"f64": "-Infinity"}]}
    }
    with pytest.raises(ValueError):
        hc.wire_value(2**64)
    with pytest.raises(ValueError):
        hc.wire_value({1: "x"})
    # Round trip through the oracle: a result carrying the tagged value is accepted as-is.
    v = hc.wire_value({"n": 1, "x": 1.0, "flag": True, "bad": float("inf")})
    out = hc.run({"op": "entry", "entries": [{"id": "r", "kind": "ToolExchange",
                  "parts": [{"result": {"callId": "k", "value": v}}]}]})
    assert out["entries"][0]["kind"] == "ToolExchange"


# ---- LangChain (optional: langchain_core is not a dependency of the package) -------------------

def test_langchain_duck_typed_without_langchain_installed():
    class Msg:
        def __init__(self, type, content, **kw):
            self.type, self.content = type, content
            self.__dict__.update(kw)

    objects = [
        Msg("system", "rules"),
        Msg("ai", "", tool_calls=[{"name": "f", "args": {"q": "x", "n": 2}, "id": "k"}]),
        Msg("tool", [{"type": "text", "text": "found"}], tool_call_id="k"),
        Msg("chat", "be careful", role="developer"),
    ]
    expected = [
        {"role": "system", "parts": [{"text": "rules"}]},
        {"role": "assistant", "parts": [{"text": ""}, {"call": {"callId": "k", "name": "f",
                                                                "arguments": {"q": "x", "n": {"raw": "2"}}}}]},
        {"role": "tool", "parts": [{"result": {"callId": "k", "value": "found"}}]},
        {"role": "system", "parts": [{"text": "be careful"}]},
    ]
    assert hc.langchain_messages(objects) == expected
    # The dict forms: model_dump() and messages_to_dict() items.
    dumps = [{"type": o.type, **{k: v for k, v in vars(o).items() if k != "type"}} for o in objects]
    assert hc.langchain_messages(dumps) == expected
    assert hc.langchain_messages([{"type": d["type"], "data": d} for d in dumps]) == expected
    assert hc.langchain_messages([Msg("function", "x")])[0]["parts"] == [{"unsupported": "function"}]
    with pytest.raises(ValueError):
        hc.langchain_messages([Msg("nope", "x")])


def test_langchain_ids_are_the_entry_ids_when_given():
    # TRN-5: a LangChain message's own non-blank id is its entry id; the others keep CLS-2 ids.
    ms = [{"type": "human", "content": "hi", "id": "run-1"}, {"type": "ai", "content": "hello", "id": " "}]
    entries = hc.from_langchain(ms)
    assert entries[0]["id"] == "run-1"
    assert entries[1]["id"] == hc.from_openai([{"role": "user", "content": "hi"},
                                               {"role": "assistant", "content": "hello"}])[1]["id"]


def test_given_ids_and_overrides():
    ms = [{"role": "system", "content": "rules"}, {"role": "user", "content": "state: paid"},
          {"role": "user", "content": "hi"}]
    entries = hc.from_openai(ms, ids=["s", None, "u"], overrides={1: "AuthoritativeSessionState"})
    assert [e["id"] for e in entries][::2] == ["s", "u"]
    assert [e["kind"] for e in entries] == ["SystemInstruction", "AuthoritativeSessionState",
                                            "ConversationalMessage"]
    with pytest.raises(hc.SpecError) as e:
        hc.from_openai(ms, overrides={1: "ToolExchange"})
    assert e.value.kind == "InvalidOperation"
    with pytest.raises(ValueError):
        hc.from_openai(ms, ids=["s"])


def test_langchain_objects_convert_like_their_openai_equivalents():
    lc = pytest.importorskip("langchain_core.messages")
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
    # AIMessage content is a string, "" when the message only calls tools (TRN-4: one text part).
    openai = [dict(m) for m in TRANSCRIPT]
    openai[2]["content"] = ""
    assert hc.langchain_messages(messages) == hc.openai_messages(openai)
    assert hc.from_langchain(messages) == hc.from_openai(openai)
    assert hc.langchain_messages([m.model_dump() for m in messages]) == hc.openai_messages(openai)
    # And LangChain's own OpenAI conversion agrees with ours.
    if hasattr(lc, "convert_to_openai_messages"):
        assert hc.openai_messages(lc.convert_to_openai_messages(messages)) == hc.openai_messages(openai)
