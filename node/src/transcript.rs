//! Transcripts through the library's one converter (`hybrid_compaction::transcript`, SPEC TRN),
//! as the Python binding reads them (`python/src/transcript.rs`): a transcript object
//! (`{"format", "messages", "system"?, "ids"?, "overrides"?}`) as JSON text in, the adapted
//! entries in the wire's entry shape out, or the converter's refusal (kind, path, reason).

use hybrid_compaction::model::entry::Entry;
use hybrid_compaction::transcript::{Transcript, TranscriptError};
use hybrid_compaction_trace::write::part;
use serde_json::{json, Map, Value as Json};

use crate::answer::{Answer, Failure};

/// The entries of the transcript `text` as a JSON array (see the module docs).
pub fn entries(text: &str) -> Answer {
    let t = parse(text)?;
    let entries: Vec<Json> = t.entries().iter().map(entry_json).collect();
    Ok(Json::Array(entries).to_string())
}

/// The transcript object given as JSON text, or the converter's refusal.
pub fn parse(text: &str) -> Result<Transcript, Failure> {
    let value: Json = serde_json::from_str(text).map_err(|e| Failure::Transcript {
        kind: "InvalidArgument".to_owned(),
        path: String::new(),
        reason: format!("not JSON: {e}"),
    })?;
    Transcript::parse(&value).map_err(|e| refusal(&e))
}

/// The converter's error as a [`Failure::Transcript`].
pub fn refusal(e: &TranscriptError) -> Failure {
    let (path, reason) = match e {
        TranscriptError::Malformed { path, message } => (path.clone(), message.clone()),
        TranscriptError::UnsupportedContent { path, part_type } => (
            path.clone(),
            format!("content of type {part_type:?} cannot be carried back as it was given"),
        ),
        other => ("$".to_owned(), other.to_string()),
    };
    Failure::Transcript {
        kind: e.kind().name().to_owned(),
        path: relative(&path),
        reason,
    }
}

/// `$.messages[3].content[1]` as `messages[3].content[1]` (`$` alone as the empty path).
pub fn relative(path: &str) -> String {
    path.strip_prefix("$.")
        .or_else(|| path.strip_prefix('$'))
        .unwrap_or(path)
        .to_owned()
}

/// One entry in the wire's entry shape (`docs/WIRE.md`, "Entries").
fn entry_json(e: &Entry) -> Json {
    let m = e.message();
    let mut out = Map::new();
    out.insert("id".into(), json!(e.id().as_str()));
    out.insert("kind".into(), json!(e.kind().name()));
    out.insert("role".into(), json!(m.role));
    if let Some(a) = &m.author {
        out.insert("author".into(), json!(a));
    }
    let parts: Vec<Json> = m
        .parts
        .iter()
        .map(|p| serde_json::to_value(part(p)).unwrap_or(Json::Null))
        .collect();
    out.insert("parts".into(), Json::Array(parts));
    Json::Object(out)
}
