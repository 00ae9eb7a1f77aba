//! Clause tests for the assembler, the reducer bridge, message adaptation and diagnostics
//! (SPEC ASM-1 .. ASM-16, BRG-1 .. BRG-3, CLS-1, CLS-2, DIA-1 .. DIA-6; departures DEP-1 ..
//! DEP-6, DEP-10, DEP-19, DEP-20).
//!
//! Sizes come from host-defined table estimators so every number in an expectation can be
//! checked by hand against the SPEC pseudo-code of ASM-7 / ASM-9. Every scenario states its
//! hard limit `H`, threshold `T` and budget `M`. The declaration orders of outcomes and stages
//! (ASM-1, ASM-2) are vocabulary, tested in `model/tests/vocabulary.rs`.

use hybrid_compaction_model::assembly::ContractViolation;
use hybrid_compaction_model::reducers::{
    MessageCountingReducer, ProposalItem, ScriptStep, ScriptedReducer, ScriptedUpstreamReducer,
    UpstreamError, UpstreamReducer, UpstreamStep,
};
use hybrid_compaction_model::*;
use sha2::{Digest as _, Sha256};

use std::sync::{Arc, Mutex};

use super::common::*;
use hybrid_compaction_model::seam::{ClassifierFailure, FailingClassifier};

use crate::imp;

use Stage::{
    DeterministicFallback as FALLBACK, RecoverableBodyEviction as EVICT, ReducerAttempt as RA,
    RestartedAfterMutation as RESTART, SnapshotCaptured as SNAP,
};

/// A reducer that records every request (entry ids, required ids, attempt number) and then
/// plays a script.
struct Recorder {
    script: ScriptedReducer,
    log: Vec<(Vec<String>, Vec<String>, i32)>,
}

impl Recorder {
    fn new(steps: Vec<ScriptStep>) -> Recorder {
        Recorder {
            script: ScriptedReducer::new(steps),
            log: Vec::new(),
        }
    }
}

impl Reducer for Recorder {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        self.log.push((
            ids(request.entries),
            id_strs(request.required_entry_ids),
            request.attempt_number,
        ));
        self.script.reduce(request)
    }
}

fn keep(v: &[&str]) -> ScriptStep {
    ScriptStep::Propose(
        v.iter()
            .map(|i| ProposalItem::Keep((*i).to_owned()))
            .collect(),
    )
}

/// Runs the assembler over a scripted provider and a recording reducer.
fn run(
    policy: &Policy,
    steps: Vec<(i64, Vec<Entry>)>,
    script: Vec<ScriptStep>,
) -> (Result<AssemblyResult, AssemblyError>, Recorder, usize) {
    let mut provider = ScriptedProvider::new(steps);
    let mut reducer = Recorder::new(script);
    let out = imp().assemble(
        policy,
        &mut provider,
        &mut reducer,
        &CancellationToken::new(),
    );
    (out, reducer, provider.captures())
}

fn ok(
    policy: &Policy,
    steps: Vec<(i64, Vec<Entry>)>,
    script: Vec<ScriptStep>,
) -> (AssemblyResult, Recorder) {
    let (out, rec, _) = run(policy, steps, script);
    (out.unwrap(), rec)
}

fn finals(r: &AssemblyResult) -> Vec<String> {
    ids(r
        .final_entries
        .as_ref()
        .expect("success carries final entries"))
}

/// SPEC ASM-3 invariants every result must satisfy.
fn assert_invariants(r: &AssemblyResult, m: i32) {
    assert!(r.original_estimated_size >= 0 && r.final_estimated_size >= 0);
    assert!(
        r.attempt_count >= 0 && r.attempt_count <= m,
        "ASM-11: attempts <= M"
    );
    assert!(r.latest_snapshot_version >= 0);
    if r.outcome.is_success() {
        assert!(r.final_estimated_size <= r.hard_limit);
        assert!(r.final_entries.is_some());
        assert!(r.final_verification.as_ref().unwrap().is_accepted());
    } else {
        assert!(r.final_entries.is_none() && r.final_verification.is_none());
    }
    // ASM-14: DeterministicFallback at most once.
    assert!(r.stages.iter().filter(|s| **s == FALLBACK).count() <= 1);
}

// Common scenario: s(10) a(100) b(100) c(5) = 215; H = 100, T = 90.
fn sizes() -> Vec<(&'static str, i32)> {
    vec![
        ("s", 10),
        ("a", 100),
        ("b", 100),
        ("c", 5),
        ("o", 20),
        ("o1", 60),
        ("o2", 60),
        ("r", 10),
        ("g", 100),
        ("stray", 10),
        ("big", 200),
        ("sum", 7),
    ]
}

fn pol(m: i32) -> Policy {
    table_policy(100, 10, 1, m, &sizes())
}

fn long_list() -> Vec<Entry> {
    vec![
        sys("s", "x"),
        conv("a", "x"),
        conv("b", "x"),
        conv("c", "x"),
    ]
}

// ---------------------------------------------------------------- ASM ----

#[test]
fn asm_14_example_stable_below_trigger() {
    // SPEC ASM-14: stable below trigger → [Snap, Snap], WithinLimit, 0 attempts.
    let list = vec![sys("s", "x"), conv("c", "x")];
    let (r, rec) = ok(&pol(3), vec![(0, list)], vec![]);
    assert_eq!(r.outcome, Outcome::WithinLimit);
    assert_eq!(r.stages, vec![SNAP, SNAP]);
    assert_eq!(r.attempt_count, 0);
    assert_eq!(
        (
            r.original_estimated_size,
            r.final_estimated_size,
            r.hard_limit
        ),
        (15, 15, 100)
    );
    assert_eq!(finals(&r), s(&["s", "c"]));
    assert_eq!(id_strs(&r.required_entry_ids), s(&["s", "c"]));
    assert_eq!(r.latest_snapshot_version, 0);
    assert!(rec.log.is_empty(), "no reducer below the trigger");
    assert_invariants(&r, 3);
}

#[test]
fn asm_14_example_margin_restored() {
    // SPEC ASM-14 / ASM-8 (DEP-3): r(10) g(100, durable body) c(5) = 115 ≥ T=90; eviction → 15.
    let list = vec![aref("r", "body"), seg("g", "body"), conv("c", "x")];
    let (r, rec) = ok(&pol(3), vec![(0, list)], vec![]);
    assert_eq!(r.outcome, Outcome::Reduced);
    assert_eq!(r.stages, vec![SNAP, EVICT, SNAP]);
    assert_eq!(r.attempt_count, 0);
    assert_eq!(
        (r.original_estimated_size, r.final_estimated_size),
        (115, 15)
    );
    assert_eq!(finals(&r), s(&["r", "c"]));
    assert!(rec.log.is_empty());
    assert_invariants(&r, 3);
}

#[test]
fn asm_14_example_first_proposal_fits() {
    // SPEC ASM-14: [Snap, ReducerAttempt, Snap, Snap], 1 attempt, Reduced.
    let (r, rec) = ok(&pol(3), vec![(0, long_list())], vec![keep(&["s", "c"])]);
    assert_eq!(r.outcome, Outcome::Reduced);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, SNAP]);
    assert_eq!(r.attempt_count, 1);
    assert_eq!(
        (r.original_estimated_size, r.final_estimated_size),
        (215, 15)
    );
    assert_eq!(finals(&r), s(&["s", "c"]));
    // SPEC ASM-4: request = working list, req(working list), attempt number 1.
    assert_eq!(rec.log, vec![(s(&["s", "a", "b", "c"]), s(&["s", "c"]), 1)]);
    assert_invariants(&r, 3);
}

#[test]
fn asm_14_example_fallback_irreducible_has_no_capture_after_fallback() {
    // SPEC ASM-14 / ASM-12(b): big(200) is required (retention) and alone exceeds H.
    let list = vec![sys("s", "x"), conv("big", "x")];
    let (r, _) = ok(&pol(3), vec![(0, list)], vec![ScriptStep::Echo]);
    assert_eq!(r.outcome, Outcome::Irreducible);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, FALLBACK]);
    assert_eq!(r.attempt_count, 1);
    assert_eq!(r.final_estimated_size, 210);
    assert_eq!(id_strs(&r.required_entry_ids), s(&["s", "big"]));
    assert_invariants(&r, 3);
}

#[test]
fn asm_3_success_and_termination_shapes() {
    // SPEC ASM-3: successes carry entries and an accepted verification; terminations neither.
    let (ok_r, _) = ok(&pol(1), vec![(0, long_list())], vec![keep(&["s", "c"])]);
    let v = ok_r.final_verification.clone().unwrap();
    assert!(v.is_accepted());
    assert_eq!(
        v.preservation_only_fallback_entry_ids,
        ok_r.required_entry_ids
    );
    let (bad, _) = ok(&pol(1), vec![(0, vec![conv("big", "x")])], vec![]);
    assert_eq!(bad.outcome, Outcome::Irreducible);
    assert!(bad.final_entries.is_none() && bad.final_verification.is_none());
}

#[test]
fn asm_4_reducer_returning_nothing_is_an_error() {
    // SPEC ASM-4.
    let (out, _, _) = run(&pol(3), vec![(0, long_list())], vec![ScriptStep::Nothing]);
    let err = out.unwrap_err();
    assert_eq!(err, AssemblyError::ReducerReturnedNothing);
    assert_eq!(err.kind(), ErrorKind::InvalidOperation);
}

#[test]
fn asm_4_reducer_errors_propagate_unchanged() {
    // SPEC ASM-4.
    let (out, _, _) = run(
        &pol(3),
        vec![(0, long_list())],
        vec![ScriptStep::Fail("boom".into())],
    );
    assert_eq!(
        out.unwrap_err(),
        AssemblyError::Reducer(ReducerError::Failed(UpstreamError::msg("boom")))
    );
}

#[test]
fn asm_4_request_fields_across_attempts() {
    // SPEC ASM-4 / ASM-7: a valid, smaller, still-over-H proposal earns another attempt; the
    // next request carries it, its own required ids, and the incremented attempt number.
    let (r, rec) = ok(
        &pol(3),
        vec![(0, long_list())],
        vec![keep(&["s", "b", "c"]), keep(&["s", "c"])],
    );
    assert_eq!(r.outcome, Outcome::Reduced);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, RA, SNAP, SNAP]);
    assert_eq!(r.attempt_count, 2);
    assert_eq!(
        rec.log,
        vec![
            (s(&["s", "a", "b", "c"]), s(&["s", "c"]), 1),
            (s(&["s", "b", "c"]), s(&["s", "c"]), 2),
        ]
    );
    assert_eq!(r.final_estimated_size, 15);
}

