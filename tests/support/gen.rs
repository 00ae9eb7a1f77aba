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
//!   raw-JSON string), and optionally a second one in the last result of the same message (so an
//!   entry carries several digests and a body may be durable through a later one only, SPEC
//!   PRE-2);
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
//! * text is non-ASCII wherever the SPEC counts bytes (EST-2): entry text and recovered bodies
//!   come in four scripts ([`Script`]: ASCII, 2/3-byte, astral 4-byte, combining marks), string
//!   values and map keys draw from a mixed alphabet, and entry ids, call ids, tool names and
//!   argument keys are decorated in rotation ([`entry_id`], [`TOOL_NAMES`], [`ARG_KEYS`]), so an
//!   estimator that counts characters instead of UTF-8 bytes disagrees on most histories;
//! * host-table estimators size the entries that appear only in *later* snapshots too (the
//!   provider's appended `n…` ids), with a larger share of huge and negative sizes there, so an
//!   overflowing or negative snapshot is also adopted on a restart (in the fallback included),
//!   not only met at the first capture.
//!
//! Entry ids are [`entry_id`]`(prefix, i)` in build order (unique), so plans can name entries by
//! index.

#![allow(
    clippy::cast_possible_truncation,
    reason = "test data: small generated numbers"
)]
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use hybrid_compaction_model::artifact::{ArtifactReference, Digest};
use hybrid_compaction_model::assembly::{
    ContractViolation, Reducer, ReducerError, ReductionRequest,
};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind, RecoverableSegment};
use hybrid_compaction_model::estimator::{ConstantEstimator, Estimator, TableEstimator};
use hybrid_compaction_model::message::{Block, BlockKind, FunctionCall, Message, Part};
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::{ProposalItem, ScriptStep, ScriptedReducer, UpstreamError};
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

/// The reference of a recovered body for digest `i` (0..6): pool digest `i` for 0..4; for 4 and 5
/// a digest of its own that no `ArtRef` names (only a later result reference may).
pub fn body_reference(i: u8) -> ArtifactReference {
    if i >= 4 {
        ArtifactReference::to_content(&format!("unreferenced-{i}"))
    } else {
        ArtifactReference::new(pool_digest(i))
    }
}

/// Entry id number `i` of a builder with `prefix`: `{prefix}{i}` followed, in rotation, by
/// nothing, a 2-byte, a 3-byte, an astral (4-byte) character or a combining mark (ids are
/// compared by their UTF-8 bytes, SPEC ENT-2, and call ids are measured in bytes, EST-2).
pub fn entry_id(prefix: &str, i: usize) -> String {
    const TAILS: [&str; 5] = ["", "é", "漢", "𝄞", "e\u{301}"];
    format!("{prefix}{i}{}", TAILS[i % TAILS.len()])
}

/// Tool names, used in rotation (ASCII, 2-byte, 3-byte, astral, combining).
pub const TOOL_NAMES: [&str; 5] = ["tool", "outil_é", "工具", "run🔧", "cafe\u{301}"];

/// Argument keys, used in rotation.
pub const ARG_KEYS: [&str; 5] = ["arg", "clé", "引数", "𝑥", "n\u{303}"];

/// The script of generated text: its characters are 1, 2-3, 4 bytes, or a base letter plus a
/// combining mark (1 + 2 bytes, 2 characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    Ascii,
    Wide,
    Astral,
    Combining,
}

/// A script, mostly ASCII.
pub fn script_strategy() -> impl Strategy<Value = Script> {
    prop_oneof![
        5 => Just(Script::Ascii),
        2 => Just(Script::Wide),
        1 => Just(Script::Astral),
        1 => Just(Script::Combining),
    ]
}

