//! The specification's answer to the seam ([`Implementation`]): every method is the function of
//! the same name in this crate, plus the two worlds ([`crate::flows::Flows`],
//! [`crate::node::Node`], guarded or not) and the composition and trust drivers below.

use std::sync::Arc;

use hybrid_compaction_model::analysis::ToolExchangeAnalysis;
use hybrid_compaction_model::assembly::{AssemblyError, AssemblyResult, Reducer};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::capability::{
    Acceptance, BundleLane, CapabilityEntry, CapabilityProfile, CapabilityState,
};
use hybrid_compaction_model::classifier::{AdaptError, Classifier};
use hybrid_compaction_model::composition::{
    ClientChain, CompositionError, NodeFactory, ProviderCompositionStatus, RunCoordination,
    StaticSnapshotIntegration,
};
use hybrid_compaction_model::configuration::ConfigurationError;
use hybrid_compaction_model::diagnostics::{Contribution, Diagnostics};
use hybrid_compaction_model::entry::{Entry, EntryId};
use hybrid_compaction_model::error::{ErrorKind, TypedError};
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::{Policy, TriggerEvaluation};
use hybrid_compaction_model::reducers::MessageCountingReducer;
use hybrid_compaction_model::seam::composition::{context_of, default_binding, fixed_policy};
use hybrid_compaction_model::seam::{
    BoxedUpstream, ComposeInput, Composition, Implementation, LeaseWorld, NodeWorld, ProfileParts,
    ProviderReport, ReporterFields, ScriptedAccessor,
};
use hybrid_compaction_model::seam::{BundleFacts, ConfigureInput, ConfigureReport};
use hybrid_compaction_model::selection::PreservationSelection;
use hybrid_compaction_model::snapshot::{SnapshotProvider, StaticProvider};
use hybrid_compaction_model::trust::{
    BindingAccessor, PartialTrustConfiguration, TrustBinding, TrustContext,
};
use hybrid_compaction_model::value::Value;
use hybrid_compaction_model::verification::VerificationResult;

use crate::{
    assemble, bridge, capability, classify, composition, diagnostics, estimate, exchange, preserve,
    trust, verify,
};

/// The executable specification, as the seam sees it (`model` on the command line).
#[derive(Debug, Clone, Copy, Default)]
pub struct Model;

/// Counts the nodes the composition installs (SPEC CMP-4: only `Success` installs one).
#[derive(Debug, Default)]
struct CountingFactory {
    installs: u32,
    runs: Option<RunCoordination>,
}

impl<P> NodeFactory<P> for CountingFactory {
    fn install(&mut self, _profile: P, _chain: &ClientChain, runs: RunCoordination) {
        self.installs += 1;
        self.runs = Some(runs);
    }
}

/// One composition by `compose` (the narrow composer or the provider composer) over the wire's
/// fixed collaborators: the default binding, an accessor always answering `context`, the
/// default-strategies profile over the fixed policy; with the nodes it installed.
fn composed<S>(
    model: &Model,
    input: &ComposeInput,
    context: Option<TrustContext>,
    compose: fn(
        composition::CompositionRequest<'_, DefaultProfile>,
        &mut dyn NodeFactory<DefaultProfile>,
    ) -> Result<S, CompositionError>,
) -> Result<(S, u32, Option<RunCoordination>), CompositionError> {
    let binding = default_binding();
    let accessor = ScriptedAccessor::new(vec![context]);
    let mut factory = CountingFactory::default();
    let request = composition::CompositionRequest {
        client: input.client.as_ref(),
        capabilities: input.profile.as_ref(),
        execution_binding: input.binding.then_some(&binding),
        accessor: input.accessor.then_some(&accessor as &dyn BindingAccessor),
        session_id: &input.session_id,
        hybrid_profile: input.hybrid_profile.then(|| {
            composition::default_profile(
                fixed_policy(false, model.context_estimator()),
                MessageCountingReducer { target_count: 2 },
            )
        }),
    };
    let status = compose(request, &mut factory)?;
    Ok((status, factory.installs, factory.runs))
}

