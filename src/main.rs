//! The `hybrid-compaction` command-line tool.
fn main() {}
