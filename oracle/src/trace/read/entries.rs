//! Recorded entries rebuilt as vocabulary entries (SPEC TRC-1): an entry with content through
//! the wire's entry conversion, a redacted one (digest, call and result structure, artifact
//! reference) with the same structure and its content digest as its only text, so the
//! verifier's structural equality (SPEC VER-2) compares digests.
//!
//! Both the run's entry table ([`crate::trace::read::tables`], where an entry is defined once per run) and
//! the per-call replay ([`crate::trace::judge::replay`]) build entries here; neither imports the other for it.

use hybrid_compaction_model::artifact::{ArtifactReference, Digest};
use hybrid_compaction_model::entry::{Entry, EntryKind, RecoverableSegment};
use hybrid_compaction_model::message::{
    FunctionCall, FunctionResult, Message, Part, ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_TOOL, ROLE_USER,
};
use hybrid_compaction_model::value::Value;

use crate::trace::format::{TraceEntry, TraceToolCall, TraceToolResult};
use crate::wire::convert;
use crate::wire::error::CaseError;
use crate::wire::input::{EntryInput, KindInput};

/// Why a call record cannot be rebuilt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PrepareError {
    /// The record is not valid trace input (the checker exits 2).
    #[error("{0}")]
    Unreadable(String),
    /// The record is readable but self-contradictory (a violation of SPEC TRC-1).
    #[error("{0}")]
    Inconsistent(String),
}

pub(crate) fn unreadable(path: &str, e: CaseError) -> PrepareError {
    match e {
        CaseError::Wire(w) => PrepareError::Unreadable(w.to_string()),
        CaseError::Answer(a) => PrepareError::Unreadable(format!(
            "{path}: the SPEC rejects this entry ({}: {})",
            a.kind, a.message
        )),
    }
}

fn digest(hex: &str, path: impl FnOnce() -> String) -> Result<Digest, PrepareError> {
    Digest::parse(hex).map_err(|_| {
        PrepareError::Unreadable(format!(
            "{}: expected 64 lowercase hex digits, got {hex:?}",
            path()
        ))
    })
}

/// Builds one entry; the JSON path of an error is only formatted when there is one.
pub(crate) fn entry_at(t: &TraceEntry, path: impl Fn() -> String) -> Result<Entry, PrepareError> {
    build(t, &path)
}

/// Builds one entry, with content or redacted, from its recorded form; `path` is
/// the JSON path of the entry, formatted only for an error.
fn build(t: &TraceEntry, path: &dyn Fn() -> String) -> Result<Entry, PrepareError> {
    let is_redacted =
        t.digest.is_some() || t.calls.is_some() || t.results.is_some() || t.reference.is_some();
    let content = t.text.is_some() || t.parts.is_some() || t.segment.is_some();
    if is_redacted && content {
        return Err(PrepareError::Unreadable(format!(
            "{}: an entry has content (`text`, `parts`, `segment`) or is redacted (`digest`, `calls`, `results`, `reference`), not both",
            path()
        )));
    }
    if !is_redacted {
        let input = EntryInput {
            id: t.id.clone(),
            kind: t.kind,
            role: t.role.clone(),
            author: t.author.clone(),
            text: t.text.clone(),
            parts: t.parts.clone(),
            segment: t.segment.clone(),
        };
        return convert::entry(&input, "$").or_else(|_| {
            let p = path();
            convert::entry(&input, &p).map_err(|e| unreadable(&p, e))
        });
    }
    let calls: Vec<CallText> = t.calls.iter().flatten().map(CallText::from).collect();
    let results: Vec<ResultText> = t.results.iter().flatten().map(ResultText::from).collect();
    redacted(
        &Redacted {
            id: &t.id,
            kind: t.kind,
            role: t.role.as_deref(),
            author: t.author.as_deref(),
            digest: t.digest.as_deref(),
            reference: t.reference.as_deref(),
            calls: &calls,
            results: &results,
        },
        path,
    )
}

/// A redacted call part's texts, borrowed (from its recorded form, or from the trace text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallText<'a> {
    /// `callId`.
    pub call_id: &'a str,
    /// `name`.
    pub name: &'a str,
}

impl<'a> From<&'a TraceToolCall> for CallText<'a> {
    fn from(c: &'a TraceToolCall) -> CallText<'a> {
        CallText {
            call_id: &c.call_id,
            name: &c.name,
        }
    }
}

