//! Trust binding, its accessor and revalidation statuses (SPEC TRU-1 .. TRU-3; C# S77, S52-S53).
//!
//! A [`TrustBinding`] records who a session runs for (owners and workspace instance); a
//! [`BindingAccessor`] answers the current execution context. [`TrustGuard`] is the
//! all-or-nothing configuration of TRU-1 (binding + accessor + non-blank session); the
//! revalidation itself is `hybrid_compaction_spec::trust::revalidate`.
//!
//! Privacy (SPEC ATR-4, TRU-2): owner identities are private. [`Owners`] and [`TrustBinding`]
//! render their ids redacted in `Debug`, and a [`TrustError`] names only its status.

use std::fmt;
use std::sync::Arc;

use crate::error::ErrorKind;
use crate::names::named_enum;

/// An opaque host token identifying one workspace instance; "the same instance" is equality of
/// tokens (SPEC TRU-2, ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WorkspaceId(pub u64);

/// Owner identities: user, orchestration and session id (section 16, *owners*). `Debug` redacts
/// the ids (SPEC ATR-4).
#[derive(Clone, PartialEq, Eq)]
pub struct Owners {
    /// The user id.
    pub user_id: String,
    /// The orchestration id.
    pub orchestration_id: String,
    /// The session id.
    pub session_id: String,
}

impl fmt::Debug for Owners {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Owners(<redacted>)")
    }
}

/// The host's trust binding (section 16, *trust binding*): owners and workspace instance.
#[derive(Clone, PartialEq, Eq)]
pub struct TrustBinding {
    /// Who the session runs for.
    pub owners: Owners,
    /// The workspace instance bound to the session.
    pub workspace: WorkspaceId,
}

impl fmt::Debug for TrustBinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TrustBinding(<redacted>)")
    }
}

/// The current execution context an accessor answers (SPEC TRU-2).
#[derive(Clone, PartialEq, Eq)]
pub struct TrustContext {
    /// The current user id.
    pub user_id: String,
    /// The current orchestration id.
    pub orchestration_id: String,
    /// The current workspace instance, if any.
    pub workspace: Option<WorkspaceId>,
}

impl fmt::Debug for TrustContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TrustContext(<redacted>)")
    }
}

/// Answers the current execution context (SPEC TRU-2); `None` is "no current context".
pub trait BindingAccessor: Send + Sync {
    /// The current context.
    fn current(&self) -> Option<TrustContext>;
}

named_enum! {
    /// Why a revalidation failed, in check order (SPEC TRU-2).
    pub enum TrustStatus {
        /// The configured session is not the binding's.
        SessionMismatch,
        /// The accessor answered no current context.
        MissingContext,
        /// The context's user or orchestration id is not the binding's.
        IdentityMismatch,
        /// The context has no workspace.
        MissingWorkspace,
        /// The context's workspace is not the binding's instance.
        WorkspaceMismatch,
    }
}

/// A failed revalidation (SPEC TRU-2): an `InvalidOperation` naming only the status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("trust binding revalidation failed: {status}")]
pub struct TrustError {
    /// The first failing check.
    pub status: TrustStatus,
}

impl TrustError {
    /// The language-neutral category (SPEC ERR-1): `InvalidOperation`.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidOperation
    }
}

/// A partial trust configuration (SPEC TRU-1): an `InvalidArgument` at construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("trust binding, binding accessor and session id must be supplied together")]
pub struct PartialTrustConfiguration;

impl PartialTrustConfiguration {
    /// The language-neutral category (SPEC ERR-1): `InvalidArgument`.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidArgument
    }
}

/// A complete trust configuration (SPEC TRU-1): binding, accessor and a non-blank session id.
/// Built by `hybrid_compaction_spec::trust::configure`.
#[derive(Clone)]
pub struct TrustGuard {
    /// The binding.
    pub binding: TrustBinding,
    /// Its accessor.
    pub accessor: Arc<dyn BindingAccessor>,
    /// The configured session id (non-blank).
    pub session_id: String,
}

impl fmt::Debug for TrustGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TrustGuard(<redacted>)")
    }
}

named_enum! {
    /// Where a provider-call attempt ends (SPEC TRU-3, EVT-2): decides its events.
    pub enum AttemptEnd {
        /// An error before `Started` (including a failed first revalidation).
        BeforeStarted,
        /// An error during assembly (NODE-3 steps 7-9).
        DuringAssembly,
        /// A termination outcome.
        Terminated,
        /// A failed second revalidation (NODE-3 step 12).
        RevalidationAfterAssembly,
        /// Success.
        Success,
    }
}

named_enum! {
    /// The progress events of one attempt, in emission order (SPEC EVT-2, TRU-3).
    pub enum AttemptEvent {
        /// `Started`.
        Started,
        /// `Completed`.
        Completed,
        /// `Terminated`.
        Terminated,
        /// `Composed`.
        Composed,
    }
}
