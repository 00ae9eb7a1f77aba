//! The trace format, versions 1, 2 and 3 (`docs/TRACE.md`): JSON Lines, one header line
//! `{"trace": 2, ...}` followed by one record per line.
//!
//! A record is a provider call through an assembler ([`CallRecord`], `"type": "call"`), a
//! provider call of any system judged by what it sent (version 3: [`ObservedRecord`],
//! `"type": "observed"`, SPEC TRC-13), or the end of a run ([`RunEnd`], `"type": "runEnd"`), after which the checker forgets that run's state (that is
//! what keeps `check` in memory bounded by the open runs, not by the trace length).
//!
//! A call record is self-contained: the policy, every snapshot the assembler captured (in
//! capture order), every reducer request and its answer, the recorded result, diagnostics,
//! error, events and lease settlement. Entries are recorded either *with content* (the wire
//! shapes of `docs/WIRE.md`: `text` / `parts` / `segment`) or *redacted* (`digest` + `size`, plus
//! the structure the SPEC looks at: kind, role, call ids and names, result call ids and the
//! artifact references they carry). Redacted traces are first-class: sizes come from the trace
//! (policy estimator `{"kind": "recorded"}`), and structural equality compares digests.
//!
//! Version 2 adds the *compact profile* to version 1 (every version-1 record is a valid
//! version-2 record): a call record may define entries once per run (`defs`, appended to the
//! run's entry table) and refer to them later by table index ([`RefItem`]: an index or an
//! inclusive range), in its snapshots (`refs`), reducer requests (`request`), proposals (an
//! index keeps, `{"new": index}` adds) and result id lists (`resultRefs`). The checker
//! resolves those references against the run's table.
//!
//! Every line is read by the strict reader ([`crate::strict`]), as every wire case is:
//! a repeated key is refused in any object (also inside values: a tool call's `arguments`, a
//! table estimator's `sizes`), and a refusal names the JSON path of the value and says what was
//! expected in the format's words. An enum's serde name is the format's word for its names
//! (`#[serde(rename = "phase")]`), which the reader's refusals use ("unknown phase" and the name).
//!
//! Like the wire types, these are syntax only: the checker turns them into vocabulary. One
//! exception: a record's `defs` ([`Defs`]) may hold the entries the checker's quick reader
//! built from them as it read them, each with what gives its recorded form back.

use std::borrow::Cow;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use hybrid_compaction_model::artifact::{ArtifactReference, Digest};
use hybrid_compaction_model::assembly::{Outcome, Stage};
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::message::{Message, Part};
use hybrid_compaction_model::value::Value;
use hybrid_compaction_model::verification::{RejectionReason, VerificationOutcome};

use crate::shapes::{
    AssemblyOutput, DiagnosticsOutput, EstimatorInput, KindInput, Name, PartInput, PolicyInput,
    SegmentInput,
};
use crate::strict::{self, unlisted, ReadError, TaggedUnion};

/// The trace format version this crate writes (version 1 plus the compact profile).
pub const TRACE_VERSION: u32 = 2;

/// The first version with the compact profile; earlier traces are read as version 1.
pub const COMPACT_VERSION: u32 = 2;

/// The first version with observed records ([`ObservedRecord`], SPEC TRC-13).
pub const OBSERVED_VERSION: u32 = 3;

/// Every trace format version this checker reads.
pub const SUPPORTED_VERSIONS: [u32; 3] = [1, 2, 3];

/// The first line of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Header {
    /// The format version: `1`, `2` (version 1 plus the compact profile) or `3` (version 2 plus
    /// observed records).
    pub trace: u32,
    /// Who recorded the trace (free text, informative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer: Option<String>,
}

/// One line after the header: an object whose `type` selects the record (a [`TaggedUnion`]:
/// when `type` comes first, as writers put it, the rest streams straight into the record).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Record {
    /// One provider call.
    Call(Box<CallRecord>),
    /// Version 3: one provider call of a system judged by what it sent (SPEC TRC-13).
    Observed(Box<ObservedRecord>),
    /// A run ended: no later record names it.
    RunEnd(RunEnd),
}

