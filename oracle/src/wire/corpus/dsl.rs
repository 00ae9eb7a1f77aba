//! Small builders for hand-written cases (JSON values in the wire format).

use hybrid_compaction_model::artifact::ArtifactReference;
use serde_json::{json, Value as Json};

/// The canonical reference of `content` (SPEC ART-2).
pub fn reference(content: &str) -> String {
    ArtifactReference::to_content(content).to_string()
}

/// The lowercase hex digest of `content` (SPEC ART-1).
pub fn digest(content: &str) -> String {
    ArtifactReference::to_content(content).digest().to_hex()
}

/// An entry of `kind` with one text part.
pub fn entry(id: &str, kind: &str, text: &str) -> Json {
    json!({"id": id, "kind": kind, "text": text})
}

/// A `ConversationalMessage` (role user).
pub fn conv(id: &str, text: &str) -> Json {
    entry(id, "ConversationalMessage", text)
}

/// A `SystemInstruction` (role system).
pub fn sys(id: &str, text: &str) -> Json {
    entry(id, "SystemInstruction", text)
}

/// An `OptionalContext` entry.
pub fn opt(id: &str, text: &str) -> Json {
    entry(id, "OptionalContext", text)
}

/// A `Summary` entry.
pub fn summary(id: &str, text: &str) -> Json {
    entry(id, "Summary", text)
}

/// An `AuthoritativeSessionState` entry.
pub fn auth(id: &str, text: &str) -> Json {
    entry(id, "AuthoritativeSessionState", text)
}

/// An `ApprovalSecurityState` entry.
pub fn approval(id: &str, text: &str) -> Json {
    entry(id, "ApprovalSecurityState", text)
}

/// An `ArtifactReference` entry whose text is the reference of `content`.
pub fn artref(id: &str, content: &str) -> Json {
    entry(id, "ArtifactReference", &reference(content))
}

/// A `ToolExchange` call entry (role assistant) with call parts `call_ids`, function `f`.
pub fn call(id: &str, call_ids: &[&str]) -> Json {
    let parts: Vec<Json> = call_ids
        .iter()
        .map(|c| json!({"call": {"callId": c, "name": "f"}}))
        .collect();
    json!({"id": id, "kind": "ToolExchange", "parts": parts})
}

/// A `ToolExchange` result entry (role tool) answering `call_ids` with value `"ok"`.
pub fn result(id: &str, call_ids: &[&str]) -> Json {
    let parts: Vec<Json> = call_ids
        .iter()
        .map(|c| json!({"result": {"callId": c, "value": "ok"}}))
        .collect();
    json!({"id": id, "kind": "ToolExchange", "parts": parts})
}

/// A `ToolExchange` result entry answering `call_id` with a value.
pub fn result_value(id: &str, call_id: &str, value: Json) -> Json {
    json!({"id": id, "kind": "ToolExchange", "parts": [{"result": {"callId": call_id, "value": value}}]})
}

/// A result entry whose value is the canonical reference of `content` (reference-bearing).
pub fn result_ref(id: &str, call_id: &str, content: &str) -> Json {
    result_value(id, call_id, Json::String(reference(content)))
}

/// A `RecoverableContextSegment` whose body is `content` (reference = its digest).
pub fn body(id: &str, content: &str) -> Json {
    json!({"id": id, "kind": "RecoverableContextSegment", "segment": {"body": content}})
}

/// A policy with a table estimator.
pub fn policy_table(
    hard: i32,
    margin: i32,
    retention: i32,
    attempts: i32,
    sizes: &[(&str, i32)],
    default: i32,
) -> Json {
    let mut m = serde_json::Map::new();
    for (k, v) in sizes {
        m.insert((*k).to_owned(), json!(v));
    }
    json!({
        "hardLimit": hard, "triggerMargin": margin,
        "recentMessageRetentionCount": retention, "maximumCompactionAttempts": attempts,
        "preservationLabel": "vectors", "preservationVersion": 1,
        "estimator": {"kind": "table", "sizes": Json::Object(m), "default": default}
    })
}

/// A policy with the UTF-8 context estimator.
pub fn policy_utf8(hard: i32, margin: i32, retention: i32, attempts: i32) -> Json {
    json!({
        "hardLimit": hard, "triggerMargin": margin,
        "recentMessageRetentionCount": retention, "maximumCompactionAttempts": attempts,
        "preservationLabel": "vectors", "preservationVersion": 1,
        "estimator": {"kind": "utf8"}
    })
}

/// A policy with a constant estimator.
pub fn policy_const(hard: i32, margin: i32, retention: i32, attempts: i32, size: i32) -> Json {
    json!({
        "hardLimit": hard, "triggerMargin": margin,
        "recentMessageRetentionCount": retention, "maximumCompactionAttempts": attempts,
        "preservationLabel": "vectors", "preservationVersion": 1,
        "estimator": {"kind": "constant", "size": size}
    })
}

/// Stage-name list helper: `S`=SnapshotCaptured, `E`=RecoverableBodyEviction,
/// `R`=ReducerAttempt, `M`=RestartedAfterMutation, `F`=DeterministicFallback.
pub fn stages(code: &str) -> Json {
    Json::Array(
        code.chars()
            .filter_map(|c| match c {
                'S' => Some("SnapshotCaptured"),
                'E' => Some("RecoverableBodyEviction"),
                'R' => Some("ReducerAttempt"),
                'M' => Some("RestartedAfterMutation"),
                'F' => Some("DeterministicFallback"),
                _ => None,
            })
            .map(|s| Json::String(s.to_owned()))
            .collect(),
    )
}

/// An expected typed error of `kind`.
pub fn err(kind: &str) -> Json {
    json!({"error": {"kind": kind}})
}

/// An expected typed error of `kind` naming `entry_id`.
pub fn err_entry(kind: &str, entry_id: &str) -> Json {
    json!({"error": {"kind": kind, "entryId": entry_id}})
}

/// An expected typed error of `kind` naming `field`.
pub fn err_field(kind: &str, field: &str) -> Json {
    json!({"error": {"kind": kind, "field": field}})
}
