//! Shared proptest generators for engine-vs-model tests (and anyone else who wants them).
//!
//! The generators are biased toward the states where assembly is interesting (as AWS ShardStore
//! biased its inputs), rather than toward uniform randomness:
//!
//! * histories are built from *segments* ([`Seg`]): plain entries of every kind, artifact
//!   references from a small digest pool (so references collide and become durable), recovered
//!   bodies with and without a durable reference, and tool exchanges with 1-3 calls per message
//!   whose results are spread over 1-3 tool messages, each exchange optionally carrying one
//!   defect ([`Defect`]: orphan call, orphan result, duplicate call id, duplicate result,
//!   reordered, cross-group) and optionally a canonical reference in a result (plain string or
//!   raw-JSON string);
//! * values include every numeric variant with edge cases (NaN, -0.0, 1e16, 1e-5, decimals with
//!   scale), maps and lists;
//! * policies are placed around the interesting sizes of the generated history (full size,
//!   evicted size, required-only size, required + optional size, ±1), so triggers and hard
//!   limits land exactly on, just below and just above those points; retention 1..5, attempts
//!   1..4; estimators are the UTF-8 context / text estimators, a constant, or a table (with
//!   rare negative and huge entries to reach the estimate errors);
//! * reducers ([`TestReducer`]) act on the request they receive: drop a fraction of the
//!   non-required entries (valid, maybe still too large), drop a required entry, forge a tool
//!   entry, mutate a retained entry, reorder, add a summary (growing), echo (non-progressing),
//!   return nothing, fail; every request is logged so engine and model requests can be compared;
//! * snapshot providers ([`ProviderPlan`]) change version at chosen captures, growing the
//!   history (appended entries) or dropping entries, and may cancel at a chosen capture.
//!
//! Entry ids are `e0, e1, ...` in build order (unique), so plans can name entries by index.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use hybrid_compaction_model::artifact::{ArtifactReference, Digest};
use hybrid_compaction_model::assembly::{Reducer, ReducerError, ReductionRequest};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind, RecoverableSegment};
use hybrid_compaction_model::estimator::{ConstantEstimator, Estimator, TableEstimator};
use hybrid_compaction_model::message::{FunctionCall, Message, Part};
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::{ProposalItem, ScriptStep, ScriptedReducer};
use hybrid_compaction_model::snapshot::ScriptedProvider;
use hybrid_compaction_model::value::{Decimal, RawJson, Value};
use proptest::prelude::*;

/// Case count: `PROPTEST_CASES` if set, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `i`-th digest of the small pool (so references collide across entries).
pub fn pool_digest(i: u8) -> Digest {
    Digest::of(&format!("artifact-body-{}", i % 4))
}

/// The canonical reference text of pool digest `i`.
pub fn pool_reference(i: u8) -> String {
    ArtifactReference::new(pool_digest(i)).to_string()
}

/// Plain (non-tool, non-structural-special) kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlainKind {
    System,
    Session,
    Approval,
    Conversation,
    Summary,
    Optional,
}

/// A defect to plant in one tool exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Defect {
    None,
    OrphanCall,
    OrphanResult,
    DuplicateCallId,
    DuplicateResult,
    Reordered,
    CrossGroup,
}

/// One segment of a history.
#[derive(Debug, Clone)]
pub enum Seg {
    /// A plain entry with `len` characters of text (`wide`: multi-byte characters).
    Plain {
        kind: PlainKind,
        len: usize,
        wide: bool,
    },
    /// An `ArtifactReference` entry naming pool digest `digest`.
    ArtRef { digest: u8 },
    /// A recovered body for pool digest `digest`.
    Recoverable { digest: u8, len: usize },
    /// A tool exchange.
    Exchange {
        calls: u8,
        split: u8,
        defect: Defect,
        reference: Option<(u8, bool)>,
        value: Value,
    },
}

