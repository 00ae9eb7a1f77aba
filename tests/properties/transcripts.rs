//! SPEC TRN-1 .. TRN-6, TRN-15, TRN-17: transcripts (OpenAI chat, Anthropic messages, LangChain,
//! OpenAI Responses) to entries and back, and a bounded request rendered in the host's own format.

use std::sync::Arc;

use hybrid_compaction::engine;
use hybrid_compaction::estimators::{MemoEstimator, TokenEncoding, TokenEstimator};
use hybrid_compaction::model::assembly::Outcome;
use hybrid_compaction::model::cancel::CancellationToken;
use hybrid_compaction::model::entry::{Entry, EntryKind};
use hybrid_compaction::model::error::ErrorKind;
use hybrid_compaction::model::message::{BlockKind, Message, Part};
use hybrid_compaction::model::policy::{Policy, PolicySpec};
use hybrid_compaction::model::reducers::{ProposalItem, ScriptStep, ScriptedReducer};
use hybrid_compaction::model::snapshot::StaticProvider;
use hybrid_compaction::model::value::{Value, ValueMap};
use hybrid_compaction::transcript::Transcript;
use serde_json::{json, Value as Json};

fn kinds(t: &Transcript) -> Vec<EntryKind> {
    t.entries().iter().map(Entry::kind).collect()
}

fn openai() -> Json {
    json!({"format": "openai-chat", "messages": [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "name": "ann", "content": [{"type": "text", "text": "Weather in "}, {"type": "text", "text": "Paris?"}]},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"days\": 2.50}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "assistant", "content": "It is sunny."}
    ]})
}

fn anthropic() -> Json {
    json!({"format": "anthropic-messages", "system": "Be brief.", "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny"}], "is_error": false}]},
        {"role": "assistant", "content": "It is sunny."}
    ]})
}

fn langchain() -> Json {
    json!({"format": "langchain", "messages": [
        {"type": "system", "content": "Be brief."},
        {"type": "human", "content": "Weather in Paris?", "id": "h-1"},
        {"type": "ai", "content": "", "tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}], "id": "a-1"},
        {"type": "tool", "content": "sunny", "tool_call_id": "call_1", "id": "t-1"},
        {"type": "chat", "data": {"role": "developer", "content": "Use metric units."}}
    ]})
}

fn responses() -> Json {
    json!({"format": "openai-responses", "system": "Be brief.", "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}]}
    ]})
}

/// SPEC TRN-1, TRN-2, TRN-3, TRN-4, TRN-17: roles, multi-part content, tool calls and results map onto
/// the kinds of CLS-1; TRN-6: rendering the unchanged list gives the transcript back verbatim.
#[test]
fn trn_1_trn_4_trn_6_each_format_adapts_and_renders_back_verbatim() {
    for (input, expected) in [
        (
            openai(),
            vec![
                EntryKind::SystemInstruction,
                EntryKind::ConversationalMessage,
                EntryKind::ToolExchange,
                EntryKind::ToolExchange,
                EntryKind::ConversationalMessage,
            ],
        ),
        (
            anthropic(),
            vec![
                EntryKind::SystemInstruction,
                EntryKind::ConversationalMessage,
                EntryKind::ToolExchange,
                EntryKind::ToolExchange,
                EntryKind::ConversationalMessage,
            ],
        ),
        (
            langchain(),
            vec![
                EntryKind::SystemInstruction,
                EntryKind::ConversationalMessage,
                EntryKind::ToolExchange,
                EntryKind::ToolExchange,
                EntryKind::SystemInstruction,
            ],
        ),
        (
            responses(),
            // the reasoning item and the call it precedes are one turn (TRN-23)
            vec![
                EntryKind::SystemInstruction,
                EntryKind::ConversationalMessage,
                EntryKind::ToolExchange,
                EntryKind::ToolExchange,
                EntryKind::ConversationalMessage,
            ],
        ),
    ] {
        let t = Transcript::parse(&input).expect("adapts");
        assert_eq!(kinds(&t), expected, "{}", input["format"]);
        assert_eq!(t.render(t.entries()), input, "{}", input["format"]);
    }
}

