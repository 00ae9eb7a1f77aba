//! Vector files (Wycheproof-style) and the corpus runner.
//!
//! A vector file is one topic: a header (`schema`, `generatorVersion`, `topic`,
//! `numberOfTests`, `notes` explaining every flag) and `testGroups`, each with a description,
//! an optional shared `policy` (inherited by every case of the group that has none) and its
//! tests. A test has a stable integer `tcId` (unique across the corpus), a `comment`, `flags`,
//! the SPEC clause ids it exercises (`clauses`), the `case` and the `expected` output.
//!
//! Comparison is structural JSON equality of the rendered [`Output`], ignoring only
//! `error.message` (informative text, free to differ between implementations).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::case::{Case, PolicyInput};
use super::exec::{run_case_caught, Implementation, RunError};
use super::output::Output;

/// The `schema` value of every vector file of this format version.
pub const VECTOR_SCHEMA: &str = "hybrid-compaction-vectors/v1";

/// One vector file (one topic).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VectorFile {
    /// Always [`VECTOR_SCHEMA`].
    pub schema: String,
    /// Version of the generator that wrote the file.
    pub generator_version: String,
    /// The topic (the file stem).
    pub topic: String,
    /// Number of tests in the file.
    pub number_of_tests: usize,
    /// Flag name -> what the flag means. Every flag used in the file is explained here.
    pub notes: BTreeMap<String, String>,
    /// The groups.
    pub test_groups: Vec<TestGroup>,
}

/// A group of tests sharing a description and (optionally) a policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestGroup {
    /// What the group exercises.
    pub description: String,
    /// Policy inherited by every case without its own `policy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// The tests.
    pub tests: Vec<TestVector>,
}

/// One test vector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestVector {
    /// Stable id, unique across the corpus.
    pub tc_id: u32,
    /// What the test checks.
    pub comment: String,
    /// Flags (explained in the file's `notes`).
    pub flags: Vec<String>,
    /// SPEC clause ids exercised.
    pub clauses: Vec<String>,
    /// The case (without `policy` it inherits the group's).
    pub case: Case,
    /// The expected output.
    pub expected: Output,
}

impl TestVector {
    /// The case with the group's policy filled in where the case has none.
    pub fn effective_case(&self, group_policy: Option<&PolicyInput>) -> Case {
        let mut case = self.case.clone();
        if let Some(gp) = group_policy {
            let slot = match &mut case {
                Case::Assemble(c) => Some(&mut c.policy),
                Case::Verify(c) => Some(&mut c.policy),
                Case::Select(c) => Some(&mut c.policy),
                Case::Evaluate(c) => Some(&mut c.policy),
                Case::Policy(c) => Some(&mut c.policy),
                Case::Node(c) => Some(&mut c.policy),
                _ => None,
            };
            if let Some(slot) = slot {
                if slot.is_none() {
                    *slot = Some(gp.clone());
                }
            }
        }
        case
    }
}

/// A vector file that could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct LoadError {
    /// The file.
    pub path: String,
    /// What went wrong (with line and column for JSON errors).
    pub message: String,
}

/// Loads one vector file.
pub fn load_file(path: &Path) -> Result<VectorFile, LoadError> {
    let err = |message: String| LoadError {
        path: path.display().to_string(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| err(format!("cannot read: {e}")))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| err(format!("invalid UTF-8 at byte offset {}", e.valid_up_to())))?;
    parse_file(&path.display().to_string(), text)
}

/// Parses the text of one vector file named `name` (a path, or an embedded file's name) and
/// checks its header.
pub fn parse_file(name: &str, text: &str) -> Result<VectorFile, LoadError> {
    let err = |message: String| LoadError {
        path: name.to_owned(),
        message,
    };
    let file: VectorFile = serde_json::from_str(text).map_err(|e| err(e.to_string()))?;
    if file.schema != VECTOR_SCHEMA {
        return Err(err(format!(
            "unknown schema {:?}, expected {VECTOR_SCHEMA:?}",
            file.schema
        )));
    }
    let n: usize = file.test_groups.iter().map(|g| g.tests.len()).sum();
    if n != file.number_of_tests {
        return Err(err(format!(
            "numberOfTests is {} but the file has {n} tests",
            file.number_of_tests
        )));
    }
    Ok(file)
}

/// Reads an embedded corpus: `(file name, text)` pairs, as `hybrid_compaction_vectors::embedded!()`
/// gives them (`vectors/*.json` when the binary was built). `hybrid-compaction vectors` without a
/// directory runs it, so the command works from any directory and a copied binary carries its
/// corpus.
pub fn embedded_corpus(files: &[(&str, &str)]) -> Result<Vec<VectorFile>, LoadError> {
    files
        .iter()
        .map(|(name, text)| parse_file(&format!("embedded {name}"), text))
        .collect()
}