/// Interesting scalar and nested values.
pub fn value_strategy() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        "[a-z]{0,12}".prop_map(Value::String),
        any::<bool>().prop_map(Value::Bool),
        any::<i16>().prop_map(Value::I16),
        any::<i32>().prop_map(Value::I32),
        any::<i64>().prop_map(Value::I64),
        any::<u8>().prop_map(Value::U8),
        any::<u32>().prop_map(Value::U32),
        any::<u64>().prop_map(Value::U64),
        any::<f32>().prop_map(Value::F32),
        any::<f64>().prop_map(Value::F64),
        prop_oneof![
            Just(f64::NAN),
            Just(-0.0),
            Just(1e16),
            Just(1e17),
            Just(1e-5),
            Just(0.0001),
            Just(123.456),
            Just(1e21)
        ]
        .prop_map(Value::F64),
        prop_oneof![Just(f32::NAN), Just(1e9f32), Just(1e8f32), Just(-0.0f32)].prop_map(Value::F32),
        (
            prop_oneof![-1_000i128..1_000, -10_000_000i128..10_000_000],
            0u8..6
        )
            .prop_map(|(m, s)| Value::Decimal(Decimal::new(m, s).expect("in range"))),
        prop_oneof![
            Just("true"),
            Just("17"),
            Just("\"text\""),
            Just("{\"a\":[1,2]}")
        ]
        .prop_map(|t| Value::RawJson(RawJson::new(t).expect("valid json"))),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::List),
            prop::collection::btree_map("[a-c]{1,2}", inner, 0..3).prop_map(Value::Map),
        ]
    })
}

fn defect_strategy() -> impl Strategy<Value = Defect> {
    prop_oneof![
        24 => Just(Defect::None),
        1 => Just(Defect::OrphanCall),
        1 => Just(Defect::OrphanResult),
        1 => Just(Defect::DuplicateCallId),
        1 => Just(Defect::DuplicateResult),
        1 => Just(Defect::Reordered),
        1 => Just(Defect::CrossGroup),
    ]
}

/// One segment, weighted toward conversation and tool exchanges.
pub fn seg_strategy() -> impl Strategy<Value = Seg> {
    let plain_kind = prop_oneof![
        1 => Just(PlainKind::System),
        1 => Just(PlainKind::Session),
        1 => Just(PlainKind::Approval),
        8 => Just(PlainKind::Conversation),
        2 => Just(PlainKind::Summary),
        2 => Just(PlainKind::Optional),
    ];
    prop_oneof![
        10 => (plain_kind, 0usize..40, prop::bool::weighted(0.2))
            .prop_map(|(kind, len, wide)| Seg::Plain { kind, len, wide }),
        2 => (0u8..4).prop_map(|digest| Seg::ArtRef { digest }),
        3 => (0u8..6, 1usize..80).prop_map(|(digest, len)| Seg::Recoverable { digest, len }),
        8 => (
            1u8..4,
            1u8..4,
            defect_strategy(),
            prop::option::weighted(0.3, (0u8..4, any::<bool>())),
            value_strategy()
        )
            .prop_map(|(calls, split, defect, reference, value)| Seg::Exchange {
                calls,
                split,
                defect,
                reference,
                value,
            }),
    ]
}

/// A history of 0..max segments.
pub fn segs_strategy(max: usize) -> impl Strategy<Value = Vec<Seg>> {
    prop::collection::vec(seg_strategy(), 0..max)
}

fn text(len: usize, wide: bool, salt: usize) -> String {
    let unit = if wide { "é漢" } else { "ab" };
    let mut s = format!("m{salt}:");
    while s.chars().count() < len {
        s.push_str(unit);
    }
    s
}

/// Builds entries from segments; ids `{prefix}{i}`; call ids are global per build.
#[derive(Debug, Clone)]
pub struct Builder {
    pub prefix: String,
    pub next: usize,
    pub next_call: usize,
    /// Call ids of the previous exchange (for duplicate / cross-group defects).
    pub last_calls: Vec<String>,
}

impl Builder {
    pub fn new(prefix: &str) -> Builder {
        Builder {
            prefix: prefix.to_owned(),
            next: 0,
            next_call: 0,
            last_calls: Vec::new(),
        }
    }

    fn id(&mut self) -> String {
        let id = format!("{}{}", self.prefix, self.next);
        self.next += 1;
        id
    }

    fn call_id(&mut self) -> String {
        let id = format!("{}c{}", self.prefix, self.next_call);
        self.next_call += 1;
        id
    }

    pub fn build(&mut self, segs: &[Seg]) -> Vec<Entry> {
        let mut out = Vec::new();
        for seg in segs {
            self.push(seg, &mut out);
        }
        out
    }

