//! The clause suite (`tests/clauses/`) run on the optimized engine, `hybrid_compaction::engine`.
//! This file is only the adapter: every trait method is the engine function of the same name,
//! except where the engine keeps a helper internal. Those answer through the engine's public
//! functions (never through the spec): `value_size` through the context estimator, the
//! diagnostic category maps through `build` / `contributions`; the rendering string, recency
//! units and minted-id helper are `None` (the suite then checks what they imply).

use hybrid_compaction::engine;
use hybrid_compaction_model::reducers::UpstreamReducer;
use hybrid_compaction_model::*;

#[path = "clauses/mod.rs"]
mod clauses;

use clauses::{AdaptErrorView, Implementation};

/// The implementation under test.
type Imp = Engine;

/// The optimized engine.
struct Engine;

impl Implementation for Engine {
    type ContextEstimator = engine::estimate::Utf8ContextEstimator;
    type TextEstimator = engine::estimate::Utf8TextEstimator;
    type ContentHashClassifier = engine::classify::ContentHashClassifier;
    type Bridge<U: UpstreamReducer> = engine::bridge::Bridge<U>;
    type AdaptError = engine::classify::AdaptError;

    fn size(entries: &[Entry], estimator: &dyn Estimator) -> Result<i32, AssemblyError> {
        engine::estimate::size(entries, estimator)
    }
    fn evaluate(
        entries: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<TriggerEvaluation, AssemblyError> {
        engine::estimate::evaluate(entries, policy, cancel)
    }
    fn value_size(value: &Value) -> i32 {
        // SPEC EST-2: a result part measures its call id (here 1 byte) plus size(value).
        let message = Message::new("tool", vec![Part::result("c", value.clone())]);
        let entry = Entry::new("v", EntryKind::ToolExchange, message).expect("a result entry");
        engine::estimate::Utf8ContextEstimator.estimate(&entry) - 1
    }
    fn analyze(entries: &[Entry]) -> ToolExchangeAnalysis {
        engine::exchange::analyze(entries)
    }
    fn required_ids(entries: &[Entry], retention: i32) -> Result<Vec<EntryId>, AssemblyError> {
        engine::preserve::required_ids(entries, retention)
    }
    fn select_required(
        entries: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<PreservationSelection, AssemblyError> {
        engine::preserve::select_required(entries, policy, cancel)
    }
    fn recency_units(_entries: &[Entry]) -> Option<Vec<Vec<EntryId>>> {
        None
    }
    fn verify(
        original: &[Entry],
        proposed: &[Entry],
        policy: &Policy,
    ) -> Result<VerificationResult, AssemblyError> {
        engine::verify::verify(original, proposed, policy)
    }
    fn structurally_equal(a: &Message, b: &Message) -> bool {
        engine::verify::structurally_equal(a, b)
    }
    fn assemble(
        policy: &Policy,
        provider: &mut dyn SnapshotProvider,
        reducer: &mut dyn Reducer,
        cancel: &CancellationToken,
    ) -> Result<AssemblyResult, AssemblyError> {
        engine::assemble::assemble(policy, provider, reducer, cancel)
    }
    fn evict(entries: &[Entry]) -> Vec<Entry> {
        engine::assemble::evict(entries)
    }
    fn bridge<U: UpstreamReducer>(upstream: U) -> Self::Bridge<U> {
        engine::bridge::Bridge::new(upstream)
    }
    fn upstream<U: UpstreamReducer>(bridge: &Self::Bridge<U>) -> &U {
        &bridge.upstream
    }
    fn bridge_equal(a: &Message, b: &Message) -> bool {
        engine::bridge::bridge_equal(a, b)
    }
    fn minted_summary_id(_k: usize, _message: &Message) -> Option<String> {
        None
    }
    fn adapt(
        messages: &[Message],
        classifier: &mut dyn Classifier,
    ) -> Result<Vec<Entry>, Self::AdaptError> {
        engine::classify::adapt(messages, classifier)
    }
    fn adapt_error_view(error: &Self::AdaptError) -> AdaptErrorView {
        use engine::classify::AdaptError;
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
        use engine::classify::AdaptError;
        match view {
            AdaptErrorView::ForbiddenOverride { index, kind } => {
                AdaptError::ForbiddenOverride { index, kind }
            }
            AdaptErrorView::Entry { index, source } => AdaptError::Entry { index, source },
        }
    }
    fn canonical_rendering(_message: &Message) -> Option<String> {
        None
    }
    fn contributions(
        entries: &[Entry],
        estimator: &dyn Estimator,
    ) -> Result<Vec<Contribution>, AssemblyError> {
        engine::diagnostics::contributions(entries, estimator)
    }
    fn build(result: &AssemblyResult, policy: &Policy) -> Result<Diagnostics, AssemblyError> {
        engine::diagnostics::build(result, policy)
    }
}