impl TaggedUnion for Record {
    const TAG: &'static str = "type";
    const NAMES: &'static [&'static str] = &["call", "observed", "runEnd"];
    const WHAT: &'static str = "record type";

    fn read_as<'de, D: Deserializer<'de>>(name: &str, rest: D) -> Result<Self, D::Error> {
        Ok(match name {
            "call" => Record::Call(Box::new(CallRecord::deserialize(rest)?)),
            "observed" => Record::Observed(Box::new(ObservedRecord::deserialize(rest)?)),
            "runEnd" => Record::RunEnd(RunEnd::deserialize(rest)?),
            _ => return Err(unlisted(name)),
        })
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        strict::tagged(d)
    }
}

/// The `type` of a call record read on its own (as a [`CallRecord`], not a [`Record`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename = "record type")]
#[cfg_attr(feature = "schema", schemars(rename = "CallTag"))]
pub enum CallTag {
    /// `"call"`.
    #[serde(rename = "call")]
    Call,
}

/// Parses one record line with the strict reader: the JSON path and the format's words in
/// every refusal, a repeated key refused in any object. (The checker reads lines with
/// quick reader, which gives the same records and refusals.)
pub fn parse_record(line: &str) -> Result<Record, ReadError> {
    strict::read(line)
}

/// `{"type": "runEnd", "run": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunEnd {
    /// The run that ended.
    pub run: String,
}

/// One provider call through a compaction node (SPEC NODE-2, NODE-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallRecord {
    /// `"call"`: written by [`Record`]'s tag (which a [`Record`] reads itself), accepted here so
    /// that a call line also reads on its own as a `CallRecord`.
    #[serde(rename = "type", default, skip_serializing)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub record_type: Option<CallTag>,
    /// The outer run (SPEC LSE-6) this call belongs to.
    pub run: String,
    /// The call's id, unique within its run.
    pub call: String,
    /// The call's admission number in its run: 1 for the first call the run's gate admitted
    /// (SPEC LSE-7), 2 for the next, ... Absent for a call the gate refused, or when the
    /// recorder does not know it; the checker then takes a run's line order as its admission
    /// order (SPEC TRC-12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admitted: Option<u64>,
    /// The policy in force, as in the wire format; its estimator may also be `recorded` (each
    /// entry's recorded `size`).
    pub policy: PolicyInput,
    /// Version 2: entries defined by this record, appended in order to its run's entry table
    /// (the first entry of a run's first record is index 0). Later records of the run refer to
    /// them by index ([`RefItem`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defs: Option<Defs>,
    /// Every snapshot the assembler captured, in capture order (the lease-filtered snapshots
    /// with their effective versions, SPEC LSE-8). A snapshot without `entries` repeats the
    /// previous one's entries.
    #[serde(default)]
    pub snapshots: Vec<TraceSnapshot>,
    /// Every reducer invocation, in order (SPEC ASM-4).
    #[serde(default)]
    pub reducer: Vec<ReducerStep>,
    /// Where cancellation was requested, if it was: `before`, `capture:K` or `reducer:K`
    /// (as in `docs/WIRE.md`); `unknown` when it happened elsewhere (the call is then checked
    /// but not replayed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<String>,
    /// The assembler's result, when it returned one (SPEC ASM-3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<AssemblyOutput>,
    /// Version 2: the result with its id lists written as table references (instead of
    /// `result`, never with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_refs: Option<TraceResult>,
    /// The diagnostics built from the result (SPEC DIA-5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<DiagnosticsOutput>,
    /// The call's error, if it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<TraceError>,
    /// The progress events of the call, in emission order; absent when the node has no
    /// reporter (SPEC EVT-1), in which case no event clause is checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<TraceEvent>>,
    /// How the call's lease was settled and which bodies it forwarded (SPEC NODE-5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<TraceLease>,
    /// A streaming call (SPEC NODE-2): how its response stream ended, once the bounded
    /// messages were dispatched. Absent for a call that did not stream, or that failed before
    /// dispatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streamed: Option<StreamEnd>,
}

