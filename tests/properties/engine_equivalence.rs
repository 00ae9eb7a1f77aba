//! Engine == model, on generated inputs biased toward interesting states, compared through the
//! vocabulary's seam (`Model` and `Engine` answer the same `Implementation`).
//!
//! Every public engine function is compared with its model counterpart on the same input:
//! results must be equal as values (`AssemblyResult`, analyses, verification results, ... derive
//! `PartialEq`) and errors must be equal (same variant, same payload). The assembly property also
//! compares every reduction request the two sent to the reducer, the number of snapshot
//! captures, and the diagnostics built from the two results, and then checks the invariants of
//! SPEC ASM-3 / DIA-3 / DIA-4 on the engine's result against expectations computed with the
//! model (not with the engine).
//!
//! Clause coverage: EST-1..EST-5, POL-3, POL-4, EXC-1..EXC-3, PRE-1..PRE-4, VER-1..VER-4,
//! ASM-1..ASM-16, BRG-1..BRG-3, CLS-1, CLS-2, DIA-1..DIA-6, SNAP-5 (scripted provider), ENT-4.
//!
//! Case counts: `PROPTEST_CASES` (deep runs) or the CI-sized defaults below.

#![allow(
    clippy::cast_possible_truncation,
    reason = "test data: small generated numbers"
)]

use std::sync::Arc;

use crate::cases::*;
use crate::gen::*;
use hybrid_compaction::engine;
use hybrid_compaction::seam::Engine;
use hybrid_compaction_model::assembly::{AssemblyResult, Outcome, Stage};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::message::{Message, Part};
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::reducers::{
    MessageCountingReducer, ScriptedUpstreamReducer, UpstreamStep,
};
use hybrid_compaction_model::seam::Implementation;
use hybrid_compaction_model::value::Value;
use hybrid_compaction_spec::Model;
use proptest::prelude::*;
use proptest::test_runner::Config;

/// Asserts equality by `Debug` rendering: the vocabulary's `PartialEq` follows SPEC VER-2, under
/// which a value holding NaN differs from itself, while the engine must return *identical*
/// values (NaN included, and `-0.0` distinguished from `0.0`).
macro_rules! prop_assert_same {
    ($a:expr, $b:expr $(, $($msg:tt)+)?) => {{
        let (a, b) = (format!("{:?}", $a), format!("{:?}", $b));
        prop_assert!(a == b, "{}\nengine: {}\nmodel:  {}", concat!("" $(, stringify!($($msg)+))?), a, b);
    }};
}

