//! # The vector corpus: sources, generation, pinned tcIds, the published files
//!
//! The corpus is data a person edits, turned into Wycheproof-style vector files by running the
//! executable specification (the model):
//!
//! ```text
//!  vectors/source/<topic>.json --source--> tests with tcId, case, partial `expect`
//!  generated.rs (seeded, code)  ---------> tests with tcId 10001.., case          |
//!                                                                                  v
//!              run each effective case on the Model, check `expect` is a subset of its output,
//!              add the automatic flags, take the full output as `expected`
//!                                                                                  |
//!  vectors/<topic>.json  <--file-- VectorFile  --pins--> vectors/pins/PINS.json (tcId -> digest)
//!        |
//!        +--> hybrid_compaction_vectors::embedded!() in the binary --file::embedded_corpus--> CLI
//! ```
//!
//! * [`source`]: the hand-written topics, one JSON file each (`vectors/source/<topic>.json`):
//!   groups with a `description` and an optional `policy`; tests with a hand-written `tcId`,
//!   `comment`, `clauses`, the extra `flags`, the `case` and the hand-computed `expect`.
//! * [`generated`]: the one combinatorial topic, which stays code.
//! * [`build_source`] / [`build_generated`]: generation. It refuses (naming the file, the tcId and
//!   the JSON path) unless the model's output contains the hand-computed expectation (a JSON
//!   subset: every member written must be present with an equal value; arrays compare element
//!   by element with equal length). Nothing here writes files: the CLI's `vectors generate`
//!   decides where output goes.
//! * [`pins`]: a published tcId never changes meaning. `vectors/pins/PINS.json` holds, per tcId,
//!   the SHA-256 of the vector's effective case and expected output; a vector whose behaviour
//!   must change is retired (`vectors/pins/RETIRED.json`) and its successor takes a new tcId.
//! * [`file`](mod@file): the vector file types, reading, and the corpus embedded in the binary;
//!   [`run`]: running vectors on implementations and the per-topic table.
//!
//! Because tcIds are written in the sources, not counted, inserting a test anywhere renumbers
//! nothing, and adding one vector changes one source file, one vector file and one pin line.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use crate::ops::run_case_caught;
use crate::wire::strict;
use crate::Model;

pub(crate) mod file;
pub(crate) mod generated;
pub(crate) mod pins;
pub(crate) mod run;
pub(crate) mod source;
#[cfg(test)]
mod tests;

pub(crate) use file::{
    corpus_files, embedded_corpus, load_file, TestGroup, TestVector, VectorFile, VECTOR_SCHEMA,
};
pub(crate) use run::{comparable, first_difference, render_table, run_file};
pub(crate) use source::{load_sources, Source, SourceGroup};

/// The topic name (and file stem) of the generated vectors (built by [`generated`], with no
/// source file).
pub(crate) const GENERATED_TOPIC: &str = "generated";

/// Version string written into every file header.
pub(crate) const GENERATOR_VERSION: &str = "1.0.0";
/// Seed of the published generated topic.
pub(crate) const DEFAULT_SEED: u64 = 20_261_130;
/// Number of cases of the published generated topic.
pub(crate) const DEFAULT_COUNT: usize = 200;

/// The largest `--count` the command accepts: the generated topic is built in memory before it
/// is written, so the count is bounded (100000 cases is a few hundred MB at most).
pub(crate) const MAX_COUNT: usize = 100_000;

/// The corpus directory's folder of topic sources (`vectors/source/`).
pub(crate) const SOURCE_DIR: &str = "source";