/// The `type` of an observed record read on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename = "record type")]
#[cfg_attr(feature = "schema", schemars(rename = "ObservedTag"))]
pub enum ObservedTag {
    /// `"observed"`.
    #[serde(rename = "observed")]
    Observed,
}

/// Version 3: one provider call of any system, ADR-implementing or not, recorded as what it
/// held and what it sent (SPEC TRC-13). Nothing is replayed: the sent entries are judged
/// against the history with the policy's estimator, verifier and required ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObservedRecord {
    /// `"observed"`, accepted so that the line also reads on its own.
    #[serde(rename = "type", default, skip_serializing)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub record_type: Option<ObservedTag>,
    /// The outer run (an agent's run, a conversation) this call belongs to.
    pub run: String,
    /// The call's id, unique among the run's records.
    pub call: String,
    /// What the call is judged against.
    pub policy: ObservedPolicy,
    /// Entries defined by this record, appended to its run's entry table (as in a call record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defs: Option<Defs>,
    /// Everything the system held for the call, before any compaction: its system prompt, every
    /// message, in order.
    pub history: TraceEntries,
    /// The entries sent to the provider, in order; absent when nothing was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<TraceEntries>,
    /// What became of the call: `answered` (sent, the provider answered; the default when
    /// `sent` is present), `failed` (sent, the provider failed: nothing was delivered) or
    /// `refused` (nothing sent; the default when `sent` is absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch: Option<Dispatch>,
    /// Why nothing was sent, or anything else worth showing (free text, informative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ObservedRecord {
    /// The dispatch, its default applied.
    pub fn dispatch(&self) -> Dispatch {
        self.dispatch.unwrap_or(if self.sent.is_some() {
            Dispatch::Answered
        } else {
            Dispatch::Refused
        })
    }
}

/// What an observed call is judged against (SPEC TRC-13): the only policy fields its checks
/// read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObservedPolicy {
    /// `HardLimit`: nothing sent may measure more (SPEC TRC-2).
    pub hard_limit: i32,
    /// `RecentMessageRetentionCount`: the recency units that are required (SPEC PRE-1.5).
    pub recent_message_retention_count: i32,
    /// How entries are measured: any wire estimator, or `recorded` (each entry's `size`).
    pub estimator: EstimatorInput,
}

/// A list of entries: written out (`entries`) or, in the compact profile, as references to the
/// run's entry table (`refs`); exactly one of the two.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceEntries {
    /// The entries.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "entries_in_place"
    )]
    pub entries: Option<Vec<TraceEntry>>,
    /// The entries as table references.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refs: Option<Vec<RefItem>>,
}

/// What became of an observed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename = "dispatch", rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "Dispatch"))]
pub enum Dispatch {
    /// Sent, and the provider answered: the sent recovered bodies are delivered.
    Answered,
    /// Sent, and the provider failed: nothing was delivered.
    Failed,
    /// Nothing was sent.
    Refused,
}

/// How a streamed response ended (SPEC NODE-5: only a stream read to its end commits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename = "stream ending", rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "StreamEnd"))]
pub enum StreamEnd {
    /// Read to its end (zero updates count).
    Completed,
    /// The provider failed: starting the stream, or an error update.
    Failed,
    /// Dropped by the host before its end.
    Abandoned,
}

/// Version 2: a reference to the run's entry table: an index, an inclusive range
/// `[first, last]` of indices, or (where an id is expected) an id string.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(JsonSchema), serde(untagged))]
pub enum RefItem {
    /// The table entry at this index.
    Index(u32),
    /// The table entries `first..=last`, in order.
    Range([u32; 2]),
    /// An id, written out (result id lists only).
    Id(String),
}

impl Serialize for RefItem {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RefItem::Index(i) => s.serialize_u32(*i),
            RefItem::Range(r) => r.serialize(s),
            RefItem::Id(id) => s.serialize_str(id),
        }
    }
}

