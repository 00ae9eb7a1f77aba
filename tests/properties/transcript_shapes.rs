//! SPEC TRN-7 .. TRN-14: the message shapes real chat models and LangChain return, mapped
//! faithfully or refused with their place; nothing dropped silently; call ids reused across
//! turns paired as the provider pairs them.

use hybrid_compaction::model::entry::{Entry, EntryKind};
use hybrid_compaction::model::error::ErrorKind;
use hybrid_compaction::model::message::{BlockKind, FunctionCall, Message, Part};
use hybrid_compaction::model::value::{RawJson, Value, ValueMap};
use hybrid_compaction::transcript::{
    parse_messages, Transcript, TranscriptError, TranscriptFormat,
};
use serde_json::{json, Value as Json};

fn parse(format: &str, messages: Json) -> Result<Transcript, TranscriptError> {
    Transcript::parse(&json!({"format": format, "messages": messages}))
}

fn messages(t: &Transcript) -> Vec<Message> {
    t.entries().iter().map(|e| e.message().clone()).collect()
}

fn refused(r: Result<Transcript, TranscriptError>) -> (ErrorKind, String) {
    let e = r.expect_err("refused");
    (e.kind(), e.to_string())
}

fn call(id: &str, name: &str, args: Json) -> Part {
    let Json::Object(m) = args else {
        panic!("args")
    };
    Part::Call(FunctionCall {
        call_id: id.into(),
        name: name.into(),
        arguments: Some(hybrid_compaction::transcript::json::value_map(&m)),
        informational_only: false,
    })
}

/// SPEC TRN-7: a string, a `(role, content)` pair, a role dict, a constructor envelope and the
/// chunk types are the messages `convert_to_messages` makes of them.
#[test]
fn trn_7_every_shape_convert_to_messages_accepts_is_a_message() {
    let t = parse(
        "langchain",
        json!([
            "hi",
            ["ai", "hello"],
            ["system", "be brief"],
            {"role": "user", "content": "and you?"},
            {"role": "developer", "content": "metric units"},
            {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
             "kwargs": {"content": "fine", "id": "a-9"}},
            {"type": "HumanMessageChunk", "content": "chunked"},
            {"type": "AIMessageChunk", "content": "", "tool_calls": [{"id": "c1", "name": "f", "args": {}}],
             "tool_call_chunks": [{"id": "c1", "name": "f", "args": "{}", "index": 0}]},
            {"type": "ToolMessageChunk", "content": "ok", "tool_call_id": "c1"},
            {"type": "SystemMessageChunk", "content": "late rule"},
        ]),
    )
    .unwrap();
    let roles: Vec<&str> = t
        .entries()
        .iter()
        .map(|e| e.message().role.as_str())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "system",
            "user",
            "system",
            "assistant",
            "user",
            "assistant",
            "tool",
            "system"
        ]
    );
    assert_eq!(t.entries()[5].id().as_str(), "a-9");
    assert_eq!(
        t.entries()[7].message().parts,
        vec![Part::text(""), call("c1", "f", json!({}))]
    );
    assert_eq!(t.entries()[8].kind(), EntryKind::ToolExchange);
    // Rendered back verbatim, shapes included (TRN-6).
    let back = t.render(t.entries());
    assert_eq!(back["messages"][0], json!("hi"));
    assert_eq!(back["messages"][1], json!(["ai", "hello"]));
    // A RemoveMessage is a state edit, not a message; an unknown role names its place.
    let (kind, text) = refused(parse(
        "langchain",
        json!(["x", {"type": "remove", "id": "m1"}]),
    ));
    assert_eq!(kind, ErrorKind::NotSupported);
    assert!(text.starts_with("$.messages[1]:"), "{text}");
    let (kind, text) = refused(parse("langchain", json!([["critic", "no"]])));
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(text.starts_with("$.messages[0][0]:"), "{text}");
    let (_, text) = refused(parse("langchain", json!([["human", "a", "b"]])));
    assert!(text.contains("(role, content) pair"), "{text}");
}

