//! loom model (d): mutation-restart (SPEC ASM-5, ASM-6, ASM-7, ASM-9, ASM-10, ASM-11, ASM-12,
//! LSE-8, LSE-10). See `docs/LOOM.md`.
//!
//! A writer thread appends entries to a shared history, bumping its version each time, while the
//! engine's assembler (`hybrid_compaction::engine::assemble::assemble`) runs one provider call:
//! gate entered, lease-filtering provider over the shared history, assembly, commit. For every
//! interleaving:
//! * the outcome is a success or `ConcurrentMutationLimit` (nothing here can be `Irreducible`:
//!   every entry is conversational and the required entry always fits, SPEC ASM-12);
//! * `AttemptCount <= MaximumCompactionAttempts` (SPEC ASM-11);
//! * a success reports the version of the *last* capture, and its final entries are drawn from,
//!   and verify against, that last captured history (never a stale one; SPEC ASM-5, ASM-13);
//! * the result equals what the executable model (`hybrid_compaction_spec::assemble`)
//!   returns when replaying the very captures the engine observed, so the outcome is
//!   `ConcurrentMutationLimit` exactly when the SPEC says so;
//! * if no capture saw a version change, there is no restart and no `ConcurrentMutationLimit`.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p hybrid-compaction-loom -- --nocapture`.
#![cfg(loom)]

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc as StdArc;

use hybrid_compaction::engine::assemble::assemble as engine_assemble;
use hybrid_compaction::lease::Run;
use hybrid_compaction_loom::{explore, recovered_body};
use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::assembly::{
    AssemblyResult, Outcome, Reducer, ReducerError, ReductionRequest, Stage,
};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::estimator::ConstantEstimator;
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::snapshot::{
    ScriptedProvider, Snapshot, SnapshotError, SnapshotProvider,
};
use hybrid_compaction_spec::assemble::assemble as model_assemble;
use hybrid_compaction_spec::verify::verify as model_verify;
use loom::sync::{Arc, Mutex};
use loom::thread;

/// The shared, mutable history: `(version, entries)`.
#[derive(Clone)]
struct SharedHistory(Arc<Mutex<(i64, Vec<Entry>)>>);

impl SnapshotProvider for SharedHistory {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        let h = self.0.lock().unwrap();
        Snapshot::new(h.0, h.1.clone())
    }
}

/// Records every snapshot handed to the assembler.
struct Recorder<P> {
    inner: P,
    seen: Vec<(i64, Vec<Entry>)>,
}

impl<P: SnapshotProvider> SnapshotProvider for Recorder<P> {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        let s = self.inner.capture()?;
        self.seen.push((s.version(), s.entries().to_vec()));
        Ok(s)
    }
}

/// Proposes the recovered bodies plus the last entry of the working list (the one retained
/// recency unit): exactly the required entries, so every proposal verifies.
struct KeepRequired;

impl Reducer for KeepRequired {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        let n = request.entries.len();
        let keep = request
            .entries
            .iter()
            .enumerate()
            .filter(|(i, e)| e.kind() == EntryKind::RecoverableContextSegment || *i + 1 == n)
            .map(|(_, e)| e.clone())
            .collect();
        Ok(Some(keep))
    }
}

fn message(k: usize) -> Entry {
    Entry::new(
        format!("m{k}"),
        EntryKind::ConversationalMessage,
        Message::text("user", format!("message {k}")),
    )
    .unwrap()
}

/// Every entry measures 1; hard limit 4, threshold 3, one retained recency unit.
fn policy(max_attempts: i32) -> Policy {
    Policy::new(PolicySpec {
        hard_limit: 4,
        trigger_margin: 1,
        recent_message_retention_count: 1,
        maximum_compaction_attempts: max_attempts,
        preservation_label: Some("loom".into()),
        preservation_version: 1,
        estimator: Some(StdArc::new(ConstantEstimator(1))),
    })
    .unwrap()
}

