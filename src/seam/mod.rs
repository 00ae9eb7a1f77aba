//! # The library's answer to the seam (feature `testing`)
//!
//! [`Engine`] implements the vocabulary's [`Implementation`] with this crate's own code: every
//! pure method is the [`crate::engine`] function of the same name; composition and trust run a
//! real [`crate::compose::compose`] and a real guarded node call ([`composition`]), the default
//! profile is [`crate::compose::composition::default_profile`]'s; the lease world drives real
//! run scopes, gates and filtering providers ([`leases`]); the node world is a real
//! [`crate::node::CompactionNode`] (guarded through its `with_trust` when asked) with a scripted
//! client ([`node`]). The executable
//! specification answers the same trait (`hybrid_compaction_spec::Model`), so the clause suite,
//! the oracle, the fuzz targets and the equivalence properties compare the two through one seam.
//!
//! This module is conformance machinery: it exists only with the `testing` feature, which a
//! host never needs.

pub mod composition;
pub mod leases;
pub mod node;

use std::sync::Arc;

use hybrid_compaction_model::analysis::ToolExchangeAnalysis;
use hybrid_compaction_model::assembly::{AssemblyError, AssemblyResult, Reducer};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::capability::{
    Acceptance, BundleLane, CapabilityEntry, CapabilityProfile, CapabilityState,
};
use hybrid_compaction_model::classifier::{AdaptError, Classifier};
use hybrid_compaction_model::composition::CompositionError;
use hybrid_compaction_model::configuration::ConfigurationError;
use hybrid_compaction_model::diagnostics::{Contribution, Diagnostics};
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::error::TypedError;
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::message::{Message, Part};
use hybrid_compaction_model::policy::{Policy, TriggerEvaluation};
use hybrid_compaction_model::seam::{
    BoxedUpstream, ComposeInput, Composition, Implementation, LeaseWorld, NodeWorld, ProfileParts,
    ReporterFields,
};
use hybrid_compaction_model::seam::{BundleFacts, ConfigureInput, ConfigureReport, ProviderReport};
use hybrid_compaction_model::selection::PreservationSelection;
use hybrid_compaction_model::snapshot::SnapshotProvider;
use hybrid_compaction_model::trust::TrustContext;
use hybrid_compaction_model::trust::{BindingAccessor, PartialTrustConfiguration, TrustBinding};
use hybrid_compaction_model::value::Value;
use hybrid_compaction_model::verification::VerificationResult;

use crate::engine::{
    assemble, bridge, classify, diagnostics, estimate, exchange, preserve, verify,
};

thread_local! {
    /// The assembler [`Engine::assemble`] reuses on this thread (`None` while a call holds it):
    /// a checker replaying thousands of calls allocates its working buffers once per worker,
    /// as a host's node does (`docs/PERFORMANCE.md`, "Trace checking").
    static ASSEMBLER: std::cell::Cell<Option<assemble::Assembler>> = const { std::cell::Cell::new(None) };
}

/// The library, as the seam sees it (`engine` on the command line).
#[derive(Debug, Clone, Copy, Default)]
pub struct Engine;

impl Implementation for Engine {
    fn name(&self) -> &'static str {
        "engine"
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
        // SPEC EST-2: a result part measures its call id (here 1 byte) plus size(value); the
        // engine keeps size(value) internal, so it answers through its context estimator.
        let message = Message::new("tool", vec![Part::result("c", value.clone())]);
        let entry = Entry::new("v", EntryKind::ToolExchange, message).ok()?;
        Some(estimate::Utf8ContextEstimator.estimate(&entry) - 1)
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
        // One assembler per thread, reused across calls (its buffers survive; each call starts
        // its size cache afresh). It is taken out for the call: a nested call on the thread
        // gets a fresh one, and one that unwinds is dropped, never reused half-way.
        let mut assembler = ASSEMBLER.with(std::cell::Cell::take).unwrap_or_default();
        let result = assembler.assemble(policy, provider, reducer, cancel);
        ASSEMBLER.with(|cell| cell.set(Some(assembler)));
        result
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
    fn content_hash_classifier(&self) -> Box<dyn Classifier + Send> {
        Box::new(classify::ContentHashClassifier::new())
    }
    fn adapt(
        &self,
        messages: &[Message],
        classifier: &mut dyn Classifier,
    ) -> Result<Vec<Entry>, AdaptError> {
        classify::adapt(messages, classifier)
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
        crate::compose::effective_state(entry, lane, acceptance)
    }
    fn is_requested(&self, entry: &CapabilityEntry, lane: BundleLane) -> bool {
        crate::compose::is_requested(entry, lane)
    }
    fn is_executable(&self, profile: &CapabilityProfile) -> bool {
        crate::compose::is_executable(profile)
    }
    fn default_profile(&self, policy: Policy, reducer: BoxedUpstream<'static>) -> ProfileParts {
        composition::default_profile(policy, reducer)
    }
    fn compose(&self, input: ComposeInput) -> Result<Composition, CompositionError> {
        composition::compose(input)
    }
    fn compose_provider(
        &self,
        input: ComposeInput,
        context: Option<TrustContext>,
    ) -> Result<ProviderReport, CompositionError> {
        composition::compose_provider(input, context)
    }
    fn configure(&self, input: ConfigureInput) -> Result<ConfigureReport, ConfigurationError> {
        let c = crate::compose::configuration::configure(
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
        Box::new(leases::Flows::default())
    }
    fn node_world(
        &self,
        enabled: bool,
        options: Option<(Policy, BoxedUpstream<'static>)>,
        reporter: Option<&ReporterFields>,
    ) -> Result<Option<Box<dyn NodeWorld>>, TypedError> {
        Ok(node::Node::select(enabled, options, reporter)?
            .map(|n| Box::new(n) as Box<dyn NodeWorld>))
    }
    fn guarded_node_world(
        &self,
        options: (Policy, BoxedUpstream<'static>),
        reporter: Option<&ReporterFields>,
        binding: Option<TrustBinding>,
        accessor: Option<Arc<dyn BindingAccessor>>,
        session_id: Option<&str>,
    ) -> Result<Box<dyn NodeWorld>, PartialTrustConfiguration> {
        let node = node::Node::guarded(options, reporter, binding, accessor, session_id)?;
        Ok(Box::new(node))
    }
}
