//! # The wire base: inputs, their conversion, shared outputs, the strict reader, errors
//!
//! Everything the operations ([`crate::ops`]) read and write that is not specific to one of
//! them. The wire base knows no operation: imports point one way, operations -> wire base ->
//! vocabulary.
//!
//! ```text
//!  JSON text --strict--> input (policy, entries, messages, values, schedules, reducers, host)
//!                          |
//!                       convert --> vocabulary (Policy, Entry, providers, reducers, ...)
//!                                           |  an operation runs it on &dyn Implementation
//!  JSON text <--serde-- output (entries, verification, assembly, diagnostics, runs) + error
//! ```
//!
//! | module | holds |
//! |---|---|
//! | [`input`] | the serde images of shared inputs (`docs/WIRE.md`, "Inputs") |
//! | [`convert`] | inputs to vocabulary values; SPEC rejections become typed answers |
//! | [`host`] | what a host supplies: capability profiles, client chains, owners, bindings, accessors |
//! | [`output`] | shared outputs and their renderings from the vocabulary |
//! | [`runs`] | run views and opaque ids rendered with placeholders (`R1`, `A1`, ...) |
//! | [`names`] | categorical values written by name, listed in the schema |
//! | [`error`] | wire errors (exit 2) and typed error answers (SPEC ERR-1) |
//! | [`strict`] | the strict, path-tracking JSON reader |
//!
//! This module is the only place that knows JSON field names besides the operations' own case
//! and answer types. The JSON Schemas ([`crate::schema`]) are derived from the same serde types.

pub mod convert;
pub mod error;
pub mod host;
pub mod input;
pub mod runs;

pub use hybrid_compaction_trace::shapes::names;
pub use hybrid_compaction_trace::shapes::result as output;
pub use hybrid_compaction_trace::strict;

pub use error::{CaseError, ErrorOutput, WireError};
