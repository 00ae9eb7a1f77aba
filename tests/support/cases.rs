//! Shared case generators of the engine-vs-model properties
//! (`tests/properties/engine_equivalence.rs`) and of the generator-coverage test
//! (`tests/properties/generator_coverage.rs`), so that the coverage floors are measured on
//! exactly the inputs the properties see.
//!
//! * [`Case`] / [`case_strategy`]: one assembly (history segments, estimator, limits placed on
//!   the interesting sizes of the history, reducer steps, provider schedule, cancellation);
//!   [`policies`] builds the model's and the engine's policy for it and [`run`] plays it.
//! * [`Edit`] / [`edit_strategy`] / [`apply`]: a proposal derived from a history, for the
//!   verifier property (VER-1 .. VER-4). Duplicate ids (an argument error, not a verdict) are
//!   kept rare so that most inputs reach the verifier's checks.

#![allow(dead_code)]

use std::sync::Arc;

use crate::gen::*;
use hybrid_compaction::engine;
use hybrid_compaction::seam::Engine;
use hybrid_compaction_model::assembly::{AssemblyError, AssemblyResult};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::seam::Implementation;
use hybrid_compaction_spec::Model;
use proptest::prelude::*;

/// One assembly case.
#[derive(Debug, Clone)]
pub struct Case {
    pub focus: Focus,
    pub segs: Vec<Seg>,
    pub estimator: EstimatorPlan,
    pub limits: LimitPlan,
    pub steps: Vec<Step>,
    pub provider: ProviderPlan,
    pub cancel_at_call: Option<usize>,
    pub cancel_before: bool,
}

/// The path of SPEC ASM-7 a case is aimed at: its limits (and first reducer step, and for
/// eviction a durable recovered body) are chosen so that the run reaches that check site, where
/// the provider plan then decides between a stable version, a restart and churn. `Mixed` keeps
/// the independent choices of [`limit_plan_strategy`] and [`step_strategy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Mixed,
    /// Threshold above the full size (ASM-7 below-trigger site; ASM-12 a with a defect).
    BelowTrigger,
    /// Threshold just above the evicted size, a durable body present (ASM-8).
    Eviction,
    /// A valid, smaller first proposal that fits (reduced-proposal site).
    Reduced,
    /// An invalid first proposal while the evicted list fits (preserve-current site).
    Preserve,
    /// An invalid first proposal, the evicted list over the limit (ASM-9 fallback).
    Fallback,
    /// The first reducer call fails or returns something the assembler rejects as an error
    /// (ASM-4: nothing, a failure, a contract violation, a duplicate id), or the capture after
    /// it is malformed (SNAP-1: a repeated id, a negative version).
    Error,
    /// The fallback adopts, on a restart, a snapshot whose new entries are huge in the host
    /// table: the required-only candidate's size overflows (POL-3) after a restart.
    LateOverflow,
}

pub fn focus_strategy() -> impl Strategy<Value = Focus> {
    prop_oneof![
        2 => Just(Focus::Mixed),
        3 => Just(Focus::BelowTrigger),
        3 => Just(Focus::Eviction),
        4 => Just(Focus::Reduced),
        4 => Just(Focus::Preserve),
        4 => Just(Focus::Fallback),
        5 => Just(Focus::Error),
        1 => Just(Focus::LateOverflow),
    ]
}

/// The random choices an aimed case draws besides its focus.
#[derive(Debug, Clone)]
pub struct Aim {
    /// The first step of `Preserve` / `Fallback` (invalid or non-progressing).
    invalid: Step,
    /// The first step of `Error`, the glitch of the capture after it, and whether an entry
    /// of negative size (host table) arrives with a version change at that capture.
    error: (Step, Glitch, bool),
    /// The digest of the durable body of `Eviction`.
    digest: u8,
    /// 0: the provider plan as drawn; 1: one version change at the focused site's capture;
    /// 2: changes from that capture on; 3: one change at the capture before it (the
    /// post-reducer recheck of the reducer foci; none for the others).
    landing: u8,
}

fn aim_strategy() -> impl Strategy<Value = Aim> {
    let invalid = prop_oneof![
        Just(Step::Forge),
        Just(Step::DropRequired),
        Just(Step::Echo),
        Just(Step::Mutate),
        Just(Step::Swap),
        (1usize..40).prop_map(Step::AddSummary),
    ];
    let error = prop_oneof![
        2 => Just((Step::Nothing, Glitch::None, false)),
        2 => Just((Step::Fail, Glitch::None, false)),
        2 => Just((Step::Contract, Glitch::None, false)),
        2 => Just((Step::Duplicate, Glitch::None, false)),
        2 => Just((Step::Echo, Glitch::DuplicateEntry, false)),
        3 => Just((Step::Echo, Glitch::NegativeVersion, false)),
        3 => Just((Step::Echo, Glitch::None, true)),
    ];
    let landing = prop_oneof![1 => Just(0u8), 2 => Just(1u8), 3 => Just(2u8), 1 => Just(3u8)];
    (invalid, error, 0u8..4, landing).prop_map(|(invalid, error, digest, landing)| Aim {
        invalid,
        error,
        digest,
        landing,
    })
}