/// SPEC ASM-3 / ASM-11 / ASM-13 / DIA-3 / DIA-4 invariants of an engine result, with the
/// expectations computed by the model.
fn check_invariants(
    case: &Case,
    entries: &[Entry],
    policy: &Policy,
    result: &AssemblyResult,
) -> Result<(), TestCaseError> {
    // ASM-11: never above the budget; ASM-3: nothing negative.
    prop_assert!(result.attempt_count <= policy.maximum_compaction_attempts());
    prop_assert!(result.attempt_count >= 0 && result.final_estimated_size >= 0);
    prop_assert!(result.original_estimated_size >= 0 && result.latest_snapshot_version >= 0);
    prop_assert_eq!(result.hard_limit, policy.hard_limit());
    // ASM-14: the run starts with a capture; one ReducerAttempt per invocation.
    prop_assert_eq!(result.stages.first(), Some(&Stage::SnapshotCaptured));
    let reducer_attempts = result
        .stages
        .iter()
        .filter(|s| **s == Stage::ReducerAttempt)
        .count() as i32;
    prop_assert!(reducer_attempts <= result.attempt_count);
    prop_assert!(
        result
            .stages
            .iter()
            .filter(|s| **s == Stage::DeterministicFallback)
            .count()
            <= 1
    );
    let schedule = case.provider.schedule(entries);
    let latest: Vec<Entry> = schedule
        .iter()
        .find(|(v, _)| *v == result.latest_snapshot_version)
        .map(|(_, e)| e.clone())
        .unwrap_or_default();
    let diagnostics = Engine.diagnostics(result, policy);
    if result.outcome.is_success() {
        let fin = result
            .final_entries
            .as_ref()
            .expect("success has final entries");
        // ASM-3: fits, accepted.
        prop_assert!(result.final_estimated_size <= policy.hard_limit());
        prop_assert!(result
            .final_verification
            .as_ref()
            .is_some_and(|v| v.is_accepted()));
        // The final entries verify against the latest snapshot (model verifier).
        let v = Model.verify(&latest, fin, policy).expect("no duplicates");
        prop_assert!(v.is_accepted(), "final entries rejected: {:?}", v);
        // ASM-13: required ids of the latest snapshot, all present, in order.
        let req = Model
            .required_ids(&latest, policy.recent_message_retention_count())
            .expect("unique");
        prop_assert_eq!(&result.required_entry_ids, &req);
        let positions: Vec<usize> = req
            .iter()
            .map(|id| {
                fin.iter()
                    .position(|e| e.id() == id)
                    .expect("required present")
            })
            .collect();
        prop_assert!(positions.windows(2).all(|w| w[0] < w[1]));
        // Tool structure valid (SPEC VER-4).
        prop_assert!(Model.analyze(fin).is_sequence_valid());
        // Final size is the size of the final entries.
        prop_assert_eq!(
            Ok(result.final_estimated_size),
            Model.size(fin, policy.estimator())
        );
        // DIA-3 / DIA-6: contributions sum to the final size, each category once.
        let d = diagnostics.expect("diagnostics of a success");
        let total: i64 = d
            .category_contributions
            .iter()
            .map(|c| i64::from(c.size))
            .sum();
        prop_assert_eq!(total, i64::from(result.final_estimated_size));
        let mut cats: Vec<_> = d
            .category_contributions
            .iter()
            .map(|c| c.category)
            .collect();
        let n = cats.len();
        cats.dedup();
        prop_assert_eq!(cats.len(), n);
        prop_assert!(d.category_contributions.iter().all(|c| c.entry_count >= 1));
        prop_assert_eq!(d.final_sequence_valid, Some(true));
    } else {
        // Terminations carry neither final entries nor a verification (ASM-3).
        prop_assert!(result.final_entries.is_none());
        prop_assert!(result.final_verification.is_none());
        let d = diagnostics.expect("diagnostics of a termination");
        prop_assert!(d.category_contributions.is_empty());
        prop_assert_eq!(d.final_sequence_valid, None);
        if result.outcome == Outcome::ConcurrentMutationLimit {
            // ASM-6: budget exhausted.
            prop_assert_eq!(result.attempt_count, policy.maximum_compaction_attempts());
        }
    }
    Ok(())
}

fn assembly_equivalence(case: &Case) -> Result<(), TestCaseError> {
    let entries = build(&case.segs);
    let (mp, ep) = policies(case, &entries);
    let model = run(case, &entries, &mp, false);
    let engine_run = run(case, &entries, &ep, true);
    prop_assert_same!(&engine_run.0, &model.0, "assembly results differ");
    prop_assert_eq!(&engine_run.1, &model.1, "reduction requests differ");
    prop_assert_eq!(engine_run.2, model.2, "capture counts differ");
    prop_assert_eq!(engine_run.3, model.3, "cancellation differs");
    if let (Ok(er), Ok(mr)) = (&engine_run.0, &model.0) {
        prop_assert_eq!(
            Engine.diagnostics(er, &ep),
            Model.diagnostics(mr, &mp),
            "diagnostics differ"
        );
        check_invariants(case, &entries, &ep, er)?;
    }
    // Determinism: the same input twice (second time through a reused assembler).
    let mut assembler = engine::assemble::Assembler::new();
    let first = run_with(case, &entries, &ep, true, &mut assembler);
    let second = run_with(case, &entries, &ep, true, &mut assembler);
    prop_assert_same!(&first.0, &second.0, "engine not deterministic");
    prop_assert_same!(&first.0, &engine_run.0);
    // Buffer reuse across unrelated histories: the assembler of this thread served every
    // earlier case (other lists, other sizes, other tool structures) and must answer as a
    // fresh one.
    let reused = REUSED.with(|a| run_with(case, &entries, &ep, true, &mut a.borrow_mut()));
    prop_assert_same!(
        &reused.0,
        &engine_run.0,
        "an assembler reused across cases differs"
    );
    Ok(())
}

thread_local! {
    /// One assembler per test thread, reused by every case of `assemble_matches_model`.
    static REUSED: std::cell::RefCell<engine::assemble::Assembler> =
        std::cell::RefCell::new(engine::assemble::Assembler::new());
}