#[test]
fn asm_7_budget_spent_on_shrinking_proposals_then_fallback() {
    // SPEC ASM-7: M=2 valid, smaller, still > H proposals → fallback after the loop.
    // s(10) a(100) b(100) o(20) c(5) = 235.
    let list = vec![
        sys("s", "x"),
        conv("a", "x"),
        conv("b", "x"),
        opt("o", "x"),
        conv("c", "x"),
    ];
    let (r, rec) = ok(
        &pol(2),
        vec![(0, list)],
        vec![keep(&["s", "a", "b", "c"]), keep(&["s", "b", "c"])],
    );
    assert_eq!(rec.log.len(), 2);
    assert_eq!(r.outcome, Outcome::PreservationFallback);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, RA, SNAP, FALLBACK, SNAP]);
    assert_eq!(r.attempt_count, 2);
    // The fallback works on cur (the snapshot), not on the last proposal: s, o, c = 35.
    assert_eq!(finals(&r), s(&["s", "o", "c"]));
    assert_eq!(r.final_estimated_size, 35);
    assert_invariants(&r, 2);
}

#[test]
fn asm_7_dep_1_invalid_proposal_ends_the_loop_with_attempts_unused() {
    // SPEC ASM-7 (DEP-1): one bad proposal (drops required `s`) → straight to the fallback.
    let (r, rec) = ok(
        &pol(3),
        vec![(0, long_list())],
        vec![keep(&["c"]), keep(&["s", "c"])],
    );
    assert_eq!(rec.log.len(), 1, "remaining attempts unused");
    assert_eq!(r.outcome, Outcome::PreservationFallback);
    assert_eq!(r.attempt_count, 1);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, FALLBACK, SNAP]);
    assert_eq!(finals(&r), s(&["s", "c"]));
}

#[test]
fn asm_7_non_reducing_valid_proposal_ends_the_loop() {
    // SPEC ASM-7 (DEP-1): a valid proposal that is not strictly smaller is non-progressing.
    // s(10) a(100) sum(7) c(5): proposal s, a, sum, c = 122 > 115 = ws.
    let list = vec![sys("s", "x"), conv("a", "x"), conv("c", "x")];
    let grow = ScriptStep::Propose(vec![
        ProposalItem::Keep("s".into()),
        ProposalItem::Keep("a".into()),
        ProposalItem::New(summary("sum", "x")),
        ProposalItem::Keep("c".into()),
    ]);
    let (r, rec) = ok(&pol(3), vec![(0, list)], vec![grow]);
    assert_eq!(rec.log.len(), 1);
    assert_eq!(r.outcome, Outcome::PreservationFallback);
    assert_eq!(r.final_estimated_size, 15);
}

#[test]
fn asm_7_dep_2_unhelpful_reducer_on_fitting_list_is_within_limit() {
    // SPEC ASM-7 (DEP-2): T=90 ≤ 95 ≤ H=100; the reducer echoes; the current list is kept.
    let p = table_policy(100, 10, 1, 3, &[("s", 10), ("c", 85)]);
    let (r, _) = ok(
        &p,
        vec![(0, vec![sys("s", "x"), conv("c", "x")])],
        vec![ScriptStep::Echo],
    );
    assert_eq!(r.outcome, Outcome::WithinLimit);
    assert_eq!(r.attempt_count, 1);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, SNAP]);
    assert_eq!(r.final_estimated_size, 95);
}

#[test]
fn asm_8_dep_3_eviction_not_strictly_below_threshold_goes_to_reducer() {
    // SPEC ASM-8 (DEP-3): r(10) g(5) c(80) = 95; eviction → 90, not < T=90 → reducer; its
    // unhelpful answer keeps the evicted list: Reduced (the list shrank), 1 attempt.
    let p = table_policy(100, 10, 1, 3, &[("r", 10), ("g", 5), ("c", 80)]);
    let list = vec![aref("r", "body"), seg("g", "body"), conv("c", "x")];
    let (r, rec) = ok(&p, vec![(0, list)], vec![ScriptStep::Echo]);
    assert_eq!(r.outcome, Outcome::Reduced);
    assert_eq!(r.stages, vec![SNAP, EVICT, RA, SNAP, SNAP]);
    assert_eq!(r.attempt_count, 1);
    assert_eq!(r.final_estimated_size, 90);
    assert_eq!(finals(&r), s(&["r", "c"]));
    // The reducer saw the evicted working list.
    assert_eq!(rec.log[0].0, s(&["r", "c"]));
}

#[test]
fn asm_8_evict_removes_only_durable_bodies() {
    // SPEC ASM-8: durable bodies go, reference-less bodies stay, order kept.
    let list = vec![
        seg("g1", "one"),
        conv("c", "x"),
        aref("r", "one"),
        seg("g2", "two"),
        call("k", &["q"]),
        ref_result("t", "q", "three"),
        seg("g3", "three"),
    ];
    assert_eq!(ids(&imp().evict(&list)), s(&["c", "r", "g2", "k", "t"]));
    assert_eq!(ids(&imp().evict(&[seg("x", "lonely")])), s(&["x"]));
}

#[test]
fn asm_8_margin_restored_but_rejected_falls_through() {
    // SPEC ASM-8: r(10) g(100) stray(10) c(5) = 125; eviction → 25 < T but Verify rejects (the
    // orphan result) → reducer; echo keeps nothing valid → fallback → Irreducible at 25 ≤ H.
    let list = vec![
        aref("r", "body"),
        seg("g", "body"),
        result("stray", &["zz"]),
        conv("c", "x"),
    ];
    let (r, _) = ok(&pol(3), vec![(0, list)], vec![ScriptStep::Echo]);
    assert_eq!(r.outcome, Outcome::Irreducible);
    assert_eq!(r.stages, vec![SNAP, EVICT, RA, SNAP, FALLBACK]);
    assert_eq!(r.final_estimated_size, 25);
    assert_eq!(r.attempt_count, 1);
}

#[test]
fn asm_9_fallback_keeps_optional_context_when_all_of_it_fits() {
    // SPEC ASM-9: required + all optional context.
    let list = vec![sys("s", "x"), opt("o", "x"), conv("a", "x"), conv("c", "x")];
    let (r, _) = ok(&pol(3), vec![(0, list)], vec![keep(&["c"])]);
    assert_eq!(r.outcome, Outcome::PreservationFallback);
    assert_eq!(finals(&r), s(&["s", "o", "c"]));
    assert_eq!(r.final_estimated_size, 35);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, FALLBACK, SNAP]);
}

#[test]
fn asm_9_dep_6_optional_context_is_all_or_nothing() {
    // SPEC ASM-9 (DEP-6): o1(60) + o2(60) do not fit together; o1 alone would, but is dropped.
    let list = vec![
        sys("s", "x"),
        opt("o1", "x"),
        opt("o2", "x"),
        conv("a", "x"),
        conv("c", "x"),
    ];
    let (r, _) = ok(&pol(3), vec![(0, list)], vec![keep(&["c"])]);
    assert_eq!(r.outcome, Outcome::PreservationFallback);
    assert_eq!(finals(&r), s(&["s", "c"]));
    assert_eq!(r.final_estimated_size, 15);
}

#[test]
fn asm_12_dep_4_irreducible_below_trigger_with_invalid_structure() {
    // SPEC ASM-12(a) (DEP-4): stray(10) c(5) = 15 < T, but Verify(cur, cur) rejects.
    let list = vec![result("stray", &["zz"]), conv("c", "x")];
    let (r, rec, captures) = run(&pol(3), vec![(0, list)], vec![]);
    let r = r.unwrap();
    assert_eq!(r.outcome, Outcome::Irreducible);
    assert_eq!(r.stages, vec![SNAP]);
    assert_eq!(captures, 1);
    assert_eq!(r.attempt_count, 0);
    assert_eq!(r.final_estimated_size, 15);
    assert_eq!(id_strs(&r.required_entry_ids), s(&["stray", "c"]));
    assert!(rec.log.is_empty());
}

#[test]
fn asm_12_irreducible_with_required_only_size_within_the_limit() {
    // SPEC ASM-12(b) / ASM-3 (DEP-6): the required-only list (stray, c) = 15 ≤ H fits but is
    // invalid; Irreducible reports 15.
    let list = vec![result("stray", &["zz"]), opt("big", "x"), conv("c", "x")];
    let (r, _) = ok(&pol(3), vec![(0, list)], vec![keep(&["stray", "c"])]);
    assert_eq!(r.outcome, Outcome::Irreducible);
    assert_eq!(r.final_estimated_size, 15);
    assert!(r.final_estimated_size <= r.hard_limit);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, FALLBACK]);
}

// ----------------------------------------------- version checks (ASM-5, ASM-10, ASM-11) --

#[test]
fn asm_10_below_trigger_restart_consumes_an_attempt() {
    // Site "below-trigger success": restart consumes, resumes at the outer loop.
    let l0 = vec![sys("s", "x"), conv("c", "x")];
    let l1 = vec![sys("s", "x"), conv("c", "x"), conv("a2", "y")];
    let (r, rec) = ok(&pol(3), vec![(0, l0), (1, l1)], vec![]);
    assert_eq!(r.outcome, Outcome::WithinLimit);
    assert_eq!(r.stages, vec![SNAP, SNAP, RESTART, SNAP]);
    assert_eq!(r.attempt_count, 1);
    assert_eq!(r.latest_snapshot_version, 1);
    assert_eq!(finals(&r), s(&["s", "c", "a2"]));
    assert_eq!(r.original_estimated_size, 15, "anchor = first snapshot");
    assert_eq!(
        id_strs(&r.required_entry_ids),
        s(&["s", "a2"]),
        "ASM-13: req of latest cur"
    );
    assert!(rec.log.is_empty());
}

#[test]
fn asm_6_churn_at_the_budget_below_trigger() {
    // SPEC ASM-6 / ASM-5: M=1; first restart consumes the only attempt; next change → churn.
    let l0 = vec![conv("c", "x")];
    let l1 = vec![conv("c", "x"), sys("s", "x")];
    let l2 = vec![conv("c", "x"), sys("s", "x"), conv("a", "x")];
    let (r, _) = ok(&pol(1), vec![(0, l0), (1, l1), (2, l2)], vec![]);
    assert_eq!(r.outcome, Outcome::ConcurrentMutationLimit);
    assert_eq!(
        r.stages,
        vec![SNAP, SNAP, RESTART, SNAP],
        "no stage for the churn itself"
    );
    assert_eq!(r.attempt_count, 1);
    assert_eq!(
        r.latest_snapshot_version, 2,
        "churn reports the newly observed version"
    );
    assert_eq!(r.original_estimated_size, 5);
    assert_eq!(r.final_estimated_size, 115, "size of the observed snapshot");
    assert_eq!(id_strs(&r.required_entry_ids), s(&["s", "a"]));
    assert!(r.final_entries.is_none());
    assert_invariants(&r, 1);
}

