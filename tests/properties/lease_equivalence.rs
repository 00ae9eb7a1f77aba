//! Non-retransmission leases: the concurrent implementation (`hybrid_compaction::lease`) against
//! the sequential specification (`hybrid_compaction_spec::lease`), plus scenario tests of
//! every lease clause (SPEC LSE-1 .. LSE-10).
//!
//! * `coordinator_ops_match_sequential_spec` (proptest): random sequences of reserve / complete /
//!   release / revision / filtered capture on one run, several leases and digests (one counter
//!   started near `u64::MAX` to reach the overflow rule), applied to both; every result and the
//!   whole ledger must be equal after every step.
//! * `run_scope_ops_match_sequential_spec` (proptest): the same with begin / ensure / end of run
//!   scopes, so operations without a run are exercised too.
//! * Scenario tests whose expected values are derived by hand from the SPEC (LSE-1 .. LSE-10).
//!
//! Case counts: 256 by default; set `PROPTEST_CASES` for deep runs (e.g. 20000).

#![allow(
    clippy::cast_possible_truncation,
    reason = "test data: small generated counts"
)]

use std::cell::RefCell;
use std::rc::Rc;

use hybrid_compaction::lease::{FilteringProvider, LeaseError, LeaseId, Run, RunScope};
use hybrid_compaction_model::artifact::{ArtifactReference, Digest};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryKind, RecoverableSegment};
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::snapshot::{
    Snapshot, SnapshotError, SnapshotProvider, StaticProvider,
};
use hybrid_compaction_spec::lease::{
    filter_capture, CaptureRecord, Flow, Gate, GateStep, RunState,
};
use proptest::prelude::*;

const DIGESTS: usize = 4;
const LEASES: u64 = 3;
/// Digest 3's counter starts here in the single-run property, so overflow is reachable.
const NEAR_MAX: u64 = u64::MAX - 3;

fn body(i: usize) -> String {
    format!("recovered body {i}")
}

fn digest(i: usize) -> Digest {
    Digest::of(&body(i))
}

fn segment(i: usize) -> Entry {
    Entry::recoverable(
        format!("seg-{i}"),
        RecoverableSegment {
            reference: ArtifactReference::to_content(&body(i)),
            body: body(i),
        },
    )
    .unwrap()
}

fn message(id: &str) -> Entry {
    Entry::new(
        id,
        EntryKind::ConversationalMessage,
        Message::text("user", id),
    )
    .unwrap()
}

/// An inner snapshot: version `v`, a conversational message, then the segments in `mask`.
fn history(version: i64, mask: u8) -> Snapshot {
    let mut entries = vec![message("m")];
    for i in 0..DIGESTS {
        if mask & (1 << i) != 0 {
            entries.push(segment(i));
        }
    }
    Snapshot::new(version, entries).unwrap()
}

fn ids(s: &Snapshot) -> Vec<String> {
    s.entries()
        .iter()
        .map(|e| e.id().as_str().to_owned())
        .collect()
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

/// A provider whose next snapshot the test sets before each capture.
#[derive(Clone, Default)]
struct Settable(Rc<RefCell<Option<Snapshot>>>);

impl SnapshotProvider for Settable {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        Ok(self.0.borrow().clone().expect("set before capture"))
    }
}

#[derive(Debug, Clone)]
enum Op {
    Reserve(usize, u64),
    Complete(u64, u8),
    Release(u64),
    Revision(usize),
    Capture(u64, i64, u8),
}

/// Coordinator operations without captures.
fn ledger_op() -> impl Strategy<Value = Op> {
    let d = 0..DIGESTS;
    let l = 0..LEASES;
    prop_oneof![
        4 => (d.clone(), l.clone()).prop_map(|(d, l)| Op::Reserve(d, l)),
        2 => (l.clone(), any::<u8>()).prop_map(|(l, m)| Op::Complete(l, m)),
        2 => l.prop_map(Op::Release),
        1 => d.prop_map(Op::Revision),
    ]
}