proptest! {
    #![proptest_config(Config::with_cases(cases(384)))]

    /// SPEC ASM-1 .. ASM-16, DIA-1 .. DIA-6: the whole assembly result, requests, captures,
    /// cancellation and diagnostics are equal; invariants hold; the engine is deterministic.
    #[test]
    fn assemble_matches_model(case in case_strategy()) {
        assembly_equivalence(&case)?;
    }
}

fn message_strategy() -> impl Strategy<Value = Message> {
    let part = prop_oneof![
        "[a-c]{0,3}".prop_map(Part::text),
        (
            "[a-b]{1}",
            "[f-g]{1}",
            prop::option::of(value_strategy()),
            any::<bool>()
        )
            .prop_map(|(id, name, arg, info)| Part::Call(
                hybrid_compaction_model::message::FunctionCall {
                    call_id: id,
                    name,
                    arguments: arg.map(|v| [("k".to_owned(), v)].into_iter().collect()),
                    informational_only: info,
                }
            )),
        ("[a-b]{1}", value_strategy()).prop_map(|(id, v)| Part::result(id, v)),
    ];
    (
        prop_oneof![Just("user"), Just("tool"), Just("assistant")],
        prop::option::weighted(0.2, Just("bob".to_owned())),
        prop::collection::vec(part, 0..3),
    )
        .prop_map(|(role, author, parts)| Message {
            role: role.to_owned(),
            author,
            parts,
        })
}

/// A near copy of `m`: the same, or one field nudged (decimal rescaled, -0.0, flag flipped...).
fn nudge(m: &Message, how: u8) -> Message {
    let mut c = m.clone();
    match how % 6 {
        0 => {}
        1 => c.author = Some("eve".to_owned()),
        2 => {
            for p in &mut c.parts {
                if let Part::Call(call) = p {
                    call.informational_only = !call.informational_only;
                }
            }
        }
        3 => {
            for p in &mut c.parts {
                if let Part::Result(r) = p {
                    r.value = match &r.value {
                        Value::Decimal(d) => Value::Decimal(
                            hybrid_compaction_model::value::Decimal::new(
                                d.mantissa() * 10,
                                d.scale() + 1,
                            )
                            .unwrap_or(*d),
                        ),
                        Value::F64(x) if *x == 0.0 => Value::F64(-x),
                        Value::I32(x) => Value::I64(i64::from(*x)),
                        other => other.clone(),
                    };
                }
            }
        }
        4 => c.parts.reverse(),
        _ => c.parts.push(Part::text("")),
    }
    c
}

