//! The clause suite (`tests/clauses/`) run on the executable specification, crate
//! `hybrid-compaction-spec`. This file is only the adapter: every trait method is the spec
//! function of the same name.

use hybrid_compaction_model::reducers::UpstreamReducer;
use hybrid_compaction_model::*;
use hybrid_compaction_spec as spec;

#[path = "clauses/mod.rs"]
mod clauses;

use clauses::{AdaptErrorView, Implementation};

/// The implementation under test.
type Imp = Spec;

/// The executable specification.
struct Spec;

impl Implementation for Spec {
    type ContextEstimator = spec::estimate::Utf8ContextEstimator;
    type TextEstimator = spec::estimate::Utf8TextEstimator;
    type ContentHashClassifier = spec::classify::ContentHashClassifier;
    type Bridge<U: UpstreamReducer> = spec::bridge::Bridge<U>;
    type AdaptError = spec::classify::AdaptError;

    fn size(entries: &[Entry], estimator: &dyn Estimator) -> Result<i32, AssemblyError> {
        spec::estimate::size(entries, estimator)
    }
    fn evaluate(
        entries: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<TriggerEvaluation, AssemblyError> {
        spec::estimate::evaluate(entries, policy, cancel)
    }
    fn value_size(value: &Value) -> i32 {
        spec::estimate::value_size(value)
    }
    fn analyze(entries: &[Entry]) -> ToolExchangeAnalysis {
        spec::exchange::analyze(entries)
    }
    fn required_ids(entries: &[Entry], retention: i32) -> Result<Vec<EntryId>, AssemblyError> {
        spec::preserve::required_ids(entries, retention)
    }
    fn select_required(
        entries: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<PreservationSelection, AssemblyError> {
        spec::preserve::select_required(entries, policy, cancel)
    }
    fn recency_units(entries: &[Entry]) -> Option<Vec<Vec<EntryId>>> {
        Some(spec::preserve::recency_units(entries))
    }
    fn verify(
        original: &[Entry],
        proposed: &[Entry],
        policy: &Policy,
    ) -> Result<VerificationResult, AssemblyError> {
        spec::verify::verify(original, proposed, policy)
    }
    fn structurally_equal(a: &Message, b: &Message) -> bool {
        spec::verify::structurally_equal(a, b)
    }
    fn assemble(
        policy: &Policy,
        provider: &mut dyn SnapshotProvider,
        reducer: &mut dyn Reducer,
        cancel: &CancellationToken,
    ) -> Result<AssemblyResult, AssemblyError> {
        spec::assemble::assemble(policy, provider, reducer, cancel)
    }
    fn evict(entries: &[Entry]) -> Vec<Entry> {
        spec::assemble::evict(entries)
    }
    fn bridge<U: UpstreamReducer>(upstream: U) -> Self::Bridge<U> {
        spec::bridge::Bridge::new(upstream)
    }
    fn upstream<U: UpstreamReducer>(bridge: &Self::Bridge<U>) -> &U {
        &bridge.upstream
    }
    fn bridge_equal(a: &Message, b: &Message) -> bool {
        spec::bridge::bridge_equal(a, b)
    }
    fn minted_summary_id(k: usize, message: &Message) -> Option<String> {
        Some(spec::bridge::minted_summary_id(k, message))
    }
    fn adapt(
        messages: &[Message],
        classifier: &mut dyn Classifier,
    ) -> Result<Vec<Entry>, Self::AdaptError> {
        spec::classify::adapt(messages, classifier)
    }
    fn adapt_error_view(error: &Self::AdaptError) -> AdaptErrorView {
        use spec::classify::AdaptError;
        match error.clone() {
            AdaptError::ForbiddenOverride { index, kind } => {
                AdaptErrorView::ForbiddenOverride { index, kind }
            }
            AdaptError::Entry { index, source } => AdaptErrorView::Entry { index, source },
            other => unreachable!("an adaptation error the SPEC does not name: {other:?}"),
        }
    }
    fn adapt_error_kind(error: &Self::AdaptError) -> ErrorKind {
        error.kind()
    }
    fn adapt_error(view: AdaptErrorView) -> Self::AdaptError {
        use spec::classify::AdaptError;
        match view {
            AdaptErrorView::ForbiddenOverride { index, kind } => {
                AdaptError::ForbiddenOverride { index, kind }
            }
            AdaptErrorView::Entry { index, source } => AdaptError::Entry { index, source },
        }
    }
    fn canonical_rendering(message: &Message) -> Option<String> {
        Some(spec::classify::canonical_rendering(message))
    }
    fn contributions(
        entries: &[Entry],
        estimator: &dyn Estimator,
    ) -> Result<Vec<Contribution>, AssemblyError> {
        spec::diagnostics::contributions(entries, estimator)
    }
    fn build(result: &AssemblyResult, policy: &Policy) -> Result<Diagnostics, AssemblyError> {
        spec::diagnostics::build(result, policy)
    }
}
