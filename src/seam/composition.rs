//! Composition and trust through the library (SPEC CMP-1, CMP-3, CMP-4, TRU-1 .. TRU-3): the
//! library's default-strategies profile, a real [`crate::compose::compose`] call, and a real
//! guarded [`crate::node::CompactionNode`] call observed through its events.

use std::sync::{Arc, Mutex};

use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::composition::{
    ClientChain, CompositionError, CompositionStatus, HybridProfile,
};
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::reducers::{
    MessageCountingReducer, ScriptedUpstreamReducer, UpstreamStep,
};
use hybrid_compaction_model::seam::composition::{context_of, default_binding, fixed_policy};
use hybrid_compaction_model::seam::{
    AssemblyScript, AttemptFailure, BoxedUpstream, ComposeInput, Composition, ProfileParts,
    ProviderReport, ScriptedAccessor, TrustInput, TrustReport,
};
use hybrid_compaction_model::trust::{
    AttemptEnd, AttemptEvent, BindingAccessor, PartialTrustConfiguration, TrustContext,
};

use crate::compose::composition::{
    compose as compose_agent, compose_provider as compose_agent_provider, Composed,
    ProviderComposed,
};
use crate::compose::Composition as Request;
use crate::engine::classify::ContentHashClassifier;
use crate::engine::estimate::Utf8ContextEstimator;
use crate::lease::RunScope;
use crate::node::{
    select, ChatClient, CompactionEvent, EventKind, NodeError, NodeOptions, NodeSelection,
    ProgressSink, ProviderError, Reporter, ReporterIdentity, SnapshotIntegration,
    StaticIntegration,
};

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

#[derive(Default)]
struct KindSink(Mutex<Vec<EventKind>>);

impl ProgressSink for KindSink {
    fn report(&self, event: CompactionEvent) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(event.kind());
    }
}

fn attempt_event(k: EventKind) -> AttemptEvent {
    match k {
        EventKind::Started => AttemptEvent::Started,
        EventKind::Completed => AttemptEvent::Completed,
        EventKind::Terminated => AttemptEvent::Terminated,
        EventKind::Composed => AttemptEvent::Composed,
    }
}

/// Where the attempt ended, read off its events (SPEC TRU-3, EVT-2).
fn end_of(events: &[AttemptEvent]) -> AttemptEnd {
    use AttemptEvent as E;
    match events {
        [] => AttemptEnd::BeforeStarted,
        [E::Started] => AttemptEnd::DuringAssembly,
        [E::Started, E::Terminated] => AttemptEnd::Terminated,
        [E::Started, E::Completed] => AttemptEnd::RevalidationAfterAssembly,
        _ => AttemptEnd::Success,
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

/// One call through a library node configured with `input`'s trust.
pub fn trust(input: TrustInput) -> Result<TrustReport, PartialTrustConfiguration> {
    let tight = input.assembly != AssemblyScript::Success;
    let step = match input.assembly {
        AssemblyScript::Failed => UpstreamStep::Fail("reducer failed".to_owned()),
        _ => UpstreamStep::Echo,
    };
    let options = NodeOptions {
        policy: fixed_policy(tight, Arc::new(Utf8ContextEstimator)),
        reducer: ScriptedUpstreamReducer::new(vec![step]),
    };
    let sink = Arc::new(KindSink::default());
    let reporter = Reporter::new(
        Arc::clone(&sink) as Arc<dyn ProgressSink>,
        ReporterIdentity::workflow("wire"),
    );
    let selection = select(
        true,
        Some(options),
        CountingClient::default(),
        Some(reporter),
    );
    let Ok(NodeSelection::Installed(node)) = selection else {
        unreachable!("switch and options together always install a node (SPEC NODE-1)")
    };
    let mut node = node.with_trust(input.binding, input.accessor, input.session_id.as_deref())?;
    let text = "x".repeat(if tight { 200 } else { 20 });
    let messages = vec![Message::text("user", text)];
    let result = node.call(&mut RunScope::new(), &messages, &CancellationToken::new());
    let events: Vec<AttemptEvent> = sink
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .map(|k| attempt_event(*k))
        .collect();
    let failure = result.err().map(|e| AttemptFailure {
        kind: e.kind(),
        status: match e {
            NodeError::Trust(t) => Some(t.status),
            _ => None,
        },
    });
    Ok(TrustReport {
        guarded: node.is_guarded(),
        end: end_of(&events),
        events,
        dispatched: node.client().calls > 0,
        failure,
    })
}