impl From<&CallText<'_>> for TraceToolCall {
    fn from(c: &CallText<'_>) -> TraceToolCall {
        TraceToolCall {
            call_id: c.call_id.to_owned(),
            name: c.name.to_owned(),
        }
    }
}

/// A redacted result part's texts, borrowed (from its recorded form, or from the trace text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultText<'a> {
    /// `callId`.
    pub call_id: &'a str,
    /// `reference`, if recorded.
    pub reference: Option<&'a str>,
}

impl<'a> From<&'a TraceToolResult> for ResultText<'a> {
    fn from(r: &'a TraceToolResult) -> ResultText<'a> {
        ResultText {
            call_id: &r.call_id,
            reference: r.reference.as_deref(),
        }
    }
}

impl From<&ResultText<'_>> for TraceToolResult {
    fn from(r: &ResultText<'_>) -> TraceToolResult {
        TraceToolResult {
            call_id: r.call_id.to_owned(),
            reference: r.reference.map(str::to_owned),
        }
    }
}

/// A redacted entry's members, borrowed (from its recorded form, or from the trace text as it
/// is read: [`crate::trace::read::defined`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Redacted<'a> {
    /// `id`.
    pub id: &'a str,
    /// `kind`.
    pub kind: KindInput,
    /// `role`, if recorded.
    pub role: Option<&'a str>,
    /// `author`, if recorded.
    pub author: Option<&'a str>,
    /// `digest`, if recorded.
    pub digest: Option<&'a str>,
    /// `reference`, if recorded.
    pub reference: Option<&'a str>,
    /// `calls` (empty if not recorded).
    pub calls: &'a [CallText<'a>],
    /// `results` (empty if not recorded).
    pub results: &'a [ResultText<'a>],
}

/// Builds a redacted entry: its content digest as its one text part (a
/// `RecoverableContextSegment`'s body; an `ArtifactReference`'s text is its reference), then
/// its call and result parts.
pub(crate) fn redacted(t: &Redacted, path: &dyn Fn() -> String) -> Result<Entry, PrepareError> {
    let kind = convert::kind(t.kind);
    let key = t.digest.unwrap_or_default().to_owned();
    let reference = match t.reference {
        Some(r) => Some(ArtifactReference::new(digest(r, || {
            format!("{}.reference", path())
        })?)),
        None => None,
    };
    let spec_error = |e: hybrid_compaction_model::entry::EntryError| {
        PrepareError::Unreadable(format!("{}: the SPEC rejects this entry: {e}", path()))
    };
    if kind == EntryKind::RecoverableContextSegment {
        let Some(reference) = reference else {
            return Err(PrepareError::Unreadable(format!(
                "{}: a redacted RecoverableContextSegment needs `reference`",
                path()
            )));
        };
        return Entry::recoverable(
            t.id,
            RecoverableSegment {
                reference,
                body: key,
            },
        )
        .map_err(spec_error);
    }
    let mut parts = Vec::with_capacity(1 + t.calls.len() + t.results.len());
    if kind == EntryKind::ArtifactReference {
        match reference {
            Some(r) => parts.push(Part::Text(r.text())),
            None => {
                return Err(PrepareError::Unreadable(format!(
                    "{}: a redacted ArtifactReference needs `reference`",
                    path()
                )))
            }
        }
    } else {
        parts.push(Part::Text(key));
    }
    let role = t.role.map_or_else(
        || {
            if !t.calls.is_empty() {
                ROLE_ASSISTANT
            } else if !t.results.is_empty() {
                ROLE_TOOL
            } else if kind == EntryKind::SystemInstruction {
                ROLE_SYSTEM
            } else {
                ROLE_USER
            }
            .to_owned()
        },
        str::to_owned,
    );
    for c in t.calls {
        parts.push(Part::Call(FunctionCall {
            call_id: c.call_id.to_owned(),
            name: c.name.to_owned(),
            arguments: None,
            informational_only: false,
        }));
    }
    for (i, r) in t.results.iter().enumerate() {
        let value = match r.reference {
            Some(d) => Value::String(
                ArtifactReference::new(digest(d, || format!("{}.results[{i}].reference", path()))?)
                    .text(),
            ),
            None => Value::Null,
        };
        parts.push(Part::Result(FunctionResult {
            call_id: r.call_id.to_owned(),
            value,
        }));
    }
    let message = Message {
        role,
        author: t.author.map(str::to_owned),
        parts,
    };
    Entry::new(t.id, kind, message).map_err(spec_error)
}