    pub fn push(&mut self, seg: &Seg, out: &mut Vec<Entry>) {
        match seg {
            Seg::Plain { kind, len, wide } => {
                let (kind, role) = match kind {
                    PlainKind::System => (EntryKind::SystemInstruction, "system"),
                    PlainKind::Session => (EntryKind::AuthoritativeSessionState, "user"),
                    PlainKind::Approval => (EntryKind::ApprovalSecurityState, "user"),
                    PlainKind::Conversation => (EntryKind::ConversationalMessage, "user"),
                    PlainKind::Summary => (EntryKind::Summary, "assistant"),
                    PlainKind::Optional => (EntryKind::OptionalContext, "user"),
                };
                let id = self.id();
                let t = text(*len, *wide, self.next);
                out.push(Entry::new(id, kind, Message::text(role, t)).expect("plain entry"));
            }
            Seg::ArtRef { digest } => {
                let id = self.id();
                out.push(
                    Entry::new(
                        id,
                        EntryKind::ArtifactReference,
                        Message::text("user", pool_reference(*digest)),
                    )
                    .expect("reference entry"),
                );
            }
            Seg::Recoverable { digest, len } => {
                let id = self.id();
                let body = text(*len, false, self.next);
                let segment = RecoverableSegment {
                    reference: ArtifactReference::new(pool_digest(*digest)),
                    body,
                };
                // Digests 4 and 5 map onto the pool too but are rarely referenced by `ArtRef`
                // (0..4), so some bodies are reference-less.
                let segment = if *digest >= 4 {
                    RecoverableSegment {
                        reference: ArtifactReference::to_content(&format!("unreferenced-{digest}")),
                        ..segment
                    }
                } else {
                    segment
                };
                out.push(Entry::recoverable(id, segment).expect("recoverable entry"));
            }
            Seg::Exchange {
                calls,
                split,
                defect,
                reference,
                value,
            } => self.exchange(*calls, *split, *defect, *reference, value, out),
        }
    }

    fn exchange(
        &mut self,
        calls: u8,
        split: u8,
        defect: Defect,
        reference: Option<(u8, bool)>,
        value: &Value,
        out: &mut Vec<Entry>,
    ) {
        let mut call_ids: Vec<String> = (0..calls).map(|_| self.call_id()).collect();
        if defect == Defect::DuplicateCallId {
            match self.last_calls.first() {
                Some(prev) => call_ids[0] = prev.clone(),
                None => call_ids.push(call_ids[0].clone()),
            }
        }
        let call_parts: Vec<Part> = call_ids
            .iter()
            .enumerate()
            .map(|(i, c)| {
                Part::Call(FunctionCall {
                    call_id: c.clone(),
                    name: format!("tool{i}"),
                    arguments: if i == 0 {
                        Some(BTreeMap::from([("arg".to_owned(), value.clone())]))
                    } else {
                        None
                    },
                    informational_only: i == 1,
                })
            })
            .collect();
        let call_entry = Entry::new(
            self.id(),
            EntryKind::ToolExchange,
            Message::new("assistant", call_parts),
        )
        .expect("call entry");

        // Results: one per call id, spread over `split` messages.
        let mut answered: Vec<String> = call_ids.clone();
        answered.dedup();
        match defect {
            Defect::OrphanCall => {
                answered.pop();
            }
            Defect::OrphanResult => answered.push(format!("{}orphan{}", self.prefix, self.next)),
            Defect::DuplicateResult => answered.push(answered[0].clone()),
            Defect::CrossGroup => {
                if let Some(prev) = self.last_calls.first() {
                    answered.push(prev.clone());
                }
            }
            _ => {}
        }
        let split = usize::from(split).clamp(1, answered.len().max(1));
        let per = answered.len().div_ceil(split).max(1);
        let mut result_entries = Vec::new();
        for (k, chunk) in answered.chunks(per).enumerate() {
            let parts: Vec<Part> = chunk
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let v = match reference {
                        Some((d, raw)) if k == 0 && i == 0 => {
                            if raw {
                                Value::RawJson(
                                    RawJson::new(format!("\"{}\"", pool_reference(d)))
                                        .expect("json string"),
                                )
                            } else {
                                Value::String(pool_reference(d))
                            }
                        }
                        _ if i == 0 => value.clone(),
                        _ => Value::String(format!("r{k}{i}")),
                    };
                    Part::result(c.clone(), v)
                })
                .collect();
            result_entries.push(
                Entry::new(
                    self.id(),
                    EntryKind::ToolExchange,
                    Message::new("tool", parts),
                )
                .expect("result entry"),
            );
        }
        if defect == Defect::Reordered {
            out.extend(result_entries);
            out.push(call_entry);
        } else {
            out.push(call_entry);
            out.extend(result_entries);
        }
        self.last_calls = call_ids;
    }
}

