//! SPEC TRN-20: the Vercel AI SDK's `ModelMessage`s, to entries and back.

use hybrid_compaction::model::entry::{Entry, EntryKind};
use hybrid_compaction::model::error::ErrorKind;
use hybrid_compaction::model::message::{BlockKind, Message, Part};
use hybrid_compaction::model::value::Value;
use hybrid_compaction::transcript::Transcript;
use proptest::prelude::*;
use serde_json::{json, Value as Json};

/// A 1 x 1 PNG, base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn refused(messages: Json) -> (ErrorKind, String) {
    let e =
        Transcript::parse(&json!({"format": "ai-sdk", "messages": messages})).expect_err("refused");
    (e.kind(), e.to_string())
}

/// What `generateText`'s `response.messages` and a user's prompt hold, as JSON.
fn ai_sdk() -> Json {
    json!({"format": "ai-sdk", "messages": [
        {"role": "system", "content": "Antworte kurz."},
        {"role": "user", "content": [
            {"type": "text", "text": "Wetter in Zürich?"},
            {"type": "image", "image": PNG, "mediaType": "image/png"},
            {"type": "file", "data": "YWJj", "mediaType": "audio/wav"}]},
        {"role": "assistant", "content": [
            {"type": "reasoning", "text": "hmm", "providerOptions": {"anthropic": {"signature": "s"}}},
            {"type": "text", "text": "Ich schaue nach."},
            {"type": "tool-call", "toolCallId": "c1", "toolName": "get_weather", "input": {"city": "Zürich"}},
            {"type": "tool-call", "toolCallId": "c2", "toolName": "shell", "input": "ls -la"},
            {"type": "tool-call", "toolCallId": "ws", "toolName": "web_search", "input": {}, "providerExecuted": true},
            {"type": "tool-result", "toolCallId": "ws", "toolName": "web_search", "output": {"type": "json", "value": []}},
            {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c2"}]},
        {"role": "tool", "content": [
            {"type": "tool-approval-response", "approvalId": "a1", "approved": true},
            {"type": "tool-result", "toolCallId": "c1", "toolName": "get_weather", "output": {"type": "text", "value": "12 °C"}},
            {"type": "tool-result", "toolCallId": "c2", "toolName": "shell", "output": {"type": "error-json", "value": {"code": 1}}}]},
        {"role": "assistant", "content": "12 °C."}
    ]})
}

/// SPEC TRN-20: each message one entry of the role's kind; parts are text, calls, results and
/// blocks of the stated kinds; an image sized by the larger rule (TRN-19); errors as TRN-10;
/// rendered back verbatim (TRN-6).
#[test]
fn trn_20_ai_sdk_messages_are_calls_results_and_blocks() {
    let input = ai_sdk();
    let t = Transcript::parse(&input).unwrap();
    let kinds: Vec<EntryKind> = t.entries().iter().map(Entry::kind).collect();
    assert_eq!(
        kinds,
        [
            EntryKind::SystemInstruction,
            EntryKind::ConversationalMessage,
            EntryKind::ToolExchange,
            EntryKind::ToolExchange,
            EntryKind::ConversationalMessage
        ]
    );
    let m = |i: usize| t.entries()[i].message().clone();
    let blocks = |msg: &Message| -> Vec<(BlockKind, String, Option<u32>)> {
        msg.parts
            .iter()
            .filter_map(|p| match p {
                Part::Block(b) => Some((b.kind, b.block_type.clone(), b.tokens)),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        blocks(&m(1)),
        [
            (BlockKind::Media, "image".into(), Some(255)),
            (BlockKind::Media, "file".into(), None)
        ]
    );
    assert_eq!(
        blocks(&m(2)),
        [
            (BlockKind::Reasoning, "reasoning".into(), None),
            (BlockKind::ServerTool, "tool-call".into(), None),
            (BlockKind::ServerTool, "tool-result".into(), None)
        ]
    );
    let calls: Vec<(String, String, String)> = m(2)
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Call(c) => Some((
                c.call_id.clone(),
                c.name.clone(),
                format!("{:?}", c.arguments),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[1].0, "c2");
    assert!(calls[1].2.contains("ls -la"), "TRN-18: {:?}", calls[1]);
    assert_eq!(
        (calls[2].0.as_str(), calls[2].1.as_str()),
        ("a1", "tool-approval-request")
    );
    let results: Vec<(String, Value)> = m(3)
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Result(r) => Some((r.call_id.clone(), r.value.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(results[0].0, "a1");
    assert_eq!(results[1], ("c1".into(), Value::String("12 °C".into())));
    let Value::Map(error) = &results[2].1 else {
        panic!("TRN-10: an error value, got {:?}", results[2].1)
    };
    assert_eq!(error.get("status"), Some(&Value::String("error".into())));
    assert_eq!(m(3).role, "tool");
    assert_eq!(t.render(t.entries()), input);
    let analysis = hybrid_compaction::engine::exchange::analyze(t.entries());
    assert!(analysis.is_sequence_valid(), "{analysis:?}");
}

/// SPEC TRN-20: a member the format does not define is a block (as TRN-16); `providerOptions`
/// is not content.
#[test]
fn trn_20_undefined_members_are_blocks_provider_options_are_not_content() {
    let with = |extra: Json| {
        let mut m = json!({"role": "user", "content": "hi"});
        for (k, v) in extra.as_object().unwrap() {
            m[k] = v.clone();
        }
        let t = Transcript::parse(&json!({"format": "ai-sdk", "messages": [m]})).unwrap();
        t.entries()[0].message().clone()
    };
    assert_eq!(
        with(json!({"providerOptions": {"x": {"y": 1}}})),
        with(json!({}))
    );
    let carried = with(json!({"zeta": 1, "id": "m1", "none": null}));
    let types: Vec<&str> = carried
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Block(b) => Some(b.block_type.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(types, ["id", "zeta"]);
}

/// SPEC TRN-20: malformed messages are InvalidArgument naming the JSON path.
#[test]
fn trn_20_ai_sdk_malformed_input_names_its_path() {
    let cases = [
        (json!([1]), "$.messages[0]:"),
        (json!([{"content": "x"}]), "$.messages[0].role:"),
        (
            json!([{"role": "bot", "content": "x"}]),
            "$.messages[0].role:",
        ),
        (
            json!([{"role": "system", "content": []}]),
            "$.messages[0].content:",
        ),
        (
            json!([{"role": "user", "content": 5}]),
            "$.messages[0].content:",
        ),
        (
            json!([{"role": "tool", "content": "x"}]),
            "$.messages[0].content:",
        ),
        (
            json!([{"role": "user", "content": [{"text": "x"}]}]),
            "$.messages[0].content[0].type:",
        ),
        (
            json!([{"role": "user", "content": [{"type": ""}]}]),
            "$.messages[0].content[0].type:",
        ),
        (
            json!([{"role": "user", "content": [{"type": "text", "text": 1}]}]),
            "$.messages[0].content[0].text:",
        ),
        (
            json!([{"role": "assistant", "content": [{"type": "tool-call", "toolName": "f"}]}]),
            "$.messages[0].content[0].toolCallId:",
        ),
        (
            json!([{"role": "assistant", "content": [{"type": "tool-approval-request", "toolCallId": "c"}]}]),
            "$.messages[0].content[0].approvalId:",
        ),
        (
            json!([{"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c", "toolName": "f"}]}]),
            "$.messages[0].content[0].output:",
        ),
        (
            json!([{"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c", "toolName": "f", "output": {"type": "text", "value": 3}}]}]),
            "$.messages[0].content[0].output.value:",
        ),
        (
            json!([{"role": "tool", "content": [{"type": "tool-approval-response", "approved": true}]}]),
            "$.messages[0].content[0].approvalId:",
        ),
    ];
    for (messages, path) in cases {
        let (kind, text) = refused(messages.clone());
        assert_eq!(kind, ErrorKind::InvalidArgument, "{messages}");
        assert!(text.starts_with(path), "{messages}: {text}");
    }
}

/// SPEC TRN-20, TRN-6: new entries render as the format's messages and read back as the same
/// messages.
#[test]
fn trn_20_ai_sdk_new_entries_render_as_model_messages() {
    let t = Transcript::parse(&ai_sdk()).unwrap();
    let new = |id: &str, role: &str, text: &str| {
        Entry::new(id, EntryKind::Summary, Message::text(role, text)).unwrap()
    };
    let system = Entry::new(
        "s",
        EntryKind::SystemInstruction,
        Message::text("system", "Sei kurz."),
    )
    .unwrap();
    let (user, assistant) = (
        new("u", "user", "Früher: 12 °C."),
        new("a", "assistant", "Notiert."),
    );
    let out = t.render(&[system.clone(), user.clone(), assistant.clone()]);
    assert_eq!(
        out,
        json!({"format": "ai-sdk", "messages": [
            {"role": "system", "content": "Sei kurz."},
            {"role": "user", "content": "Früher: 12 °C."},
            {"role": "assistant", "content": "Notiert."}]})
    );
    let back = Transcript::parse(&out).unwrap();
    for (e, want) in back.entries().iter().zip([&system, &user, &assistant]) {
        assert_eq!(e.message(), want.message());
    }
    // A call and a result of a new entry render as a tool-call part and a tool message.
    let exchange = t.entries()[3].message().clone();
    let kept = Entry::new("x", EntryKind::ToolExchange, exchange).unwrap();
    let out = t.render(&[kept]);
    assert_eq!(out["messages"][0]["role"], "tool");
    assert_eq!(out["messages"][0]["content"][1]["output"]["value"], "12 °C");
}

fn text() -> impl Strategy<Value = String> {
    "[a-zé中 ]{0,12}"
}

/// One AI SDK step: a user message, or an assistant message with 0-3 parallel calls (then one
/// tool message of their results).
fn ai_sdk_turn(k: usize) -> impl Strategy<Value = Vec<Json>> {
    prop_oneof![
        text().prop_map(|s| vec![json!({"role": "user", "content": s})]),
        text().prop_map(|s| vec![json!({"role": "system", "content": s})]),
        (text(), 0..4usize, any::<bool>(), 0..3usize).prop_map(move |(s, n, think, output)| {
            let mut parts = Vec::new();
            if think {
                parts.push(json!({"type": "reasoning", "text": s}));
            }
            parts.push(json!({"type": "text", "text": s}));
            let ids: Vec<String> = (0..n).map(|j| format!("c{k}-{j}")).collect();
            for id in &ids {
                parts.push(json!({"type": "tool-call", "toolCallId": id, "toolName": "f", "input": {"q": s}}));
            }
            let mut out = vec![json!({"role": "assistant", "content": parts})];
            if n > 0 {
                let output = match output {
                    0 => json!({"type": "text", "value": s}),
                    1 => json!({"type": "json", "value": {"r": s}}),
                    _ => json!({"type": "error-text", "value": s}),
                };
                let results: Vec<Json> = ids
                    .iter()
                    .map(|id| json!({"type": "tool-result", "toolCallId": id, "toolName": "f", "output": output}))
                    .collect();
                out.push(json!({"role": "tool", "content": results}));
            }
            out
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// SPEC TRN-20, TRN-6, CLS-1: generated AI SDK transcripts adapt to one entry per message of
    /// the kind CLS-1 gives its role and parts, every exchange complete, and render back
    /// verbatim.
    #[test]
    fn trn_20_trn_6_ai_sdk_transcripts_round_trip(
        turns in prop::collection::vec(0..8usize, 0..8).prop_flat_map(|ks| {
            ks.into_iter().enumerate().map(|(i, _)| ai_sdk_turn(i)).collect::<Vec<_>>()
        }),
    ) {
        let messages: Vec<Json> = turns.into_iter().flatten().collect();
        let input = json!({"format": "ai-sdk", "messages": messages});
        let t = Transcript::parse(&input).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(t.entries().len(), messages.len());
        for (e, m) in t.entries().iter().zip(&messages) {
            let tool = e.message().has_call() || e.message().has_result();
            let want = if tool {
                EntryKind::ToolExchange
            } else if m["role"] == "system" {
                EntryKind::SystemInstruction
            } else {
                EntryKind::ConversationalMessage
            };
            prop_assert_eq!(e.kind(), want);
        }
        let analysis = hybrid_compaction::engine::exchange::analyze(t.entries());
        prop_assert!(analysis.is_sequence_valid(), "{:?}", analysis);
        prop_assert_eq!(&t.render(t.entries()), &input);
    }
}
