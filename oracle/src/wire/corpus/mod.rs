//! The vector corpus generator.
//!
//! Two sources of vectors:
//!
//! * **Hand-written topics** (`hand_*.rs`): cases written per SPEC clause, each with a
//!   *partial expectation* computed by hand from the SPEC's clauses (outcome, stages, attempt
//!   count, sizes, ids, reasons, error kind...). Generation runs the model, and refuses to write
//!   anything if the model's output does not contain the hand-computed expectation (JSON subset
//!   match: every key of the expectation must be present with an equal value; arrays compare
//!   element-wise with equal length). The full model output then becomes `expected`.
//! * **Generated topic** ([`generated`]): seeded, reproducible random cases (a splitmix64
//!   stream, no external RNG), expectations from the model only.
//!
//! Nothing here writes files; the CLI's `vectors generate` decides where output goes, and a
//! changed expectation shows up as a reviewed diff of `vectors/*.json`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use super::input::PolicyInput;
use super::vectors::{TestGroup, TestVector, VectorFile, VECTOR_SCHEMA};
use crate::ops::{run_case_caught, Case};
use crate::Model;

pub mod dsl;
pub mod generated;
mod hand_adr_artifacts;
mod hand_adr_compose;
mod hand_assemble;
mod hand_basics;
mod hand_bridge;
mod hand_churn;
mod hand_diagnostics;
mod hand_errors;
mod hand_exchange;
mod hand_scenarios;
mod hand_tokens;
mod hand_transcripts;
mod hand_verify;

/// Version string written into every file header.
pub const GENERATOR_VERSION: &str = "1.0.0";
/// Seed of the committed generated topic.
pub const DEFAULT_SEED: u64 = 20_261_130;
/// Number of cases of the committed generated topic.
pub const DEFAULT_COUNT: usize = 200;

/// The largest `--count` the command accepts: the generated topic is built in memory before it
/// is written, so the count is bounded (100000 cases is a few hundred MB at most).
pub const MAX_COUNT: usize = 100_000;

/// Every flag a vector may carry, with its meaning (written into each file's `notes`).
pub const FLAGS: &[(&str, &str)] = &[
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
    ("Bridge", "The reducer is an upstream (message-level) reducer behind the bridge (SPEC BRG-1 .. BRG-3)."),
    ("NumberRendering", "Exercises the .NET invariant-culture number rendering of the UTF-8 estimator (SPEC EST-2)."),
    ("Multibyte", "A payload with multibyte UTF-8 characters: sizes count UTF-8 bytes (or UTF-16 units where the SPEC says so), never characters (SPEC ATR-1, ARF-1)."),
    ("FailClosed", "Compaction fails closed: a typed status or error is decided before any node exists (SPEC CMP-4, TRU-1, CFG-2)."),
];

/// One hand-written test.
#[derive(Debug, Clone)]
pub struct HandTest {
    /// What the test checks.
    pub comment: String,
    /// Extra flags (automatic ones are added by the builder).
    pub flags: Vec<&'static str>,
    /// SPEC clause ids exercised.
    pub clauses: Vec<&'static str>,
    /// The case (JSON).
    pub case: Json,
    /// The hand-computed partial expectation.
    pub expect: Json,
}

/// A group of hand-written tests.
#[derive(Debug, Clone)]
pub struct HandGroup {
    /// What the group exercises.
    pub description: String,
    /// Shared policy (JSON), inherited by cases without one.
    pub policy: Option<Json>,
    /// The tests.
    pub tests: Vec<HandTest>,
}

/// One topic = one vector file.
#[derive(Debug, Clone)]
pub struct Topic {
    /// File stem.
    pub name: &'static str,
    /// First tcId of the topic (tcIds are `base + index`).
    pub base: u32,
    /// The groups.
    pub groups: Vec<HandGroup>,
}

