//! Errors of the wire base: a case the format cannot express ([`WireError`]: exit code 2), and a
//! case the SPEC rejects, answered by a typed error ([`ErrorOutput`], SPEC ERR-1).

use hybrid_compaction_model::error::{ErrorKind, TypedError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::names::Name;

/// A case the wire format cannot express: the CLI reports it and exits 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct WireError {
    /// JSON path of the offending value, e.g. `$.entries[2].parts[0].result.value`.
    pub path: String,
    /// What was expected.
    pub message: String,
}

impl WireError {
    /// A wire error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> WireError {
        WireError {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Why a case did not produce a regular result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CaseError {
    /// The case is not valid wire input (exit 2).
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The SPEC rejects the input: this typed error is the answer.
    #[error("the case is answered by a typed error")]
    Answer(ErrorOutput),
}

impl From<TypedError> for CaseError {
    fn from(e: TypedError) -> CaseError {
        CaseError::Answer(ErrorOutput::from(e))
    }
}

/// A wire error at `path`, as a [`CaseError`].
pub(crate) fn wire<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, CaseError> {
    Err(CaseError::Wire(WireError::new(path, message)))
}

/// A typed error (SPEC ERR-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErrorOutput {
    /// The error kind.
    pub kind: Name<ErrorKind>,
    /// The offending field (policy member name, or `Version` for snapshots), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The offending entry id, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    /// Human-readable explanation; informative only (never compared).
    pub message: String,
}

impl From<TypedError> for ErrorOutput {
    fn from(e: TypedError) -> ErrorOutput {
        ErrorOutput {
            kind: Name(e.kind),
            field: e.field,
            entry_id: e.entry_id,
            message: e.message,
        }
    }
}

/// A typed error answer.
pub(crate) fn answer(
    kind: ErrorKind,
    field: Option<&str>,
    entry_id: Option<&str>,
    message: impl Into<String>,
) -> ErrorOutput {
    ErrorOutput {
        kind: Name(kind),
        field: field.map(str::to_owned),
        entry_id: entry_id.map(str::to_owned),
        message: message.into(),
    }
}

/// The typed answer of a vocabulary error (anything with a [`TypedError`] rendering).
pub(crate) fn typed<E>(e: &E) -> CaseError
where
    for<'a> &'a E: Into<TypedError>,
{
    CaseError::Answer(ErrorOutput::from(e.into()))
}

/// The typed error output of a vocabulary error.
pub(crate) fn error_output<E>(e: &E) -> ErrorOutput
where
    for<'a> &'a E: Into<TypedError>,
{
    ErrorOutput::from(e.into())
}