#[test]
fn asm_10_margin_restored_restart_consumes_an_attempt() {
    let l0 = vec![aref("r", "body"), seg("g", "body"), conv("c", "x")];
    let l1 = vec![aref("r", "body"), conv("c", "x")];
    let (r, rec) = ok(&pol(3), vec![(0, l0), (1, l1)], vec![]);
    assert_eq!(r.outcome, Outcome::WithinLimit);
    assert_eq!(r.stages, vec![SNAP, EVICT, SNAP, RESTART, SNAP]);
    assert_eq!(r.attempt_count, 1);
    assert!(rec.log.is_empty());
    // At the budget: M=1 is spent by a below-trigger restart; the margin-restored capture then
    // sees another change → churn.
    let small = vec![conv("c", "x")];
    let l1 = vec![aref("r", "body"), seg("g", "body"), conv("c", "x")];
    let (r, rec) = ok(&pol(1), vec![(0, small), (1, l1.clone()), (2, l1)], vec![]);
    assert_eq!(r.outcome, Outcome::ConcurrentMutationLimit);
    assert_eq!(r.stages, vec![SNAP, SNAP, RESTART, EVICT, SNAP]);
    assert_eq!(r.attempt_count, 1);
    assert_eq!(r.latest_snapshot_version, 2);
    assert_eq!(r.final_estimated_size, 115);
    assert!(rec.log.is_empty());
}

#[test]
fn asm_10_post_reducer_restart_does_not_consume() {
    // Site "post-reducer recheck": the change is seen right after the reducer call.
    let small = vec![sys("s", "x"), conv("c", "x")];
    let (r, rec) = ok(
        &pol(3),
        vec![(0, long_list()), (1, small)],
        vec![keep(&["s", "c"])],
    );
    assert_eq!(rec.log.len(), 1);
    assert_eq!(r.outcome, Outcome::WithinLimit);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, RESTART, SNAP]);
    assert_eq!(r.attempt_count, 1, "only the reducer call counts");
    assert_eq!(r.latest_snapshot_version, 1);
}

#[test]
fn asm_11_change_right_after_the_last_permitted_reducer_call_is_churn() {
    // SPEC ASM-11: M=1; the post-reducer capture sees a new version with attempts = M.
    let small = vec![sys("s", "x"), conv("c", "x")];
    let (r, _) = ok(
        &pol(1),
        vec![(0, long_list()), (7, small)],
        vec![keep(&["s", "c"])],
    );
    assert_eq!(r.outcome, Outcome::ConcurrentMutationLimit);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP]);
    assert_eq!(r.attempt_count, 1);
    assert_eq!(r.latest_snapshot_version, 7);
    assert_eq!(r.final_estimated_size, 15);
    assert_eq!(r.original_estimated_size, 215);
}

#[test]
fn asm_10_preserve_current_restart_does_not_consume() {
    // Site "preserve-current after a non-progressing proposal".
    let p = table_policy(100, 10, 1, 3, &[("s", 10), ("c", 85), ("d", 1)]);
    let l0 = vec![sys("s", "x"), conv("c", "x")];
    let l1 = vec![sys("s", "x"), conv("d", "x")];
    let (r, rec) = ok(
        &p,
        vec![(0, l0.clone()), (0, l0), (1, l1)],
        vec![ScriptStep::Echo],
    );
    assert_eq!(rec.log.len(), 1);
    assert_eq!(r.outcome, Outcome::WithinLimit);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, SNAP, RESTART, SNAP]);
    assert_eq!(r.attempt_count, 1);
    assert_eq!(r.final_estimated_size, 11);
}

#[test]
fn asm_10_reduced_proposal_restart_does_not_consume() {
    // Site "reduced-proposal success".
    let small = vec![sys("s", "x"), conv("c", "x")];
    let (r, rec) = ok(
        &pol(3),
        vec![(0, long_list()), (0, long_list()), (1, small)],
        vec![keep(&["s", "c"])],
    );
    assert_eq!(rec.log.len(), 1);
    assert_eq!(r.outcome, Outcome::WithinLimit);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, SNAP, RESTART, SNAP]);
    assert_eq!(r.attempt_count, 1);
}

#[test]
fn asm_10_reduced_proposal_change_at_budget_is_churn() {
    let small = vec![sys("s", "x"), conv("c", "x")];
    let (r, _) = ok(
        &pol(1),
        vec![(0, long_list()), (0, long_list()), (1, small)],
        vec![keep(&["s", "c"])],
    );
    assert_eq!(r.outcome, Outcome::ConcurrentMutationLimit);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, SNAP]);
    assert_eq!(r.attempt_count, 1);
}

#[test]
fn asm_10_fallback_restart_consumes_and_stays_in_the_fallback() {
    // Site "fallback candidate" (DEP-5, DEP-6): the restart consumes an attempt and loops
    // inside the fallback; trigger, eviction and reducer are not re-run even though the new
    // snapshot is below the trigger.
    let l0 = vec![sys("s", "x"), opt("o", "x"), conv("a", "x"), conv("c", "x")];
    let l1 = vec![sys("s", "x"), opt("o", "x"), conv("c", "x")];
    let (r, rec) = ok(
        &pol(3),
        vec![(0, l0.clone()), (0, l0), (1, l1)],
        vec![keep(&["c"])],
    );
    assert_eq!(rec.log.len(), 1, "reducer not re-run");
    assert_eq!(r.outcome, Outcome::PreservationFallback, "not WithinLimit");
    assert_eq!(
        r.stages,
        vec![SNAP, RA, SNAP, FALLBACK, SNAP, RESTART, SNAP]
    );
    assert_eq!(r.attempt_count, 2);
    assert_eq!(r.latest_snapshot_version, 1);
    assert_eq!(finals(&r), s(&["s", "o", "c"]));
}

#[test]
fn asm_10_fallback_change_at_budget_is_churn() {
    let l0 = vec![sys("s", "x"), opt("o", "x"), conv("a", "x"), conv("c", "x")];
    let l1 = vec![sys("s", "x"), conv("c", "x")];
    let (r, _) = ok(
        &pol(1),
        vec![(0, l0.clone()), (0, l0), (4, l1)],
        vec![keep(&["c"])],
    );
    assert_eq!(r.outcome, Outcome::ConcurrentMutationLimit);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, FALLBACK, SNAP]);
    assert_eq!(r.latest_snapshot_version, 4);
    assert_eq!(r.final_estimated_size, 15);
}

#[test]
fn asm_11_dep_5_restarts_exhausting_the_budget_skip_the_reducer() {
    // SPEC ASM-11 (DEP-5): M=1; the below-trigger restart consumes the only attempt; the new
    // snapshot is over the trigger; the reducer is skipped and the fallback runs.
    let l0 = vec![sys("s", "x"), conv("c", "x")];
    let (r, rec) = ok(&pol(1), vec![(0, l0), (1, long_list())], vec![]);
    assert!(rec.log.is_empty());
    assert_eq!(r.outcome, Outcome::PreservationFallback);
    assert_eq!(r.stages, vec![SNAP, SNAP, RESTART, FALLBACK, SNAP]);
    assert_eq!(r.attempt_count, 1);
    assert_eq!(finals(&r), s(&["s", "c"]));
}

#[test]
fn asm_5_snap_2_versions_compared_only_for_equality() {
    // SPEC ASM-5 / SNAP-2: a *decreasing* version is still a change.
    let l = vec![sys("s", "x"), conv("c", "x")];
    let (r, _) = ok(&pol(3), vec![(5, l.clone()), (3, l)], vec![]);
    assert_eq!(r.stages, vec![SNAP, SNAP, RESTART, SNAP]);
    assert_eq!(r.latest_snapshot_version, 3);
    // Equal versions with different entries are trusted as unchanged (provider contract).
    let (r, _) = ok(
        &pol(3),
        vec![(2, vec![conv("c", "x")]), (2, long_list())],
        vec![],
    );
    assert_eq!(r.outcome, Outcome::WithinLimit);
    assert_eq!(finals(&r), s(&["c"]));
}

#[test]
fn asm_6_churn_never_runs_the_fallback_and_reports_the_observed_list() {
    // SPEC ASM-6: churn result from the observed snapshot, required ids of its entries.
    let observed = vec![sys("s", "x"), conv("big", "x")];
    let (r, _) = ok(
        &pol(1),
        vec![(0, long_list()), (9, observed)],
        vec![keep(&["s", "c"])],
    );
    assert_eq!(r.outcome, Outcome::ConcurrentMutationLimit);
    assert!(!r.stages.contains(&FALLBACK));
    assert_eq!(r.final_estimated_size, 210);
    assert_eq!(id_strs(&r.required_entry_ids), s(&["s", "big"]));
}

#[test]
fn asm_13_success_required_ids_are_those_of_cur_not_of_the_final_list() {
    // SPEC ASM-13: retention 1; the proposal adds a new conversational message, which would be
    // the latest unit of the final list; the result still reports req(cur).
    let list = vec![sys("s", "x"), conv("a", "x"), conv("c", "x")];
    let step = ScriptStep::Propose(vec![
        ProposalItem::Keep("s".into()),
        ProposalItem::Keep("c".into()),
        ProposalItem::New(conv("n", "x")),
    ]);
    let (r, _) = ok(&pol(3), vec![(0, list)], vec![step]);
    assert_eq!(r.outcome, Outcome::Reduced);
    assert_eq!(finals(&r), s(&["s", "c", "n"]));
    assert_eq!(id_strs(&r.required_entry_ids), s(&["s", "c"]));
}

#[test]
fn asm_7_verify_compares_against_cur_not_the_working_list() {
    // Note of SPEC ASM-7: after eviction the working list lacks g; a proposal that still
    // carries g (unchanged, from cur) is judged against cur and is valid.
    // r(10) g(100) a(100) c(5) = 215; eviction → 115 (no margin); proposal r, g? no: r, c.
    let list = vec![
        aref("r", "body"),
        seg("g", "body"),
        conv("a", "x"),
        conv("c", "x"),
    ];
    let (r, rec) = ok(&pol(3), vec![(0, list)], vec![keep(&["r", "c"])]);
    assert_eq!(rec.log[0].0, s(&["r", "a", "c"]));
    assert_eq!(r.outcome, Outcome::Reduced);
    assert_eq!(r.stages, vec![SNAP, EVICT, RA, SNAP, SNAP]);
    // A proposal dropping a required entry of cur is rejected even if the working list lacked
    // it: here the required `r` is dropped.
    let list = vec![
        aref("r", "body"),
        seg("g", "body"),
        conv("a", "x"),
        conv("c", "x"),
    ];
    let (r, _) = ok(&pol(3), vec![(0, list)], vec![keep(&["c"])]);
    assert_eq!(r.outcome, Outcome::PreservationFallback);
}

#[test]
fn asm_15_assembly_is_deterministic() {
    // SPEC ASM-15: pure inputs → identical results on a re-run.
    let steps = vec![
        (0, long_list()),
        (0, long_list()),
        (1, vec![sys("s", "x"), conv("c", "x")]),
    ];
    let script = vec![keep(&["s", "b", "c"]), keep(&["s", "c"])];
    let (a, _) = ok(&pol(3), steps.clone(), script.clone());
    let (b, _) = ok(&pol(3), steps, script);
    assert_eq!(a, b);
}

// ------------------------------------------------------- cancellation (ASM-16) ----

