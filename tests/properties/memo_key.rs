//! SPEC EST-7: the memo's key covers everything an estimator reads, under reused entry ids.
//!
//! A memo whose key misses something an estimator reads answers a stale size only when it meets
//! two entries that agree on everything the key covers and differ in what it misses: in a host,
//! the same entry id with changed content (an edited message, a tool result that changed in one
//! number). Histories of distinct ids never build such a pair, so here every history is a chain
//! of *edits* of one entry under one id. Each [`Edit`] yields a pair of bodies that differ in
//! exactly one thing an estimator may read:
//!
//! * a value of every kind, as a tool result or a call argument, at the top or nested in a map or
//!   a list: decimal scale (`1.5` / `0.15`: same mantissa) and trailing zeros (`1.5` / `1.50`:
//!   numerically equal), float sign (`0` / `-0`), the next float, NaN payloads, `f32` / `f64` of
//!   one number, integer variants of one number (`I16(7)` / `U64(7)`) and neighbouring integers,
//!   string content (same length, non-ASCII), raw JSON forms (`1.0` / `1`, a raw JSON string /
//!   the string), `true` / `false`, null / `""`, map keys, list order, an empty list / map;
//! * the text split into two parts (same concatenation), a changed character, the role, the
//!   author (absent, present, changed), the kind;
//! * a call's id, name, absent / empty arguments, informational flag; a result's call id; the
//!   recovered segment's reference; and the same content under another id.
//!
//! Each chain is estimated in order and then in reverse through one memo per estimator (UTF-8
//! context and text, both token encodings, a host table keyed by id, and a *probe* that hashes
//! the entry's whole `Debug` rendering, so it reads every field) and compared with the uncached
//! estimator; [`est_7_every_edit_changes_the_key_and_no_size_is_stale`] runs every edit kind
//! once with fixed values and asserts that each pair has distinct digests.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use crate::gen::{cases, pool_digest, string_strategy, value_strategy};
use hybrid_compaction::engine::estimate::{Utf8ContextEstimator, Utf8TextEstimator};
use hybrid_compaction::estimators::{MemoEstimator, TokenEncoding, TokenEstimator};
use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::entry::{Entry, EntryKind, RecoverableSegment};
use hybrid_compaction_model::estimator::{Estimator, MeasurementUnit, TableEstimator};
use hybrid_compaction_model::message::{FunctionCall, FunctionResult, Message, Part};
use hybrid_compaction_model::value::{Decimal, RawJson, Value, ValueMap};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// Reads every field: a hash of the entry's `Debug` rendering (id, kind, role, author, every
/// part with every value's variant and digits, digests, the segment).
#[derive(Debug)]
struct Probe;

impl Estimator for Probe {
    fn unit(&self) -> MeasurementUnit {
        MeasurementUnit::HostDefinedUnits
    }

    fn estimate(&self, entry: &Entry) -> i32 {
        let mut h = DefaultHasher::new();
        format!("{entry:?}").hash(&mut h);
        i32::try_from(h.finish() % 1_000_003).expect("small")
    }
}

/// What an entry holds, without its id.
#[derive(Debug, Clone)]
enum Body {
    Text {
        kind: EntryKind,
        role: String,
        author: Option<String>,
        texts: Vec<String>,
    },
    Calls(Vec<FunctionCall>),
    Results(Vec<FunctionResult>),
    Recovered {
        body: String,
        digest: u8,
    },
}

impl Body {
    fn entry(&self, id: &str) -> Entry {
        let built = match self {
            Body::Text {
                kind,
                role,
                author,
                texts,
            } => {
                let mut m = Message::new(role.clone(), texts.iter().map(Part::text).collect());
                m.author.clone_from(author);
                Entry::new(id, *kind, m)
            }
            Body::Calls(calls) => Entry::new(
                id,
                EntryKind::ToolExchange,
                Message::new("assistant", calls.iter().cloned().map(Part::Call).collect()),
            ),
            Body::Results(results) => Entry::new(
                id,
                EntryKind::ToolExchange,
                Message::new("tool", results.iter().cloned().map(Part::Result).collect()),
            ),
            Body::Recovered { body, digest } => Entry::recoverable(
                id,
                RecoverableSegment {
                    reference: ArtifactReference::new(pool_digest(*digest)),
                    body: body.clone(),
                },
            ),
        };
        built.expect("a valid entry")
    }
}

