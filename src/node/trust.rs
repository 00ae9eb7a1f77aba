//! Trust configuration and revalidation (SPEC TRU-1, TRU-2; C# S77).
//!
//! Revalidation runs at every provider call (NODE-3 steps 1 and 12, SPEC TRU-3), so it lives
//! with the node; composition (`crate::compose`, which configures the guard of the node it
//! builds) re-exports [`configure`] and [`revalidate`], keeping imports one way: compose -> node.
//!
//! The guard is the model's [`TrustGuard`]; [`revalidate`] compares it with the accessor's
//! current context, the checks in the declaration order of the statuses. Errors name only the
//! status (no id, no owner, no workspace; SPEC TRU-2, ATR-4).

use std::sync::Arc;

use hybrid_compaction_model::trust::{
    BindingAccessor, PartialTrustConfiguration, TrustBinding, TrustError, TrustGuard, TrustStatus,
};

/// Blank: empty or Unicode `White_Space` only (SPEC ENT-2's definition).
fn blank(s: &str) -> bool {
    s.trim_matches(char::is_whitespace).is_empty()
}

/// The all-or-nothing trust configuration of a node (SPEC TRU-1): binding, accessor and a
/// non-blank session id together make a guard; all three absent, none; anything else is an
/// `InvalidArgument` error, before any node exists.
pub fn configure(
    binding: Option<TrustBinding>,
    accessor: Option<Arc<dyn BindingAccessor>>,
    session_id: Option<&str>,
) -> Result<Option<TrustGuard>, PartialTrustConfiguration> {
    match (binding, accessor, session_id) {
        (None, None, None) => Ok(None),
        (Some(binding), Some(accessor), Some(session)) if !blank(session) => Ok(Some(TrustGuard {
            binding,
            accessor,
            session_id: session.to_owned(),
        })),
        _ => Err(PartialTrustConfiguration),
    }
}

/// Revalidates `guard` against its accessor's current context (SPEC TRU-2): the first failing
/// check's status, in declaration order.
pub fn revalidate(guard: &TrustGuard) -> Result<(), TrustError> {
    let owners = &guard.binding.owners;
    let context = guard.accessor.current();
    let failure = if guard.session_id != owners.session_id {
        Some(TrustStatus::SessionMismatch)
    } else {
        match &context {
            None => Some(TrustStatus::MissingContext),
            Some(c)
                if (c.user_id.as_str(), c.orchestration_id.as_str())
                    != (owners.user_id.as_str(), owners.orchestration_id.as_str()) =>
            {
                Some(TrustStatus::IdentityMismatch)
            }
            Some(c) => match c.workspace {
                None => Some(TrustStatus::MissingWorkspace),
                Some(w) if w != guard.binding.workspace => Some(TrustStatus::WorkspaceMismatch),
                Some(_) => None,
            },
        }
    };
    failure.map_or(Ok(()), |status| Err(TrustError { status }))
}
