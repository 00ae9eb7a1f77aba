//! # hybrid-compaction-model: the vocabulary of hybrid context compaction
//!
//! The plain data every side of ADR-0007 ("hybrid context compaction", pinned down by
//! `docs/SPEC.md`) shares: entries, messages, values, policy, snapshots, outcomes, stages,
//! rejection reasons, diagnostics, artifact digests, and the small traits that are *inputs* to
//! assembly ([`estimator::Estimator`], [`snapshot::SnapshotProvider`], [`assembly::Reducer`],
//! [`reducers::UpstreamReducer`], [`classifier::Classifier`]). Code both implementations need
//! identically lives here once: construction rules (ENT-5, SNAP-1, POL-2), the sanctioned
//! augmentation helper ([`integration::augment`], SNAP-4), the host-defined estimators (EST-5),
//! the adaptation error ([`classifier::AdaptError`], CLS-1), the bridge around a pluggable BRG-2
//! search ([`bridge::Bridge`]), the checked diagnostics constructor
//! ([`diagnostics::Diagnostics::checked`], DIA-3 .. DIA-5), and the enum name tables.
//! The rest of ADR-0007 (SPEC sections 16-18) adds capabilities, composition statuses, trust
//! bindings, the workspace seam, validated reference records (ARF-2) and validated artifact
//! diagnostics with their UTF-8 byte attribution (ATR-1, ATR-2), rehydration, offload and the
//! public configuration of ADR-0011.
//!
//! Two implementations read and write this vocabulary:
//! * the executable specification, crate `hybrid-compaction-spec`: the functions a reviewer
//!   reads beside `docs/SPEC.md`, written for clarity, never speed;
//! * the optimized engine, crate `hybrid-compaction`, proven equal to the specification by
//!   property tests. It does not depend on the specification crate, so it cannot call it.
//!
//! ## Feature `testing`: scripted test doubles
//! The doubles that play a script are for tests, vectors and the oracle, not for a host's
//! production build, so they exist only with the feature `testing` (off by default), at the
//! paths they would have anyway: [`reducers::ScriptedReducer`] with its [`reducers::ScriptStep`]
//! and [`reducers::ProposalItem`], [`reducers::CancelAtCall`], [`reducers::ScriptedUpstreamReducer`]
//! with its [`reducers::UpstreamStep`], [`snapshot::ScriptedProvider`] (also re-exported here)
//! and [`workspace::ScriptedWorkspace`]. Production inputs are always there:
//! [`snapshot::StaticProvider`], [`reducers::MessageCountingReducer`], the constant and table
//! estimators. The oracle, the fuzz crate and the tests enable the feature.

// Lints carry intent: the model must be reviewable line by line, so no unsafe code anywhere
// (forbid: cannot be re-allowed) and every public item documented (the docs cite the SPEC).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]
// The docs link the feature-gated doubles; without `testing` those links dangle, as the feature
// section says (the workspace's docs build, which enables it, checks them).
#![cfg_attr(not(feature = "testing"), allow(rustdoc::broken_intra_doc_links))]

pub mod analysis;
pub mod artifact;
pub mod artifact_diagnostics;
pub mod artifact_record;
pub mod assembly;
pub mod bridge;
pub mod cancel;
pub mod capability;
pub mod classifier;
pub mod composition;
pub mod configuration;
pub mod content_digest;
pub mod diagnostics;
pub mod entry;
pub mod error;
pub mod estimator;
pub mod integration;
pub mod lease;
pub mod message;
mod names;
pub mod offload;
pub mod policy;
pub mod reducers;
pub mod rehydration;
#[cfg(feature = "testing")]
pub mod seam;
pub mod selection;
pub mod snapshot;
pub mod trust;
pub mod value;
pub mod verification;
pub mod workspace;

pub use analysis::{ToolExchangeAnalysis, ToolGroup};
pub use artifact::{ArtifactError, ArtifactReference, Digest};
pub use assembly::{
    AssemblyError, AssemblyResult, ContractViolation, Outcome, Reducer, ReducerError,
    ReductionRequest, Stage,
};
pub use cancel::CancellationToken;
pub use classifier::{AdaptError, Classifier, ClassifierError};
pub use diagnostics::{Category, CompactionOutcome, Contribution, Diagnostics, StageCategory};
pub use entry::{Entry, EntryError, EntryId, EntryKind, RecoverableSegment};
pub use error::{ErrorKind, TypedError};
pub use estimator::{ConstantEstimator, Estimator, MeasurementUnit, TableEstimator};
pub use message::{Block, BlockKind, FunctionCall, FunctionResult, Message, Part};
pub use names::Named;
pub use policy::{Policy, PolicyError, PolicyField, PolicySpec, TriggerEvaluation};
pub use selection::PreservationSelection;
#[cfg(feature = "testing")]
pub use snapshot::ScriptedProvider;
pub use snapshot::{SharedEntries, Snapshot, SnapshotError, SnapshotProvider, StaticProvider};
pub use value::{Decimal, RawJson, Value, ValueError, ValueMap};
pub use verification::{RejectionReason, VerificationOutcome, VerificationResult};
