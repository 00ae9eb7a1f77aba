//! SPEC TRN-21 (pydantic-ai) and TRN-22 (Gemini `Content`): the formats of the Python agent
//! frameworks, to entries and back.

use hybrid_compaction::model::entry::{Entry, EntryKind};
use hybrid_compaction::model::error::ErrorKind;
use hybrid_compaction::model::message::{BlockKind, Part};
use hybrid_compaction::model::value::Value;
use hybrid_compaction::transcript::Transcript;
use proptest::prelude::*;
use serde_json::{json, Value as Json};

fn kinds(t: &Transcript) -> Vec<EntryKind> {
    t.entries().iter().map(Entry::kind).collect()
}

fn roles(t: &Transcript) -> Vec<String> {
    t.entries()
        .iter()
        .map(|e| e.message().role.clone())
        .collect()
}

fn refused(input: Json) -> (ErrorKind, String) {
    let e = Transcript::parse(&input).expect_err("refused");
    (e.kind(), e.to_string())
}

/// What `ModelMessagesTypeAdapter.dump_python(messages, mode="json")` gives (pydantic-ai 2.78,
/// metadata members trimmed to a few).
fn pydantic_ai() -> Json {
    json!({"format": "pydantic-ai", "messages": [
        {"kind": "request", "instructions": "Use metric units.", "run_id": null, "parts": [
            {"part_kind": "system-prompt", "content": "Be brief.", "timestamp": "2026-12-07T08:09:57Z"},
            {"part_kind": "user-prompt", "content": ["Weather in Zürich?",
                {"kind": "image-url", "url": "https://x/a.png", "media_type": "image/png"},
                {"kind": "binary", "data": "YWJj", "media_type": "audio/wav"}]}]},
        {"kind": "response", "model_name": "test", "parts": [
            {"part_kind": "thinking", "content": "hmm", "signature": "sig"},
            {"part_kind": "text", "content": "Checking."},
            {"part_kind": "tool-call", "tool_name": "get_weather", "args": {"city": "Zürich"}, "tool_call_id": "c1"},
            {"part_kind": "tool-call", "tool_name": "get_time", "args": "{\"tz\": \"CET\"}", "tool_call_id": "c2"},
            {"part_kind": "builtin-tool-call", "tool_name": "web_search", "args": {"q": "a"}, "tool_call_id": "b1"},
            {"part_kind": "builtin-tool-return", "tool_name": "web_search", "content": {"r": 1}, "tool_call_id": "b1"},
            {"part_kind": "file", "content": {"kind": "binary", "data": "eHl6", "media_type": "image/png"}}]},
        {"kind": "request", "parts": [
            {"part_kind": "tool-return", "tool_name": "get_weather", "content": "12 °C", "tool_call_id": "c1", "outcome": "success"},
            {"part_kind": "tool-return", "tool_name": "get_time", "content": {"t": 3}, "tool_call_id": "c2", "outcome": "failed"}]},
        {"kind": "response", "parts": [{"part_kind": "text", "content": "12 °C."}]},
        {"kind": "request", "parts": [
            {"part_kind": "retry-feedback", "content": "no output", "retry": {"cause": "no_output"}},
            {"part_kind": "user-prompt", "content": "Thanks"}]}
    ]})
}