/// Where a value edit puts its values.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Result,
    Argument,
}

/// A pair of values that differ in one thing, by kind.
#[derive(Debug, Clone)]
enum ValueEdit {
    DecimalScale(i64, u8),
    DecimalTrailingZero(i64, u8),
    FloatSign(f64),
    FloatNext(f64),
    NanPayload,
    FloatWidth(f32),
    IntVariant(u8, usize, usize),
    IntNeighbour(i32),
    StringChar(String),
    RawJsonForm(usize),
    Bool,
    NullOrEmpty,
    MapKey(Value),
    ListOrder(Value, Value),
    EmptyListOrMap,
    InMap(String, Box<ValueEdit>),
    InList(Box<ValueEdit>),
}

fn decimal(m: i64, s: u8) -> Value {
    Value::Decimal(Decimal::new(i128::from(m), s).expect("in range"))
}

fn int(variant: usize, n: u8) -> Value {
    match variant % 6 {
        0 => Value::I16(i16::from(n)),
        1 => Value::I32(i32::from(n)),
        2 => Value::I64(i64::from(n)),
        3 => Value::U8(n),
        4 => Value::U32(u32::from(n)),
        _ => Value::U64(u64::from(n)),
    }
}

fn raw(text: &str) -> Value {
    Value::RawJson(RawJson::new(text).expect("valid json"))
}

impl ValueEdit {
    fn pair(&self) -> (Value, Value) {
        match self {
            ValueEdit::DecimalScale(m, s) => (decimal(*m, *s % 28), decimal(*m, *s % 28 + 1)),
            ValueEdit::DecimalTrailingZero(m, s) => {
                (decimal(*m, *s % 28), decimal(m * 10, *s % 28 + 1))
            }
            ValueEdit::FloatSign(x) => (Value::F64(x.abs()), Value::F64(-x.abs())),
            ValueEdit::FloatNext(x) => {
                (Value::F64(*x), Value::F64(f64::from_bits(x.to_bits() ^ 1)))
            }
            ValueEdit::NanPayload => (
                Value::F64(f64::NAN),
                Value::F64(f64::from_bits(f64::NAN.to_bits() | 1)),
            ),
            ValueEdit::FloatWidth(x) => (Value::F32(*x), Value::F64(f64::from(*x))),
            ValueEdit::IntVariant(n, a, b) => {
                let b = if a % 6 == b % 6 { b + 1 } else { *b };
                (int(*a, *n), int(b, *n))
            }
            ValueEdit::IntNeighbour(n) => (Value::I32(*n), Value::I32(n.wrapping_add(1))),
            ValueEdit::StringChar(s) => {
                let mut changed: String = s.chars().rev().collect();
                if changed == *s {
                    changed.push('é');
                }
                (Value::String(s.clone()), Value::String(changed))
            }
            ValueEdit::RawJsonForm(i) => match i % 4 {
                0 => (raw("1.0"), raw("1")),
                1 => (raw("\"x\""), Value::String("x".into())),
                2 => (
                    raw("[1,2]"),
                    Value::List(vec![Value::I64(1), Value::I64(2)]),
                ),
                _ => (raw("{\"a\":1}"), raw("{\"b\":1}")),
            },
            ValueEdit::Bool => (Value::Bool(true), Value::Bool(false)),
            ValueEdit::NullOrEmpty => (Value::Null, Value::String(String::new())),
            ValueEdit::MapKey(v) => {
                let map = |k: &str| Value::Map(ValueMap::from([(k.to_owned(), v.clone())]));
                (map("ab"), map("ba"))
            }
            ValueEdit::ListOrder(a, b) => (
                Value::List(vec![a.clone(), b.clone(), Value::Null]),
                Value::List(vec![b.clone(), a.clone(), Value::Null]),
            ),
            ValueEdit::EmptyListOrMap => (Value::List(Vec::new()), Value::Map(ValueMap::new())),
            ValueEdit::InMap(key, inner) => {
                let (a, b) = inner.pair();
                let map = |v: Value| Value::Map(ValueMap::from([(key.clone(), v)]));
                (map(a), map(b))
            }
            ValueEdit::InList(inner) => {
                let (a, b) = inner.pair();
                (
                    Value::List(vec![Value::Null, a]),
                    Value::List(vec![Value::Null, b]),
                )
            }
        }
    }
}