/// Removes every planted defect (a clean history: only well-formed tool exchanges).
pub fn clean(segs: &mut [Seg]) {
    for seg in segs {
        if let Seg::Exchange { defect, .. } = seg {
            *defect = Defect::None;
        }
    }
}

/// Builds a history with ids `e0..`.
pub fn build(segs: &[Seg]) -> Vec<Entry> {
    Builder::new("e").build(segs)
}

/// Which estimator a case uses.
#[derive(Debug, Clone)]
pub enum EstimatorPlan {
    Context,
    Text,
    Constant(i32),
    /// Per-position sizes (`e{i}` → sizes[i % len]), default for other ids.
    Table(Vec<i32>, i32),
}

pub fn estimator_plan_strategy() -> impl Strategy<Value = EstimatorPlan> {
    prop_oneof![
        5 => Just(EstimatorPlan::Context),
        2 => Just(EstimatorPlan::Text),
        1 => (0i32..20).prop_map(EstimatorPlan::Constant),
        2 => (
            prop::collection::vec(
                prop_oneof![80 => 0i32..50, 1 => Just(-1), 1 => Just(i32::MAX / 2)],
                1..12
            ),
            0i32..30
        )
            .prop_map(|(v, d)| EstimatorPlan::Table(v, d)),
    ]
}

impl EstimatorPlan {
    /// The host-defined estimator, or `None` for the UTF-8 estimators (model and engine each
    /// supply their own implementation).
    pub fn host(&self, ids: usize) -> Option<Arc<dyn Estimator>> {
        match self {
            EstimatorPlan::Context | EstimatorPlan::Text => None,
            EstimatorPlan::Constant(c) => Some(Arc::new(ConstantEstimator(*c))),
            EstimatorPlan::Table(v, d) => {
                let mut sizes = BTreeMap::new();
                for i in 0..ids.max(1) {
                    sizes.insert(format!("e{i}"), v[i % v.len()]);
                }
                Some(Arc::new(TableEstimator { sizes, default: *d }))
            }
        }
    }
}

/// Where the hard limit and the trigger threshold land, relative to interesting sizes.
#[derive(Debug, Clone, Copy)]
pub struct LimitPlan {
    pub hard_point: u8,
    pub hard_delta: i8,
    pub threshold_point: u8,
    pub threshold_delta: i8,
    pub retention: i32,
    pub attempts: i32,
}

pub fn limit_plan_strategy() -> impl Strategy<Value = LimitPlan> {
    (0u8..6, -1i8..=1, 0u8..6, -1i8..=1, 1i32..=5, 1i32..=4).prop_map(
        |(hard_point, hard_delta, threshold_point, threshold_delta, retention, attempts)| {
            LimitPlan {
                hard_point,
                hard_delta,
                threshold_point,
                threshold_delta,
                retention,
                attempts,
            }
        },
    )
}

impl LimitPlan {
    /// Builds a valid policy from interesting sizes `points` (full, evicted, required, ...).
    pub fn policy(&self, points: &[i64], estimator: Arc<dyn Estimator>) -> Policy {
        let pick = |p: u8, d: i8| -> i64 {
            let base = points
                .get(usize::from(p) % points.len().max(1))
                .copied()
                .unwrap_or(10);
            base + i64::from(d)
        };
        let mut h = pick(self.hard_point, self.hard_delta).clamp(2, i64::from(i32::MAX));
        let mut t = pick(self.threshold_point, self.threshold_delta);
        if t >= h {
            // Keep the threshold strictly below the hard limit.
            t = h - 1;
        }
        if t < 1 {
            t = 1;
        }
        if h <= t {
            h = t + 1;
        }
        Policy::new(PolicySpec {
            hard_limit: h as i32,
            trigger_margin: (h - t) as i32,
            recent_message_retention_count: self.retention,
            maximum_compaction_attempts: self.attempts,
            preservation_label: Some("test".to_owned()),
            preservation_version: 1,
            estimator: Some(estimator),
        })
        .expect("valid policy")
    }
}

