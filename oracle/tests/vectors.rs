//! The shipped vector corpus: schema validity, SPEC clause coverage, outcome / reason / error
//! coverage, reproducibility of the generator, and agreement of the model and the engine with
//! every expected output.

#![allow(clippy::cast_possible_truncation, reason = "test data: small counts")]

mod schema_support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hybrid_compaction_oracle::wire::corpus;
use hybrid_compaction_oracle::wire::exec::{Engine, Implementation, Model};
use hybrid_compaction_oracle::wire::schema;
use hybrid_compaction_oracle::wire::vectors::{corpus_files, load_file, run_file, VectorFile};
use serde_json::Value as Json;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors")
}

fn corpus_files_loaded() -> Vec<(PathBuf, VectorFile)> {
    corpus_files(&dir())
        .expect("vectors/ is readable")
        .into_iter()
        .map(|p| {
            let f = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
            (p, f)
        })
        .collect()
}

fn raw_files() -> Vec<(PathBuf, Json)> {
    corpus_files(&dir())
        .expect("vectors/ is readable")
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable");
            (p, serde_json::from_str(&text).expect("valid JSON"))
        })
        .collect()
}

fn all_tests(
    files: &[(PathBuf, VectorFile)],
) -> impl Iterator<Item = &hybrid_compaction_oracle::wire::TestVector> {
    files
        .iter()
        .flat_map(|(_, f)| f.test_groups.iter().flat_map(|g| g.tests.iter()))
}

#[test]
fn corpus_has_at_least_400_vectors_with_unique_tc_ids_and_documented_flags() {
    let files = corpus_files_loaded();
    let n: usize = files.iter().map(|(_, f)| f.number_of_tests).sum();
    assert!(n >= 400, "only {n} vectors");
    let loaded: Vec<VectorFile> = files.into_iter().map(|(_, f)| f).collect();
    corpus::check_corpus(&loaded).unwrap_or_else(|p| panic!("{}", p.join("\n")));
    for f in &loaded {
        assert_eq!(f.schema, "hybrid-compaction-vectors/v1");
        for (flag, note) in &f.notes {
            assert!(
                !note.is_empty(),
                "{}: flag {flag} has no explanation",
                f.topic
            );
        }
    }
}

#[test]
fn every_shipped_vector_file_validates_against_the_published_schema() {
    let file_schema = schema_support::Validator::new(&schema::vector_file_schema());
    let case_schema = schema_support::Validator::new(&schema::case_schema());
    let output_schema = schema_support::Validator::new(&schema::output_schema());
    for (path, raw) in raw_files() {
        let errors = file_schema.errors(&raw);
        assert!(
            errors.is_empty(),
            "{}: {}",
            path.display(),
            errors.join("\n")
        );
        for g in raw["testGroups"].as_array().expect("groups") {
            for t in g["tests"].as_array().expect("tests") {
                let e = case_schema.errors(&t["case"]);
                assert!(
                    e.is_empty(),
                    "{} tcId {}: case: {}",
                    path.display(),
                    t["tcId"],
                    e.join("; ")
                );
                let e = output_schema.errors(&t["expected"]);
                assert!(
                    e.is_empty(),
                    "{} tcId {}: expected: {}",
                    path.display(),
                    t["tcId"],
                    e.join("; ")
                );
            }
        }
    }
}

#[test]
fn the_schema_validator_rejects_what_the_parser_rejects() {
    let case_schema = schema_support::Validator::new(&schema::case_schema());
    let good = serde_json::json!({"op": "analyze", "entries": [{"id": "u", "kind": "ConversationalMessage", "text": "x"}]});
    assert!(case_schema.errors(&good).is_empty());
    let bad = [
        serde_json::json!({"op": "analyze", "entries": [], "extra": 1}),
        serde_json::json!({"op": "nope", "entries": []}),
        serde_json::json!({"op": "analyze", "entries": [{"id": "u", "kind": "Nope"}]}),
        serde_json::json!({"op": "analyze", "entries": [{"id": 3, "kind": "Summary"}]}),
        serde_json::json!({"op": "policy", "policy": {"hardLimit": 2147483648u64, "triggerMargin": 1,
            "recentMessageRetentionCount": 1, "maximumCompactionAttempts": 1, "preservationVersion": 1}}),
        serde_json::json!({"op": "analyze", "entries": [{"id": "r", "kind": "ToolExchange",
            "parts": [{"result": {"callId": "c", "value": {"u8": 300}}}]}]}),
        serde_json::json!({"op": "analyze", "entries": [{"id": "r", "kind": "ToolExchange",
            "parts": [{"result": {"callId": "c", "value": {"a": 1}}}]}]}),
    ];
    for b in bad {
        assert!(!case_schema.errors(&b).is_empty(), "schema accepted {b}");
        // The parser (plus value conversion) refuses the same inputs as invalid wire input.
        let refused =
            match serde_json::from_value::<hybrid_compaction_oracle::wire::Case>(b.clone()) {
                Err(_) => true,
                Ok(case) => hybrid_compaction_oracle::wire::run_case(&case, &Model).is_err(),
            };
        assert!(refused, "parser accepted {b}");
    }
}

