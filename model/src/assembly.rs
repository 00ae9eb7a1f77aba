//! The assembler's vocabulary: outcomes, stages, the result record, the reducer seam and the
//! assembly error (SPEC ASM-1 .. ASM-4, ERR-1).
//!
//! These types are shared by the model (`spec::assemble`) and the engine, so their results can be
//! compared field by field.

use crate::entry::{Entry, EntryId};
use crate::error::ErrorKind;
use crate::policy::Policy;
use crate::reducers::UpstreamError;
use crate::snapshot::SnapshotError;
use crate::verification::VerificationResult;

crate::names::named_enum_with_mirror! {
    /// Assembly outcomes: three successes, then two terminations (SPEC ASM-1).
    pub enum Outcome {
        /// Below the trigger threshold (or an unhelpful reducer on an unevicted list).
        WithinLimit,
        /// Eviction or an accepted reducer proposal brought the list within bounds.
        Reduced,
        /// The deterministic preservation-only fallback produced the list.
        PreservationFallback,
        /// Required content cannot be made to fit or verify (termination).
        Irreducible,
        /// Concurrent mutation exhausted the attempt budget (termination).
        ConcurrentMutationLimit,
    }
    /// Mirror of the assembly outcome (SPEC DIA-2); terminations double as the termination
    /// category.
    mirror pub enum CompactionOutcome;
}

impl Outcome {
    /// Whether this is a success outcome.
    pub fn is_success(self) -> bool {
        matches!(
            self,
            Outcome::WithinLimit | Outcome::Reduced | Outcome::PreservationFallback
        )
    }
}

crate::names::named_enum_with_mirror! {
    /// Assembly stages, appended in execution order, repeats kept (SPEC ASM-2).
    pub enum Stage {
        /// One per snapshot capture.
        SnapshotCaptured,
        /// Once per pass in which eviction removed something.
        RecoverableBodyEviction,
        /// One per reducer invocation, appended before the call.
        ReducerAttempt,
        /// One per consumed restart (none for churn).
        RestartedAfterMutation,
        /// At most once, when the fallback starts.
        DeterministicFallback,
    }
    /// Mirror of the assembly stage (SPEC DIA-2).
    mirror pub enum StageCategory;
}

/// The assembler's result (SPEC ASM-3). Successes carry final entries and an accepted
/// verification; terminations carry neither.
#[derive(Debug, Clone, PartialEq)]
pub struct AssemblyResult {
    /// The outcome.
    pub outcome: Outcome,
    /// The bounded entries to dispatch (success only).
    pub final_entries: Option<Vec<Entry>>,
    /// Size of the first snapshot (the anchor), for the whole run.
    pub original_estimated_size: i32,
    /// Size of the final (or judged) list.
    pub final_estimated_size: i32,
    /// The policy's hard limit.
    pub hard_limit: i32,
    /// Reducer invocations plus consumed restarts; never above the budget.
    pub attempt_count: i32,
    /// Stages in execution order.
    pub stages: Vec<Stage>,
    /// Required ids of the latest (or judged) list, by position.
    pub required_entry_ids: Vec<EntryId>,
    /// Last consumed snapshot version (churn: the newly observed one).
    pub latest_snapshot_version: i64,
    /// The accepted verification (success only).
    pub final_verification: Option<VerificationResult>,
}

/// What the reducer is asked to shrink (SPEC ASM-4).
#[derive(Debug, Clone, Copy)]
pub struct ReductionRequest<'a> {
    /// The current working list.
    pub entries: &'a [Entry],
    /// Required selection of that working list (informational).
    pub required_entry_ids: &'a [EntryId],
    /// The policy in force.
    pub policy: &'a Policy,
    /// 1-based attempt number (the attempt counter after increment).
    pub attempt_number: i32,
}

/// A bridge-contract violation by an upstream reducer (SPEC BRG-1, BRG-3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContractViolation {
    /// The upstream reducer returned null.
    #[error("upstream reducer returned null")]
    NullResult,
    /// A returned message matching no request entry carries call or result parts.
    #[error("upstream reducer fabricated tool content in returned message {index}")]
    FabricatedToolContent {
        /// 0-based index of the offending message in the returned list.
        index: usize,
    },
}

/// A reducer's own failure (SPEC ASM-4, BRG-1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReducerError {
    /// The reducer failed with its own error (SPEC ASM-4, BRG-1): for the bridge, the upstream
    /// reducer's [`UpstreamError`] whole, so its [`source`](std::error::Error::source) chain
    /// reaches the host's error; for a scripted reducer, its message. Opaque: it never reaches
    /// diagnostics or an event (SPEC DIA-1, EVT-6).
    #[error("reducer failed: {}", .0.detail())]
    Failed(#[source] UpstreamError),
    /// The upstream reducer broke the bridge contract.
    #[error("reducer contract violated: {0}")]
    Contract(ContractViolation),
}

