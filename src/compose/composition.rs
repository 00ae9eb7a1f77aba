//! Selected-provider composition (SPEC CMP-1 .. CMP-5; C# S73, S74).
//!
//! [`compose`] decides on borrowed inputs, in CMP-3's order; only `Success` builds a node, with
//! the composition's trust binding (SPEC TRU-1) and the profile's four collaborators. Every other
//! status hands the caller's client back untouched, so nothing is left behind (SPEC CMP-4).
//! [`compose_provider`] is the provider composer around it (CMP-5): the execution binding is
//! validated first, and the narrow statuses are mapped to the composer's own before any agent is
//! built.

use std::fmt;
use std::sync::Arc;

use hybrid_compaction_model::capability::{CapabilityName, CapabilityProfile, CapabilityState};
use hybrid_compaction_model::classifier::Classifier;
use hybrid_compaction_model::composition::{
    ClientChain, CompositionError, CompositionInput, CompositionStatus, HybridProfile,
    ProviderCompositionStatus, RunCoordination,
};
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::reducers::UpstreamReducer;
use hybrid_compaction_model::trust::{BindingAccessor, TrustBinding, TrustGuard, TrustStatus};

use super::capability::{effective_state, is_executable};
use crate::engine::classify::ContentHashClassifier;
use crate::node::trust::{configure, revalidate};
use crate::node::{CompactionNode, Reporter, SnapshotIntegration, StaticIntegration};

/// The default-strategies hybrid profile (SPEC CMP-1): the content-hash classifier (CLS-2) and
/// the static snapshot integration (SNAP-3) around the caller's policy and reducer.
pub fn default_profile<U>(
    policy: Policy,
    reducer: U,
) -> HybridProfile<U, ContentHashClassifier, StaticIntegration> {
    HybridProfile {
        policy,
        reducer,
        classifier: ContentHashClassifier::new(),
        integration: StaticIntegration,
    }
}

/// The inputs of one composition call (SPEC CMP-3). `None` models a null reference.
pub struct Composition<'a, C, P> {
    /// The real provider client, innermost in the chain.
    pub client: Option<C>,
    /// The middleware already wrapped around the client (whether it holds a compaction
    /// component, SPEC CMP-3 step 8).
    pub chain: &'a ClientChain,
    /// The single resolved capability profile.
    pub capabilities: Option<&'a CapabilityProfile>,
    /// The execution (trust) binding.
    pub execution_binding: Option<TrustBinding>,
    /// The binding accessor.
    pub accessor: Option<Arc<dyn BindingAccessor>>,
    /// The session id.
    pub session_id: &'a str,
    /// The hybrid profile, if supplied (SPEC CMP-1).
    pub hybrid_profile: Option<P>,
    /// The progress reporter, a required argument that may be absent (SPEC EVT-1).
    pub reporter: Option<Reporter>,
}

impl<C, P> fmt::Debug for Composition<'_, C, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Composition")
            .field("chain", &self.chain)
            .field("capabilities", &self.capabilities)
            .field("hybrid_profile", &self.hybrid_profile.is_some())
            .finish_non_exhaustive()
    }
}

/// What a composition produced (SPEC CMP-2).
pub enum Composed<C, U> {
    /// `Success`: exactly one node, innermost around the client, its runs shared with the guarded
    /// agent (the host passes the agent's run scope to every call, SPEC LSE-6).
    Installed(Box<CompactionNode<C, U>>),
    /// Any other status: no node exists; the client comes back unchanged.
    NotInstalled {
        /// The status (never `Success`).
        status: CompositionStatus,
        /// The caller's client.
        client: C,
    },
}

impl<C, U> Composed<C, U> {
    /// The composition status (SPEC CMP-2).
    pub fn status(&self) -> CompositionStatus {
        match self {
            Composed::Installed(_) => CompositionStatus::Success,
            Composed::NotInstalled { status, .. } => *status,
        }
    }

    /// How the installed node's runs are coordinated (SPEC CMP-3 step 9), if one was installed.
    pub fn runs(&self) -> Option<RunCoordination> {
        matches!(self, Composed::Installed(_)).then_some(RunCoordination::SharedWithAgent)
    }
}

impl<C, U> fmt::Debug for Composed<C, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.status().name())
    }
}

/// CMP-3 steps 3-8: the failure status, or the profile to install (`Success`).
fn decide<P>(
    capabilities: &CapabilityProfile,
    chain: &ClientChain,
    profile: Option<P>,
) -> Result<P, CompositionStatus> {
    use CompositionStatus as S;
    // 3. no Compaction capability, or no evidence for it.
    let compaction = capabilities
        .entry(CapabilityName::Compaction)
        .filter(|c| c.evidence.is_some())
        .ok_or(S::ProfileNotExecutable)?;
    let enabled = effective_state(compaction, capabilities.lane, capabilities.acceptance)
        == CapabilityState::Enabled;
    match (enabled, profile) {
        (true, None) => Err(S::CapabilityEnabledWithoutProfile), // 4.
        (false, Some(_)) => Err(S::ProfileSuppliedWithoutCapabilityEnabled), // 5.
        (false, None) => Err(S::Disabled),                       // 6.
        (true, Some(_)) if !is_executable(capabilities) => Err(S::ProfileNotExecutable), // 7.
        (true, Some(_)) if chain.has_compaction() => Err(S::ExistingCompactionComponent), // 8.
        (true, Some(profile)) => Ok(profile),                    // 9.
    }
}

