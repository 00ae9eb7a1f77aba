//! Engine vs model over a growing history: a `proptest-state-machine` test.
//!
//! The **reference** is the executable specification: its state is a conversation history that
//! grows by appended segments (user turns, tool exchanges with several calls, references,
//! recovered bodies, non-ASCII text and values...), and a *provider call* transition assembles
//! the current history with `spec::assemble` (a scripted provider whose later captures see
//! concurrent mutations, a scripted reducer, maybe a cancellation), recording what the model
//! answered: the result, every reduction request, the number of captures and the diagnostics.
//! After the call the concurrent mutations persist in the history, as they would in a live
//! agent (SPEC SNAP-2, SNAP-5, ASM-5, ASM-6, ASM-7, ASM-16, DIA-5).
//!
//! The **system under test** is the engine alone: one `Assembler` reused for the whole sequence
//! (its buffers and caches carry over between calls) fed the same transitions. After every
//! transition `check_invariants` compares the system with the reference: the same number of
//! calls and outcomes, the engine's last answer equal to the model's (result by `Debug`, so NaN
//! and `-0.0` must be identical; requests; captures; diagnostics), and the SPEC invariants of
//! the engine's result judged against the reference's snapshots with the model's functions
//! (ASM-3: a success fits and its final list verifies against the latest snapshot, with that
//! snapshot's required ids in order; ASM-11: attempts within the budget; ASM-6: churn only on
//! an exhausted budget).
//!
//! Shrinking finds the shortest transition sequence that breaks equality.

use std::collections::BTreeMap;

use crate::gen::*;
use hybrid_compaction::engine;
use hybrid_compaction::seam::Engine;
use hybrid_compaction_model::assembly::{AssemblyError, AssemblyResult, Outcome};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::seam::Implementation;
use hybrid_compaction_model::snapshot::ScriptedProvider;
use hybrid_compaction_spec::Model;
use proptest::prelude::*;
use proptest::test_runner::Config;
use proptest_state_machine::{prop_state_machine, ReferenceStateMachine, StateMachineTest};

/// Limits fixed for one sequence.
#[derive(Debug, Clone, Copy)]
struct Limits {
    hard_limit: i32,
    margin: i32,
    retention: i32,
    attempts: i32,
}

impl Limits {
    fn policies(&self) -> (Policy, Policy) {
        let model = Policy::new(PolicySpec {
            hard_limit: self.hard_limit,
            trigger_margin: self.margin,
            recent_message_retention_count: self.retention,
            maximum_compaction_attempts: self.attempts,
            preservation_label: Some("sm".to_owned()),
            preservation_version: 1,
            estimator: Some(Model.context_estimator()),
        })
        .expect("valid policy");
        let engine = model.with_estimator(Engine.context_estimator());
        (model, engine)
    }
}

/// What one provider call answered (the model's in the reference, the engine's in the system).
#[derive(Debug, Clone, PartialEq)]
struct Answer {
    /// The result or error, by `Debug` rendering (NaN-holding values must be identical).
    result: String,
    requests: Vec<RequestLog>,
    captures: usize,
    /// The diagnostics of a result (DIA-5), by `Debug` rendering.
    diagnostics: Option<String>,
}

/// A provider schedule: `(version, entries)` per capture.
type Plan = Vec<(i64, Vec<Entry>)>;

/// Outcome (or error kind) → number of calls that ended so.
type Tally = BTreeMap<String, usize>;

fn tally_key(result: &Result<AssemblyResult, AssemblyError>) -> String {
    match result {
        Ok(r) => format!("{:?}", r.outcome),
        Err(e) => format!("error {:?}", e.kind()),
    }
}

/// The reference: the history, the builder that mints its ids, and what the model answered.
#[derive(Debug, Clone)]
struct History {
    entries: Vec<Entry>,
    builder: Builder,
    limits: Limits,
    calls: usize,
    tally: Tally,
    /// The last call's answer and provider schedule.
    last: Option<(Answer, Plan)>,
}
/// One step of a sequence.
#[derive(Debug, Clone)]
enum Transition {
    /// The conversation grows.
    Append(Vec<Seg>),
    /// One provider call, with concurrent mutations seen by later captures.
    Call {
        steps: Vec<Step>,
        mutations: Vec<(bool, Vec<Seg>)>,
        cancel_at_call: Option<usize>,
    },
}