/// The entry-level reducer seam (SPEC ASM-4). Proposals are advisory; the verifier judges them.
pub trait Reducer {
    /// Proposes a smaller list; `Ok(None)` means "returned nothing" (an invalid-operation error).
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError>;
}

impl<R: Reducer + ?Sized> Reducer for &mut R {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        (**self).reduce(request)
    }
}

impl<R: Reducer + ?Sized> Reducer for Box<R> {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        (**self).reduce(request)
    }
}

/// Errors of evaluation, selection, verification, assembly and diagnostics (SPEC ERR-1).
/// Errors are never outcomes: cancellation and failures propagate instead of terminating.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssemblyError {
    /// Cancellation was observed at a check point (SPEC ASM-16).
    #[error("assembly was cancelled")]
    Cancelled,
    /// The estimator returned a negative size (SPEC POL-3).
    #[error("estimator returned a negative size for entry `{entry_id}`")]
    NegativeEstimate {
        /// The entry measured.
        entry_id: String,
    },
    /// A checked 32-bit size sum overflowed (SPEC POL-3, DIA-6).
    #[error("estimated size overflowed a signed 32-bit integer")]
    SizeOverflow,
    /// A list handed to selection or verification has a duplicate id (SPEC PRE-1, VER-1).
    #[error("duplicate entry id `{entry_id}`")]
    DuplicateEntryId {
        /// The repeated id.
        entry_id: String,
    },
    /// A snapshot capture failed (SPEC SNAP-1).
    #[error("snapshot capture failed: {0}")]
    Snapshot(#[from] SnapshotError),
    /// The reducer returned nothing (SPEC ASM-4).
    #[error("reducer returned no proposal")]
    ReducerReturnedNothing,
    /// The reducer failed or broke its contract (SPEC ASM-4, BRG-1, BRG-3).
    #[error(transparent)]
    Reducer(#[from] ReducerError),
    /// A precondition of building diagnostics from a result failed (an internal invariant:
    /// a success without an accepted verification or final entries); names it.
    #[error("diagnostics invariant violated: {0}")]
    DiagnosticsInvariant(&'static str),
    /// A rule of the diagnostics record's constructor is broken (SPEC DIA-3, DIA-4).
    #[error("diagnostics record refused: {}", .0.text())]
    DiagnosticsRecord(crate::diagnostics::RecordRule),
}

impl AssemblyError {
    /// The language-neutral category (SPEC ERR-1).
    pub fn kind(&self) -> ErrorKind {
        match self {
            AssemblyError::Cancelled => ErrorKind::Cancelled,
            AssemblyError::NegativeEstimate { .. } => ErrorKind::InvalidOperation,
            AssemblyError::SizeOverflow => ErrorKind::Overflow,
            AssemblyError::DuplicateEntryId { .. } => ErrorKind::InvalidArgument,
            AssemblyError::Snapshot(e) => e.kind(),
            AssemblyError::ReducerReturnedNothing => ErrorKind::InvalidOperation,
            AssemblyError::Reducer(ReducerError::Failed(_)) => ErrorKind::ReducerFailed,
            AssemblyError::Reducer(ReducerError::Contract(_)) => ErrorKind::ReducerContract,
            AssemblyError::DiagnosticsInvariant(_) => ErrorKind::InvalidOperation,
            AssemblyError::DiagnosticsRecord(rule) => rule.kind(),
        }
    }

    /// The entry id the error names, if any.
    pub fn entry_id(&self) -> Option<&str> {
        match self {
            AssemblyError::NegativeEstimate { entry_id }
            | AssemblyError::DuplicateEntryId { entry_id } => Some(entry_id),
            AssemblyError::Snapshot(SnapshotError::DuplicateEntryId(id)) => Some(id),
            _ => None,
        }
    }
}

impl From<&AssemblyError> for crate::error::TypedError {
    /// The typed answer of an assembly-family error (SPEC ERR-1): a negative snapshot version
    /// names the field `Version`; errors about one entry name its id.
    fn from(e: &AssemblyError) -> crate::error::TypedError {
        let mut t = crate::error::TypedError::new(e.kind(), e.to_string());
        if let AssemblyError::Snapshot(SnapshotError::NegativeVersion(_)) = e {
            t = t.with_field("Version");
        }
        if let Some(id) = e.entry_id() {
            t = t.with_entry_id(id);
        }
        t
    }
}
