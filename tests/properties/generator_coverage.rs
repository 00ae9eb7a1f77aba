//! Generator coverage: the engine-vs-model properties can only find a difference on paths their
//! generators reach, so this test *enforces* that the shared generators (`support/cases.rs`,
//! `support/gen.rs`) reach every path that matters, each in at least [`FLOOR`] (2%) of the
//! inputs the properties draw at their default case counts (`assemble_matches_model`: 384,
//! `verify_matches_model`: 256; `PROPTEST_CASES` scales both). The share is measured on
//! [`SAMPLE`] times that many inputs, so that it describes the generator rather than one draw.
//!
//! Inputs are drawn with proptest's deterministic runner (the same strategies the properties
//! use, a fixed seed; `GEN_COVERAGE_SEED=n` draws another fixed sample) and run through the
//! executable specification only; each input is classified by what the model did:
//!
//! * assembly: its outcome (ASM-1) or error variant (ERR-1); every check site of ASM-10 it passed
//!   through, with the verdict of the version check there (ASM-5: stable, restarted, churn),
//!   recovered from the stage list, the provider's schedule and the reducer's trace (see
//!   [`trace_sites`]); and the thin paths: success by eviction alone (ASM-8), `Irreducible`
//!   below the trigger (ASM-12 a), an overflowing size met on a snapshot adopted after the first
//!   capture (POL-3), a recovered body durable only through a later digest of an entry that
//!   carries several (PRE-2);
//! * verification: acceptance, every rejection reason (VER-3), the duplicate-id argument
//!   error, which must stay a small share (it ends an input before any check runs), and an
//!   original with a body durable only through a later digest (PRE-2).
//!
//! A failure prints the whole distribution, so a generator change that starves a path is seen
//! with the numbers needed to rebalance it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use crate::cases::*;
use crate::gen::*;
use hybrid_compaction_model::assembly::{
    AssemblyError, AssemblyResult, Outcome, ReducerError, Stage,
};
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::integration::durable_digests;
use hybrid_compaction_model::message::{BlockKind, Part};
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::seam::Implementation;
use hybrid_compaction_model::snapshot::SnapshotError;
use hybrid_compaction_model::verification::RejectionReason;
use hybrid_compaction_spec::Model;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

/// The minimum share of inputs that must reach each path.
const FLOOR: f64 = 0.02;

/// The sample is this many times the property's default case count: shares are measured on
/// the generator, not on the luck of one draw of 384 (at a 3% share one such draw has a
/// standard deviation near 0.9 points; twice the sample brings it near 0.6).
const SAMPLE: u32 = 2;

/// How many inputs carried each label.
#[derive(Debug, Default)]
struct Tally {
    inputs: usize,
    counts: BTreeMap<String, usize>,
}

impl Tally {
    fn add(&mut self, labels: BTreeSet<String>) {
        self.inputs += 1;
        for l in labels {
            *self.counts.entry(l).or_default() += 1;
        }
    }

    fn share(&self, label: &str) -> f64 {
        self.counts.get(label).copied().unwrap_or(0) as f64 / self.inputs.max(1) as f64
    }

    fn report(&self) -> String {
        let mut out = format!("{} inputs\n", self.inputs);
        for (label, n) in &self.counts {
            out += &format!(
                "{n:6} {:5.1}%  {label}\n",
                100.0 * *n as f64 / self.inputs as f64
            );
        }
        out
    }

    /// Panics naming every label below the floor, with the whole distribution.
    fn assert_floors(&self, labels: &[String]) {
        let starved: Vec<String> = labels
            .iter()
            .filter(|l| self.share(l) < FLOOR)
            .map(|l| format!("{l} ({:.1}%)", 100.0 * self.share(l)))
            .collect();
        assert!(
            starved.is_empty(),
            "below the {:.0}% floor: {starved:?}\n{}",
            100.0 * FLOOR,
            self.report()
        );
    }
}

