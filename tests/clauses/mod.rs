//! # The clause suite: one set of SPEC clause tests, run on every implementation
//!
//! Each test here checks one clause of `docs/SPEC.md` (its name starts with the clause id in
//! snake form, `asm_7_...`; `tests/repository/spec_coverage.rs` counts those names) with expectations worked
//! out by hand from the SPEC text, never by running the code under test. The tests are written
//! against the trait [`Implementation`], not against a crate: the suite is compiled once per
//! implementation (the pattern of rustls' provider tests), by two thin test crates that each
//! include this directory and name the implementation under test as `crate::Imp`:
//!
//! ```text
//! tests/clauses_spec.rs    #[path = "clauses/mod.rs"] mod clauses;  type Imp = Spec;   (model/spec)
//! tests/clauses_engine.rs  #[path = "clauses/mod.rs"] mod clauses;  type Imp = Engine; (src/engine)
//!                                   |
//!          clauses::{data, structure, assembly}: the same test names in both binaries
//! ```
//!
//! So a clause the engine breaks fails a named clause test, not only an equivalence property
//! that proptest may or may not reach.
//!
//! ## What the trait adapts
//! Both implementations have the same module paths and signatures for everything the SPEC names
//! (estimate, exchange, preserve, verify, assemble, bridge, classify, diagnostics). The trait
//! mirrors those functions one to one. Where the engine keeps a helper internal that the
//! executable spec exposes, the engine's adapter answers through the engine's public functions
//! instead (never through the spec): `value_size` through its context estimator, the diagnostic
//! category maps through `build` / `contributions`. Where no public route exists (the canonical
//! rendering string, recency units, the minted-id helper) the method returns `None` and the
//! test checks what the engine does expose: the rendering through the content-hash ids it
//! yields, the recency units through the required ids they imply, the minted id through the
//! bridge's output. Each implementation's own `AdaptError` is kept (an associated type), seen
//! through [`AdaptErrorView`] for pattern matching and through its own `kind()`.
//!
//! ## What is not here
//! Tests of pure vocabulary behaviour (entry construction ENT-1 .. ENT-7 except ENT-4's
//! structural equality, snapshots and providers SNAP-1 / SNAP-3 .. SNAP-5, policy validation
//! POL-2, the host-defined estimators EST-5, digests and references ART-1 / ART-2, the
//! declaration orders ASM-1 / ASM-2 / VER-3) call no implementation function: both
//! implementations share those types, so running them twice would test the same code twice.
//! They live once, in the vocabulary crate (`model/tests/vocabulary.rs`). A test that touches an
//! implementation at all (an estimator, an error type, a function) stays here.
#![allow(dead_code)]

pub mod assembly;
pub mod common;
pub mod data;
pub mod structure;

use hybrid_compaction_model::reducers::UpstreamReducer;
use hybrid_compaction_model::*;

/// A message adaptation error, seen the same way for every implementation (each has its own
/// `AdaptError` type with these variants; SPEC CLS-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdaptErrorView {
    /// A forbidden classifier override.
    ForbiddenOverride {
        /// 0-based message index.
        index: usize,
        /// The refused kind.
        kind: EntryKind,
    },
    /// Entry construction refused the adapted message.
    Entry {
        /// 0-based message index.
        index: usize,
        /// The construction error.
        source: EntryError,
    },
}

/// One implementation of the SPEC functions (the executable spec or the engine).
pub trait Implementation {
    /// The UTF-8 context estimator (SPEC EST-2).
    type ContextEstimator: Estimator + Default + 'static;
    /// The UTF-8 text estimator (SPEC EST-4).
    type TextEstimator: Estimator + Default + 'static;
    /// The default content-hash classifier (SPEC CLS-2).
    type ContentHashClassifier: Classifier + Default;
    /// The reducer bridge over an upstream reducer (SPEC BRG-1 .. BRG-3).
    type Bridge<U: UpstreamReducer>: Reducer;
    /// The adaptation error (SPEC CLS-1).
    type AdaptError: std::fmt::Debug + PartialEq;