/// SPEC TRN-2: multi-part text concatenates, the name is the author, arguments are a map whose
/// numbers keep their text (raw JSON), the tool result is the content string.
#[test]
fn trn_2_openai_messages_map_field_by_field() {
    let t = Transcript::parse(&openai()).unwrap();
    let e = t.entries();
    assert_eq!(e[0].message().role, "system");
    assert_eq!(e[1].message().text_content(), "Weather in Paris?");
    assert_eq!(e[1].message().author.as_deref(), Some("ann"));
    let Part::Call(call) = &e[2].message().parts[0] else {
        panic!("call part")
    };
    assert_eq!(
        (call.call_id.as_str(), call.name.as_str()),
        ("call_1", "get_weather")
    );
    let args = call.arguments.as_ref().unwrap();
    assert_eq!(args["city"], Value::String("Paris".into()));
    assert!(matches!(&args["days"], Value::RawJson(r) if r.as_str() == "2.5"));
    assert_eq!(
        e[3].message().parts,
        vec![Part::result("call_1", Value::String("sunny".into()))]
    );
}

/// SPEC TRN-5: ids are given (`ids`, LangChain `id`) or the CLS-2 content-hash id.
#[test]
fn trn_5_ids_are_given_or_content_hashes() {
    let t = Transcript::parse(&langchain()).unwrap();
    let ids: Vec<&str> = t.entries().iter().map(|e| e.id().as_str()).collect();
    assert_eq!(&ids[1..4], ["h-1", "a-1", "t-1"]);
    let derived = engine::classify::adapt(
        &[Message::text("system", "Be brief.")],
        &mut engine::classify::ContentHashClassifier::new(),
    )
    .unwrap();
    assert_eq!(ids[0], derived[0].id().as_str());
    assert!(ids[0].ends_with(":0"));

    let mut with_ids = openai();
    with_ids["ids"] = json!(["s", "u", "c", "r", "a"]);
    let t = Transcript::parse(&with_ids).unwrap();
    let ids: Vec<&str> = t.entries().iter().map(|e| e.id().as_str()).collect();
    assert_eq!(ids, ["s", "u", "c", "r", "a"]);
    // The same transcript twice gives the same ids (stable across calls).
    let again = Transcript::parse(&openai()).unwrap();
    let first = Transcript::parse(&openai()).unwrap();
    assert_eq!(again.entries(), first.entries());
    // Extended at its end, a transcript keeps the ids of its prefix (the memo's hits, EST-7).
    let mut longer = openai();
    let repeat = longer["messages"][4].clone();
    longer["messages"].as_array_mut().unwrap().push(repeat);
    let longer = Transcript::parse(&longer).unwrap();
    assert_eq!(&longer.entries()[..5], first.entries());
    assert!(longer.entries()[5].id().as_str().ends_with(":1"));
}

/// SPEC TRN-1 with CLS-1 step 3: overrides by message index; forbidden overrides are errors.
#[test]
fn trn_1_cls_1_overrides_reclassify_and_forbidden_ones_fail() {
    let mut input = openai();
    input["overrides"] = json!({"4": "OptionalContext", "1": "AuthoritativeSessionState"});
    let t = Transcript::parse(&input).unwrap();
    assert_eq!(kinds(&t)[1], EntryKind::AuthoritativeSessionState);
    assert_eq!(kinds(&t)[4], EntryKind::OptionalContext);
    input["overrides"] = json!({"4": "SystemInstruction"});
    let e = Transcript::parse(&input).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidOperation);
}