/// SPEC TRN-21: a request or response is one message (parallel calls in one response, their
/// returns in one request); its parts are text, calls, results and blocks; the request holding
/// the system prompt is a system instruction; a kept message renders as given.
#[test]
fn trn_21_pydantic_ai_messages_are_requests_and_responses() {
    let input = pydantic_ai();
    let t = Transcript::parse(&input).unwrap();
    assert_eq!(
        roles(&t),
        ["system", "assistant", "tool", "assistant", "user"]
    );
    use EntryKind::*;
    assert_eq!(
        kinds(&t),
        [
            SystemInstruction,
            ToolExchange,
            ToolExchange,
            ConversationalMessage,
            ConversationalMessage
        ]
    );
    let e = t.entries();
    let p0 = &e[0].message().parts;
    assert_eq!(e[0].message().text_content(), "Be brief.Weather in Zürich?");
    assert!(
        matches!(&p0[2], Part::Block(b) if b.kind == BlockKind::Media && b.tokens == Some(1640))
    );
    assert!(matches!(&p0[3], Part::Block(b) if b.kind == BlockKind::Media && b.tokens.is_none()));
    assert!(
        matches!(&p0[4], Part::Block(b) if b.block_type == "instructions" && b.kind == BlockKind::Other)
    );
    let p1 = &e[1].message().parts;
    assert!(matches!(&p1[0], Part::Block(b) if b.kind == BlockKind::Reasoning));
    let calls: Vec<(&str, &str, usize)> = p1
        .iter()
        .filter_map(|p| match p {
            Part::Call(c) => Some((
                c.call_id.as_str(),
                c.name.as_str(),
                c.arguments.as_ref().map_or(0, |a| a.len()),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(calls, [("c1", "get_weather", 1), ("c2", "get_time", 1)]);
    assert!(matches!(&p1[4], Part::Block(b) if b.kind == BlockKind::ServerTool));
    assert!(matches!(&p1[5], Part::Block(b) if b.kind == BlockKind::ServerTool));
    assert!(
        matches!(&p1[6], Part::Block(b) if b.kind == BlockKind::Media && b.tokens == Some(1640))
    );
    let results: Vec<&Value> = e[2]
        .message()
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Result(r) => Some(&r.value),
            _ => None,
        })
        .collect();
    assert_eq!(results[0], &Value::String("12 °C".into()));
    // TRN-10: a failed tool is the error value
    assert!(matches!(results[1], Value::Map(m) if m["status"] == Value::String("error".into())));
    assert!(matches!(&e[4].message().parts[0], Part::Block(b) if b.block_type == "retry-feedback"));
    assert_eq!(t.render(e), input);
}

/// SPEC TRN-21: malformed messages and parts are InvalidArgument naming their path.
#[test]
fn trn_21_pydantic_ai_malformed_input_names_its_path() {
    for (bad, path) in [
        (json!({"kind": "reply", "parts": []}), "$.messages[0].kind"),
        (json!({"kind": "request"}), "$.messages[0].parts"),
        (json!("hi"), "$.messages[0]"),
        (
            json!({"kind": "request", "parts": [{"content": "x"}]}),
            "$.messages[0].parts[0].part_kind",
        ),
        (
            json!({"kind": "request", "parts": [{"part_kind": "user-prompt", "content": 3}]}),
            "$.messages[0].parts[0].content",
        ),
        (
            json!({"kind": "request", "parts": [{"part_kind": "user-prompt", "content": [{"url": "u"}]}]}),
            "$.messages[0].parts[0].content[0].kind",
        ),
        (
            json!({"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "f", "tool_call_id": "c", "args": 3}]}),
            "$.messages[0].parts[0].args",
        ),
        (
            json!({"kind": "response", "parts": [{"part_kind": "tool-call", "tool_call_id": "c", "args": {}}]}),
            "$.messages[0].parts[0].tool_name",
        ),
        (
            json!({"kind": "request", "parts": [], "instructions": 1}),
            "$.messages[0].instructions",
        ),
    ] {
        let (kind, text) = refused(json!({"format": "pydantic-ai", "messages": [bad]}));
        assert_eq!(kind, ErrorKind::InvalidArgument, "{text}");
        assert!(text.starts_with(&format!("{path}:")), "{text} names {path}");
    }
}

/// SPEC TRN-21, TRN-6: a new entry (a summary) renders as a request of one user prompt, or a
/// response of text parts, and reads back as the same message.
#[test]
fn trn_21_pydantic_ai_new_entries_render_as_requests_and_responses() {
    let input = pydantic_ai();
    let t = Transcript::parse(&input).unwrap();
    let user = Entry::new(
        "s1",
        EntryKind::Summary,
        hybrid_compaction::model::message::Message::text("user", "Earlier: weather 12 °C."),
    )
    .unwrap();
    let assistant = Entry::new(
        "s2",
        EntryKind::Summary,
        hybrid_compaction::model::message::Message::text("assistant", "Noted."),
    )
    .unwrap();
    let out = t.render(&[t.entries()[0].clone(), user.clone(), assistant.clone()]);
    assert_eq!(out["messages"][0], input["messages"][0]);
    assert_eq!(
        out["messages"][1],
        json!({"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Earlier: weather 12 °C."}]})
    );
    assert_eq!(
        out["messages"][2],
        json!({"kind": "response", "parts": [{"part_kind": "text", "content": "Noted."}]})
    );
    let back = Transcript::parse(&out).unwrap();
    assert_eq!(back.entries()[1].message(), user.message());
    assert_eq!(back.entries()[2].message(), assistant.message());
}

fn text() -> impl Strategy<Value = String> {
    "[a-zé中 ]{0,12}"
}

/// One pydantic-ai turn: a user request, or a response with 0-3 parallel calls (then one request
/// of their returns), or a system request.
fn pydantic_ai_turn(k: usize) -> impl Strategy<Value = Vec<Json>> {
    prop_oneof![
        text().prop_map(|s| vec![json!({"kind": "request", "parts": [{"part_kind": "user-prompt", "content": s}]})]),
        text().prop_map(|s| vec![json!({"kind": "request", "parts": [{"part_kind": "system-prompt", "content": s}], "instructions": "i"})]),
        (text(), 0..4usize, any::<bool>(), any::<bool>()).prop_map(move |(s, n, think, failed)| {
            let mut parts = Vec::new();
            if think {
                parts.push(json!({"part_kind": "thinking", "content": s, "signature": "x"}));
            }
            parts.push(json!({"part_kind": "text", "content": s}));
            let ids: Vec<String> = (0..n).map(|j| format!("c{k}-{j}")).collect();
            for id in &ids {
                parts.push(json!({"part_kind": "tool-call", "tool_name": "f", "args": {"q": s}, "tool_call_id": id}));
            }
            let mut out = vec![json!({"kind": "response", "parts": parts})];
            if n > 0 {
                let returns: Vec<Json> = ids
                    .iter()
                    .map(|id| json!({"part_kind": "tool-return", "tool_name": "f", "content": s, "tool_call_id": id,
                        "outcome": if failed { "failed" } else { "success" }}))
                    .collect();
                out.push(json!({"kind": "request", "parts": returns}));
            }
            out
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// SPEC TRN-21, TRN-6, CLS-1: generated pydantic-ai transcripts adapt to one entry per
    /// message of the kind CLS-1 gives its role and parts, and render back verbatim.
    #[test]
    fn trn_21_trn_6_pydantic_ai_transcripts_round_trip(
        turns in prop::collection::vec(0..8usize, 0..8).prop_flat_map(|ks| {
            ks.into_iter().enumerate().map(|(i, _)| pydantic_ai_turn(i)).collect::<Vec<_>>()
        }),
    ) {
        let messages: Vec<Json> = turns.into_iter().flatten().collect();
        let input = json!({"format": "pydantic-ai", "messages": messages});
        let t = Transcript::parse(&input).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(t.entries().len(), messages.len());
        for (e, m) in t.entries().iter().zip(&messages) {
            let parts = m["parts"].as_array().unwrap();
            let tool = parts.iter().any(|p| p["part_kind"] == "tool-call" || p["part_kind"] == "tool-return");
            let system = parts.iter().any(|p| p["part_kind"] == "system-prompt");
            let want = if tool {
                EntryKind::ToolExchange
            } else if system {
                EntryKind::SystemInstruction
            } else {
                EntryKind::ConversationalMessage
            };
            prop_assert_eq!(e.kind(), want);
        }
        prop_assert_eq!(&t.render(t.entries()), &input);
    }
}

/// What google-genai's `Content.model_dump(mode="json", exclude_none=True)` gives, with the
/// system instruction as `system` (Google ADK's `LlmRequest`).
fn gemini() -> Json {
    json!({"format": "gemini", "system": "Be brief.", "messages": [
        {"role": "user", "parts": [{"text": "Weather in Zürich?"},
            {"inline_data": {"data": "YWJj", "mime_type": "image/png"}},
            {"file_data": {"file_uri": "gs://x/a.pdf", "mime_type": "application/pdf"}}]},
        {"role": "model", "parts": [
            {"text": "Two tools.", "thought": true, "thought_signature": "c2ln"},
            {"function_call": {"id": "c1", "args": {"city": "Zürich"}, "name": "get_weather"}, "thought_signature": "c2ln"},
            {"function_call": {"args": {}, "name": "get_time"}},
            {"function_call": {"args": {"tz": "UTC"}, "name": "get_time"}}]},
        {"role": "user", "parts": [
            {"function_response": {"id": "c1", "name": "get_weather", "response": {"result": "12 °C"}}},
            {"function_response": {"name": "get_time", "response": {"result": "09:00"}}},
            {"function_response": {"name": "get_time", "response": {"result": "08:00"}}}]},
        {"role": "model", "parts": [{"executable_code": {"code": "print(1)", "language": "PYTHON"}},
            {"code_execution_result": {"outcome": "OUTCOME_OK", "output": "1"}}, {"text": "12 °C."}]},
        {"parts": [{"text": "Thanks"}]}
    ]})
}

/// SPEC TRN-22: a Content is one message; the system instruction a system message; calls and
/// responses pair by id, id-less ones by name and position in their content; thoughts, media,
/// code execution are blocks; a kept Content renders as given.
#[test]
fn trn_22_gemini_contents_are_messages_calls_results_and_blocks() {
    let input = gemini();
    let t = Transcript::parse(&input).unwrap();
    assert_eq!(
        roles(&t),
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    use EntryKind::*;
    assert_eq!(
        kinds(&t),
        [
            SystemInstruction,
            ConversationalMessage,
            ToolExchange,
            ToolExchange,
            ConversationalMessage,
            ConversationalMessage
        ]
    );
    let e = t.entries();
    assert!(e[1].message().parts[1..]
        .iter()
        .all(|p| matches!(p, Part::Block(b) if b.kind == BlockKind::Media)));
    let p2 = &e[2].message().parts;
    assert!(
        matches!(&p2[0], Part::Block(b) if b.kind == BlockKind::Reasoning && b.block_type == "thought")
    );
    assert!(matches!(&p2[2], Part::Block(b) if b.block_type == "thought_signature"));
    let ids = |m: &hybrid_compaction::model::message::Message| -> Vec<String> {
        m.parts
            .iter()
            .filter_map(|p| match p {
                Part::Call(c) => Some(c.call_id.clone()),
                Part::Result(r) => Some(r.call_id.clone()),
                _ => None,
            })
            .collect()
    };
    let want = ["c1", "function_call:get_time#1", "function_call:get_time#2"];
    assert_eq!(ids(e[2].message()), want);
    assert_eq!(ids(e[3].message()), want);
    assert!(e[4].message().parts[..2]
        .iter()
        .all(|p| matches!(p, Part::Block(b) if b.kind == BlockKind::ServerTool)));
    assert_eq!(t.render(e), input);
    // the same id-less call in a later turn is paired again (TRN-14)
    let mut again = input.clone();
    let more = input["messages"].as_array().unwrap()[2..4].to_vec();
    again["messages"].as_array_mut().unwrap().extend(more);
    assert!(Transcript::parse(&again).is_ok());
}

/// SPEC TRN-22: malformed contents and parts are InvalidArgument naming their path.
#[test]
fn trn_22_gemini_malformed_input_names_its_path() {
    for (bad, path) in [
        (json!({"role": "system", "parts": []}), "$.messages[0].role"),
        (json!({"role": "user", "parts": {}}), "$.messages[0].parts"),
        (json!(["x"]), "$.messages[0]"),
        (json!({"parts": ["x"]}), "$.messages[0].parts[0]"),
        (
            json!({"role": "model", "parts": [{"function_call": {"args": {}}}]}),
            "$.messages[0].parts[0].function_call.name",
        ),
        (
            json!({"role": "model", "parts": [{"function_call": {"name": "f", "args": [1]}}]}),
            "$.messages[0].parts[0].function_call.args",
        ),
        (
            json!({"parts": [{"text": 3}]}),
            "$.messages[0].parts[0].text",
        ),
    ] {
        let (kind, text) = refused(json!({"format": "gemini", "messages": [bad]}));
        assert_eq!(kind, ErrorKind::InvalidArgument, "{text}");
        assert!(text.starts_with(&format!("{path}:")), "{text} names {path}");
    }
    let (_, text) = refused(json!({"format": "gemini", "system": 3, "messages": []}));
    assert!(text.starts_with("$.system:"), "{text}");
}

/// SPEC TRN-22, TRN-6: a new entry renders as a `user` or `model` content of text parts; a
/// system instruction given as a Content stays one.
#[test]
fn trn_22_gemini_new_entries_render_as_contents() {
    let mut input = gemini();
    input["system"] = json!({"parts": [{"text": "Be brief."}], "role": "user"});
    let t = Transcript::parse(&input).unwrap();
    let summary = Entry::new(
        "s1",
        EntryKind::Summary,
        hybrid_compaction::model::message::Message::text("assistant", "Earlier: 12 °C."),
    )
    .unwrap();
    let out = t.render(&[t.entries()[0].clone(), summary.clone()]);
    assert_eq!(out["system"], input["system"]);
    assert_eq!(
        out["messages"],
        json!([{"role": "model", "parts": [{"text": "Earlier: 12 °C."}]}])
    );
    let back = Transcript::parse(&out).unwrap();
    assert_eq!(back.entries()[1].message(), summary.message());
}

/// One Gemini turn: a user content, or a model content with 0-3 parallel calls, with or without
/// ids (then one user content of their responses).
fn gemini_turn(k: usize) -> impl Strategy<Value = Vec<Json>> {
    prop_oneof![
        text().prop_map(|s| vec![json!({"role": "user", "parts": [{"text": s}]})]),
        (text(), 0..4usize, any::<bool>(), any::<bool>()).prop_map(
            move |(s, n, with_ids, think)| {
                let mut parts = Vec::new();
                if think {
                    parts.push(json!({"text": s, "thought": true}));
                }
                parts.push(json!({"text": s}));
                let call = |j: usize| {
                    let mut c = json!({"name": format!("f{}", j % 2), "args": {"q": s}});
                    if with_ids {
                        c["id"] = json!(format!("c{k}-{j}"));
                    }
                    c
                };
                for j in 0..n {
                    parts.push(json!({"function_call": call(j)}));
                }
                let mut out = vec![json!({"role": "model", "parts": parts})];
                if n > 0 {
                    let responses: Vec<Json> = (0..n)
                        .map(|j| {
                            let mut r = call(j);
                            r.as_object_mut().unwrap().remove("args");
                            r["response"] = json!({"result": s});
                            json!({"function_response": r})
                        })
                        .collect();
                    out.push(json!({"role": "user", "parts": responses}));
                }
                out
            }
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// SPEC TRN-22, TRN-14, TRN-6: generated Gemini transcripts (id-less calls reused across
    /// turns included) adapt to one entry per content, every exchange complete, and render back
    /// verbatim.
    #[test]
    fn trn_22_trn_6_gemini_transcripts_round_trip(
        turns in prop::collection::vec(0..8usize, 0..8).prop_flat_map(|ks| {
            ks.into_iter().enumerate().map(|(i, _)| gemini_turn(i)).collect::<Vec<_>>()
        }),
        system in prop::option::of(text()),
    ) {
        let messages: Vec<Json> = turns.into_iter().flatten().collect();
        let mut input = json!({"format": "gemini", "messages": messages});
        if let Some(s) = system {
            input["system"] = json!(s);
        }
        let t = Transcript::parse(&input).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let offset = usize::from(input.get("system").is_some());
        prop_assert_eq!(t.entries().len(), messages.len() + offset);
        for e in &t.entries()[offset..] {
            let tool = e.message().has_call() || e.message().has_result();
            prop_assert_eq!(e.kind() == EntryKind::ToolExchange, tool);
        }
        let analysis = hybrid_compaction::engine::exchange::analyze(t.entries());
        prop_assert!(analysis.is_sequence_valid(), "{:?}", analysis);
        prop_assert_eq!(&t.render(t.entries()), &input);
    }
}
