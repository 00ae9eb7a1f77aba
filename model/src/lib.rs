//! # hybrid-compaction-model: the executable specification of hybrid context compaction
//!
//! This crate is the reference model of ADR-0007 ("hybrid context compaction") as pinned down by
//! `docs/SPEC.md`. It has two halves:
//!
//! * **Vocabulary** (top-level modules): the plain data every side shares (entries, messages,
//!   values, policy, snapshots, outcomes, stages, rejection reasons, diagnostics, artifact
//!   digests) and the small traits that are *inputs* to assembly ([`estimator::Estimator`],
//!   [`snapshot::SnapshotProvider`], [`assembly::Reducer`], [`reducers::UpstreamReducer`],
//!   [`classifier::Classifier`]).
//! * **Spec** ([`spec`]): the functions a reviewer reads beside `docs/SPEC.md`: estimation,
//!   tool-exchange analysis, required preservation, verification, assembly, the reducer bridge,
//!   classification and diagnostics. Each rule cites its SPEC clause (`// SPEC ASM-7`). They are
//!   written for clarity, never speed: plain loops, no caching, no indexes.
//!
//! The optimized engine (crate `hybrid-compaction`) shares the vocabulary but never calls
//! [`spec`] at run time, so that property tests comparing the two prove something.
//!
//! ```text
//! snapshot --> size < threshold? --yes--> verify(cur,cur) --> recapture --> WithinLimit
//!    | no
//! evict durable bodies --> margin restored? --> verify --> recapture --> Reduced
//!    | no
//! reducer attempts (bounded) --> verify each proposal --> fits? --> recapture --> Reduced
//!    | none accepted / fits
//! deterministic fallback --> PreservationFallback | Irreducible
//! version changed at a recapture --> restart (maybe consuming an attempt) | ConcurrentMutationLimit
//! ```

// Lints carry intent: the model must be reviewable line by line, so no unsafe code anywhere
// (forbid: cannot be re-allowed) and every public item documented (the docs cite the SPEC).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod analysis;
pub mod artifact;
pub mod assembly;
pub mod cancel;
pub mod classifier;
pub mod diagnostics;
pub mod entry;
pub mod error;
pub mod estimator;
pub mod lease;
pub mod message;
pub mod policy;
pub mod reducers;
pub mod selection;
pub mod snapshot;
pub mod spec;
pub mod value;
pub mod verification;

pub use analysis::{ToolExchangeAnalysis, ToolGroup};
pub use artifact::{ArtifactError, ArtifactReference, Digest};
pub use assembly::{
    AssemblyError, AssemblyResult, ContractViolation, Outcome, Reducer, ReducerError,
    ReductionRequest, Stage,
};
pub use cancel::CancellationToken;
pub use classifier::Classifier;
pub use diagnostics::{Category, CompactionOutcome, Contribution, Diagnostics, StageCategory};
pub use entry::{Entry, EntryError, EntryId, EntryKind, RecoverableSegment};
pub use error::ErrorKind;
pub use estimator::{ConstantEstimator, Estimator, MeasurementUnit, TableEstimator};
pub use message::{FunctionCall, FunctionResult, Message, Part};
pub use policy::{Policy, PolicyError, PolicyField, PolicySpec, TriggerEvaluation};
pub use selection::PreservationSelection;
pub use snapshot::{
    ScriptedProvider, SharedEntries, Snapshot, SnapshotError, SnapshotProvider, StaticProvider,
};
pub use value::{Decimal, RawJson, Value, ValueError, ValueMap};
pub use verification::{RejectionReason, VerificationOutcome, VerificationResult};
