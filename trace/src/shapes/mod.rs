//! # The JSON shapes a trace record holds
//!
//! The serde images of the wire format's shared objects (`docs/WIRE.md`), which trace records
//! hold as they are: a policy and its estimator ([`policy`]), an entry's content (kinds, message
//! parts, recovered segments: [`entry`]), and the results, verifications and diagnostics an
//! assembly produced, with their renderings from the vocabulary ([`result`]). Categorical values
//! are written by name ([`names`]).
//!
//! They are *syntax*: reading them into vocabulary values (a validated `Policy`, constructed
//! entries) is the checker's job (the oracle), where a SPEC rejection becomes a typed answer.
//! The oracle's wire format reads the same types in its cases, so a trace and a case write a
//! policy or a part the same way.

pub mod entry;
pub mod names;
pub mod policy;
pub mod result;

#[cfg(feature = "schema")]
pub use entry::WireValueSchema;
pub use entry::{BlockInput, CallInput, KindInput, PartInput, ResultInput, SegmentInput};
pub use names::{Id, Name};
pub use policy::{
    ConstantEstimatorInput, EncodingInput, EstimatorInput, MemoEstimatorInput, NoParameters,
    PolicyInput, RecordedEstimatorInput, TableEstimatorInput, TokensEstimatorInput,
};
pub use result::{
    assembly_output, diagnostics_output, entry_outputs, id_list, ids, verification_output,
    AssemblyOutput, ContributionOutput, DiagnosticsOutput, EntryOutput, VerificationOutput,
};