/// SPEC TRN-8: ChatAnthropic's tool turn (text and `tool_use` blocks beside `tool_calls`) is one
/// text part and one call per tool call; a block naming no tool call is a call of its own.
#[test]
fn trn_8_tool_use_blocks_beside_tool_calls_are_those_calls() {
    let turn = json!({"type": "ai", "id": "run-1",
        "content": [{"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}}],
        "tool_calls": [{"id": "toolu_1", "name": "weather", "args": {"city": "Paris"}, "type": "tool_call"}]});
    let t = parse("langchain", json!([turn])).unwrap();
    assert_eq!(
        t.entries()[0].message().parts,
        vec![
            Part::text("Checking."),
            call("toolu_1", "weather", json!({"city": "Paris"}))
        ]
    );
    assert_eq!(t.entries()[0].kind(), EntryKind::ToolExchange);
    let lone = json!({"type": "ai", "content": [
        {"type": "tool_use", "id": "toolu_2", "name": "f", "input": {"n": 1}},
        {"type": "tool_call", "id": "c3", "name": "g", "args": {}}]});
    let t = parse("langchain", json!([lone])).unwrap();
    assert_eq!(
        t.entries()[0].message().parts,
        vec![
            call("toolu_2", "f", json!({"n": 1})),
            call("c3", "g", json!({}))
        ]
    );
    // A thinking block is not text: a reasoning block after the text, carried as given (TRN-15).
    let thinking = json!({"type": "ai", "content": [{"type": "text", "text": "a"},
        {"type": "thinking", "thinking": "hmm", "signature": "x"}]});
    let t = parse("langchain", json!([thinking.clone()])).unwrap();
    assert_eq!(
        messages(&t)[0].parts,
        [
            Part::text("a"),
            Part::block(
                BlockKind::Reasoning,
                "thinking",
                r#"{"signature":"x","thinking":"hmm","type":"thinking"}"#
            )
        ]
    );
    assert_eq!(t.render(t.entries())["messages"], json!([thinking]));
}

/// SPEC TRN-9, TRN-18: `invalid_tool_calls` are calls whose arguments are their text, after the
/// message's `tool_calls`; one without an id is refused at its place, never an empty message.
#[test]
fn trn_9_invalid_tool_calls_are_calls_with_text_arguments() {
    let m = json!({"type": "ai", "content": "", "tool_calls": [{"id": "c0", "name": "g", "args": {}}],
        "invalid_tool_calls": [
        {"id": "c1", "name": "f", "args": "{not json", "error": "bad", "type": "invalid_tool_call"},
        {"id": "c2", "name": "f", "args": null, "error": null, "type": "invalid_tool_call"}]});
    let t = parse("langchain", json!([m])).unwrap();
    let text = ValueMap::from([("arguments".into(), Value::String("{not json".into()))]);
    assert_eq!(
        t.entries()[0].message().parts,
        vec![
            Part::text(""),
            call("c0", "g", json!({})),
            Part::Call(FunctionCall {
                call_id: "c1".into(),
                name: "f".into(),
                arguments: Some(text),
                informational_only: false,
            }),
            Part::Call(FunctionCall {
                call_id: "c2".into(),
                name: "f".into(),
                arguments: None,
                informational_only: false,
            }),
        ]
    );
    assert_eq!(t.render(t.entries())["messages"], json!([m]));
    let anonymous = json!({"type": "ai", "content": "", "invalid_tool_calls": [
        {"id": null, "name": "f", "args": "x", "error": "bad", "type": "invalid_tool_call"}]});
    let (kind, text) = refused(parse("langchain", json!([anonymous])));
    assert_eq!(kind, ErrorKind::NotSupported);
    assert!(
        text.starts_with("$.messages[0].invalid_tool_calls[0]:"),
        "{text}"
    );
    let empty = json!({"type": "ai", "content": "x", "invalid_tool_calls": []});
    parse("langchain", json!([empty])).unwrap();
}

fn error_value(text: &str) -> Value {
    let mut m = ValueMap::new();
    m.insert("content".into(), Value::String(text.into()));
    m.insert("status".into(), Value::String("error".into()));
    Value::Map(m)
}

/// SPEC TRN-10: a failed tool result carries its status as content; `artifact` is not content.
#[test]
fn trn_10_tool_error_status_is_content_and_artifact_is_not() {
    let call_msg =
        json!({"type": "ai", "content": "", "tool_calls": [{"id": "c1", "name": "f", "args": {}}]});
    let failed = json!({"type": "tool", "content": "boom", "tool_call_id": "c1", "status": "error",
        "artifact": {"raw": [1, 2, 3]}});
    let t = parse("langchain", json!([call_msg.clone(), failed])).unwrap();
    assert_eq!(
        t.entries()[1].message().parts,
        vec![Part::result("c1", error_value("boom"))]
    );
    let ok = json!({"type": "tool", "content": "boom", "tool_call_id": "c1", "status": "success",
        "artifact": "anything"});
    let plain = parse("langchain", json!([call_msg.clone(), ok])).unwrap();
    assert_eq!(
        plain.entries()[1].message().parts,
        vec![Part::result("c1", Value::String("boom".into()))]
    );
    // So a changed status is a changed message (VER-2), not an unchanged one.
    assert_ne!(t.entries()[1].message(), plain.entries()[1].message());
    let bad = json!({"type": "tool", "content": "x", "tool_call_id": "c1", "status": "failed"});
    let (kind, text) = refused(parse("langchain", json!([call_msg, bad])));
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(text.starts_with("$.messages[1].status:"), "{text}");
    let anthropic = parse(
        "anthropic-messages",
        json!([
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": true}]}
        ]),
    )
    .unwrap();
    assert_eq!(
        anthropic.entries()[1].message().parts,
        vec![Part::result("t1", error_value("boom"))]
    );
}

/// SPEC TRN-11: OpenAI's message-level `refusal` is text; `audio` is refused at its place.
#[test]
fn trn_11_openai_refusal_is_text_and_audio_is_refused() {
    let t = parse(
        "openai-chat",
        json!([{"role": "assistant", "content": null, "refusal": "I can't help with that."}]),
    )
    .unwrap();
    assert_eq!(
        t.entries()[0].message().text_content(),
        "I can't help with that."
    );
    let (kind, text) = refused(parse(
        "openai-chat",
        json!([{"role": "user", "content": "hi"},
               {"role": "assistant", "content": "", "audio": {"id": "audio_1"}}]),
    ));
    assert_eq!(kind, ErrorKind::NotSupported);
    assert!(text.starts_with("$.messages[1].audio:"), "{text}");
    parse(
        "openai-chat",
        json!([{"role": "assistant", "content": "x", "audio": null}]),
    )
    .unwrap();
}

/// SPEC TRN-12: integers beyond 64 bits in OpenAI argument text keep their digits.
#[test]
fn trn_12_integers_beyond_64_bits_stay_exact() {
    let args = |n: &str| {
        json!([{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function",
            "function": {"name": "f", "arguments": format!("{{\"n\": {n}, \"m\": [{n}], \"x\": 1.50, \"i\": -7}}")}}]}])
    };
    let a = parse("openai-chat", args("1180591620717411303424")).unwrap();
    let b = parse("openai-chat", args("1180591620717411303425")).unwrap();
    assert_ne!(
        messages(&a),
        messages(&b),
        "2**70 and 2**70 + 1 are different arguments"
    );
    let Part::Call(c) = &a.entries()[0].message().parts[0] else {
        panic!("a call")
    };
    let m = c.arguments.as_ref().unwrap();
    let raw = |s: &str| Value::RawJson(RawJson::new(s).unwrap());
    assert_eq!(m["n"], raw("1180591620717411303424"));
    assert_eq!(m["m"], Value::List(vec![raw("1180591620717411303424")]));
    // Numbers within range keep the rendering they always had.
    assert_eq!(m["x"], raw("1.5"));
    assert_eq!(m["i"], raw("-7"));
    let neg = parse("openai-chat", args("-1180591620717411303424")).unwrap();
    let Part::Call(c) = &neg.entries()[0].message().parts[0] else {
        panic!("a call")
    };
    assert_eq!(
        c.arguments.as_ref().unwrap()["n"],
        raw("-1180591620717411303424")
    );
}

