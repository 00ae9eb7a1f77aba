//! Byte -> input decoders shared by the fuzz targets and by `tests/fuzz_replay.rs`.
//!
//! The decoders read a fuzz input with [`Bytes`], a tiny cursor in the spirit of
//! `arbitrary::Unstructured` (every read is total: an exhausted input reads as zeros, so every
//! byte string decodes to *some* input). It is hand-written rather than `arbitrary` itself so that
//! the root crate's replay test can include this file by path (`#[path = ...] mod decode;`)
//! without any dependency the root `Cargo.toml` does not already have.
//!
//! The shapes are biased toward the interesting collisions of the SPEC:
//! * a tiny entry-id alphabet, so `original` and `proposed` share ids (VER-1 required / retained
//!   checks) and, occasionally, a list repeats an id (the duplicate-id argument error);
//! * a tiny call-id alphabet, so calls and results pair up, duplicate, reorder and orphan
//!   (EXC-1..EXC-3);
//! * a tiny artifact-body alphabet, so artifact references, result references and recoverable
//!   segments name the same digests (PRE-2 durable set, ASM-8 eviction);
//! * every entry kind and every value shape (ENT-1, ENT-4), including construction errors
//!   (blank ids, tool content outside `ToolExchange`, malformed references), which are skipped.
//!
//! This file depends only on the vocabulary of `hybrid_compaction_model` (no spec functions, no
//! engine), so the same bytes decode to the same input everywhere.

#![allow(
    clippy::cast_possible_truncation,
    reason = "fuzz input bytes mapped to small ranges on purpose"
)]

use std::collections::BTreeMap;
use std::sync::Arc;

use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::entry::{Entry, EntryKind, RecoverableSegment};
use hybrid_compaction_model::estimator::{ConstantEstimator, Estimator, TableEstimator};
use hybrid_compaction_model::message::{FunctionCall, Message, Part};
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::{ProposalItem, ScriptStep};
use hybrid_compaction_model::value::{Decimal, RawJson, Value};

/// A total byte cursor: reads past the end yield zero.
#[derive(Debug, Clone)]
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// A cursor over `data`.
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { data }
    }

    /// Whether every byte has been consumed.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The next byte (0 once exhausted).
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    /// A number in `0..n` (`n >= 1`), from one byte.
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n >= 1);
        self.byte() as usize % n.max(1)
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: i32, hi: i32) -> i32 {
        lo + self.below((hi - lo + 1) as usize) as i32
    }

    /// True with probability about `k / 256`; false once the input is exhausted (so the
    /// rare shapes need explicit bytes).
    pub fn chance(&mut self, k: u8) -> bool {
        u16::from(self.byte()) + u16::from(k) > 255
    }

    /// A little-endian integer from `N` bytes.
    pub fn u64_from(&mut self, n: usize) -> u64 {
        let mut v = 0u64;
        for i in 0..n.min(8) {
            v |= u64::from(self.byte()) << (8 * i);
        }
        v
    }

    /// One element of a non-empty slice.
    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

/// Entry ids: small alphabet (collisions) plus blank ids (construction errors).
pub const IDS: [&str; 9] = ["a", "b", "c", "d", "e", "f", "g", " ", "h"];
/// Call ids shared by calls and results.
pub const CALL_IDS: [&str; 4] = ["c1", "c2", "c3", ""];
/// Artifact bodies; references name their digests.
pub const BODIES: [&str; 3] = ["alpha", "beta", "gamma"];
/// Roles (the four SPEC roles plus an unknown one).
pub const ROLES: [&str; 5] = ["system", "user", "assistant", "tool", "other"];
/// Short texts (including the empty one and multi-byte UTF-8).
pub const TEXTS: [&str; 5] = ["", "hi", "hello world", "é✓", "x"];

/// The canonical reference to one of [`BODIES`].
pub fn reference(i: usize) -> ArtifactReference {
    ArtifactReference::to_content(BODIES[i % BODIES.len()])
}

/// A reference-ish string: canonical most of the time, sometimes malformed.
fn reference_text(u: &mut Bytes<'_>) -> String {
    let r = reference(u.below(BODIES.len())).to_string();
    match u.below(8) {
        0 => r.to_uppercase(),
        1 => format!(" {r}"),
        2 => r[..r.len() - 1].to_owned(),
        _ => r,
    }
}