/// One edit: the pair of bodies it yields from the chain's current body.
#[derive(Debug, Clone)]
enum Edit {
    Value(Slot, ValueEdit),
    SplitText(usize),
    TextChar,
    Role,
    Author(Option<String>),
    Kind(usize),
    CallId,
    CallName,
    AbsentOrEmptyArguments,
    Informational,
    ResultCallId,
    SegmentReference(u8),
    /// The same body under another id (the pair's second entry gets the id + `'`).
    Id,
}

const TEXT_KINDS: [EntryKind; 6] = [
    EntryKind::SystemInstruction,
    EntryKind::AuthoritativeSessionState,
    EntryKind::ApprovalSecurityState,
    EntryKind::ConversationalMessage,
    EntryKind::Summary,
    EntryKind::OptionalContext,
];

fn call(id: &str, arguments: Option<ValueMap>) -> FunctionCall {
    FunctionCall {
        call_id: id.to_owned(),
        name: "search".into(),
        arguments,
        informational_only: false,
    }
}

fn text(body: &Body) -> String {
    match body {
        Body::Text { texts, .. } => texts.concat(),
        Body::Recovered { body, .. } => body.clone(),
        _ => "an edited message".into(),
    }
}

fn text_body(kind: EntryKind, texts: Vec<String>) -> Body {
    Body::Text {
        kind,
        role: "user".into(),
        author: None,
        texts,
    }
}