proptest! {
    #![proptest_config(Config::with_cases(cases(256)))]

    /// SPEC EST-2, EST-4, ENT-4: both UTF-8 estimators agree on every entry (numbers rendered as
    /// .NET does), and size / evaluate agree incl. errors and cancellation (POL-3, POL-4).
    #[test]
    fn estimates_match_model(
        segs in segs_strategy(20),
        plan in estimator_plan_strategy(),
        limits in limit_plan_strategy(),
        cancelled in prop::bool::weighted(0.1),
    ) {
        let entries = build(&segs);
        for e in &entries {
            prop_assert_same!(
                Engine.context_estimator().estimate(e),
                Model.context_estimator().estimate(e)
            );
            prop_assert_same!(
                Engine.text_estimator().estimate(e),
                Model.text_estimator().estimate(e)
            );
        }
        let case = Case {
            focus: Focus::Mixed,
            segs, estimator: plan, limits, steps: vec![],
            provider: ProviderPlan::stable(),
            cancel_at_call: None, cancel_before: false,
        };
        let (mp, ep) = policies(&case, &entries);
        prop_assert_same!(
            Engine.size(&entries, ep.estimator()),
            Model.size(&entries, mp.estimator())
        );
        let token = CancellationToken::new();
        if cancelled { token.cancel(); }
        prop_assert_same!(
            Engine.evaluate(&entries, &ep, &token),
            Model.evaluate(&entries, &mp, &token)
        );
    }

    /// SPEC EST-2: a single value of any variant, including float edge cases and decimals.
    #[test]
    fn value_sizes_match_model(value in value_strategy(), x in any::<f64>(), y in any::<f32>(), bits in any::<u64>(), bits32 in any::<u32>()) {
        for v in [value, Value::F64(x), Value::F32(y), Value::F64(f64::from_bits(bits)), Value::F32(f32::from_bits(bits32))] {
            let e = Entry::new("v", EntryKind::ToolExchange, Message::new("tool", vec![Part::result("c", v)])).expect("entry");
            prop_assert_same!(
                Engine.context_estimator().estimate(&e),
                Model.context_estimator().estimate(&e)
            );
        }
    }

    /// SPEC EXC-1 .. EXC-3, PRE-1 .. PRE-4, ASM-8: analysis, required ids, selection, eviction.
    #[test]
    fn analysis_selection_eviction_match_model(
        segs in segs_strategy(30),
        retention in 0i32..=6,
        dup in prop::option::weighted(0.05, 0usize..30),
        cancelled in prop::bool::weighted(0.05),
    ) {
        let mut entries = build(&segs);
        if let Some(i) = dup {
            if !entries.is_empty() {
                let e = entries[i % entries.len()].clone();
                entries.push(e);
            }
        }
        prop_assert_same!(Engine.analyze(&entries), Model.analyze(&entries));
        prop_assert_same!(
            Engine.required_ids(&entries, retention),
            Model.required_ids(&entries, retention)
        );
        prop_assert_same!(Engine.evict(&entries), Model.evict(&entries));
        let case = Case {
            focus: Focus::Mixed,
            segs, estimator: EstimatorPlan::Constant(1),
            limits: LimitPlan { hard_point: 0, hard_delta: 0, threshold_point: 1, threshold_delta: 0, retention: retention.max(1), attempts: 1 },
            steps: vec![], provider: ProviderPlan::stable(),
            cancel_at_call: None, cancel_before: false,
        };
        let (mp, ep) = policies(&case, &entries);
        let token = CancellationToken::new();
        if cancelled { token.cancel(); }
        prop_assert_same!(
            Engine.select_required(&entries, &ep, &token),
            Model.select_required(&entries, &mp, &token)
        );
    }

    /// SPEC PRE-1.2, PRE-2, ASM-8: lists of many recovered bodies (0 to about 30, so both ways
    /// the engine judges durability: digest by digest for a few bodies, through a set for more)
    /// among references and tool exchanges sharing a few digests.
    #[test]
    fn durability_of_many_bodies_matches_model(
        segs in prop::collection::vec(prop_oneof![
            6 => (0u8..6, 1usize..20, script_strategy())
                .prop_map(|(digest, len, script)| Seg::Recoverable { digest, len, script }),
            2 => (0u8..4).prop_map(|digest| Seg::ArtRef { digest }),
            2 => seg_strategy(),
        ], 0..40),
        retention in 0i32..=4,
    ) {
        let entries = build(&segs);
        prop_assert_same!(Engine.evict(&entries), Model.evict(&entries));
        prop_assert_same!(
            Engine.required_ids(&entries, retention),
            Model.required_ids(&entries, retention)
        );
    }

    /// SPEC VER-1 .. VER-4: the verifier on edited proposals (subsets, swaps, new and mutated
    /// entries, duplicate ids in either list).
    #[test]
    fn verify_matches_model((segs, edit, retention) in verify_input_strategy()) {
        let (original, proposed, mp, ep) = verify_input(&segs, &edit, retention);
        prop_assert_same!(
            Engine.verify(&original, &proposed, &ep),
            Model.verify(&original, &proposed, &mp)
        );
        prop_assert_same!(
            Engine.verify(&original, &original, &ep),
            Model.verify(&original, &original, &mp)
        );
    }

    /// SPEC VER-2: structural equality on near-identical messages (NaN, -0.0, decimal scale,
    /// numeric variants, informational flag, author, part order).
    #[test]
    fn structural_equality_matches_model(m in message_strategy(), how in any::<u8>()) {
        let n = nudge(&m, how);
        prop_assert_same!(Engine.structurally_equal(&m, &n), Model.structurally_equal(&m, &n));
        prop_assert_same!(Engine.structurally_equal(&m, &m), Model.structurally_equal(&m, &m));
        prop_assert_same!(Engine.bridge_equal(&m, &n), Model.bridge_equal(&m, &n));
    }

    /// SPEC BRG-1 .. BRG-3: the bridge on subsets / reorders / new plain messages / fabricated
    /// tool content / null / failure, and the message-counting reducer.
    #[test]
    fn bridge_matches_model(
        segs in segs_strategy(20),
        picks in prop::collection::vec(0usize..40, 0..12),
        new_texts in prop::collection::vec("[a-c]{0,4}", 0..3),
        fabricate in prop::bool::weighted(0.1),
        mode in 0u8..5,
        target in 0usize..10,
    ) {
        let entries = build(&segs);
        let messages: Vec<Message> = entries.iter().map(|e| e.message().clone()).collect();
        let mut returned: Vec<Message> = picks
            .iter()
            .filter(|_| !messages.is_empty())
            .map(|i| messages[i % messages.len()].clone())
            .collect();
        for (k, t) in new_texts.iter().enumerate() {
            returned.insert(k.min(returned.len()), Message::text("assistant", t.clone()));
        }
        if fabricate {
            returned.push(Message::new("assistant", vec![Part::call("zz", "f")]));
        }
        let step = match mode {
            0 | 1 => UpstreamStep::Return(returned),
            2 => UpstreamStep::Echo,
            3 => UpstreamStep::Null,
            _ => UpstreamStep::Fail("upstream down".to_owned()),
        };
        let policy = Policy::new(hybrid_compaction_model::policy::PolicySpec {
            hard_limit: 10, trigger_margin: 1, recent_message_retention_count: 1,
            maximum_compaction_attempts: 1, preservation_label: Some("l".into()),
            preservation_version: 1, estimator: Some(Arc::new(hybrid_compaction_model::estimator::ConstantEstimator(1))),
        }).expect("policy");
        let request = hybrid_compaction_model::assembly::ReductionRequest {
            entries: &entries, required_entry_ids: &[], policy: &policy, attempt_number: 1,
        };
        use hybrid_compaction_model::assembly::Reducer;
        let mut m = Model.bridge(Box::new(ScriptedUpstreamReducer::new(vec![step.clone()])));
        let mut e = Engine.bridge(Box::new(ScriptedUpstreamReducer::new(vec![step])));
        prop_assert_same!(e.reduce(&request), m.reduce(&request));
        let mut m = Model.bridge(Box::new(MessageCountingReducer { target_count: target }));
        let mut e = Engine.bridge(Box::new(MessageCountingReducer { target_count: target }));
        prop_assert_same!(e.reduce(&request), m.reduce(&request));
    }

    /// SPEC CLS-1, CLS-2: adaptation with the default content-hash classifier, including
    /// repeated messages (the `:n` suffix) and messages that are exactly a reference.
    #[test]
    fn classify_matches_model(segs in segs_strategy(20), repeats in prop::collection::vec(0usize..40, 0..6), extra in prop::collection::vec(message_strategy(), 0..4)) {
        let entries = build(&segs);
        let mut messages: Vec<Message> = entries.iter().map(|e| e.message().clone()).collect();
        for i in repeats {
            if !messages.is_empty() {
                let m = messages[i % messages.len()].clone();
                messages.push(m);
            }
        }
        messages.extend(extra);
        messages.push(Message::text("user", pool_reference(1)));
        let mut mc = Model.content_hash_classifier();
        let mut ec = Engine.content_hash_classifier();
        let m = Model.adapt(&messages, &mut mc);
        let e = Engine.adapt(&messages, &mut ec);
        prop_assert_same!(format!("{:?}", e), format!("{:?}", m));
        use hybrid_compaction_model::classifier::Classifier;
        for i in (0..messages.len()).rev().step_by(3) {
            prop_assert_same!(ec.entry_id(&messages, i), mc.entry_id(&messages, i));
        }
    }
}