/// A value of any shape (SPEC ENT-4), depth-limited.
pub fn value(u: &mut Bytes<'_>, depth: u32) -> Value {
    let shapes = if depth == 0 { 13 } else { 15 };
    match u.below(shapes) {
        0 => Value::Null,
        1 => Value::String(u.pick(&TEXTS).to_owned()),
        2 => Value::String(reference_text(u)),
        3 => Value::Bool(u.chance(128)),
        4 => Value::I16(u.u64_from(2) as i16),
        5 => Value::I32(u.u64_from(4) as i32),
        6 => Value::I64(u.u64_from(8) as i64),
        7 => Value::U8(u.byte()),
        8 => Value::U32(u.u64_from(4) as u32),
        9 => Value::U64(u.u64_from(8)),
        10 => match u.below(6) {
            0 => Value::F64(f64::NAN),
            1 => Value::F64(-0.0),
            2 => Value::F32(f32::from_bits(u.u64_from(4) as u32)),
            3 => Value::F64(f64::INFINITY),
            _ => Value::F64(f64::from_bits(u.u64_from(8))),
        },
        11 => {
            let mantissa = u.u64_from(8) as i64 as i128;
            let scale = u.below(29) as u8;
            Decimal::new(mantissa, scale)
                .map(Value::Decimal)
                .unwrap_or(Value::Null)
        }
        12 => {
            let text = match u.below(5) {
                0 => format!("\"{}\"", reference(u.below(BODIES.len()))),
                1 => "1".to_owned(),
                2 => "{\"k\":[1,2]}".to_owned(),
                3 => "\"hi\"".to_owned(),
                _ => "null".to_owned(),
            };
            RawJson::new(text)
                .map(Value::RawJson)
                .unwrap_or(Value::Null)
        }
        13 => {
            let mut map = BTreeMap::new();
            for _ in 0..u.below(3) {
                let key = u.pick(&["k", "", "z"]).to_owned();
                map.insert(key, value(u, depth - 1));
            }
            Value::Map(map)
        }
        _ => Value::List((0..u.below(3)).map(|_| value(u, depth - 1)).collect()),
    }
}

fn call_part(u: &mut Bytes<'_>) -> Part {
    let arguments = if u.chance(100) {
        let mut map = BTreeMap::new();
        for _ in 0..u.below(3) {
            map.insert(u.pick(&["q", "n"]).to_owned(), value(u, 1));
        }
        Some(map)
    } else {
        None
    };
    Part::Call(FunctionCall {
        call_id: u.pick(&CALL_IDS).to_owned(),
        name: u.pick(&["f", "g"]).to_owned(),
        arguments,
        informational_only: u.chance(30),
    })
}

fn result_part(u: &mut Bytes<'_>) -> Part {
    Part::result(u.pick(&CALL_IDS), value(u, 1))
}

/// A message whose parts follow `shape`: 0 text-only, 1 calls, 2 results, 3 anything.
fn message(u: &mut Bytes<'_>, role: &str, shape: usize) -> Message {
    let n = 1 + u.below(3);
    let mut parts = Vec::with_capacity(n);
    for _ in 0..n {
        let part = match shape {
            0 => Part::text(u.pick(&TEXTS)),
            1 => call_part(u),
            2 => result_part(u),
            _ => match u.below(3) {
                0 => Part::text(u.pick(&TEXTS)),
                1 => call_part(u),
                _ => result_part(u),
            },
        };
        parts.push(part);
    }
    let mut m = Message::new(role, parts);
    if u.chance(40) {
        m.author = Some(u.pick(&["bob", ""]).to_owned());
    }
    m
}

/// One entry of any kind with the given id, or `None` when construction fails (skipped).
pub fn entry_with_id(u: &mut Bytes<'_>, id: &str) -> Option<Entry> {
    let kind = EntryKind::ALL[u.below(EntryKind::ALL.len())];
    let wild = u.chance(16); // rule-breaking shapes: construction errors, skipped
    let result = match kind {
        EntryKind::RecoverableContextSegment => {
            let b = u.below(BODIES.len());
            let body = if u.chance(200) {
                BODIES[b].to_owned()
            } else {
                u.pick(&TEXTS).to_owned()
            };
            Entry::recoverable(
                id,
                RecoverableSegment {
                    reference: reference(b),
                    body,
                },
            )
        }
        EntryKind::ToolExchange => {
            let calls = u.chance(128);
            let (role, shape) = match (calls, wild) {
                (true, false) => ("assistant", 1),
                (false, false) => ("tool", 2),
                (_, true) => (ROLES[u.below(ROLES.len())], u.below(4)),
            };
            Entry::new(id, kind, message(u, role, shape))
        }
        EntryKind::ArtifactReference => {
            let text = if wild {
                u.pick(&TEXTS).to_owned()
            } else {
                reference_text(u)
            };
            let mut m = Message::text(u.pick(&ROLES), text);
            if u.chance(20) {
                m.author = Some("bob".to_owned());
            }
            Entry::new(id, kind, m)
        }
        _ => {
            let role = u.pick(&ROLES);
            let shape = if wild { 3 } else { 0 };
            Entry::new(id, kind, message(u, role, shape))
        }
    };
    result.ok()
}