impl Edit {
    /// The pair of bodies: the first rebuilt from `current` with the edit's "before", the
    /// second with its "after". The chain continues from the second.
    fn pair(&self, current: &Body) -> (Body, Body) {
        let t = text(current);
        match self {
            Edit::Value(slot, edit) => {
                let (a, b) = edit.pair();
                let body = |v: Value| match slot {
                    Slot::Result => Body::Results(vec![FunctionResult {
                        call_id: "call_1".into(),
                        value: v,
                    }]),
                    Slot::Argument => Body::Calls(vec![call(
                        "call_1",
                        Some(ValueMap::from([("q".to_owned(), v)])),
                    )]),
                };
                (body(a), body(b))
            }
            Edit::SplitText(at) => {
                let chars: Vec<char> = format!("{t}ab").chars().collect();
                let at = 1 + at % (chars.len() - 1);
                let (head, tail) = chars.split_at(at);
                let whole = chars.iter().collect::<String>();
                let kind = EntryKind::ConversationalMessage;
                (
                    text_body(kind, vec![whole]),
                    text_body(kind, vec![head.iter().collect(), tail.iter().collect()]),
                )
            }
            Edit::TextChar => {
                let kind = EntryKind::ConversationalMessage;
                let changed: String = format!("{t}é").chars().rev().collect();
                (
                    text_body(kind, vec![format!("{t}é")]),
                    text_body(kind, vec![changed]),
                )
            }
            Edit::Role => {
                let before = text_body(EntryKind::ConversationalMessage, vec![t]);
                let mut after = before.clone();
                if let Body::Text { role, .. } = &mut after {
                    *role = "assistant".into();
                }
                (before, after)
            }
            Edit::Author(name) => {
                let before = text_body(EntryKind::ConversationalMessage, vec![t]);
                let mut with = before.clone();
                if let Body::Text { author, .. } = &mut with {
                    *author = Some(name.clone().unwrap_or_else(|| "alice".into()));
                }
                match name {
                    None => (before, with),
                    Some(n) => {
                        let mut other = with.clone();
                        if let Body::Text { author, .. } = &mut other {
                            *author = Some(format!("{n}x"));
                        }
                        (with, other)
                    }
                }
            }
            Edit::Kind(i) => {
                let a = TEXT_KINDS[i % TEXT_KINDS.len()];
                let b = TEXT_KINDS[(i + 1) % TEXT_KINDS.len()];
                (text_body(a, vec![t.clone()]), text_body(b, vec![t]))
            }
            Edit::CallId => (
                Body::Calls(vec![call("call_1", None)]),
                Body::Calls(vec![call("call_2", None)]),
            ),
            Edit::CallName => {
                let mut renamed = call("call_1", None);
                renamed.name = "searcH".into();
                (
                    Body::Calls(vec![call("call_1", None)]),
                    Body::Calls(vec![renamed]),
                )
            }
            Edit::AbsentOrEmptyArguments => (
                Body::Calls(vec![call("call_1", None)]),
                Body::Calls(vec![call("call_1", Some(ValueMap::new()))]),
            ),
            Edit::Informational => {
                let mut flagged = call("call_1", None);
                flagged.informational_only = true;
                (
                    Body::Calls(vec![call("call_1", None)]),
                    Body::Calls(vec![flagged]),
                )
            }
            Edit::ResultCallId => {
                let result = |id: &str| {
                    Body::Results(vec![FunctionResult {
                        call_id: id.into(),
                        value: Value::String(t.clone()),
                    }])
                };
                (result("call_1"), result("call_9"))
            }
            Edit::SegmentReference(d) => (
                Body::Recovered {
                    body: t.clone(),
                    digest: *d,
                },
                Body::Recovered {
                    body: t,
                    digest: d.wrapping_add(1),
                },
            ),
            Edit::Id => (current.clone(), current.clone()),
        }
    }
}

/// Every edit kind once, with fixed values (the issue's `1.5` / `0.15` first).
fn every_edit() -> Vec<Edit> {
    let values = vec![
        ValueEdit::DecimalScale(15, 1),
        ValueEdit::DecimalTrailingZero(15, 1),
        ValueEdit::FloatSign(0.0),
        ValueEdit::FloatSign(2.5),
        ValueEdit::FloatNext(0.1),
        ValueEdit::NanPayload,
        ValueEdit::FloatWidth(0.1),
        ValueEdit::IntVariant(7, 0, 5),
        ValueEdit::IntVariant(7, 1, 2),
        ValueEdit::IntNeighbour(7),
        ValueEdit::StringChar("añ".into()),
        ValueEdit::RawJsonForm(0),
        ValueEdit::RawJsonForm(1),
        ValueEdit::RawJsonForm(2),
        ValueEdit::RawJsonForm(3),
        ValueEdit::Bool,
        ValueEdit::NullOrEmpty,
        ValueEdit::MapKey(Value::Null),
        ValueEdit::ListOrder(Value::I64(1), Value::String("1".into())),
        ValueEdit::EmptyListOrMap,
        ValueEdit::InMap("k".into(), Box::new(ValueEdit::DecimalScale(15, 1))),
        ValueEdit::InList(Box::new(ValueEdit::IntVariant(3, 0, 1))),
    ];
    let mut edits: Vec<Edit> = values
        .iter()
        .flat_map(|v| {
            [
                Edit::Value(Slot::Result, v.clone()),
                Edit::Value(Slot::Argument, v.clone()),
            ]
        })
        .collect();
    edits.extend([
        Edit::SplitText(1),
        Edit::TextChar,
        Edit::Role,
        Edit::Author(None),
        Edit::Author(Some("bob".into())),
        Edit::Kind(0),
        Edit::Kind(3),
        Edit::CallId,
        Edit::CallName,
        Edit::AbsentOrEmptyArguments,
        Edit::Informational,
        Edit::ResultCallId,
        Edit::SegmentReference(0),
        Edit::Id,
    ]);
    edits
}

