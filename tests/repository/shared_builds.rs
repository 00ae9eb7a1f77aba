//! The Python binding's build shares the workspace test build's registry crates.
//!
//! `python/` is a cargo workspace of its own (PyO3 needs an interpreter at build time), and CI
//! builds its wheel into the shared `target/` right after `cargo test --workspace`. A registry
//! crate is reused there only if both builds ask it for the same features; one that differs is
//! compiled again, with everything above it (a syn with other features rebuilds every proc
//! macro, then serde and every crate that derives with it). The features that only one side
//! would ask for are pinned on the other (`python/Cargo.toml`, and syn's in
//! `vectors/Cargo.toml`, a crate both graphs hold); this test keeps the pins true when a
//! dependency moves, except for the one feature the wheel adds on purpose ([`WHEEL_ONLY`]). It
//! also requires `python/Cargo.lock` to be current (`--locked`).

use std::collections::{BTreeMap, BTreeSet};

/// Every registry package of a `cargo tree` run, by `name version`, with the feature lists it
/// is built with (a crate built for the host and for the target may have two).
fn registry_features(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let mut all = vec!["--locked", "--format", "{p}|{f}"];
    all.extend_from_slice(args);
    let lines = crate::cargo_tree(&all);
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in &lines {
        let Some((package, features)) = line.split_once('|') else {
            continue; // a section header such as `[dev-dependencies]`
        };
        // A path package names its directory in parentheses; a registry one does not.
        if package.contains('/') {
            continue;
        }
        let package = package.trim_end_matches(" (proc-macro)").trim();
        let features = features.trim_end_matches(" (*)").trim();
        packages
            .entry(package.to_owned())
            .or_default()
            .insert(features.to_owned());
    }
    packages
}

/// The one feature the wheel adds on purpose, and the crates it is asked of: mimalloc in a
/// library the interpreter loads with `dlopen` needs local-dynamic thread-local storage (without
/// it the import fails), while the command keeps the initial-exec model (about 1 % fewer
/// instructions per checked call). Both crates are leaves of the graph, so the wheel build
/// recompiles mimalloc's C source and nothing else.
const WHEEL_ONLY: (&str, [&str; 2]) = ("local_dynamic_tls", ["mimalloc", "libmimalloc-sys"]);

/// `features` (one `{f}` list per build) without [`WHEEL_ONLY`]'s feature when `package` is one
/// of its crates, which must then ask for it.
fn shared_part(package: &str, features: &BTreeSet<String>) -> BTreeSet<String> {
    let (feature, crates) = WHEEL_ONLY;
    if !crates.contains(&package.split(' ').next().unwrap_or_default()) {
        return features.clone();
    }
    features
        .iter()
        .map(|list| {
            let mut asked: Vec<&str> = list.split(',').collect();
            assert!(
                asked.contains(&feature),
                "{package}: the wheel must ask for `{feature}` (a dlopen-ed library), not {list:?}"
            );
            asked.retain(|f| *f != feature);
            asked.join(",")
        })
        .collect()
}

#[test]
fn the_wheel_build_asks_every_shared_registry_crate_for_the_test_builds_features() {
    let workspace = registry_features(&["--workspace", "-e", "normal,build,dev"]);
    let mut python =
        registry_features(&["--manifest-path", "python/Cargo.toml", "-e", "normal,build"]);
    for (package, features) in python.iter_mut() {
        *features = shared_part(package, features);
    }
    assert!(python.keys().any(|p| p.starts_with("pyo3 ")), "{python:?}");
    assert!(
        workspace.keys().any(|p| p.starts_with("syn ")),
        "{workspace:?}"
    );
    let differing: Vec<String> = python
        .iter()
        .filter_map(|(package, features)| {
            let theirs = workspace.get(package)?; // PyO3's own crates are the wheel's alone
            (theirs != features).then(|| {
                format!(
                    "{package}: the tests build it with {theirs:?}, the wheel with {features:?}"
                )
            })
        })
        .collect();
    assert!(
        differing.is_empty(),
        "pin the missing features (python/Cargo.toml, vectors/Cargo.toml for syn):\n{}",
        differing.join("\n")
    );
}
