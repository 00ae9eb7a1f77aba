//! Offload requests and results (SPEC OFF-1 .. OFF-3; C# S82).
//!
//! The decision table itself is `hybrid_compaction_spec::offload::offload`.

use std::fmt;
use std::sync::Arc;

use crate::artifact_diagnostics::{ArtifactDiagnostics, ArtifactDiagnosticsError};
use crate::artifact_record::{RecordError, ReferenceRecord};
use crate::entry::RecoverableSegment;
use crate::error::ErrorKind;
use crate::trust::TrustError;

/// What is offered for offload (SPEC OFF-1).
#[derive(Clone, PartialEq, Eq)]
pub enum OffloadInput {
    /// A tool result.
    ToolResult {
        /// The tool's name (recorded, ARF-1).
        tool_name: String,
        /// The tool call's id (recorded, ARF-1).
        call_id: String,
        /// The serialized result text; its UTF-8 length is the observed size.
        serialized: String,
        /// A description (at most 500 UTF-16 units, ARF-1).
        description: String,
    },
    /// A recovered segment: always inline (SPEC OFF-2 row 1).
    RecoveredSegment(RecoverableSegment),
}

impl fmt::Debug for OffloadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OffloadInput::ToolResult { .. } => f.write_str("ToolResult(<redacted>)"),
            OffloadInput::RecoveredSegment(_) => f.write_str("RecoveredSegment(<redacted>)"),
        }
    }
}

/// An offload request (SPEC OFF-1): built only with a positive threshold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadRequest {
    input: OffloadInput,
    threshold: i64,
}

/// A non-positive threshold (SPEC OFF-1): `OutOfRange`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("offload threshold must be > 0")]
pub struct ThresholdOutOfRange;

impl ThresholdOutOfRange {
    /// The language-neutral category (SPEC ERR-1).
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::OutOfRange
    }
}

impl OffloadRequest {
    /// The request (SPEC OFF-1).
    pub fn new(input: OffloadInput, threshold: i64) -> Result<OffloadRequest, ThresholdOutOfRange> {
        if threshold <= 0 {
            return Err(ThresholdOutOfRange);
        }
        Ok(OffloadRequest { input, threshold })
    }

    /// The input.
    pub fn input(&self) -> &OffloadInput {
        &self.input
    }

    /// The byte threshold.
    pub fn threshold(&self) -> i64 {
        self.threshold
    }
}

/// The result of one offload decision (SPEC OFF-3): its event carries the same diagnostics
/// value (SPEC ATR-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadResult {
    /// The record replacing the body, present iff `Offloaded` or `ExistingReference`.
    pub record: Option<ReferenceRecord>,
    /// The decision's diagnostics, shared with its event.
    pub diagnostics: Arc<ArtifactDiagnostics>,
}

/// Why an offload raised instead of deciding (SPEC OFF-2 row 4). No text from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OffloadError {
    /// The revalidation failed (SPEC TRU-2).
    #[error(transparent)]
    Trust(TrustError),
    /// The record could not be built (SPEC ARF-3).
    #[error(transparent)]
    Record(RecordError),
    /// The diagnostics value was invalid (SPEC ATR-2; unreachable from the spec's steps).
    #[error(transparent)]
    Diagnostics(ArtifactDiagnosticsError),
}

impl OffloadError {
    /// The language-neutral category (SPEC ERR-1).
    pub fn kind(&self) -> ErrorKind {
        match self {
            OffloadError::Trust(e) => e.kind(),
            OffloadError::Record(e) => e.kind(),
            OffloadError::Diagnostics(e) => e.kind(),
        }
    }
}