fn outcome_bit(o: Outcome) -> usize {
    1 << (o as usize)
}

fn check_result(policy: &Policy, seen: &[(i64, Vec<Entry>)], result: &AssemblyResult) {
    let m = policy.maximum_compaction_attempts();
    assert!(
        result.outcome.is_success() || result.outcome == Outcome::ConcurrentMutationLimit,
        "unexpected outcome {:?}",
        result.outcome
    );
    assert!(
        result.attempt_count <= m,
        "SPEC ASM-11: {} > {m}",
        result.attempt_count
    );
    let captures = result
        .stages
        .iter()
        .filter(|s| **s == Stage::SnapshotCaptured)
        .count();
    assert_eq!(
        captures,
        seen.len(),
        "SPEC ASM-14: one SnapshotCaptured per capture"
    );
    let (last_version, last_entries) = seen.last().expect("at least one capture");
    assert_eq!(
        result.latest_snapshot_version, *last_version,
        "the result must report the version of the last capture"
    );
    if result.outcome.is_success() {
        // Never stale: drawn from, and verified against, the last captured history.
        let finals = result.final_entries.as_ref().expect("success has entries");
        for e in finals {
            assert!(
                last_entries.iter().any(|x| x.id() == e.id()),
                "final entry {} not in the last captured history",
                e.id()
            );
        }
        let v = model_verify(last_entries, finals, policy).unwrap();
        assert!(
            v.is_accepted(),
            "success not valid against the last capture"
        );
        assert!(result.final_verification.as_ref().unwrap().is_accepted());
        assert!(result.final_estimated_size <= policy.hard_limit());
    } else {
        assert!(result.final_entries.is_none());
        assert_eq!(
            result.attempt_count, m,
            "SPEC ASM-6: churn only with the budget spent"
        );
    }
    let versions_changed = seen.windows(2).any(|w| w[0].0 != w[1].0);
    if !versions_changed {
        assert_ne!(result.outcome, Outcome::ConcurrentMutationLimit);
        assert!(!result.stages.contains(&Stage::RestartedAfterMutation));
    }
    // Exactly what the SPEC says for these captures: replay them through the model.
    let mut replay = ScriptedProvider::new(seen.to_vec());
    let expected = model_assemble(
        policy,
        &mut replay,
        &mut KeepRequired,
        &CancellationToken::new(),
    )
    .expect("model replay");
    assert_eq!(
        &expected, result,
        "engine differs from the SPEC on the observed captures"
    );
}

/// The recovered body in the history: reference-less (no `ArtifactReference` entry names it),
/// hence required and never evicted (SPEC PRE-1), so a call that succeeds forwards it.
fn body() -> Entry {
    recovered_body("seg", BODY)
}

const BODY: &str = "recovered body";

/// One provider call of the run (SPEC LSE-10): gate, lease-filtering provider over the shared
/// history, engine assembly, checks, then commit of the forwarded bodies (or release on a
/// termination). Returns the outcome and whether the body was forwarded.
fn provider_call(run: &Run, history: &SharedHistory, policy: &Policy) -> (Outcome, bool) {
    let slot = run.enter(&CancellationToken::new()).unwrap();
    let already_delivered = run.is_delivered(Digest::of(BODY));
    let mut provider = Recorder {
        inner: slot.filtering_provider(history.clone()),
        seen: Vec::new(),
    };
    let result = engine_assemble(
        policy,
        &mut provider,
        &mut KeepRequired,
        &CancellationToken::new(),
    )
    .expect("assembly error");
    check_result(policy, &provider.seen, &result);
    if already_delivered {
        // SPEC LSE-9: a body delivered earlier in the run never reaches this call.
        for (_, entries) in &provider.seen {
            assert!(
                entries.iter().all(|e| e.id().as_str() != "seg"),
                "redelivery"
            );
        }
    }
    match &result.final_entries {
        Some(finals) => {
            // SPEC LSE-10 step 13: forwarded = digests of the final recovered bodies.
            let forwarded: Vec<Digest> = finals
                .iter()
                .filter_map(|e| e.recoverable_segment().map(|s| s.reference.digest()))
                .collect();
            let sent = !forwarded.is_empty();
            slot.complete(&forwarded).unwrap();
            (result.outcome, sent)
        }
        None => {
            slot.release().unwrap();
            (result.outcome, false)
        }
    }
}