/// A hand-written test.
pub fn t(comment: &str, clauses: &[&'static str], case: Json, expect: Json) -> HandTest {
    HandTest {
        comment: comment.to_owned(),
        flags: Vec::new(),
        clauses: clauses.to_vec(),
        case,
        expect,
    }
}

impl HandTest {
    /// Adds flags.
    pub fn flags(mut self, flags: &[&'static str]) -> HandTest {
        self.flags.extend_from_slice(flags);
        self
    }
}

/// A group.
pub fn group(description: &str, policy: Option<Json>, tests: Vec<HandTest>) -> HandGroup {
    HandGroup {
        description: description.to_owned(),
        policy,
        tests,
    }
}

/// Every topic, in file order, with its tcId base.
pub fn topics(seed: u64, count: usize) -> Vec<Topic> {
    vec![
        Topic {
            name: "entries",
            base: 1000,
            groups: hand_basics::entries(),
        },
        Topic {
            name: "artifacts",
            base: 1500,
            groups: hand_basics::artifacts(),
        },
        Topic {
            name: "policy",
            base: 2000,
            groups: hand_basics::policy(),
        },
        Topic {
            name: "estimate",
            base: 2500,
            groups: hand_basics::estimate(),
        },
        Topic {
            name: "exchange",
            base: 3000,
            groups: hand_exchange::exchange(),
        },
        Topic {
            name: "preserve",
            base: 3500,
            groups: hand_exchange::preserve(),
        },
        Topic {
            name: "verify",
            base: 4000,
            groups: hand_verify::verify(),
        },
        Topic {
            name: "assemble-outcomes",
            base: 5000,
            groups: hand_assemble::outcomes(),
        },
        Topic {
            name: "assemble-churn",
            base: 6000,
            groups: hand_churn::churn(),
        },
        Topic {
            name: "assemble-errors",
            base: 7000,
            groups: hand_errors::errors(),
        },
        Topic {
            name: "bridge",
            base: 8000,
            groups: hand_bridge::bridge(),
        },
        Topic {
            name: "diagnostics",
            base: 8500,
            groups: hand_diagnostics::diagnostics(),
        },
        Topic {
            name: "tokens",
            base: 9000,
            groups: hand_tokens::tokens(),
        },
        Topic {
            name: "transcripts",
            base: 9500,
            groups: hand_transcripts::transcripts(),
        },
        Topic {
            name: "capability",
            base: 13000,
            groups: hand_adr_compose::capability(),
        },
        Topic {
            name: "composition",
            base: 13100,
            groups: hand_adr_compose::composition(),
        },
        Topic {
            name: "trust",
            base: 13200,
            groups: hand_adr_compose::trust(),
        },
        Topic {
            name: "configuration",
            base: 13300,
            groups: hand_adr_compose::configuration(),
        },
        Topic {
            name: "records",
            base: 13400,
            groups: hand_adr_artifacts::records(),
        },
        Topic {
            name: "rehydration",
            base: 13500,
            groups: hand_adr_artifacts::rehydration(),
        },
        Topic {
            name: "offload",
            base: 13600,
            groups: hand_adr_artifacts::offload_table(),
        },
        Topic {
            name: "diagnostics-records",
            base: 11000,
            groups: hand_scenarios::records(),
        },
        Topic {
            name: "bridge-op",
            base: 11200,
            groups: hand_scenarios::bridge_op(),
        },
        Topic {
            name: "leases",
            base: 11400,
            groups: hand_scenarios::leases(),
        },
        Topic {
            name: "node",
            base: 11700,
            groups: hand_scenarios::node(),
        },
        Topic {
            name: "generated",
            base: 10000,
            groups: generated::groups(seed, count),
        },
    ]
}

/// The topic names.
pub fn topic_names() -> Vec<&'static str> {
    vec![
        "entries",
        "artifacts",
        "policy",
        "estimate",
        "exchange",
        "preserve",
        "verify",
        "assemble-outcomes",
        "assemble-churn",
        "assemble-errors",
        "bridge",
        "diagnostics",
        "tokens",
        "transcripts",
        "capability",
        "composition",
        "trust",
        "configuration",
        "records",
        "rehydration",
        "offload",
        "diagnostics-records",
        "bridge-op",
        "leases",
        "node",
        "generated",
    ]
}

/// Whether `expect` is contained in `actual` (see the module docs).
pub fn subset(expect: &Json, actual: &Json) -> bool {
    match (expect, actual) {
        (Json::Object(e), Json::Object(a)) => e
            .iter()
            .all(|(k, ev)| a.get(k).is_some_and(|av| subset(ev, av))),
        (Json::Array(e), Json::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(x, y)| subset(x, y))
        }
        _ => expect == actual,
    }
}

