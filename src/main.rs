//! The `hybrid-compaction` command-line tool: a thin wrapper over `hybrid_compaction::cli`.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    hybrid_compaction::cli::main()
}