/// One entry with an id from [`IDS`].
pub fn entry(u: &mut Bytes<'_>) -> Option<Entry> {
    let id = u.pick(&IDS);
    entry_with_id(u, id)
}

/// Drops later entries whose id already occurred, unless the input asks to keep duplicates
/// (rarely: the duplicate-id argument error is a legitimate, but uninteresting, answer).
fn dedupe(u: &mut Bytes<'_>, list: Vec<Entry>) -> Vec<Entry> {
    if u.chance(12) {
        return list;
    }
    let mut seen = std::collections::BTreeSet::new();
    list.into_iter()
        .filter(|e| seen.insert(e.id().clone()))
        .collect()
}

/// An entry list of up to `max` entries.
pub fn entries(u: &mut Bytes<'_>, max: usize) -> Vec<Entry> {
    let n = u.below(max + 1);
    let list: Vec<Entry> = (0..n).filter_map(|_| entry(u)).collect();
    dedupe(u, list)
}

/// A proposal derived from `original`: kept entries (same handle), rewritten entries that
/// reuse an original id with new content, fresh entries, reorderings and drops.
pub fn proposal(u: &mut Bytes<'_>, original: &[Entry], max: usize) -> Vec<Entry> {
    let n = u.below(max + 1);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        match u.below(8) {
            // keep an original entry (most common; order may change)
            0..=3 if !original.is_empty() => out.push(u.pick(original)),
            // same id, fresh content (content mismatch / forged / mutated)
            4 if !original.is_empty() => {
                let id = u.pick(original).id().as_str().to_owned();
                if let Some(e) = entry_with_id(u, &id) {
                    out.push(e);
                }
            }
            // a structurally equal copy that is a different allocation
            5 if !original.is_empty() => {
                let e = u.pick(original);
                if let Some(copy) = rebuild(&e) {
                    out.push(copy);
                }
            }
            _ => {
                if let Some(e) = entry(u) {
                    out.push(e);
                }
            }
        }
    }
    dedupe(u, out)
}

/// A fresh entry equal in content to `e` (a different allocation).
pub fn rebuild(e: &Entry) -> Option<Entry> {
    match e.recoverable_segment() {
        Some(seg) => Entry::recoverable(e.id().as_str(), seg.clone()).ok(),
        None => Entry::new(e.id().as_str(), e.kind(), e.message().clone()).ok(),
    }
}

/// A policy with the given numbers (retention and attempts >= 1, `0 < margin < limit`) and
/// estimator; `None` if the numbers are out of range.
pub fn policy(
    hard_limit: i32,
    margin: i32,
    retention: i32,
    attempts: i32,
    estimator: Arc<dyn Estimator>,
) -> Option<Policy> {
    Policy::new(PolicySpec {
        hard_limit,
        trigger_margin: margin,
        recent_message_retention_count: retention,
        maximum_compaction_attempts: attempts,
        preservation_label: Some("fuzz".to_owned()),
        preservation_version: 1,
        estimator: Some(estimator),
    })
    .ok()
}

/// Input of the `verify_differential` target.
#[derive(Debug, Clone)]
pub struct VerifyInput {
    /// The original list (required ids come from it).
    pub original: Vec<Entry>,
    /// The proposed list.
    pub proposed: Vec<Entry>,
    /// Recent-message retention, 1..=4.
    pub retention: i32,
}

impl VerifyInput {
    /// A policy carrying [`VerifyInput::retention`] (the verifier reads nothing else).
    pub fn policy(&self) -> Policy {
        policy(1000, 100, self.retention, 1, Arc::new(ConstantEstimator(1)))
            .expect("fixed numbers are in range")
    }
}

/// Decodes a `verify_differential` input.
pub fn verify_input(data: &[u8]) -> VerifyInput {
    let mut u = Bytes::new(data);
    let retention = u.range(1, 4);
    let original = entries(&mut u, 12);
    let proposed = proposal(&mut u, &original, 14);
    VerifyInput {
        original,
        proposed,
        retention,
    }
}

/// Which estimator an assembly input uses.
#[derive(Debug, Clone)]
pub enum EstimatorChoice {
    /// The same host-defined estimator instance on both sides.
    Host(Arc<dyn Estimator>),
    /// Each side's own UTF-8 context estimator (SPEC EST-2).
    Utf8Context,
    /// Each side's own UTF-8 text estimator (SPEC EST-4).
    Utf8Text,
}