/// The provider schedule of a call and the history after it.
fn schedule(
    entries: &[Entry],
    builder: &mut Builder,
    mutations: &[(bool, Vec<Seg>)],
) -> Vec<(i64, Vec<Entry>)> {
    let mut steps = vec![(0i64, entries.to_vec())];
    let mut cur = entries.to_vec();
    let mut version = 0i64;
    for (bump, segs) in mutations {
        if *bump {
            version += 1;
            cur.extend(builder.build(segs));
        }
        steps.push((version, cur.clone()));
    }
    steps
}

/// Plays one provider call on the model (`assembler: None`) or on the engine.
fn call(
    limits: &Limits,
    plan: &[(i64, Vec<Entry>)],
    steps: &[Step],
    cancel_at_call: Option<usize>,
    assembler: Option<&mut engine::assemble::Assembler>,
) -> (Result<AssemblyResult, AssemblyError>, Answer) {
    let (mp, ep) = limits.policies();
    let token = CancellationToken::new();
    let mut provider = ScriptedProvider::new(plan.to_vec());
    let mut reducer = TestReducer::new(steps.to_vec());
    if let Some(k) = cancel_at_call {
        reducer.cancel_at = Some((k, token.clone()));
    }
    let (result, diagnostics) = match assembler {
        Some(a) => {
            let r = a.assemble(&ep, &mut provider, &mut reducer, &token);
            let d = r.as_ref().ok().map(|r| Engine.diagnostics(r, &ep));
            (r, d)
        }
        None => {
            let r = Model.assemble(&mp, &mut provider, &mut reducer, &token);
            let d = r.as_ref().ok().map(|r| Model.diagnostics(r, &mp));
            (r, d)
        }
    };
    let answer = Answer {
        result: format!("{result:?}"),
        requests: reducer.log,
        captures: provider.captures(),
        diagnostics: diagnostics.map(|d| format!("{d:?}")),
    };
    (result, answer)
}

struct HistoryMachine;

impl ReferenceStateMachine for HistoryMachine {
    type State = History;
    type Transition = Transition;

    fn init_state() -> BoxedStrategy<History> {
        (80i32..2500, 1i32..=60, 1i32..=5, 1i32..=4, segs_strategy(6))
            .prop_map(|(hard_limit, margin_pct, retention, attempts, segs)| {
                let margin = (hard_limit * margin_pct / 100).clamp(1, hard_limit - 1);
                let mut builder = Builder::new("h");
                let entries = builder.build(&segs);
                History {
                    entries,
                    builder,
                    limits: Limits {
                        hard_limit,
                        margin,
                        retention,
                        attempts,
                    },
                    calls: 0,
                    tally: Tally::new(),
                    last: None,
                }
            })
            .boxed()
    }

    fn transitions(_state: &History) -> BoxedStrategy<Transition> {
        prop_oneof![
            2 => prop::collection::vec(seg_strategy(), 1..5).prop_map(Transition::Append),
            3 => (
                prop::collection::vec(step_strategy(), 0..4),
                prop::collection::vec(
                    (prop::bool::weighted(0.3), prop::collection::vec(seg_strategy(), 0..3)),
                    0..5
                ),
                prop::option::weighted(0.05, 0usize..3),
            )
                .prop_map(|(steps, mutations, cancel_at_call)| Transition::Call {
                    steps,
                    mutations,
                    cancel_at_call,
                }),
        ]
        .boxed()
    }

    fn apply(mut state: History, transition: &Transition) -> History {
        match transition {
            Transition::Append(segs) => {
                let more = state.builder.build(segs);
                state.entries.extend(more);
            }
            Transition::Call {
                steps,
                mutations,
                cancel_at_call,
            } => {
                let plan = schedule(&state.entries, &mut state.builder, mutations);
                let (result, answer) = call(&state.limits, &plan, steps, *cancel_at_call, None);
                state.calls += 1;
                *state.tally.entry(tally_key(&result)).or_default() += 1;
                state.entries = plan.last().map(|(_, e)| e.clone()).unwrap_or_default();
                state.last = Some((answer, plan));
            }
        }
        state
    }
}