/// A short string value or map key: ASCII, or a mix of multi-byte, astral and combining
/// characters (SPEC EST-2 counts UTF-8 bytes of string values and keys).
pub fn string_strategy(max: usize) -> impl Strategy<Value = String> {
    let mixed = format!("[a-zé漢𝄞😀{}{}]{{0,{max}}}", '\u{301}', '\u{303}');
    prop_oneof![
        2 => proptest::string::string_regex(&format!("[a-z]{{0,{max}}}")).expect("regex"),
        3 => proptest::string::string_regex(&mixed).expect("regex"),
    ]
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
    /// A plain entry with about `len` characters of text in `script`.
    Plain {
        kind: PlainKind,
        len: usize,
        script: Script,
    },
    /// An `ArtifactReference` entry naming pool digest `digest`.
    ArtRef { digest: u8 },
    /// A recovered body for pool digest `digest`.
    Recoverable {
        digest: u8,
        len: usize,
        script: Script,
    },
    /// A tool exchange.
    Exchange {
        calls: u8,
        split: u8,
        defect: Defect,
        reference: Option<(u8, bool)>,
        /// A reference to [`body_reference`]`(later)` in the last result of the first result
        /// message, when it answers more than one call: a later digest of that entry.
        later: Option<u8>,
        value: Value,
    },
}

/// Interesting scalar and nested values.
pub fn value_strategy() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        string_strategy(12).prop_map(Value::String),
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
            Just("{\"a\":[1,2]}"),
            Just("\"é漢𝄞\""),
            Just("{\"clé\":\"e\u{301}\"}")
        ]
        .prop_map(|t| Value::RawJson(RawJson::new(t).expect("valid json"))),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::List),
            prop::collection::btree_map(string_strategy(2), inner, 0..3).prop_map(Value::Map),
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
        10 => (plain_kind, 0usize..40, script_strategy())
            .prop_map(|(kind, len, script)| Seg::Plain { kind, len, script }),
        3 => (0u8..4).prop_map(|digest| Seg::ArtRef { digest }),
        4 => (0u8..6, 1usize..120, script_strategy())
            .prop_map(|(digest, len, script)| Seg::Recoverable { digest, len, script }),
        8 => (
            1u8..4,
            1u8..4,
            defect_strategy(),
            prop::option::weighted(0.3, (0u8..4, any::<bool>())),
            prop::option::weighted(0.5, 0u8..6),
            value_strategy()
        )
            .prop_map(|(calls, split, defect, reference, later, value)| Seg::Exchange {
                calls,
                split,
                defect,
                reference,
                later,
                value,
            }),
    ]
}

/// A history of 0..max segments.
pub fn segs_strategy(max: usize) -> impl Strategy<Value = Vec<Seg>> {
    prop::collection::vec(seg_strategy(), 0..max)
}

/// A content block (SPEC ENT-8) beside the text of a plain entry of every fifth length: each
/// kind in turn, its JSON holding text of the entry's script (non-ASCII too), every other one
/// with a token count; `None` for the other lengths.
fn block(len: usize, script: Script, salt: usize) -> Option<Part> {
    if len % 5 != 3 {
        return None;
    }
    let kind = BlockKind::ALL[(len / 5) % BlockKind::ALL.len()];
    let body = serde_json::to_string(&text(len / 2, script, salt)).expect("a string");
    let ty = format!("t{}", len % 7);
    let json = format!("{{\"data\":{body},\"type\":\"{ty}\"}}");
    Some(Part::Block(Block {
        kind,
        block_type: ty,
        json,
        tokens: (len % 10 == 3).then_some(u32::try_from(len).expect("small")),
    }))
}

