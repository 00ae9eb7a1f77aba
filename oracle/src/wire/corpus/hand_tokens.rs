//! Hand-written vectors: the provider-token estimator and the memo (SPEC EST-1, EST-6, EST-7).
//!
//! Expected counts were computed independently with Python tiktoken over the same BPE ranks
//! (the counting rule of EST-6 transcribed in `tests/golden/make_token_golden.py`), e.g.
//! `3 + T("user") + T("hello") = 3 + 1 + 1 = 5` under both encodings.

use serde_json::{json, Value as Json};

use super::dsl::*;
use super::{group, t, HandGroup};

fn policy_tokens(encoding: &str) -> Json {
    json!({
        "hardLimit": 1000, "triggerMargin": 100,
        "recentMessageRetentionCount": 1, "maximumCompactionAttempts": 1,
        "preservationLabel": "vectors", "preservationVersion": 1,
        "estimator": {"kind": "tokens", "encoding": encoding}
    })
}

fn ev(entries: Vec<Json>) -> Json {
    json!({"op": "evaluate", "entries": entries})
}

fn sizes(s: &[i32]) -> Json {
    let total: i32 = s.iter().sum();
    json!({"evaluation": {"measurementUnit": "EstimatedTokens", "entrySizes": s, "estimatedSize": total}})
}

fn call_entry(arguments: Option<Json>) -> Json {
    let mut call = json!({"callId": "k1", "name": "search"});
    if let Some(a) = arguments {
        call["arguments"] = a;
    }
    json!({"id": "c", "kind": "ToolExchange", "parts": [{"call": call}]})
}

/// The token estimator.
pub fn tokens() -> Vec<HandGroup> {
    let o200k = group(
        "token estimator, o200k_base (SPEC EST-1, EST-6)",
        Some(policy_tokens("o200k_base")),
        vec![
            t(
                "3 per message + role + text",
                &["EST-1", "EST-6"],
                ev(vec![conv("u", "hello"), sys("s", "be brief")]),
                sizes(&[5, 6]),
            ),
            t(
                "CJK and emoji text",
                &["EST-6"],
                ev(vec![conv("u", "日本語のテキスト 😀👍🏽")]),
                sizes(&[14]),
            ),
            t(
                "an author adds its tokens + 1",
                &["EST-6"],
                ev(vec![
                    json!({"id": "u", "kind": "ConversationalMessage", "role": "user", "author": "ann", "text": "hi"}),
                ]),
                sizes(&[7]),
            ),
            t(
                "special-token text counts as ordinary text",
                &["EST-6"],
                ev(vec![conv("u", "<|endoftext|>")]),
                sizes(&[11]),
            ),
            t(
                "call: name + compact JSON arguments (keys in code point order) + 1; the call id is not counted",
                &["EST-6"],
                ev(vec![call_entry(Some(json!({"q": "x", "n": 3})))]),
                sizes(&[15]),
            ),
            t(
                "call without arguments: name + 1",
                &["EST-6"],
                ev(vec![call_entry(None)]),
                sizes(&[6]),
            ),
            t(
                "call arguments render floats in the EST-2 number text (1E+21)",
                &["EST-6", "EST-2"],
                ev(vec![
                    json!({"id": "c", "kind": "ToolExchange", "parts": [{"call": {"callId": "k1", "name": "f", "arguments": {"x": {"f64": 1e21}}}}]}),
                ]),
                sizes(&[14]),
            )
            .flags(&["NumberRendering"]),
            t(
                "string result: its text; other values: compact JSON",
                &["EST-6"],
                ev(vec![
                    result_value("r", "k1", json!("found")),
                    result_value("q", "k2", json!([1, true, null])),
                ]),
                sizes(&[5, 9]),
            ),
            t(
                "the policy declares EstimatedTokens",
                &["EST-1", "EST-6"],
                json!({"op": "policy"}),
                json!({"policy": {"measurementUnit": "EstimatedTokens"}}),
            ),
        ],
    );
    let cl100k = group(
        "token estimator, cl100k_base (SPEC EST-6)",
        Some(policy_tokens("cl100k_base")),
        vec![
            t(
                "3 per message + role + text",
                &["EST-6"],
                ev(vec![conv("u", "hello"), sys("s", "be brief")]),
                sizes(&[5, 6]),
            ),
            t(
                "CJK and emoji text (more tokens than o200k_base)",
                &["EST-6"],
                ev(vec![conv("u", "日本語のテキスト 😀👍🏽")]),
                sizes(&[19]),
            ),
        ],
    );
    let memo_policy = |capacity: Option<u32>| {
        let mut p = policy_tokens("o200k_base");
        let mut memo = json!({"kind": "memo", "estimator": p["estimator"].clone()});
        if let Some(c) = capacity {
            memo["capacity"] = json!(c);
        }
        p["estimator"] = memo;
        p
    };
    let memo = group(
        "memoized estimation (SPEC EST-7)",
        Some(memo_policy(None)),
        vec![
            t(
                "a memo measures exactly what it wraps, repeated entries included",
                &["EST-7", "EST-6"],
                ev(vec![
                    conv("u", "hello"),
                    conv("v", "hello"),
                    conv("u2", "hello"),
                    sys("s", "be brief"),
                ]),
                sizes(&[5, 5, 5, 6]),
            ),
            t(
                "a memo declares the wrapped unit",
                &["EST-7", "EST-1"],
                json!({"op": "policy"}),
                json!({"policy": {"measurementUnit": "EstimatedTokens"}}),
            ),
            t(
                "a memo over a table estimator keys by id: content-equal entries keep their own sizes",
                &["EST-7", "EST-5"],
                json!({"op": "evaluate", "policy": {
                    "hardLimit": 1000, "triggerMargin": 100,
                    "recentMessageRetentionCount": 1, "maximumCompactionAttempts": 1,
                    "preservationLabel": "vectors", "preservationVersion": 1,
                    "estimator": {"kind": "memo", "capacity": 1, "estimator":
                        {"kind": "table", "sizes": {"a": 1, "b": 2}, "default": 7}}},
                    "entries": [conv("a", "same"), conv("b", "same"), conv("a2", "same"), conv("a", "same")]}),
                json!({"evaluation": {"measurementUnit": "HostDefinedUnits", "entrySizes": [1, 2, 7, 1], "estimatedSize": 11}}),
            ),
            t(
                "capacity 1 evicts between every entry and changes nothing",
                &["EST-7"],
                json!({"op": "evaluate", "policy": memo_policy(Some(1)),
                    "entries": [conv("u", "hello"), sys("s", "be brief"), conv("u", "hello")]}),
                sizes(&[5, 6, 5]),
            ),
        ],
    );
    vec![o200k, cl100k, memo]
}
