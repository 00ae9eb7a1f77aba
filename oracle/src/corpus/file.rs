//! Vector files (Wycheproof-style): the published shape, reading, and the embedded corpus.
//!
//! A vector file is one topic: a header (`schema`, `generatorVersion`, `topic`,
//! `numberOfTests`, `notes` explaining every flag) and `testGroups`, each with a description,
//! an optional shared `policy` (inherited by every case of the group that has none) and its
//! tests. A test has a stable integer `tcId` (unique across the corpus, pinned by
//! [`super::pins`]), a `comment`, `flags`, the SPEC clause ids it exercises (`clauses`), the
//! `case` and the `expected` output.
//!
//! The published files (`vectors/*.json`) are compiled into the `hybrid-compaction` binary with
//! the macro of the crate `hybrid-compaction-vectors` (`vectors/lib.rs`), which hands them to the
//! CLI; [`embedded_corpus`] reads them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ops::Case;
use crate::ops::Output;
pub(crate) use crate::wire::input::PolicyInput;

/// The `schema` value of every vector file of this format version.
pub(crate) const VECTOR_SCHEMA: &str = "hybrid-compaction-vectors/v1";

/// One vector file (one topic).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VectorFile {
    /// Always `hybrid-compaction-vectors/v1`.
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
        effective_case(&self.case, group_policy)
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
pub(crate) fn embedded_corpus(files: &[(&str, &str)]) -> Result<Vec<VectorFile>, LoadError> {
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

/// `case` with the group's policy filled in where the case's operation takes a policy and the
/// case has none (the harness rule of `docs/WIRE.md`).
pub fn effective_case(case: &Case, group_policy: Option<&PolicyInput>) -> Case {
    let mut case = case.clone();
    if let (Some(gp), Some(slot)) = (group_policy, case.policy_slot()) {
        if slot.is_none() {
            *slot = Some(gp.clone());
        }
    }
    case
}