impl Focus {
    /// The capture index of the focused site when nothing restarted before it.
    fn site_capture(self) -> usize {
        match self {
            Focus::Mixed | Focus::BelowTrigger | Focus::Eviction => 1,
            _ => 2,
        }
    }

    /// Aims `case` at this focus (points as in [`policies`]: 0 full, 1 evicted, 2 required,
    /// 3 required + optional, 4 between full and required, 5 three, 6 twice full + 4).
    fn aim(self, case: &mut Case, aim: Aim) {
        // A single change at the site restarts (the budget allows one more attempt); changes
        // from there on with a budget of one end in churn at that site, or at the next one.
        match (self, aim.landing) {
            (Focus::Mixed, _) => return,
            (Focus::LateOverflow, _) | (_, 1) => {
                case.provider.retime(Bumps::At(self.site_capture()), 4);
                case.limits.attempts = case.limits.attempts.max(2);
            }
            (_, 2) => {
                case.provider.retime(Bumps::From(self.site_capture()), 4);
                case.limits.attempts = 1;
            }
            (_, 3) => case.provider.retime(Bumps::At(self.site_capture() - 1), 4),
            _ => {}
        }
        if self != Focus::BelowTrigger {
            // A tool defect would end these in Irreducible before the focused site.
            clean(&mut case.segs);
        }
        // Sizes that neither fail (negative, overflow) nor vanish (0), so the run gets there;
        // the estimate errors are the business of `Mixed` and `LateOverflow`.
        case.estimator = match std::mem::replace(&mut case.estimator, EstimatorPlan::Context) {
            EstimatorPlan::Constant(c) => EstimatorPlan::Constant(c.max(1)),
            EstimatorPlan::Table {
                sizes,
                later,
                default,
            } => EstimatorPlan::Table {
                sizes: sizes.into_iter().map(|s| s.clamp(1, 50)).collect(),
                later: later.into_iter().map(|s| s.clamp(1, 50)).collect(),
                default: default.max(1),
            },
            other => other,
        };
        // Some old, non-required conversation for the reducer and the fallback to drop, and a
        // short retention so that it stays non-required (PRE-1.5).
        let old = Seg::Plain {
            kind: PlainKind::Conversation,
            len: 30,
            script: Script::Combining,
        };
        case.segs.splice(0..0, [old.clone(), old]);
        case.limits.retention = case.limits.retention.min(2);
        let l = &mut case.limits;
        let first = match self {
            Focus::Mixed => return,
            Focus::BelowTrigger => {
                (l.threshold_point, l.threshold_delta) = (0, 1);
                l.hard_point = 6;
                return;
            }
            Focus::Eviction => {
                // Bodies must weigh something: a host table or constant may measure them 0.
                if !matches!(case.estimator, EstimatorPlan::Text) {
                    case.estimator = EstimatorPlan::Context;
                }
                let l = &mut case.limits;
                (l.threshold_point, l.threshold_delta) = (1, 1);
                l.hard_point = 6;
                let body = Seg::Recoverable {
                    digest: aim.digest,
                    len: 90,
                    script: Script::Wide,
                };
                case.segs
                    .splice(0..0, [body, Seg::ArtRef { digest: aim.digest }]);
                return;
            }
            Focus::Reduced => {
                (l.threshold_point, l.threshold_delta) = (2, 0);
                (l.hard_point, l.hard_delta) = if l.hard_point.is_multiple_of(2) {
                    (0, -1)
                } else {
                    (4, 0)
                };
                Step::SummarizeAll
            }
            Focus::Preserve => {
                (l.threshold_point, l.threshold_delta) = (2, 0);
                l.hard_point = 6;
                aim.invalid
            }
            Focus::Fallback => {
                (l.threshold_point, l.threshold_delta) = (2, 0);
                (l.hard_point, l.hard_delta) = (3, 0);
                aim.invalid
            }
            Focus::Error => {
                (l.threshold_point, l.threshold_delta) = (2, 0);
                if case.provider.changes.is_empty() {
                    case.provider.retime(Bumps::At(0), 1);
                }
                case.provider.changes[0].3 = aim.error.1;
                if aim.error.2 {
                    let sizes = match &case.estimator {
                        EstimatorPlan::Table { sizes, .. } => sizes.clone(),
                        _ => vec![10],
                    };
                    case.estimator = EstimatorPlan::Table {
                        sizes,
                        later: vec![-1],
                        default: 5,
                    };
                    let turn = Seg::Plain {
                        kind: PlainKind::Conversation,
                        len: 3,
                        script: Script::Wide,
                    };
                    (case.provider.changes[0].0, case.provider.changes[0].1) = (true, vec![turn]);
                }
                aim.error.0
            }
            Focus::LateOverflow => {
                (l.threshold_point, l.threshold_delta) = (2, 0);
                (l.hard_point, l.hard_delta) = (3, 0);
                let sizes = match &case.estimator {
                    EstimatorPlan::Table { sizes, .. } => sizes.clone(),
                    _ => vec![10],
                };
                case.estimator = EstimatorPlan::Table {
                    sizes: sizes.into_iter().map(|s| s.clamp(0, 50)).collect(),
                    later: vec![HUGE],
                    default: 5,
                };
                // Two required entries arrive with the change at the fallback's capture.
                let system = Seg::Plain {
                    kind: PlainKind::System,
                    len: 4,
                    script: Script::Astral,
                };
                let change = &mut case.provider.changes[self.site_capture() - 1];
                change.1 = vec![system.clone(), system];
                change.2 = 0;
                aim.invalid
            }
        };
        case.steps.insert(0, first);
    }
}

