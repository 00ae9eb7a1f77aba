//! Writes `$OUT_DIR/dir.rs`: the macro `__dir!()`, this folder's absolute path (with a trailing
//! separator) as a string literal, which `embedded!` (lib.rs) joins to each file name.
//!
//! Nothing is watched but this script: the vector files are read by the crates that invoke
//! `embedded!` (the compiler tracks them there), so a changed vector file never re-runs this
//! script nor rebuilds this crate.

use std::path::{PathBuf, MAIN_SEPARATOR};
use std::{env, fs};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = fs::canonicalize(&dir).expect("the crate's folder exists");
    let literal = format!("{}{MAIN_SEPARATOR}", dir.display());
    let code = format!(
        "/// This crate's folder, absolute, with a trailing separator.\n\
         #[doc(hidden)]\n\
         #[macro_export]\n\
         macro_rules! __dir {{\n    () => {{\n        {literal:?}\n    }};\n}}\n"
    );
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo")).join("dir.rs");
    fs::write(out, code).expect("OUT_DIR is writable");
}