/// What the test reducer does at one attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Keep required entries and drop the first `percent`% of the others (valid if the request
    /// is valid; may still be too large).
    DropOptional(u8),
    /// Drop the first required entry (invalid: missing required entry).
    DropRequired,
    /// Append a forged `ToolExchange` entry (invalid: forged structural entry).
    Forge,
    /// Replace the last entry's content, same id (invalid if not required; mismatch if required).
    Mutate,
    /// Swap the first two entries.
    Swap,
    /// Keep everything and add a summary of `len` bytes (growing).
    AddSummary(usize),
    /// Drop all but required and add a short summary (valid, small).
    SummarizeAll,
    /// Return the request unchanged (non-progressing).
    Echo,
    /// Return nothing.
    Nothing,
    /// Fail.
    Fail,
    /// Duplicate the first entry (a duplicate id: an error of the verifier).
    Duplicate,
    /// Play a model `ScriptStep` through a `ScriptedReducer` (Keep by id / New / Echo ...).
    Scripted(ScriptStep),
}

pub fn step_strategy() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (10u8..=100).prop_map(Step::DropOptional),
        4 => Just(Step::SummarizeAll),
        2 => Just(Step::DropRequired),
        1 => Just(Step::Forge),
        1 => Just(Step::Mutate),
        1 => Just(Step::Swap),
        2 => (1usize..60).prop_map(Step::AddSummary),
        3 => Just(Step::Echo),
        1 => Just(Step::Nothing),
        1 => Just(Step::Fail),
        1 => Just(Step::Duplicate),
        1 => prop::collection::vec(0usize..30, 0..8).prop_map(|keep| Step::Scripted(ScriptStep::Propose(
            keep.into_iter().map(|i| ProposalItem::Keep(format!("e{i}"))).collect()
        ))),
    ]
}

/// One logged request: entry ids, required ids, attempt number.
pub type RequestLog = (Vec<EntryId>, Vec<EntryId>, i32);

/// A reducer acting on its request per [`Step`] (past the end: echo), logging every request and
/// optionally cancelling `token` during call `cancel_at` (0-based).
#[derive(Debug, Clone)]
pub struct TestReducer {
    pub steps: Vec<Step>,
    pub calls: usize,
    pub log: Vec<RequestLog>,
    pub cancel_at: Option<(usize, CancellationToken)>,
}

impl TestReducer {
    pub fn new(steps: Vec<Step>) -> TestReducer {
        TestReducer {
            steps,
            calls: 0,
            log: Vec::new(),
            cancel_at: None,
        }
    }
}

