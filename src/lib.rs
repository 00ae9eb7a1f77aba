//! # hybrid-compaction
//!
//! The optimized engine of hybrid context compaction (ADR-0007), proven equal to the executable
//! specification in `hybrid-compaction-model` by property tests, plus the conformance oracle
//! (wire format, vectors, CLI) and the non-retransmission lease coordinator.
//!
//! See `docs/SPEC.md` for the normative clauses.

// No unsafe code anywhere; every public item documented.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cli;
pub mod engine;
pub mod lease;
pub mod node;
pub mod sync;
pub mod wire;

pub use hybrid_compaction_model as model;