#[test]
fn asm_16_cancelled_before_assembly() {
    let mut provider = ScriptedProvider::new(vec![(0, long_list())]);
    let mut reducer = ScriptedReducer::new(vec![]);
    let err = imp().assemble(
        &pol(3),
        &mut provider,
        &mut reducer,
        &CancellationToken::cancelled(),
    );
    assert_eq!(err.unwrap_err(), AssemblyError::Cancelled);
    assert_eq!(provider.captures(), 0, "nothing captured");
}

#[test]
fn asm_16_cancelled_during_assembly_is_an_error_not_an_outcome() {
    // Set during the first capture: observed at the start of the outer loop.
    let token = CancellationToken::new();
    let mut provider =
        ScriptedProvider::new(vec![(0, long_list())]).cancel_at_capture(0, token.clone());
    let mut reducer = ScriptedReducer::new(vec![]);
    let err = imp()
        .assemble(&pol(3), &mut provider, &mut reducer, &token)
        .unwrap_err();
    assert_eq!(err, AssemblyError::Cancelled);
    assert_eq!(reducer.calls(), 0);
    // Set by the reducer: observed right after the call, before the post-reducer capture.
    let token = CancellationToken::new();
    let mut provider = ScriptedProvider::new(vec![(0, long_list())]);
    let mut reducer =
        ScriptedReducer::new(vec![keep(&["s", "c"])]).cancel_at_call(0, token.clone());
    let err = imp()
        .assemble(&pol(3), &mut provider, &mut reducer, &token)
        .unwrap_err();
    assert_eq!(err, AssemblyError::Cancelled);
    assert_eq!(provider.captures(), 1);
}

/// Runs the assembler with a cancellation raised during capture `k` (0-based).
fn cancel_at_capture(
    policy: &Policy,
    steps: Vec<(i64, Vec<Entry>)>,
    script: Vec<ScriptStep>,
    k: usize,
) -> Result<AssemblyResult, AssemblyError> {
    let token = CancellationToken::new();
    let mut provider = ScriptedProvider::new(steps).cancel_at_capture(k, token.clone());
    let mut reducer = ScriptedReducer::new(script);
    let out = imp().assemble(policy, &mut provider, &mut reducer, &token);
    assert!(token.is_cancelled(), "capture {k} was reached");
    out
}

/// (what, policy, schedule, script, capture index, outcome without cancellation).
type CancelCase = (
    &'static str,
    Policy,
    Vec<(i64, Vec<Entry>)>,
    Vec<ScriptStep>,
    usize,
    Outcome,
);

#[test]
fn asm_16_a_cancellation_raised_during_any_capture_is_observed() {
    // SPEC ASM-16: `size` is `Evaluate` (checks before and after), `req` and `Verify` check on
    // entry, and every capture is followed by one of them or by an explicit check, including
    // the computations that build success and churn results (ASM-6, ASM-13).
    // Each case: (what, policy, schedule, script, capture index, outcome without cancellation).
    let fits = vec![sys("s", "x"), opt("o1", "x"), opt("o", "x")]; // 90: triggers, fits H = 100
    let evictable = vec![aref("r", "body"), seg("g", "body"), conv("c", "x")];
    let churn = vec![
        (0, vec![conv("c", "x")]),
        (1, vec![conv("c", "x"), sys("s", "x")]),
        (2, vec![conv("c", "x"), sys("s", "x"), conv("a", "x")]),
    ];
    let restart = vec![(0, vec![conv("c", "x")]), (1, vec![conv("c", "x")])];
    let cases: Vec<CancelCase> = vec![
        (
            "below-trigger success",
            pol(3),
            vec![(0, vec![conv("c", "x")])],
            vec![],
            1,
            Outcome::WithinLimit,
        ),
        (
            "below-trigger restart",
            pol(3),
            restart,
            vec![],
            1,
            Outcome::WithinLimit,
        ),
        (
            "churn-ending capture",
            pol(1),
            churn,
            vec![],
            2,
            Outcome::ConcurrentMutationLimit,
        ),
        (
            "margin-restored eviction",
            pol(3),
            vec![(0, evictable)],
            vec![],
            1,
            Outcome::Reduced,
        ),
        (
            "post-reducer capture",
            pol(3),
            vec![(0, long_list())],
            vec![keep(&["s", "c"])],
            1,
            Outcome::Reduced,
        ),
        (
            "reduced-proposal success",
            pol(3),
            vec![(0, long_list())],
            vec![keep(&["s", "c"])],
            2,
            Outcome::Reduced,
        ),
        (
            "preserve-current",
            pol(3),
            vec![(0, fits)],
            vec![keep(&["o"])],
            2,
            Outcome::WithinLimit,
        ),
        (
            "fallback candidate",
            pol(3),
            vec![(0, long_list())],
            vec![ScriptStep::Echo],
            2,
            Outcome::PreservationFallback,
        ),
    ];
    for (what, policy, steps, script, k, uncancelled) in cases {
        let (plain, _, _) = run(&policy, steps.clone(), script.clone());
        assert_eq!(plain.expect(what).outcome, uncancelled, "{what}");
        assert_eq!(
            cancel_at_capture(&policy, steps, script, k).unwrap_err(),
            AssemblyError::Cancelled,
            "{what}: cancellation at capture {k}"
        );
    }
}

#[test]
fn asm_16_pol_3_the_smallest_example_and_cancellation_before_an_estimator_error() {
    // H = 10, margin 5, every entry measures 1, one user entry, no reducer step, the token set
    // during capture 1 (the below-trigger finalization): Cancelled, not WithinLimit.
    let policy = Policy::new(spec(10, 5, 1, 3, std::sync::Arc::new(ConstantEstimator(1)))).unwrap();
    let steps = vec![(0, vec![conv("u", "hi")])];
    assert_eq!(
        cancel_at_capture(&policy, steps, vec![], 1).unwrap_err(),
        AssemblyError::Cancelled
    );
    // The initial capture sets the token and the snapshot holds a negative estimate: `Evaluate`
    // checks before summing, so the answer is Cancelled, not the estimator's error.
    let negative = table_policy(100, 10, 1, 3, &[("c", -1)]);
    let steps = vec![(0, vec![conv("c", "x")])];
    let (plain, _, _) = run(&negative, steps.clone(), vec![]);
    assert!(matches!(plain, Err(AssemblyError::NegativeEstimate { .. })));
    assert_eq!(
        cancel_at_capture(&negative, steps, vec![], 0).unwrap_err(),
        AssemblyError::Cancelled
    );
}

#[test]
fn asm_16_a_cancelled_token_fails_before_any_capture() {
    let token = CancellationToken::cancelled();
    let mut provider = ScriptedProvider::new(vec![(0, long_list())]);
    let mut reducer = ScriptedReducer::new(vec![]);
    let err = imp()
        .assemble(&pol(3), &mut provider, &mut reducer, &token)
        .unwrap_err();
    assert_eq!(err, AssemblyError::Cancelled);
    assert_eq!(provider.captures(), 0);
}

#[test]
fn ver_5_verify_checks_cancellation_first() {
    // SPEC VER-5: a cancelled token is the Cancelled error, even before duplicate ids (VER-1).
    let list = vec![conv("c", "x")];
    let dup = vec![conv("c", "x"), conv("c", "y")];
    let token = CancellationToken::cancelled();
    assert_eq!(
        imp()
            .verify_cancellable(&list, &dup, &pol(3), &token)
            .unwrap_err(),
        AssemblyError::Cancelled
    );
    let live = CancellationToken::new();
    assert!(imp()
        .verify_cancellable(&list, &list, &pol(3), &live)
        .unwrap()
        .is_accepted());
    assert!(matches!(
        imp().verify_cancellable(&list, &dup, &pol(3), &live),
        Err(AssemblyError::DuplicateEntryId { .. })
    ));
}

// --------------------------------------------------------------- errors ----

#[test]
fn asm_errors_negative_estimate_overflow_duplicates() {
    // SPEC POL-3 inside assembly: a negative estimate and a 32-bit overflow are errors.
    let neg = table_policy(100, 10, 1, 3, &[("c", -1)]);
    let (out, _, _) = run(&neg, vec![(0, vec![conv("c", "x")])], vec![]);
    assert_eq!(
        out.unwrap_err(),
        AssemblyError::NegativeEstimate {
            entry_id: "c".into()
        }
    );
    let over = table_policy(100, 10, 1, 3, &[("a", i32::MAX), ("b", 1)]);
    let (out, _, _) = run(
        &over,
        vec![(0, vec![conv("a", "x"), conv("b", "y")])],
        vec![],
    );
    assert_eq!(out.unwrap_err(), AssemblyError::SizeOverflow);
    // A snapshot with duplicate ids fails at capture (SPEC SNAP-1).
    let (out, _, _) = run(
        &pol(3),
        vec![(0, vec![conv("c", "x"), conv("c", "y")])],
        vec![],
    );
    assert!(matches!(
        out.unwrap_err(),
        AssemblyError::Snapshot(SnapshotError::DuplicateEntryId(_))
    ));
    // A proposal with duplicate ids is an argument error from Verify, not a rejection.
    let dup = ScriptStep::Propose(vec![
        ProposalItem::Keep("s".into()),
        ProposalItem::New(summary("x", "1")),
        ProposalItem::New(summary("x", "2")),
        ProposalItem::Keep("c".into()),
    ]);
    let (out, _, _) = run(&pol(3), vec![(0, long_list())], vec![dup]);
    assert_eq!(
        out.unwrap_err(),
        AssemblyError::DuplicateEntryId {
            entry_id: "x".into()
        }
    );
}

// --------------------------------------------------------------- bridge ----

/// What an [`Upstream`] was handed, one list per call.
type Seen = Arc<Mutex<Vec<Vec<Message>>>>;

/// An upstream reducer that records its input and plays a script.
struct Upstream {
    script: ScriptedUpstreamReducer,
    seen: Seen,
}

impl UpstreamReducer for Upstream {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        self.seen.lock().unwrap().push(messages.to_vec());
        self.script.reduce(messages)
    }
}

/// The implementation's bridge over a scripted upstream, and what the upstream sees.
struct Bridged {
    reducer: Box<dyn Reducer + Send>,
    seen: Seen,
}

impl Reducer for Bridged {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        self.reducer.reduce(request)
    }
}

fn bridge(steps: Vec<UpstreamStep>) -> Bridged {
    let seen = Seen::default();
    let reducer = imp().bridge(Box::new(Upstream {
        script: ScriptedUpstreamReducer::new(steps),
        seen: Arc::clone(&seen),
    }));
    Bridged { reducer, seen }
}

fn reduce_once(b: &mut Bridged, entries: &[Entry]) -> Result<Option<Vec<Entry>>, ReducerError> {
    let p = pol(3);
    let req = ReductionRequest {
        entries,
        required_entry_ids: &[],
        policy: &p,
        attempt_number: 1,
    };
    b.reduce(&req)
}