impl Reducer for TestReducer {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        let k = self.calls;
        self.calls += 1;
        self.log.push((
            request.entries.iter().map(|e| e.id().clone()).collect(),
            request.required_entry_ids.to_vec(),
            request.attempt_number,
        ));
        if let Some((at, token)) = &self.cancel_at {
            if *at == k {
                token.cancel();
            }
        }
        let entries = request.entries;
        let required: std::collections::BTreeSet<&EntryId> =
            request.required_entry_ids.iter().collect();
        let step = self.steps.get(k).cloned().unwrap_or(Step::Echo);
        let summary = |len: usize, k: usize| {
            Entry::new(
                format!("sum{k}"),
                EntryKind::Summary,
                Message::text("assistant", "s".repeat(len)),
            )
            .expect("summary")
        };
        Ok(match step {
            Step::DropOptional(percent) => {
                let others = entries
                    .iter()
                    .filter(|e| !required.contains(e.id()))
                    .count();
                let mut drop = others * usize::from(percent) / 100;
                Some(
                    entries
                        .iter()
                        .filter(|e| {
                            if required.contains(e.id()) || drop == 0 {
                                true
                            } else {
                                drop -= 1;
                                false
                            }
                        })
                        .cloned()
                        .collect(),
                )
            }
            Step::SummarizeAll => {
                let mut out: Vec<Entry> = entries
                    .iter()
                    .filter(|e| required.contains(e.id()))
                    .cloned()
                    .collect();
                out.insert(0, summary(3, k));
                Some(out)
            }
            Step::DropRequired => {
                let mut out = entries.to_vec();
                if let Some(i) = out.iter().position(|e| required.contains(e.id())) {
                    out.remove(i);
                }
                Some(out)
            }
            Step::Forge => {
                let mut out = entries.to_vec();
                out.push(
                    Entry::new(
                        format!("forged{k}"),
                        EntryKind::ToolExchange,
                        Message::new("assistant", vec![Part::call("fc", "f")]),
                    )
                    .expect("forged"),
                );
                Some(out)
            }
            Step::Mutate => {
                let mut out = entries.to_vec();
                if let Some(last) = out.last().cloned() {
                    let kind = if last.kind() == EntryKind::RecoverableContextSegment
                        || last.kind() == EntryKind::ToolExchange
                        || last.kind() == EntryKind::ArtifactReference
                    {
                        EntryKind::ConversationalMessage
                    } else {
                        last.kind()
                    };
                    let role = if kind == EntryKind::SystemInstruction {
                        "system"
                    } else {
                        "user"
                    };
                    let n = out.len();
                    out[n - 1] =
                        Entry::new(last.id().as_str(), kind, Message::text(role, "mutated"))
                            .expect("mutated");
                }
                Some(out)
            }
            Step::Swap => {
                let mut out = entries.to_vec();
                if out.len() >= 2 {
                    out.swap(0, 1);
                }
                Some(out)
            }
            Step::AddSummary(len) => {
                let mut out = entries.to_vec();
                out.push(summary(len, k));
                Some(out)
            }
            Step::Echo => Some(entries.to_vec()),
            Step::Nothing => None,
            Step::Fail => return Err(ReducerError::Failed(format!("scripted failure {k}"))),
            Step::Duplicate => {
                let mut out = entries.to_vec();
                if let Some(first) = out.first().cloned() {
                    out.push(first);
                }
                Some(out)
            }
            Step::Scripted(step) => {
                let mut r = ScriptedReducer::new(vec![step]);
                return r.reduce(request);
            }
        })
    }
}

/// A provider schedule: per capture, whether the version changes and how the history changes.
#[derive(Debug, Clone)]
pub struct ProviderPlan {
    /// Per capture after the first: `(bump version, appended segments, drop every k-th entry)`.
    pub changes: Vec<(bool, Vec<Seg>, u8)>,
    /// Cancel during this capture (0-based).
    pub cancel_at_capture: Option<usize>,
}

pub fn provider_plan_strategy() -> impl Strategy<Value = ProviderPlan> {
    (
        prop::collection::vec(
            (
                prop::bool::weighted(0.35),
                prop::collection::vec(seg_strategy(), 0..3),
                prop_oneof![6 => Just(0u8), 1 => 2u8..5],
            ),
            0..7,
        ),
        prop::option::weighted(0.2, prop_oneof![0usize..3, 0usize..8]),
    )
        .prop_map(|(changes, cancel_at_capture)| ProviderPlan {
            changes,
            cancel_at_capture,
        })
}

impl ProviderPlan {
    /// The schedule: step 0 is `base` at version 0; later steps change per plan. Appended
    /// entries get fresh ids (`n0, n1, ...`).
    pub fn schedule(&self, base: &[Entry]) -> Vec<(i64, Vec<Entry>)> {
        let mut steps = vec![(0i64, base.to_vec())];
        let mut builder = Builder::new("n");
        let mut version = 0i64;
        let mut cur = base.to_vec();
        for (bump, extra, drop_every) in &self.changes {
            if *bump {
                version += 1;
                cur.extend(builder.build(extra));
                if *drop_every > 1 {
                    let k = usize::from(*drop_every);
                    cur = cur
                        .into_iter()
                        .enumerate()
                        .filter(|(i, _)| i % k != k - 1)
                        .map(|(_, e)| e)
                        .collect();
                }
            }
            steps.push((version, cur.clone()));
        }
        steps
    }

    /// A fresh provider playing the schedule, cancelling `token` at the planned capture.
    pub fn provider(&self, base: &[Entry], token: &CancellationToken) -> ScriptedProvider {
        let p = ScriptedProvider::new(self.schedule(base));
        match self.cancel_at_capture {
            Some(k) => p.cancel_at_capture(k, token.clone()),
            None => p,
        }
    }
}
