//! The shipped vector corpus: schema validity, SPEC clause coverage, outcome / reason / error
//! coverage, reproducibility of the generator from the topic sources, pinned tcIds (every rule of
//! `corpus::pins`, and that inserting a test renumbers nothing), and agreement of the model and
//! the engine with every expected output.

#![allow(clippy::cast_possible_truncation, reason = "test data: small counts")]

#[path = "../../tests/support/schema.rs"]
mod schema_support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::corpus::pins::{self, Ledger, PinStatus};
use crate::corpus::{self, corpus_files, load_file, run_file, Source, TestVector, VectorFile};
use crate::schema;
use crate::{Engine, Implementation, Model, Output};
use serde_json::Value as Json;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors")
}

fn sources() -> Vec<Source> {
    corpus::load_sources(&dir().join(corpus::SOURCE_DIR)).unwrap_or_else(|p| {
        let lines: Vec<String> = p.iter().map(ToString::to_string).collect();
        panic!("{}", lines.join("\n"))
    })
}

fn ledger() -> Ledger {
    Ledger::load(&dir()).unwrap_or_else(|e| panic!("{e}"))
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

fn all_tests(files: &[(PathBuf, VectorFile)]) -> impl Iterator<Item = &TestVector> {
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
        let refused = match serde_json::from_value::<crate::Case>(b.clone()) {
            Err(_) => true,
            Ok(case) => crate::run_case(&case, &Model).is_err(),
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
        if let Some(err) = e.as_error() {
            seen.insert(format!("kind:{}", err.kind));
        }
        if let Output::Assemble(a) = e {
            let a = &a.assembly;
            seen.insert(format!("outcome:{}", a.outcome));
            for s in &a.stages {
                seen.insert(format!("stage:{s}"));
            }
        }
        if let Output::Verify(v) = e {
            for r in &v.verification.rejection_reasons {
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
    // regenerate with `hybrid-compaction vectors generate --out vectors/` and review.
    let built = corpus::build_all(
        &sources(),
        corpus::DEFAULT_SEED,
        corpus::DEFAULT_COUNT,
        None,
    )
    .unwrap_or_else(|p| panic!("generation refused:\n{}", p.join("\n")));
    let files = corpus_files_loaded();
    assert_eq!(
        built.len(),
        files.len(),
        "topic count differs from vectors/"
    );
    for f in &built {
        let (path, shipped) = files
            .iter()
            .find(|(_, s)| s.topic == f.topic)
            .unwrap_or_else(|| panic!("topic {} missing from vectors/", f.topic));
        assert!(
            shipped == f,
            "vectors/{}.json differs from the generator output; regenerate and review",
            f.topic
        );
        // Byte for byte, as `generate` writes it.
        let mut text = serde_json::to_string_pretty(f).expect("serializes");
        text.push('\n');
        assert!(
            std::fs::read_to_string(path).expect("readable") == text,
            "vectors/{}.json is not byte-identical to the generator output",
            f.topic
        );
    }
}

#[test]
fn generation_is_reproducible_and_seed_dependent() {
    let a = corpus::build_generated(7, 30).expect("builds");
    let b = corpus::build_generated(7, 30).expect("builds");
    let c = corpus::build_generated(8, 30).expect("builds");
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.number_of_tests, 30);
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
    let names = |v: &[(&str, &str)]| v.iter().map(|(n, _)| (*n).to_owned()).collect::<Vec<_>>();
    let disk_names: Vec<String> = on_disk.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(
        names(&embedded),
        disk_names,
        "vectors/lib.rs names other files than vectors/*.json: make its list of `embedded!` the \
         file names of vectors/*.json"
    );
    for ((name, text), (_, disk)) in embedded.iter().zip(&on_disk) {
        assert!(text == disk, "embedded {name} differs from vectors/{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Pinned tcIds

#[test]
fn every_published_tc_id_is_pinned_to_its_vector_and_no_promise_is_broken() {
    let files: Vec<VectorFile> = corpus_files_loaded().into_iter().map(|(_, f)| f).collect();
    let problems = pins::check(&files, &sources(), &ledger());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The committed corpus, its sources and its ledger, for mutation.
fn committed() -> (Vec<VectorFile>, Vec<Source>, Ledger) {
    let files = corpus_files_loaded().into_iter().map(|(_, f)| f).collect();
    (files, sources(), ledger())
}

fn assert_one_problem(problems: &[String], needles: &[&str]) {
    assert_eq!(problems.len(), 1, "{problems:#?}");
    for n in needles {
        assert!(problems[0].contains(n), "{:?} lacks {n:?}", problems[0]);
    }
}

#[test]
fn a_pinned_tc_id_whose_case_or_expectation_changes_is_refused_with_what_to_do() {
    let (mut files, sources, ledger) = committed();
    let f = files
        .iter_mut()
        .find(|f| f.topic == "policy")
        .expect("topic");
    let t = &mut f.test_groups[0].tests[0];
    let tc = t.tc_id;
    let Output::Policy(p) = &mut t.expected else {
        panic!("a policy answer")
    };
    p.policy.trigger_threshold += 1;
    let problems = pins::check(&files, &sources, &ledger);
    assert_one_problem(
        &problems,
        &[
            &format!("tcId {tc} [policy]"),
            "changed",
            "retire",
            "RETIRED.json",
            "unused tcId",
        ],
    );
    // The comment, the clauses and the flags are not pinned: they may be improved.
    let (mut files, sources, ledger) = committed();
    let t = &mut files[0].test_groups[0].tests[0];
    t.comment.push_str(" (reworded)");
    t.clauses.push("ENT-1".to_owned());
    assert!(pins::check(&files, &sources, &ledger).is_empty());
    // error.message is informative, never compared, never pinned.
    let (mut files, sources, ledger) = committed();
    let e = files
        .iter_mut()
        .flat_map(|f| f.test_groups.iter_mut().flat_map(|g| g.tests.iter_mut()))
        .find_map(|t| match &mut t.expected {
            Output::Error(e) => Some(&mut e.error),
            _ => None,
        })
        .expect("a typed error");
    e.message = "another wording".to_owned();
    assert!(pins::check(&files, &sources, &ledger).is_empty());
}

#[test]
fn a_published_tc_id_without_a_pin_and_a_pin_without_a_vector_are_refused() {
    let (files, sources, mut ledger) = committed();
    let tc = files[0].test_groups[0].tests[0].tc_id;
    let digest = ledger.pins.remove(&tc).expect("pinned");
    assert_one_problem(
        &pins::check(&files, &sources, &ledger),
        &[
            &format!("tcId {tc}"),
            "not pinned",
            "vectors generate --topic",
        ],
    );
    ledger.pins.insert(tc, digest);
    ledger.pins.insert(999_999, "0".repeat(64));
    assert_one_problem(
        &pins::check(&files, &sources, &ledger),
        &["tcId 999999", "names no published and no retired vector"],
    );
}

#[test]
fn a_retired_tc_id_is_never_used_again_and_retiring_keeps_the_corpus_valid() {
    // Retired while still published (in its vector file and its source): refused twice.
    let (files, sources, mut ledger) = committed();
    let tc = files[0].test_groups[0].tests[0].tc_id;
    ledger.retired.insert(tc, "SPEC change".to_owned());
    let problems = pins::check(&files, &sources, &ledger);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems
        .iter()
        .all(|p| p.contains(&format!("tcId {tc}")) && p.contains("retired")));
    assert!(
        problems.iter().any(|p| p.contains("vectors/source/")),
        "{problems:#?}"
    );
    // Retired properly: its test leaves the source and the vector file, its pin stays.
    let (mut files, mut sources, _) = committed();
    files[0].test_groups[0].tests.remove(0);
    files[0].number_of_tests -= 1;
    let source = sources
        .iter_mut()
        .find(|s| s.file.topic == files[0].topic)
        .expect("a source");
    source.file.test_groups[0].tests.remove(0);
    assert!(pins::check(&files, &sources, &ledger).is_empty());
}

#[test]
fn a_tc_id_used_twice_is_refused() {
    // Twice in the published files.
    let (mut files, sources, ledger) = committed();
    let tc = files[0].test_groups[0].tests[0].tc_id;
    files[1].test_groups[0].tests[0].tc_id = tc;
    let problems = pins::check(&files, &sources, &ledger);
    assert!(
        problems
            .iter()
            .any(|p| p.contains(&format!("tcId {tc}")) && p.contains("duplicates")),
        "{problems:#?}"
    );
    // Twice in the sources (two files).
    let (files, mut sources, ledger) = committed();
    let tc = sources[0].file.test_groups[0].tests[0].tc_id;
    sources[1].file.test_groups[0].tests[0].tc_id = tc;
    let problems = pins::check(&files, &sources, &ledger);
    assert!(
        problems
            .iter()
            .any(|p| p.contains(&format!("tcId {tc}")) && p.contains("already used")),
        "{problems:#?}"
    );
    // Twice in one source, and twice in the pin file: refused on reading.
    let text = std::fs::read_to_string(dir().join("source/policy.json")).expect("source");
    let policy = corpus::source::parse_source("policy.json", &text).expect("reads");
    let (a, b) = (
        policy.file.test_groups[0].tests[0].tc_id,
        policy.file.test_groups[0].tests[1].tc_id,
    );
    let twice = text.replacen(&format!("\"tcId\": {b}"), &format!("\"tcId\": {a}"), 1);
    let e = corpus::source::parse_source("policy.json", &twice).expect_err("refused");
    assert!(
        e.to_string().contains(&format!("tcId {a}")) && e.to_string().contains("already used"),
        "{e}"
    );
    let e = pins::parse_pins(
        "PINS.json",
        &format!("{{\"5\": \"{0}\", \"5\": \"{0}\"}}", "a".repeat(64)),
    )
    .expect_err("refused")
    .to_string();
    assert!(e.contains("PINS.json") && e.contains("5"), "{e}");
}

/// The acceptance test of pinned ids: a test inserted in the middle of a source (here: the
/// second test of the verify topic's first group) takes a new tcId, and every other vector keeps
/// its tcId, its case, its expected output and its pin.
#[test]
fn inserting_a_test_in_the_middle_of_a_source_renumbers_nothing() {
    let ledger = ledger();
    let sources = sources();
    let verify = sources
        .iter()
        .find(|s| s.file.topic == "verify")
        .expect("the verify source");
    let before = corpus::build_source(verify).expect("builds");
    let mut edited = verify.clone();
    let unused = (4001..5000)
        .find(|id| !ledger.pins.contains_key(id) && !ledger.retired.contains_key(id))
        .expect("an unused tcId in the verify range");
    let mut new_test = edited.file.test_groups[0].tests[0].clone();
    new_test.tc_id = unused;
    new_test.comment = "an inserted test".to_owned();
    new_test.case = serde_json::from_value(serde_json::json!({
        "op": "verify",
        "original": [{"id": "s", "kind": "SystemInstruction", "text": "rules"},
                     {"id": "u", "kind": "ConversationalMessage", "text": "last"}],
        "proposed": ["u"]
    }))
    .expect("a case");
    new_test.expect = serde_json::json!({"verification": {"outcome": "Rejected",
        "rejectionReasons": ["MissingRequiredEntry"], "missingRequiredEntryIds": ["s"]}});
    edited.file.test_groups[0].tests.insert(1, new_test);
    let after = corpus::build_source(&edited).expect("builds");

    let vectors = |f: &VectorFile| -> Vec<(TestVector, String)> {
        f.test_groups
            .iter()
            .flat_map(|g| {
                g.tests
                    .iter()
                    .map(|t| (t.clone(), pins::digest(t, g.policy.as_ref())))
            })
            .collect()
    };
    let (old, new) = (vectors(&before), vectors(&after));
    assert_eq!(new.len(), old.len() + 1);
    assert_eq!(new[1].0.tc_id, unused);
    let mut rest = new.clone();
    rest.remove(1);
    assert_eq!(rest, old, "a vector other than the inserted one changed");
    for (t, digest) in &rest {
        assert_eq!(
            ledger.status(t.tc_id, digest),
            PinStatus::Pinned,
            "tcId {}",
            t.tc_id
        );
    }
    assert_eq!(ledger.status(unused, &new[1].1), PinStatus::New);
    // The corpus with the new file breaks exactly one promise: the new tcId is not pinned yet
    // (`vectors generate --topic verify --out vectors/` pins it).
    let (mut files, mut all, _) = committed();
    *files
        .iter_mut()
        .find(|f| f.topic == "verify")
        .expect("topic") = after;
    *all.iter_mut()
        .find(|s| s.file.topic == "verify")
        .expect("source") = edited;
    assert_one_problem(
        &pins::check(&files, &all, &ledger),
        &[&format!("tcId {unused} [verify]"), "not pinned"],
    );
}

// ---------------------------------------------------------------------------------------------
// Sources: a bad one is named by file, tcId and JSON path, in plain words

fn source_error(text: &str) -> String {
    match corpus::source::parse_source("vectors/source/policy.json", text) {
        Err(e) => e.to_string(),
        Ok(s) => match corpus::build_source(&s) {
            Err(p) => p.join("\n"),
            Ok(_) => panic!("accepted: {text}"),
        },
    }
}

#[test]
fn a_bad_source_is_reported_by_file_tc_id_and_json_path_in_plain_words() {
    let text = std::fs::read_to_string(dir().join("source/policy.json")).expect("source");
    let v: Json = serde_json::from_str(&text).expect("JSON");
    let tc = v["testGroups"][0]["tests"][0]["tcId"]
        .as_u64()
        .expect("tcId");
    let edit = |f: &dyn Fn(&mut Json)| {
        let mut v = v.clone();
        f(&mut v);
        serde_json::to_string_pretty(&v).expect("JSON")
    };
    let first = "$.testGroups[0].tests[0]";
    let cases: Vec<(String, Vec<String>)> = vec![
        (
            edit(&|v| v["testGroups"][0]["tests"][0]["expekt"] = serde_json::json!({})),
            vec![
                format!("tcId {tc}"),
                format!("{first}.expekt"),
                "unknown".into(),
            ],
        ),
        (
            edit(&|v| {
                v["testGroups"][0]["tests"][0]["case"]["policy"]["hardLimit"] =
                    serde_json::json!("ten")
            }),
            vec![
                format!("tcId {tc}"),
                format!("{first}.case.policy.hardLimit"),
                "integer".into(),
            ],
        ),
        (
            edit(&|v| v["testGroups"][0]["tests"][0]["flags"] = serde_json::json!(["TypedError"])),
            vec![
                format!("tcId {tc}"),
                format!("{first}.flags[0]"),
                "added by generation".into(),
            ],
        ),
        (
            edit(&|v| v["testGroups"][0]["tests"][0]["flags"] = serde_json::json!(["Boundry"])),
            vec![
                format!("{first}.flags[0]"),
                "unknown flag".into(),
                "Boundary".into(),
            ],
        ),
        (
            edit(&|v| {
                v["testGroups"][0]["tests"][0]["expect"] =
                    serde_json::json!({"policy": {"triggerThreshold": -5}})
            }),
            vec![
                format!("tcId {tc}"),
                format!("{first}.expect.policy.triggerThreshold"),
                "hand-computed expectation is -5".into(),
            ],
        ),
        (
            edit(&|v| v["topic"] = serde_json::json!("generated")),
            vec!["$.topic".into(), "generator".into()],
        ),
        (
            edit(&|v| v["schema"] = serde_json::json!("v0")),
            vec![
                "$.schema".into(),
                "hybrid-compaction-vector-source/v1".into(),
            ],
        ),
        (
            text.replacen("\"tcId\"", "\"tcId\": 1, \"tcId\"", 1),
            vec![":".into(), "tcId".into()],
        ),
        (
            text.chars().take(text.chars().count() / 2).collect(),
            vec!["vectors/source/policy.json:".into(), "invalid JSON".into()],
        ),
    ];
    for (text, needles) in cases {
        let e = source_error(&text);
        assert!(e.starts_with("vectors/source/policy.json"), "{e}");
        for n in &needles {
            assert!(e.contains(n.as_str()), "{e:?} lacks {n:?}");
        }
        for rust in [
            "struct ",
            "enum ",
            "PolicyInput",
            "SourceTest",
            "u32",
            "i32",
            "panicked",
        ] {
            assert!(!e.contains(rust), "{e:?} names a Rust type ({rust})");
        }
    }
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
    let Output::Assemble(a) = &mut t.expected else {
        panic!("an assembly")
    };
    a.assembly.attempt_count += 1;
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
    use crate::corpus::comparable;
    use crate::{run_case_caught, RunError};
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
        let Ok(case) = serde_json::from_value::<crate::Case>(c.clone()) else {
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
