//! Walking the repository's source files, for the tests that read the tree itself
//! (`tests/repository/spec_coverage.rs`, `tests/repository/independence.rs`).

use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file below `dir` (recursively) appended to `out`; a missing `dir` adds nothing.
pub fn rust_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(read) = fs::read_dir(dir) else { return };
    for entry in read.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