/// The chain's entries: for each edit, its pair, all under `id` (an [`Edit::Id`] pair's second
/// entry under `id'`).
fn chain(id: &str, base: &Body, edits: &[Edit]) -> Vec<Entry> {
    let mut current = base.clone();
    let mut out = vec![base.entry(id)];
    for edit in edits {
        let (before, after) = edit.pair(&current);
        out.push(before.entry(id));
        let second_id = if matches!(edit, Edit::Id) {
            format!("{id}'")
        } else {
            id.to_owned()
        };
        out.push(after.entry(&second_id));
        current = after;
    }
    out
}

/// The estimators every chain is measured with.
fn estimators(ids: &[Entry]) -> Vec<Arc<dyn Estimator>> {
    let sizes: BTreeMap<String, i32> = ids
        .iter()
        .enumerate()
        .map(|(i, e)| {
            (
                e.id().as_str().to_owned(),
                i32::try_from(i).expect("small") * 7 - 20,
            )
        })
        .collect();
    vec![
        Arc::new(Utf8ContextEstimator),
        Arc::new(Utf8TextEstimator),
        Arc::new(TokenEstimator::new(TokenEncoding::O200kBase)),
        Arc::new(TokenEstimator::new(TokenEncoding::Cl100kBase)),
        Arc::new(TableEstimator { sizes, default: 3 }),
        Arc::new(Probe),
    ]
}

/// Every entry through one memo per estimator, in order and then in reverse, against the
/// uncached estimator: the first mismatch, if any.
fn stale(entries: &[Entry], capacity: usize) -> Option<String> {
    for inner in estimators(entries) {
        let memo = MemoEstimator::with_capacity(inner.clone(), capacity);
        for (i, e) in entries.iter().chain(entries.iter().rev()).enumerate() {
            let (cached, plain) = (memo.estimate(e), inner.estimate(e));
            if cached != plain {
                return Some(format!(
                    "{inner:?}, estimate {i}: memo {cached} != {plain} for {e:?}"
                ));
            }
        }
    }
    None
}

#[test]
fn est_7_every_edit_changes_the_key_and_no_size_is_stale() {
    let base = text_body(EntryKind::ConversationalMessage, vec!["hello".into()]);
    for edit in every_edit() {
        let (a, b) = edit.pair(&base);
        let second = if matches!(edit, Edit::Id) { "e'" } else { "e" };
        let (a, b) = (a.entry("e"), b.entry(second));
        assert_ne!(
            a.content_digest(),
            b.content_digest(),
            "{edit:?}: one key for {a:?} and {b:?}"
        );
        if let Some(found) = stale(&[a, b], MemoEstimator::DEFAULT_CAPACITY) {
            panic!("{edit:?}: {found}");
        }
    }
}

/// The case by name: `1.5` and `0.15` under one entry id, through a UTF-8 memo.
#[test]
fn est_7_a_decimal_scale_is_part_of_the_key() {
    let (a, b) = ValueEdit::DecimalScale(15, 1).pair();
    let result = |v: Value| {
        Body::Results(vec![FunctionResult {
            call_id: "c".into(),
            value: v,
        }])
        .entry("r1")
    };
    let memo = MemoEstimator::new(Arc::new(Utf8ContextEstimator));
    // "c" (1 byte) + "1.5" (3) and "c" + "0.15" (4), SPEC EST-2.
    assert_eq!(memo.estimate(&result(a)), 4);
    assert_eq!(memo.estimate(&result(b)), 5);
    assert_eq!(memo.stats().misses, 2);
}