/// SPEC TRN-13: an override CLS-1 would not consult is an error naming it, never ignored.
#[test]
fn trn_13_overrides_that_cannot_apply_are_refused() {
    let ms = json!([{"role": "system", "content": "rules"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function",
            "function": {"name": "f", "arguments": "{}"}}]}]);
    for (index, what) in [("0", "SystemInstruction"), ("2", "ToolExchange")] {
        let r = Transcript::parse(
            &json!({"format": "openai-chat", "messages": ms, "overrides": {index: "OptionalContext"}}),
        );
        let (kind, text) = refused(r);
        assert_eq!(kind, ErrorKind::InvalidArgument);
        assert!(text.starts_with(&format!("$.overrides.{index}:")), "{text}");
        assert!(text.contains(what), "{text}");
    }
    let ok = Transcript::parse(
        &json!({"format": "openai-chat", "messages": ms, "overrides": {"1": "OptionalContext"}}),
    )
    .unwrap();
    assert_eq!(ok.entries()[1].kind(), EntryKind::OptionalContext);
}

/// The ids the call and result parts of `t`'s entries carry, per entry.
fn call_ids(t: &Transcript) -> Vec<Vec<String>> {
    t.entries()
        .iter()
        .map(|e| {
            e.message()
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::Call(c) => Some(c.call_id.clone()),
                    Part::Result(r) => Some(r.call_id.clone()),
                    Part::Text(_) | Part::Block(_) => None,
                })
                .collect()
        })
        .collect()
}