/// The system under test: the engine with one reused assembler, fed the same transitions.
struct Sut {
    entries: Vec<Entry>,
    builder: Builder,
    limits: Limits,
    assembler: engine::assemble::Assembler,
    calls: usize,
    tally: Tally,
    last: Option<(Result<AssemblyResult, AssemblyError>, Answer)>,
}

struct EngineVsModel;

impl StateMachineTest for EngineVsModel {
    type SystemUnderTest = Sut;
    type Reference = HistoryMachine;

    fn init_test(ref_state: &History) -> Sut {
        Sut {
            entries: ref_state.entries.clone(),
            builder: ref_state.builder.clone(),
            limits: ref_state.limits,
            assembler: engine::assemble::Assembler::new(),
            calls: 0,
            tally: Tally::new(),
            last: None,
        }
    }

    fn apply(mut sut: Sut, _ref_state: &History, transition: Transition) -> Sut {
        match transition {
            Transition::Append(segs) => {
                let more = sut.builder.build(&segs);
                sut.entries.extend(more);
            }
            Transition::Call {
                steps,
                mutations,
                cancel_at_call,
            } => {
                let plan = schedule(&sut.entries, &mut sut.builder, &mutations);
                let answer = call(
                    &sut.limits,
                    &plan,
                    &steps,
                    cancel_at_call,
                    Some(&mut sut.assembler),
                );
                sut.calls += 1;
                *sut.tally.entry(tally_key(&answer.0)).or_default() += 1;
                sut.entries = plan.last().map(|(_, e)| e.clone()).unwrap_or_default();
                sut.last = Some(answer);
            }
        }
        sut
    }

    fn check_invariants(sut: &Sut, reference: &History) {
        assert_eq!(sut.calls, reference.calls, "provider calls");
        assert_eq!(sut.tally, reference.tally, "outcomes so far");
        match (&sut.last, &reference.last) {
            (None, None) => {}
            (Some((result, answer)), Some((expected, plan))) => {
                assert_eq!(answer.result, expected.result, "results differ");
                assert_eq!(
                    answer.requests, expected.requests,
                    "reduction requests differ"
                );
                assert_eq!(answer.captures, expected.captures, "capture counts differ");
                assert_eq!(
                    answer.diagnostics, expected.diagnostics,
                    "diagnostics differ"
                );
                if let Ok(r) = result {
                    check_result(r, plan, &reference.limits);
                }
            }
            (s, r) => panic!("one side has no answer: engine {s:?}, model {r:?}"),
        }
    }
}

/// SPEC ASM-3, ASM-6, ASM-11, ASM-13 on the engine's result, judged with the model's functions
/// against the reference's snapshots of the call.
fn check_result(r: &AssemblyResult, plan: &[(i64, Vec<Entry>)], limits: &Limits) {
    let (mp, _) = limits.policies();
    assert!(
        r.attempt_count >= 0 && r.attempt_count <= limits.attempts,
        "ASM-11"
    );
    let latest = plan
        .iter()
        .find(|(v, _)| *v == r.latest_snapshot_version)
        .map(|(_, e)| e.as_slice())
        .expect("the latest version is one of the schedule's");
    match (r.outcome, &r.final_entries) {
        (o, Some(fin)) if o.is_success() => {
            assert!(
                r.final_estimated_size <= limits.hard_limit,
                "ASM-3: over the limit"
            );
            let v = Model.verify(latest, fin, &mp).expect("unique ids");
            assert!(v.is_accepted(), "ASM-3: final list rejected: {v:?}");
            let req = Model
                .required_ids(latest, limits.retention)
                .expect("unique");
            assert_eq!(r.required_entry_ids, req, "ASM-13");
            assert_eq!(Ok(r.final_estimated_size), Model.size(fin, mp.estimator()));
        }
        (Outcome::ConcurrentMutationLimit, None) => {
            assert_eq!(
                r.attempt_count, limits.attempts,
                "ASM-6: churn before the budget ran out"
            );
        }
        (o, fin) => assert!(
            !o.is_success() && fin.is_none(),
            "ASM-3: {o:?} with {fin:?}"
        ),
    }
}

prop_state_machine! {
    #![proptest_config(Config::with_cases(cases(128)))]

    /// Engine == model at every provider call of a growing, concurrently mutated history.
    #[test]
    fn engine_matches_model_over_a_growing_history(sequential 1..24 => EngineVsModel);
}
