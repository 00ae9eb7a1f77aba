//! Shared builders for the clause tests: short constructors for entries, policies and
//! estimators, so each test reads as the list it builds. Policies measuring UTF-8 use the
//! estimators of the implementation under test (`crate::imp`).

use std::collections::BTreeMap;
use std::sync::Arc;

use hybrid_compaction_model::*;
use sha2::{Digest as _, Sha256};

use crate::imp;

/// A `ConversationalMessage` with role `user` and one text part.
pub fn conv(id: &str, text: &str) -> Entry {
    Entry::new(
        id,
        EntryKind::ConversationalMessage,
        Message::text("user", text),
    )
    .unwrap()
}

/// An entry of `kind` with role `user` and one text part.
pub fn of_kind(id: &str, kind: EntryKind, text: &str) -> Entry {
    let role = if kind == EntryKind::SystemInstruction {
        "system"
    } else {
        "user"
    };
    Entry::new(id, kind, Message::text(role, text)).unwrap()
}

/// A `SystemInstruction`.
pub fn sys(id: &str, text: &str) -> Entry {
    of_kind(id, EntryKind::SystemInstruction, text)
}

/// An `OptionalContext`.
pub fn opt(id: &str, text: &str) -> Entry {
    of_kind(id, EntryKind::OptionalContext, text)
}

/// A `Summary`.
pub fn summary(id: &str, text: &str) -> Entry {
    of_kind(id, EntryKind::Summary, text)
}

/// A `ToolExchange` call entry (role `assistant`, function `f`, no arguments) with an optional
/// text part first (so text estimators can give it a size).
pub fn call_t(id: &str, text: &str, call_ids: &[&str]) -> Entry {
    let mut parts = Vec::new();
    if !text.is_empty() {
        parts.push(Part::text(text));
    }
    for c in call_ids {
        parts.push(Part::call(*c, "f"));
    }
    Entry::new(
        id,
        EntryKind::ToolExchange,
        Message::new("assistant", parts),
    )
    .unwrap()
}

/// A `ToolExchange` call entry without text.
pub fn call(id: &str, call_ids: &[&str]) -> Entry {
    call_t(id, "", call_ids)
}

/// A `ToolExchange` result entry (role `tool`), with an optional text part first; each result
/// value is the string `"ok"`.
pub fn result_t(id: &str, text: &str, call_ids: &[&str]) -> Entry {
    let mut parts = Vec::new();
    if !text.is_empty() {
        parts.push(Part::text(text));
    }
    for c in call_ids {
        parts.push(Part::result(*c, Value::String("ok".into())));
    }
    Entry::new(id, EntryKind::ToolExchange, Message::new("tool", parts)).unwrap()
}

/// A `ToolExchange` result entry without text.
pub fn result(id: &str, call_ids: &[&str]) -> Entry {
    result_t(id, "", call_ids)
}

/// A result entry whose single result value is the canonical reference to `content`.
pub fn ref_result(id: &str, call_id: &str, content: &str) -> Entry {
    let r = ArtifactReference::to_content(content).to_string();
    Entry::new(
        id,
        EntryKind::ToolExchange,
        Message::new("tool", vec![Part::result(call_id, Value::String(r))]),
    )
    .unwrap()
}

/// A result entry answering each `(call id, content)` in order: with the canonical reference
/// to `content` when given (one digest per such part, in part order, SPEC ENT-5.4), else with
/// the plain string `"ok"`.
pub fn refs_result(id: &str, answers: &[(&str, Option<&str>)]) -> Entry {
    let parts = answers
        .iter()
        .map(|(c, content)| {
            let v = content.map_or_else(
                || "ok".to_owned(),
                |t| ArtifactReference::to_content(t).to_string(),
            );
            Part::result(*c, Value::String(v))
        })
        .collect();
    Entry::new(id, EntryKind::ToolExchange, Message::new("tool", parts)).unwrap()
}

/// An `ArtifactReference` entry naming `content`.
pub fn aref(id: &str, content: &str) -> Entry {
    let r = ArtifactReference::to_content(content).to_string();
    Entry::new(id, EntryKind::ArtifactReference, Message::text("user", r)).unwrap()
}

