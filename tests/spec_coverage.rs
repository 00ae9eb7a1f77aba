//! SPEC coverage: every normative clause id of `docs/SPEC.md` is cited by at least one test.
//!
//! Clause ids are the bold headings `**AREA-n — title.**` of the SPEC. A clause counts as covered
//! when its id appears (as a whole token: `ASM-1` does not match inside `ASM-10`) in a Rust test
//! source under `tests/` or `model/tests/`. Deliberate departures (`DEP-n`) are decisions rather
//! than behaviours: each non-roadmap departure must instead name at least one existing normative
//! clause, through which it is tested.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

#[path = "support/files.rs"]
mod files;
use files::rust_sources;

/// Areas whose clauses are normative behaviour and must be cited by a test.
const NORMATIVE_AREAS: &[&str] = &[
    "ENT", "SNAP", "POL", "EST", "EXC", "PRE", "VER", "ASM", "BRG", "CLS", "DIA", "ART", "ERR",
    "LSE", "NODE", "EVT", "TRN",
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

/// Normative clause ids cited by no test source, plus departure problems.
fn uncovered(spec: &str, test_sources: &str) -> Vec<String> {
    let headings = clause_headings(spec);
    let cited = clause_tokens(test_sources);
    let normative: BTreeSet<&str> = headings
        .iter()
        .map(|(id, _)| id.as_str())
        .filter(|id| NORMATIVE_AREAS.contains(&area(id)))
        .collect();
    let mut problems = Vec::new();
    for id in &normative {
        if !cited.contains(*id) {
            problems.push(format!("{id}: cited by no test"));
        }
    }
    for (id, line) in &headings {
        if area(id) == "DEP" && !line.contains("roadmap") {
            let names_clause = clause_tokens(line)
                .iter()
                .any(|t| normative.contains(t.as_str()));
            if !names_clause {
                problems.push(format!("{id}: names no normative clause"));
            }
        }
    }
    problems
}

#[test]
fn every_spec_clause_is_cited_by_a_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = fs::read_to_string(root.join("docs/SPEC.md")).expect("docs/SPEC.md is readable");
    let mut files = Vec::new();
    rust_sources(&root.join("tests"), &mut files);
    rust_sources(&root.join("model/spec/tests"), &mut files);
    rust_sources(&root.join("oracle/tests"), &mut files);
    let this_file = root.join("tests/spec_coverage.rs");
    let mut sources = String::new();
    for f in files.iter().filter(|f| **f != this_file) {
        sources.push_str(&fs::read_to_string(f).expect("test source is readable"));
        sources.push('\n');
    }
    let headings = clause_headings(&spec);
    assert!(
        headings.len() >= 60,
        "SPEC has only {} clause headings",
        headings.len()
    );
    let problems = uncovered(&spec, &sources);
    assert!(
        problems.is_empty(),
        "uncovered SPEC clauses:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_reports_an_uncited_clause() {
    let spec =
        "**ASM-1 — One.** x\n**ASM-10 — Ten.** y\n**DEP-1 — Choice.** *(follows C#; ASM-1)*\n";
    // ASM-10 cited, ASM-1 only as a prefix of ASM-10: must be reported.
    assert_eq!(
        uncovered(spec, "// SPEC ASM-10"),
        vec!["ASM-1: cited by no test".to_owned()]
    );
    assert!(uncovered(spec, "// SPEC ASM-1, ASM-10").is_empty());
    let bad_dep = "**ASM-1 — One.** x\n**DEP-2 — Choice.** *(follows C#)*\n\nASM-1 later\n";
    assert_eq!(
        uncovered(bad_dep, "ASM-1"),
        vec!["DEP-2: names no normative clause".to_owned()]
    );
    let wrapped = "**ASM-1 — One.** x\n**DEP-3 — Choice.** *(follows\nC#; ASM-1)*\n";
    assert!(uncovered(wrapped, "ASM-1").is_empty());
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
