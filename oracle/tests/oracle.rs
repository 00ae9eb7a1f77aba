//! The oracle's tests: one test binary for everything that drives the oracle through its public
//! surface (the facade in `oracle/src/lib.rs`), the trace crate and the `hybrid-compaction`
//! command. Tests of the oracle's internals are unit tests beside the code they test, in the
//! library's own test binary: the vector corpus, its generator and pins (`corpus/tests.rs`), the
//! privacy canary over every rendering (`privacy_canary.rs`), the quick trace reader against the
//! strict one (`trace/read/quick_tests.rs`), the defined-entry reader, ...
//!
//! Each module is one former `oracle/tests/<name>.rs` file, unchanged but for its imports: a test
//! keeps its name under the module's (`trace::generated_runs_check_clean`), so
//! `cargo test -p hybrid-compaction-oracle --test oracle -- trace::` runs one module. One binary
//! links the oracle's graph once instead of once per file. (As in the root's `tests/properties.rs`,
//! the crate root is this file, not `oracle/tests/oracle/main.rs`, so proptest keeps each module's
//! regressions beside its source.)
//!
//! | Module | What it checks |
//! |---|---|
//! | [`adr_vectors`] | the ADR's vectors cover what its sections require, on the model and the engine |
//! | [`bad_input`] | malformed cases are refused with exit 2, the JSON path and the format's words |
//! | [`bench`] | `hybrid-compaction bench`: its table and JSON document |
//! | [`cli`] | the command end to end: every subcommand and exit code |
//! | [`cli_estimator`] | the command's `--estimator` flag (EST-6, EST-7) |
//! | [`docs`] | the documents tell the truth: numbers, examples, paths and commands |
//! | [`fuzz_replay`] | the committed fuzz seeds replayed under `cargo test` |
//! | [`scenarios`] | the scenario operations and their schemas |
//! | [`trace`] | trace checking end to end (TRC-1 .. TRC-12) over the node's recorded runs |
//! | [`trace_input`] | what `check` reads: lines, caps, refusals, exit codes |
//! | [`trace_observed`] | observed calls judged by what they sent (TRC-13) |
//! | [`trace_reuse`] | reusing a run's work from call to call changes no report |
//! | [`workload`] | the seeded workload generator |
//!
//! Shared support: [`trace_support`] (the node driven over generated runs, also used by the
//! `check` bench and the quick reader's unit tests) and [`schema_support`] (a JSON Schema
//! validator).

// The fuzz crate's decoders and differential checks (`fuzz/src`), replayed by `fuzz_replay`:
// its `oracle` module names the decoders `crate::decode`, so both sit at this crate's root.
#[allow(dead_code)]
#[path = "../../fuzz/src/decode.rs"]
mod decode;
#[allow(dead_code)]
#[path = "../../fuzz/src/oracle.rs"]
mod fuzz_oracle;
#[path = "support/schema.rs"]
mod schema_support;
#[path = "support/trace.rs"]
mod trace_support;

#[path = "oracle/adr_vectors.rs"]
mod adr_vectors;
#[path = "oracle/bad_input.rs"]
mod bad_input;
#[path = "oracle/bench.rs"]
mod bench;
#[path = "oracle/cli.rs"]
mod cli;
#[path = "oracle/cli_estimator.rs"]
mod cli_estimator;
#[path = "oracle/docs.rs"]
mod docs;
#[path = "oracle/fuzz_replay.rs"]
mod fuzz_replay;
#[path = "oracle/scenarios.rs"]
mod scenarios;
#[path = "oracle/trace.rs"]
mod trace;
#[path = "oracle/trace_input.rs"]
mod trace_input;
#[path = "oracle/trace_observed.rs"]
mod trace_observed;
#[path = "oracle/trace_reuse.rs"]
mod trace_reuse;
#[path = "oracle/workload.rs"]
mod workload;