/// Every flag a vector may carry, with its meaning (written into each file's `notes`).
pub(crate) const FLAGS: &[(&str, &str)] = &[
    ("HandWritten", "The case was written by hand for the cited clauses; its key expected fields were computed by hand from the SPEC and checked against the model at generation time."),
    ("Generated", "A seeded random case; the expected output comes from the model (reproduce with `hybrid-compaction vectors generate --topic generated`)."),
    ("TypedError", "The SPEC rejects the input: the expected output is a typed error (compare `kind`, `field`, `entryId`; `message` is informative)."),
    ("Success", "The assembly ends with a success outcome (WithinLimit, Reduced, PreservationFallback)."),
    ("Termination", "The assembly ends with a termination outcome (Irreducible, ConcurrentMutationLimit)."),
    ("WorkedExample", "One of the worked stage-list examples of SPEC ASM-14 (S44)."),
    ("Churn", "The snapshot schedule changes the version between captures (SPEC ASM-5, ASM-6, ASM-10)."),
    ("Cancellation", "The cancellation token is set at a named point (SPEC ASM-16)."),
    ("Boundary", "A value exactly at a limit (threshold, hard limit, 32-bit range, attempt budget)."),
    ("Deviation", "Behaviour where the reference implementation goes beyond or differs from the ADR text (docs/SPEC.md, deliberate departures DEP-n); we follow the implementation."),
    ("OrderChosen", "An output list whose order the reference implementation leaves open; this SPEC fixes it (by position, SPEC EXC-2): another implementation may compare that list as a set."),
    ("Bridge", "The reducer is an upstream (message-level) reducer behind the bridge (SPEC BRG-1 .. BRG-3)."),
    ("NumberRendering", "Exercises the .NET invariant-culture number rendering of the UTF-8 estimator (SPEC EST-2)."),
    ("Multibyte", "A payload with multibyte UTF-8 characters: sizes count UTF-8 bytes (or UTF-16 units where the SPEC says so), never characters (SPEC ATR-1, ARF-1)."),
    ("FailClosed", "Compaction fails closed: a typed status or error is decided before any node exists (SPEC CMP-4, TRU-1, CFG-2)."),
];

/// The flags generation adds by itself: `HandWritten` or `Generated` by origin, `TypedError`,
/// `Success` and `Termination` from the output. A source never writes them.
pub(crate) const AUTOMATIC_FLAGS: &[&str] = &[
    "HandWritten",
    "Generated",
    "TypedError",
    "Success",
    "Termination",
];

/// Where `expect` is not contained in `actual`: the JSON path (below `path`) and what differs.
pub(crate) fn subset_difference(expect: &Json, actual: &Json, path: &str) -> Option<String> {
    match (expect, actual) {
        (Json::Object(e), Json::Object(a)) => e.iter().find_map(|(k, ev)| {
            let at = format!("{path}{}", strict::key_segment(k));
            match a.get(k) {
                Some(av) => subset_difference(ev, av, &at),
                None => Some(format!(
                    "{at}: the hand-computed expectation is {}, the model's output has no such member",
                    short(ev)
                )),
            }
        }),
        (Json::Array(e), Json::Array(a)) if e.len() == a.len() => e
            .iter()
            .zip(a)
            .enumerate()
            .find_map(|(i, (x, y))| subset_difference(x, y, &format!("{path}[{i}]"))),
        _ if expect == actual => None,
        _ => Some(format!(
            "{path}: the hand-computed expectation is {}, the model answers {}",
            short(expect),
            short(actual)
        )),
    }
}