/// SPEC TRN-15: images, audio and other non-text parts are media blocks, carried verbatim; an
/// image whose dimensions are not known costs its provider's most (OpenAI 85 + 8 x 170,
/// Anthropic 1640, TRN-19); malformed input is still InvalidArgument.
#[test]
fn trn_15_non_text_parts_are_blocks_carried_verbatim() {
    let cases = [
        (
            json!({"format": "openai-chat", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]}),
            Some(1445),
        ),
        (
            json!({"format": "openai-chat", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}}]}]}),
            Some(85),
        ),
        (
            json!({"format": "anthropic-messages", "messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]}]}),
            Some(1640),
        ),
        (
            json!({"format": "langchain", "messages": [{"type": "human", "content": [
            {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}]}]}),
            None,
        ),
    ];
    for (c, tokens) in cases {
        let t = Transcript::parse(&c).unwrap();
        let Part::Block(b) = &t.entries()[0].message().parts[0] else {
            panic!("a block: {t:?}")
        };
        assert_eq!((b.kind, b.tokens), (BlockKind::Media, tokens), "{c}");
        assert_eq!(b.json, c["messages"][0]["content"][0].to_string());
        assert_eq!(t.render(t.entries())["messages"], c["messages"]);
    }
    let bad = json!({"format": "openai-chat", "messages": [{"role": "assistant", "content": null,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": 3}}]}]});
    assert_eq!(
        Transcript::parse(&bad).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

/// SPEC TRN-17: each Responses item is one message: `instructions` and `developer` are system,
/// a client-run call item (any `*_call` with a `call_id`) is a call, its `*_output` the result,
/// reasoning and compaction items are blocks of their kind, a provider-run tool a server-tool
/// block; a malformed item is InvalidArgument naming its path.
#[test]
fn trn_17_responses_items_are_messages_calls_results_and_blocks() {
    let input = json!({"format": "openai-responses", "system": [{"type": "input_text", "text": "Be brief."}],
        "messages": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Use metric."}]},
        {"role": "user", "content": [{"type": "input_text", "text": "Plot "}, {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]},
        {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "done"}]},
        {"type": "local_shell_call", "call_id": "c2", "action": {"type": "exec", "command": ["ls"]}, "status": "completed"},
        {"type": "local_shell_call_output", "call_id": "c2", "output": "a.txt"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "weather"}},
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA"},
        {"type": "item_reference", "id": "msg_0"},
        {"type": "mcp_approval_request", "id": "mcpr_1", "name": "deploy", "arguments": "{}", "server_label": "ops"},
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": true}
    ]});
    let t = Transcript::parse(&input).unwrap();
    let e = t.entries();
    assert_eq!(
        (e[0].message().role.as_str(), e[1].message().role.as_str()),
        ("system", "system")
    );
    assert_eq!(e[0].message().text_content(), "Be brief.");
    assert!(
        matches!(&e[2].message().parts[1], Part::Block(b) if b.kind == BlockKind::Media && b.tokens == Some(1445))
    );
    let call = |i: usize| match &e[i].message().parts[0] {
        Part::Call(c) => (
            c.call_id.clone(),
            c.name.clone(),
            c.arguments
                .as_ref()
                .map(|a| a.keys().cloned().collect::<Vec<_>>()),
        ),
        other => panic!("a call at {i}: {other:?}"),
    };
    assert_eq!(
        call(3),
        (
            "c1".into(),
            "apply_patch".into(),
            Some(vec!["input".into()])
        )
    );
    assert_eq!(
        call(5),
        (
            "c2".into(),
            "local_shell_call".into(),
            Some(vec!["action".into()])
        )
    );
    assert_eq!(call(10), ("mcpr_1".into(), "deploy".into(), Some(vec![])));
    for i in [4, 6, 11] {
        assert!(
            e[i].message().has_result() && e[i].kind() == EntryKind::ToolExchange,
            "{i}"
        );
    }
    let block = |i: usize| match &e[i].message().parts[0] {
        Part::Block(b) => (b.kind, b.block_type.clone()),
        other => panic!("a block at {i}: {other:?}"),
    };
    assert_eq!(block(7), (BlockKind::ServerTool, "web_search_call".into()));
    assert_eq!(
        block(8),
        (BlockKind::ProviderCompaction, "compaction".into())
    );
    assert_eq!(block(9), (BlockKind::Other, "item_reference".into()));
    assert_eq!(t.render(e), input);
    // a call the provider runs itself is its tool's block, not a call awaiting an output
    let server = json!({"format": "openai-responses", "messages": [
        {"type": "tool_search_call", "call_id": "ts_1", "execution": "server", "arguments": {"query": "x"}},
        {"type": "tool_search_output", "call_id": "ts_1", "execution": "server", "tools": []}]});
    let t = Transcript::parse(&server).unwrap();
    for e in t.entries() {
        assert!(
            matches!(&e.message().parts[0], Part::Block(b) if b.kind == BlockKind::ServerTool),
            "{e:?}"
        );
    }
    for (bad, path) in [
        (
            json!({"role": "tool", "content": "x"}),
            "$.messages[0].role",
        ),
        (
            json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": [1]}),
            "$.messages[0].arguments",
        ),
        (json!("text"), "$.messages[0]"),
        (json!({"type": 3}), "$.messages[0].type"),
    ] {
        let e = Transcript::parse(&json!({"format": "openai-responses", "messages": [bad]}))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad}");
        assert!(e.to_string().contains(path), "{e} names {path}");
    }
}

/// SPEC TRN-18: arguments given as text that is not a JSON object (not JSON at all, or JSON of
/// another type) are the map `{"arguments": text}`, a custom tool's input `{"input": text}`;
/// sized and kept, and a kept message renders byte-exact.
#[test]
fn trn_18_text_arguments_are_carried_as_text() {
    let text = |k: &str, v: &str| Some(ValueMap::from([(k.to_owned(), Value::String(v.into()))]));
    let chat = json!({"format": "openai-chat", "messages": [
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"city\": \"Pa"}},
            {"id": "b", "type": "function", "function": {"name": "f", "arguments": " [1]\n"}},
            {"id": "c", "type": "custom", "custom": {"name": "patch", "input": "*** Begin Patch\n…"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "tool", "tool_call_id": "b", "content": "y"},
        {"role": "tool", "tool_call_id": "c", "content": "z"}]});
    let responses = json!({"format": "openai-responses", "messages": [
        {"type": "function_call", "call_id": "d", "name": "f", "arguments": "ünïcode, not JSON"},
        {"type": "function_call_output", "call_id": "d", "output": "ok"}]});
    let expected = [
        vec![
            ("a", "f", text("arguments", "{\"city\": \"Pa")),
            ("b", "f", text("arguments", " [1]\n")),
            ("c", "patch", text("input", "*** Begin Patch\n…")),
        ],
        vec![("d", "f", text("arguments", "ünïcode, not JSON"))],
    ];
    for (input, calls) in [chat, responses].into_iter().zip(expected) {
        let t = Transcript::parse(&input).unwrap();
        let got: Vec<_> = t.entries()[0]
            .message()
            .parts
            .iter()
            .map(|p| match p {
                Part::Call(c) => (c.call_id.as_str(), c.name.as_str(), c.arguments.clone()),
                other => panic!("a call: {other:?}"),
            })
            .collect();
        assert_eq!(got, calls, "{input}");
        assert_eq!(kinds(&t)[0], EntryKind::ToolExchange);
        let size = engine::estimate::size(&t.entries()[..1], policy(1000).estimator()).unwrap();
        assert!(size > 8, "the text is sized: {size}");
        assert_eq!(t.render(t.entries())["messages"], input["messages"]);
    }
}

/// A PNG file's first bytes (signature and IHDR) for a `w` x `h` image, then `tail` bytes of
/// image data, as base64 (what a `data:` URL or an Anthropic `source.data` holds).
fn png_base64(w: u32, h: u32, tail: usize) -> String {
    use base64::Engine;
    let mut b = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
    b.extend_from_slice(b"IHDR");
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&h.to_be_bytes());
    b.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    b.resize(b.len() + tail, 0x5a);
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// The image block's tokens, adapted from one user message of `format` holding `block`.
fn image_tokens(format: &str, block: Json) -> Option<u32> {
    let message = if format == "langchain" {
        json!({"type": "human", "content": [block]})
    } else {
        json!({"role": "user", "content": [block]})
    };
    let t = Transcript::parse(&json!({"format": format, "messages": [message]})).unwrap();
    match &t.entries()[0].message().parts[0] {
        Part::Block(b) => b.tokens,
        other => panic!("a block: {other:?}"),
    }
}

/// The provider's rules computed in floating point, sides rounded down: what ours (sides
/// rounded up) must never be below.
fn openai_reference(w: f64, h: f64) -> u32 {
    let s = (2048.0 / w.max(h)).min(1.0);
    let (w, h) = ((w * s).floor(), (h * s).floor());
    let s = (768.0 / w.min(h)).min(1.0);
    let (w, h) = ((w * s).floor(), (h * s).floor());
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "tile counts are small"
    )]
    let tiles = ((w / 512.0).ceil() * (h / 512.0).ceil()) as u32;
    85 + 170 * tiles
}