/// Coordinator operations and filtered captures.
fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => ledger_op(),
        1 => (0..LEASES, 0..3i64, any::<u8>()).prop_map(|(l, v, m)| Op::Capture(l, v, m)),
    ]
}

/// A step of the run-scope property: a coordinator operation, or begin (0) / ensure (1) /
/// end (2) of a run scope.
#[derive(Debug, Clone)]
enum ScopeOp {
    Core(Op),
    Scope(u8),
}

fn scope_op() -> impl Strategy<Value = ScopeOp> {
    prop_oneof![
        5 => ledger_op().prop_map(ScopeOp::Core),
        2 => (0..3u8).prop_map(ScopeOp::Scope),
    ]
}

fn forwarded(mask: u8) -> Vec<Digest> {
    (0..DIGESTS)
        .filter(|i| mask & (1 << i) != 0)
        .map(digest)
        .collect()
}

/// The observable result of one step, for equality.
#[derive(Debug, PartialEq)]
enum Obs {
    Bool(Result<bool, LeaseError>),
    Unit(Result<(), LeaseError>),
    Rev(Result<u64, LeaseError>),
    Capture(Result<(i64, Vec<String>), SnapshotError>),
}

fn assert_same_ledger(spec: &RunState, run: &Run) {
    let (delivered, reserved) = run.state();
    assert_eq!(&delivered, spec.delivered(), "delivered sets differ");
    assert_eq!(&reserved, spec.reserved(), "reservations differ");
    for i in 0..DIGESTS {
        assert_eq!(
            run.revision(digest(i)),
            spec.revision(digest(i)),
            "revision {i}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// SPEC LSE-1 .. LSE-5, LSE-8: one run, every step equal to the sequential model.
    #[test]
    fn coordinator_ops_match_sequential_spec(ops in prop::collection::vec(op(), 1..40)) {
        let mut spec = RunState::new().with_revision(digest(3), NEAR_MAX);
        let mut spec_last: Vec<Option<CaptureRecord>> = vec![None; LEASES as usize];
        let run = Run::new().with_revision(digest(3), NEAR_MAX);
        let inner: Vec<Settable> = (0..LEASES).map(|_| Settable::default()).collect();
        let mut providers: Vec<FilteringProvider<Settable>> = (0..LEASES)
            .map(|l| FilteringProvider::new(inner[l as usize].clone(), run.clone(), LeaseId(l)))
            .collect();
        for op in ops {
            let (want, got) = match op {
                Op::Reserve(d, l) => (
                    Obs::Bool(spec.try_reserve(digest(d), LeaseId(l))),
                    Obs::Bool(run.try_reserve(digest(d), LeaseId(l))),
                ),
                Op::Complete(l, m) => (
                    Obs::Unit(spec.complete(LeaseId(l), &forwarded(m))),
                    Obs::Unit(run.complete(LeaseId(l), &forwarded(m))),
                ),
                Op::Release(l) => (
                    Obs::Unit(spec.release(LeaseId(l))),
                    Obs::Unit(run.release(LeaseId(l))),
                ),
                Op::Revision(d) => (
                    Obs::Rev(Ok(spec.revision(digest(d)))),
                    Obs::Rev(Ok(run.revision(digest(d)))),
                ),
                Op::Capture(l, v, m) => {
                    let snap = history(v, m);
                    let want = filter_capture(
                        &mut spec, LeaseId(l), spec_last[l as usize].as_ref(), snap.clone(),
                    )
                    .map(|(s, rec)| {
                        spec_last[l as usize] = Some(rec);
                        (s.version(), ids(&s))
                    });
                    *inner[l as usize].0.borrow_mut() = Some(snap);
                    let got = providers[l as usize].capture().map(|s| (s.version(), ids(&s)));
                    (Obs::Capture(want), Obs::Capture(got))
                }
            };
            prop_assert_eq!(want, got);
            assert_same_ledger(&spec, &run);
        }
    }

    /// SPEC LSE-2 .. LSE-6: run scopes of one flow (begin / ensure / end) and coordinator
    /// operations with and without an active run, every step equal to the sequential model.
    #[test]
    fn run_scope_ops_match_sequential_spec(ops in prop::collection::vec(scope_op(), 1..50)) {
        let mut spec = Flow::new();
        let mut scope = RunScope::new();
        // Some(previous) = this frame began a run; None = it reused the active one.
        let mut frames: Vec<Option<Option<Run>>> = Vec::new();
        for op in ops {
            match op {
                ScopeOp::Scope(kind) => match kind {
                    0 => {
                        spec.begin_run();
                        frames.push(Some(scope.replace(Some(Run::new()))));
                    }
                    1 => {
                        spec.ensure_run();
                        if scope.current().is_some() {
                            frames.push(None);
                        } else {
                            frames.push(Some(scope.replace(Some(Run::new()))));
                        }
                    }
                    _ => {
                        spec.end_scope();
                        if let Some(Some(previous)) = frames.pop() {
                            scope.replace(previous);
                        }
                    }
                },
                ScopeOp::Core(op) => {
                    let (want, got) = match op {
                        Op::Reserve(d, l) => (
                            Obs::Bool(spec.try_reserve(digest(d), LeaseId(l))),
                            Obs::Bool(scope.try_reserve(digest(d), LeaseId(l))),
                        ),
                        Op::Complete(l, m) => (
                            Obs::Unit(spec.complete(LeaseId(l), &forwarded(m))),
                            Obs::Unit(scope.complete(LeaseId(l), &forwarded(m))),
                        ),
                        Op::Release(l) => (
                            Obs::Unit(spec.release(LeaseId(l))),
                            Obs::Unit(scope.release(LeaseId(l))),
                        ),
                        Op::Revision(d) => (
                            Obs::Rev(spec.revision(digest(d))),
                            Obs::Rev(scope.revision(digest(d))),
                        ),
                        Op::Capture(..) => unreachable!("ledger_op makes no captures"),
                    };
                    prop_assert_eq!(want, got);
                }
            }
            prop_assert_eq!(spec.run().is_some(), scope.current().is_some());
            if let (Some(s), Some(r)) = (spec.run(), scope.current()) {
                assert_same_ledger(s, r);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scenario tests: expected values derived by hand from the SPEC (LSE-1 .. LSE-10).
// ---------------------------------------------------------------------------------------------

/// SPEC LSE-1, LSE-2: the four cases of TryReserve, on the model and the implementation.
#[test]
fn lse_1_lse_2_try_reserve_cases() {
    let (a, b) = (LeaseId(1), LeaseId(2));
    let d = digest(0);
    let mut spec = RunState::new();
    let run = Run::new();
    // Unclaimed -> reserve, revision 0 -> 1, true.
    assert_eq!(spec.try_reserve(d, a), Ok(true));
    assert_eq!(run.try_reserve(d, a), Ok(true));
    assert_eq!((spec.revision(d), run.revision(d)), (1, 1));
    // Same lease -> true, no revision change.
    assert_eq!(spec.try_reserve(d, a), Ok(true));
    assert_eq!(run.try_reserve(d, a), Ok(true));
    assert_eq!((spec.revision(d), run.revision(d)), (1, 1));
    // Another lease -> false, no change.
    assert_eq!(spec.try_reserve(d, b), Ok(false));
    assert_eq!(run.try_reserve(d, b), Ok(false));
    assert_eq!((spec.revision(d), run.revision(d)), (1, 1));
    // Delivered -> false for every lease, forever.
    spec.complete(a, &[d]).unwrap();
    run.complete(a, &[d]).unwrap();
    assert_eq!((spec.revision(d), run.revision(d)), (2, 2));
    for l in [a, b] {
        assert_eq!(spec.try_reserve(d, l), Ok(false));
        assert_eq!(run.try_reserve(d, l), Ok(false));
    }
    assert_eq!((spec.revision(d), run.revision(d)), (2, 2));
}

/// SPEC LSE-3: complete unreserves every digest of the lease, delivers only the forwarded
/// ones, bumps each once; unowned forwarded digests are ignored; other leases untouched.
#[test]
fn lse_3_dep_12_complete_delivers_only_forwarded_owned_digests() {
    let (a, b) = (LeaseId(1), LeaseId(2));
    let (d0, d1, d2) = (digest(0), digest(1), digest(2));
    for forward_owned_by_other in [false, true] {
        let mut spec = RunState::new();
        let run = Run::new();
        for (d, l) in [(d0, a), (d1, a), (d2, b)] {
            assert_eq!(spec.try_reserve(d, l), Ok(true));
            assert_eq!(run.try_reserve(d, l), Ok(true));
        }
        let fwd: Vec<Digest> = if forward_owned_by_other {
            vec![d0, d2]
        } else {
            vec![d0]
        };
        spec.complete(a, &fwd).unwrap();
        run.complete(a, &fwd).unwrap();
        // d0 delivered, d1 released (evicted body: released at commit, not delivered), d2
        // still held by b even when a "forwarded" it.
        assert!(spec.is_delivered(d0) && run.is_delivered(d0));
        assert!(!spec.is_delivered(d1) && !run.is_delivered(d1));
        assert!(!spec.is_delivered(d2) && !run.is_delivered(d2));
        assert_eq!(run.reserved_by(d2), Some(b));
        assert_eq!(spec.reserved_by(d2), Some(b));
        assert_eq!(
            [run.revision(d0), run.revision(d1), run.revision(d2)],
            [2, 2, 1]
        );
        assert_same_ledger(&spec, &run);
        // SPEC LSE-9: the released digest is reservable again by a later call.
        assert_eq!(run.try_reserve(d1, LeaseId(3)), Ok(true));
    }
}

/// SPEC LSE-4: release never delivers; without a run it is a no-op, while the other
/// operations are invalid-operation errors (SPEC LSE-2, LSE-3, LSE-5).
#[test]
fn lse_4_release_and_missing_run() {
    let a = LeaseId(7);
    let d = digest(1);
    let run = Run::new();
    assert_eq!(run.try_reserve(d, a), Ok(true));
    run.release(a).unwrap();
    assert!(!run.is_delivered(d));
    assert_eq!(run.reserved_by(d), None);
    assert_eq!(run.revision(d), 2);
    // Releasing again (nothing held) changes nothing.
    run.release(a).unwrap();
    assert_eq!(run.revision(d), 2);

    let scope = RunScope::new();
    let mut flow = Flow::new();
    assert_eq!(scope.release(a), Ok(()));
    assert_eq!(flow.release(a), Ok(()));
    assert_eq!(scope.try_reserve(d, a), Err(LeaseError::NoActiveRun));
    assert_eq!(flow.try_reserve(d, a), Err(LeaseError::NoActiveRun));
    assert_eq!(scope.complete(a, &[d]), Err(LeaseError::NoActiveRun));
    assert_eq!(flow.complete(a, &[d]), Err(LeaseError::NoActiveRun));
    assert_eq!(scope.revision(d), Err(LeaseError::NoActiveRun));
    assert_eq!(flow.revision(d), Err(LeaseError::NoActiveRun));
    assert_eq!(
        scope.enter(&CancellationToken::new()).map(|_| ()),
        Err(LeaseError::NoActiveRun)
    );
    assert_eq!(LeaseError::NoActiveRun.kind(), ErrorKind::InvalidOperation);
}

/// SPEC LSE-5: counters start at 0 and are overflow-checked; an overflowing complete changes
/// nothing at all (atomicity, SPEC LSE-3).
#[test]
fn lse_5_revision_overflow_is_an_error_and_changes_nothing() {
    let (a, d, e) = (LeaseId(1), digest(0), digest(1));
    assert_eq!(Run::new().revision(d), 0);
    assert_eq!(RunState::new().revision(d), 0);
    let mut spec = RunState::new().with_revision(d, u64::MAX - 1);
    let run = Run::new().with_revision(d, u64::MAX - 1);
    assert_eq!(spec.try_reserve(e, a), Ok(true));
    assert_eq!(run.try_reserve(e, a), Ok(true));
    assert_eq!(spec.try_reserve(d, a), Ok(true)); // MAX-1 -> MAX
    assert_eq!(run.try_reserve(d, a), Ok(true));
    assert_eq!(spec.complete(a, &[d, e]), Err(LeaseError::RevisionOverflow));
    assert_eq!(run.complete(a, &[d, e]), Err(LeaseError::RevisionOverflow));
    // Nothing changed: both still reserved, nothing delivered, counters as before.
    assert_eq!(run.reserved_by(e), Some(a));
    assert_eq!(run.revision(e), 1);
    assert!(!run.is_delivered(e));
    assert_same_ledger(&spec, &run);
    assert_eq!(LeaseError::RevisionOverflow.kind(), ErrorKind::Overflow);
    let fresh = Run::new().with_revision(d, u64::MAX);
    assert_eq!(fresh.try_reserve(d, a), Err(LeaseError::RevisionOverflow));
    assert_eq!(fresh.reserved_by(d), None);
}

/// SPEC LSE-6: begin installs a fresh run and restores the previous one; ensure reuses an
/// active run or begins a call-local one; forks share the run; separate runs are independent.
#[test]
fn lse_6_run_scopes_nest_and_restore() {
    let d = digest(2);
    let mut scope = RunScope::new();
    assert!(scope.current().is_none());
    {
        let mut outer = scope.begin_run();
        assert!(outer.began_run());
        let outer_run = outer.current().unwrap().clone();
        assert_eq!(outer.try_reserve(d, LeaseId(1)), Ok(true));
        {
            // Nested call in the same run: ensure reuses it and shares its state.
            let nested = outer.ensure_run();
            assert!(!nested.began_run());
            assert!(nested.current().unwrap().same_run(&outer_run));
            assert_eq!(nested.try_reserve(d, LeaseId(2)), Ok(false));
        }
        {
            // A child flow (another task of the same run) sees the same run.
            let child = outer.fork();
            assert_eq!(child.try_reserve(d, LeaseId(3)), Ok(false));
        }
        {
            // A nested begin is a fresh, independent run until it ends.
            let inner = outer.begin_run();
            assert!(!inner.current().unwrap().same_run(&outer_run));
            assert_eq!(inner.try_reserve(d, LeaseId(4)), Ok(true));
        }
        assert!(outer.current().unwrap().same_run(&outer_run));
        assert_eq!(outer.current().unwrap().reserved_by(d), Some(LeaseId(1)));
    }
    assert!(scope.current().is_none());
    {
        // Without an active run, ensure begins a call-local run that ends with the call.
        let local = scope.ensure_run();
        assert!(local.began_run());
        assert_eq!(local.try_reserve(d, LeaseId(1)), Ok(true));
    }
    assert!(scope.current().is_none());

    // The sequential model agrees on the same script.
    let mut flow = Flow::new();
    flow.begin_run();
    assert_eq!(flow.try_reserve(d, LeaseId(1)), Ok(true));
    flow.ensure_run();
    assert_eq!(flow.try_reserve(d, LeaseId(2)), Ok(false));
    flow.end_scope();
    flow.begin_run();
    assert_eq!(flow.try_reserve(d, LeaseId(4)), Ok(true));
    flow.end_scope();
    assert_eq!(flow.run().unwrap().reserved_by(d), Some(LeaseId(1)));
    flow.end_scope();
    assert!(flow.run().is_none());
    flow.ensure_run();
    assert!(flow.run().is_some());
    flow.end_scope();
    assert!(flow.run().is_none());
}

/// SPEC LSE-7: one call at a time per run; an already-cancelled token and a cancellation while
/// waiting both give `Cancelled` and leave no trace; runs never block each other.
#[test]
fn lse_7_dep_11_gate_serializes_calls_and_cancellation_leaves_no_trace() {
    // Sequential model of one gate step.
    let mut gate = Gate::default();
    assert_eq!(gate.step(false), Ok(GateStep::Admitted));
    assert_eq!(gate.step(false), Ok(GateStep::Wait));
    assert_eq!(gate.step(true), Err(LeaseError::Cancelled));
    assert!(gate.is_occupied());
    gate.leave();
    assert_eq!(gate.step(true), Err(LeaseError::Cancelled));
    assert!(!gate.is_occupied(), "a cancelled step took the slot");

    let run = Run::new();
    assert_eq!(
        run.enter(&CancellationToken::cancelled()).map(|_| ()),
        Err(LeaseError::Cancelled)
    );
    assert!(!run.gate_occupied());
    let first = run.enter(&CancellationToken::new()).unwrap();
    assert_eq!(first.lease(), LeaseId(0));
    assert!(run.gate_occupied());
    // Another run is never blocked by this one.
    let other = Run::new();
    let other_slot = other.enter(&CancellationToken::new()).unwrap();
    other_slot.release().unwrap();

    // A waiter cancelled while waiting leaves no lease, no slot, no reservation.
    let token = CancellationToken::new();
    let waiter = {
        let (run, token) = (run.clone(), token.clone());
        std::thread::spawn(move || run.enter(&token).map(|s| s.lease()))
    };
    std::thread::sleep(std::time::Duration::from_millis(50));
    run.cancel_and_wake(&token);
    assert_eq!(waiter.join().unwrap(), Err(LeaseError::Cancelled));
    assert!(run.gate_occupied(), "the holder still holds the slot");
    first.release().unwrap();
    assert!(!run.gate_occupied());
    // Leases are per-run counters: the cancelled waiter consumed none.
    let second = run.enter(&CancellationToken::new()).unwrap();
    assert_eq!(second.lease(), LeaseId(1));
    drop(second);
    assert!(!run.gate_occupied(), "dropping a slot leaves the gate");
}

fn with_segments(segs: &[usize]) -> StaticProvider {
    let mut entries = vec![message("m")];
    entries.extend(segs.iter().map(|i| segment(*i)));
    StaticProvider::new(entries)
}

/// SPEC LSE-8: the effective-version rule: first capture 0; own reservations never bump it;
/// another lease releasing a filtered body bumps it (and the body is then kept); an inner
/// version change bumps it.
#[test]
fn lse_8_dep_13_effective_version_rule() {
    let run = Run::new();
    let (a, b) = (LeaseId(1), LeaseId(2));
    let d = digest(0);
    let mut pa = FilteringProvider::new(with_segments(&[0]), run.clone(), a);
    let s = pa.capture().unwrap();
    assert_eq!(
        (s.version(), ids(&s)),
        (0, vec!["m".into(), "seg-0".into()])
    );
    let s = pa.capture().unwrap();
    assert_eq!(s.version(), 0, "own reservation caused a restart");
    assert_eq!(pa.last_signature().unwrap(), &[(d, 1)]);

    let mut pb = FilteringProvider::new(with_segments(&[0]), run.clone(), b);
    let s = pb.capture().unwrap();
    assert_eq!(
        (s.version(), ids(&s)),
        (0, vec!["m".into()]),
        "held by a: filtered"
    );
    let s = pb.capture().unwrap();
    assert_eq!(s.version(), 0, "nothing changed");
    run.release(a).unwrap(); // revision 2
    let s = pb.capture().unwrap(); // reserves: revision 3
    assert_eq!(
        (s.version(), ids(&s)),
        (1, vec!["m".into(), "seg-0".into()])
    );
    assert_eq!(pb.last_signature().unwrap(), &[(d, 3)]);

    // Same rule on the sequential model.
    let mut spec = RunState::new();
    let inner = history(0, 0b1);
    let (s1, r1) = filter_capture(&mut spec, a, None, inner.clone()).unwrap();
    assert_eq!(s1.version(), 0);
    let (s2, r2) = filter_capture(&mut spec, a, Some(&r1), inner.clone()).unwrap();
    assert_eq!(s2.version(), 0);
    let (s3, _) = filter_capture(&mut spec, a, Some(&r2), history(5, 0b1)).unwrap();
    assert_eq!(
        s3.version(),
        1,
        "inner version change must bump the effective version"
    );
    let (sb, rb) = filter_capture(&mut spec, b, None, inner.clone()).unwrap();
    assert_eq!(ids(&sb), vec!["m".to_owned()]);
    spec.release(a).unwrap();
    let (sb2, _) = filter_capture(&mut spec, b, Some(&rb), inner).unwrap();
    assert_eq!((sb2.version(), ids(&sb2).len()), (1, 2));

    // The overflow error travels through capture as a snapshot error of kind Overflow.
    let run = Run::new().with_revision(digest(1), u64::MAX);
    let mut p = FilteringProvider::new(with_segments(&[1]), run, a);
    let err = p.capture().unwrap_err();
    assert_eq!(err, SnapshotError::Lease(LeaseError::RevisionOverflow));
    assert_eq!(err.kind(), ErrorKind::Overflow);
}

/// SPEC LSE-9, LSE-10: the per-call protocol end to end in one run: a delivered body is
/// filtered out of every later call; a failed call (dropped slot) gives its reservation back
/// so the next call delivers the body; a reserved-but-evicted body is released at commit.
#[test]
fn lse_9_lse_10_at_most_once_per_run_and_failed_calls_give_back() {
    let mut scope = RunScope::new();
    let mut outer = scope.begin_run();
    let d0 = digest(0);
    let d1 = digest(1);

    // Call 1 fails after capturing (the slot is dropped unfinished): reservation given back.
    {
        let call = outer.ensure_run();
        let slot = call.enter(&CancellationToken::new()).unwrap();
        let mut p = slot.filtering_provider(with_segments(&[0]));
        assert_eq!(p.capture().unwrap().entries().len(), 2);
        assert_eq!(call.current().unwrap().reserved_by(d0), Some(slot.lease()));
    }
    assert_eq!(outer.current().unwrap().reserved_by(d0), None);
    assert!(!outer.current().unwrap().gate_occupied());

    // Call 2 sees both bodies, forwards d0 and evicts d1: d0 delivered, d1 released.
    {
        let call = outer.ensure_run();
        let slot = call.enter(&CancellationToken::new()).unwrap();
        let mut p = slot.filtering_provider(with_segments(&[0, 1]));
        assert_eq!(p.capture().unwrap().entries().len(), 3);
        slot.complete(&[d0]).unwrap();
    }
    let run = outer.current().unwrap();
    assert!(run.is_delivered(d0));
    assert!(!run.is_delivered(d1));

    // Call 3: d0 never reaches the provider again in this run; d1 is reservable again.
    {
        let call = outer.ensure_run();
        let slot = call.enter(&CancellationToken::new()).unwrap();
        let mut p = slot.filtering_provider(with_segments(&[0, 1]));
        let s = p.capture().unwrap();
        assert_eq!(ids(&s), vec!["m".to_owned(), "seg-1".to_owned()]);
        slot.complete(&[d1]).unwrap();
    }

    // A new outer run starts empty: d0 may be delivered there once more.
    drop(outer);
    let fresh = scope.begin_run();
    assert_eq!(fresh.try_reserve(d0, LeaseId(0)), Ok(true));
}