/// Index lists as references: runs of three or more consecutive indices become ranges.
pub fn compress(indices: &[u32]) -> Vec<RefItem> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let mut j = i;
        while j + 1 < indices.len() && indices[j + 1] == indices[j] + 1 {
            j += 1;
        }
        if j - i >= 2 {
            out.push(RefItem::Range([indices[i], indices[j]]));
        } else {
            out.extend(indices[i..=j].iter().map(|&k| RefItem::Index(k)));
        }
        i = j + 1;
    }
    out
}

/// `u32` from a JSON number, or a domain error.
fn index<E: serde::de::Error>(v: u64) -> Result<u32, E> {
    u32::try_from(v).map_err(|_| {
        E::custom(format!(
            "table index {v} is too large (at most {})",
            u32::MAX
        ))
    })
}

impl<'de> Deserialize<'de> for RefItem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RefItem, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RefItem;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table index, a range [first, last] or an entry id")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RefItem, E> {
                index(v).map(RefItem::Index)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RefItem, E> {
                Ok(RefItem::Id(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<RefItem, E> {
                Ok(RefItem::Id(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<RefItem, A::Error> {
                use serde::de::Error;
                let bad = |n: usize| {
                    A::Error::custom(format!(
                        "a range is [first, last], two table indices; got {n} element(s)"
                    ))
                };
                let first: u32 = a.next_element()?.ok_or_else(|| bad(0))?;
                let last: u32 = a.next_element()?.ok_or_else(|| bad(1))?;
                let mut n = 2;
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    n += 1;
                }
                if n > 2 {
                    return Err(bad(n));
                }
                if last < first {
                    return Err(A::Error::custom(format!(
                        "a range [first, last] needs first <= last, got [{first}, {last}]"
                    )));
                }
                Ok(RefItem::Range([first, last]))
            }
        }
        d.deserialize_any(V)
    }
}

/// Version 2: an assembly result (SPEC ASM-3) whose id lists are table references (each
/// reference stands for the id of the entry it names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceResult {
    /// The outcome.
    pub outcome: Name<Outcome>,
    /// Final entry ids (success only; null for terminations).
    pub final_entry_ids: Option<Vec<RefItem>>,
    /// `OriginalEstimatedSize`.
    pub original_estimated_size: i32,
    /// `FinalEstimatedSize`.
    pub final_estimated_size: i32,
    /// `HardLimit`.
    pub hard_limit: i32,
    /// `AttemptCount`.
    pub attempt_count: i32,
    /// Stages in execution order.
    pub stages: Vec<Name<Stage>>,
    /// `RequiredEntryIds`.
    pub required_entry_ids: Vec<RefItem>,
    /// `LatestSnapshotVersion`.
    pub latest_snapshot_version: i64,
    /// `FinalVerification` (success only; null for terminations).
    pub final_verification: Option<TraceVerification>,
}

/// Version 2: a verification result (SPEC VER-1) whose id lists are table references.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceVerification {
    /// `Accepted` or `Rejected`.
    pub outcome: Name<VerificationOutcome>,
    /// Reasons in check order, each once.
    pub rejection_reasons: Vec<Name<RejectionReason>>,
    /// Missing required ids, in required order.
    pub missing_required_entry_ids: Vec<RefItem>,
    /// Invalid ids, ordinal order.
    pub invalid_entry_ids: Vec<RefItem>,
    /// Required ids of the original.
    pub preservation_only_fallback_entry_ids: Vec<RefItem>,
}

/// One captured snapshot (SPEC SNAP-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceSnapshot {
    /// The (effective) version.
    pub version: i64,
    /// The entries; absent (and no `refs`) repeats the previous snapshot's.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "entries_in_place"
    )]
    pub entries: Option<Vec<TraceEntry>>,
    /// Version 2: the entries as references to the run's entry table (instead of `entries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refs: Option<Vec<RefItem>>,
}

/// A list of entries read so that each entry is built once, where it ends up: a trace entry is
/// a few hundred bytes, and returned by value through the reader's layers it was copied at
/// each (several copies per entry; a compact record defines up to a hundred). Each entry is
/// built on the heap by its own visitor and moved once into the list; what is accepted and
/// every refusal (its words, its JSON path) are those of `Option<Vec<TraceEntry>>`.
fn entries_in_place<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<TraceEntry>>, D::Error> {
    Ok(Option::<BoxedList>::deserialize(d)?.map(|l| l.0.into_iter().map(|e| *e).collect()))
}