/// Clause ids required to be cited by vectors: every family of docs/SPEC.md and the
/// departures (the scenario operations reach leases, nodes and events; sections 16-18 have
/// their own operations).
#[test]
fn every_spec_clause_id_is_cited_by_some_vector() {
    let spec =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/SPEC.md"))
            .expect("docs/SPEC.md");
    let mut ids = BTreeSet::new();
    for family in [
        "ENT", "SNAP", "POL", "EST", "EXC", "PRE", "VER", "ASM", "BRG", "CLS", "DIA", "ART", "ERR",
        "TRN", "DEP", "CMP", "CAP", "TRU", "ARF", "RHY", "OFF", "ATR", "CFG", "LSE", "NODE", "EVT",
    ] {
        let pat = format!("**{family}-");
        let mut rest = spec.as_str();
        while let Some(i) = rest.find(&pat) {
            let tail = &rest[i + 2..];
            let end = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap_or(tail.len());
            ids.insert(tail[..end].to_owned());
            rest = &tail[end..];
        }
    }
    // A sample of ids that must be present in SPEC.md (guards against a parse slip).
    for must in [
        "ENT-7", "SNAP-5", "POL-4", "EST-5", "EXC-3", "PRE-4", "VER-4", "ASM-16", "BRG-3", "CLS-2",
        "DIA-6", "ART-2", "ERR-1",
    ] {
        assert!(ids.contains(must), "docs/SPEC.md lacks {must}");
    }
    let files = corpus_files_loaded();
    let cited: BTreeSet<String> = all_tests(&files)
        .flat_map(|t| t.clauses.iter().cloned())
        .collect();
    let missing: Vec<&String> = ids.iter().filter(|i| !cited.contains(*i)).collect();
    assert!(
        missing.is_empty(),
        "clause ids cited by no vector: {missing:?}"
    );
    // And no vector cites an id the SPEC does not define.
    let unknown: Vec<&String> = cited.iter().filter(|c| !ids.contains(*c)).collect();
    assert!(
        unknown.is_empty(),
        "vectors cite unknown clause ids: {unknown:?}"
    );
}

#[test]
fn every_outcome_reason_stage_and_error_kind_is_expected_somewhere() {
    let files = corpus_files_loaded();
    let mut seen = BTreeSet::new();
    for t in all_tests(&files) {
        let e = &t.expected;
        if let Some(err) = &e.error {
            seen.insert(format!("kind:{}", err.kind));
        }
        if let Some(a) = &e.assembly {
            seen.insert(format!("outcome:{}", a.outcome));
            for s in &a.stages {
                seen.insert(format!("stage:{s}"));
            }
        }
        if let Some(v) = &e.verification {
            for r in &v.rejection_reasons {
                seen.insert(format!("reason:{r}"));
            }
        }
    }
    let mut wanted = Vec::new();
    for k in hybrid_compaction_model::ErrorKind::ALL {
        wanted.push(format!("kind:{}", k.name()));
    }
    for o in hybrid_compaction_model::Outcome::ALL {
        wanted.push(format!("outcome:{}", o.name()));
    }
    for s in hybrid_compaction_model::Stage::ALL {
        wanted.push(format!("stage:{}", s.name()));
    }
    for r in hybrid_compaction_model::RejectionReason::ALL {
        wanted.push(format!("reason:{}", r.name()));
    }
    let missing: Vec<&String> = wanted.iter().filter(|w| !seen.contains(*w)).collect();
    assert!(missing.is_empty(), "never expected: {missing:?}");
}