/// A JSON value in at most about 200 characters, for messages.
fn short(v: &Json) -> String {
    let s = v.to_string();
    match s.char_indices().nth(197) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

/// Builds the vector file of one hand-written topic, refusing on any problem (each message names
/// the source file, the tcId and the JSON path).
pub(crate) fn build_source(source: &Source) -> Result<VectorFile, Vec<String>> {
    build(
        &source.file.topic,
        &source.name,
        &source.file.test_groups,
        false,
    )
}

/// Builds the `generated` topic from `seed` and `count` (published: [`DEFAULT_SEED`],
/// [`DEFAULT_COUNT`]).
pub(crate) fn build_generated(seed: u64, count: usize) -> Result<VectorFile, Vec<String>> {
    let groups = generated::groups(seed, count)?;
    build(
        GENERATED_TOPIC,
        "generated (oracle/src/corpus/generated.rs)",
        &groups,
        true,
    )
}

/// Runs every test of `groups` on the model and assembles the vector file of `topic`.
fn build(
    topic: &str,
    name: &str,
    groups: &[SourceGroup],
    generated_topic: bool,
) -> Result<VectorFile, Vec<String>> {
    let mut problems = Vec::new();
    let mut out_groups = Vec::new();
    let mut used_flags = BTreeSet::new();
    for (g, group) in groups.iter().enumerate() {
        let mut tests = Vec::new();
        for (t, source) in group.tests.iter().enumerate() {
            let tc = source.tc_id;
            let at = format!("$.testGroups[{g}].tests[{t}]");
            let problem = |what: String| format!("{name}: tcId {tc}: {what}");
            let effective = file::effective_case(&source.case, group.policy.as_ref());
            if group.policy.is_some() {
                let case = serde_json::to_value(&effective).unwrap_or(Json::Null);
                if case.get("policy").is_none() {
                    problems.push(problem(format!(
                        "{at}.case: the {} operation takes no policy, so it cannot inherit its \
                         group's: move the test to a group without a policy",
                        case["op"].as_str().unwrap_or("case's")
                    )));
                    continue;
                }
            }
            let out = match run_case_caught(&effective, &Model) {
                Ok(o) => o,
                Err(e) => {
                    problems.push(problem(format!(
                        "{at}.case: the model does not answer the case: {e}"
                    )));
                    continue;
                }
            };
            let actual = serde_json::to_value(&out).unwrap_or(Json::Null);
            if let Some(d) = subset_difference(&source.expect, &actual, &format!("{at}.expect")) {
                problems.push(problem(d));
                continue;
            }
            let mut flags: Vec<String> = Vec::new();
            flags.push(
                if generated_topic {
                    "Generated"
                } else {
                    "HandWritten"
                }
                .to_owned(),
            );
            if out.as_error().is_some() {
                flags.push("TypedError".to_owned());
            }
            if let crate::ops::Output::Assemble(a) = &out {
                let a = &a.assembly;
                flags.push(
                    if a.final_entry_ids.is_some() {
                        "Success"
                    } else {
                        "Termination"
                    }
                    .to_owned(),
                );
            }
            for f in &source.flags {
                if !flags.contains(f) {
                    flags.push(f.clone());
                }
            }
            for f in &flags {
                if !FLAGS.iter().any(|(n, _)| n == f) {
                    problems.push(problem(format!("{at}.flags: undocumented flag {f}")));
                }
                used_flags.insert(f.clone());
            }
            tests.push(TestVector {
                tc_id: tc,
                comment: source.comment.clone(),
                flags,
                clauses: source.clauses.clone(),
                case: source.case.clone(),
                expected: out,
            });
        }
        out_groups.push(TestGroup {
            description: group.description.clone(),
            policy: group.policy.clone(),
            tests,
        });
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let notes: BTreeMap<String, String> = FLAGS
        .iter()
        .filter(|(n, _)| used_flags.contains(*n))
        .map(|(n, d)| ((*n).to_owned(), (*d).to_owned()))
        .collect();
    let number_of_tests = out_groups.iter().map(|g| g.tests.len()).sum();
    Ok(VectorFile {
        schema: VECTOR_SCHEMA.to_owned(),
        generator_version: GENERATOR_VERSION.to_owned(),
        topic: topic.to_owned(),
        number_of_tests,
        notes,
        test_groups: out_groups,
    })
}

/// Every topic name: the sources' and [`GENERATED_TOPIC`], in file-name order.
pub(crate) fn topic_names(sources: &[Source]) -> Vec<String> {
    let mut names: Vec<String> = sources.iter().map(|s| s.file.topic.clone()).collect();
    names.push(GENERATED_TOPIC.to_owned());
    names.sort_by_key(|n| format!("{n}.json"));
    names
}

/// Builds every topic (or only `only`) from `sources` and the generator, in file-name order,
/// refusing on any problem.
pub(crate) fn build_all(
    sources: &[Source],
    seed: u64,
    count: usize,
    only: Option<&str>,
) -> Result<Vec<VectorFile>, Vec<String>> {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for source in sources {
        if only.is_some_and(|o| o != source.file.topic) {
            continue;
        }
        match build_source(source) {
            Ok(f) => files.push(f),
            Err(p) => problems.extend(p),
        }
    }
    if only.is_none_or(|o| o == GENERATED_TOPIC) {
        match build_generated(seed, count) {
            Ok(f) => files.push(f),
            Err(p) => problems.extend(p),
        }
    }
    if problems.is_empty() {
        // File-name order, as the files are listed and run (`bridge-op.json` before `bridge.json`).
        files.sort_by_key(|f| format!("{}.json", f.topic));
        Ok(files)
    } else {
        Err(problems)
    }
}

/// Corpus-level consistency: tcIds unique across files, every flag explained in its file's
/// notes, no topic twice.
pub(crate) fn check_corpus(files: &[VectorFile]) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    let mut seen = BTreeMap::new();
    let mut topics = BTreeSet::new();
    for f in files {
        if !topics.insert(f.topic.clone()) {
            problems.push(format!("topic {} appears twice", f.topic));
        }
        for g in &f.test_groups {
            for t in &g.tests {
                if let Some(other) = seen.insert(t.tc_id, f.topic.clone()) {
                    problems.push(format!(
                        "tcId {} in {} duplicates one in {other}",
                        t.tc_id, f.topic
                    ));
                }
                for flag in &t.flags {
                    if !f.notes.contains_key(flag) {
                        problems.push(format!(
                            "tcId {}: flag {flag} not explained in notes",
                            t.tc_id
                        ));
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}