/// An entry on the heap, read as a [`TraceEntry`] is.
struct Boxed(Box<TraceEntry>);

impl<'de> Deserialize<'de> for Boxed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Boxed, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Boxed;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an entry (an object)")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, a: A) -> Result<Boxed, A::Error> {
                let m = serde::de::value::MapAccessDeserializer::new(a);
                Ok(Boxed(Box::new(TraceEntry::deserialize(m)?)))
            }
        }
        d.deserialize_struct("TraceEntry", TRACE_ENTRY_FIELDS, V)
    }
}

/// A list of entries, each on the heap: read as a `Vec<TraceEntry>` is.
#[allow(
    clippy::vec_box,
    reason = "each entry is built once in its box, which a defined entry keeps as it is"
)]
struct BoxedList(Vec<Box<TraceEntry>>);

impl<'de> Deserialize<'de> for BoxedList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<BoxedList, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = BoxedList;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of entries (an array)")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<BoxedList, A::Error> {
                let mut out = Vec::with_capacity(a.size_hint().unwrap_or(0).min(4096));
                while let Some(Boxed(e)) = a.next_element()? {
                    out.push(e);
                }
                Ok(BoxedList(out))
            }
        }
        d.deserialize_seq(V)
    }
}

/// A record's defined entries, in order.
#[derive(Debug, Clone, Default)]
pub struct Defs(pub Vec<Defined>);

/// One defined entry.
#[derive(Debug, Clone)]
pub enum Defined {
    /// A redacted entry built as it was read (`super::defined`); its recorded form is
    /// [`Defined::recorded`].
    Built {
        /// The entry.
        entry: Entry,
        /// Its recorded size.
        size: Option<i32>,
        /// What the entry does not say of its recorded form.
        shape: Shape,
    },
    /// Any other entry, as recorded (built by its run's table).
    Recorded(Box<TraceEntry>),
}

/// What a [`Defined::Built`] entry does not say of how it was recorded: its kind's name, and
/// whether `role`, `digest`, `calls` and `results` were written (an absent role is the kind's
/// default; an absent digest an empty text; absent call or result lists no parts); for an
/// `ArtifactReference`, whose text is its reference, the digest it was recorded with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    kind: KindInput,
    role: bool,
    digest: bool,
    calls: bool,
    results: bool,
    /// The recorded digest when the entry's text is not it (an `ArtifactReference`).
    reference_digest: Option<Digest>,
}

impl Shape {
    /// The shape of a redacted entry of `kind` recorded with or without `role`, `digest`,
    /// `calls` and `results` (in that order).
    pub fn new(kind: KindInput, written: [bool; 4]) -> Shape {
        let [role, digest, calls, results] = written;
        Shape {
            kind,
            role,
            digest,
            calls,
            results,
            reference_digest: None,
        }
    }

    /// The same shape, recorded with `digest` (the lowercase hex digits of a [`Digest`]),
    /// which the entry's text is not.
    pub fn with_digest(self, digest: Digest) -> Shape {
        Shape {
            digest: true,
            reference_digest: Some(digest),
            ..self
        }
    }

    /// The recorded form of `entry`, built from a redacted entry of this shape with `size`.
    pub fn recorded(&self, entry: &Entry, size: Option<i32>) -> TraceEntry {
        let message = entry.message();
        let kind = entry.kind();
        let text = || match message.parts.first() {
            Some(Part::Text(t)) => t.clone(),
            _ => String::new(),
        };
        let reference = matches!(
            kind,
            EntryKind::ArtifactReference | EntryKind::RecoverableContextSegment
        )
        .then(|| {
            entry
                .artifact_reference_digests()
                .first()
                .map(|d| d.to_hex())
        })
        .flatten();
        TraceEntry {
            id: entry.id().as_str().to_owned(),
            kind: self.kind,
            role: self.role.then(|| message.role.clone()),
            author: message.author.clone(),
            size,
            text: None,
            parts: None,
            segment: None,
            digest: match self.reference_digest {
                Some(d) => Some(d.to_hex()),
                None => self.digest.then(text),
            },
            calls: self.calls.then(|| tool_calls(message)),
            results: self.results.then(|| tool_results(message)),
            reference,
        }
    }
}

