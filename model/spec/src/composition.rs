//! Selected-provider composition (SPEC CMP-1 .. CMP-5; C# S73, S74).
//!
//! [`compose`] applies CMP-3's checks in order; only `Success` calls the injected
//! [`NodeFactory`], so every other status and every error is decided before any node exists
//! (SPEC CMP-4). [`compose_provider`] is the provider composer around it (CMP-5): it validates
//! the execution binding first, then composes and maps the status; the agent exists exactly
//! when the mapped status is `Success`.

use hybrid_compaction_model::capability::{CapabilityName, CapabilityProfile, CapabilityState};
use hybrid_compaction_model::composition::{
    ClientChain, CompositionError, CompositionInput, CompositionStatus, HybridProfile, NodeFactory,
    ProviderCompositionStatus, RunCoordination, StaticSnapshotIntegration,
};
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::trust::{BindingAccessor, TrustBinding, TrustStatus};

use crate::capability::{effective_state, is_executable};
use crate::classify::ContentHashClassifier;
use crate::trust::{is_blank, validate};

/// The default-strategies profile (SPEC CMP-1): the content-hash classifier (CLS-2) and the
/// static integration (SNAP-3).
pub fn default_profile<U>(
    policy: Policy,
    reducer: U,
) -> HybridProfile<U, ContentHashClassifier, StaticSnapshotIntegration> {
    HybridProfile {
        policy,
        reducer,
        classifier: ContentHashClassifier,
        integration: StaticSnapshotIntegration,
    }
}

/// The inputs of one composition call (SPEC CMP-3). `None` models a null reference.
pub struct CompositionRequest<'a, P> {
    /// The client chain.
    pub client: Option<&'a ClientChain>,
    /// The single resolved capability profile.
    pub capabilities: Option<&'a CapabilityProfile>,
    /// The execution binding.
    pub execution_binding: Option<&'a TrustBinding>,
    /// The binding accessor.
    pub accessor: Option<&'a dyn BindingAccessor>,
    /// The session id.
    pub session_id: &'a str,
    /// The hybrid profile, if supplied.
    pub hybrid_profile: Option<P>,
}

impl<P> std::fmt::Debug for CompositionRequest<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompositionRequest")
            .field("hybrid_profile", &self.hybrid_profile.is_some())
            .finish_non_exhaustive()
    }
}

/// Composes (SPEC CMP-3), the first failing check deciding; `factory` is called only on
/// `Success`, exactly once (SPEC CMP-4).
pub fn compose<P>(
    request: CompositionRequest<'_, P>,
    factory: &mut dyn NodeFactory<P>,
) -> Result<CompositionStatus, CompositionError> {
    use CompositionInput as In;
    // 1. missing inputs, in order.
    let client = request
        .client
        .ok_or(CompositionError::Missing(In::Client))?;
    let capabilities = request
        .capabilities
        .ok_or(CompositionError::Missing(In::CapabilityProfile))?;
    request
        .execution_binding
        .ok_or(CompositionError::Missing(In::ExecutionBinding))?;
    request
        .accessor
        .ok_or(CompositionError::Missing(In::BindingAccessor))?;
    // 2. blank session.
    if is_blank(request.session_id) {
        return Err(CompositionError::BlankSession);
    }
    // 3. no Compaction capability or no evidence for it.
    let Some(compaction) = capabilities
        .entry(CapabilityName::Compaction)
        .filter(|c| c.evidence.is_some())
    else {
        return Ok(CompositionStatus::ProfileNotExecutable);
    };
    let enabled = effective_state(compaction, capabilities.lane, capabilities.acceptance)
        == CapabilityState::Enabled;
    let Some(profile) = request.hybrid_profile else {
        // 4. capability without profile; 6. neither.
        return Ok(if enabled {
            CompositionStatus::CapabilityEnabledWithoutProfile
        } else {
            CompositionStatus::Disabled
        });
    };
    // 5. profile without capability.
    if !enabled {
        return Ok(CompositionStatus::ProfileSuppliedWithoutCapabilityEnabled);
    }
    // 7. the capability profile must be executable.
    if !is_executable(capabilities) {
        return Ok(CompositionStatus::ProfileNotExecutable);
    }
    // 8. at most one compaction component.
    if client.has_compaction() {
        return Ok(CompositionStatus::ExistingCompactionComponent);
    }
    // 9. one node, one run coordinator shared with the guarded agent.
    factory.install(profile, client, RunCoordination::SharedWithAgent);
    Ok(CompositionStatus::Success)
}

/// What the provider composer decided (SPEC CMP-5): its status, and the trust status of a
/// binding that did not validate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderComposition {
    /// The status.
    pub status: ProviderCompositionStatus,
    /// `ExecutionBindingInvalid`'s reason (SPEC TRU-2).
    pub binding: Option<TrustStatus>,
}

/// The provider composer (SPEC CMP-5): CMP-3 step 1's missing inputs; the execution binding
/// validated against the accessor's current context for the request's session (TRU-2's checks;
/// a failure is `ExecutionBindingInvalid`); then [`compose`], its status mapped. `factory` is
/// called only when a node is installed; an agent exists exactly when the status is `Success`.
pub fn compose_provider<P>(
    request: CompositionRequest<'_, P>,
    factory: &mut dyn NodeFactory<P>,
) -> Result<ProviderComposition, CompositionError> {
    use CompositionInput as In;
    request
        .client
        .ok_or(CompositionError::Missing(In::Client))?;
    request
        .capabilities
        .ok_or(CompositionError::Missing(In::CapabilityProfile))?;
    let binding = request
        .execution_binding
        .ok_or(CompositionError::Missing(In::ExecutionBinding))?;
    let accessor = request
        .accessor
        .ok_or(CompositionError::Missing(In::BindingAccessor))?;
    if let Err(e) = validate(binding, accessor, request.session_id) {
        return Ok(ProviderComposition {
            status: ProviderCompositionStatus::ExecutionBindingInvalid,
            binding: Some(e.status),
        });
    }
    let status = compose(request, factory)?;
    Ok(ProviderComposition {
        status: ProviderCompositionStatus::of(status),
        binding: None,
    })
}
