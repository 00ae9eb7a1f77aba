//! Rehydration requests, statuses and results (SPEC RHY-1 .. RHY-4; C# S81).
//!
//! The steps themselves are `hybrid_compaction_spec::rehydrate::rehydrate`, which reads the
//! injected [`crate::workspace::Workspace`] and revalidates the injected trust guard.

use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use crate::artifact_diagnostics::{ArtifactDiagnostics, ArtifactDiagnosticsError};
use crate::artifact_record::ReferenceRecord;
use crate::entry::RecoverableSegment;
use crate::error::ErrorKind;
use crate::names::named_enum;
use crate::trust::TrustError;

named_enum! {
    /// Who asked for the rehydration (SPEC RHY-1).
    pub enum RehydrationSource {
        /// A tool call asked.
        ToolRequest,
        /// A deterministic policy asked.
        DeterministicPolicy,
    }
}

named_enum! {
    /// `HarnessArtifactResolutionStatus` (SPEC RHY-2).
    pub enum ResolutionStatus {
        /// Resolved and verified.
        Resolved,
        /// The stored body's digest differs.
        Stale,
        /// Nothing stored.
        Missing,
        /// The owners differ.
        Unauthorized,
        /// Over budget.
        OverBudget,
    }
}

/// A rehydration request (SPEC RHY-1): built only with a positive budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RehydrationRequest {
    record: ReferenceRecord,
    source: RehydrationSource,
    budget: i64,
}

/// A non-positive budget (SPEC RHY-1): `OutOfRange`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("rehydration budget must be > 0")]
pub struct BudgetOutOfRange;

impl BudgetOutOfRange {
    /// The language-neutral category (SPEC ERR-1).
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::OutOfRange
    }
}

impl RehydrationRequest {
    /// The request for `record`'s reference (SPEC RHY-1).
    pub fn new(
        record: ReferenceRecord,
        source: RehydrationSource,
        budget: i64,
    ) -> Result<RehydrationRequest, BudgetOutOfRange> {
        if budget <= 0 {
            return Err(BudgetOutOfRange);
        }
        Ok(RehydrationRequest {
            record,
            source,
            budget,
        })
    }

    /// The record naming the reference and its owners.
    pub fn record(&self) -> &ReferenceRecord {
        &self.record
    }

    /// The source.
    pub fn source(&self) -> RehydrationSource {
        self.source
    }

    /// The byte budget.
    pub fn budget(&self) -> i64 {
        self.budget
    }
}

/// The segment a `Resolved` rehydration yields (SPEC RHY-4).
#[derive(Clone, PartialEq, Eq)]
pub struct ResolvedSegment {
    /// The reference and the exact body (SPEC ENT-6).
    pub segment: RecoverableSegment,
    /// Resolution time.
    pub resolved_at: SystemTime,
    /// Always `true`: a recovered body is never eagerly offloaded again (SPEC RHY-4, OFF-2).
    pub skip_eager_reoffload: bool,
}

impl fmt::Debug for ResolvedSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResolvedSegment")
            .field("reference", &self.segment.reference)
            .finish_non_exhaustive()
    }
}

/// The result of one rehydration decision (SPEC RHY-4): its event carries the same diagnostics
/// value (SPEC ATR-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RehydrationResult {
    /// The status.
    pub status: ResolutionStatus,
    /// Present iff `Resolved`.
    pub segment: Option<ResolvedSegment>,
    /// The decision's diagnostics, shared with its event.
    pub diagnostics: Arc<ArtifactDiagnostics>,
}

/// Why a rehydration raised instead of deciding (SPEC RHY-3). No text from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RehydrationError {
    /// A revalidation failed (SPEC TRU-2).
    #[error(transparent)]
    Trust(TrustError),
    /// The workspace read failed (`InvalidOperation`).
    #[error("artifact workspace read failed")]
    WorkspaceRead,
    /// The diagnostics value was invalid (SPEC ATR-2; unreachable from the spec's steps).
    #[error(transparent)]
    Diagnostics(ArtifactDiagnosticsError),
}

impl RehydrationError {
    /// The language-neutral category (SPEC ERR-1).
    pub fn kind(&self) -> ErrorKind {
        match self {
            RehydrationError::Trust(e) => e.kind(),
            RehydrationError::WorkspaceRead => ErrorKind::InvalidOperation,
            RehydrationError::Diagnostics(e) => e.kind(),
        }
    }
}
