//! Checks on the repository itself: one small test binary that reads the tree and the resolved
//! dependency graph, and links neither the library nor proptest.
//!
//! | Module | What it checks |
//! |---|---|
//! | [`independence`] | the library cannot reach the spec, the oracle, clap or schemars; its tests do not build the oracle; a host gets no test doubles |
//! | [`oracle_modules`] | no import circle among the oracle's modules; imports point from operations to the wire base |
//! | [`shared_builds`] | the Python binding's build asks every registry crate it shares with the test build for the same features |
//! | [`spec_coverage`] | every SPEC clause is named by a test function and cited by a vector |
//!
//! Tests keep their names under the module's (`spec_coverage::names_carry_area_number_pairs`).

#[path = "support/files.rs"]
mod files;

#[path = "repository/independence.rs"]
mod independence;
#[path = "repository/oracle_modules.rs"]
mod oracle_modules;
#[path = "repository/shared_builds.rs"]
mod shared_builds;
#[path = "repository/spec_coverage.rs"]
mod spec_coverage;

/// The lines `cargo tree --prefix none` prints with `args`, run at the repository root.
fn cargo_tree(args: &[&str]) -> Vec<String> {
    let output = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--prefix", "none"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_owned)
        .collect()
}
