//! The `hybrid-compaction` command-line tool: a thin wrapper over `hybrid_compaction_oracle::cli`.
//!
//! The published vector files are compiled in here, in the binary's own crate, not in the
//! oracle's library: a regenerated vector file recompiles these few lines and relinks, nothing
//! else (`vectors/lib.rs` explains the macro).
#![forbid(unsafe_code)]

/// The corpus `hybrid-compaction vectors` runs when no directory is named.
static CORPUS: &[(&str, &str)] = hybrid_compaction_vectors::embedded!();

fn main() -> std::process::ExitCode {
    hybrid_compaction_oracle::cli::main(CORPUS)
}
