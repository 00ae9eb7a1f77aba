//! SPEC coverage: every normative clause id of `docs/SPEC.md` is the subject of a named test.
//!
//! Clause ids are the bold headings `**AREA-n — title.**` of the SPEC. A clause counts as covered
//! only by a **test function name** that carries its id in snake form: `asm_7_...` covers ASM-7,
//! `lse_9_lse_10_...` covers LSE-9 and LSE-10, `ent_5_1_...` covers ENT-5 (a sub-number is not a
//! clause). A test function is a `fn` under a `#[test]` attribute (plain or inside `proptest!`),
//! not `#[ignore]`d, in the Rust tests of the workspace (`tests/`, which holds the clause suite
//! run on both implementations, `model/tests/`, `oracle/tests/`). Comments and doc comments do
//! not count: citing a clause is not testing it.
//!
//! Deliberate departures (`DEP-n`) are decisions rather than behaviours, but each one that is
//! built must still be named by a test, and must name at least one normative clause in its
//! heading paragraph. Departures marked *roadmap* describe behaviour not built yet: they are
//! listed, not required.
//!
//! The vector corpus is counted separately (the `clauses` arrays of `vectors/*.json`): every
//! normative clause, and every departure that is built, must appear in at least one vector.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use crate::files::rust_sources;

/// Areas whose clauses are normative behaviour and must be named by a test.
const NORMATIVE_AREAS: &[&str] = &[
    "ENT", "SNAP", "POL", "EST", "EXC", "PRE", "VER", "ASM", "BRG", "CLS", "DIA", "ART", "ERR",
    "LSE", "NODE", "EVT", "TRN", "CMP", "CAP", "TRU", "ARF", "RHY", "OFF", "ATR", "CFG",
];