/// SPEC TRN-14: a call id used again after its call was answered is paired by position: the
/// second call and its result carry `<id>` U+001F `2`, so the exchanges are two complete groups;
/// the caller's ids come back when rendering (kept messages verbatim, a new entry's parts mapped
/// back) and when reading a reducer's answer; a reassembled transcript pairs as a parsed one;
/// ambiguous reuse is refused at its message.
#[test]
fn trn_14_reused_call_ids_are_paired_by_position() {
    let call = |id: &str, city: &str| {
        json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": id, "type": "function", "function": {"name": "weather", "arguments": format!("{{\"city\": \"{city}\"}}")}}]})
    };
    let result =
        |id: &str, text: &str| json!({"role": "tool", "tool_call_id": id, "content": text});
    let ms = json!([{"role": "user", "content": "Paris?"}, call("call_X", "Paris"), result("call_X", "sunny"),
        {"role": "user", "content": "Köln?"}, call("call_X", "Köln"), result("call_X", "rain")]);
    let t = parse("openai-chat", ms.clone()).unwrap();
    let x2 = "call_X\u{1f}2".to_owned();
    let none: Vec<String> = Vec::new();
    assert_eq!(
        call_ids(&t),
        [
            none.clone(),
            vec!["call_X".into()],
            vec!["call_X".into()],
            none,
            vec![x2.clone()],
            vec![x2.clone()]
        ]
    );
    let analysis = hybrid_compaction::engine::exchange::analyze(t.entries());
    assert!(analysis.is_sequence_valid(), "{analysis:?}");
    assert_eq!(analysis.groups.len(), 2);
    // Rendered back: the caller's JSON, verbatim.
    assert_eq!(t.render(t.entries())["messages"], ms);
    // A new entry (a reducer's) with a paired id renders with the caller's id.
    let new = Entry::new(
        "n",
        EntryKind::ToolExchange,
        Message::new(
            "tool",
            vec![Part::result(x2.clone(), Value::String("rain".into()))],
        ),
    )
    .unwrap();
    assert_eq!(
        t.render(&[new])["messages"],
        json!([result("call_X", "rain")])
    );
    // A reducer's answer holding the second exchange alone is read with its paired ids.
    let answer = t.read_answer(&[ms[4].clone(), ms[5].clone()]).unwrap();
    assert_eq!(
        answer.messages,
        [
            t.entries()[4].message().clone(),
            t.entries()[5].message().clone()
        ]
    );
    assert_eq!(answer.items, [1, 1]);
    assert_eq!(
        parse_messages(TranscriptFormat::OpenAiChat, &[ms[4].clone()]).unwrap()[0],
        {
            let mut m = t.entries()[4].message().clone();
            if let Part::Call(c) = &mut m.parts[0] {
                c.call_id = "call_X".into();
            }
            m
        }
    );
    // Reassembled from per-message adaptations: the same entries.
    let adaptations: Vec<_> = ms
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, m)| {
            hybrid_compaction::transcript::reuse::Adaptation::message(
                TranscriptFormat::OpenAiChat,
                i,
                m,
            )
            .unwrap()
        })
        .collect();
    let again =
        Transcript::reassemble(TranscriptFormat::OpenAiChat, &adaptations, None, None).unwrap();
    assert_eq!(again.entries(), t.entries());
    // Ambiguous: reused before the earlier call has a result; one id for two calls of a message.
    let early = json!([call("c", "a"), call("c", "b"), result("c", "x")]);
    let (kind, text) = refused(parse("openai-chat", early));
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(
        text.starts_with("$.messages[1]: the call id \"c\" is used again"),
        "{text}"
    );
    let twice = json!([{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "f", "input": {}}, {"type": "tool_use", "id": "t", "name": "g", "input": {}}]}]);
    let (kind, text) = refused(parse("anthropic-messages", twice));
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(
        text.starts_with("$.messages[0]: the call id \"t\" names two calls"),
        "{text}"
    );
}

