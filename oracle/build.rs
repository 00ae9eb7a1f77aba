//! Embeds the conformance corpus (`vectors/*.json` at the repository root) in the oracle, so
//! `hybrid-compaction vectors` works from any directory and a copied binary carries its corpus.
//!
//! Writes `$OUT_DIR/corpus.rs`: one `(file name, include_str!(absolute path))` pair per file,
//! sorted by name. Cargo reruns this script when the folder or any file in it changes.

use std::path::PathBuf;
use std::{env, fs};

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = manifest.join("..").join("vectors");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "json"));
    files.sort();
    let mut code = String::from("/// The corpus files compiled into the oracle, by name.\n");
    code.push_str("pub const EMBEDDED: &[(&str, &str)] = &[\n");
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().expect("a file").to_string_lossy();
        let absolute = fs::canonicalize(path).expect("a readable vector file");
        code.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            absolute.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo")).join("corpus.rs");
    fs::write(out, code).expect("OUT_DIR is writable");
}
