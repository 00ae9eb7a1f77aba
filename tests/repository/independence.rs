//! The library's independence is a fact of the build, checked here on the resolved dependency
//! graph (no source grep: an alias or a multi-line `use` cannot slip past it).
//!
//! Equivalence tests prove something only if the engine does not call the executable
//! specification. The library crate `hybrid-compaction` (engine, leases, node) lists only the
//! vocabulary crate among its normal dependencies, so code under `src/` cannot name
//! `hybrid_compaction_spec` at all: `rustc` reports an unresolved crate. `.ci/run` also proves
//! that directly, by adding such a reference to `src/engine/mod.rs` and expecting `cargo clippy`
//! to fail. A host that embeds the library compiles neither the oracle nor its CLI and schema
//! dependencies, and neither do the library's own tests (no dev-dependency on the oracle).

/// The lines `cargo tree --prefix none` prints for `package` with `args` (edge kinds, ...).
fn cargo_tree(package: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec!["--offline", "-p", package];
    all.extend_from_slice(args);
    crate::cargo_tree(&all)
}

/// The package names in the normal (non-dev, non-build) dependency tree of `package`.
fn normal_dependency_tree(package: &str) -> Vec<String> {
    cargo_tree(package, &["-e", "normal", "--format", "{p}"])
        .iter()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_library_cannot_reach_the_spec_the_oracle_or_cli_and_schema_crates() {
    let tree = normal_dependency_tree("hybrid-compaction");
    assert!(
        tree.iter().any(|p| p == "hybrid-compaction-model"),
        "{tree:?}"
    );
    for forbidden in [
        "hybrid-compaction-spec",
        "hybrid-compaction-oracle",
        "clap",
        "schemars",
    ] {
        assert!(
            !tree.iter().any(|p| p == forbidden),
            "`{forbidden}` is a normal dependency of the library: {tree:?}"
        );
    }
}

/// A host records traces with the trace crate alone (its records, the JSON shapes they hold,
/// the strict reader and the writer): it links the library and serde, never the oracle, its
/// CLI, schema or parallelism crates, nor the executable specification. (The JSON Schemas of
/// its types are a feature the oracle turns on; a host's build does not.)
#[test]
fn the_trace_crate_links_neither_the_oracle_nor_cli_schema_rayon_or_spec() {
    let tree = normal_dependency_tree("hybrid-compaction-trace");
    for needed in ["hybrid-compaction", "serde", "serde_json"] {
        assert!(tree.iter().any(|p| p == needed), "{needed}: {tree:?}");
    }
    for forbidden in [
        "hybrid-compaction-spec",
        "hybrid-compaction-oracle",
        "clap",
        "schemars",
        "rayon",
        "mimalloc",
        "bpe-openai",
    ] {
        assert!(
            !tree.iter().any(|p| p == forbidden),
            "`{forbidden}` is a normal dependency of the trace crate: {tree:?}"
        );
    }
}

/// The package names of everything a test build of `package` compiles: its normal and dev
/// dependencies, transitively, minus the subtrees of `pruned`.
fn test_dependency_tree(package: &str, pruned: &[&str]) -> Vec<String> {
    let mut args = vec!["-e", "normal,dev", "--format", "{p}"];
    for p in pruned {
        args.extend(["--prune", p]);
    }
    cargo_tree(package, &args)
        .iter()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The library's own tests and benches do not build the oracle (its tests that need the
/// oracle's JSON renderings live in `oracle/tests/`), nor the CLI and schema crates. The one
/// exception is the benchmark harness: criterion parses its own command line with clap's
/// builder (no derive), so clap is checked with criterion's subtree pruned, and clap's derive
/// macro, which only a CLI of ours would bring, is checked on the whole graph.
#[test]
fn the_library_tests_do_not_build_the_oracle_or_cli_and_schema_crates() {
    let tree = test_dependency_tree("hybrid-compaction", &[]);
    assert!(
        tree.iter().any(|p| p == "hybrid-compaction-spec"),
        "the tests compare engine and spec: {tree:?}"
    );
    for forbidden in [
        "hybrid-compaction-oracle",
        "schemars",
        "schemars_derive",
        "clap_derive",
    ] {
        assert!(
            !tree.iter().any(|p| p == forbidden),
            "a test build of the library compiles `{forbidden}`: {tree:?}"
        );
    }
    let without_bench_harness = test_dependency_tree("hybrid-compaction", &["criterion"]);
    for forbidden in ["clap", "clap_builder"] {
        assert!(
            !without_bench_harness.iter().any(|p| p == forbidden),
            "a test build of the library compiles `{forbidden}` (not only through criterion): \
             {without_bench_harness:?}"
        );
    }
}

/// The loom models build the library alone: without its default features (no BPE ranks, no
/// transcripts) and without the root crate's dev-dependencies, because `--cfg loom` rebuilds
/// every crate of the graph in release (`docs/LOOM.md`).
#[test]
fn the_loom_models_build_the_library_without_default_features_or_test_crates() {
    let tree = test_dependency_tree("hybrid-compaction-loom", &[]);
    assert!(tree.iter().any(|p| p == "hybrid-compaction"), "{tree:?}");
    for forbidden in [
        "bpe-openai",
        "tiktoken-rs",
        "proptest",
        "proptest-state-machine",
        "criterion",
        "hybrid-compaction-oracle",
    ] {
        assert!(
            !tree.iter().any(|p| p == forbidden),
            "the loom build compiles `{forbidden}`: {tree:?}"
        );
    }
}

#[test]
fn the_spec_does_not_depend_on_the_engine() {
    let tree = normal_dependency_tree("hybrid-compaction-spec");
    assert!(
        tree.iter().any(|p| p == "hybrid-compaction-model"),
        "{tree:?}"
    );
    for forbidden in ["hybrid-compaction", "hybrid-compaction-oracle"] {
        assert!(
            !tree.iter().any(|p| p == forbidden),
            "`{forbidden}` is a dependency of the spec: {tree:?}"
        );
    }
}

#[test]
fn the_vocabulary_depends_on_neither_implementation() {
    let tree = normal_dependency_tree("hybrid-compaction-model");
    for forbidden in ["hybrid-compaction", "hybrid-compaction-spec"] {
        assert!(
            !tree.iter().any(|p| p == forbidden),
            "`{forbidden}` is a dependency of the vocabulary: {tree:?}"
        );
    }
}

/// A host that depends on the library with its default features gets no test doubles: the
/// vocabulary's `testing` feature (scripted reducers, providers, workspace) is enabled only by
/// the oracle, the fuzz crate and test builds, never along the library's normal edges.
#[test]
fn a_host_of_the_library_does_not_get_the_scripted_test_doubles() {
    let features = cargo_tree("hybrid-compaction", &["-e", "normal,features"]);
    assert!(
        features
            .iter()
            .any(|l| l.starts_with("hybrid-compaction-model ")),
        "{features:?}"
    );
    let testing = "hybrid-compaction-model feature \"testing\"";
    assert!(
        !features.iter().any(|l| l.starts_with(testing)),
        "the library's normal dependencies enable the model's `testing` feature: {features:?}"
    );
    // The check can see the feature: the oracle does enable it.
    let oracle = cargo_tree("hybrid-compaction-oracle", &["-e", "normal,features"]);
    assert!(oracle.iter().any(|l| l.starts_with(testing)), "{oracle:?}");
}

/// The command's allocator is the binary's: no oracle source but the binary's and the check
/// bench's names mimalloc, and every crate of this repository that links the oracle's library
/// turns its default features (the allocator) off.
#[test]
fn only_the_command_and_the_extension_allocate_with_mimalloc() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = Vec::new();
    crate::files::rust_sources(&root.join("oracle/src"), &mut sources);
    for file in sources {
        let text = std::fs::read_to_string(&file).expect("readable");
        if !file.ends_with("main.rs") {
            assert!(
                !text.contains("mimalloc"),
                "{} names mimalloc",
                file.display()
            );
        }
    }
    for manifest in ["python/Cargo.toml", "fuzz/Cargo.toml"] {
        let text = std::fs::read_to_string(root.join(manifest)).expect("readable");
        let line = text
            .lines()
            .find(|l| l.starts_with("hybrid-compaction-oracle"))
            .unwrap_or_else(|| panic!("{manifest} links the oracle"));
        assert!(
            line.contains("default-features = false"),
            "{manifest} links the oracle with its allocator: {line}"
        );
    }
}
