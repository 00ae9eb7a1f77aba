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
                      "arguments": {"city": {"raw": '"Paris"'}, "days": {"raw": "1"}}}},
            {"call": {"callId": "call_2", "name": "weather",
                      "arguments": {"city": {"raw": '"Oslo"'},
                                    "opts": {"raw": '{"units":"C","alerts":true}'}}}},
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
        {"role": "developer", "content": [{"type": "text", "text": "rules"}]},
        {"role": "assistant", "content": None, "refusal": "I can't help with that."},
    ])
    assert ms == [
        {"role": "system", "parts": [{"text": "rules"}]},
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
        ({"role": "function", "name": "f", "content": "x"}, "messages[0]"),
        ({"role": "assistant", "function_call": {"name": "f", "arguments": "{}"}}, "messages[0]"),
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


def test_empty_arguments_and_placeholder_content():
    ms = hc.openai_messages([{"role": "assistant", "content": "", "tool_calls": [
        {"id": "k", "type": "function", "function": {"name": "now", "arguments": ""}},
        {"id": "j", "type": "function", "function": {"name": "now", "arguments": "{}"}}]}])
    assert ms[0]["parts"] == [{"call": {"callId": "k", "name": "now"}},
                              {"call": {"callId": "j", "name": "now", "arguments": {}}}]


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

    ms = hc.langchain_messages([
        Msg("system", "rules"),
        Msg("ai", "", tool_calls=[{"name": "f", "args": {"q": "x"}, "id": "k"}]),
        Msg("tool", "found", tool_call_id="k"),
    ])
    assert ms == [
        {"role": "system", "parts": [{"text": "rules"}]},
        {"role": "assistant", "parts": [{"call": {"callId": "k", "name": "f", "arguments": {"q": {"raw": '"x"'}}}}]},
        {"role": "tool", "parts": [{"result": {"callId": "k", "value": "found"}}]},
    ]
    with pytest.raises(ValueError):
        hc.langchain_messages([Msg("function", "x")])


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
    assert hc.langchain_messages(messages) == hc.openai_messages(TRANSCRIPT)
    assert hc.from_langchain(messages) == hc.from_openai(TRANSCRIPT)
    # And LangChain's own OpenAI conversion agrees with ours.
    if hasattr(lc, "convert_to_openai_messages"):
        assert hc.openai_messages(lc.convert_to_openai_messages(messages)) == hc.openai_messages(TRANSCRIPT)
