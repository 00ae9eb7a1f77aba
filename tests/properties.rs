//! Library properties: one test binary for the engine == model properties and the other
//! library-level checks that link the same graph (library, spec, proptest).
//!
//! Each module is one former `tests/<name>.rs` file, unchanged but for its imports: a test keeps
//! its name under the module's (`engine_equivalence::assemble_matches_model`), so
//! `cargo test -p hybrid-compaction --test properties -- engine_equivalence::` runs one module.
//! One binary links the graph once instead of once per file.
//!
//! The crate root is this file, not `tests/properties/main.rs`, on purpose: proptest places a
//! module's regressions beside its source (`tests/properties/<module>.proptest-regressions`,
//! where the committed ones are) only when no directory above the source holds a `main.rs` or
//! `lib.rs`; a `main.rs` beside the modules would move them to `tests/proptest-regressions/`.
//!
//! | Module | What it checks |
//! |---|---|
//! | [`engine_equivalence`] | engine == model on every public function, on biased generated inputs |
//! | [`engine_state_machine`] | engine vs model over a growing, concurrently mutated history (proptest-state-machine) |
//! | [`engine_size_cache`] | the engine's per-call size cache (ASM-15): each entry estimated once per call |
//! | [`lease_equivalence`] | the concurrent lease coordinator against the sequential specification (LSE) |
//! | [`generator_coverage`] | the shared generators reach every path the properties must see |
//! | [`estimate_memo`] | the memo estimator is indistinguishable from its inner one (EST-7); feature `tokens` |
//! | [`memo_key`] | the memo's key covers everything an estimator reads, under reused ids with edited content (EST-7); feature `tokens` |
//! | [`token_golden`] | the token estimator against Python tiktoken's golden counts (EST-6); feature `tokens` |
//! | [`token_differential`] | the token counter against `tiktoken-rs` on 100k+ stressing strings (EST-6); feature `tokens` |
//! | [`transcripts`] | transcripts to entries and back (TRN); features `tokens` and `transcripts` |
//! | [`transcript_ai_sdk`] | the Vercel AI SDK's `ModelMessage`s (TRN-20); feature `transcripts` |
//! | [`transcript_frameworks`] | the formats of the Python agent frameworks: pydantic-ai (TRN-21), Gemini (TRN-22); feature `transcripts` |
//! | [`transcript_shapes`] | the shapes chat models and LangChain return (TRN-7 .. TRN-13); feature `transcripts` |
//! | [`transcript_turns`] | turns a provider receives whole, approval requests awaiting their answer (TRN-23, TRN-24); feature `transcripts` |
//!
//! The generators shared with other suites stay in `tests/support/` ([`gen`], [`cases`]).

#[path = "support/cases.rs"]
mod cases;
#[path = "support/gen.rs"]
mod gen;

#[path = "properties/engine_equivalence.rs"]
mod engine_equivalence;
#[path = "properties/engine_size_cache.rs"]
mod engine_size_cache;
#[path = "properties/engine_state_machine.rs"]
mod engine_state_machine;
#[cfg(feature = "tokens")]
#[path = "properties/estimate_memo.rs"]
mod estimate_memo;
#[path = "properties/generator_coverage.rs"]
mod generator_coverage;
#[path = "properties/lease_equivalence.rs"]
mod lease_equivalence;
#[cfg(feature = "tokens")]
#[path = "properties/memo_key.rs"]
mod memo_key;
#[cfg(feature = "tokens")]
#[path = "properties/token_differential.rs"]
mod token_differential;
#[cfg(feature = "tokens")]
#[path = "properties/token_golden.rs"]
mod token_golden;
#[cfg(feature = "transcripts")]
#[path = "properties/transcript_ai_sdk.rs"]
mod transcript_ai_sdk;
#[cfg(feature = "transcripts")]
#[path = "properties/transcript_frameworks.rs"]
mod transcript_frameworks;
#[cfg(feature = "transcripts")]
#[path = "properties/transcript_shapes.rs"]
mod transcript_shapes;
#[cfg(feature = "transcripts")]
#[path = "properties/transcript_turns.rs"]
mod transcript_turns;
#[cfg(all(feature = "tokens", feature = "transcripts"))]
#[path = "properties/transcripts.rs"]
mod transcripts;
