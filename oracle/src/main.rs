//! The `hybrid-compaction` command-line tool: a thin wrapper over `hybrid_compaction_oracle::cli`.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    hybrid_compaction_oracle::cli::main()
}
