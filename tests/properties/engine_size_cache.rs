//! The engine's per-call size cache (SPEC ASM-15: estimators are pure, call counts are not part
//! of the contract, an implementation may estimate each entry once per assembly call).
//!
//! A counting estimator (the UTF-8 context estimator, EST-2, counting its calls per entry
//! allocation) shows that the engine's assembler estimates every entry allocation at most once per
//! call: across the candidate lists of one snapshot, across restarts over snapshots sharing
//! entries (ASM-5), for a new reducer entry carried from one attempt to the next (ASM-7), and for a
//! churn snapshot (ASM-6). Every scenario also asserts the engine's result equals the executable
//! specification's, including when a later snapshot holds a *different* entry under an id seen
//! before (the cache is keyed by allocation, not by id).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hybrid_compaction::engine::estimate::Utf8ContextEstimator;
use hybrid_compaction::seam::Engine;
use hybrid_compaction_model::assembly::{AssemblyResult, Outcome};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::estimator::{Estimator, MeasurementUnit};
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::{ProposalItem, ScriptStep, ScriptedReducer};
use hybrid_compaction_model::seam::Implementation;
use hybrid_compaction_model::snapshot::{ScriptedProvider, SnapshotProvider, StaticProvider};
use hybrid_compaction_spec::Model;

/// EST-2, counting its calls per entry allocation (the address of the shared message).
#[derive(Debug, Default)]
struct Counting {
    calls: Mutex<HashMap<usize, usize>>,
}

impl Counting {
    fn total(&self) -> usize {
        self.calls.lock().unwrap().values().sum()
    }

    fn max_per_entry(&self) -> usize {
        self.calls
            .lock()
            .unwrap()
            .values()
            .copied()
            .max()
            .unwrap_or(0)
    }

    fn of(&self, e: &Entry) -> usize {
        let key = std::ptr::from_ref(e.message()) as usize;
        self.calls.lock().unwrap().get(&key).copied().unwrap_or(0)
    }

    fn reset(&self) {
        self.calls.lock().unwrap().clear();
    }
}

impl Estimator for Counting {
    fn unit(&self) -> MeasurementUnit {
        MeasurementUnit::Utf8Bytes
    }

    fn estimate(&self, entry: &Entry) -> i32 {
        let key = std::ptr::from_ref(entry.message()) as usize;
        *self.calls.lock().unwrap().entry(key).or_default() += 1;
        Utf8ContextEstimator.estimate(entry)
    }
}

fn policy(hard_limit: i32, retention: i32, attempts: i32, estimator: Arc<Counting>) -> Policy {
    Policy::new(PolicySpec {
        hard_limit,
        trigger_margin: (hard_limit / 10).max(1),
        recent_message_retention_count: retention,
        maximum_compaction_attempts: attempts,
        preservation_label: Some("cache".into()),
        preservation_version: 1,
        estimator: Some(estimator),
    })
    .unwrap()
}

fn msg(id: &str, role: &str, text: &str) -> Entry {
    let kind = if role == "system" {
        EntryKind::SystemInstruction
    } else {
        EntryKind::ConversationalMessage
    };
    Entry::new(id, kind, Message::text(role, text)).unwrap()
}

/// A system message, `pairs` user/assistant turns of ~100 bytes, and a final user question.
fn history(pairs: usize) -> Vec<Entry> {
    let mut h = vec![msg("sys", "system", "You are terse.")];
    for i in 0..pairs {
        h.push(msg(&format!("u{i}"), "user", &"q".repeat(100)));
        h.push(msg(&format!("a{i}"), "assistant", &"a".repeat(100)));
    }
    h.push(msg("last", "user", "And now?"));
    h
}

/// Runs the engine and the specification on fresh copies of the same provider and reducer; asserts
/// equal results and returns the engine's (with the estimator's counts of the engine run only).
fn both<P: SnapshotProvider + Clone>(
    policy: &Policy,
    counting: &Counting,
    provider: &P,
    reducer: &ScriptedReducer,
) -> AssemblyResult {
    let cancel = CancellationToken::new();
    let expected = Model
        .assemble(policy, &mut provider.clone(), &mut reducer.clone(), &cancel)
        .unwrap();
    counting.reset();
    let got = Engine
        .assemble(policy, &mut provider.clone(), &mut reducer.clone(), &cancel)
        .unwrap();
    assert_eq!(got, expected, "SPEC ASM-7: the engine equals the model");
    got
}