#[test]
fn brg_1_upstream_sees_messages_in_order_and_null_is_a_contract_error() {
    // SPEC BRG-1 (DEP-10).
    let list = long_list();
    let mut b = bridge(vec![UpstreamStep::Null]);
    let err = reduce_once(&mut b, &list).unwrap_err();
    assert_eq!(err, ReducerError::Contract(ContractViolation::NullResult));
    let expected: Vec<Message> = list.iter().map(|e| e.message().clone()).collect();
    assert_eq!(*b.seen.lock().unwrap(), vec![expected]);
    // Through the assembler: an error of kind ReducerContract, never a termination.
    let mut provider = ScriptedProvider::new(vec![(0, long_list())]);
    let mut b = bridge(vec![UpstreamStep::Null]);
    let err = imp()
        .assemble(&pol(3), &mut provider, &mut b, &CancellationToken::new())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ReducerContract);
    // Upstream failures propagate as the reducer's own failure.
    let mut b = bridge(vec![UpstreamStep::Fail("nope".into())]);
    assert_eq!(
        reduce_once(&mut b, &list).unwrap_err(),
        ReducerError::Failed(UpstreamError::msg("nope"))
    );
}

#[test]
fn brg_2_matching_reuses_entries_verbatim_first_unmatched_first() {
    // SPEC BRG-2: identical messages map to successive request entries; unmatched entries are
    // dropped; a match reuses id, kind and content.
    let list = vec![
        sys("s", "same"),
        conv("c1", "dup"),
        conv("c2", "dup"),
        opt("o", "x"),
    ];
    let out_msgs = vec![
        Message::text("user", "dup"),
        Message::text("user", "dup"),
        Message::text("system", "same"),
    ];
    let mut b = bridge(vec![UpstreamStep::Return(out_msgs)]);
    let out = reduce_once(&mut b, &list).unwrap().unwrap();
    assert_eq!(ids(&out), s(&["c1", "c2", "s"]));
    assert!(out[2].ptr_eq(&list[0]) || out[2] == list[0]);
    assert_eq!(out[2].kind(), EntryKind::SystemInstruction);
}

#[test]
fn brg_2_bridge_equality_ignores_the_informational_flag() {
    // SPEC BRG-2: informational flag not compared (the verifier does compare it, VER-2).
    let original = Entry::new(
        "k",
        EntryKind::ToolExchange,
        Message::new(
            "assistant",
            vec![Part::Call(FunctionCall {
                call_id: "c".into(),
                name: "f".into(),
                arguments: None,
                informational_only: true,
            })],
        ),
    )
    .unwrap();
    let returned = Message::new("assistant", vec![Part::call("c", "f")]);
    assert!(imp().bridge_equal(original.message(), &returned));
    let mut b = bridge(vec![UpstreamStep::Return(vec![returned])]);
    let out = reduce_once(&mut b, std::slice::from_ref(&original))
        .unwrap()
        .unwrap();
    assert_eq!(out, vec![original.clone()], "reused verbatim, flag kept");
    // Author matters.
    let mut authored = Message::text("user", "x");
    authored.author = Some("bob".into());
    assert!(!imp().bridge_equal(&Message::text("user", "x"), &authored));
}

#[test]
fn brg_3_minted_summary_ids() {
    // SPEC BRG-3: `upstream-summary-{k}-{sha256("{k}:{role}:{text}")}`, k counting new
    // messages only.
    let list = vec![sys("s", "x"), conv("c", "y")];
    let new1 = Message::text("assistant", "summary one");
    let new2 = Message::new("user", vec![Part::text("two"), Part::text("!")]);
    let mut b = bridge(vec![UpstreamStep::Return(vec![
        new1.clone(),
        Message::text("system", "x"),
        new2.clone(),
    ])]);
    let out = reduce_once(&mut b, &list).unwrap().unwrap();
    let h = |t: &str| {
        let d = Sha256::digest(t.as_bytes());
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    assert_eq!(
        ids(&out),
        vec![
            format!("upstream-summary-0-{}", h("0:assistant:summary one")),
            "s".to_owned(),
            format!("upstream-summary-1-{}", h("1:user:two!")),
        ]
    );
    assert_eq!(out[0].kind(), EntryKind::Summary);
    assert_eq!(out[0].message(), &new1);
    if let Some(id) = imp().minted_summary_id(1, &new2) {
        assert_eq!(id, ids(&out)[2]);
    }
}

#[test]
fn brg_3_dep_10_fabricated_tool_content_is_a_contract_error() {
    // SPEC BRG-3 (DEP-10).
    let list = vec![sys("s", "x"), call("k", &["a"]), result("r", &["a"])];
    let fabricated = Message::new(
        "tool",
        vec![Part::result("a", Value::String("forged".into()))],
    );
    let mut b = bridge(vec![UpstreamStep::Return(vec![
        Message::text("system", "x"),
        fabricated,
    ])]);
    assert_eq!(
        reduce_once(&mut b, &list).unwrap_err(),
        ReducerError::Contract(ContractViolation::FabricatedToolContent { index: 1 })
    );
    // Returning the original tool messages is fine (they match).
    let msgs: Vec<Message> = list.iter().map(|e| e.message().clone()).collect();
    let mut b = bridge(vec![UpstreamStep::Return(msgs)]);
    assert_eq!(
        ids(&reduce_once(&mut b, &list).unwrap().unwrap()),
        s(&["s", "k", "r"])
    );
}

#[test]
fn brg_1_full_assembly_with_a_message_counting_reducer() {
    // SPEC BRG-1 .. BRG-3 end to end with a real upstream reducer: keep system + last 2.
    // UTF-8 context sizes: s "sys" 3, m1..m5 "message-N" 9 each = 48; H = 40, T = 30.
    let list = vec![
        sys("s", "sys"),
        conv("m1", "message-1"),
        conv("m2", "message-2"),
        conv("m3", "message-3"),
        conv("m4", "message-4"),
        conv("m5", "message-5"),
    ];
    let p = context_policy(40, 10, 1, 3);
    let mut provider = StaticProvider::new(list);
    let mut b = imp().bridge(Box::new(MessageCountingReducer { target_count: 2 }));
    let r = imp()
        .assemble(&p, &mut provider, &mut b, &CancellationToken::new())
        .unwrap();
    assert_eq!(r.outcome, Outcome::Reduced);
    assert_eq!(finals(&r), s(&["s", "m4", "m5"]));
    assert_eq!(
        (r.original_estimated_size, r.final_estimated_size),
        (48, 21)
    );
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, SNAP]);
}

// ------------------------------------------------------------ classify ----

/// A classifier that records calls and returns a fixed override.
struct Probe {
    calls: Vec<String>,
    answer: Option<EntryKind>,
}

impl Classifier for Probe {
    fn entry_id(&mut self, _m: &[Message], index: usize) -> Result<String, ClassifierError> {
        self.calls.push(format!("id{index}"));
        Ok(format!("e{index}"))
    }
    fn override_kind(&mut self, _m: &[Message], index: usize) -> Option<EntryKind> {
        self.calls.push(format!("kind{index}"));
        self.answer
    }
}

#[test]
fn cls_1_precedence() {
    // SPEC CLS-1: (1) tool parts, (2) system, (3) override, (4) reference text, (5) else.
    let reference = ArtifactReference::to_content("x").to_string();
    let msgs = vec![
        Message::new("assistant", vec![Part::call("c", "f")]),
        Message::text("system", "rules"),
        Message::text("user", reference.clone()),
        Message::text("user", "hello"),
    ];
    let mut probe = Probe {
        calls: vec![],
        answer: None,
    };
    let entries = imp().adapt(&msgs, &mut probe).unwrap();
    let kinds: Vec<EntryKind> = entries.iter().map(|e| e.kind()).collect();
    assert_eq!(
        kinds,
        [
            EntryKind::ToolExchange,
            EntryKind::SystemInstruction,
            EntryKind::ArtifactReference,
            EntryKind::ConversationalMessage
        ]
    );
    // The id comes first; the override is never asked for tool or system messages.
    assert_eq!(
        probe.calls,
        s(&["id0", "id1", "id2", "kind2", "id3", "kind3"])
    );
    assert_eq!(ids(&entries), s(&["e0", "e1", "e2", "e3"]));
    // (3) before (4) (DEP-20): an override wins over reference text.
    let mut probe = Probe {
        calls: vec![],
        answer: Some(EntryKind::OptionalContext),
    };
    let entries = imp().adapt(&msgs, &mut probe).unwrap();
    assert_eq!(entries[2].kind(), EntryKind::OptionalContext);
    assert_eq!(entries[3].kind(), EntryKind::OptionalContext);
    assert_eq!(entries[0].kind(), EntryKind::ToolExchange);
    assert_eq!(entries[1].kind(), EntryKind::SystemInstruction);
}

#[test]
fn cls_3_a_failing_classifier_stops_adaptation_and_its_kind_propagates() {
    // SPEC CLS-3: the classifier's own failure at message 1 is the adaptation's error, of the
    // classifier's kind; message 2 is never classified.
    let msgs: Vec<Message> = ["a", "b", "c"]
        .into_iter()
        .map(|t| Message::text("user", t))
        .collect();
    for kind in [ErrorKind::InvalidOperation, ErrorKind::NotSupported] {
        let mut probe = Probe {
            calls: vec![],
            answer: None,
        };
        let mut failing = FailingClassifier {
            inner: &mut probe,
            failure: Some(ClassifierFailure { message: 1, kind }),
        };
        let err = imp().adapt(&msgs, &mut failing).unwrap_err();
        assert_eq!(
            err,
            AdaptError::Classifier {
                index: 1,
                error: ClassifierError { kind }
            }
        );
        assert_eq!(err.kind(), kind);
        assert_eq!(probe.calls, s(&["id0", "kind0"]));
    }
}

#[test]
fn cls_1_forbidden_overrides_and_entry_rules() {
    // SPEC CLS-1: ToolExchange / RecoverableContextSegment / SystemInstruction overrides are
    // invalid-operation errors; other kinds go through ENT-5.
    let msgs = vec![Message::text("user", "hello")];
    for kind in [
        EntryKind::ToolExchange,
        EntryKind::RecoverableContextSegment,
        EntryKind::SystemInstruction,
    ] {
        let mut probe = Probe {
            calls: vec![],
            answer: Some(kind),
        };
        let err = imp().adapt(&msgs, &mut probe).unwrap_err();
        assert_eq!(err, (AdaptError::ForbiddenOverride { index: 0, kind }));
        assert_eq!(err.kind(), ErrorKind::InvalidOperation);
    }
    let mut probe = Probe {
        calls: vec![],
        answer: Some(EntryKind::ArtifactReference),
    };
    let err = imp().adapt(&msgs, &mut probe).unwrap_err();
    assert!(matches!(
        err,
        AdaptError::Entry {
            index: 0,
            source: EntryError::InvalidArtifactReferenceText { .. }
        }
    ));
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    // A blank id from the classifier is an entry error too; a call in a user message also.
    let bad = vec![Message::new("user", vec![Part::call("c", "f")])];
    let err = imp()
        .adapt(&bad, &mut imp().content_hash_classifier())
        .unwrap_err();
    assert!(matches!(
        err,
        AdaptError::Entry {
            source: EntryError::CallRequiresAssistantRole { .. },
            ..
        }
    ));
    // The adapter never yields RecoverableContextSegment.
    let all = imp()
        .adapt(
            &[Message::text("user", "a"), Message::text("tool", "b")],
            &mut imp().content_hash_classifier(),
        )
        .unwrap();
    assert!(all
        .iter()
        .all(|e| e.kind() != EntryKind::RecoverableContextSegment));
}