/// A message's call parts, redacted (ids and names), in part order.
pub fn tool_calls(m: &Message) -> Vec<TraceToolCall> {
    m.parts
        .iter()
        .filter_map(|p| match p {
            Part::Call(c) => Some(TraceToolCall {
                call_id: c.call_id.clone(),
                name: c.name.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// A message's result parts, redacted (call ids, and the artifact digest a value carries when
/// it is a canonical reference), in part order.
pub fn tool_results(m: &Message) -> Vec<TraceToolResult> {
    m.parts
        .iter()
        .filter_map(|p| match p {
            Part::Result(r) => Some(TraceToolResult {
                call_id: r.call_id.clone(),
                reference: result_reference(&r.value).map(|d| d.to_hex()),
            }),
            _ => None,
        })
        .collect()
}

/// The artifact digest of a result value that is a canonical reference (SPEC ENT-5.4), as a
/// string or as raw JSON text of one.
pub fn result_reference(v: &Value) -> Option<Digest> {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::RawJson(r) => serde_json::from_str::<String>(r.as_str()).ok()?,
        _ => return None,
    };
    ArtifactReference::parse(&s).ok().map(|r| r.digest())
}

impl Defined {
    /// The entry as recorded.
    pub fn recorded(&self) -> Cow<'_, TraceEntry> {
        match self {
            Defined::Built { entry, size, shape } => Cow::Owned(shape.recorded(entry, *size)),
            Defined::Recorded(t) => Cow::Borrowed(t),
        }
    }
}

impl<'de> Deserialize<'de> for Defs {
    /// A list of entries, each kept as recorded ([`Defined::Recorded`]): read as a list of
    /// [`TraceEntry`] is, each entry built on the heap where it ends up. (The checker's quick
    /// reader builds redacted entries into vocabulary as it reads them, [`Defined::Built`].)
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Defs, D::Error> {
        let BoxedList(entries) = BoxedList::deserialize(d)?;
        Ok(Defs(entries.into_iter().map(Defined::Recorded).collect()))
    }
}

impl Defs {
    /// How many entries the record defines.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the record defines none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Vec<TraceEntry>> for Defs {
    /// Entries as a writer records them (built only when a table takes them).
    fn from(entries: Vec<TraceEntry>) -> Defs {
        Defs(
            entries
                .into_iter()
                .map(|t| Defined::Recorded(Box::new(t)))
                .collect(),
        )
    }
}

impl PartialEq for Defs {
    /// Equal recorded forms.
    fn eq(&self, other: &Defs) -> bool {
        self.len() == other.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|(a, b)| a.recorded() == b.recorded())
    }
}

impl Serialize for Defs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|d| d.recorded()))
    }
}

#[cfg(feature = "schema")]
impl JsonSchema for Defs {
    fn inline_schema() -> bool {
        <Vec<TraceEntry>>::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        <Vec<TraceEntry>>::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        <Vec<TraceEntry>>::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Vec<TraceEntry>>::json_schema(generator)
    }
}

/// The members of a [`TraceEntry`], as its derived reader names them.
pub const TRACE_ENTRY_FIELDS: &[&str] = &[
    "id",
    "kind",
    "role",
    "author",
    "size",
    "text",
    "parts",
    "segment",
    "digest",
    "calls",
    "results",
    "reference",
];