/// The default-strategies profile the wire composes with.
type DefaultProfile = hybrid_compaction_model::composition::HybridProfile<
    MessageCountingReducer,
    classify::ContentHashClassifier,
    StaticSnapshotIntegration,
>;

impl Implementation for Model {
    fn name(&self) -> &'static str {
        "model"
    }
    fn context_estimator(&self) -> Arc<dyn Estimator> {
        Arc::new(estimate::Utf8ContextEstimator)
    }
    fn text_estimator(&self) -> Arc<dyn Estimator> {
        Arc::new(estimate::Utf8TextEstimator)
    }
    fn size(&self, entries: &[Entry], estimator: &dyn Estimator) -> Result<i32, AssemblyError> {
        estimate::size(entries, estimator)
    }
    fn evaluate(
        &self,
        entries: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<TriggerEvaluation, AssemblyError> {
        estimate::evaluate(entries, policy, cancel)
    }
    fn value_size(&self, value: &Value) -> Option<i32> {
        Some(estimate::value_size(value))
    }
    fn analyze(&self, entries: &[Entry]) -> ToolExchangeAnalysis {
        exchange::analyze(entries)
    }
    fn required_ids(
        &self,
        entries: &[Entry],
        retention: i32,
    ) -> Result<Vec<EntryId>, AssemblyError> {
        preserve::required_ids(entries, retention)
    }
    fn select_required(
        &self,
        entries: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<PreservationSelection, AssemblyError> {
        preserve::select_required(entries, policy, cancel)
    }
    fn recency_units(&self, entries: &[Entry]) -> Option<Vec<Vec<EntryId>>> {
        Some(preserve::recency_units(entries))
    }
    fn verify(
        &self,
        original: &[Entry],
        proposed: &[Entry],
        policy: &Policy,
    ) -> Result<VerificationResult, AssemblyError> {
        verify::verify(original, proposed, policy)
    }
    fn verify_cancellable(
        &self,
        original: &[Entry],
        proposed: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<VerificationResult, AssemblyError> {
        verify::verify_cancellable(original, proposed, policy, cancel)
    }
    fn structurally_equal(&self, a: &Message, b: &Message) -> bool {
        verify::structurally_equal(a, b)
    }
    fn assemble(
        &self,
        policy: &Policy,
        provider: &mut dyn SnapshotProvider,
        reducer: &mut dyn Reducer,
        cancel: &CancellationToken,
    ) -> Result<AssemblyResult, AssemblyError> {
        assemble::assemble(policy, provider, reducer, cancel)
    }
    fn evict(&self, entries: &[Entry]) -> Vec<Entry> {
        assemble::evict(entries)
    }
    fn bridge<'a>(&self, upstream: BoxedUpstream<'a>) -> Box<dyn Reducer + Send + 'a> {
        Box::new(bridge::Bridge::new(upstream))
    }
    fn bridge_equal(&self, a: &Message, b: &Message) -> bool {
        bridge::bridge_equal(a, b)
    }
    fn minted_summary_id(&self, k: usize, message: &Message) -> Option<String> {
        Some(bridge::minted_summary_id(k, message))
    }
    fn content_hash_classifier(&self) -> Box<dyn Classifier + Send> {
        Box::new(classify::ContentHashClassifier)
    }
    fn adapt(
        &self,
        messages: &[Message],
        classifier: &mut dyn Classifier,
    ) -> Result<Vec<Entry>, AdaptError> {
        classify::adapt(messages, classifier)
    }
    fn canonical_rendering(&self, message: &Message) -> Option<String> {
        Some(classify::canonical_rendering(message))
    }
    fn contributions(
        &self,
        entries: &[Entry],
        estimator: &dyn Estimator,
    ) -> Result<Vec<Contribution>, AssemblyError> {
        diagnostics::contributions(entries, estimator)
    }
    fn diagnostics(
        &self,
        result: &AssemblyResult,
        policy: &Policy,
    ) -> Result<Diagnostics, AssemblyError> {
        diagnostics::build(result, policy)
    }
    fn effective_state(
        &self,
        entry: &CapabilityEntry,
        lane: BundleLane,
        acceptance: Acceptance,
    ) -> CapabilityState {
        capability::effective_state(entry, lane, acceptance)
    }
    fn is_requested(&self, entry: &CapabilityEntry, lane: BundleLane) -> bool {
        capability::is_requested(entry, lane)
    }
    fn is_executable(&self, profile: &CapabilityProfile) -> bool {
        capability::is_executable(profile)
    }
    fn default_profile(&self, policy: Policy, reducer: BoxedUpstream<'static>) -> ProfileParts {
        let p = composition::default_profile(policy, reducer);
        // SPEC SNAP-3: the static integration's provider is the baseline, always version 0.
        let StaticSnapshotIntegration = p.integration;
        ProfileParts {
            policy: p.policy,
            reducer: p.reducer,
            classifier: Box::new(p.classifier),
            integration: Box::new(|baseline| {
                Some(Box::new(StaticProvider::new(baseline)) as Box<dyn SnapshotProvider>)
            }),
        }
    }
    fn compose(&self, input: ComposeInput) -> Result<Composition, CompositionError> {
        let binding = default_binding();
        let context = context_of(&binding);
        let (status, nodes, runs) = composed(self, &input, Some(context), composition::compose)?;
        Ok(Composition {
            status,
            nodes,
            runs,
        })
    }
    fn compose_provider(
        &self,
        input: ComposeInput,
        context: Option<TrustContext>,
    ) -> Result<ProviderReport, CompositionError> {
        let (p, nodes, runs) = composed(self, &input, context, composition::compose_provider)?;
        Ok(ProviderReport {
            status: p.status,
            binding: p.binding,
            agent: p.status == ProviderCompositionStatus::Success,
            nodes,
            runs,
        })
    }
    fn configure(&self, input: ConfigureInput) -> Result<ConfigureReport, ConfigurationError> {
        let c = crate::configuration::configure_bundle(
            input.enabled,
            input.options,
            input.upstream,
            &input.client,
        )?;
        Ok(ConfigureReport {
            report: c.report,
            dispositions: c.dispositions,
            compaction: c.compaction.map(|b| BundleFacts {
                policy: b.profile.policy,
                runs: b.runs,
                trust_binding: b.trust_binding,
                capability_resolver_consulted: b.capability_resolver_consulted,
                placement: b.placement,
            }),
        })
    }
    fn lease_world(&self) -> Box<dyn LeaseWorld> {
        Box::new(crate::flows::Flows::default())
    }
    fn node_world(
        &self,
        enabled: bool,
        options: Option<(Policy, BoxedUpstream<'static>)>,
        reporter: Option<&ReporterFields>,
    ) -> Result<Option<Box<dyn NodeWorld>>, TypedError> {
        // SPEC NODE-1: the switch and the options must agree.
        match (enabled, options) {
            (true, Some((policy, reducer))) => Ok(Some(Box::new(crate::node::Node::new(
                policy,
                reducer,
                reporter.cloned(),
            )))),
            (false, None) => Ok(None),
            (true, None) => Err(TypedError::new(
                ErrorKind::InvalidArgument,
                "hybrid compaction is enabled but no compaction options were supplied",
            )),
            (false, Some(_)) => Err(TypedError::new(
                ErrorKind::InvalidArgument,
                "compaction options were supplied but hybrid compaction is not enabled",
            )),
        }
    }
    fn guarded_node_world(
        &self,
        options: (Policy, BoxedUpstream<'static>),
        reporter: Option<&ReporterFields>,
        binding: Option<TrustBinding>,
        accessor: Option<Arc<dyn BindingAccessor>>,
        session_id: Option<&str>,
    ) -> Result<Box<dyn NodeWorld>, PartialTrustConfiguration> {
        // SPEC TRU-1: the configuration is checked before the node can be used.
        let guard = trust::configure(binding, accessor, session_id)?;
        let (policy, reducer) = options;
        let node = crate::node::Node::new(policy, reducer, reporter.cloned()).with_trust(guard);
        Ok(Box::new(node))
    }
}
