//! Recorded entries rebuilt as vocabulary entries (SPEC TRC-1): an entry with content through
//! the wire's entry conversion, a redacted one (digest, call and result structure, artifact
//! reference) with the same structure and its content digest as its only text, so the
//! verifier's structural equality (SPEC VER-2) compares digests.
//!
//! Both the run's entry table ([`super::compact`], where an entry is defined once per run) and
//! the per-call replay ([`super::replay`]) build entries here; neither imports the other for it.

use hybrid_compaction_model::artifact::{ArtifactReference, Digest};
use hybrid_compaction_model::entry::{Entry, EntryKind, RecoverableSegment};
use hybrid_compaction_model::message::{
    FunctionCall, FunctionResult, Message, Part, ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_TOOL, ROLE_USER,
};
use hybrid_compaction_model::value::Value;

use super::format::TraceEntry;
use crate::wire::convert;
use crate::wire::error::CaseError;
use crate::wire::input::EntryInput;

/// Why a call record cannot be rebuilt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrepareError {
    /// The record is not valid trace input (the checker exits 2).
    #[error("{0}")]
    Unreadable(String),
    /// The record is readable but self-contradictory (a violation of SPEC TRC-1).
    #[error("{0}")]
    Inconsistent(String),
}

pub(super) fn unreadable(path: &str, e: CaseError) -> PrepareError {
    match e {
        CaseError::Wire(w) => PrepareError::Unreadable(w.to_string()),
        CaseError::Answer(a) => PrepareError::Unreadable(format!(
            "{path}: the SPEC rejects this entry ({}: {})",
            a.kind, a.message
        )),
    }
}

fn digest(hex: &str, path: &str) -> Result<Digest, PrepareError> {
    Digest::parse(hex).map_err(|_| {
        PrepareError::Unreadable(format!(
            "{path}: expected 64 lowercase hex digits, got {hex:?}"
        ))
    })
}

/// Builds one entry, with content or redacted.
pub fn entry(t: &TraceEntry, path: &str) -> Result<Entry, PrepareError> {
    let redacted =
        t.digest.is_some() || t.calls.is_some() || t.results.is_some() || t.reference.is_some();
    let content = t.text.is_some() || t.parts.is_some() || t.segment.is_some();
    if redacted && content {
        return Err(PrepareError::Unreadable(format!(
            "{path}: an entry has content (`text`, `parts`, `segment`) or is redacted (`digest`, `calls`, `results`, `reference`), not both"
        )));
    }
    if !redacted {
        let input = EntryInput {
            id: t.id.clone(),
            kind: t.kind,
            role: t.role.clone(),
            author: t.author.clone(),
            text: t.text.clone(),
            parts: t.parts.clone(),
            segment: t.segment.clone(),
        };
        return convert::entry(&input, path).map_err(|e| unreadable(path, e));
    }
    let kind = convert::kind(t.kind);
    let key = t.digest.clone().unwrap_or_default();
    let reference = match &t.reference {
        Some(r) => Some(ArtifactReference::new(digest(
            r,
            &format!("{path}.reference"),
        )?)),
        None => None,
    };
    let spec_error = |e: hybrid_compaction_model::entry::EntryError| {
        PrepareError::Unreadable(format!("{path}: the SPEC rejects this entry: {e}"))
    };
    if kind == EntryKind::RecoverableContextSegment {
        let Some(reference) = reference else {
            return Err(PrepareError::Unreadable(format!(
                "{path}: a redacted RecoverableContextSegment needs `reference`"
            )));
        };
        return Entry::recoverable(
            &t.id,
            RecoverableSegment {
                reference,
                body: key,
            },
        )
        .map_err(spec_error);
    }
    let mut parts = Vec::new();
    if kind == EntryKind::ArtifactReference {
        match reference {
            Some(r) => parts.push(Part::Text(r.to_string())),
            None => {
                return Err(PrepareError::Unreadable(format!(
                    "{path}: a redacted ArtifactReference needs `reference`"
                )))
            }
        }
    } else {
        parts.push(Part::Text(key));
    }
    for c in t.calls.iter().flatten() {
        parts.push(Part::Call(FunctionCall {
            call_id: c.call_id.clone(),
            name: c.name.clone(),
            arguments: None,
            informational_only: false,
        }));
    }
    for (i, r) in t.results.iter().flatten().enumerate() {
        let value = match &r.reference {
            Some(d) => Value::String(
                ArtifactReference::new(digest(d, &format!("{path}.results[{i}].reference"))?)
                    .to_string(),
            ),
            None => Value::Null,
        };
        parts.push(Part::Result(FunctionResult {
            call_id: r.call_id.clone(),
            value,
        }));
    }
    let role = t.role.clone().unwrap_or_else(|| {
        if t.calls.as_ref().is_some_and(|c| !c.is_empty()) {
            ROLE_ASSISTANT
        } else if t.results.as_ref().is_some_and(|r| !r.is_empty()) {
            ROLE_TOOL
        } else if kind == EntryKind::SystemInstruction {
            ROLE_SYSTEM
        } else {
            ROLE_USER
        }
        .to_owned()
    });
    let message = Message {
        role,
        author: t.author.clone(),
        parts,
    };
    Entry::new(&t.id, kind, message).map_err(spec_error)
}

/// Builds one entry; the JSON path of an error is only formatted when there is one.
pub fn entry_at(t: &TraceEntry, path: impl Fn() -> String) -> Result<Entry, PrepareError> {
    entry(t, "$").or_else(|_| entry(t, &path()))
}