/// One entry, with content (`text` / `parts` / `segment`, as in `docs/WIRE.md`) or redacted
/// (`digest`, and the structure: `calls`, `results`, `reference`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceEntry {
    /// The entry id.
    pub id: String,
    /// The kind (SPEC ENT-1).
    pub kind: KindInput,
    /// The role (defaults as in the wire format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The author name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The size in the policy's unit (required with the `recorded` estimator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i32>,
    /// Content: one text part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Content: the parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<PartInput>>,
    /// Content: a recovered segment (SPEC ENT-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<SegmentInput>,
    /// Redacted: a digest of the content (any string; equal content, equal digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Redacted: the call parts (ids and function names), in part order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<Vec<TraceToolCall>>,
    /// Redacted: the result parts, in part order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<TraceToolResult>>,
    /// Redacted: the artifact digest (64 lowercase hex) of an `ArtifactReference` entry's
    /// reference or of a `RecoverableContextSegment`'s reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// A redacted call part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceToolCall {
    /// The call id.
    pub call_id: String,
    /// The function name.
    pub name: String,
}

/// A redacted result part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceToolResult {
    /// The call id answered.
    pub call_id: String,
    /// The artifact digest of the canonical reference the value carries, if it is one
    /// (SPEC ENT-5.4, DEP-8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// One reducer invocation (SPEC ASM-4): the request and the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReducerStep {
    /// The 1-based attempt number.
    pub attempt: i32,
    /// The ids of the request's entries, in order.
    #[serde(default)]
    pub request_ids: Vec<String>,
    /// Version 2: the request's entries as table references (instead of `requestIds`;
    /// informative, as `requestIds` is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Vec<RefItem>>,
    /// The answer.
    pub answer: ReducerAnswer,
}

/// What the reducer answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(
    rename = "reducer answer",
    rename_all = "camelCase",
    deny_unknown_fields
)]
#[cfg_attr(feature = "schema", schemars(rename = "ReducerAnswer"))]
pub enum ReducerAnswer {
    /// A proposal: request entries kept by id, or new entries.
    Propose(Vec<TraceProposalItem>),
    /// Nothing (an `InvalidOperation` error, SPEC ASM-4).
    Nothing,
    /// An error of this kind: `ReducerFailed` or `ReducerContract`.
    Error(String),
}

/// One proposal item: a request entry kept by id, or `{"new": entry}`; version 2 also: a
/// request entry kept by the table index of an entry with its id, or `{"new": index}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(untagged)]
pub enum TraceProposalItem {
    /// The request entry with this id, unchanged.
    Keep(String),
    /// Version 2: the request entry whose id is that of this table entry, unchanged.
    KeepRef(u32),
    /// A new entry.
    New(Box<NewTraceEntry>),
    /// Version 2: a new entry from the run's table.
    NewRef(NewRef),
}

/// `{"new": index}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NewRef {
    /// The table index of the new entry.
    pub new: u32,
}