proptest::proptest! {
    /// SPEC TRN-19: an inline image costs its provider's rule on the dimensions in its header,
    /// never below the rule and never above the rule's most for one image; the data after the
    /// header does not matter (it is never decoded); LangChain takes the larger rule.
    #[test]
    fn trn_19_inline_images_cost_their_providers_rule(
        w in 1u32..20_000, h in 1u32..20_000, tail in 0usize..4096, low in proptest::bool::ANY,
    ) {
        let data = png_base64(w, h, tail);
        let url = format!("data:image/png;base64,{data}");
        let detail = if low { "low" } else { "auto" };
        let openai = image_tokens("openai-chat",
            json!({"type": "image_url", "image_url": {"url": url, "detail": detail}})).unwrap();
        let responses = image_tokens("openai-responses",
            json!({"type": "input_image", "image_url": url, "detail": detail})).unwrap();
        let anthropic = image_tokens("anthropic-messages", json!({"type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": data}})).unwrap();
        let langchain = image_tokens("langchain",
            json!({"type": "image", "base64": data, "mime_type": "image/png"})).unwrap();
        proptest::prop_assert_eq!(openai, responses);
        if low {
            proptest::prop_assert_eq!(openai, 85);
        } else {
            proptest::prop_assert!(openai >= openai_reference(f64::from(w), f64::from(h)));
            proptest::prop_assert!(openai <= 1445);
        }
        let (sw, sh) = {
            let s = (1568.0 / f64::from(w.max(h))).min(1.0);
            ((f64::from(w) * s).floor(), (f64::from(h) * s).floor())
        };
        proptest::prop_assert!(f64::from(anthropic) >= (sw * sh / 750.0).min(1600.0), "{anthropic}");
        proptest::prop_assert!(anthropic <= 1640);
        proptest::prop_assert_eq!(langchain, image_tokens("openai-chat",
            json!({"type": "image_url", "image_url": {"url": url}})).unwrap().max(anthropic));
        proptest::prop_assert_eq!(png_base64(w, h, 0).len() <= data.len(), true);
        let bare = image_tokens("openai-chat", json!({"type": "image_url",
            "image_url": {"url": format!("data:image/png;base64,{}", png_base64(w, h, 0)), "detail": detail}}));
        proptest::prop_assert_eq!(bare, Some(openai), "the data after the header does not count");
    }
}

