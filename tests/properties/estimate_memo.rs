//! SPEC EST-7: the memoized estimator is indistinguishable from the estimator it wraps.
//!
//! Properties on generated histories (the engine-equivalence generators): per-entry estimates,
//! the checked sum (SPEC POL-3) and trigger evaluation are equal with and without the memo, for
//! every estimator kind (UTF-8 context / text, constant, table with negative and huge sizes, and
//! provider tokens, SPEC EST-6) and every capacity (tiny capacities force evictions); whole
//! assemblies, in the engine and in the executable specification, give identical results with a
//! memo that is reused across calls; a repeated call on history + 1 entry runs the wrapped
//! estimator once; and the cache never holds more than two generations.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::gen::*;
use hybrid_compaction::engine;
use hybrid_compaction::estimators::{MemoEstimator, TokenEncoding, TokenEstimator};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::estimator::{Estimator, TableEstimator};
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_spec as spec;
use proptest::prelude::*;
use proptest::test_runner::Config;

/// The wrapped estimator of a case: the engine-equivalence plans, or provider tokens.
fn inner(plan: &Option<EstimatorPlan>, ids: usize) -> Arc<dyn Estimator> {
    match plan {
        None => Arc::new(TokenEstimator::new(TokenEncoding::Cl100kBase)),
        Some(p) => p.host(ids).unwrap_or_else(|| match p {
            EstimatorPlan::Text => Arc::new(engine::estimate::Utf8TextEstimator),
            _ => Arc::new(engine::estimate::Utf8ContextEstimator),
        }),
    }
}

fn plan_strategy() -> impl Strategy<Value = Option<EstimatorPlan>> {
    prop_oneof![4 => estimator_plan_strategy().prop_map(Some), 1 => Just(None)]
}

fn policy(limits: &LimitPlan, entries: &[Entry], estimator: Arc<dyn Estimator>) -> Policy {
    let full: i64 = entries
        .iter()
        .map(|e| i64::from(estimator.estimate(e).max(0)))
        .sum();
    limits.policy(&[full, full / 2, full * 3 / 4, full / 4, 3], estimator)
}

/// Debug renderings: NaN-carrying values must be identical, not VER-2 equal.
fn same<T: std::fmt::Debug>(a: &T, b: &T) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

