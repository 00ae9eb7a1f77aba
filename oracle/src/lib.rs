//! # hybrid-compaction-oracle: the conformance oracle
//!
//! The door to the outside for other implementations of hybrid context compaction (ADR-0007,
//! `docs/SPEC.md`): the JSON wire format ([`wire`]), its JSON Schemas, the vector corpus and its
//! generator ([`corpus`]), and the `hybrid-compaction` command ([`cli`]). It runs both implementations side by
//! side: the executable specification (crate `hybrid-compaction-spec`) and the optimized engine
//! (crate `hybrid-compaction`).
//!
//! It is the only crate that knows JSON field names, and the only one that depends on clap and
//! schemars: a host that embeds the engine, the leases or the node compiles none of this.
//!
//! ```text
//!  JSON case --ops::Case (one module per operation)--> vocabulary values (wire::convert)
//!      --> &dyn Implementation: Model (hybrid_compaction_spec) | Engine (hybrid_compaction::seam)
//!      --> answer --ops::Output--> JSON
//!  vectors/source/*.json --corpus (Model)--> vectors/*.json + vectors/pins/PINS.json
//!  vectors/*.json --corpus::file--> cases + expected outputs --corpus::run--> per-topic table (cli)
//!  trace JSONL --trace--> replay each recorded call through the seam --> TRC-n violations
//! ```
//!
//! | module | holds |
//! |---|---|
//! | [`ops`] | the operations: the one list, each operation's case, answer and run |
//! | [`wire`] | the wire base: inputs, conversion, shared outputs, strict reader, errors |
//! | [`schema`] | the JSON Schemas derived from the case, output and vector-file types |
//! | [`trace`] | the trace format and `hybrid-compaction check` |
//! | [`cli`] | the `hybrid-compaction` command |
//! | [`workload`] | the seeded conversation generator of `workload` and `bench` |

// No unsafe code anywhere (forbid: cannot be re-allowed below); every public item documented,
// because the wire docs are the contract other languages read.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cli;
pub mod corpus;
pub mod ops;
pub mod schema;
pub mod trace;
pub mod wire;
pub mod workload;

pub use hybrid_compaction::seam::Engine;
pub use hybrid_compaction_model::seam::Implementation;
pub use hybrid_compaction_spec::Model;
pub use ops::{run_case, run_case_caught, Case, Output, RunError};
