//! Non-retransmission vocabulary: lease ids, revisions and the lease error (SPEC LSE-1 .. LSE-10).
//!
//! A *run* (one outer agent run) owns a coordinator: the digests already delivered to the
//! provider, the digests currently reserved (each by one [`LeaseId`]) and a revision counter per
//! digest. Every provider call inside the run takes one lease, reserves the recoverable bodies it
//! sees, and at the end either *completes* the lease (marking the forwarded digests delivered) or
//! *releases* it (giving every reservation back). Digests reuse [`crate::artifact::Digest`], which
//! is well-formed by construction, so the "blank digest" argument error of the reference
//! implementation (C# S56) is unrepresentable here (SPEC LSE-2).
//!
//! The sequential rules live in `hybrid_compaction_spec::lease`; the concurrent implementation (run scopes,
//! one lock per run, the one-call gate, the filtering provider) lives in the root crate's `lease`
//! module and is checked against the sequential rules by property tests and loom models.

use std::fmt;

use crate::error::ErrorKind;

/// Identifies one provider call's lease inside a run (SPEC LSE-1). The reference implementation
/// uses a random GUID; any value unique within the run will do, so ids here are plain numbers
/// (the concurrent implementation hands them out from a per-run counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LeaseId(pub u64);

impl fmt::Display for LeaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lease-{}", self.0)
    }
}

/// A per-digest revision counter value (SPEC LSE-5). Absent counters read as `0`.
pub type Revision = u64;

/// Why a lease operation failed (SPEC LSE-2 .. LSE-7).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LeaseError {
    /// The operation needs an active run and the current flow has none (SPEC LSE-2, LSE-3,
    /// LSE-5, LSE-7). `Release` is the exception: without a run it is a no-op (SPEC LSE-4).
    #[error("no active non-retransmission run")]
    NoActiveRun,
    /// A revision counter would exceed its range; nothing was changed (SPEC LSE-5).
    #[error("revision counter overflowed")]
    RevisionOverflow,
    /// The caller's cancellation was observed before or while waiting at the gate; the waiter
    /// left no trace (SPEC LSE-7).
    #[error("cancelled while entering the run's provider-call gate")]
    Cancelled,
}

impl LeaseError {
    /// The language-neutral category (SPEC ERR-1).
    pub fn kind(&self) -> ErrorKind {
        match self {
            LeaseError::NoActiveRun => ErrorKind::InvalidOperation,
            LeaseError::RevisionOverflow => ErrorKind::Overflow,
            LeaseError::Cancelled => ErrorKind::Cancelled,
        }
    }
}

impl From<&LeaseError> for crate::error::TypedError {
    fn from(e: &LeaseError) -> crate::error::TypedError {
        crate::error::TypedError::new(e.kind(), e.to_string())
    }
}