#[test]
fn every_check_site_of_asm_10_has_a_restart_and_a_churn_vector() {
    // Sites of S40, matched by the comments of the hand-written churn vectors.
    let files = corpus_files_loaded();
    let comments: Vec<&str> = all_tests(&files).map(|t| t.comment.as_str()).collect();
    for site in [
        "below-trigger site",
        "margin-restored site",
        "post-reducer site",
        "reduced-proposal site",
        "preserve-current site",
        "fallback",
    ] {
        let restart = comments
            .iter()
            .any(|c| c.contains(site) && c.contains("restart"));
        let churn = comments.iter().any(|c| {
            c.contains(site) && (c.contains("churn") || c.contains("ConcurrentMutationLimit"))
        });
        assert!(
            restart && churn,
            "site {site:?}: restart vector {restart}, churn vector {churn}"
        );
    }
}

#[test]
fn committed_corpus_equals_the_generator_output() {
    // A changed expectation must be a reviewed diff of vectors/*.json, never a silent change:
    // regenerate with `hybrid-compaction vectors generate --out vectors` and review.
    let built = corpus::build_all(corpus::DEFAULT_SEED, corpus::DEFAULT_COUNT, None)
        .unwrap_or_else(|p| panic!("generation refused:\n{}", p.join("\n")));
    let files = corpus_files_loaded();
    assert_eq!(
        built.len(),
        files.len(),
        "topic count differs from vectors/"
    );
    for f in &built {
        let (_, shipped) = files
            .iter()
            .find(|(_, s)| s.topic == f.topic)
            .unwrap_or_else(|| panic!("topic {} missing from vectors/", f.topic));
        assert!(
            shipped == f,
            "vectors/{}.json differs from the generator output; regenerate and review",
            f.topic
        );
    }
}

#[test]
fn the_embedded_corpus_is_the_files_on_disk() {
    // Compiled into this test as into the binary.
    let embedded: Vec<(&str, &str)> = hybrid_compaction_vectors::embedded!().to_vec();
    let on_disk: Vec<(String, String)> = corpus_files(&dir())
        .expect("vectors/")
        .iter()
        .map(|p| {
            let name = p
                .file_name()
                .expect("a file")
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read_to_string(p).expect("readable"))
        })
        .collect();
    let names: Vec<&str> = embedded.iter().map(|(n, _)| *n).collect();
    let disk_names: Vec<&str> = on_disk.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names, disk_names,
        "vectors/lib.rs names other files than vectors/*.json: make its list of `embedded!` the \
         file names of vectors/*.json"
    );
    for ((name, text), (_, disk)) in embedded.iter().zip(&on_disk) {
        assert!(text == disk, "embedded {name} differs from vectors/{name}");
    }
}

#[test]
fn generation_is_reproducible_and_seed_dependent() {
    let a = corpus::build_all(7, 30, Some("generated")).expect("builds");
    let b = corpus::build_all(7, 30, Some("generated")).expect("builds");
    let c = corpus::build_all(8, 30, Some("generated")).expect("builds");
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a[0].number_of_tests, 30);
}

fn run_all(imp: &dyn Implementation) {
    let files = corpus_files_loaded();
    let mut failures = Vec::new();
    let mut total = 0;
    for (_, f) in &files {
        let r = run_file(f, &[imp]);
        total += r.total;
        failures.extend(
            r.failures
                .into_iter()
                .map(|(_, tc, d)| format!("tcId {tc}: {d}")),
        );
    }
    assert!(total >= 400);
    assert!(
        failures.is_empty(),
        "{} failures on the {}:\n{}",
        failures.len(),
        imp.name(),
        failures.join("\n")
    );
}

#[test]
fn the_model_passes_the_whole_corpus() {
    run_all(&Model);
}

#[test]
fn the_engine_passes_the_whole_corpus() {
    run_all(&Engine);
}