fn value_edit_strategy() -> impl Strategy<Value = ValueEdit> {
    let leaf = prop_oneof![
        (-1_000_000i64..1_000_000, 0u8..28).prop_map(|(m, s)| ValueEdit::DecimalScale(m, s)),
        (-1_000i64..1_000, 0u8..27).prop_map(|(m, s)| ValueEdit::DecimalTrailingZero(m, s)),
        prop_oneof![Just(0.0), any::<f64>()].prop_map(ValueEdit::FloatSign),
        any::<f64>().prop_map(ValueEdit::FloatNext),
        Just(ValueEdit::NanPayload),
        any::<f32>().prop_map(ValueEdit::FloatWidth),
        (any::<u8>(), 0usize..6, 0usize..6).prop_map(|(n, a, b)| ValueEdit::IntVariant(n, a, b)),
        any::<i32>().prop_map(ValueEdit::IntNeighbour),
        string_strategy(6).prop_map(ValueEdit::StringChar),
        (0usize..4).prop_map(ValueEdit::RawJsonForm),
        Just(ValueEdit::Bool),
        Just(ValueEdit::NullOrEmpty),
        value_strategy().prop_map(ValueEdit::MapKey),
        (value_strategy(), value_strategy()).prop_map(|(a, b)| ValueEdit::ListOrder(a, b)),
        Just(ValueEdit::EmptyListOrMap),
    ];
    leaf.prop_recursive(2, 4, 1, |inner| {
        prop_oneof![
            (string_strategy(3), inner.clone()).prop_map(|(k, e)| ValueEdit::InMap(k, Box::new(e))),
            inner.prop_map(|e| ValueEdit::InList(Box::new(e))),
        ]
    })
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    prop_oneof![
        8 => (prop_oneof![Just(Slot::Result), Just(Slot::Argument)], value_edit_strategy())
            .prop_map(|(s, v)| Edit::Value(s, v)),
        1 => any::<usize>().prop_map(Edit::SplitText),
        1 => Just(Edit::TextChar),
        1 => Just(Edit::Role),
        1 => prop::option::of(string_strategy(4)).prop_map(Edit::Author),
        1 => any::<usize>().prop_map(Edit::Kind),
        1 => Just(Edit::CallId),
        1 => Just(Edit::CallName),
        1 => Just(Edit::AbsentOrEmptyArguments),
        1 => Just(Edit::Informational),
        1 => Just(Edit::ResultCallId),
        1 => any::<u8>().prop_map(Edit::SegmentReference),
        1 => Just(Edit::Id),
    ]
}

fn base_strategy() -> impl Strategy<Value = Body> {
    (
        0usize..TEXT_KINDS.len(),
        prop::collection::vec(string_strategy(8), 1..3),
    )
        .prop_map(|(k, texts)| text_body(TEXT_KINDS[k], texts))
}

proptest! {
    #![proptest_config(Config::with_cases(cases(128)))]

    /// SPEC EST-7: chains of edits under reused ids (1-3 interleaved chains), every estimator,
    /// small and default capacities: the memo never answers a stale size.
    #[test]
    fn est_7_memo_equals_uncached_under_reused_ids_with_edited_content(
        chains in prop::collection::vec(
            (base_strategy(), prop::collection::vec(edit_strategy(), 1..8)),
            1..4,
        ),
        capacity in prop_oneof![1usize..4, Just(MemoEstimator::DEFAULT_CAPACITY)],
    ) {
        let built: Vec<Vec<Entry>> = chains
            .iter()
            .enumerate()
            .map(|(i, (base, edits))| chain(&format!("e{i}"), base, edits))
            .collect();
        // Interleaved: entry k of every chain, then entry k + 1, ...
        let longest = built.iter().map(Vec::len).max().unwrap_or(0);
        let entries: Vec<Entry> = (0..longest)
            .flat_map(|k| built.iter().filter_map(move |c| c.get(k).cloned()))
            .collect();
        if let Some(found) = stale(&entries, capacity) {
            prop_assert!(false, "{}", found);
        }
    }
}
