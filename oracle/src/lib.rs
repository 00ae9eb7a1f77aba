//! # hybrid-compaction-oracle: the conformance oracle
//!
//! The door to the outside for other implementations of hybrid context compaction (ADR-0007,
//! `docs/SPEC.md`): the JSON wire format, its JSON Schemas, the vector corpus and its generator,
//! the trace checker and the `hybrid-compaction` command. It runs both implementations side by
//! side: the executable specification (crate `hybrid-compaction-spec`) and the optimized engine
//! (crate `hybrid-compaction`).
//!
//! It is the only crate that knows the wire format's case and answer types, and the only one
//! that depends on clap and schemars: a host that embeds the engine, the leases or the node
//! compiles none of this, and one that records traces links the trace crate
//! (`hybrid-compaction-trace`) alone.
//!
//! ## The facade
//!
//! What other crates (the Python binding, the fuzz targets, the benches, the tests) use is this
//! page and nothing else; every module below it is the crate's own (`unreachable_pub` is
//! denied, so an item that is `pub` is part of the facade):
//!
//! | item | what it is for |
//! |---|---|
//! | [`Case`], [`read_case`], [`run_case`], [`run_case_caught`], [`Output`], [`OPERATIONS`] | one wire case: read, run on an implementation, answered; the operations' names |
//! | [`Model`], [`Engine`], [`Implementation`] | the two implementations, behind the one seam |
//! | [`read_policy`], [`read_entry`] | a policy or an entry read and built as a case's (a binding's compactor takes a policy) |
//! | [`mod@trace`] | checking a trace: [`trace::check`], its options and report |
//! | [`vectors`] | the published vector files: found, read, run, compared, tabled |
//! | [`workload`] | the seeded conversation generator of `workload` and `bench` |
//! | [`schema`] | the JSON Schemas of cases, answers, vector files and traces |
//! | [`main`], [`main_with_args`] | the `hybrid-compaction` command |
//!
//! ## Inside
//!
//! ```text
//!  JSON case --ops::Case (one module per operation)--> vocabulary values (wire::convert)
//!      --> &dyn Implementation: Model (hybrid_compaction_spec) | Engine (hybrid_compaction::seam)
//!      --> answer --ops::Output--> JSON
//!  vectors/source/*.json --corpus (Model)--> vectors/*.json + vectors/pins/PINS.json
//!  vectors/*.json --corpus::file--> cases + expected outputs --corpus::run--> per-topic table (cli)
//!  trace JSONL --trace: read -> resolve -> judge -> fold--> TRC-n violations
//! ```
//!
//! | module | holds |
//! |---|---|
//! | `ops` | the operations: the one list, each operation's case, answer and run |
//! | `wire` | the wire base: inputs, conversion, shared outputs, errors (no operation) |
//! | `corpus` | the vector corpus: sources, the generator, pins, running vector files |
//! | `trace` | `hybrid-compaction check`: reading, resolving, judging and folding a trace |
//! | `cli` | the `hybrid-compaction` command |

// No unsafe code anywhere (forbid: cannot be re-allowed below); every public item documented,
// because the wire docs are the contract other languages read; and no `pub` item outside the
// facade (`unreachable_pub`): what the crate's own modules share is `pub(crate)`, so the
// internals can move without breaking a user.
#![forbid(unsafe_code)]
#![deny(missing_docs, unreachable_pub)]

mod cli;
mod corpus;
mod ops;
pub mod schema;
pub mod trace;
pub mod vectors;
mod wire;
pub mod workload;

#[cfg(test)]
mod privacy_canary;

pub use cli::{main, main_with_args, Embedded};
pub use hybrid_compaction::seam::Engine;
pub use hybrid_compaction_model::seam::Implementation;
pub use hybrid_compaction_spec::Model;
pub use ops::{run_case, run_case_caught, Case, Output, RunError, OPERATIONS};
pub use wire::error::{CaseError, ErrorOutput, WireError};

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_trace::shapes::PolicyInput;
use hybrid_compaction_trace::strict::{self, ReadError};
use wire::input::EntryInput;

/// Reads one case from its JSON text with the strict reader (`docs/WIRE.md`): a repeated key is
/// refused anywhere, and a refusal names the JSON path of the value and says what was expected.
pub fn read_case(text: &str) -> Result<Case, ReadError> {
    strict::read(text)
}

/// Reads a policy object (`docs/WIRE.md`, "Policies") from its JSON text and validates it as a
/// case's policy is validated (SPEC POL-1 .. POL-3), with `imp`'s estimators: a policy a
/// binding's compactor can use. A refusal is a wire error (the JSON text, with its path) or a
/// typed error answer (the SPEC rejects the values, ERR-1).
pub fn read_policy(text: &str, imp: &dyn Implementation) -> Result<Policy, CaseError> {
    let input: PolicyInput = strict::read(text).map_err(wire_error)?;
    wire::convert::policy(Some(&input), imp, "$")
}

/// Reads an entry object (`docs/WIRE.md`, "Entries") from its JSON text and constructs it as a
/// case's entry is constructed (SPEC ENT-1 .. ENT-6). A refusal is a wire error or a typed error
/// answer, as for [`read_policy`].
pub fn read_entry(text: &str) -> Result<Entry, CaseError> {
    let input: EntryInput = strict::read(text).map_err(wire_error)?;
    wire::convert::entry(&input, "$")
}

/// A strict reader's refusal as a wire error.
fn wire_error(e: ReadError) -> CaseError {
    CaseError::Wire(WireError {
        path: e.path,
        message: e.message,
    })
}
