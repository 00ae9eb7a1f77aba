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
//!  JSON case --wire::case--> vocabulary --exec::{Model | Engine}--> result --wire::output--> JSON
//!  vectors/source/*.json --corpus (Model)--> vectors/*.json + vectors/pins/PINS.json
//!  vectors/*.json --corpus::file--> cases + expected outputs --corpus::run--> per-topic table (cli)
//! ```

// No unsafe code anywhere (forbid: cannot be re-allowed below); every public item documented,
// because the wire docs are the contract other languages read.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cli;
pub mod corpus;
pub mod trace;
pub mod wire;
pub mod workload;