/// The node's view of a transcript: its messages adapted with its classifier are its entries;
/// `parse_messages` reads a reducer's answer with the same mapping; `position` finds a kept
/// message.
#[test]
fn trn_5_classifier_replays_ids_and_kinds() {
    let t = Transcript::parse(
        &json!({"format": "langchain", "overrides": {"1": "Summary"}, "messages": [
        {"type": "system", "content": "rules"}, {"type": "ai", "content": "so far"},
        {"type": "human", "content": "q", "id": "h1"}]}),
    )
    .unwrap();
    let mut c = t.classifier();
    let again = hybrid_compaction::engine::classify::adapt(&t.messages(), &mut c).expect("adapts");
    assert_eq!(again, t.entries());
    let answer = parse_messages(TranscriptFormat::LangChain, &[json!("q")]).unwrap();
    assert_eq!(answer[0], t.entries()[2].message().clone());
    let kept: &Entry = &t.entries()[2];
    assert_eq!(t.position(kept), Some(2));
}

/// SPEC TRN-16: OpenAI's deprecated `function_call` and the `function` message answering it are
/// one exchange (paired by name and position, TRN-14); members the format does not define are
/// blocks (`reasoning_content` reasoning, any other `Other`), so they are sized and kept.
#[test]
fn trn_16_deprecated_function_calls_and_undefined_members_are_kept() {
    let ms = json!([
        {"role": "assistant", "content": null, "function_call": {"name": "f", "arguments": "{\"a\": 1}"}},
        {"role": "function", "name": "f", "content": "one"},
        {"role": "assistant", "content": null, "function_call": {"name": "f", "arguments": "{}"}},
        {"role": "function", "name": "f", "content": "two"},
        {"role": "assistant", "content": "ok", "reasoning_content": "think", "provider_specific_fields": null, "x": [1]}
    ]);
    let t = parse("openai-chat", ms.clone()).unwrap();
    let analysis = hybrid_compaction::engine::exchange::analyze(t.entries());
    assert!(analysis.is_sequence_valid(), "{analysis:?}");
    assert_eq!(analysis.groups.len(), 2);
    assert_eq!(
        call_ids(&t)[..4],
        [
            vec!["function_call:f".to_owned()],
            vec!["function_call:f".to_owned()],
            vec!["function_call:f\u{1f}2".to_owned()],
            vec!["function_call:f\u{1f}2".to_owned()]
        ]
    );
    assert_eq!(t.entries()[1].message().role, "tool");
    assert_eq!(
        messages(&t)[4].parts,
        [
            Part::text("ok"),
            Part::block(
                BlockKind::Reasoning,
                "reasoning_content",
                r#"{"reasoning_content":"think"}"#
            ),
            Part::block(BlockKind::Other, "x", r#"{"x":[1]}"#),
        ]
    );
    assert_eq!(t.render(t.entries())["messages"], ms);
}