proptest! {
    #![proptest_config(Config::with_cases(cases(256)))]

    /// SPEC DIA-1 .. DIA-6: diagnostics of arbitrary (also inconsistent) results: invariant
    /// failures, negative estimates and overflows in several categories must surface as the
    /// same error as the model's (its category-major order decides which one).
    #[test]
    fn diagnostics_match_model(
        segs in segs_strategy(16),
        plan in estimator_plan_strategy(),
        outcome in 0usize..5,
        with_entries in prop::bool::weighted(0.85),
        verification in 0u8..3,
        size_delta in prop_oneof![4 => Just(0i64), 1 => -3i64..3],
        negative_field in prop::option::weighted(0.05, 0u8..4),
        hard_slack in -5i64..50,
        attempts in 0i32..4,
    ) {
        use hybrid_compaction_model::verification::{VerificationOutcome, VerificationResult};
        let entries = build(&segs);
        let case = Case {
            focus: Focus::Mixed,
            segs, estimator: plan,
            limits: LimitPlan { hard_point: 0, hard_delta: 0, threshold_point: 1, threshold_delta: 0, retention: 2, attempts: 4 },
            steps: vec![], provider: ProviderPlan::stable(),
            cancel_at_call: None, cancel_before: false,
        };
        let (mp, ep) = policies(&case, &entries);
        let measured: i64 = entries.iter().map(|e| i64::from(mp.estimator().estimate(e))).sum();
        let final_size = (measured + size_delta).clamp(0, i64::from(i32::MAX)) as i32;
        let hard_limit = (i64::from(final_size) + hard_slack).clamp(0, i64::from(i32::MAX)) as i32;
        let v = |outcome| VerificationResult {
            outcome,
            rejection_reasons: vec![],
            missing_required_entry_ids: vec![],
            invalid_entry_ids: Default::default(),
            preservation_only_fallback_entry_ids: vec![],
        };
        let mut result = AssemblyResult {
            outcome: Outcome::ALL[outcome],
            final_entries: if with_entries { Some(entries.clone()) } else { None },
            original_estimated_size: final_size,
            final_estimated_size: final_size,
            hard_limit,
            attempt_count: attempts,
            stages: vec![Stage::SnapshotCaptured, Stage::ReducerAttempt, Stage::SnapshotCaptured],
            required_entry_ids: vec![],
            latest_snapshot_version: 0,
            final_verification: match verification {
                0 => None,
                1 => Some(v(VerificationOutcome::Accepted)),
                _ => Some(v(VerificationOutcome::Rejected)),
            },
        };
        match negative_field {
            Some(0) => result.original_estimated_size = -1,
            Some(1) => result.final_estimated_size = -1,
            Some(2) => result.hard_limit = -1,
            Some(3) => result.attempt_count = -1,
            _ => {}
        }
        prop_assert_same!(
            Engine.diagnostics(&result, &ep),
            Model.diagnostics(&result, &mp)
        );
        prop_assert_same!(
            Engine.contributions(&entries, ep.estimator()),
            Model.contributions(&entries, mp.estimator())
        );
    }
}

