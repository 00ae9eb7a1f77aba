//! The `hybrid-compaction` command-line tool: a thin wrapper over `hybrid_compaction_oracle::main`.
//!
//! The published vector files are compiled in here, in the binary's own crate, not in the
//! oracle's library: a regenerated vector file recompiles these few lines and relinks, nothing
//! else (`vectors/lib.rs` explains the macro).
//!
//! The command allocates with mimalloc (feature `mimalloc`, on by default): the trace checker
//! makes and drops many small values per call, where it is markedly faster than the system
//! allocator (`docs/PERFORMANCE.md`, "Trace checking"). The library does not set an allocator.
#![forbid(unsafe_code)]

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The corpus `hybrid-compaction vectors` runs when no directory is named.
static CORPUS: &[(&str, &str)] = hybrid_compaction_vectors::embedded!();

fn main() -> std::process::ExitCode {
    hybrid_compaction_oracle::main(CORPUS)
}
