//! # Wire format: JSON cases, outputs, vector files
//!
//! The conformance oracle's language-neutral surface (see `docs/WIRE.md` for every field). A
//! *case* ([`case::Case`]) names one operation of the SPEC and its inputs; running it on an
//! [`exec::Implementation`] yields an *output* ([`output::Output`]): the full result, or a typed
//! error that is itself a legitimate answer. Vector files ([`vectors::VectorFile`]) bundle cases
//! with their expected outputs, Wycheproof-style, and [`corpus`] writes them: hand-written
//! cases per SPEC clause (each checked against a hand-computed partial expectation) plus seeded
//! generated cases whose expectations come from the model.
//!
//! ```text
//!  JSON text --serde--> case::Case --convert--> vocabulary (Policy, Entry, providers, reducers)
//!                                                   |
//!                             exec::Implementation (Model | Engine)
//!                                                   |
//!  JSON text <--serde-- output::Output <--convert-- results / AssemblyError
//! ```
//!
//! This module is the only place that knows JSON field names. The JSON Schemas
//! ([`schema`]) are derived from the same serde types.

pub mod adr;
pub mod case;
pub mod convert;
pub mod corpus;
pub mod exec;
pub mod output;
pub mod scenario;
pub mod schema;
pub mod strict;
pub mod vectors;

pub use case::Case;
pub use convert::{CaseError, WireError};
pub use exec::{run_case, run_case_caught, Engine, Implementation, Model, RunError};
pub use output::{ErrorOutput, Output};
pub use vectors::{TestGroup, TestVector, VectorFile};