/// A check site of SPEC ASM-10.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Site {
    BelowTrigger,
    MarginRestoredEviction,
    PostReducerRecheck,
    PreserveCurrent,
    ReducedProposal,
    Fallback,
}

const SITES: [Site; 6] = [
    Site::BelowTrigger,
    Site::MarginRestoredEviction,
    Site::PostReducerRecheck,
    Site::PreserveCurrent,
    Site::ReducedProposal,
    Site::Fallback,
];

/// The verdict of the version check at a site (SPEC ASM-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Stable,
    Restarted,
    Churn,
}

/// Where the stage walk of [`trace_sites`] stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// At the top of a pass of the outer loop (after the first capture or a restart).
    PassStart,
    Evicted,
    ReducerCalled,
    /// After a post-reducer recheck that found the version stable.
    CheckedAfterReducer,
    Done,
}

/// The check sites (SPEC ASM-10) of a model run and their verdicts, in order, recovered from the
/// outside: each capture after the first is one `SnapshotCaptured` stage; what precedes it names
/// the site (inside the fallback: the fallback site; right after a pass starts: below the
/// trigger; after `RecoverableBodyEviction`: the margin-restored eviction; after
/// `ReducerAttempt`: the post-reducer recheck; after a stable recheck: the reduced-proposal site
/// if the proposal was accepted and strictly smaller than the working list, else
/// preserve-current, ASM-7). The verdict compares the captured version (the provider's
/// schedule) with the latest consumed one; a restart is followed by `RestartedAfterMutation`.
fn trace_sites(
    schedule: &[(i64, Vec<Entry>)],
    policy: &Policy,
    result: &AssemblyResult,
    trace: &[(Vec<Entry>, Option<Vec<Entry>>)],
) -> Vec<(Site, Verdict)> {
    let snap = |c: usize| &schedule[c.min(schedule.len() - 1)];
    let (mut latest, mut cur) = (snap(0).0, snap(0).1.clone());
    let (mut capture, mut calls, mut in_fallback) = (0usize, 0usize, false);
    let mut walk = Walk::PassStart;
    let mut out = Vec::new();
    let stages = &result.stages;
    let mut i = 1;
    while i < stages.len() {
        match stages[i] {
            Stage::RecoverableBodyEviction => walk = Walk::Evicted,
            Stage::ReducerAttempt => {
                calls += 1;
                walk = Walk::ReducerCalled;
            }
            Stage::DeterministicFallback => in_fallback = true,
            Stage::RestartedAfterMutation => panic!("restart without a capture: {stages:?}"),
            Stage::SnapshotCaptured => {
                capture += 1;
                let (version, entries) = snap(capture);
                let site = match walk {
                    _ if in_fallback => Site::Fallback,
                    Walk::PassStart => Site::BelowTrigger,
                    Walk::Evicted => Site::MarginRestoredEviction,
                    Walk::ReducerCalled => Site::PostReducerRecheck,
                    Walk::CheckedAfterReducer => {
                        let (work, proposal) = &trace[calls - 1];
                        let proposal = proposal.as_ref().expect("a proposal was returned");
                        let size = |l: &[Entry]| Model.size(l, policy.estimator()).ok();
                        let accepted = Model
                            .verify(&cur, proposal, policy)
                            .is_ok_and(|v| v.is_accepted());
                        if accepted && size(proposal) < size(work) {
                            Site::ReducedProposal
                        } else {
                            Site::PreserveCurrent
                        }
                    }
                    Walk::Done => panic!("capture after a finalization: {stages:?}"),
                };
                let restarted = stages.get(i + 1) == Some(&Stage::RestartedAfterMutation);
                let verdict = if *version == latest {
                    Verdict::Stable
                } else if restarted {
                    Verdict::Restarted
                } else {
                    Verdict::Churn
                };
                out.push((site, verdict));
                walk = match (site, verdict) {
                    (_, Verdict::Restarted) => {
                        i += 1;
                        latest = *version;
                        cur = entries.clone();
                        Walk::PassStart
                    }
                    (Site::PostReducerRecheck, Verdict::Stable) => Walk::CheckedAfterReducer,
                    _ => Walk::Done,
                };
            }
        }
        i += 1;
    }
    // Self-check of the tracer: churn only as the last capture of a churn termination; a
    // success ends on a stable capture.
    let last = out.last().map(|(_, v)| *v);
    match result.outcome {
        Outcome::ConcurrentMutationLimit => assert_eq!(last, Some(Verdict::Churn), "{stages:?}"),
        o if o.is_success() => assert_eq!(last, Some(Verdict::Stable), "{stages:?}"),
        _ => {}
    }
    assert!(out[..out.len().saturating_sub(1)]
        .iter()
        .all(|(_, v)| *v != Verdict::Churn));
    out
}

