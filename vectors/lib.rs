//! # hybrid-compaction-vectors: the published corpus, embedded where it is used
//!
//! The vector files `vectors/*.json` (one per topic, Wycheproof-style; `docs/WIRE.md`) are
//! compiled into the `hybrid-compaction` binary, so that `hybrid-compaction vectors` runs them from
//! any directory and a copied binary carries its corpus. This crate says *which* files and
//! *where* they are; it holds none of their bytes:
//!
//! ```ignore
//! static CORPUS: &[(&str, &str)] = hybrid_compaction_vectors::embedded!();
//! ```
//!
//! [`embedded!`] expands, in the crate that invokes it, to `&[(file name, text), ...]`, one
//! `include_str!` per published file (sorted by name). Because `include_str!` runs in the
//! invoking crate, the compiler records the vector files as inputs of *that* crate only: a
//! regenerated vector file recompiles the few lines that invoke the macro (the oracle's
//! `src/main.rs`) and relinks, while this crate, the oracle's library and every other crate stay
//! fresh. (A crate that held the text itself would be rebuilt, and Cargo rebuilds every crate that
//! depends on a rebuilt one, the whole oracle included.)
//!
//! The topic sources (`vectors/source/`) and the pin ledger (`vectors/pins/`) are read by
//! `hybrid-compaction vectors generate` at run time; nothing compiles them in, so editing them
//! rebuilds nothing. The list below names the published files; adding a topic adds its line
//! (`oracle/src/corpus/tests.rs` fails, saying so, while the list and `vectors/*.json` differ).

// No unsafe code; every public item documented (workspace lints).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

// `__dir!()`: this folder's absolute path with a trailing separator, written by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/dir.rs"));

/// `&[(name, include_str!(<this folder>/name)), ...]` for the names given (implementation of
/// [`embedded!`]).
#[doc(hidden)]
#[macro_export]
macro_rules! __files {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!($crate::__dir!(), $name)))),*]
    };
}

/// The published vector files as `&'static [(&'static str, &'static str)]`: `(file name, text)`
/// pairs sorted by name, compiled into the crate that invokes the macro (see the crate docs).
#[macro_export]
macro_rules! embedded {
    () => {
        $crate::__files!(
            "artifacts.json",
            "assemble-churn.json",
            "assemble-errors.json",
            "assemble-outcomes.json",
            "bridge-op.json",
            "bridge.json",
            "capability.json",
            "composition.json",
            "configuration.json",
            "diagnostics-records.json",
            "diagnostics.json",
            "entries.json",
            "estimate.json",
            "exchange.json",
            "generated.json",
            "leases.json",
            "node.json",
            "offload.json",
            "policy.json",
            "preserve.json",
            "records.json",
            "rehydration.json",
            "tokens.json",
            // SPEC TRN-20: the AI SDK; TRN-22: Gemini; TRN-21: pydantic-ai.
            "transcripts-ai-sdk.json",
            "transcripts-gemini.json",
            "transcripts-pydantic-ai.json",
            "transcripts.json",
            "trust.json",
            "verify.json",
        )
    };
}
