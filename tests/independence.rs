//! The model and the engine stay independent (house rule; see README "How the SPEC, model and
//! engine relate").
//!
//! Equivalence tests prove something only if the engine does not call the model's spec functions
//! and the model does not depend on the engine. They may share plain vocabulary types.

use std::fs;
use std::path::Path;

#[path = "support/files.rs"]
mod files;
use files::rust_sources;

/// Lines of code (comments stripped) that reach into the model's `spec` module.
fn spec_calls(source: &str) -> Vec<String> {
    source
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .filter(|code| {
            code.contains("model::spec")
                || code.contains("hybrid_compaction_model::spec")
                || (code.contains("hybrid_compaction_model::{") && code.contains("spec"))
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn engine_leases_and_node_never_call_model_spec_functions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_sources(&root.join("src/engine"), &mut files);
    rust_sources(&root.join("src/lease"), &mut files);
    rust_sources(&root.join("src/node"), &mut files);
    assert!(!files.is_empty(), "src/engine has sources");
    let mut offenders = Vec::new();
    for f in &files {
        let text = fs::read_to_string(f).unwrap();
        for line in spec_calls(&text) {
            offenders.push(format!("{}: {}", f.display(), line.trim()));
        }
    }
    assert!(
        offenders.is_empty(),
        "engine code calls the model spec:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn model_does_not_depend_on_the_engine() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = fs::read_to_string(root.join("model/Cargo.toml")).unwrap();
    let deps = manifest.split("[dependencies]").nth(1).unwrap_or("");
    assert!(!deps.contains("hybrid-compaction ") && !deps.contains("hybrid-compaction="));
    assert!(
        !deps.contains("path ="),
        "model/ depends on no other crate of ours"
    );
    let mut files = Vec::new();
    rust_sources(&root.join("model/src"), &mut files);
    for f in files {
        let text = fs::read_to_string(&f).unwrap();
        assert!(
            !text.contains("hybrid_compaction::"),
            "{} names the engine crate",
            f.display()
        );
    }
}

#[test]
fn the_detector_sees_a_spec_call() {
    assert_eq!(
        spec_calls("let v = crate::model::spec::verify::verify(a, b, p);").len(),
        1
    );
    assert!(spec_calls("// model::spec is the reference").is_empty());
    assert!(
        spec_calls("use hybrid_compaction_model::verification::VerificationResult;").is_empty()
    );
}