/// proptest's deterministic runner; `GEN_COVERAGE_SEED=n` draws another fixed sample instead
/// (to check that the floors hold with margin, not by the luck of one sample).
fn runner() -> TestRunner {
    match std::env::var("GEN_COVERAGE_SEED")
        .ok()
        .and_then(|s| s.parse::<u8>().ok())
    {
        None => TestRunner::deterministic(),
        Some(n) => TestRunner::new_with_rng(
            proptest::test_runner::Config::default(),
            proptest::test_runner::TestRng::from_seed(
                proptest::test_runner::RngAlgorithm::ChaCha,
                &[n; 32],
            ),
        ),
    }
}

/// The label of an assembly error: its variant (the reducer's and the snapshot's errors by their
/// inner variant), so that each way of failing is counted on its own.
fn error_label(e: &AssemblyError) -> String {
    let variant = match e {
        AssemblyError::Cancelled => "Cancelled",
        AssemblyError::NegativeEstimate { .. } => "NegativeEstimate",
        AssemblyError::SizeOverflow => "SizeOverflow",
        AssemblyError::DuplicateEntryId { .. } => "DuplicateEntryId",
        AssemblyError::Snapshot(SnapshotError::DuplicateEntryId(_)) => "Snapshot.DuplicateEntryId",
        AssemblyError::Snapshot(SnapshotError::NegativeVersion(_)) => "Snapshot.NegativeVersion",
        AssemblyError::Snapshot(_) => "Snapshot.Other",
        AssemblyError::ReducerReturnedNothing => "ReducerReturnedNothing",
        AssemblyError::Reducer(ReducerError::Failed(_)) => "Reducer.Failed",
        AssemblyError::Reducer(ReducerError::Contract(_)) => "Reducer.Contract",
        _ => "Other",
    };
    format!("error {variant} ({})", e.kind())
}

/// The label of a list with a recovered body durable (SPEC PRE-2) only through a later digest
/// of a source: its digest is in the durable set, and no `ArtifactReference` or `ToolExchange`
/// entry has it first. An implementation that read only each source's first digest would
/// require (and not evict) that body.
const LATER_DIGEST: &str = "path: a body durable by a later digest only";

/// A generated history holding content blocks (SPEC ENT-8) of several kinds, so the engine == model
/// properties size, compare and render them.
const BLOCKS: &str = "path: blocks of two kinds or more";

/// Whether `entries` earns [`BLOCKS`]: blocks of two kinds or more.
fn holds_blocks_of_two_kinds(entries: &[Entry]) -> bool {
    let kinds: BTreeSet<BlockKind> = entries
        .iter()
        .flat_map(|e| &e.message().parts)
        .filter_map(|p| match p {
            Part::Block(b) => Some(b.kind),
            _ => None,
        })
        .collect();
    kinds.len() >= 2
}

