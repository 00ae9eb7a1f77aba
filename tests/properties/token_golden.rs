//! SPEC EST-6: the token estimator matches golden counts produced once by Python tiktoken.
//!
//! `tests/golden/token_sample.json` holds 248 messages (tool calls with nested arguments, tool
//! results, multi-part and empty texts, CJK, emoji with ZWJ sequences and flags, combining
//! marks, right-to-left scripts, special-token text, and eight 5–40 KB texts);
//! `tests/golden/token_golden.json` holds, per message and encoding, the raw content tokens and
//! the EST-6 chat count computed by `tests/golden/make_token_golden.py` with Python tiktoken over
//! the same BPE ranks. Every number must match exactly.

#![allow(clippy::cast_possible_truncation, reason = "golden counts are small")]

use std::collections::BTreeMap;

use hybrid_compaction::estimators::{TokenEncoding, TokenEstimator};
use hybrid_compaction::model::entry::{Entry, EntryKind};
use hybrid_compaction::model::estimator::{Estimator, MeasurementUnit};
use hybrid_compaction::model::message::{FunctionCall, Message, Part};
use hybrid_compaction::model::value::{Value, ValueMap};
use serde_json::Value as Json;

const SAMPLE: &str = include_str!("../golden/token_sample.json");
const GOLDEN: &str = include_str!("../golden/token_golden.json");

/// The sample's value mapping: JSON integers are `I64`, other numbers `F64`, objects maps.
fn value(j: &Json) -> Value {
    match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::String(s) => Value::String(s.clone()),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::I64(i),
            None => Value::F64(n.as_f64().expect("finite number")),
        },
        Json::Array(items) => Value::List(items.iter().map(value).collect()),
        Json::Object(map) => Value::Map(value_map(map)),
    }
}

fn value_map(map: &serde_json::Map<String, Json>) -> ValueMap {
    map.iter().map(|(k, v)| (k.clone(), value(v))).collect()
}

/// A sample message (also read by `token_differential`).
pub(crate) fn message(j: &Json) -> Message {
    let parts = j["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .map(|p| {
            if let Some(t) = p.get("text") {
                Part::text(t.as_str().expect("text"))
            } else if let Some(c) = p.get("call") {
                Part::Call(FunctionCall {
                    call_id: c["id"].as_str().expect("id").to_owned(),
                    name: c["name"].as_str().expect("name").to_owned(),
                    arguments: c
                        .get("arguments")
                        .map(|a| value_map(a.as_object().expect("object"))),
                    informational_only: false,
                })
            } else {
                let r = &p["result"];
                Part::result(r["id"].as_str().expect("id"), value(&r["value"]))
            }
        })
        .collect();
    Message {
        role: j["role"].as_str().expect("role").to_owned(),
        author: j.get("name").map(|n| n.as_str().expect("name").to_owned()),
        parts,
    }
}

#[derive(Debug, PartialEq)]
struct Counts {
    content: usize,
    chat: usize,
}

fn golden() -> Vec<BTreeMap<String, Counts>> {
    let golden: Vec<Json> = serde_json::from_str(GOLDEN).expect("golden json");
    golden
        .iter()
        .map(|g| {
            g.as_object()
                .expect("object")
                .iter()
                .map(|(enc, c)| {
                    let n = |k: &str| c[k].as_u64().expect("count") as usize;
                    (
                        enc.clone(),
                        Counts {
                            content: n("content"),
                            chat: n("chat"),
                        },
                    )
                })
                .collect()
        })
        .collect()
}

#[test]
fn est_6_token_counts_equal_the_python_tiktoken_golden_counts() {
    let sample: Vec<Json> = serde_json::from_str(SAMPLE).expect("sample json");
    let golden = golden();
    assert!(sample.len() >= 200, "the sample has at least 200 messages");
    assert_eq!(sample.len(), golden.len());
    let mut mismatches = Vec::new();
    for encoding in TokenEncoding::ALL {
        let estimator = TokenEstimator::new(encoding);
        for (i, (m, g)) in sample.iter().zip(&golden).enumerate() {
            let m = message(m);
            let actual = Counts {
                content: encoding.count(&m.text_content()),
                chat: estimator.message_tokens(&m),
            };
            let expected = &g[encoding.name()];
            if &actual != expected {
                mismatches.push(format!(
                    "{encoding} message {i}: {actual:?} != {expected:?}"
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn est_6_est_1_entries_measure_their_chat_count_in_estimated_tokens() {
    let sample: Vec<Json> = serde_json::from_str(SAMPLE).expect("sample json");
    let golden = golden();
    let estimator = TokenEstimator::new(TokenEncoding::O200kBase);
    assert_eq!(estimator.unit(), MeasurementUnit::EstimatedTokens);
    for (i, (m, g)) in sample.iter().zip(&golden).enumerate().take(60) {
        let m = message(m);
        let kind = if m.has_call() || m.has_result() {
            EntryKind::ToolExchange
        } else {
            EntryKind::ConversationalMessage
        };
        let entry = Entry::new(format!("e{i}"), kind, m).expect("valid entry");
        assert_eq!(
            estimator.estimate(&entry) as usize,
            g["o200k_base"].chat,
            "message {i}"
        );
    }
}