    // ------------------------------------------------------------ EST, POL --
    /// Checked sum of an estimator (SPEC POL-3).
    fn size(entries: &[Entry], estimator: &dyn Estimator) -> Result<i32, AssemblyError>;
    /// `Evaluate` (SPEC POL-3, POL-4).
    fn evaluate(
        entries: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<TriggerEvaluation, AssemblyError>;
    /// `size(value)` of SPEC EST-2.
    fn value_size(value: &Value) -> i32;

    // ------------------------------------------------------------------ EXC --
    /// Tool-exchange analysis (SPEC EXC-1 .. EXC-3).
    fn analyze(entries: &[Entry]) -> ToolExchangeAnalysis;

    // ------------------------------------------------------------------ PRE --
    /// Required ids (SPEC PRE-1 .. PRE-3).
    fn required_ids(entries: &[Entry], retention: i32) -> Result<Vec<EntryId>, AssemblyError>;
    /// `SelectRequiredPreservation` (SPEC PRE-4).
    fn select_required(
        entries: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<PreservationSelection, AssemblyError>;
    /// Recency units (SPEC PRE-3), when the implementation exposes them.
    fn recency_units(entries: &[Entry]) -> Option<Vec<Vec<EntryId>>>;

    // ------------------------------------------------------------------ VER --
    /// `Verify` (SPEC VER-1).
    fn verify(
        original: &[Entry],
        proposed: &[Entry],
        policy: &Policy,
    ) -> Result<VerificationResult, AssemblyError>;
    /// `Verify` observing a cancellation token (SPEC VER-5).
    fn verify_cancellable(
        original: &[Entry],
        proposed: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<VerificationResult, AssemblyError>;
    /// Structural equality (SPEC VER-2).
    fn structurally_equal(a: &Message, b: &Message) -> bool;

    // ------------------------------------------------------------------ ASM --
    /// The assembler (SPEC ASM-7).
    fn assemble(
        policy: &Policy,
        provider: &mut dyn SnapshotProvider,
        reducer: &mut dyn Reducer,
        cancel: &CancellationToken,
    ) -> Result<AssemblyResult, AssemblyError>;
    /// Eviction of durable bodies (SPEC ASM-8).
    fn evict(entries: &[Entry]) -> Vec<Entry>;

    // ------------------------------------------------------------------ BRG --
    /// Wraps an upstream reducer.
    fn bridge<U: UpstreamReducer>(upstream: U) -> Self::Bridge<U>;
    /// The wrapped upstream reducer.
    fn upstream<U: UpstreamReducer>(bridge: &Self::Bridge<U>) -> &U;
    /// Bridge equality (SPEC BRG-2).
    fn bridge_equal(a: &Message, b: &Message) -> bool;
    /// The minted summary id (SPEC BRG-3), when the implementation exposes it.
    fn minted_summary_id(k: usize, message: &Message) -> Option<String>;

    // ------------------------------------------------------------------ CLS --
    /// Message adaptation (SPEC CLS-1).
    fn adapt(
        messages: &[Message],
        classifier: &mut dyn Classifier,
    ) -> Result<Vec<Entry>, Self::AdaptError>;
    /// The variant and fields of an adaptation error.
    fn adapt_error_view(error: &Self::AdaptError) -> AdaptErrorView;
    /// The implementation's own error kind of an adaptation error (SPEC ERR-1).
    fn adapt_error_kind(error: &Self::AdaptError) -> ErrorKind;
    /// Builds the implementation's adaptation error.
    fn adapt_error(view: AdaptErrorView) -> Self::AdaptError;
    /// The canonical rendering (SPEC CLS-2), when the implementation builds it as a string.
    fn canonical_rendering(message: &Message) -> Option<String>;

    // ------------------------------------------------------------------ DIA --
    /// Per-category contributions (SPEC DIA-6).
    fn contributions(
        entries: &[Entry],
        estimator: &dyn Estimator,
    ) -> Result<Vec<Contribution>, AssemblyError>;
    /// The diagnostics record (SPEC DIA-5).
    fn build(result: &AssemblyResult, policy: &Policy) -> Result<Diagnostics, AssemblyError>;
}

/// The adapter methods that are, in both implementations, the function of the same name: `$m`
/// names the implementation's module root (`spec` or `engine`). Each adapter invokes it inside
/// its `impl Implementation` and writes only the methods where the two differ.
macro_rules! same_name_functions {
    ($m:ident) => {
        type ContextEstimator = $m::estimate::Utf8ContextEstimator;
        type TextEstimator = $m::estimate::Utf8TextEstimator;
        type ContentHashClassifier = $m::classify::ContentHashClassifier;
        type Bridge<U: UpstreamReducer> = $m::bridge::Bridge<U>;
        type AdaptError = $m::classify::AdaptError;

        fn size(entries: &[Entry], estimator: &dyn Estimator) -> Result<i32, AssemblyError> {
            $m::estimate::size(entries, estimator)
        }
        fn evaluate(
            entries: &[Entry],
            policy: &Policy,
            cancel: &CancellationToken,
        ) -> Result<TriggerEvaluation, AssemblyError> {
            $m::estimate::evaluate(entries, policy, cancel)
        }
        fn analyze(entries: &[Entry]) -> ToolExchangeAnalysis {
            $m::exchange::analyze(entries)
        }
        fn required_ids(entries: &[Entry], retention: i32) -> Result<Vec<EntryId>, AssemblyError> {
            $m::preserve::required_ids(entries, retention)
        }
        fn select_required(
            entries: &[Entry],
            policy: &Policy,
            cancel: &CancellationToken,
        ) -> Result<PreservationSelection, AssemblyError> {
            $m::preserve::select_required(entries, policy, cancel)
        }
        fn verify(
            original: &[Entry],
            proposed: &[Entry],
            policy: &Policy,
        ) -> Result<VerificationResult, AssemblyError> {
            $m::verify::verify(original, proposed, policy)
        }
        fn verify_cancellable(
            original: &[Entry],
            proposed: &[Entry],
            policy: &Policy,
            cancel: &CancellationToken,
        ) -> Result<VerificationResult, AssemblyError> {
            $m::verify::verify_cancellable(original, proposed, policy, cancel)
        }
        fn structurally_equal(a: &Message, b: &Message) -> bool {
            $m::verify::structurally_equal(a, b)
        }
        fn assemble(
            policy: &Policy,
            provider: &mut dyn SnapshotProvider,
            reducer: &mut dyn Reducer,
            cancel: &CancellationToken,
        ) -> Result<AssemblyResult, AssemblyError> {
            $m::assemble::assemble(policy, provider, reducer, cancel)
        }
        fn evict(entries: &[Entry]) -> Vec<Entry> {
            $m::assemble::evict(entries)
        }
        fn bridge<U: UpstreamReducer>(upstream: U) -> Self::Bridge<U> {
            $m::bridge::Bridge::new(upstream)
        }
        fn upstream<U: UpstreamReducer>(bridge: &Self::Bridge<U>) -> &U {
            &bridge.upstream
        }
        fn bridge_equal(a: &Message, b: &Message) -> bool {
            $m::bridge::bridge_equal(a, b)
        }
        fn adapt(
            messages: &[Message],
            classifier: &mut dyn Classifier,
        ) -> Result<Vec<Entry>, Self::AdaptError> {
            $m::classify::adapt(messages, classifier)
        }
        fn adapt_error_view(error: &Self::AdaptError) -> AdaptErrorView {
            use $m::classify::AdaptError;
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
            use $m::classify::AdaptError;
            match view {
                AdaptErrorView::ForbiddenOverride { index, kind } => {
                    AdaptError::ForbiddenOverride { index, kind }
                }
                AdaptErrorView::Entry { index, source } => AdaptError::Entry { index, source },
            }
        }
        fn contributions(
            entries: &[Entry],
            estimator: &dyn Estimator,
        ) -> Result<Vec<Contribution>, AssemblyError> {
            $m::diagnostics::contributions(entries, estimator)
        }
        fn build(result: &AssemblyResult, policy: &Policy) -> Result<Diagnostics, AssemblyError> {
            $m::diagnostics::build(result, policy)
        }
    };
}
pub(crate) use same_name_functions;