pub fn case_strategy() -> impl Strategy<Value = Case> {
    (
        (segs_strategy(24), prop::bool::weighted(0.65)).prop_map(|(mut segs, clean_it)| {
            if clean_it {
                clean(&mut segs);
            }
            segs
        }),
        estimator_plan_strategy(),
        limit_plan_strategy(),
        prop::collection::vec(step_strategy(), 0..5),
        provider_plan_strategy(),
        prop::option::weighted(0.03, 0usize..4),
        prop::bool::weighted(0.02),
        (focus_strategy(), aim_strategy()),
    )
        .prop_map(
            |(segs, estimator, limits, steps, provider, cancel_at_call, cancel_before, aim)| {
                let mut case = Case {
                    focus: aim.0,
                    segs,
                    estimator,
                    limits,
                    steps,
                    provider,
                    cancel_at_call,
                    cancel_before,
                };
                aim.0.aim(&mut case, aim.1);
                case
            },
        )
}

/// The model's and the engine's policy for a case: identical numbers; the same host estimator
/// instance, or each side's own UTF-8 estimator.
pub fn policies(case: &Case, entries: &[Entry]) -> (Policy, Policy) {
    let n_ids = entries.len() + 40;
    let (model_est, engine_est): (Arc<dyn Estimator>, Arc<dyn Estimator>) =
        match case.estimator.host(n_ids) {
            Some(e) => (e.clone(), e),
            None => match case.estimator {
                EstimatorPlan::Text => (Model.text_estimator(), Engine.text_estimator()),
                _ => (Model.context_estimator(), Engine.context_estimator()),
            },
        };
    // Interesting sizes, measured with the model (clamped, never failing).
    let measure = |list: &[Entry]| -> i64 {
        list.iter()
            .map(|e| i64::from(model_est.estimate(e).max(0)))
            .sum()
    };
    let full = measure(entries);
    let evicted = measure(&Model.evict(entries));
    let retention = case.limits.retention;
    let (required, with_optional) = match Model.required_ids(entries, retention) {
        Ok(r) => {
            let req: Vec<Entry> = entries
                .iter()
                .filter(|e| r.contains(e.id()))
                .cloned()
                .collect();
            let opt: Vec<Entry> = entries
                .iter()
                .filter(|e| r.contains(e.id()) || e.kind() == EntryKind::OptionalContext)
                .cloned()
                .collect();
            (measure(&req), measure(&opt))
        }
        Err(_) => (full / 2, full),
    };
    let points = [
        full,
        evicted,
        required,
        with_optional,
        (full + required) / 2,
        3,
        2 * full + 4,
    ];
    let model = case.limits.policy(&points, model_est);
    let engine = model.with_estimator(engine_est);
    (model, engine)
}

/// One run: the result, the logged requests, the number of captures, whether the token ended
/// cancelled, and the reducer's trace (request entries, proposal) per returning call.
pub type Run = (
    Result<AssemblyResult, AssemblyError>,
    Vec<RequestLog>,
    usize,
    bool,
    Vec<(Vec<Entry>, Option<Vec<Entry>>)>,
);