/// Composes (SPEC CMP-3, CMP-4): every check runs before anything is built; `Success` builds
/// exactly one node, guarded by the composition's trust binding (SPEC TRU-1, TRU-3).
pub fn compose<C, U, K, I>(
    request: Composition<'_, C, HybridProfile<U, K, I>>,
) -> Result<Composed<C, U>, CompositionError>
where
    U: UpstreamReducer,
    K: Classifier + Send + 'static,
    I: SnapshotIntegration + Send + 'static,
{
    let missing = CompositionError::Missing;
    // 1. missing inputs, in order.
    let client = request.client.ok_or(missing(CompositionInput::Client))?;
    let capabilities = request
        .capabilities
        .ok_or(missing(CompositionInput::CapabilityProfile))?;
    let binding = request
        .execution_binding
        .ok_or(missing(CompositionInput::ExecutionBinding))?;
    let accessor = request
        .accessor
        .ok_or(missing(CompositionInput::BindingAccessor))?;
    // 2. blank session; the same check makes the trust configuration below total (TRU-1).
    let Ok(Some(guard)) = configure(Some(binding), Some(accessor), Some(request.session_id)) else {
        return Err(CompositionError::BlankSession);
    };
    // 3-8.
    let profile = match decide(capabilities, request.chain, request.hybrid_profile) {
        Ok(profile) => profile,
        Err(status) => return Ok(Composed::NotInstalled { status, client }),
    };
    // 9. exactly one node.
    let node = CompactionNode::from_profile(client, profile, request.reporter).guarded(guard);
    Ok(Composed::Installed(Box::new(node)))
}

/// What the provider composer produced (SPEC CMP-5).
pub enum ProviderComposed<C, U> {
    /// `Success`: the agent is built around the client, with the node composition installed
    /// (`Composed::Installed`) or none when compaction is `Disabled`.
    Built(Composed<C, U>),
    /// Any other status: no agent and no node exist; the client comes back unchanged.
    Refused {
        /// The status (never `Success`).
        status: ProviderCompositionStatus,
        /// `ExecutionBindingInvalid`'s reason.
        binding: Option<TrustStatus>,
        /// The caller's client.
        client: C,
    },
}

impl<C, U> ProviderComposed<C, U> {
    /// The provider composer's status (SPEC CMP-5).
    pub fn status(&self) -> ProviderCompositionStatus {
        match self {
            ProviderComposed::Built(_) => ProviderCompositionStatus::Success,
            ProviderComposed::Refused { status, .. } => *status,
        }
    }
}

impl<C, U> fmt::Debug for ProviderComposed<C, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.status().name())
    }
}

/// The provider composer (SPEC CMP-5; C# S74 "validates the execution binding first, maps
/// failures to `Compaction…` statuses before any agent is built"): the missing inputs of CMP-3
/// step 1, the execution binding validated against the accessor's current context (TRU-2's
/// checks; a failure is `ExecutionBindingInvalid`), then [`compose`] with its status mapped.
/// Only `Success` builds the agent.
pub fn compose_provider<C, U, K, I>(
    request: Composition<'_, C, HybridProfile<U, K, I>>,
) -> Result<ProviderComposed<C, U>, CompositionError>
where
    U: UpstreamReducer,
    K: Classifier + Send + 'static,
    I: SnapshotIntegration + Send + 'static,
{
    let missing = CompositionError::Missing;
    if request.client.is_none() {
        return Err(missing(CompositionInput::Client));
    }
    if request.capabilities.is_none() {
        return Err(missing(CompositionInput::CapabilityProfile));
    }
    let (Some(binding), Some(accessor)) = (&request.execution_binding, &request.accessor) else {
        let input = match request.execution_binding {
            None => CompositionInput::ExecutionBinding,
            Some(_) => CompositionInput::BindingAccessor,
        };
        return Err(missing(input));
    };
    let guard = TrustGuard {
        binding: binding.clone(),
        accessor: Arc::clone(accessor),
        session_id: request.session_id.to_owned(),
    };
    if let Err(e) = revalidate(&guard) {
        let client = request.client.ok_or(missing(CompositionInput::Client))?;
        return Ok(ProviderComposed::Refused {
            status: ProviderCompositionStatus::ExecutionBindingInvalid,
            binding: Some(e.status),
            client,
        });
    }
    Ok(match compose(request)? {
        Composed::NotInstalled { status, client } if status != CompositionStatus::Disabled => {
            ProviderComposed::Refused {
                status: ProviderCompositionStatus::of(status),
                binding: None,
                client,
            }
        }
        built => ProviderComposed::Built(built),
    })
}