fn build_topic(topic: &Topic, generated_topic: bool) -> Result<VectorFile, Vec<String>> {
    let mut problems = Vec::new();
    let mut groups = Vec::new();
    let mut tc = topic.base;
    let mut used_flags = BTreeSet::new();
    for g in &topic.groups {
        let policy: Option<PolicyInput> = match &g.policy {
            None => None,
            Some(p) => match serde_json::from_value(p.clone()) {
                Ok(p) => Some(p),
                Err(e) => {
                    problems.push(format!(
                        "{}: group {:?}: bad policy: {e}",
                        topic.name, g.description
                    ));
                    None
                }
            },
        };
        let mut tests = Vec::new();
        for h in &g.tests {
            tc += 1;
            let case: Case = match serde_json::from_value(h.case.clone()) {
                Ok(c) => c,
                Err(e) => {
                    problems.push(format!(
                        "tcId {tc} ({}): case does not parse: {e}",
                        h.comment
                    ));
                    continue;
                }
            };
            let mut vector = TestVector {
                tc_id: tc,
                comment: h.comment.clone(),
                flags: Vec::new(),
                clauses: h.clauses.iter().map(|c| (*c).to_owned()).collect(),
                case,
                expected: crate::ops::Output::error(crate::wire::error::answer(
                    hybrid_compaction_model::error::ErrorKind::InvalidOperation,
                    None,
                    None,
                    "not yet run",
                )),
            };
            let effective = vector.effective_case(policy.as_ref());
            let out = match run_case_caught(&effective, &Model) {
                Ok(o) => o,
                Err(e) => {
                    problems.push(format!("tcId {tc} ({}): {e}", h.comment));
                    continue;
                }
            };
            let actual = serde_json::to_value(&out).unwrap_or(Json::Null);
            if !subset(&h.expect, &actual) {
                problems.push(format!(
                    "tcId {tc} ({}): model output {} does not match the hand-computed expectation {}",
                    h.comment, actual, h.expect
                ));
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
            for f in &h.flags {
                if !flags.iter().any(|x| x == f) {
                    flags.push((*f).to_owned());
                }
            }
            for f in &flags {
                if !FLAGS.iter().any(|(n, _)| n == f) {
                    problems.push(format!("tcId {tc}: undocumented flag {f}"));
                }
                used_flags.insert(f.clone());
            }
            vector.flags = flags;
            vector.expected = out;
            tests.push(vector);
        }
        groups.push(TestGroup {
            description: g.description.clone(),
            policy,
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
    let number_of_tests = groups.iter().map(|g| g.tests.len()).sum();
    Ok(VectorFile {
        schema: VECTOR_SCHEMA.to_owned(),
        generator_version: GENERATOR_VERSION.to_owned(),
        topic: topic.name.to_owned(),
        number_of_tests,
        notes,
        test_groups: groups,
    })
}

/// Builds every topic (or only `only`), refusing on any problem.
pub fn build_all(
    seed: u64,
    count: usize,
    only: Option<&str>,
) -> Result<Vec<VectorFile>, Vec<String>> {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for topic in topics(seed, count) {
        if only.is_some_and(|o| o != topic.name) {
            continue;
        }
        match build_topic(&topic, topic.name == "generated") {
            Ok(f) => files.push(f),
            Err(p) => problems.extend(p),
        }
    }
    if problems.is_empty() {
        Ok(files)
    } else {
        Err(problems)
    }
}

/// Corpus-level consistency: tcIds unique across files, every flag explained in its file's
/// notes, the topic equal to nothing else's.
pub fn check_corpus(files: &[VectorFile]) -> Result<(), Vec<String>> {
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
