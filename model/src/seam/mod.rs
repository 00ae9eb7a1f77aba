//! # The seam: one trait both implementations of the SPEC answer
//!
//! The executable specification (crate `hybrid-compaction-spec`, `Model`) and the library
//! (crate `hybrid-compaction`, `Engine`, behind its `testing` feature) each implement
//! [`Implementation`] once. Everything that compares or drives them goes through it:
//!
//! ```text
//!   tests/clauses (the clause suite, compiled once per implementation)
//!   the oracle's operations (wire cases, vectors, trace replay)      --> &dyn Implementation
//!   fuzz targets, equivalence and state-machine properties                |
//!                                          +------------------------------+---------------+
//!                                          v                                              v
//!                       hybrid_compaction_spec::Model                 hybrid_compaction::seam::Engine
//!                       (plain loops citing the SPEC)                 (engine, lease, node, compose)
//! ```
//!
//! Methods mirror the SPEC's functions one to one, grouped by section. A few helpers only the
//! specification exposes as functions (`value_size`, `recency_units`, `minted_summary_id`,
//! `canonical_rendering`) return `Option`: an implementation that keeps them internal answers
//! `None` and the clause suite checks what they imply instead. Stateful parts are *worlds*
//! driven one step at a time ([`LeaseWorld`], [`NodeWorld`], the latter also guarded by a trust
//! binding); composition and trust take plain inputs and report plain values ([`composition`]),
//! except the default-strategies profile, whose classifier and integration come back as
//! behaviour to call ([`ProfileParts`]). A few drivers are written once here, over each
//! implementation's own parts: a guarded call (`trust`, [`composition::guarded_call`] over
//! [`Implementation::guarded_node_world`]), a call parked in its reducer while another node runs
//! ([`park`], over [`NodeWorld::companion`]) and the complete-bundle agent's tool loop
//! ([`bundle`], over [`Implementation::configure`] and [`Implementation::node_world`]).
//!
//! This module exists only with the vocabulary's `testing` feature: it is conformance
//! machinery, not something a host embeds.

pub mod bundle;
pub mod composition;
pub mod leases;
pub mod node;
pub mod park;

use std::sync::Arc;

pub use composition::{
    AssemblyScript, AttemptFailure, BundleFacts, ComposeInput, Composition, ConfigureInput,
    ConfigureReport, Integration, ProfileParts, ProviderReport, ScriptedAccessor, TrustInput,
    TrustReport,
};
pub use leases::{Admission, Entered, LeaseWorld, RunView};
pub use node::{
    CallEnd, CallPlan, CallRecord, ClassifierFailure, EventRecord, FailingClassifier, NodeWorld,
    ReporterFields, StartedFields, StreamEnd, StreamPlan, Termination,
};

use crate::analysis::ToolExchangeAnalysis;
use crate::artifact_diagnostics::{ArtifactDiagnostics, ArtifactDiagnosticsError, ArtifactGiven};
use crate::assembly::{AssemblyError, AssemblyResult, Reducer};
use crate::cancel::CancellationToken;
use crate::capability::{
    Acceptance, BundleLane, CapabilityEntry, CapabilityProfile, CapabilityState,
};
use crate::classifier::{AdaptError, Classifier};
use crate::composition::CompositionError;
use crate::configuration::ConfigurationError;
use crate::diagnostics::{Contribution, Diagnostics, RecordFields};
use crate::entry::{Entry, EntryId};
use crate::error::TypedError;
use crate::estimator::Estimator;
use crate::message::Message;
use crate::policy::{Policy, TriggerEvaluation};
use crate::reducers::UpstreamReducer;
use crate::selection::PreservationSelection;
use crate::snapshot::SnapshotProvider;
use crate::trust::{BindingAccessor, PartialTrustConfiguration, TrustBinding, TrustContext};
use crate::value::Value;
use crate::verification::VerificationResult;

/// An upstream reducer a node or a bridge owns.
pub type BoxedUpstream<'a> = Box<dyn UpstreamReducer + Send + 'a>;

/// The operations of the SPEC, answered once by each implementation (see the module docs).
pub trait Implementation: Sync {
    /// `model` or `engine`.
    fn name(&self) -> &'static str;

