//! Trust configuration, revalidation and the events of an attempt by where it ends (SPEC TRU-1 ..
//! TRU-3; C# S77, S52, S53).

use std::sync::Arc;

use hybrid_compaction_model::trust::{
    AttemptEnd, AttemptEvent, BindingAccessor, PartialTrustConfiguration, TrustBinding, TrustError,
    TrustGuard, TrustStatus,
};

/// Blank: empty or Unicode `White_Space` only (SPEC ENT-2's definition).
pub fn is_blank(s: &str) -> bool {
    s.chars().all(char::is_whitespace)
}

/// The all-or-nothing trust configuration (SPEC TRU-1): all three present (session non-blank)
/// -> a guard; all absent -> none; anything else -> `InvalidArgument`.
pub fn configure(
    binding: Option<TrustBinding>,
    accessor: Option<Arc<dyn BindingAccessor>>,
    session_id: Option<&str>,
) -> Result<Option<TrustGuard>, PartialTrustConfiguration> {
    match (binding, accessor, session_id) {
        (None, None, None) => Ok(None),
        (Some(binding), Some(accessor), Some(session)) if !is_blank(session) => {
            Ok(Some(TrustGuard {
                binding,
                accessor,
                session_id: session.to_owned(),
            }))
        }
        _ => Err(PartialTrustConfiguration),
    }
}

/// Revalidates `guard`'s binding against the accessor's current context (SPEC TRU-2), checks in
/// declaration order.
pub fn revalidate(guard: &TrustGuard) -> Result<(), TrustError> {
    validate(&guard.binding, &*guard.accessor, &guard.session_id)
}

/// TRU-2's checks of `binding` for `session_id` against `accessor`'s current context, in
/// declaration order: revalidation of a guard, and the provider composer's validation of its
/// execution binding (SPEC CMP-5).
pub fn validate(
    binding: &TrustBinding,
    accessor: &dyn BindingAccessor,
    session_id: &str,
) -> Result<(), TrustError> {
    let fail = |status| Err(TrustError { status });
    if session_id != binding.owners.session_id {
        return fail(TrustStatus::SessionMismatch);
    }
    let Some(context) = accessor.current() else {
        return fail(TrustStatus::MissingContext);
    };
    if context.user_id != binding.owners.user_id
        || context.orchestration_id != binding.owners.orchestration_id
    {
        return fail(TrustStatus::IdentityMismatch);
    }
    let Some(workspace) = context.workspace else {
        return fail(TrustStatus::MissingWorkspace);
    };
    if workspace != binding.workspace {
        return fail(TrustStatus::WorkspaceMismatch);
    }
    Ok(())
}

/// The events an attempt emits, by where it ends (SPEC TRU-3, EVT-2; DEP-14).
pub fn attempt_events(end: AttemptEnd) -> Vec<AttemptEvent> {
    use AttemptEvent as E;
    match end {
        AttemptEnd::BeforeStarted => vec![],
        AttemptEnd::DuringAssembly => vec![E::Started],
        AttemptEnd::Terminated => vec![E::Started, E::Terminated],
        AttemptEnd::RevalidationAfterAssembly => vec![E::Started, E::Completed],
        AttemptEnd::Success => vec![E::Started, E::Completed, E::Composed],
    }
}