fn text(len: usize, script: Script, salt: usize) -> String {
    let unit = match script {
        Script::Ascii => "ab",
        Script::Wide => "é漢",
        Script::Astral => "𝄞😀",
        Script::Combining => "e\u{301}o\u{308}",
    };
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
        let id = entry_id(&self.prefix, self.next);
        self.next += 1;
        id
    }

    fn call_id(&mut self) -> String {
        let id = entry_id(&format!("{}c", self.prefix), self.next_call);
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
            Seg::Plain { kind, len, script } => {
                let (kind, role) = match kind {
                    PlainKind::System => (EntryKind::SystemInstruction, "system"),
                    PlainKind::Session => (EntryKind::AuthoritativeSessionState, "user"),
                    PlainKind::Approval => (EntryKind::ApprovalSecurityState, "user"),
                    PlainKind::Conversation => (EntryKind::ConversationalMessage, "user"),
                    PlainKind::Summary => (EntryKind::Summary, "assistant"),
                    PlainKind::Optional => (EntryKind::OptionalContext, "user"),
                };
                let id = self.id();
                let t = text(*len, *script, self.next);
                let mut parts = vec![Part::text(t)];
                parts.extend(block(*len, *script, self.next));
                out.push(Entry::new(id, kind, Message::new(role, parts)).expect("plain entry"));
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
            Seg::Recoverable {
                digest,
                len,
                script,
            } => {
                let id = self.id();
                let body = text(*len, *script, self.next);
                // Digests 4 and 5 are never named by an `ArtRef` (0..4), so some bodies are
                // reference-less.
                let segment = RecoverableSegment {
                    reference: body_reference(*digest),
                    body,
                };
                out.push(Entry::recoverable(id, segment).expect("recoverable entry"));
            }
            Seg::Exchange {
                calls,
                split,
                defect,
                reference,
                later,
                value,
            } => self.exchange(*calls, *split, *defect, (*reference, *later), value, out),
        }
    }

    fn exchange(
        &mut self,
        calls: u8,
        split: u8,
        defect: Defect,
        (reference, later): (Option<(u8, bool)>, Option<u8>),
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
        let salt = self.next_call;
        let call_parts: Vec<Part> = call_ids
            .iter()
            .enumerate()
            .map(|(i, c)| {
                Part::Call(FunctionCall {
                    call_id: c.clone(),
                    name: format!("{}{i}", TOOL_NAMES[(salt + i) % TOOL_NAMES.len()]),
                    arguments: if i == 0 {
                        let key = ARG_KEYS[salt % ARG_KEYS.len()];
                        Some(BTreeMap::from([(key.to_owned(), value.clone())]))
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
            let last = chunk.len() - 1;
            let parts: Vec<Part> = chunk
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let v = match (reference, later) {
                        (_, Some(d)) if k == 0 && i > 0 && i == last => {
                            Value::String(body_reference(d).to_string())
                        }
                        (Some((d, raw)), _) if k == 0 && i == 0 => {
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
                        _ => Value::String(format!("r{k}{i}{}", ["", "é", "漢", "𝄞"][(k + i) % 4])),
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
    /// Host table: the history's ids (`e…`, position `i` → `sizes[i % len]`), the ids the
    /// provider appends in later snapshots (`n…`, position `i` → `later[i % len]`), and a
    /// default for every other id (reducer summaries, forged entries).
    Table {
        sizes: Vec<i32>,
        later: Vec<i32>,
        default: i32,
    },
}

/// A huge per-entry size: two of them overflow a 32-bit sum (SPEC POL-3).
pub const HUGE: i32 = i32::MAX / 2 + 1;

pub fn estimator_plan_strategy() -> impl Strategy<Value = EstimatorPlan> {
    prop_oneof![
        5 => Just(EstimatorPlan::Context),
        2 => Just(EstimatorPlan::Text),
        1 => (0i32..20).prop_map(EstimatorPlan::Constant),
        4 => (
            prop::collection::vec(
                prop_oneof![60 => 0i32..50, 2 => Just(-1), 2 => Just(HUGE)],
                1..12
            ),
            // Entries that appear only after a restart: more often huge or negative, so an
            // overflowing or negative snapshot is adopted mid-run (also inside the fallback).
            prop::collection::vec(
                prop_oneof![6 => 0i32..50, 1 => Just(-1), 6 => Just(HUGE)],
                1..6
            ),
            0i32..30
        )
            .prop_map(|(sizes, later, default)| EstimatorPlan::Table { sizes, later, default }),
    ]
}

impl EstimatorPlan {
    /// The host-defined estimator, or `None` for the UTF-8 estimators (model and engine each
    /// supply their own implementation).
    pub fn host(&self, ids: usize) -> Option<Arc<dyn Estimator>> {
        match self {
            EstimatorPlan::Context | EstimatorPlan::Text => None,
            EstimatorPlan::Constant(c) => Some(Arc::new(ConstantEstimator(*c))),
            EstimatorPlan::Table {
                sizes: v,
                later,
                default,
            } => {
                let mut table = BTreeMap::new();
                for i in 0..ids.max(1) {
                    table.insert(entry_id("e", i), v[i % v.len()]);
                    table.insert(entry_id("n", i), later[i % later.len()]);
                }
                Some(Arc::new(TableEstimator {
                    sizes: table,
                    default: *default,
                }))
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
    // Points (see `LimitPlan::policy`): full, evicted, required, required + optional, the
    // middle of full and required, 3. The hard limit leans to the larger points (room for a
    // reducer or the fallback to succeed); attempts lean to small budgets, which restarts
    // exhaust (churn, SPEC ASM-6).
    let hard = prop_oneof![
        2 => Just(0u8), 2 => Just(1u8), 2 => Just(2u8), 3 => Just(3u8), 3 => Just(4u8), 1 => Just(5u8)
    ];
    let threshold = prop_oneof![
        3 => Just(0u8), 3 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8), 2 => Just(4u8), 1 => Just(5u8)
    ];
    let attempts = prop_oneof![3 => Just(1i32), 3 => Just(2i32), 2 => Just(3i32), 1 => Just(4i32)];
    (hard, -1i8..=1, threshold, -1i8..=1, 1i32..=5, attempts).prop_map(
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
    /// Break the bridge contract (a `ReducerContract` error, SPEC ASM-4).
    Contract,
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
        2 => Just(Step::Nothing),
        2 => Just(Step::Fail),
        2 => Just(Step::Contract),
        3 => Just(Step::Duplicate),
        1 => prop::collection::vec(0usize..30, 0..8).prop_map(|keep| Step::Scripted(ScriptStep::Propose(
            keep.into_iter().map(|i| ProposalItem::Keep(entry_id("e", i))).collect()
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
    /// Per call that returned: the request's entries and the proposal (for tracing which check
    /// site of SPEC ASM-10 a capture belongs to).
    pub trace: Vec<(Vec<Entry>, Option<Vec<Entry>>)>,
    pub cancel_at: Option<(usize, CancellationToken)>,
}

impl TestReducer {
    pub fn new(steps: Vec<Step>) -> TestReducer {
        TestReducer {
            steps,
            calls: 0,
            log: Vec::new(),
            trace: Vec::new(),
            cancel_at: None,
        }
    }
}

impl Reducer for TestReducer {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        let out = self.respond(request);
        if let Ok(p) = &out {
            self.trace.push((request.entries.to_vec(), p.clone()));
        }
        out
    }
}

impl TestReducer {
    fn respond(
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
            Step::Fail => {
                return Err(ReducerError::Failed(UpstreamError::msg(format!(
                    "scripted failure {k}"
                ))))
            }
            Step::Contract => return Err(ReducerError::Contract(ContractViolation::NullResult)),
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

/// A rare fault of one captured snapshot (SPEC SNAP-1): a repeated entry id, or a negative version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Glitch {
    None,
    DuplicateEntry,
    NegativeVersion,
}

/// A provider schedule: per capture, whether the version changes and how the history changes.
#[derive(Debug, Clone)]
pub struct ProviderPlan {
    /// Per capture after the first: `(bump version, appended segments, drop every k-th entry,
    /// glitch of this capture only)`.
    pub changes: Vec<(bool, Vec<Seg>, u8, Glitch)>,
    /// Cancel during this capture (0-based).
    pub cancel_at_capture: Option<usize>,
}

impl ProviderPlan {
    /// A provider that never changes.
    pub fn stable() -> ProviderPlan {
        ProviderPlan {
            changes: vec![],
            cancel_at_capture: None,
        }
    }
}

/// When a provider plan changes the version: independently at each capture with a rate in
/// percent, at every capture from the `j`-th on, or only at the `j`-th.
#[derive(Debug, Clone, Copy)]
pub enum Bumps {
    Rate(u8),
    From(usize),
    At(usize),
}

pub fn provider_plan_strategy() -> impl Strategy<Value = ProviderPlan> {
    // Calm plans reach the stable finalizations; a single change lands on one check site; busy
    // plans restart at every site and churn once restarts exhaust the budget (ASM-5, ASM-6).
    let bumps = prop_oneof![
        1 => Just(Bumps::Rate(15)),
        1 => Just(Bumps::Rate(50)),
        1 => (1usize..5).prop_map(Bumps::From),
        2 => (1usize..5).prop_map(Bumps::At),
    ];
    let change = (
        0u8..100,
        prop::collection::vec(seg_strategy(), 0..3),
        prop_oneof![6 => Just(0u8), 1 => 2u8..5],
        prop_oneof![
            20 => Just(Glitch::None),
            1 => Just(Glitch::DuplicateEntry),
            1 => Just(Glitch::NegativeVersion),
        ],
    );
    (
        bumps,
        prop::collection::vec(change, 0..7),
        prop::option::weighted(0.04, prop_oneof![0usize..3, 0usize..8]),
    )
        .prop_map(|(bumps, changes, cancel_at_capture)| ProviderPlan {
            changes: changes
                .into_iter()
                .enumerate()
                .map(|(c, (roll, segs, drop, glitch))| {
                    (bumps.bumps_at(c + 1, roll), segs, drop, glitch)
                })
                .collect(),
            cancel_at_capture,
        })
}

impl Bumps {
    /// Whether capture `capture` (1-based after the first) changes the version (`roll` in
    /// 0..100 for a rate).
    pub fn bumps_at(self, capture: usize, roll: u8) -> bool {
        match self {
            Bumps::Rate(rate) => roll < rate,
            Bumps::From(j) => capture >= j,
            Bumps::At(j) => capture == j,
        }
    }
}

impl ProviderPlan {
    /// Re-times the version changes (`From` / `At` only; at least `min` captures planned),
    /// without glitches.
    /// Repeated changes (`From`) keep the history's size (nothing appended): the run stays on
    /// the same path while the version moves.
    pub fn retime(&mut self, bumps: Bumps, min: usize) {
        while self.changes.len() < min {
            self.changes.push((false, vec![], 0, Glitch::None));
        }
        for (c, change) in self.changes.iter_mut().enumerate() {
            change.0 = bumps.bumps_at(c + 1, 0);
            change.3 = Glitch::None;
            if let Bumps::From(_) = bumps {
                (change.1, change.2) = (vec![], 0);
            }
        }
    }

    /// The schedule: step 0 is `base` at version 0; later steps change per plan. Appended
    /// entries get fresh ids (`n0, n1, ...`, see [`entry_id`]).
    pub fn schedule(&self, base: &[Entry]) -> Vec<(i64, Vec<Entry>)> {
        let mut steps = vec![(0i64, base.to_vec())];
        let mut builder = Builder::new("n");
        let mut version = 0i64;
        let mut cur = base.to_vec();
        for (bump, extra, drop_every, glitch) in &self.changes {
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
            match glitch {
                Glitch::None => steps.push((version, cur.clone())),
                Glitch::NegativeVersion => steps.push((-1, cur.clone())),
                Glitch::DuplicateEntry => {
                    let mut dup = cur.clone();
                    dup.extend(cur.first().cloned());
                    steps.push((version, dup));
                }
            }
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