/// The `*.json` files of a directory, sorted by name.
pub fn corpus_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let rd = std::fs::read_dir(dir).map_err(|e| LoadError {
        path: dir.display().to_string(),
        message: format!("cannot read directory: {e}"),
    })?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    Ok(files)
}

/// The output as compared: JSON with `error.message` removed.
pub fn comparable(out: &Output) -> Json {
    let mut v = serde_json::to_value(out).unwrap_or(Json::Null);
    if let Some(Json::Object(e)) = v.get_mut("error") {
        e.remove("message");
    }
    v
}

/// The first difference between `expected` and `actual`, as `path: expected X, got Y`.
pub fn first_difference(expected: &Json, actual: &Json) -> Option<String> {
    fn short(v: &Json) -> String {
        let s = v.to_string();
        if s.len() > 120 {
            format!(
                "{}...",
                &s[..s.char_indices().nth(117).map_or(s.len(), |(i, _)| i)]
            )
        } else {
            s
        }
    }
    fn walk(path: &str, e: &Json, a: &Json) -> Option<String> {
        match (e, a) {
            (Json::Object(eo), Json::Object(ao)) => {
                for (k, ev) in eo {
                    match ao.get(k) {
                        Some(av) => {
                            if let Some(d) = walk(&format!("{path}.{k}"), ev, av) {
                                return Some(d);
                            }
                        }
                        None => {
                            return Some(format!("{path}.{k}: expected {}, got nothing", short(ev)))
                        }
                    }
                }
                for (k, av) in ao {
                    if !eo.contains_key(k) {
                        return Some(format!("{path}.{k}: expected nothing, got {}", short(av)));
                    }
                }
                None
            }
            (Json::Array(ea), Json::Array(aa)) if ea.len() == aa.len() => ea
                .iter()
                .zip(aa)
                .enumerate()
                .find_map(|(i, (x, y))| walk(&format!("{path}[{i}]"), x, y)),
            _ if e == a => None,
            _ => Some(format!("{path}: expected {}, got {}", short(e), short(a))),
        }
    }
    walk("$", expected, actual)
}

/// The verdict of one vector on one implementation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Output equal to the expectation.
    Pass,
    /// Output differs: a one-line diff.
    Fail(String),
}

/// Runs one vector on one implementation.
pub fn check(
    test: &TestVector,
    group_policy: Option<&PolicyInput>,
    imp: &dyn Implementation,
) -> Verdict {
    let case = test.effective_case(group_policy);
    match run_case_caught(&case, imp) {
        Ok(out) => {
            let (e, a) = (comparable(&test.expected), comparable(&out));
            match first_difference(&e, &a) {
                None => Verdict::Pass,
                Some(d) => Verdict::Fail(d),
            }
        }
        Err(RunError::Wire(w)) => Verdict::Fail(format!("case rejected as invalid input: {w}")),
        Err(e @ RunError::Panic { .. }) => Verdict::Fail(e.to_string()),
    }
}

/// Per-topic, per-implementation counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicReport {
    /// The topic.
    pub topic: String,
    /// Number of vectors.
    pub total: usize,
    /// Passed count per implementation, in the order run.
    pub passed: Vec<usize>,
    /// Failures: (implementation, tcId, one-line diff).
    pub failures: Vec<(&'static str, u32, String)>,
}

/// Runs every vector of `file` on every implementation of `imps`.
pub fn run_file(file: &VectorFile, imps: &[&dyn Implementation]) -> TopicReport {
    let mut report = TopicReport {
        topic: file.topic.clone(),
        total: 0,
        passed: vec![0; imps.len()],
        failures: Vec::new(),
    };
    for group in &file.test_groups {
        for test in &group.tests {
            report.total += 1;
            for (i, imp) in imps.iter().enumerate() {
                match check(test, group.policy.as_ref(), *imp) {
                    Verdict::Pass => report.passed[i] += 1,
                    Verdict::Fail(d) => report.failures.push((imp.name(), test.tc_id, d)),
                }
            }
        }
    }
    report
}

/// Renders the summary table (one row per topic, `passed/failed` per implementation).
pub fn render_table(reports: &[TopicReport], imps: &[&dyn Implementation]) -> String {
    let mut s = String::new();
    let _ = write!(s, "{:<20} {:>6}", "topic", "total");
    for imp in imps {
        let _ = write!(s, " {:>8} {:>8}", format!("{} ok", imp.name()), "failed");
    }
    s.push('\n');
    let mut total = 0;
    let mut passed = vec![0; imps.len()];
    for r in reports {
        let _ = write!(s, "{:<20} {:>6}", r.topic, r.total);
        for (i, p) in r.passed.iter().enumerate() {
            let _ = write!(s, " {:>8} {:>8}", p, r.total - p);
            passed[i] += p;
        }
        total += r.total;
        s.push('\n');
    }
    let _ = write!(s, "{:<20} {:>6}", "TOTAL", total);
    for p in &passed {
        let _ = write!(s, " {:>8} {:>8}", p, total - p);
    }
    s.push('\n');
    s
}