proptest! {
    #![proptest_config(Config::with_cases(cases(12)))]

    /// SPEC ASM-7, VER-1: a few large histories (hundreds of entries), where the engine's
    /// bounded pointer walk over proposals (2n comparisons, then the id index) and its reuse of
    /// the snapshot analysis are exercised at scale: proposals with many new entries in front,
    /// swaps and duplicates must still be mapped exactly as the model's linear searches do.
    #[test]
    fn large_histories_match_model(
        segs in prop::collection::vec(seg_strategy(), 150..300),
        clean_it in any::<bool>(),
        limits in limit_plan_strategy(),
        steps in prop::collection::vec(
            prop_oneof![
                Just(Step::SummarizeAll),
                Just(Step::Swap),
                Just(Step::Duplicate),
                Just(Step::Mutate),
                (10u8..=60).prop_map(Step::DropOptional),
                (1usize..30).prop_map(Step::AddSummary),
            ],
            1..4,
        ),
    ) {
        let mut segs = segs;
        if clean_it {
            clean(&mut segs);
        }
        let case = Case {
            focus: Focus::Mixed,
            segs,
            estimator: EstimatorPlan::Context,
            limits,
            steps,
            provider: ProviderPlan::stable(),
            cancel_at_call: None,
            cancel_before: false,
        };
        assembly_equivalence(&case)?;
        // The proposal mapping itself, with many new entries ahead of retained ones.
        let entries = build(&case.segs);
        let mut proposal: Vec<Entry> = Builder::new("x").build(&case.segs[..case.segs.len().min(40)]);
        // Unique ids: every third entry in reverse order, then the next third in order.
        proposal.extend(entries.iter().step_by(3).rev().cloned());
        proposal.extend(entries.iter().skip(1).step_by(3).cloned());
        let (mp, ep) = policies(&case, &entries);
        let engine_verdict = Engine.verify(&entries, &proposal, &ep);
        prop_assert!(engine_verdict.is_ok(), "proposal ids are unique");
        prop_assert_same!(engine_verdict, Model.verify(&entries, &proposal, &mp));
    }
}
