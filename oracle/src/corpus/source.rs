//! Topic sources: the JSON files a person edits (`vectors/source/<topic>.json`).
//!
//! A source reads like the vector file it becomes, minus what generation adds:
//!
//! ```json
//! {
//!   "schema": "hybrid-compaction-vector-source/v1",
//!   "topic": "verify",
//!   "testGroups": [
//!     {
//!       "description": "checks in order, result and reason order (SPEC VER-1, VER-3, VER-4)",
//!       "policy": {"hardLimit": 1000, "...": "..."},
//!       "tests": [
//!         {
//!           "tcId": 4001,
//!           "comment": "Verify(x, x) accepts a well-formed list",
//!           "clauses": ["VER-1", "VER-3", "VER-4", "ENT-7"],
//!           "flags": ["Boundary"],
//!           "case": {"op": "verify", "original": ["..."], "proposed": ["..."]},
//!           "expect": {"verification": {"outcome": "Accepted"}}
//!         }
//!       ]
//!     }
//!   ]
//! }
//! ```
//!
//! * `tcId` is written by hand and is the vector's identity for ever ([`super::pins`]); the
//!   order of tests in the file is the order of the vector file, and ids need not be sorted, so a
//!   test inserted in the middle of a group takes a new id and renumbers nothing.
//! * `flags` lists only the flags a person decides (`Boundary`, `Churn`, ...); `HandWritten`,
//!   `TypedError`, `Success` and `Termination` follow from the output and are added by
//!   generation, so writing one here is refused.
//! * `expect` is the hand-computed *partial* expectation: generation runs the model and refuses
//!   the source unless every member written here is in the model's output with an equal value
//!   ([`super::subset_difference`]); the full output becomes the vector's `expected`.
//! * A group's `policy` is inherited by each case without one, exactly as in the vector file, and
//!   every case of such a group must take it (so the harness rule of `docs/WIRE.md` and the
//!   oracle agree on every vector).
//!
//! Sources are read with the wire format's strict reader (repeated keys and unknown members
//! refused), and every problem is reported as `FILE:LINE:COLUMN: tcId N: $.json.path: what is
//! wrong`, in the format's words.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::file::PolicyInput;
use crate::ops::Case;
use crate::wire::strict;

/// The `schema` value of every source file of this format version.
pub(crate) const SOURCE_SCHEMA: &str = "hybrid-compaction-vector-source/v1";

/// One source file: the hand-written tests of one topic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SourceFile {
    /// Always [`SOURCE_SCHEMA`].
    pub schema: String,
    /// The topic: the file stem of the source and of the vector file it becomes.
    pub topic: String,
    /// The groups, in vector-file order.
    pub test_groups: Vec<SourceGroup>,
}

/// A group of source tests sharing a description and (optionally) a policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SourceGroup {
    /// What the group exercises.
    pub description: String,
    /// Policy inherited by every case of the group that has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// The tests, in vector-file order.
    pub tests: Vec<SourceTest>,
}

/// One source test: a vector before generation adds its automatic flags and full output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SourceTest {
    /// The vector's id: unique across the corpus, never reused (see [`super::pins`]).
    pub tc_id: u32,
    /// What the test checks.
    pub comment: String,
    /// SPEC clause ids exercised.
    pub clauses: Vec<String>,
    /// The flags written by hand (the automatic ones are added by generation).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// The case (without `policy` it inherits the group's).
    pub case: Case,
    /// The hand-computed partial expectation (a JSON subset of the model's output).
    pub expect: Json,
}

/// A source with the name it is reported under (its path, or a label for one held in memory).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Source {
    /// The file's path as given, for messages.
    pub name: String,
    /// The content.
    pub file: SourceFile,
}

/// What is wrong with a source file: where, and in plain words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceError {
    /// The file.
    pub name: String,
    /// 1-based line and column, when known.
    pub position: Option<(usize, usize)>,
    /// The tcId of the test the problem is in, when it is in one.
    pub tc_id: Option<u32>,
    /// JSON path of the offending value (`$` is the file), when there is one.
    pub path: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        if let Some((line, column)) = self.position {
            write!(f, ":{line}:{column}")?;
        }
        write!(f, ":")?;
        if let Some(tc) = self.tc_id {
            write!(f, " tcId {tc}:")?;
        }
        if let Some(path) = &self.path {
            write!(f, " {path}:")?;
        }
        write!(f, " {}", self.message)
    }
}

impl std::error::Error for SourceError {}

impl Source {
    /// An error about this source, at `path` (a JSON path) in the test `tc_id`.
    pub(crate) fn error(
        &self,
        tc_id: Option<u32>,
        path: Option<String>,
        message: String,
    ) -> SourceError {
        SourceError {
            name: self.name.clone(),
            position: None,
            tc_id,
            path,
            message,
        }
    }

    /// Every test with its group, in file order, and its JSON path.
    pub(crate) fn tests(&self) -> impl Iterator<Item = (&SourceGroup, &SourceTest, String)> {
        self.file
            .test_groups
            .iter()
            .enumerate()
            .flat_map(|(g, group)| {
                group
                    .tests
                    .iter()
                    .enumerate()
                    .map(move |(t, test)| (group, test, format!("$.testGroups[{g}].tests[{t}]")))
            })
    }
}