/// Whether `entries` earns [`LATER_DIGEST`].
fn durable_by_a_later_digest_only(entries: &[Entry]) -> bool {
    let durable = durable_digests(entries);
    let first: BTreeSet<_> = entries
        .iter()
        .filter(|e| {
            matches!(
                e.kind(),
                EntryKind::ArtifactReference | EntryKind::ToolExchange
            )
        })
        .filter_map(|e| e.artifact_reference_digests().first().copied())
        .collect();
    entries
        .iter()
        .filter(|e| e.kind() == EntryKind::RecoverableContextSegment)
        .filter_map(Entry::artifact_reference_digest)
        .any(|d| durable.contains(&d) && !first.contains(&d))
}

/// The labels of one assembly case, run on the model.
fn assembly_labels(case: &Case) -> BTreeSet<String> {
    let entries = build(&case.segs);
    let (mp, _) = policies(case, &entries);
    let (result, _, _, _, trace) = run(case, &entries, &mp, false);
    let mut labels = BTreeSet::new();
    if durable_by_a_later_digest_only(&entries) {
        labels.insert(LATER_DIGEST.to_owned());
    }
    if holds_blocks_of_two_kinds(&entries) {
        labels.insert(BLOCKS.to_owned());
    }
    match &result {
        Err(e) => {
            labels.insert(error_label(e));
            let first_fits = Model.size(&entries, mp.estimator()).is_ok();
            if *e == AssemblyError::SizeOverflow && first_fits {
                labels.insert("path: overflow met after the first capture".to_owned());
            }
        }
        Ok(r) => {
            labels.insert(format!("outcome {:?}", r.outcome));
            let schedule = case.provider.schedule(&entries);
            let sites = trace_sites(&schedule, &mp, r, &trace);
            for (site, verdict) in &sites {
                labels.insert(format!("site {site:?} {verdict:?}"));
            }
            if r.outcome == Outcome::Reduced
                && sites.last() == Some(&(Site::MarginRestoredEviction, Verdict::Stable))
            {
                labels.insert("path: success by eviction alone".to_owned());
            }
            if r.outcome == Outcome::Irreducible
                && !r.stages.contains(&Stage::DeterministicFallback)
            {
                labels.insert("path: Irreducible below the trigger".to_owned());
            }
        }
    }
    labels
}

/// The assembly distribution at `assemble_matches_model`'s default case count (computed once).
fn assembly_tally() -> &'static Tally {
    static TALLY: OnceLock<Tally> = OnceLock::new();
    TALLY.get_or_init(|| {
        let mut runner = runner();
        let strategy = case_strategy();
        let mut tally = Tally::default();
        for _ in 0..SAMPLE * cases(384) {
            let case = strategy.new_tree(&mut runner).expect("case").current();
            tally.add(assembly_labels(&case));
        }
        tally
    })
}

/// The verifier distribution at `verify_matches_model`'s default case count.
fn verify_tally() -> Tally {
    let mut runner = runner();
    let strategy = verify_input_strategy();
    let mut tally = Tally::default();
    for _ in 0..SAMPLE * cases(256) {
        let (segs, edit, retention) = strategy.new_tree(&mut runner).expect("input").current();
        let (original, proposed, mp, _) = verify_input(&segs, &edit, retention);
        let mut labels = BTreeSet::new();
        if durable_by_a_later_digest_only(&original) {
            labels.insert(LATER_DIGEST.to_owned());
        }
        if holds_blocks_of_two_kinds(&original) {
            labels.insert(BLOCKS.to_owned());
        }
        match Model.verify(&original, &proposed, &mp) {
            Err(e) => {
                labels.insert(error_label(&e));
            }
            Ok(v) if v.is_accepted() => {
                labels.insert("Accepted".to_owned());
            }
            Ok(v) => {
                labels.extend(v.rejection_reasons.iter().map(|r| format!("reason {r:?}")));
            }
        }
        tally.add(labels);
    }
    tally
}