/// Runs model (d): a writer appending `appends` entries, and `calls` provider calls of one run
/// (the first on the model's main thread, the others spawned). Returns the set of outcomes
/// reached across all interleavings, one bit per outcome ([`outcome_bit`]).
fn restart_model(
    name: &'static str,
    max_attempts: i32,
    appends: usize,
    calls: usize,
    bound: usize,
) -> usize {
    let outcomes = StdArc::new(AtomicUsize::new(0));
    let reached = outcomes.clone();
    explore(name, bound, move || {
        let history = SharedHistory(Arc::new(Mutex::new((0, vec![body(), message(0)]))));
        let writer = {
            let history = history.clone();
            thread::spawn(move || {
                for k in 1..=appends {
                    let mut h = history.0.lock().unwrap();
                    h.1.push(message(k));
                    h.0 += 1;
                }
            })
        };
        let policy = policy(max_attempts);
        let run = Run::new();
        let others: Vec<_> = (1..calls)
            .map(|_| {
                let (run, history, policy) = (run.clone(), history.clone(), policy.clone());
                thread::spawn(move || provider_call(&run, &history, &policy))
            })
            .collect();
        let mut results = vec![provider_call(&run, &history, &policy)];
        results.extend(others.into_iter().map(|t| t.join().unwrap()));
        writer.join().unwrap();
        let deliveries = results.iter().filter(|(_, sent)| *sent).count();
        assert!(
            deliveries <= 1,
            "SPEC LSE-9: body delivered {deliveries} times"
        );
        assert_eq!(run.is_delivered(Digest::of(BODY)), deliveries == 1);
        assert_eq!(run.reserved_by(Digest::of(BODY)), None);
        for (o, _) in results {
            reached.fetch_or(outcome_bit(o), SeqCst);
        }
    });
    let bits = outcomes.load(SeqCst);
    let seen: Vec<&str> = Outcome::ALL
        .iter()
        .filter(|o| bits & outcome_bit(**o) != 0)
        .map(|o| o.name())
        .collect();
    eprintln!("loom model {name}: outcomes {seen:?}");
    bits
}

/// Model (d), budget 1, one call, three appends: a single restart spends the budget, so a
/// further mutation seen at a later check is `ConcurrentMutationLimit` (SPEC ASM-6, ASM-10,
/// ASM-11).
#[test]
fn d_mutation_restart_budget_1() {
    let o = restart_model("d_restart_m1", 1, 3, 1, 3);
    assert_ne!(
        o & outcome_bit(Outcome::ConcurrentMutationLimit),
        0,
        "churn never reached"
    );
    assert_ne!(
        o & outcome_bit(Outcome::WithinLimit),
        0,
        "quiet path never reached"
    );
}

/// Model (d), budget 2, two calls of one run through the gate and two appends: restarts and
/// reducer attempts share the budget (SPEC ASM-11), and the recovered body reaches the provider
/// at most once (SPEC LSE-9).
#[test]
fn d_mutation_restart_budget_2_two_calls() {
    let o = restart_model("d_restart_m2_two_calls", 2, 3, 2, 3);
    for outcome in [
        Outcome::WithinLimit,
        Outcome::Reduced,
        Outcome::PreservationFallback,
        Outcome::ConcurrentMutationLimit,
    ] {
        assert_ne!(o & outcome_bit(outcome), 0, "{outcome} never reached");
    }
}