/// SPEC TRN-19: where the dimensions cannot be known (a URL, a file id, data that is no image
/// header) each rule gives its most for one image.
#[test]
fn trn_19_unknown_dimensions_cost_the_rules_most() {
    let openai = |image_url: Json| {
        image_tokens(
            "openai-chat",
            json!({"type": "image_url", "image_url": image_url}),
        )
    };
    assert_eq!(
        openai(json!({"url": "https://example.org/cat.png"})),
        Some(1445)
    );
    assert_eq!(
        openai(json!({"url": "data:image/png;base64,bm90IGFuIGltYWdl"})),
        Some(1445)
    );
    assert_eq!(
        openai(json!({"url": "data:image/png;base64,%%%"})),
        Some(1445)
    );
    assert_eq!(
        openai(json!({"url": format!("data:image/png;base64,{}", png_base64(1024, 1024, 9))})),
        Some(765)
    );
    let responses = image_tokens(
        "openai-responses",
        json!({"type": "input_image", "file_id": "file-1"}),
    );
    assert_eq!(responses, Some(1445));
    let anthropic = image_tokens(
        "anthropic-messages",
        json!({"type": "image",
        "source": {"type": "url", "url": "https://example.org/cat.png"}}),
    );
    assert_eq!(anthropic, Some(1640));
    let anthropic = image_tokens(
        "anthropic-messages",
        json!({"type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": png_base64(200, 200, 0)}}),
    );
    assert_eq!(
        anthropic,
        Some(54),
        "Anthropic's own example: 200 x 200 is about 54 tokens"
    );
    let langchain = image_tokens(
        "langchain",
        json!({"type": "image", "url": "https://example.org/cat.png"}),
    );
    assert_eq!(langchain, Some(1640));
}

/// SPEC TRC-13: the messages a system sent are identified against its history from the end: a
/// kept message equal to a dropped earlier one keeps its own history id (not the dropped one's,
/// which its content-hash id alone would give it), a new message keeps its own entry, and the
/// top-level system is the history's.
#[test]
fn trc_13_sent_messages_take_the_historys_ids() {
    let h = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "b"}, {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "c ✓"}]);
    let transcript = |messages: Json| {
        Transcript::parse(
            &json!({"format": "anthropic-messages", "system": "Be brief.", "messages": messages}),
        )
        .unwrap()
    };
    let history = transcript(h.clone());
    let summary = json!({"role": "user", "content": "Earlier: a, ok."});
    let sent = transcript(json!([summary, h[2], h[3], h[4]]));
    let ids = |entries: &[Entry]| -> Vec<String> {
        entries.iter().map(|e| e.id().as_str().to_owned()).collect()
    };
    let got = history.sent_entries(&sent);
    let all = ids(history.entries());
    assert_eq!(ids(&got)[0], all[0], "the system is the history's");
    assert_eq!(
        ids(&got)[2..],
        all[3..],
        "b, the second ok and c keep their history ids"
    );
    assert_eq!(got[1], sent.entries()[1], "the summary keeps its own entry");
    assert_ne!(
        ids(sent.entries())[3],
        all[4],
        "alone, the kept ok would be numbered as the first"
    );
    // Equal messages are told apart by position: the latest one before the next kept message.
    let sent = transcript(json!([h[1], h[4]]));
    assert_eq!(
        ids(&history.sent_entries(&sent))[1..],
        [all[4].clone(), all[5].clone()]
    );
}