#[test]
fn cls_2_ids_of_a_list_changed_in_place_count_its_current_messages() {
    // SPEC CLS-2: message i's id counts the identical renderings before it in the list as it is
    // when asked, whatever the classifier answered before about a list at the same address.
    let (a, b) = (Message::text("user", "a"), Message::text("user", "b"));
    let mut msgs = vec![a.clone(), b.clone(), a.clone(), b.clone()];
    let mut classifier = imp().content_hash_classifier();
    let walk: Vec<String> = (0..msgs.len())
        .map(|i| classifier.entry_id(&msgs, i).unwrap())
        .collect();
    let (ha, hb) = (
        sha_hex("user\u{1F}text:a\u{1E}"),
        sha_hex("user\u{1F}text:b\u{1E}"),
    );
    assert_eq!(
        walk,
        [
            format!("{ha}:0"),
            format!("{hb}:0"),
            format!("{ha}:1"),
            format!("{hb}:1")
        ]
    );
    // The same allocation, the same length, the last message unchanged: only its id moves.
    msgs[0] = b.clone();
    assert_eq!(classifier.entry_id(&msgs, 3).unwrap(), format!("{hb}:2"));
    // Asked out of order after a change before the index: [b, a, a, b].
    msgs[1] = a;
    assert_eq!(classifier.entry_id(&msgs, 2).unwrap(), format!("{ha}:1"));
    assert_eq!(classifier.entry_id(&msgs, 3).unwrap(), format!("{hb}:1"));
}

#[test]
fn cls_2_content_hash_ids() {
    // SPEC CLS-2: "{hex}:{n}", rendering = role U+001F then parts each followed by U+001E.
    let hi = Message::text("user", "hi");
    assert_rendering(&hi, "user\u{1F}text:hi\u{1E}");
    let mut authored = hi.clone();
    authored.author = Some("bob".into());
    let mut args = ValueMap::new();
    args.insert("x".into(), Value::I32(1));
    let call_msg = Message::new(
        "assistant",
        vec![
            Part::text("t"),
            Part::Call(FunctionCall {
                call_id: "c1".into(),
                name: "read".into(),
                arguments: Some(args),
                informational_only: false,
            }),
        ],
    );
    assert_rendering(&call_msg, "assistant\u{1F}text:t\u{1E}call:c1:read\u{1E}");
    let res = Message::new(
        "tool",
        vec![
            Part::result("c1", Value::String("s".into())),
            Part::result("c2", Value::Null),
            Part::result("c3", Value::RawJson(RawJson::new("\"dec\"").unwrap())),
            Part::result("c4", Value::RawJson(RawJson::new("[1, 2]").unwrap())),
        ],
    );
    assert_rendering(
        &res,
        "tool\u{1F}result:c1:s\u{1E}result:c2:\u{1E}result:c3:dec\u{1E}result:c4:[1, 2]\u{1E}",
    );
    let msgs = vec![hi.clone(), call_msg, authored, hi];
    let entries = imp()
        .adapt(&msgs, &mut imp().content_hash_classifier())
        .unwrap();
    let h = sha_hex("user\u{1F}text:hi\u{1E}");
    assert_eq!(ids(&entries)[0], format!("{h}:0"));
    assert_eq!(ids(&entries)[2], format!("{h}:1"), "author ignored");
    assert_eq!(ids(&entries)[3], format!("{h}:2"));
    assert_eq!(
        ids(&entries)[1],
        format!(
            "{}:0",
            sha_hex("assistant\u{1F}text:t\u{1E}call:c1:read\u{1E}")
        )
    );
    // Value-text of the remaining shapes (SPEC CLS-2).
    let raw = |t: &str| Value::RawJson(RawJson::new(t).unwrap());
    assert_value_text(&raw("true"), "True");
    assert_value_text(&raw("false"), "False");
    assert_value_text(&raw("null"), "");
    assert_value_text(&raw("1.50"), "1.50");
    assert_value_text(&raw("{\"a\": 1}"), "{\"a\": 1}");
    assert_value_text(&Value::Bool(true), "True");
    assert_value_text(&Value::F64(1e21), "1E+21");
    assert_value_text(&Value::Decimal(Decimal::parse("2.10").unwrap()), "2.10");
    let mut map = ValueMap::new();
    map.insert("é".into(), Value::Null);
    map.insert(
        "b".into(),
        Value::List(vec![Value::I32(1), Value::String("x".into())]),
    );
    map.insert("a".into(), Value::Bool(false));
    assert_value_text(&Value::Map(map), "{a=False,b=[1,x],é=}");
    // A plain string and a JSON string value render alike.
    let a = Message::new("tool", vec![Part::result("c", Value::String("v".into()))]);
    let b = Message::new(
        "tool",
        vec![Part::result(
            "c",
            Value::RawJson(RawJson::new("\"v\"").unwrap()),
        )],
    );
    assert_rendering(&a, "tool\u{1F}result:c:v\u{1E}");
    assert_rendering(&b, "tool\u{1F}result:c:v\u{1E}");
    let mut cls = imp().content_hash_classifier();
    assert_eq!(cls.override_kind(std::slice::from_ref(&a), 0), None);
    assert_eq!(
        cls.entry_id(&[a.clone(), b], 1),
        Ok(format!("{}:1", sha_hex("tool\u{1F}result:c:v\u{1E}")))
    );
}

// ----------------------------------------------------------- diagnostics ----

#[test]
fn dia_2_mirror_enums_share_names_and_order() {
    // SPEC DIA-2: the vocabulary's `From` mappings.
    for (i, o) in Outcome::ALL.iter().enumerate() {
        assert_eq!(CompactionOutcome::from(*o).name(), o.name());
        assert_eq!(CompactionOutcome::ALL[i], CompactionOutcome::from(*o));
    }
    for (i, st) in Stage::ALL.iter().enumerate() {
        assert_eq!(StageCategory::from(*st).name(), st.name());
        assert_eq!(StageCategory::ALL[i], StageCategory::from(*st));
    }
    for (i, k) in EntryKind::ALL.iter().enumerate() {
        assert_eq!(Category::from(*k).name(), k.name());
        assert_eq!(Category::ALL[i], Category::from(*k));
    }
}

#[test]
fn dia_1_and_dia_3_success_instance() {
    // SPEC DIA-1 / DIA-3 / DIA-5: a Reduced result after eviction and a reducer attempt.
    // UTF-8 context sizes: s "rules" 5, r = 82, g body 120 bytes, a 60, c "ok" 2 → 269.
    let g_body = "g".repeat(120);
    let list = vec![
        sys("s", "rules"),
        aref("r", &g_body),
        seg("g", &g_body),
        conv("a", &"a".repeat(60)),
        conv("c", "ok"),
    ];
    let p = context_policy(150, 20, 1, 3); // T = 130; evicted 149 ≥ T → reducer
    let mut provider = StaticProvider::new(list);
    let mut reducer = ScriptedReducer::new(vec![keep(&["s", "r", "c"])]);
    let r = imp()
        .assemble(&p, &mut provider, &mut reducer, &CancellationToken::new())
        .unwrap();
    assert_eq!(r.outcome, Outcome::Reduced);
    let d = imp().diagnostics(&r, &p).unwrap();
    assert_eq!(
        d,
        Diagnostics {
            outcome: CompactionOutcome::Reduced,
            measurement_unit: MeasurementUnit::Utf8Bytes,
            original_size: 269,
            final_size: 89,
            trigger_threshold: 130,
            hard_limit: 150,
            attempt_count: 1,
            stages: vec![
                StageCategory::SnapshotCaptured,
                StageCategory::RecoverableBodyEviction,
                StageCategory::ReducerAttempt,
                StageCategory::SnapshotCaptured,
                StageCategory::SnapshotCaptured
            ],
            category_contributions: vec![
                Contribution {
                    category: Category::SystemInstruction,
                    size: 5,
                    entry_count: 1
                },
                Contribution {
                    category: Category::ArtifactReference,
                    size: 82,
                    entry_count: 1
                },
                Contribution {
                    category: Category::ConversationalMessage,
                    size: 2,
                    entry_count: 1
                },
            ],
            final_sequence_valid: Some(true),
        }
    );
}

#[test]
fn dia_4_termination_instance() {
    // SPEC DIA-4: contributions empty, validity null, unit defined.
    let (r, _) = ok(
        &pol(3),
        vec![(0, vec![sys("s", "x"), conv("big", "x")])],
        vec![],
    );
    assert_eq!(r.outcome, Outcome::Irreducible);
    let d = imp().diagnostics(&r, &pol(3)).unwrap();
    assert_eq!(d.outcome, CompactionOutcome::Irreducible);
    assert_eq!(d.measurement_unit, MeasurementUnit::HostDefinedUnits);
    assert!(d.category_contributions.is_empty());
    assert_eq!(d.final_sequence_valid, None);
    assert_eq!(d.final_size, 210);
    assert_eq!(d.trigger_threshold, 90);
    let (c, _) = ok(
        &pol(1),
        vec![(0, long_list()), (3, long_list())],
        vec![keep(&["s", "c"])],
    );
    let d = imp().diagnostics(&c, &pol(1)).unwrap();
    assert_eq!(d.outcome, CompactionOutcome::ConcurrentMutationLimit);
    assert_eq!(d.stages.len(), c.stages.len());
}

#[test]
fn dia_5_sources_repeats_and_threshold_from_policy() {
    // SPEC DIA-5: stages mapped in order with repeats; threshold from the policy.
    let l0 = vec![sys("s", "x"), conv("c", "x")];
    let (r, _) = ok(
        &pol(3),
        vec![(0, l0.clone()), (1, l0.clone()), (2, l0)],
        vec![],
    );
    let d = imp().diagnostics(&r, &pol(3)).unwrap();
    assert_eq!(
        d.stages,
        vec![
            StageCategory::SnapshotCaptured,
            StageCategory::SnapshotCaptured,
            StageCategory::RestartedAfterMutation,
            StageCategory::SnapshotCaptured,
            StageCategory::RestartedAfterMutation,
            StageCategory::SnapshotCaptured
        ]
    );
    assert_eq!(d.attempt_count, 2);
    assert_eq!(d.trigger_threshold, 90);
}