/// Reads the text of one source file named `name` (a path, or a label for one held in memory).
/// The problems found without running anything: the file's shape, its schema, tcIds repeated in
/// the file, flags that are unknown or automatic.
pub(crate) fn parse_source(name: &str, text: &str) -> Result<Source, SourceError> {
    let file: SourceFile = strict::read(text).map_err(|e| {
        // The tcId of the test the failure is in, from a plain reading of the same text.
        let tc_id = serde_json::from_str::<Json>(text)
            .ok()
            .and_then(|v| tc_id_at(&v, &e.path));
        SourceError {
            name: name.to_owned(),
            position: e.position,
            tc_id,
            path: (!e.syntax).then(|| e.path.clone()),
            message: if e.syntax {
                format!("invalid JSON: {}", e.message)
            } else {
                e.message.clone()
            },
        }
    })?;
    let source = Source {
        name: name.to_owned(),
        file,
    };
    if source.file.schema != SOURCE_SCHEMA {
        return Err(source.error(
            None,
            Some("$.schema".to_owned()),
            format!(
                "unknown source schema {:?}, expected {SOURCE_SCHEMA:?}",
                source.file.schema
            ),
        ));
    }
    if source.file.topic == super::GENERATED_TOPIC {
        return Err(source.error(
            None,
            Some("$.topic".to_owned()),
            format!(
                "the topic {:?} is built by the generator (oracle/src/corpus/generated.rs) and has no source",
                super::GENERATED_TOPIC
            ),
        ));
    }
    let mut seen: BTreeMap<u32, String> = BTreeMap::new();
    for (_, test, path) in source.tests() {
        if test.tc_id == 0 {
            return Err(source.error(
                None,
                Some(format!("{path}.tcId")),
                "a tcId is a positive integer".to_owned(),
            ));
        }
        if let Some(first) = seen.insert(test.tc_id, path.clone()) {
            return Err(source.error(
                Some(test.tc_id),
                Some(format!("{path}.tcId")),
                format!(
                    "the tcId is already used by {first} of this file: every test needs its own"
                ),
            ));
        }
        for (i, flag) in test.flags.iter().enumerate() {
            let at = Some(format!("{path}.flags[{i}]"));
            if super::AUTOMATIC_FLAGS.contains(&flag.as_str()) {
                return Err(source.error(
                    Some(test.tc_id),
                    at,
                    format!(
                        "the flag {flag} is added by generation from the expected output: remove it"
                    ),
                ));
            }
            if !super::FLAGS.iter().any(|(n, _)| n == flag) {
                let known: Vec<&str> = super::FLAGS
                    .iter()
                    .map(|(n, _)| *n)
                    .filter(|n| !super::AUTOMATIC_FLAGS.contains(n))
                    .collect();
                return Err(source.error(
                    Some(test.tc_id),
                    at,
                    format!(
                        "unknown flag {flag:?}, expected one of {}",
                        known.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(source)
}

/// The tcId of the test that `path` (`$.testGroups[g].tests[t]...`) points into, if any.
fn tc_id_at(file: &Json, path: &str) -> Option<u32> {
    let rest = path.strip_prefix("$.testGroups[")?;
    let (g, rest) = rest.split_once(']')?;
    let rest = rest.strip_prefix(".tests[")?;
    let (t, _) = rest.split_once(']')?;
    let test = &file["testGroups"][g.parse::<usize>().ok()?]["tests"][t.parse::<usize>().ok()?];
    u32::try_from(test["tcId"].as_u64()?).ok()
}

/// Reads one source file; its topic must be its file stem.
pub(crate) fn load_source(path: &Path) -> Result<Source, SourceError> {
    let name = path.display().to_string();
    let err = |message: String| SourceError {
        name: name.clone(),
        position: None,
        tc_id: None,
        path: None,
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| err(format!("cannot read: {e}")))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| err(format!("invalid UTF-8 at byte offset {}", e.valid_up_to())))?;
    let source = parse_source(&name, text)?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    if stem.as_deref() != Some(source.file.topic.as_str()) {
        return Err(source.error(
            None,
            Some("$.topic".to_owned()),
            format!(
                "the topic is {:?} but the file is named {}: name the file after its topic",
                source.file.topic,
                path.file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default()
            ),
        ));
    }
    Ok(source)
}

/// The `*.json` files of a source directory, sorted by name.
pub(crate) fn source_files(dir: &Path) -> Result<Vec<PathBuf>, SourceError> {
    let rd = std::fs::read_dir(dir).map_err(|e| SourceError {
        name: dir.display().to_string(),
        position: None,
        tc_id: None,
        path: None,
        message: format!("cannot read the source directory: {e}"),
    })?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    Ok(files)
}

/// Every source of a directory, sorted by file name; then the tcIds repeated between files.
pub(crate) fn load_sources(dir: &Path) -> Result<Vec<Source>, Vec<SourceError>> {
    let files = source_files(dir).map_err(|e| vec![e])?;
    let mut sources = Vec::new();
    let mut problems = Vec::new();
    for path in &files {
        match load_source(path) {
            Ok(s) => sources.push(s),
            Err(e) => problems.push(e),
        }
    }
    problems.extend(repeated_tc_ids(&sources));
    if problems.is_empty() {
        Ok(sources)
    } else {
        Err(problems)
    }
}

/// A tcId written in two source files.
pub(crate) fn repeated_tc_ids(sources: &[Source]) -> Vec<SourceError> {
    let mut first: BTreeMap<u32, &str> = BTreeMap::new();
    let mut problems = Vec::new();
    for source in sources {
        for (_, test, path) in source.tests() {
            match first.get(&test.tc_id) {
                Some(other) if *other != source.name => problems.push(source.error(
                    Some(test.tc_id),
                    Some(format!("{path}.tcId")),
                    format!("the tcId is already used in {other}: every test needs its own"),
                )),
                _ => {
                    first.insert(test.tc_id, &source.name);
                }
            }
        }
    }
    problems
}