    // ------------------------------------------------------------------ EST, POL --
    /// The UTF-8 context estimator (SPEC EST-2).
    fn context_estimator(&self) -> Arc<dyn Estimator>;
    /// The UTF-8 text estimator (SPEC EST-4).
    fn text_estimator(&self) -> Arc<dyn Estimator>;
    /// Checked sum of an estimator over a list (SPEC POL-3).
    fn size(&self, entries: &[Entry], estimator: &dyn Estimator) -> Result<i32, AssemblyError>;
    /// `Evaluate` (SPEC POL-3, POL-4).
    fn evaluate(
        &self,
        entries: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<TriggerEvaluation, AssemblyError>;
    /// `size(value)` of SPEC EST-2, when the implementation exposes it.
    fn value_size(&self, _value: &Value) -> Option<i32> {
        None
    }

    // ----------------------------------------------------------------------- EXC --
    /// Tool-exchange analysis (SPEC EXC-1 .. EXC-3).
    fn analyze(&self, entries: &[Entry]) -> ToolExchangeAnalysis;

    // ----------------------------------------------------------------------- PRE --
    /// Required ids (SPEC PRE-1 .. PRE-3).
    fn required_ids(
        &self,
        entries: &[Entry],
        retention: i32,
    ) -> Result<Vec<EntryId>, AssemblyError>;
    /// `SelectRequiredPreservation` (SPEC PRE-4).
    fn select_required(
        &self,
        entries: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<PreservationSelection, AssemblyError>;
    /// Recency units (SPEC PRE-3), when the implementation exposes them.
    fn recency_units(&self, _entries: &[Entry]) -> Option<Vec<Vec<EntryId>>> {
        None
    }

    // ----------------------------------------------------------------------- VER --
    /// `Verify` (SPEC VER-1).
    fn verify(
        &self,
        original: &[Entry],
        proposed: &[Entry],
        policy: &Policy,
    ) -> Result<VerificationResult, AssemblyError>;
    /// `Verify` observing a cancellation token (SPEC VER-5).
    fn verify_cancellable(
        &self,
        original: &[Entry],
        proposed: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<VerificationResult, AssemblyError>;
    /// Structural equality (SPEC VER-2).
    fn structurally_equal(&self, a: &Message, b: &Message) -> bool;

    // ----------------------------------------------------------------------- ASM --
    /// The assembler (SPEC ASM-7).
    fn assemble(
        &self,
        policy: &Policy,
        provider: &mut dyn SnapshotProvider,
        reducer: &mut dyn Reducer,
        cancel: &CancellationToken,
    ) -> Result<AssemblyResult, AssemblyError>;
    /// Eviction of durable bodies (SPEC ASM-8).
    fn evict(&self, entries: &[Entry]) -> Vec<Entry>;

    // ----------------------------------------------------------------------- BRG --
    /// The reducer bridge over an upstream reducer (SPEC BRG-1 .. BRG-3).
    fn bridge<'a>(&self, upstream: BoxedUpstream<'a>) -> Box<dyn Reducer + Send + 'a>;
    /// Bridge equality (SPEC BRG-2).
    fn bridge_equal(&self, a: &Message, b: &Message) -> bool;
    /// The minted summary id (SPEC BRG-3), when the implementation exposes it.
    fn minted_summary_id(&self, _k: usize, _message: &Message) -> Option<String> {
        None
    }

    // ----------------------------------------------------------------------- CLS --
    /// The default content-hash classifier (SPEC CLS-2).
    fn content_hash_classifier(&self) -> Box<dyn Classifier + Send>;
    /// Message adaptation (SPEC CLS-1).
    fn adapt(
        &self,
        messages: &[Message],
        classifier: &mut dyn Classifier,
    ) -> Result<Vec<Entry>, AdaptError>;
    /// The canonical rendering (SPEC CLS-2), when the implementation builds it as a string.
    fn canonical_rendering(&self, _message: &Message) -> Option<String> {
        None
    }

    // ----------------------------------------------------------------------- DIA --
    /// Per-category contributions (SPEC DIA-6).
    fn contributions(
        &self,
        entries: &[Entry],
        estimator: &dyn Estimator,
    ) -> Result<Vec<Contribution>, AssemblyError>;
    /// The diagnostics record of a result (SPEC DIA-5).
    fn diagnostics(
        &self,
        result: &AssemblyResult,
        policy: &Policy,
    ) -> Result<Diagnostics, AssemblyError>;
    /// A record's constructor checks (SPEC DIA-3, DIA-4). Both implementations build their
    /// records through the one vocabulary type, so both answer with its checks.
    fn validate_record(&self, fields: &RecordFields) -> Result<(), AssemblyError> {
        fields.validate()
    }

    // ----------------------------------------------------------------------- ATR --
    /// The artifact-diagnostics factories (SPEC ATR-5). Both implementations build artifact
    /// diagnostics through the one vocabulary type, so both answer with its checks.
    fn artifact_diagnostics(
        &self,
        given: &ArtifactGiven,
    ) -> Result<ArtifactDiagnostics, ArtifactDiagnosticsError> {
        given.build()
    }

    // ----------------------------------------------------------------------- CAP --
    /// Effective state (SPEC CAP-3).
    fn effective_state(
        &self,
        entry: &CapabilityEntry,
        lane: BundleLane,
        acceptance: Acceptance,
    ) -> CapabilityState;
    /// Whether the capability is requested (SPEC CAP-3).
    fn is_requested(&self, entry: &CapabilityEntry, lane: BundleLane) -> bool;
    /// Executability (SPEC CAP-4).
    fn is_executable(&self, profile: &CapabilityProfile) -> bool;

    // ------------------------------------------------------------------- CMP, TRU --
    /// The default-strategies hybrid profile of `policy` and `reducer` (SPEC CMP-1).
    fn default_profile(&self, policy: Policy, reducer: BoxedUpstream<'static>) -> ProfileParts;
    /// One composition (SPEC CMP-3, CMP-4).
    fn compose(&self, input: ComposeInput) -> Result<Composition, CompositionError>;
    /// One provider composition (SPEC CMP-5), the accessor (when supplied) answering `context`
    /// (`None`: no current context).
    fn compose_provider(
        &self,
        input: ComposeInput,
        context: Option<TrustContext>,
    ) -> Result<ProviderReport, CompositionError>;
    /// One guarded provider call (SPEC TRU-1 .. TRU-3) through this implementation's own
    /// guarded node ([`Implementation::guarded_node_world`], [`composition::guarded_call`]).
    fn trust(&self, input: TrustInput) -> Result<TrustReport, PartialTrustConfiguration> {
        composition::guarded_call(self, input)
    }

    // ----------------------------------------------------------------------- CFG --
    /// The public configuration path (SPEC CFG-1 .. CFG-5).
    fn configure(&self, input: ConfigureInput) -> Result<ConfigureReport, ConfigurationError>;

    // ------------------------------------------------------------------ LSE, NODE --
    /// A fresh lease world: one flow (0), no run (SPEC LSE-6).
    fn lease_world(&self) -> Box<dyn LeaseWorld>;
    /// Node selection (SPEC NODE-1): `Ok(None)` is `Disabled`; an argument error when the
    /// switch and the options disagree.
    fn node_world(
        &self,
        enabled: bool,
        options: Option<(Policy, BoxedUpstream<'static>)>,
        reporter: Option<&ReporterFields>,
    ) -> Result<Option<Box<dyn NodeWorld>>, TypedError>;
    /// A node selected with `options` (SPEC NODE-1) and then given a trust configuration (SPEC
    /// TRU-1): all three parts make every call revalidate at NODE-3 steps 1 and 12 (TRU-3), none
    /// leaves it unguarded, anything else is refused before the node can be used.
    fn guarded_node_world(
        &self,
        options: (Policy, BoxedUpstream<'static>),
        reporter: Option<&ReporterFields>,
        binding: Option<TrustBinding>,
        accessor: Option<Arc<dyn BindingAccessor>>,
        session_id: Option<&str>,
    ) -> Result<Box<dyn NodeWorld>, PartialTrustConfiguration>;
}