#[test]
fn dia_6_contributions_same_estimator_ordered_and_summing() {
    // SPEC DIA-6: one per category present, category order, Σ == final size.
    let list = vec![
        conv("c1", "abc"),
        sys("s", "x"),
        opt("o", "zz"),
        conv("c2", "d"),
        summary("m", ""),
    ];
    let c = imp()
        .contributions(&list, imp().context_estimator().as_ref())
        .unwrap();
    assert_eq!(
        c,
        vec![
            Contribution {
                category: Category::SystemInstruction,
                size: 1,
                entry_count: 1
            },
            Contribution {
                category: Category::ConversationalMessage,
                size: 4,
                entry_count: 2
            },
            Contribution {
                category: Category::Summary,
                size: 0,
                entry_count: 1
            },
            Contribution {
                category: Category::OptionalContext,
                size: 2,
                entry_count: 1
            },
        ]
    );
    // Negative → invalid-operation error; overflow → overflow error.
    let neg = table(&[("s", -3)], 1);
    assert_eq!(
        imp().contributions(&list, &neg).unwrap_err(),
        AssemblyError::NegativeEstimate {
            entry_id: "s".into()
        }
    );
    let big = table(&[("c1", i32::MAX), ("c2", 1)], 0);
    assert_eq!(
        imp().contributions(&list, &big).unwrap_err(),
        AssemblyError::SizeOverflow
    );
}

#[test]
fn dia_3_invariant_violations_are_errors() {
    // SPEC DIA-3, DEP-21: a success whose contributions do not sum to the final size is an
    // `InvalidArgument` error, one whose final size exceeds H or with a negative number an
    // `OutOfRange` error, each naming the broken rule.
    use hybrid_compaction_model::diagnostics::RecordRule;
    let (mut r, _) = ok(&pol(3), vec![(0, long_list())], vec![keep(&["s", "c"])]);
    let good = imp().diagnostics(&r, &pol(3)).unwrap();
    assert_eq!(good.final_size, 15);
    r.final_estimated_size = 16;
    let err = imp().diagnostics(&r, &pol(3)).unwrap_err();
    assert_eq!(
        err,
        AssemblyError::DiagnosticsRecord(RecordRule::ContributionSumMismatch)
    );
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    r.final_estimated_size = 101;
    let err = imp().diagnostics(&r, &pol(3)).unwrap_err();
    assert_eq!(
        err,
        AssemblyError::DiagnosticsRecord(RecordRule::FinalSizeOverHardLimit)
    );
    assert_eq!(err.kind(), ErrorKind::OutOfRange);
    // A different estimator than the one that produced the result breaks the sum.
    let (r, _) = ok(&pol(3), vec![(0, long_list())], vec![keep(&["s", "c"])]);
    let other = table_policy(100, 10, 1, 3, &[("s", 11), ("c", 5)]);
    assert_eq!(
        imp().diagnostics(&r, &other).unwrap_err(),
        AssemblyError::DiagnosticsRecord(RecordRule::ContributionSumMismatch)
    );
    // Negative attempt counts are refused too.
    let (mut r, _) = ok(&pol(3), vec![(0, long_list())], vec![keep(&["s", "c"])]);
    r.attempt_count = -1;
    let err = imp().diagnostics(&r, &pol(3)).unwrap_err();
    assert_eq!(
        err,
        AssemblyError::DiagnosticsRecord(RecordRule::NegativeNumber)
    );
    assert_eq!(err.kind(), ErrorKind::OutOfRange);
}

/// SPEC DIA-3, DIA-4, DEP-21: a record given field by field is refused with its broken rule,
/// whose kind is the one the reference implementation's tests pin (negative contribution size,
/// entry count 0, -1 or `i32::MIN`, an undefined category or unit: `OutOfRange`; a repeated
/// category: `InvalidArgument`) or the one DEP-21 chooses.
#[test]
fn dia_3_dia_4_dep_21_a_refused_record_names_its_rule_and_kind() {
    use hybrid_compaction_model::diagnostics::{ContributionFields, RecordFields, RecordRule};
    let contribution = |category, size, entry_count| ContributionFields {
        category,
        size,
        entry_count,
    };
    let success = RecordFields {
        outcome: Some(CompactionOutcome::WithinLimit),
        measurement_unit: Some(MeasurementUnit::Utf8Bytes),
        original_size: 10,
        final_size: 10,
        trigger_threshold: 80,
        hard_limit: 100,
        attempt_count: 0,
        category_contributions: vec![contribution(Some(Category::ConversationalMessage), 10, 1)],
        final_sequence_valid: Some(true),
    };
    let termination = RecordFields {
        outcome: Some(CompactionOutcome::Irreducible),
        category_contributions: Vec::new(),
        final_sequence_valid: None,
        final_size: 120,
        ..success.clone()
    };
    assert_eq!(imp().validate_record(&success), Ok(()));
    assert_eq!(imp().validate_record(&termination), Ok(()));
    let with = |base: &RecordFields, edit: &dyn Fn(&mut RecordFields)| {
        let mut r = base.clone();
        edit(&mut r);
        r
    };
    let cases: Vec<(RecordFields, RecordRule, ErrorKind)> = vec![
        // Pinned by the reference implementation's tests.
        (
            with(&success, &|r| r.category_contributions[0].size = -1),
            RecordRule::NegativeContributionSize,
            ErrorKind::OutOfRange,
        ),
        (
            with(&success, &|r| r.category_contributions[0].entry_count = 0),
            RecordRule::EntryCountBelowOne,
            ErrorKind::OutOfRange,
        ),
        (
            with(&success, &|r| r.category_contributions[0].entry_count = -1),
            RecordRule::EntryCountBelowOne,
            ErrorKind::OutOfRange,
        ),
        (
            with(&success, &|r| {
                r.category_contributions[0].entry_count = i32::MIN
            }),
            RecordRule::EntryCountBelowOne,
            ErrorKind::OutOfRange,
        ),
        (
            with(&success, &|r| r.category_contributions[0].category = None),
            RecordRule::UndefinedCategory,
            ErrorKind::OutOfRange,
        ),
        (
            with(&success, &|r| r.measurement_unit = None),
            RecordRule::UndefinedUnit,
            ErrorKind::OutOfRange,
        ),
        (
            with(&termination, &|r| r.measurement_unit = None),
            RecordRule::UndefinedUnit,
            ErrorKind::OutOfRange,
        ),
        (
            with(&success, &|r| {
                r.final_size = 20;
                r.category_contributions.push(contribution(
                    Some(Category::ConversationalMessage),
                    10,
                    1,
                ));
            }),
            RecordRule::DuplicateCategory,
            ErrorKind::InvalidArgument,
        ),
        // DEP-21: the same conventions where the reference's tests pin nothing.
        (
            with(&success, &|r| r.outcome = None),
            RecordRule::UndefinedOutcome,
            ErrorKind::OutOfRange,
        ),
        (
            with(&success, &|r| r.trigger_threshold = -1),
            RecordRule::NegativeNumber,
            ErrorKind::OutOfRange,
        ),
        (
            with(&success, &|r| {
                r.final_size = 101;
                r.category_contributions[0].size = 101;
            }),
            RecordRule::FinalSizeOverHardLimit,
            ErrorKind::OutOfRange,
        ),
        (
            with(&success, &|r| r.final_size = 11),
            RecordRule::ContributionSumMismatch,
            ErrorKind::InvalidArgument,
        ),
        (
            with(&success, &|r| r.final_sequence_valid = Some(false)),
            RecordRule::SuccessSequenceValidity,
            ErrorKind::InvalidArgument,
        ),
        (
            with(&termination, &|r| {
                r.category_contributions = success.category_contributions.clone()
            }),
            RecordRule::TerminationContributions,
            ErrorKind::InvalidArgument,
        ),
        (
            with(&termination, &|r| r.final_sequence_valid = Some(true)),
            RecordRule::TerminationSequenceValidity,
            ErrorKind::InvalidArgument,
        ),
    ];
    for (fields, rule, kind) in cases {
        let err = imp().validate_record(&fields).unwrap_err();
        assert_eq!(err, AssemblyError::DiagnosticsRecord(rule), "{fields:?}");
        assert_eq!(err.kind(), kind, "{rule}");
    }
}

#[test]
fn dia_1_record_has_no_string_fields() {
    // SPEC DIA-1: the debug rendering carries no entry id or message text.
    let list = vec![sys("secret-id", "secret text"), conv("c", "x")];
    let p = text_policy(100, 10, 1, 1);
    let mut provider = StaticProvider::new(list);
    let mut reducer = ScriptedReducer::new(vec![]);
    let r = imp()
        .assemble(&p, &mut provider, &mut reducer, &CancellationToken::new())
        .unwrap();
    let d = imp().diagnostics(&r, &p).unwrap();
    let text = format!("{d:?}");
    assert!(!text.contains("secret"));
}

// ------------------------------------------------------------- boundaries ----

#[test]
fn asm_7_exactly_at_the_threshold_is_not_below_trigger() {
    // SPEC POL-4 / ASM-7 (DEP-2): e = T = 90 → the reducer runs even though the list fits.
    let p = table_policy(100, 10, 1, 3, &[("s", 10), ("c", 80)]);
    let (r, rec) = ok(
        &p,
        vec![(0, vec![sys("s", "x"), conv("c", "x")])],
        vec![ScriptStep::Echo],
    );
    assert_eq!(rec.log.len(), 1);
    assert_eq!(r.outcome, Outcome::WithinLimit);
    assert_eq!(r.attempt_count, 1);
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, SNAP]);
    // One below: the below-trigger path, no reducer.
    let p = table_policy(100, 10, 1, 3, &[("s", 10), ("c", 79)]);
    let (r, rec) = ok(
        &p,
        vec![(0, vec![sys("s", "x"), conv("c", "x")])],
        vec![ScriptStep::Echo],
    );
    assert!(rec.log.is_empty());
    assert_eq!(r.stages, vec![SNAP, SNAP]);
}

#[test]
fn asm_7_hard_limit_boundaries_fit() {
    // "fits" means size <= H (SPEC ASM-3): a current list of exactly H is preserved ...
    let p = table_policy(100, 10, 1, 3, &[("s", 10), ("c", 90)]);
    let (r, _) = ok(
        &p,
        vec![(0, vec![sys("s", "x"), conv("c", "x")])],
        vec![ScriptStep::Echo],
    );
    assert_eq!(r.outcome, Outcome::WithinLimit);
    assert_eq!(r.final_estimated_size, 100);
    // ... a proposal of exactly H is accepted ...
    let p = table_policy(100, 10, 1, 3, &[("s", 10), ("a", 50), ("b", 1), ("c", 90)]);
    let list = vec![
        sys("s", "x"),
        conv("a", "x"),
        conv("b", "x"),
        conv("c", "x"),
    ];
    let (r, _) = ok(&p, vec![(0, list)], vec![keep(&["s", "c"])]);
    assert_eq!(r.outcome, Outcome::Reduced);
    assert_eq!(r.final_estimated_size, 100);
    assert_eq!(r.attempt_count, 1, "accepted at once, no second attempt");
    assert_eq!(r.stages, vec![SNAP, RA, SNAP, SNAP]);
    // ... and a fallback candidate of exactly H is accepted.
    let p = table_policy(100, 10, 1, 3, &[("s", 10), ("o", 10), ("a", 50), ("c", 80)]);
    let list = vec![sys("s", "x"), opt("o", "x"), conv("a", "x"), conv("c", "x")];
    let (r, _) = ok(&p, vec![(0, list)], vec![keep(&["c"])]);
    assert_eq!(r.outcome, Outcome::PreservationFallback);
    assert_eq!(finals(&r), s(&["s", "o", "c"]));
    assert_eq!(r.final_estimated_size, 100);
    // One more unit and the optional context is dropped; required-only = 91.
    let p = table_policy(100, 10, 1, 3, &[("s", 11), ("o", 10), ("a", 50), ("c", 80)]);
    let list = vec![sys("s", "x"), opt("o", "x"), conv("a", "x"), conv("c", "x")];
    let (r, _) = ok(&p, vec![(0, list)], vec![keep(&["c"])]);
    assert_eq!(finals(&r), s(&["s", "c"]));
    assert_eq!(r.final_estimated_size, 91);
}

