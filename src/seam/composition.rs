//! Composition and trust through the library (SPEC CMP-1, CMP-3, CMP-4, TRU-1 .. TRU-3): the
//! library's default-strategies profile and a real [`crate::compose::compose`] call. A guarded
//! call (`trust`) goes through the library's guarded node world (`seam::node`), by the seam's
//! `composition::guarded_call`.

use std::sync::Arc;

use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::composition::{
    ClientChain, CompositionError, CompositionStatus, HybridProfile,
};
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::reducers::MessageCountingReducer;
use hybrid_compaction_model::seam::composition::{context_of, default_binding, fixed_policy};
use hybrid_compaction_model::seam::{
    BoxedUpstream, ComposeInput, Composition, ProfileParts, ProviderReport, ScriptedAccessor,
};
use hybrid_compaction_model::trust::{BindingAccessor, TrustContext};

use crate::compose::composition::{
    compose as compose_agent, compose_provider as compose_agent_provider, Composed,
    ProviderComposed,
};
use crate::compose::Composition as Request;
use crate::engine::classify::ContentHashClassifier;
use crate::engine::estimate::Utf8ContextEstimator;
use crate::node::{ChatClient, ProviderError, SnapshotIntegration, StaticIntegration};

/// A provider that accepts everything and counts calls.
#[derive(Debug, Default)]
pub struct CountingClient {
    /// Calls received.
    pub calls: usize,
}

impl ChatClient for CountingClient {
    type Reply = ();
    fn send(&mut self, _m: &[Message], _c: &CancellationToken) -> Result<(), ProviderError> {
        self.calls += 1;
        Ok(())
    }
}

/// The library's default-strategies profile (SPEC CMP-1), its classifier and integration boxed.
pub fn default_profile(policy: Policy, reducer: BoxedUpstream<'static>) -> ProfileParts {
    let p = crate::compose::composition::default_profile(policy, reducer);
    let mut integration = p.integration;
    ProfileParts {
        policy: p.policy,
        reducer: p.reducer,
        classifier: Box::new(p.classifier),
        integration: Box::new(move |baseline| integration.provider(baseline)),
    }
}

/// The library's composition request for `input`: a counting client, the default binding, an
/// accessor always answering `context`, the default-strategies profile over the fixed policy.
fn request<'a>(
    input: &'a ComposeInput,
    chain: &'a ClientChain,
    context: Option<TrustContext>,
) -> Request<'a, CountingClient, WireProfile> {
    Request {
        client: input.client.as_ref().map(|_| CountingClient::default()),
        chain,
        capabilities: input.profile.as_ref(),
        execution_binding: input.binding.then(default_binding),
        accessor: input
            .accessor
            .then(|| Arc::new(ScriptedAccessor::new(vec![context])) as Arc<dyn BindingAccessor>),
        session_id: &input.session_id,
        hybrid_profile: input.hybrid_profile.then(|| {
            crate::compose::composition::default_profile(
                fixed_policy(false, Arc::new(Utf8ContextEstimator)),
                MessageCountingReducer { target_count: 2 },
            )
        }),
        reporter: None,
    }
}

/// The default-strategies profile the wire composes with.
type WireProfile = HybridProfile<MessageCountingReducer, ContentHashClassifier, StaticIntegration>;

/// One composition (SPEC CMP-3, CMP-4) with a counting client.
pub fn compose(input: ComposeInput) -> Result<Composition, CompositionError> {
    let chain = input.client.clone().unwrap_or_default();
    let context = context_of(&default_binding());
    let composed = compose_agent(request(&input, &chain, Some(context)))?;
    Ok(Composition {
        status: composed.status(),
        nodes: u32::from(composed.status() == CompositionStatus::Success),
        runs: composed.runs(),
    })
}

/// One provider composition (SPEC CMP-5) with a counting client.
pub fn compose_provider(
    input: ComposeInput,
    context: Option<TrustContext>,
) -> Result<ProviderReport, CompositionError> {
    let chain = input.client.clone().unwrap_or_default();
    let composed = compose_agent_provider(request(&input, &chain, context))?;
    let (binding, agent, inner) = match &composed {
        ProviderComposed::Built(inner) => (None, true, Some(inner)),
        ProviderComposed::Refused { binding, .. } => (*binding, false, None),
    };
    Ok(ProviderReport {
        status: composed.status(),
        binding,
        agent,
        nodes: u32::from(inner.is_some_and(|c| c.status() == CompositionStatus::Success)),
        runs: inner.and_then(Composed::runs),
    })
}