impl<'de> Deserialize<'de> for TraceProposalItem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TraceProposalItem, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = TraceProposalItem;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a kept entry id, a table index, or {\"new\": entry or table index}")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<TraceProposalItem, E> {
                index(v).map(TraceProposalItem::KeepRef)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TraceProposalItem, E> {
                Ok(TraceProposalItem::Keep(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<TraceProposalItem, E> {
                Ok(TraceProposalItem::Keep(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                a: A,
            ) -> Result<TraceProposalItem, A::Error> {
                let item = NewItem::deserialize(serde::de::value::MapAccessDeserializer::new(a))?;
                Ok(match item.new {
                    NewValue::Index(i) => TraceProposalItem::NewRef(NewRef { new: i }),
                    NewValue::Entry(e) => {
                        TraceProposalItem::New(Box::new(NewTraceEntry { new: *e }))
                    }
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// `{"new": entry or table index}` as read (an object with that one member).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewItem {
    new: NewValue,
}

/// The value of `new`: an entry, or a table index.
enum NewValue {
    Index(u32),
    Entry(Box<TraceEntry>),
}

impl<'de> Deserialize<'de> for NewValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<NewValue, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = NewValue;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an entry or a table index")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<NewValue, E> {
                index(v).map(NewValue::Index)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, a: A) -> Result<NewValue, A::Error> {
                TraceEntry::deserialize(serde::de::value::MapAccessDeserializer::new(a))
                    .map(|e| NewValue::Entry(Box::new(e)))
            }
        }
        d.deserialize_any(V)
    }
}

/// `{"new": entry}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewTraceEntry {
    /// The new entry.
    pub new: TraceEntry,
}

/// Where a call failed (which decides the events the SPEC allows, EVT-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename = "phase", rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "Phase"))]
pub enum Phase {
    /// Entering the run's gate (SPEC LSE-7): no lease, no event.
    Gate,
    /// NODE-3 steps 1-5 (cancellation, adaptation, integration): no event.
    Prepare,
    /// NODE-3 steps 7-9 (assembler, cancellation, diagnostics): `Started` only.
    Assembly,
    /// A termination outcome (NODE-4): `Started`, `Terminated`.
    Terminated,
    /// The provider failed after `Composed` (NODE-5).
    Provider,
    /// Committing the lease failed after the provider succeeded (NODE-5).
    Commit,
}

/// A call's error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceError {
    /// The error kind (SPEC ERR-1).
    pub kind: String,
    /// Where it happened.
    pub phase: Phase,
}

/// The four event kinds (SPEC EVT-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename = "event kind")]
#[cfg_attr(feature = "schema", schemars(rename = "EventKind"))]
#[allow(missing_docs)]
pub enum EventKind {
    Started,
    Completed,
    Terminated,
    Composed,
}

/// One progress event (SPEC EVT-3, EVT-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceEvent {
    /// The kind.
    pub kind: EventKind,
    /// The attempt's opaque id (SPEC EVT-5).
    pub assembly_id: String,
    /// The envelope's sequence number (SPEC EVT-3).
    pub sequence: u64,
    /// `Started`: the estimator's unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurement_unit: Option<String>,
    /// `Started`: the hard limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hard_limit: Option<i32>,
    /// `Started`: the trigger threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_threshold: Option<i32>,
    /// `Completed`, `Terminated`, `Composed`: the diagnostics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<DiagnosticsOutput>,
}

/// How a call's lease ended (SPEC NODE-5, LSE-3, LSE-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename = "lease settlement", rename_all = "camelCase")]
#[cfg_attr(feature = "schema", schemars(rename = "Settlement"))]
pub enum Settlement {
    /// Committed with the forwarded digests.
    Committed,
    /// Released.
    Released,
    /// No lease was taken (the gate refused the call).
    None,
}

/// Lease actions of one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceLease {
    /// The settlement.
    pub settled: Settlement,
    /// The artifact digests committed as delivered, in final order (SPEC NODE-3 step 13).
    #[serde(default)]
    pub forwarded: Vec<String>,
}

/// Any line of a trace: the header (first line) or a record (every later line). Exists for the
/// published JSON Schema (`hybrid-compaction schema trace`); lines are read as [`Header`] and
/// [`Record`].
#[cfg(feature = "schema")]
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Line {
    /// The first line.
    Header(Header),
    /// Every later line.
    Record(Record),
}

/// The JSON Schema every line of a trace validates against.
#[cfg(feature = "schema")]
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Line)).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use super::{TraceEntry, TRACE_ENTRY_FIELDS};
    use crate::shapes::{KindInput, SegmentInput};
    use hybrid_compaction_model::entry::EntryKind;

    /// The member list handed to the reader with the in-place entries is the trace entry's own:
    /// an entry with every member written has exactly these members.
    #[test]
    fn trace_entry_fields_are_the_entry_members() {
        let entry = TraceEntry {
            id: "e".into(),
            kind: KindInput(EntryKind::ToolExchange),
            role: Some("tool".into()),
            author: Some("a".into()),
            size: Some(1),
            text: Some("t".into()),
            parts: Some(Vec::new()),
            segment: Some(SegmentInput {
                reference: None,
                body: "b".into(),
            }),
            digest: Some("d".into()),
            calls: Some(Vec::new()),
            results: Some(Vec::new()),
            reference: Some("r".into()),
        };
        let json = serde_json::to_value(&entry).unwrap();
        let mut members: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut fields = TRACE_ENTRY_FIELDS.to_vec();
        members.sort_unstable();
        fields.sort_unstable();
        assert_eq!(fields, members);
    }
}