// ------------------------------------------------------------- properties ----

use proptest::prelude::*;

/// A deterministic, seed-driven reducer: at attempt `n` keeps request entry `i` iff bit
/// `(i + 3n) % 64` of the seed is set, and appends a summary when bit 63 is set.
struct SeedReducer {
    seed: u64,
    calls: usize,
}

impl Reducer for SeedReducer {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        self.calls += 1;
        let n = request.attempt_number as usize;
        let mut out: Vec<Entry> = request
            .entries
            .iter()
            .enumerate()
            .filter(|(i, _)| self.seed >> ((i + 3 * n) % 64) & 1 == 1)
            .map(|(_, e)| e.clone())
            .collect();
        if self.seed >> 63 & 1 == 1 {
            out.push(summary(&format!("sum{n}"), "s"));
        }
        Ok(Some(out))
    }
}

/// A random entry list with unique ids `e0..`: conversation, system, optional, complete tool
/// exchanges (call + result, sometimes reference-bearing), occasional defective tool entries,
/// references and recovered bodies over a few contents.
fn arb_list() -> impl Strategy<Value = Vec<Entry>> {
    proptest::collection::vec((0u8..12, 0u8..3, 0u8..3), 0..8).prop_map(|items| {
        let mut out = Vec::new();
        let mut next = 0usize;
        let mut fresh = || {
            next += 1;
            format!("e{}", next - 1)
        };
        for (k, (tag, a, b)) in items.into_iter().enumerate() {
            let ca = format!("c{k}");
            match tag {
                0 => out.push(sys(&fresh(), "s")),
                1 | 2 => out.push(opt(&fresh(), "o")),
                3 | 4 => {
                    out.push(call(&fresh(), &[&ca]));
                    out.push(result(&fresh(), &[&ca]));
                }
                5 => {
                    out.push(call(&fresh(), &[&ca]));
                    out.push(ref_result(&fresh(), &ca, &format!("body{b}")));
                }
                // Rare defects: an orphan call or an orphan result.
                6 if a == 0 => out.push(call(&fresh(), &[&ca])),
                6 if a == 1 => out.push(result(&fresh(), &[&format!("zz{b}")])),
                7 => out.push(aref(&fresh(), &format!("body{a}"))),
                8 | 9 => out.push(seg(&fresh(), &format!("body{b}"))),
                _ => out.push(conv(&fresh(), "m")),
            }
        }
        out
    })
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// SPEC ASM-3, ASM-11, ASM-14, DIA-3 .. DIA-6 over random lists, sizes, budgets, version
    /// schedules and reducers: never an error on well-formed input; every result satisfies the
    /// result invariants; diagnostics build and contributions sum to the final size.
    #[test]
    fn asm_3_invariants_hold_for_random_runs(
        lists in proptest::collection::vec(arb_list(), 1..4),
        bumps in proptest::collection::vec(0i64..2, 4),
        sizes in proptest::collection::vec(0i32..60, 16),
        h in 20i32..200,
        margin_pct in 1i32..99,
        m in 1i32..4,
        retention in 1i32..3,
        seed in any::<u64>(),
    ) {
        let margin = (h * margin_pct / 100).clamp(1, h - 1);
        let table_sizes: Vec<(String, i32)> =
            sizes.iter().enumerate().map(|(i, s)| (format!("e{i}"), *s)).collect();
        let refs: Vec<(&str, i32)> = table_sizes.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let p = table_policy(h, margin, retention, m, &refs);
        let mut version = 0i64;
        let steps: Vec<(i64, Vec<Entry>)> = lists
            .into_iter()
            .enumerate()
            .map(|(k, l)| {
                version += if k == 0 { 0 } else { bumps[k % bumps.len()] };
                (version, l)
            })
            .collect();
        let mut provider = ScriptedProvider::new(steps);
        let mut reducer = SeedReducer { seed, calls: 0 };
        let r = imp().assemble(&p, &mut provider, &mut reducer, &CancellationToken::new()).unwrap();
        assert_invariants(&r, m);
        prop_assert_eq!(r.stages[0], SNAP);
        let ra = r.stages.iter().filter(|s| **s == RA).count();
        prop_assert_eq!(ra, reducer.calls, "ASM-14: one ReducerAttempt per invocation");
        let restarts = r.stages.iter().filter(|s| **s == RESTART).count();
        prop_assert!(r.attempt_count as usize >= ra);
        prop_assert!(r.attempt_count as usize <= ra + restarts, "ASM-11");
        prop_assert_eq!(
            r.stages.iter().filter(|s| **s == SNAP).count(),
            provider.captures(),
            "ASM-14: one SnapshotCaptured per capture"
        );
        let d = imp().diagnostics(&r, &p).unwrap();
        if r.outcome.is_success() {
            let total: i32 = d.category_contributions.iter().map(|c| c.size).sum();
            prop_assert_eq!(total, r.final_estimated_size);
            prop_assert_eq!(d.final_sequence_valid, Some(true));
        } else {
            prop_assert!(d.category_contributions.is_empty());
        }
    }
}

// ------------------------------------------------------------ ENT-8, DEP-23 ----

/// A block of `kind` with JSON `json` (its type read from the JSON's `type`).
fn block(kind: BlockKind, json: &str) -> Part {
    let ty = json
        .split("\"type\":\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or("other");
    Part::block(kind, ty, json)
}

const IMAGE: &str = r#"{"image_url":{"url":"https://example.org/ö.png"},"type":"image_url"}"#;
const THINKING: &str = r#"{"signature":"c2ln","thinking":"Let me see.","type":"thinking"}"#;

#[test]
fn ent_8_dep_23_blocks_are_sized_by_their_json_and_compared_exactly() {
    // SPEC ENT-8, EST-2: a block measures the bytes of its JSON; it adds nothing to the text
    // (ENT-3), so EST-4 counts the text alone.
    let with_image = Message::new(
        "user",
        vec![
            Part::text("Is this a cat? "),
            block(BlockKind::Media, IMAGE),
        ],
    );
    let e = Entry::new("u", EntryKind::ConversationalMessage, with_image.clone()).unwrap();
    let len = |s: &str| i32::try_from(s.len()).expect("short");
    let text = len("Is this a cat? ");
    assert_eq!(imp().context_estimator().estimate(&e), text + len(IMAGE));
    assert_eq!(imp().text_estimator().estimate(&e), text);
    assert_eq!(with_image.text_content(), "Is this a cat? ");
    // SPEC VER-2: blocks equal by kind, type, JSON text and tokens.
    assert!(imp().structurally_equal(&with_image, &with_image.clone()));
    let other_json = Message::new(
        "user",
        vec![
            Part::text("Is this a cat? "),
            block(BlockKind::Media, &IMAGE.replace("ö", "o")),
        ],
    );
    assert!(!imp().structurally_equal(&with_image, &other_json));
    let mut counted = with_image.clone();
    if let Part::Block(b) = &mut counted.parts[1] {
        b.tokens = Some(85);
    }
    assert!(!imp().structurally_equal(&with_image, &counted));
    let other_kind = Message::new(
        "user",
        vec![
            Part::text("Is this a cat? "),
            block(BlockKind::Other, IMAGE),
        ],
    );
    assert!(!imp().structurally_equal(&with_image, &other_kind));
    // SPEC CLS-2: `block:`+type+`:`+JSON in the rendering.
    let entries = imp()
        .adapt(
            std::slice::from_ref(&with_image),
            &mut *imp().content_hash_classifier(),
        )
        .unwrap();
    let rendering = format!("user\u{1F}text:Is this a cat? \u{1E}block:image_url:{IMAGE}\u{1E}");
    assert_eq!(
        entries[0].id().as_str(),
        format!("{}:0", sha_hex(&rendering))
    );
    assert_eq!(entries[0].kind(), EntryKind::ConversationalMessage);
}

#[test]
fn ent_8_ver_1_brg_3_a_reducer_cannot_make_up_provider_blocks() {
    // SPEC VER-1 check 2: a new entry holding a block only the provider makes is forged; media
    // may be kept in a summary.
    let policy = context_policy(100_000, 10, 1, 1);
    let original = vec![sys("s", "rules"), conv("a", "old"), conv("b", "new")];
    let forged = Entry::new(
        "sum",
        EntryKind::Summary,
        Message::new(
            "assistant",
            vec![Part::text("so far"), block(BlockKind::Reasoning, THINKING)],
        ),
    )
    .unwrap();
    let r = imp()
        .verify(
            &original,
            &[original[0].clone(), forged, original[2].clone()],
            &policy,
        )
        .unwrap();
    assert_eq!(
        r.rejection_reasons,
        vec![RejectionReason::ForgedStructuralEntry]
    );
    let media = Entry::new(
        "sum",
        EntryKind::Summary,
        Message::new(
            "user",
            vec![Part::text("so far"), block(BlockKind::Media, IMAGE)],
        ),
    )
    .unwrap();
    let r = imp()
        .verify(
            &original,
            &[original[0].clone(), media, original[2].clone()],
            &policy,
        )
        .unwrap();
    assert_eq!(r.outcome, VerificationOutcome::Accepted, "{r:?}");
    // SPEC BRG-3: an unmatched returned message with such a block is fabricated content.
    let list = vec![sys("s", "x"), conv("c", "y")];
    let thinking = Message::new("assistant", vec![block(BlockKind::Reasoning, THINKING)]);
    let mut b = bridge(vec![UpstreamStep::Return(vec![
        Message::text("system", "x"),
        thinking,
    ])]);
    assert_eq!(
        reduce_once(&mut b, &list).unwrap_err(),
        ReducerError::Contract(ContractViolation::FabricatedToolContent { index: 1 })
    );
    let image = Message::new(
        "user",
        vec![Part::text("kept"), block(BlockKind::Media, IMAGE)],
    );
    let mut b = bridge(vec![UpstreamStep::Return(vec![
        Message::text("system", "x"),
        image.clone(),
    ])]);
    let out = reduce_once(&mut b, &list).unwrap().unwrap();
    assert_eq!(
        (out[1].kind(), out[1].message()),
        (EntryKind::Summary, &image)
    );
}
