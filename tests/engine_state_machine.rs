//! Engine vs model over a growing history: a `proptest-state-machine` test.
//!
//! The reference state is a conversation history that grows by appended segments (user turns,
//! tool exchanges with several calls, references, recovered bodies...). A *provider call*
//! transition assembles the current history with a scripted provider whose later captures see
//! concurrent mutations (appended entries, version bumps), a scripted reducer, and maybe a
//! cancellation; the system under test runs the engine (one `Assembler` reused for the whole
//! sequence, so its buffers carry over between calls) and the model on the same inputs and
//! asserts equal results, equal reduction requests and equal diagnostics at every step. After
//! the call the concurrent mutations persist in the history, as they would in a live agent
//! (SPEC SNAP-2, SNAP-5, ASM-5, ASM-6, ASM-7, ASM-16, DIA-5).
//!
//! Shrinking finds the shortest transition sequence that breaks equality.

#[path = "support/gen.rs"]
mod gen;

use std::sync::Arc;

use gen::*;
use hybrid_compaction::engine;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::snapshot::ScriptedProvider;
use hybrid_compaction_spec as spec;
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
            estimator: Some(Arc::new(spec::estimate::Utf8ContextEstimator)),
        })
        .expect("valid policy");
        let engine = model.with_estimator(Arc::new(engine::estimate::Utf8ContextEstimator));
        (model, engine)
    }
}

/// The reference: the history and the builder that mints its ids.
#[derive(Debug, Clone)]
struct History {
    entries: Vec<Entry>,
    builder: Builder,
    limits: Limits,
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
            Transition::Call { mutations, .. } => {
                let steps = schedule(&state.entries, &mut state.builder, mutations);
                state.entries = steps.last().map(|(_, e)| e.clone()).unwrap_or_default();
            }
        }
        state
    }
}

/// The system under test: its own copy of the history plus one reused engine assembler.
struct Sut {
    entries: Vec<Entry>,
    builder: Builder,
    limits: Limits,
    assembler: engine::assemble::Assembler,
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
                let (mp, ep) = sut.limits.policies();
                let run = |engine_side: bool, assembler: &mut engine::assemble::Assembler| {
                    let token = CancellationToken::new();
                    let mut provider = ScriptedProvider::new(plan.clone());
                    let mut reducer = TestReducer::new(steps.clone());
                    if let Some(k) = cancel_at_call {
                        reducer.cancel_at = Some((k, token.clone()));
                    }
                    let r = if engine_side {
                        assembler.assemble(&ep, &mut provider, &mut reducer, &token)
                    } else {
                        spec::assemble::assemble(&mp, &mut provider, &mut reducer, &token)
                    };
                    (r, reducer.log, provider.captures())
                };
                let model = run(false, &mut sut.assembler);
                let eng = run(true, &mut sut.assembler);
                // Debug rendering: NaN-holding values must be identical, not VER-2 equal.
                assert_eq!(
                    format!("{:?}", eng.0),
                    format!("{:?}", model.0),
                    "results differ"
                );
                assert_eq!(eng.1, model.1, "reduction requests differ");
                assert_eq!(eng.2, model.2, "capture counts differ");
                if let (Ok(er), Ok(mr)) = (&eng.0, &model.0) {
                    assert_eq!(
                        engine::diagnostics::build(er, &ep),
                        spec::diagnostics::build(mr, &mp),
                        "diagnostics differ"
                    );
                }
                sut.entries = plan.last().map(|(_, e)| e.clone()).unwrap_or_default();
            }
        }
        sut
    }

    fn check_invariants(sut: &Sut, ref_state: &History) {
        let ids = |l: &[Entry]| l.iter().map(|e| e.id().clone()).collect::<Vec<_>>();
        assert_eq!(ids(&sut.entries), ids(&ref_state.entries));
    }
}

prop_state_machine! {
    #![proptest_config(Config::with_cases(cases(128)))]

    /// Engine == model at every provider call of a growing, concurrently mutated history.
    #[test]
    fn engine_matches_model_over_a_growing_history(sequential 1..24 => EngineVsModel);
}