pub fn run(case: &Case, entries: &[Entry], policy: &Policy, engine_side: bool) -> Run {
    run_with(
        case,
        entries,
        policy,
        engine_side,
        &mut engine::assemble::Assembler::new(),
    )
}

pub fn run_with(
    case: &Case,
    entries: &[Entry],
    policy: &Policy,
    engine_side: bool,
    assembler: &mut engine::assemble::Assembler,
) -> Run {
    let token = CancellationToken::new();
    if case.cancel_before {
        token.cancel();
    }
    let mut provider = case.provider.provider(entries, &token);
    let mut reducer = TestReducer::new(case.steps.clone());
    if let Some(k) = case.cancel_at_call {
        reducer.cancel_at = Some((k, token.clone()));
    }
    let result = if engine_side {
        assembler.assemble(policy, &mut provider, &mut reducer, &token)
    } else {
        Model.assemble(policy, &mut provider, &mut reducer, &token)
    };
    (
        result,
        reducer.log,
        provider.captures(),
        token.is_cancelled(),
        reducer.trace,
    )
}

/// A proposal derived from `original` by planned edits (for verifier equivalence).
#[derive(Debug, Clone)]
pub struct Edit {
    pub keep_mask: Vec<bool>,
    pub swap: Option<(usize, usize)>,
    pub extra: Vec<Seg>,
    pub reuse_ids: bool,
    pub duplicate: Option<usize>,
    pub duplicate_original: Option<usize>,
}

pub fn edit_strategy() -> impl Strategy<Value = Edit> {
    (
        prop::collection::vec(prop::bool::weighted(0.8), 0..40),
        prop::option::weighted(0.2, (0usize..40, 0usize..40)),
        prop::collection::vec(seg_strategy(), 0..3),
        prop::bool::weighted(0.3),
        prop::option::weighted(0.03, 0usize..40),
        prop::option::weighted(0.03, 0usize..40),
    )
        .prop_map(
            |(keep_mask, swap, extra, reuse_ids, duplicate, duplicate_original)| Edit {
                keep_mask,
                swap,
                extra,
                reuse_ids,
                duplicate,
                duplicate_original,
            },
        )
}

pub fn apply(edit: &Edit, original: &mut Vec<Entry>) -> Vec<Entry> {
    let mut p: Vec<Entry> = original
        .iter()
        .enumerate()
        .filter(|(i, _)| edit.keep_mask.get(*i).copied().unwrap_or(true))
        .map(|(_, e)| e.clone())
        .collect();
    if let Some((a, b)) = edit.swap {
        if !p.is_empty() {
            let n = p.len();
            p.swap(a % n, b % n);
        }
    }
    // New entries: fresh ids, or ids of the original (mutated content / changed kind).
    let mut b = Builder::new(if edit.reuse_ids { "e" } else { "x" });
    let extra = b.build(&edit.extra);
    for e in extra {
        let pos = p.iter().position(|q| q.id() == e.id());
        match pos {
            Some(i) => p[i] = e,
            None => p.push(e),
        }
    }
    if let Some(i) = edit.duplicate {
        if !p.is_empty() {
            let e = p[i % p.len()].clone();
            p.push(e);
        }
    }
    if let Some(i) = edit.duplicate_original {
        if !original.is_empty() {
            let e = original[i % original.len()].clone();
            original.push(e);
        }
    }
    p
}

/// The verifier property's input: a history, an edit of it, a retention count.
pub fn verify_input_strategy() -> impl Strategy<Value = (Vec<Seg>, Edit, i32)> {
    (segs_strategy(30), edit_strategy(), 1i32..=5)
}

/// The lists and the two policies of one verifier input: `(original, proposed, model policy,
/// engine policy)`.
pub fn verify_input(
    segs: &[Seg],
    edit: &Edit,
    retention: i32,
) -> (Vec<Entry>, Vec<Entry>, Policy, Policy) {
    let mut original = build(segs);
    let proposed = apply(edit, &mut original);
    let case = Case {
        focus: Focus::Mixed,
        segs: segs.to_vec(),
        estimator: EstimatorPlan::Constant(1),
        limits: LimitPlan {
            hard_point: 0,
            hard_delta: 0,
            threshold_point: 1,
            threshold_delta: 0,
            retention,
            attempts: 1,
        },
        steps: vec![],
        provider: ProviderPlan::stable(),
        cancel_at_call: None,
        cancel_before: false,
    };
    let (mp, ep) = policies(&case, &original);
    (original, proposed, mp, ep)
}
