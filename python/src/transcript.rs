//! Transcripts through the library's one converter (`hybrid_compaction::transcript`, SPEC TRN).
//!
//! The Python layer hands over a transcript object (`{"format", "messages", "system"?, "ids"?,
//! "overrides"?}`) whose LangChain message objects it has already written as their fields; this
//! module writes it as JSON text with [`crate::pyvalue`] (the Python-only refusals, by path),
//! parses it with [`Transcript::parse`] and answers the adapted entries in the wire's entry shape
//! (`id`, `kind`, `role`, `author`, `parts` with tagged values), or the converter's refusal: its
//! kind (ERR-1), the JSON path of the offending value and what was expected there.

use hybrid_compaction::model::entry::Entry;
use hybrid_compaction::transcript::{Transcript, TranscriptError};
use hybrid_compaction_trace::write::part;
use pyo3::prelude::*;
use serde_json::{json, Map, Value as Json};

use crate::{errors, pyvalue};

/// A refusal of the converter: `(kind, path, reason)`, the path without its leading `$.`.
pub type Refusal = (String, String, String);

/// Reads a transcript given as a Python value (see the module docs).
pub fn read(value: &Bound<'_, PyAny>) -> Result<Transcript, Refusal> {
    let text = pyvalue::to_json_exact(value)
        .map_err(|r| ("InvalidArgument".to_owned(), relative(&r.path), r.message))?;
    let json: Json = serde_json::from_str(&text)
        .map_err(|e| ("InvalidArgument".to_owned(), String::new(), e.to_string()))?;
    Transcript::parse(&json).map_err(|e| refusal(&e))
}

/// The converter's error as `(kind, path, reason)`.
pub fn refusal(e: &TranscriptError) -> Refusal {
    let (path, reason) = match e {
        TranscriptError::Malformed { path, message } => (path.clone(), message.clone()),
        TranscriptError::UnsupportedContent { path, part_type } => (
            path.clone(),
            format!("content of type {part_type:?} cannot be carried back as it was given"),
        ),
        other => ("$".to_owned(), other.to_string()),
    };
    (e.kind().name().to_owned(), relative(&path), reason)
}

/// `$.messages[3].content[1]` as `messages[3].content[1]` (`$` alone as the empty path).
pub fn relative(path: &str) -> String {
    path.strip_prefix("$.")
        .or_else(|| path.strip_prefix('$'))
        .unwrap_or(path)
        .to_owned()
}

/// One entry in the wire's entry shape (`docs/WIRE.md`, "Entries").
pub fn entry_json(e: &Entry) -> Json {
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

/// The entries of a transcript (SPEC TRN-1 .. TRN-13) as JSON text; a refusal raises
/// `TranscriptError` (`UnsupportedContentError` for kind `NotSupported`) with its kind, path and
/// reason.
#[pyfunction]
pub fn transcript_entries(transcript: &Bound<'_, PyAny>) -> PyResult<String> {
    let t =
        read(transcript).map_err(|(kind, path, reason)| errors::transcript(kind, path, reason))?;
    let entries: Vec<Json> = t.entries().iter().map(entry_json).collect();
    Ok(Json::Array(entries).to_string())
}