fn policy(hard: i32) -> Policy {
    Policy::new(PolicySpec {
        hard_limit: hard,
        trigger_margin: 5,
        recent_message_retention_count: 1,
        maximum_compaction_attempts: 2,
        preservation_label: Some("t".into()),
        preservation_version: 1,
        estimator: Some(Arc::new(MemoEstimator::new(Arc::new(TokenEstimator::new(
            TokenEncoding::O200kBase,
        ))))),
    })
    .unwrap()
}

/// SPEC TRN-6: a bounded result renders as the request a host would send: kept messages
/// verbatim, a reducer's summary in the format's own shape, tool exchanges whole.
#[test]
fn trn_6_a_reduced_assembly_renders_in_the_same_format() {
    for input in [openai(), anthropic(), langchain(), responses()] {
        let mut long = input.clone();
        let filler = "lorem ipsum dolor sit amet ".repeat(40);
        let user = match input["format"].as_str().unwrap() {
            "langchain" => json!({"type": "human", "content": filler}),
            _ => json!({"role": "user", "content": filler}),
        };
        long["messages"].as_array_mut().unwrap().insert(1, user);
        let t = Transcript::parse(&long).unwrap();
        let full = engine::estimate::size(t.entries(), policy(1000).estimator()).unwrap();
        let required: Vec<ProposalItem> = t
            .entries()
            .iter()
            .filter(|e| {
                e.kind() != EntryKind::ConversationalMessage || e.message().role == "assistant"
            })
            .map(|e| ProposalItem::Keep(e.id().as_str().to_owned()))
            .chain([ProposalItem::New(
                Entry::new(
                    "summary-1",
                    EntryKind::Summary,
                    Message::text("user", "Asked about Paris weather."),
                )
                .unwrap(),
            )])
            .collect();
        let mut reducer = ScriptedReducer::new(vec![ScriptStep::Propose(required)]);
        let mut provider = StaticProvider::new(t.entries().to_vec());
        let p = policy(full - 50);
        let result =
            engine::assemble::assemble(&p, &mut provider, &mut reducer, &CancellationToken::new())
                .unwrap();
        assert_eq!(result.outcome, Outcome::Reduced, "{}", input["format"]);
        let rendered = t.render(result.final_entries.as_deref().unwrap());
        let messages = rendered["messages"].as_array().unwrap();
        let text = rendered.to_string();
        assert!(!text.contains("lorem ipsum"), "the long message is gone");
        assert!(
            text.contains("Asked about Paris weather."),
            "the summary is rendered"
        );
        assert!(messages.len() >= 4);
        assert_eq!(rendered["format"], input["format"]);
    }
}

mod generated {
    //! SPEC TRN-2, TRN-3, TRN-5, TRN-6 on generated transcripts: adaptation never fails on
    //! well-formed text and tool content, kinds follow CLS-1 step 1, 2 and 5, ids are stable
    //! under extension, and the unchanged list renders back to the input, verbatim.