/// Every clause-id token (`AREA-n`, AREA uppercase ASCII) in `text`, as written.
fn clause_tokens(text: &str) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if starts_word && bytes[i].is_ascii_uppercase() {
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_uppercase() {
                j += 1;
            }
            if j < bytes.len() && bytes[j] == b'-' {
                let mut k = j + 1;
                while k < bytes.len() && bytes[k].is_ascii_digit() {
                    k += 1;
                }
                if k > j + 1 {
                    out.insert(text[i..k].to_owned());
                    i = k;
                    continue;
                }
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// Clause headings: `(id, the clause's first paragraph)`; the paragraph runs from the heading
/// line to the next blank line.
fn clause_headings(spec: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut open = false;
    for line in spec.lines() {
        let heading = line
            .strip_prefix("**")
            .and_then(|rest| rest.split_once(" — "))
            .map(|(id, _)| id)
            .filter(|id| clause_tokens(id).contains(*id));
        if let Some(id) = heading {
            out.push((id.to_owned(), line.to_owned()));
            open = true;
        } else if line.trim().is_empty() {
            open = false;
        } else if open {
            let last = out.last_mut().expect("open implies a heading");
            last.1.push('\n');
            last.1.push_str(line);
        }
    }
    out
}

fn area(id: &str) -> &str {
    id.split('-').next().unwrap_or("")
}

/// Names of the test functions of a Rust source: a `fn` whose attribute group (the attributes,
/// doc comments and comments right above it) holds `#[test]` and no `#[ignore]`.
fn test_fn_names(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    let (mut test, mut ignored) = (false, false);
    for line in source.lines() {
        let mut rest = line.trim();
        while rest.starts_with("#[") {
            let end = rest.find(']').map_or(rest.len(), |e| e + 1);
            let attr = &rest[..end];
            test |= attr == "#[test]";
            ignored |= attr.starts_with("#[ignore");
            rest = rest[end..].trim_start();
        }
        if rest.is_empty() || rest.starts_with("//") {
            continue;
        }
        if test && !ignored {
            let name = rest
                .split_once("fn ")
                .map(|(_, tail)| tail)
                .and_then(|tail| {
                    tail.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                });
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                names.push(name.to_owned());
            }
        }
        (test, ignored) = (false, false);
    }
    names
}

/// The clause ids a test function name carries: `area_n` pairs of snake tokens, `area` one of
/// `areas` (lowercase in the name).
fn name_clauses(name: &str, areas: &BTreeSet<String>) -> BTreeSet<String> {
    let tokens: Vec<&str> = name.split('_').collect();
    tokens
        .windows(2)
        .filter(|w| {
            areas.contains(&w[0].to_ascii_uppercase())
                && w[0].chars().all(|c| c.is_ascii_lowercase())
                && !w[1].is_empty()
                && w[1].chars().all(|c| c.is_ascii_digit())
        })
        .map(|w| format!("{}-{}", w[0].to_ascii_uppercase(), w[1]))
        .collect()
}

/// The clause ids named by the test functions of `sources`, given the SPEC's areas.
fn named_clauses(spec: &str, sources: &[String]) -> BTreeSet<String> {
    let areas: BTreeSet<String> = clause_headings(spec)
        .iter()
        .map(|(id, _)| area(id).to_owned())
        .collect();
    sources
        .iter()
        .flat_map(|s| test_fn_names(s))
        .flat_map(|n| name_clauses(&n, &areas))
        .collect()
}

fn is_roadmap(heading: &str) -> bool {
    area(heading.trim_start_matches('*')) == "DEP" && heading.contains("roadmap")
}

/// Normative clauses and built departures that no test function names, plus departures that
/// name no normative clause.
fn uncovered(spec: &str, named: &BTreeSet<String>) -> Vec<String> {
    let headings = clause_headings(spec);
    let normative: BTreeSet<&str> = headings
        .iter()
        .map(|(id, _)| id.as_str())
        .filter(|id| NORMATIVE_AREAS.contains(&area(id)))
        .collect();
    let mut problems = Vec::new();
    for id in &normative {
        if !named.contains(*id) {
            problems.push(format!("{id}: named by no test function"));
        }
    }
    for (id, paragraph) in headings.iter().filter(|(id, _)| area(id) == "DEP") {
        if is_roadmap(paragraph) {
            continue;
        }
        if !named.contains(id) {
            problems.push(format!("{id}: named by no test function"));
        }
        let names_clause = clause_tokens(paragraph)
            .iter()
            .any(|t| normative.contains(t.as_str()));
        if !names_clause {
            problems.push(format!("{id}: names no normative clause"));
        }
    }
    problems
}

/// Roadmap departures (behaviour not built; not required to be tested).
fn roadmap(spec: &str) -> Vec<String> {
    clause_headings(spec)
        .into_iter()
        .filter(|(_, paragraph)| is_roadmap(paragraph))
        .map(|(id, _)| id)
        .collect()
}

/// Clause ids cited by the `clauses` arrays of the vector files in `dir`.
fn vector_clauses(dir: &Path) -> BTreeSet<String> {
    let mut cited = BTreeSet::new();
    let read = fs::read_dir(dir).expect("vectors/ is readable");
    for path in read.flatten().map(|e| e.path()) {
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = fs::read_to_string(&path).expect("vector file is readable");
        let json: serde_json::Value = serde_json::from_str(&text).expect("vector file is JSON");
        let groups = json["testGroups"].as_array().expect("testGroups array");
        for test in groups
            .iter()
            .flat_map(|g| g["tests"].as_array().into_iter().flatten())
        {
            for clause in test["clauses"].as_array().into_iter().flatten() {
                cited.insert(clause.as_str().expect("clause id string").to_owned());
            }
        }
    }
    cited
}

/// Clauses (normative and departures) that no vector cites.
fn without_vectors(spec: &str, cited: &BTreeSet<String>) -> Vec<String> {
    clause_headings(spec)
        .into_iter()
        .map(|(id, _)| id)
        .filter(|id| NORMATIVE_AREAS.contains(&area(id)) || area(id) == "DEP")
        .filter(|id| !cited.contains(id))
        .collect()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn spec_text() -> String {
    fs::read_to_string(root().join("docs/SPEC.md")).expect("docs/SPEC.md is readable")
}

#[test]
fn every_spec_clause_is_named_by_a_test_function() {
    let spec = spec_text();
    let mut files = Vec::new();
    for dir in ["tests", "model/tests", "model/spec/tests", "oracle/tests"] {
        rust_sources(&root().join(dir), &mut files);
    }
    let this_file = root().join("tests/repository/spec_coverage.rs");
    let sources: Vec<String> = files
        .iter()
        .filter(|f| **f != this_file)
        .map(|f| fs::read_to_string(f).expect("test source is readable"))
        .collect();
    let headings = clause_headings(&spec);
    assert!(
        headings.len() >= 60,
        "SPEC has only {} clause headings",
        headings.len()
    );
    let problems = uncovered(&spec, &named_clauses(&spec, &sources));
    assert!(
        problems.is_empty(),
        "uncovered SPEC clauses:\n{}",
        problems.join("\n")
    );
    println!("roadmap departures, not required: {:?}", roadmap(&spec));
}

/// Clauses that must appear in a vector but no vector cites: every normative clause and every
/// departure that is built (roadmap departures describe behaviour not built yet).
fn required_without_vectors(spec: &str, cited: &BTreeSet<String>) -> Vec<String> {
    let later = roadmap(spec);
    without_vectors(spec, cited)
        .into_iter()
        .filter(|id| NORMATIVE_AREAS.contains(&area(id)) || area(id) == "DEP")
        .filter(|id| !later.contains(id))
        .collect()
}

#[test]
fn every_normative_clause_and_built_departure_appears_in_a_vector() {
    let spec = spec_text();
    let missing = required_without_vectors(&spec, &vector_clauses(&root().join("vectors")));
    assert!(
        missing.is_empty(),
        "clauses no vector cites (add a vector whose `clauses` names each): {missing:?}"
    );
}

#[test]
fn the_vector_rule_reports_a_normative_clause_without_a_vector() {
    let spec =
        "**ASM-1 — One.** x\n**LSE-2 — Two.** y\n**CMP-1 — Later.** z\n**DEP-1 — D.** *(ASM-1)*\n";
    let cited = BTreeSet::from(["ASM-1".to_owned()]);
    assert_eq!(
        required_without_vectors(spec, &cited),
        ["LSE-2", "CMP-1", "DEP-1"]
    );
}

const FIXTURE: &str = "**ASM-1 — One.** x\n**ASM-10 — Ten.** y\n\
    **DEP-1 — Choice.** *(follows C#; ASM-1)*\n\n**DEP-2 — Later.** *(follows C#; roadmap)*\n";

#[test]
fn the_checker_reports_a_clause_only_cited_in_comments() {
    // ASM-1 appears in a comment, a doc comment and a helper's name: none of these counts.
    let source = "// SPEC ASM-1\n/// SPEC ASM-1, DEP-1\n#[test]\nfn asm_10_ten() {}\n\
                  fn asm_1_helper() {}\n";
    let named = named_clauses(FIXTURE, &[source.to_owned()]);
    assert_eq!(named, BTreeSet::from(["ASM-10".to_owned()]));
    assert_eq!(
        uncovered(FIXTURE, &named),
        vec![
            "ASM-1: named by no test function".to_owned(),
            "DEP-1: named by no test function".to_owned()
        ]
    );
    // Named by test functions: covered; the roadmap departure DEP-2 is never required.
    let source = "#[test]\nfn asm_1_dep_1_one() {}\n#[test]\nfn asm_10_ten() {}\n";
    let named = named_clauses(FIXTURE, &[source.to_owned()]);
    assert!(uncovered(FIXTURE, &named).is_empty());
    assert_eq!(roadmap(FIXTURE), vec!["DEP-2".to_owned()]);
    // A built departure must still name a normative clause.
    let bad_dep = "**ASM-1 — One.** x\n**DEP-3 — Choice.** *(follows C#)*\n\nASM-1 later\n";
    let named = BTreeSet::from(["ASM-1".to_owned(), "DEP-3".to_owned()]);
    assert_eq!(
        uncovered(bad_dep, &named),
        vec!["DEP-3: names no normative clause".to_owned()]
    );
    let wrapped = "**ASM-1 — One.** x\n**DEP-3 — Choice.** *(follows\nC#; ASM-1)*\n";
    assert!(uncovered(wrapped, &named).is_empty());
}

#[test]
fn only_non_ignored_test_functions_are_names() {
    let source = "fn helper() {}\n#[test]\nfn a() {}\n#[test] fn b() {}\n\
                  /// doc\n#[test]\n/// more doc\n#[should_panic]\n    fn c(x in 0..1) {}\n\
                  #[test]\n#[ignore]\nfn d() {}\n#[ignore] #[test]\nfn e() {}\n\
                  #[test]\nlet x = 1;\nfn f() {}\n";
    assert_eq!(test_fn_names(source), ["a", "b", "c"]);
}

#[test]
fn names_carry_area_number_pairs() {
    let areas: BTreeSet<String> = ["ASM", "ENT", "LSE", "DEP"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let ids = |n: &str| name_clauses(n, &areas).into_iter().collect::<Vec<_>>();
    assert_eq!(ids("asm_7_budget"), ["ASM-7"]);
    assert_eq!(ids("asm_10_x"), ["ASM-10"], "not ASM-1");
    assert_eq!(
        ids("ent_5_1_tool_parts"),
        ["ENT-5"],
        "a sub-number is no clause"
    );
    assert_eq!(ids("lse_9_lse_10_both"), ["LSE-10", "LSE-9"]);
    assert_eq!(ids("asm_1_and_asm_2_orders"), ["ASM-1", "ASM-2"]);
    assert_eq!(ids("pre_4_x_dep_7"), ["DEP-7"], "PRE is not an area here");
    assert!(ids("xasm_1_y").is_empty() && ids("asm_errors").is_empty());
    assert!(ids("asm_").is_empty() && ids("ASM_1").is_empty());
}

#[test]
fn clause_tokens_are_whole_words() {
    let t = clause_tokens("see ASM-10, xASM-3 and (VER-2) and SHA-256 and ASM-");
    let expected: BTreeSet<String> = ["ASM-10", "VER-2", "SHA-256"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(t, expected);
}

#[test]
fn vector_clauses_come_from_the_clauses_arrays() {
    let spec = "**ASM-1 — One.** x\n**ASM-2 — Two.** y\n**DEP-1 — D.** *(ASM-1)*\n";
    let cited = BTreeSet::from(["ASM-2".to_owned()]);
    assert_eq!(without_vectors(spec, &cited), ["ASM-1", "DEP-1"]);
    // The shipped corpus cites clauses (the reader finds the arrays).
    assert!(vector_clauses(&root().join("vectors")).contains("ASM-7"));
}