proptest! {
    #![proptest_config(Config::with_cases(cases(96)))]

    /// SPEC EST-7, POL-3, POL-4: per-entry sizes, checked sums and evaluation are equal with and
    /// without the memo, on first use and from the cache, under evictions.
    #[test]
    fn est_7_memo_equals_uncached(
        segs in segs_strategy(30),
        plan in plan_strategy(),
        capacity in prop_oneof![1usize..6, Just(MemoEstimator::DEFAULT_CAPACITY)],
        limits in limit_plan_strategy(),
    ) {
        let entries = build(&segs);
        let inner = inner(&plan, entries.len() + 8);
        let memo = Arc::new(MemoEstimator::with_capacity(inner.clone(), capacity));
        prop_assert_eq!(memo.unit(), inner.unit());
        for round in 0..2 {
            for e in entries.iter().rev() {
                prop_assert_eq!(memo.estimate(e), inner.estimate(e), "round {}", round);
            }
            prop_assert!(memo.stats().cached <= 2 * capacity);
            prop_assert_eq!(
                engine::estimate::size(&entries, memo.as_ref()),
                engine::estimate::size(&entries, inner.as_ref())
            );
        }
        let p = policy(&limits, &entries, inner.clone());
        let pm = p.with_estimator(memo.clone());
        let token = CancellationToken::new();
        prop_assert_eq!(
            engine::estimate::evaluate(&entries, &pm, &token),
            engine::estimate::evaluate(&entries, &p, &token)
        );
        prop_assert_eq!(
            spec::estimate::evaluate(&entries, &pm, &token),
            spec::estimate::evaluate(&entries, &p, &token)
        );
    }

    /// SPEC EST-7 with ASM-1 .. ASM-16: whole assemblies (engine and specification) are identical
    /// with a memo reused across three calls and without it.
    #[test]
    fn est_7_asm_15_assemblies_with_a_reused_memo_equal_uncached_ones(
        segs in segs_strategy(20),
        plan in plan_strategy(),
        capacity in prop_oneof![1usize..4, Just(64usize)],
        limits in limit_plan_strategy(),
        steps in prop::collection::vec(step_strategy(), 0..4),
        provider in provider_plan_strategy(),
    ) {
        let entries = build(&segs);
        let inner = inner(&plan, entries.len() + 48);
        let p = policy(&limits, &entries, inner.clone());
        let memo = Arc::new(MemoEstimator::with_capacity(inner, capacity));
        let pm = p.with_estimator(memo);
        let run = |policy: &Policy, engine_side: bool| {
            let token = CancellationToken::new();
            let mut snapshots = provider.provider(&entries, &token);
            let mut reducer = TestReducer::new(steps.clone());
            let result = if engine_side {
                engine::assemble::assemble(policy, &mut snapshots, &mut reducer, &token)
            } else {
                spec::assemble::assemble(policy, &mut snapshots, &mut reducer, &token)
            };
            (result, reducer.log)
        };
        for engine_side in [true, false] {
            let plain = run(&p, engine_side);
            for call in 0..3 {
                let memoized = run(&pm, engine_side);
                prop_assert!(same(&memoized.0, &plain.0), "call {} engine {}", call, engine_side);
                prop_assert_eq!(&memoized.1, &plain.1);
            }
        }
    }

    /// SPEC EST-7: a host calling again with history + 1 entry estimates only the new entry.
    #[test]
    fn est_7_a_repeat_call_estimates_only_the_new_entry(segs in segs_strategy(40), extra in seg_strategy()) {
        let mut builder = Builder::new("e");
        let history = builder.build(&segs);
        let mut longer = history.clone();
        builder.push(&extra, &mut longer);
        let added = longer.len() - history.len();
        let memo = MemoEstimator::new(Arc::new(engine::estimate::Utf8ContextEstimator));
        let first = engine::estimate::size(&history, &memo);
        prop_assert_eq!(memo.stats().misses, history.len() as u64);
        let second = engine::estimate::size(&longer, &memo);
        let stats = memo.stats();
        prop_assert_eq!(stats.misses, longer.len() as u64, "only the new entries");
        prop_assert_eq!(stats.hits, history.len() as u64);
        prop_assert!(added >= 1);
        if let (Ok(first), Ok(second)) = (first, second) {
            let new_part = engine::estimate::size(&longer[history.len()..], &memo).unwrap_or(0);
            prop_assert_eq!(second, first + new_part);
        }
    }
}

/// SPEC EST-7: the key covers the id (a table estimator sizes by id), the author and the exact
/// value variant, so content-equal entries that an estimator can tell apart are never conflated.
#[test]
fn est_7_the_key_covers_everything_an_estimator_reads() {
    let message = Message::text("user", "same text");
    let a = Entry::new("a", EntryKind::ConversationalMessage, message.clone()).unwrap();
    let b = Entry::new("b", EntryKind::ConversationalMessage, message.clone()).unwrap();
    let table = TableEstimator {
        sizes: BTreeMap::from([("a".to_owned(), 1), ("b".to_owned(), 2)]),
        default: 0,
    };
    let memo = MemoEstimator::new(Arc::new(table));
    assert_eq!((memo.estimate(&a), memo.estimate(&b)), (1, 2));
    assert_eq!(memo.stats().misses, 2);

    let tokens = MemoEstimator::new(Arc::new(TokenEstimator::new(TokenEncoding::O200kBase)));
    let mut named = message;
    named.author = Some("alice".into());
    let c = Entry::new("a", EntryKind::ConversationalMessage, named).unwrap();
    assert_ne!(tokens.estimate(&a), tokens.estimate(&c));
    let again = Entry::new("a", EntryKind::ConversationalMessage, a.message().clone()).unwrap();
    tokens.estimate(&again);
    assert_eq!(tokens.stats().hits, 1, "an equal entry built anew is a hit");
}