/// SPEC ASM-15: one snapshot, eviction, a non-progressing reducer and both fallback candidates:
/// every entry is estimated exactly once.
#[test]
fn asm_15_one_snapshot_estimates_each_entry_once() {
    let counting = Arc::new(Counting::default());
    let h = history(20);
    let p = policy(400, 1, 3, counting.clone());
    let r = both(
        &p,
        &counting,
        &StaticProvider::new(h.clone()),
        &ScriptedReducer::new(vec![ScriptStep::Echo]),
    );
    assert_eq!(r.outcome, Outcome::PreservationFallback);
    assert_eq!(counting.total(), h.len());
    assert_eq!(counting.max_per_entry(), 1);
}

/// SPEC ASM-15 with ASM-5: a restart over a snapshot sharing every earlier entry estimates only
/// the new one.
#[test]
fn asm_15_restart_estimates_only_new_entries() {
    let counting = Arc::new(Counting::default());
    let h1 = history(5);
    let mut h2 = h1.clone();
    let added = msg("more", "assistant", "Here.");
    h2.push(added.clone());
    let p = policy(100_000, 1, 3, counting.clone());
    let provider = ScriptedProvider::new(vec![(1, h1.clone()), (2, h2.clone())]);
    let r = both(&p, &counting, &provider, &ScriptedReducer::new(vec![]));
    assert_eq!(r.outcome, Outcome::WithinLimit);
    assert_eq!(r.attempt_count, 1, "the restart consumed an attempt");
    assert_eq!(counting.total(), h2.len());
    assert_eq!(counting.max_per_entry(), 1);
    assert_eq!(counting.of(&added), 1);
}

/// SPEC ASM-15 with ASM-5 / ASM-6: a later snapshot holding a *different* entry under an id seen
/// before (and a churn snapshot doing it again) is measured afresh: the sizes of the result are
/// the model's, never an earlier entry's.
#[test]
fn asm_15_same_id_in_a_later_snapshot_is_a_different_entry() {
    let counting = Arc::new(Counting::default());
    let h1 = history(5);
    let mut h2 = h1.clone();
    h2[3] = msg("u1", "user", &"longer question ".repeat(20));
    let mut h3 = h2.clone();
    h3[4] = msg("a1", "assistant", "short");
    // Restart then WithinLimit: final size is size(h2).
    let p = policy(100_000, 1, 3, counting.clone());
    let provider = ScriptedProvider::new(vec![(1, h1.clone()), (2, h2.clone())]);
    let r = both(&p, &counting, &provider, &ScriptedReducer::new(vec![]));
    assert_eq!(r.outcome, Outcome::WithinLimit);
    let utf8 = |l: &[Entry]| {
        l.iter()
            .map(|e| Utf8ContextEstimator.estimate(e))
            .sum::<i32>()
    };
    assert_eq!(r.final_estimated_size, utf8(&h2));
    assert_eq!(r.original_estimated_size, utf8(&h1));
    // One attempt: the second version change is churn, sized on h3 (SPEC ASM-6).
    let p = policy(100_000, 1, 1, counting.clone());
    let provider = ScriptedProvider::new(vec![(1, h1), (2, h2), (3, h3.clone())]);
    let r = both(&p, &counting, &provider, &ScriptedReducer::new(vec![]));
    assert_eq!(r.outcome, Outcome::ConcurrentMutationLimit);
    assert_eq!(r.final_estimated_size, utf8(&h3));
    assert_eq!(counting.max_per_entry(), 1);
}

/// SPEC ASM-15 with ASM-7: a new reducer entry accepted into the working list and handed back
/// at the next attempt is estimated once.
#[test]
fn asm_15_new_reducer_entry_is_estimated_once_per_call() {
    let counting = Arc::new(Counting::default());
    let h = history(10);
    let summary = Entry::new(
        "summary-1",
        EntryKind::Summary,
        Message::text("user", "Earlier: two questions, answered."),
    )
    .unwrap();
    // Drop the first two turns for a summary: valid, smaller, still over the hard limit.
    let proposal: Vec<ProposalItem> = h
        .iter()
        .filter(|e| !["u0", "a0", "u1", "a1"].contains(&e.id().as_str()))
        .map(|e| ProposalItem::Keep(e.id().as_str().to_owned()))
        .chain([ProposalItem::New(summary.clone())])
        .collect();
    let reducer = ScriptedReducer::new(vec![ScriptStep::Propose(proposal), ScriptStep::Echo]);
    let p = policy(300, 1, 3, counting.clone());
    let r = both(&p, &counting, &StaticProvider::new(h.clone()), &reducer);
    assert_eq!(r.outcome, Outcome::PreservationFallback);
    assert_eq!(r.attempt_count, 2, "the echo of the summary was judged");
    assert_eq!(counting.of(&summary), 1);
    assert_eq!(counting.total(), h.len() + 1);
}