    use super::*;
    use hybrid_compaction::transcript::reuse::Adaptation;
    use hybrid_compaction::transcript::TranscriptFormat;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            "[a-z ]{1,12}",
            Just("日本語 😀 e\u{301}".to_owned()),
            Just("artifact://sha256/".to_owned() + &"a".repeat(64)),
        ]
    }

    fn args() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i32>().prop_map(|n| json!(n)),
            (-1e6f64..1e6).prop_map(|x| json!(x)),
            "[a-zé\"\\\\\n]{0,6}".prop_map(Json::String),
        ];
        let value = leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Json::Array),
                prop::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                    .prop_map(|m| Json::Object(m.into_iter().collect())),
            ]
        });
        prop::collection::btree_map("[a-z]{1,4}", value, 0..4)
            .prop_map(|m| Json::Object(m.into_iter().collect()))
    }

    /// Arguments as the text a model writes: mostly a JSON object, sometimes text that is not
    /// one (cut off, free-form, another JSON type), which TRN-18 carries as text.
    fn args_text() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => args().prop_map(|a| a.to_string()),
            1 => prop_oneof![
                Just("{\"path\": \"sr".to_owned()),
                Just("[1]".to_owned()),
                Just("\"x\"".to_owned()),
                text().prop_filter("not blank", |t| !t.trim().is_empty()),
            ],
        ]
    }

    /// One OpenAI turn: a plain message, or an assistant call message plus its tool results.
    fn openai_turn() -> impl Strategy<Value = Vec<Json>> {
        prop_oneof![
            (
                prop::sample::select(vec!["system", "developer", "user", "assistant"]),
                text(),
                any::<bool>()
            )
                .prop_map(|(role, t, parts)| {
                    let content = if parts {
                        json!([{"type": "text", "text": t}])
                    } else {
                        json!(t)
                    };
                    vec![json!({"role": role, "content": content})]
                }),
            (
                prop::collection::vec(("[a-z_]{1,8}", args_text()), 1..3),
                any::<u16>()
            )
                .prop_map(|(calls, salt)| {
                    let ids: Vec<String> = (0..calls.len())
                        .map(|k| format!("call_{salt}_{k}"))
                        .collect();
                    let tool_calls: Vec<Json> = calls
                        .iter()
                        .zip(&ids)
                        .map(|((name, a), id)| {
                            json!({"id": id, "type": "function",
                        "function": {"name": name, "arguments": a}})
                        })
                        .collect();
                    let mut out = vec![
                        json!({"role": "assistant", "content": null, "tool_calls": tool_calls}),
                    ];
                    out.extend(
                        ids.iter()
                            .map(|id| json!({"role": "tool", "tool_call_id": id, "content": "ok"})),
                    );
                    out
                }),
        ]
    }

    fn anthropic_turn() -> impl Strategy<Value = Vec<Json>> {
        prop_oneof![
            (prop::sample::select(vec!["user", "assistant"]), "[a-z ]{1,12}")
                .prop_map(|(role, t)| vec![json!({"role": role, "content": t})]),
            ("[a-z_]{1,8}", args(), any::<u16>()).prop_map(|(name, a, salt)| {
                let id = format!("toolu_{salt}");
                vec![
                    json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": a}]}),
                    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "ok"}]}),
                ]
            }),
        ]
    }

    /// One Responses turn: a message item (with or without `type`), a reasoning item, or
    /// parallel function calls (consecutive items) and then their outputs.
    fn responses_turn() -> impl Strategy<Value = Vec<Json>> {
        prop_oneof![
            (
                prop::sample::select(vec!["system", "developer", "user", "assistant"]),
                text(),
                any::<bool>()
            )
                .prop_map(|(role, t, typed)| {
                    vec![if typed {
                        let part = if role == "assistant" { "output_text" } else { "input_text" };
                        json!({"type": "message", "role": role, "content": [{"type": part, "text": t}]})
                    } else {
                        json!({"role": role, "content": t})
                    }]
                }),
            "[a-zA-Z0-9]{0,8}".prop_map(|e| vec![json!({"type": "reasoning", "id": format!("rs_{e}"), "summary": [], "encrypted_content": e})]),
            (
                prop::collection::vec(("[a-z_]{1,8}", args_text()), 1..3),
                any::<u16>()
            )
                .prop_map(|(calls, salt)| {
                    let ids: Vec<String> = (0..calls.len()).map(|k| format!("call_{salt}_{k}")).collect();
                    let mut out: Vec<Json> = calls
                        .iter()
                        .zip(&ids)
                        .map(|((name, a), id)| json!({"type": "function_call", "call_id": id, "name": name, "arguments": a}))
                        .collect();
                    out.extend(ids.iter().map(|id| json!({"type": "function_call_output", "call_id": id, "output": "ok"})));
                    out
                }),
        ]
    }

    fn check(input: &Json) -> Result<(), TestCaseError> {
        let t = Transcript::parse(input).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for e in t.entries() {
            let m = e.message();
            let expected = if m.has_call() || m.has_result() {
                EntryKind::ToolExchange
            } else if m.role == "system" {
                EntryKind::SystemInstruction
            } else if hybrid_compaction::model::artifact::ArtifactReference::parse(
                &m.text_content(),
            )
            .is_ok()
            {
                EntryKind::ArtifactReference
            } else {
                EntryKind::ConversationalMessage
            };
            prop_assert_eq!(e.kind(), expected);
        }
        prop_assert_eq!(&t.render(t.entries()), input);
        // Extension keeps the prefix's ids (TRN-5).
        let mut longer = input.clone();
        longer["messages"]
            .as_array_mut()
            .unwrap()
            .push(json!({"role": "user", "content": "more"}));
        let l = Transcript::parse(&longer).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&l.entries()[..t.entries().len()], t.entries());
        Ok(())
    }

    /// A transcript reassembled from per-message adaptations (`transcript::reuse`), reusing
    /// those `cache` holds for equal messages (adapted at other indices, in other transcripts),
    /// is what `Transcript::parse` gives: entries, positions, renderings, refusals.
    fn check_reuse(input: &Json, cache: &mut Vec<(Json, Adaptation)>) -> Result<(), TestCaseError> {
        let format = TranscriptFormat::from_name(input["format"].as_str().unwrap()).unwrap();
        let mut adaptations = Vec::new();
        if let Some(s) = input.get("system") {
            adaptations.push(Adaptation::system(format, s).unwrap());
        }
        for (i, m) in input["messages"].as_array().unwrap().iter().enumerate() {
            let a = match cache.iter().find(|(j, _)| j == m) {
                Some((_, a)) => a.clone(),
                None => {
                    let a = Adaptation::message(format, i, m).unwrap();
                    cache.push((m.clone(), a.clone()));
                    a
                }
            };
            adaptations.push(a);
        }
        let got = Transcript::reassemble(
            format,
            &adaptations,
            input.get("ids"),
            input.get("overrides"),
        );
        match (got, Transcript::parse(input)) {
            (Ok(got), Ok(want)) => {
                prop_assert_eq!(got.entries(), want.entries());
                for e in want.entries() {
                    prop_assert_eq!(got.position(e), want.position(e));
                }
                prop_assert_eq!(got.render(got.entries()), want.render(want.entries()));
            }
            (Err(got), Err(want)) => prop_assert_eq!(got, want),
            (got, want) => prop_assert!(
                false,
                "reassembled {:?}, parsed {:?}",
                got.map(|_| ()),
                want.map(|_| ())
            ),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn trn_5_cls_1_reassembly_from_kept_adaptations_is_parsing(
            turns in prop::collection::vec(openai_turn(), 1..8),
            order in prop::collection::vec(any::<prop::sample::Index>(), 1..16),
            overrides in prop::collection::btree_map(0usize..16, prop::sample::select(vec!["Summary", "ConversationalMessage", "ToolExchange"]), 0..3),
            ids in any::<bool>(),
        ) {
            let messages: Vec<Json> = turns.into_iter().flatten().collect();
            let mut cache = Vec::new();
            check_reuse(&json!({"format": "openai-chat", "messages": messages}), &mut cache)?;
            // the same messages again, reordered, repeated (CLS-2's counters move) and
            // overridden: the kept adaptations answer
            let picked: Vec<Json> = order.iter().map(|i| i.get(&messages).clone()).collect();
            let mut again = json!({"format": "openai-chat", "messages": picked});
            let n = again["messages"].as_array().unwrap().len();
            let o: serde_json::Map<String, Json> = overrides.iter().filter(|(i, _)| **i < n + 1)
                .map(|(i, k)| (i.to_string(), json!(k))).collect();
            if !o.is_empty() {
                again["overrides"] = Json::Object(o);
            }
            if ids {
                again["ids"] = json!((0..n).map(|i| format!("m{}", i % 3)).collect::<Vec<_>>());
            }
            check_reuse(&again, &mut cache)?;
        }

        #[test]
        fn trn_2_trn_6_openai_transcripts_round_trip(turns in prop::collection::vec(openai_turn(), 0..8)) {
            let messages: Vec<Json> = turns.into_iter().flatten().collect();
            check(&json!({"format": "openai-chat", "messages": messages}))?;
        }

        #[test]
        fn trn_17_trn_6_responses_transcripts_round_trip_and_reassemble(
            turns in prop::collection::vec(responses_turn(), 0..8),
            instructions in prop::option::of("[a-z ]{1,10}"),
        ) {
            let messages: Vec<Json> = turns.into_iter().flatten().collect();
            let mut input = json!({"format": "openai-responses", "messages": messages});
            if let Some(s) = instructions {
                input["system"] = json!(s);
            }
            check(&input)?;
            check_reuse(&input, &mut Vec::new())?;
        }

        #[test]
        fn trn_3_trn_6_anthropic_transcripts_round_trip(turns in prop::collection::vec(anthropic_turn(), 0..8), system in prop::option::of("[a-z ]{1,10}")) {
            let messages: Vec<Json> = turns.into_iter().flatten().collect();
            let mut input = json!({"format": "anthropic-messages", "messages": messages});
            if let Some(s) = system {
                input["system"] = json!(s);
            }
            check(&input)?;
        }
    }
}