#[test]
fn a_wrong_expectation_is_detected() {
    // The runner can fail: flip one expected value and check the diff names it.
    let files = corpus_files_loaded();
    let (_, f) = files
        .iter()
        .find(|(_, f)| f.topic == "assemble-outcomes")
        .expect("topic");
    let mut f = f.clone();
    let t = &mut f.test_groups[0].tests[0];
    let a = t.expected.assembly.as_mut().expect("assembly");
    a.attempt_count += 1;
    let tc = t.tc_id;
    let r = run_file(&f, &[&Model, &Engine]);
    assert_eq!(r.failures.len(), 2);
    for (_, id, diff) in &r.failures {
        assert_eq!(*id, tc);
        assert!(diff.contains("$.assembly.attemptCount"), "{diff}");
    }
}

/// Mutates JSON deterministically: drop a member, change a number or string, duplicate or
/// drop an array element, or swap two elements.
fn mutate(v: &mut Json, r: &mut corpus::generated::SplitMix64) {
    match v {
        Json::Object(m) if !m.is_empty() => {
            let keys: Vec<String> = m.keys().cloned().collect();
            let k = &keys[r.below(keys.len() as u64) as usize];
            if r.chance(1, 6) && k != "op" {
                m.remove(k);
            } else if let Some(x) = m.get_mut(k) {
                mutate(x, r);
            }
        }
        Json::Array(a) if !a.is_empty() => {
            let i = r.below(a.len() as u64) as usize;
            match r.below(5) {
                0 => {
                    let x = a[i].clone();
                    a.insert(i, x);
                }
                1 => {
                    a.remove(i);
                }
                2 => {
                    let j = r.below(a.len() as u64) as usize;
                    a.swap(i, j);
                }
                _ => mutate(&mut a[i], r),
            }
        }
        Json::Number(_) => {
            *v = serde_json::json!(
                [0, 1, -1, 2, 7, 80, 100, 2147483647i64, -2147483648i64, 5000]
                    [r.below(10) as usize]
            );
        }
        Json::String(s) => {
            let choices = ["", " ", "u1", "s", "x", "k", "ok"];
            *s = choices[r.below(choices.len() as u64) as usize].to_owned();
        }
        Json::Bool(b) => *b = !*b,
        _ => {}
    }
}

/// Differential robustness: thousands of mutated vector cases. Neither implementation may
/// panic, and whenever the mutated case is valid input, model and engine must give the same
/// answer (error messages aside). `WIRE_MUTATIONS` sets the count (default 3000).
#[test]
fn mutated_cases_never_panic_and_model_and_engine_agree() {
    use hybrid_compaction_oracle::wire::exec::{run_case_caught, RunError};
    use hybrid_compaction_oracle::wire::vectors::comparable;
    let n: usize = std::env::var("WIRE_MUTATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    let files = corpus_files_loaded();
    let cases: Vec<Json> = files
        .iter()
        .flat_map(|(_, f)| {
            f.test_groups.iter().flat_map(|g| {
                g.tests.iter().map(move |t| {
                    serde_json::to_value(t.effective_case(g.policy.as_ref())).expect("case")
                })
            })
        })
        .collect();
    let mut r = corpus::generated::SplitMix64::new(0x5eed);
    let (mut valid, mut disagreements) = (0, Vec::new());
    for i in 0..n {
        let mut c = cases[r.below(cases.len() as u64) as usize].clone();
        for _ in 0..1 + r.below(3) {
            mutate(&mut c, &mut r);
        }
        let Ok(case) = serde_json::from_value::<hybrid_compaction_oracle::wire::Case>(c.clone())
        else {
            continue;
        };
        let m = run_case_caught(&case, &Model);
        let e = run_case_caught(&case, &Engine);
        for (name, res) in [("model", &m), ("engine", &e)] {
            if let Err(RunError::Panic { message, .. }) = res {
                panic!("mutation #{i}: the {name} panicked ({message}) on {c}");
            }
        }
        if let (Ok(mo), Ok(eo)) = (&m, &e) {
            valid += 1;
            if comparable(mo) != comparable(eo) {
                disagreements.push(format!(
                    "{c}\n  model:  {}\n  engine: {}",
                    comparable(mo),
                    comparable(eo)
                ));
            }
        } else {
            assert_eq!(m.is_ok(), e.is_ok(), "validity differs on {c}");
        }
    }
    // About a quarter of the mutations stay valid input; require a sixth.
    assert!(
        valid > n / 6,
        "only {valid} of {n} mutations were valid input"
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements, first:\n{}",
        disagreements.len(),
        disagreements[0]
    );
}