/// A `RecoverableContextSegment` whose body is `content` (reference = digest of the content).
pub fn seg(id: &str, content: &str) -> Entry {
    Entry::recoverable(
        id,
        RecoverableSegment {
            reference: ArtifactReference::to_content(content),
            body: content.to_owned(),
        },
    )
    .unwrap()
}

/// A policy spec with the given numbers, label `test`, version 1 and `estimator`.
pub fn spec(
    h: i32,
    margin: i32,
    retention: i32,
    attempts: i32,
    estimator: Arc<dyn Estimator>,
) -> PolicySpec {
    PolicySpec {
        hard_limit: h,
        trigger_margin: margin,
        recent_message_retention_count: retention,
        maximum_compaction_attempts: attempts,
        preservation_label: Some("test".into()),
        preservation_version: 1,
        estimator: Some(estimator),
    }
}

/// A validated policy measuring message text (SPEC EST-4).
pub fn text_policy(h: i32, margin: i32, retention: i32, attempts: i32) -> Policy {
    Policy::new(spec(h, margin, retention, attempts, imp().text_estimator())).unwrap()
}

/// A validated policy measuring with the UTF-8 context estimator (SPEC EST-2).
pub fn context_policy(h: i32, margin: i32, retention: i32, attempts: i32) -> Policy {
    Policy::new(spec(
        h,
        margin,
        retention,
        attempts,
        imp().context_estimator(),
    ))
    .unwrap()
}

/// A validated policy measuring with a host-defined table (default 0).
pub fn table_policy(
    h: i32,
    margin: i32,
    retention: i32,
    attempts: i32,
    sizes: &[(&str, i32)],
) -> Policy {
    Policy::new(spec(
        h,
        margin,
        retention,
        attempts,
        Arc::new(table(sizes, 0)),
    ))
    .unwrap()
}

/// A table estimator.
pub fn table(sizes: &[(&str, i32)], default: i32) -> TableEstimator {
    TableEstimator {
        sizes: sizes
            .iter()
            .map(|(k, v)| ((*k).to_owned(), *v))
            .collect::<BTreeMap<_, _>>(),
        default,
    }
}

/// The ids of a list, as strings.
pub fn ids(entries: &[Entry]) -> Vec<String> {
    entries.iter().map(|e| e.id().as_str().to_owned()).collect()
}

/// Ids as strings.
pub fn id_strs(ids: &[EntryId]) -> Vec<String> {
    ids.iter().map(|e| e.as_str().to_owned()).collect()
}

/// Owned strings from literals.
pub fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_owned()).collect()
}

/// An entry of any kind, built the way that kind must be built (SPEC ENT-5, ENT-6).
pub fn entry_of_kind(id: &str, kind: EntryKind) -> Entry {
    match kind {
        EntryKind::ToolExchange => call(id, &["c"]),
        EntryKind::ArtifactReference => aref(id, "x"),
        EntryKind::RecoverableContextSegment => seg(id, "x"),
        other => of_kind(id, other, "x"),
    }
}

/// Lowercase hex SHA-256 of UTF-8 `text`.
pub fn sha_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The content-hash id (SPEC CLS-2) the implementation under test gives message `index`.
pub fn content_hash_id(messages: &[Message], index: usize) -> String {
    let mut classifier = imp().content_hash_classifier();
    classifier
        .entry_id(messages, index)
        .expect("the content-hash classifier never fails")
}

/// SPEC CLS-2: `message` renders as `expected`. Checked on the rendering string where the
/// implementation builds one, and always through the content-hash id it derives from it.
pub fn assert_rendering(message: &Message, expected: &str) {
    if let Some(rendering) = imp().canonical_rendering(message) {
        assert_eq!(rendering, expected);
    }
    assert_eq!(
        content_hash_id(std::slice::from_ref(message), 0),
        format!("{}:0", sha_hex(expected)),
        "rendering {expected:?}"
    );
}

/// SPEC CLS-2: the value-text of `value` is `expected` (as the only result of a tool message).
pub fn assert_value_text(value: &Value, expected: &str) {
    let message = Message::new("tool", vec![Part::result("c", value.clone())]);
    assert_rendering(&message, &format!("tool\u{1F}result:c:{expected}\u{1E}"));
}