/// SPEC ASM-1: every outcome is generated.
#[test]
fn asm_1_every_outcome_is_reached() {
    let labels: Vec<String> = Outcome::ALL
        .iter()
        .map(|o| format!("outcome {o:?}"))
        .collect();
    assembly_tally().assert_floors(&labels);
}

/// SPEC ERR-1, ASM-4, ASM-16, POL-3, SNAP-1: every error an assembly can end in is generated.
#[test]
fn err_1_every_assembly_error_is_reached() {
    let labels: Vec<String> = [
        "error Cancelled (Cancelled)",
        "error NegativeEstimate (InvalidOperation)",
        "error ReducerReturnedNothing (InvalidOperation)",
        "error SizeOverflow (Overflow)",
        "error DuplicateEntryId (InvalidArgument)",
        "error Snapshot.DuplicateEntryId (InvalidArgument)",
        "error Snapshot.NegativeVersion (OutOfRange)",
        "error Reducer.Failed (ReducerFailed)",
        "error Reducer.Contract (ReducerContract)",
    ]
    .map(str::to_owned)
    .to_vec();
    assembly_tally().assert_floors(&labels);
}

/// SPEC ASM-10, ASM-5, ASM-6: every check site is reached with a stable version, with a
/// restart and with churn (budget exhausted).
#[test]
fn asm_10_every_check_site_restarts_and_churns() {
    let mut labels = Vec::new();
    for site in SITES {
        for verdict in [Verdict::Stable, Verdict::Restarted, Verdict::Churn] {
            labels.push(format!("site {site:?} {verdict:?}"));
        }
    }
    assembly_tally().assert_floors(&labels);
}

/// SPEC ASM-8, ASM-12 (a), POL-3: the thin paths are not thin.
#[test]
fn asm_7_thin_paths_are_reached() {
    let labels: Vec<String> = [
        "path: success by eviction alone",
        "path: Irreducible below the trigger",
        "path: overflow met after the first capture",
    ]
    .map(str::to_owned)
    .to_vec();
    assembly_tally().assert_floors(&labels);
}

/// SPEC PRE-2: histories where a body is durable only through a later digest of an entry that
/// carries several are generated (the engine judges durability its own way, `Durability`).
#[test]
fn pre_2_bodies_durable_by_a_later_digest_only_are_reached() {
    assembly_tally().assert_floors(&[LATER_DIGEST.to_owned()]);
}

/// SPEC ENT-8: histories holding blocks (two kinds or more) are assembled.
#[test]
fn ent_8_histories_with_blocks_are_reached() {
    assembly_tally().assert_floors(&[BLOCKS.to_owned()]);
}

/// SPEC VER-3, VER-1: every rejection reason, and acceptance, are generated; the duplicate-id
/// argument error is reached but stays a small share of the verifier's inputs.
#[test]
fn ver_3_every_rejection_reason_is_reached() {
    let tally = verify_tally();
    let mut labels: Vec<String> = RejectionReason::ALL
        .iter()
        .map(|r| format!("reason {r:?}"))
        .collect();
    labels.push("Accepted".to_owned());
    labels.push("error DuplicateEntryId (InvalidArgument)".to_owned());
    // SPEC PRE-2: the verifier's required ids (PRE-1.2) rest on the durable set too.
    labels.push(LATER_DIGEST.to_owned());
    // SPEC ENT-8, VER-2: histories with blocks are verified.
    labels.push(BLOCKS.to_owned());
    tally.assert_floors(&labels);
    let duplicates = tally.share("error DuplicateEntryId (InvalidArgument)");
    assert!(
        duplicates <= 0.10,
        "duplicate-id share {duplicates:.3}\n{}",
        tally.report()
    );
}

/// Prints both distributions
/// (`cargo test -p hybrid-compaction --test properties -- --nocapture generator_coverage::report`).
#[test]
fn report() {
    println!("assembly:\n{}", assembly_tally().report());
    println!("verification:\n{}", verify_tally().report());
}