/// Input of the `assemble_differential` target.
#[derive(Debug, Clone)]
pub struct AssembleInput {
    /// Hard limit.
    pub hard_limit: i32,
    /// Trigger margin (`0 < margin < hard_limit`).
    pub margin: i32,
    /// Recent-message retention, 1..=4.
    pub retention: i32,
    /// Maximum compaction attempts, 1..=3.
    pub attempts: i32,
    /// The estimator.
    pub estimator: EstimatorChoice,
    /// Scripted captures: (version, entries); the last repeats.
    pub captures: Vec<(i64, Vec<Entry>)>,
    /// Scripted reducer steps; past the end the reducer echoes.
    pub steps: Vec<ScriptStep>,
    /// Cancel the token at this capture (0-based), if any.
    pub cancel_at_capture: Option<usize>,
    /// Cancel the token at this reducer call (0-based), if any.
    pub cancel_at_call: Option<usize>,
}

/// A reducer-made summary entry for step `k` (an id outside [`IDS`]).
fn summary(k: usize) -> Option<ProposalItem> {
    let m = Message::text("assistant", format!("summary {k}"));
    Entry::new(format!("s{k}"), EntryKind::Summary, m)
        .ok()
        .map(ProposalItem::New)
}

/// Decodes an `assemble_differential` input.
pub fn assemble_input(data: &[u8]) -> AssembleInput {
    let mut u = Bytes::new(data);
    let retention = u.range(1, 4);
    let attempts = u.range(1, 3);
    let estimator = match u.below(6) {
        0 => EstimatorChoice::Utf8Context,
        1 => EstimatorChoice::Utf8Text,
        2 => EstimatorChoice::Host(Arc::new(ConstantEstimator(u.range(-1, 20)))),
        _ => {
            let mut sizes = BTreeMap::new();
            for id in IDS {
                if u.chance(200) {
                    // rarely negative (SPEC POL-3) or huge (checked i32 sum)
                    let size = match u.below(40) {
                        0 => -1,
                        1 => i32::MAX,
                        _ => u.range(0, 40),
                    };
                    sizes.insert(id.to_owned(), size);
                }
            }
            EstimatorChoice::Host(Arc::new(TableEstimator {
                sizes,
                default: u.range(0, 10),
            }))
        }
    };
    let hard_limit = match estimator {
        EstimatorChoice::Host(_) => u.range(2, 200),
        _ => u.range(2, 2000),
    };
    let margin = u.range(1, hard_limit - 1);
    let base = entries(&mut u, 10);
    let mut captures = vec![(0i64, base.clone())];
    for _ in 0..u.below(4) {
        let prev = captures.last().map(|c| c.1.clone()).unwrap_or_default();
        let version = u.below(4) as i64 - i64::from(u.chance(6));
        let list = match u.below(3) {
            0 => prev,
            1 => {
                let mut l = prev;
                if let Some(e) = entry(&mut u) {
                    if !l.iter().any(|x| x.id() == e.id()) {
                        l.push(e);
                    }
                }
                l
            }
            _ => proposal(&mut u, &prev, 10),
        };
        captures.push((version, list));
    }
    let ids: Vec<String> = captures
        .iter()
        .flat_map(|c| c.1.iter().map(|e| e.id().as_str().to_owned()))
        .chain(std::iter::once("zz".to_owned()))
        .collect();
    let mut steps = Vec::new();
    for k in 0..u.below(5) {
        let step = match u.below(8) {
            0 => ScriptStep::Echo,
            1 => ScriptStep::Nothing,
            2 => ScriptStep::Fail("boom".to_owned()),
            // A plausible reduction: an in-order subset of one capture plus maybe a summary
            // (the shape a real reducer proposes; reaches `Reduced`).
            3 | 4 => {
                let source = &captures[u.below(captures.len())].1;
                let mut items = Vec::new();
                let summary_at = if u.chance(160) {
                    Some(u.below(source.len() + 1))
                } else {
                    None
                };
                for (i, e) in source.iter().enumerate() {
                    if summary_at == Some(i) {
                        items.extend(summary(k));
                    }
                    if u.chance(170) {
                        items.push(ProposalItem::Keep(e.id().as_str().to_owned()));
                    }
                }
                if summary_at == Some(source.len()) {
                    items.extend(summary(k));
                }
                ScriptStep::Propose(items)
            }
            _ => {
                let mut items = Vec::new();
                for _ in 0..u.below(10) {
                    if u.chance(200) {
                        items.push(ProposalItem::Keep(u.pick(&ids)));
                    } else if let Some(e) = entry(&mut u) {
                        items.push(ProposalItem::New(e));
                    }
                }
                ScriptStep::Propose(items)
            }
        };
        steps.push(step);
    }
    let cancel_at_capture = if u.chance(8) { Some(u.below(4)) } else { None };
    let cancel_at_call = if u.chance(8) { Some(u.below(4)) } else { None };
    AssembleInput {
        hard_limit,
        margin,
        retention,
        attempts,
        estimator,
        captures,
        steps,
        cancel_at_capture,
        cancel_at_call,
    }
}
