//! # hybrid-compaction-trace: the trace format and its writer
//!
//! What a host needs to record the provider calls of its agent for `hybrid-compaction check`
//! (SPEC TRC, `docs/TRACE.md`), without linking the conformance oracle: the records of the
//! trace format, the JSON shapes they hold, the strict reader every line is read with, and the
//! writer that turns the node's call records (and any system's observed calls) into trace
//! lines. It depends on serde and serde_json besides the library itself; the JSON Schemas of
//! these types are derived only with the feature `schema` (the oracle turns it on to publish
//! them).
//!
//! ```text
//!  CompactionNode --TraceObserver (write::Collector, or the host's own)--> CallTrace
//!      --write::Writer--> format::CallRecord / ObservedRecord / RunEnd --serde_json--> JSONL
//!  JSONL line --strict::read--> format::Record  (the checker's reader, in the oracle)
//! ```
//!
//! | module | holds |
//! |---|---|
//! | [`mod@format`] | the records: header, call, observed and run-end records, entries, references |
//! | [`shapes`] | the wire's JSON shapes the records hold: policies, parts, results, names |
//! | [`mod@write`] | the writer: the node's call records and observed calls as trace records |
//! | [`strict`] | the strict, path-tracking JSON reader (repeated keys refused, paths in refusals) |

// No unsafe code anywhere (forbid: cannot be re-allowed below); every public item documented,
// because the format's docs are the contract other recorders read.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod format;
pub mod shapes;
pub mod strict;
pub mod write;

pub use format::{parse_record, Header, Record, TRACE_VERSION};
pub use write::{Collector, Writer};
