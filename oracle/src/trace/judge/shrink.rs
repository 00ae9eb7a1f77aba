//! Counterexamples (SPEC TRC-1): for a call whose recorded answer disagrees with the SPEC's, a
//! minimal wire `assemble` case that `hybrid-compaction run` answers with the SPEC's answer,
//! which still disagrees with the recorded one in the same field.
//!
//! The recorded call becomes a wire case: the snapshots as a schedule, the reducer answers as a
//! scripted reducer, the cancellation point as is; redacted entries get their digest as text and
//! the `recorded` estimator becomes a `table` estimator of the recorded sizes. Then, greedily and
//! within a fixed budget of candidate runs: trailing snapshots and reducer steps are dropped,
//! entries are removed (from every snapshot and proposal) one at a time, and sizes are lowered
//! (recorded sizes, or the texts of content entries: to 0 / empty, else halved), each change kept
//! only if the SPEC's answer still differs from the
//! recorded one at the field that first differed. The result is "fewest entries, smallest sizes,
//! still disagreeing" up to that greedy search.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use crate::ops::assemble::AssembleCase;
use crate::ops::run_case;
use crate::ops::Case;
use crate::ops::Output;
use crate::trace::format::{CallRecord, ReducerAnswer, TraceEntry, TraceProposalItem};
use crate::trace::judge::replay::Prepared;
use crate::wire::input::{
    CallInput, EntryInput, EstimatorInput, NewItemInput, PartInput, PolicyInput, ProposalItemInput,
    ReducerInput, ResultInput, ScriptedReducerInput, SegmentInput, SnapshotInput, StepInput,
    TableEstimatorInput,
};
use hybrid_compaction_model::seam::Implementation;

/// Candidate runs one counterexample may spend.
pub(crate) const BUDGET: usize = 400;

/// A shrunk wire case for one disagreeing call.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counterexample {
    /// The run id.
    pub run: String,
    /// The call id.
    pub call: String,
    /// The call record's line.
    pub line: usize,
    /// JSON pointer into the output where the SPEC and the recording disagree.
    pub field: String,
    /// What the recording has there.
    pub recorded: Json,
    /// The wire case (`hybrid-compaction run` answers it with `expected`).
    pub case: Case,
    /// The SPEC's answer to `case`.
    pub expected: Output,
}

fn canonical(digest: &str) -> String {
    format!("artifact://sha256/{digest}")
}

/// The wire form of a trace entry (redacted entries: the digest is the text).
pub(crate) fn wire_entry(t: &TraceEntry) -> EntryInput {
    let redacted =
        t.digest.is_some() || t.calls.is_some() || t.results.is_some() || t.reference.is_some();
    let mut e = EntryInput {
        id: t.id.clone(),
        kind: t.kind,
        role: t.role.clone(),
        author: t.author.clone(),
        text: t.text.clone(),
        parts: t.parts.clone(),
        segment: t.segment.clone(),
    };
    if !redacted {
        return e;
    }
    let key = t.digest.clone().unwrap_or_default();
    use hybrid_compaction_model::entry::EntryKind as K;
    match t.kind.0 {
        K::RecoverableContextSegment => {
            e.role = None;
            e.segment = Some(SegmentInput {
                reference: t.reference.as_deref().map(canonical),
                body: key,
            });
        }
        K::ArtifactReference => e.text = t.reference.as_deref().map(canonical),
        K::ToolExchange => {
            let mut parts = vec![PartInput::Text(key)];
            for c in t.calls.iter().flatten() {
                parts.push(PartInput::Call(CallInput {
                    call_id: c.call_id.clone(),
                    name: c.name.clone(),
                    arguments: None,
                    informational_only: false,
                }));
            }
            for r in t.results.iter().flatten() {
                parts.push(PartInput::Result(ResultInput {
                    call_id: r.call_id.clone(),
                    value: r
                        .reference
                        .as_deref()
                        .map_or(Json::Null, |d| Json::String(canonical(d))),
                }));
            }
            e.parts = Some(parts);
        }
        _ => e.text = Some(key),
    }
    e
}

/// The shrinkable form of a call.
#[derive(Debug, Clone)]
struct Candidate {
    policy: PolicyInput,
    sizes: Option<BTreeMap<String, i32>>,
    snapshots: Vec<(i64, Vec<EntryInput>)>,
    steps: Vec<StepInput>,
    cancel: Option<String>,
}

impl Candidate {
    fn case(&self) -> Case {
        let mut policy = self.policy.clone();
        if let Some(sizes) = &self.sizes {
            policy.estimator = Some(EstimatorInput::Table(TableEstimatorInput {
                sizes: sizes.clone(),
                default: 0,
            }));
        }
        Case::Assemble(AssembleCase {
            policy: Some(policy),
            entries: None,
            snapshots: Some(
                self.snapshots
                    .iter()
                    .map(|(v, es)| SnapshotInput {
                        version: *v,
                        entries: Some(es.clone()),
                    })
                    .collect(),
            ),
            reducer: Some(ReducerInput::Scripted(ScriptedReducerInput {
                steps: self.steps.clone(),
            })),
            cancel: self.cancel.clone(),
            transcript: None,
        })
    }

    fn entry_count(&self) -> usize {
        self.snapshots.iter().map(|(_, es)| es.len()).sum()
    }

    fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for (_, es) in &self.snapshots {
            for e in es {
                if !ids.contains(&e.id) {
                    ids.push(e.id.clone());
                }
            }
        }
        ids
    }

    /// The text of entry `id` (its first occurrence), if it is given as `text`.
    fn text_of(&self, id: &str) -> Option<String> {
        self.snapshots
            .iter()
            .flat_map(|(_, es)| es.iter())
            .find(|e| e.id == id)
            .and_then(|e| e.text.clone())
    }

    /// Every occurrence of entry `id` (snapshots and proposals) with its text replaced.
    fn with_text(&self, id: &str, text: &str) -> Candidate {
        let mut c = self.clone();
        let set = |e: &mut EntryInput| {
            if e.id == id && e.text.is_some() {
                e.text = Some(text.to_owned());
            }
        };
        for (_, es) in &mut c.snapshots {
            es.iter_mut().for_each(set);
        }
        for s in &mut c.steps {
            if let StepInput::Propose(items) = s {
                for i in items {
                    if let ProposalItemInput::New(n) = i {
                        set(&mut n.new);
                    }
                }
            }
        }
        c
    }

    fn without(&self, id: &str) -> Candidate {
        let mut c = self.clone();
        for (_, es) in &mut c.snapshots {
            es.retain(|e| e.id != id);
        }
        for s in &mut c.steps {
            if let StepInput::Propose(items) = s {
                items.retain(|i| match i {
                    ProposalItemInput::Keep(k) => k != id,
                    ProposalItemInput::New(n) => n.new.id != id,
                });
            }
        }
        if let Some(sizes) = &mut c.sizes {
            sizes.remove(id);
        }
        c
    }
}

fn candidate(rec: &CallRecord, prep: &Prepared) -> Candidate {
    let p = &rec.policy;
    let mut sizes: Option<BTreeMap<String, i32>> = None;
    let estimator = match &p.estimator {
        Some(EstimatorInput::Recorded(_)) => {
            sizes = Some(BTreeMap::new());
            None
        }
        other => other.clone(),
    };
    let mut note = |t: &TraceEntry| {
        if let (Some(m), Some(s)) = (sizes.as_mut(), t.size) {
            m.entry(t.id.clone()).or_insert(s);
        }
    };
    let mut snapshots: Vec<(i64, Vec<EntryInput>)> = Vec::new();
    for s in &rec.snapshots {
        let es = match &s.entries {
            Some(ts) => ts
                .iter()
                .map(|t| {
                    note(t);
                    wire_entry(t)
                })
                .collect(),
            None => snapshots
                .last()
                .map(|(_, es)| es.clone())
                .unwrap_or_default(),
        };
        snapshots.push((s.version, es));
    }
    let steps = rec
        .reducer
        .iter()
        .map(|st| match &st.answer {
            ReducerAnswer::Nothing => StepInput::Nothing,
            ReducerAnswer::Error(k) => StepInput::Fail(format!("recorded {k}")),
            ReducerAnswer::Propose(items) => StepInput::Propose(
                items
                    .iter()
                    .map(|i| match i {
                        TraceProposalItem::Keep(id) => ProposalItemInput::Keep(id.clone()),
                        // Table references are written out before shrinking
                        // (`compact::expand`); an unresolved one keeps nothing.
                        TraceProposalItem::KeepRef(_) | TraceProposalItem::NewRef(_) => {
                            ProposalItemInput::Keep(String::new())
                        }
                        TraceProposalItem::New(n) => {
                            note(&n.new);
                            ProposalItemInput::New(NewItemInput {
                                new: wire_entry(&n.new),
                            })
                        }
                    })
                    .collect(),
            ),
        })
        .collect();
    let _ = prep;
    Candidate {
        policy: PolicyInput {
            hard_limit: p.hard_limit,
            trigger_margin: p.trigger_margin,
            recent_message_retention_count: p.recent_message_retention_count,
            maximum_compaction_attempts: p.maximum_compaction_attempts,
            preservation_label: p.preservation_label.clone(),
            preservation_version: p.preservation_version,
            estimator,
        },
        sizes,
        snapshots,
        steps,
        cancel: rec.cancel.clone(),
    }
}

/// The comparable JSON of an answer: error messages dropped.
fn comparable(o: &Output) -> Json {
    let mut v = serde_json::to_value(o).unwrap_or_default();
    if let Some(e) = v.get_mut("error").and_then(Json::as_object_mut) {
        e.remove("message");
    }
    v
}

/// The recorded answer in the same shape.
fn recorded(rec: &CallRecord) -> Json {
    let mut m = serde_json::Map::new();
    if let Some(r) = &rec.result {
        m.insert(
            "assembly".into(),
            serde_json::to_value(r).unwrap_or_default(),
        );
    }
    if let Some(d) = &rec.diagnostics {
        m.insert(
            "diagnostics".into(),
            serde_json::to_value(d).unwrap_or_default(),
        );
    }
    if let Some(e) = rec
        .error
        .as_ref()
        .filter(|e| e.kind != "Cancelled" || rec.result.is_none())
    {
        m.insert("error".into(), serde_json::json!({"kind": e.kind}));
    }
    Json::Object(m)
}

/// The first differing member, at most two levels deep (`/assembly/stages`).
fn differing_pointer(a: &Json, b: &Json) -> Option<String> {
    let (Some(x), Some(y)) = (a.as_object(), b.as_object()) else {
        return (a != b).then(String::new);
    };
    let keys: Vec<&String> = x
        .keys()
        .chain(y.keys().filter(|k| !x.contains_key(*k)))
        .collect();
    for k in keys {
        let (va, vb) = (
            x.get(k).unwrap_or(&Json::Null),
            y.get(k).unwrap_or(&Json::Null),
        );
        if va == vb {
            continue;
        }
        if let (Some(ia), Some(ib)) = (va.as_object(), vb.as_object()) {
            for (k2, w) in ia.iter().chain(ib.iter()) {
                if ia.get(k2) != ib.get(k2) {
                    let _ = w;
                    return Some(format!("/{k}/{k2}"));
                }
            }
        }
        return Some(format!("/{k}"));
    }
    None
}

struct Search<'a> {
    imp: &'a dyn Implementation,
    recorded: Json,
    field: String,
    spent: usize,
}

impl Search<'_> {
    /// The SPEC's answer if it still disagrees at the field.
    fn disagrees(&mut self, c: &Candidate) -> Option<Output> {
        if self.spent >= BUDGET {
            return None;
        }
        self.spent += 1;
        let out = run_case(&c.case(), self.imp).ok()?;
        let spec = comparable(&out);
        let mine = spec.pointer(&self.field).unwrap_or(&Json::Null);
        let theirs = self.recorded.pointer(&self.field).unwrap_or(&Json::Null);
        (mine != theirs).then_some(out)
    }
}

impl Counterexample {
    /// The number of entries over all snapshots of the case.
    pub fn case_entries(&self) -> usize {
        match &self.case {
            Case::Assemble(a) => a
                .snapshots
                .iter()
                .flatten()
                .map(|s| s.entries.as_ref().map_or(0, Vec::len))
                .sum(),
            Case::Verify(v) => v.original.len(),
            _ => 0,
        }
    }
}

/// Builds and shrinks the counterexample of one disagreeing call (None if the wire case does
/// not reproduce the disagreement).
pub(crate) fn counterexample(
    rec: &CallRecord,
    prep: &Prepared,
    imp: &dyn Implementation,
) -> Option<Counterexample> {
    let best = candidate(rec, prep);
    let recorded = recorded(rec);
    let first = run_case(&best.case(), imp).ok()?;
    let field = differing_pointer(&recorded, &comparable(&first))?;
    let mut search = Search {
        imp,
        recorded,
        field,
        spent: 0,
    };
    let expected = search.disagrees(&best)?;
    let mut shrunk = Shrunk { best, expected };
    shrunk.trailing(&mut search);
    shrunk.entries(&mut search);
    shrunk.sizes(&mut search);
    // Content traces, where sizes come from the text.
    if shrunk.best.sizes.is_none() {
        shrunk.texts(&mut search);
    }
    let recorded_at = search
        .recorded
        .pointer(&search.field)
        .cloned()
        .unwrap_or(Json::Null);
    Some(Counterexample {
        run: rec.run.clone(),
        call: rec.call.clone(),
        line: 0,
        field: search.field,
        recorded: recorded_at,
        case: shrunk.best.case(),
        expected: shrunk.expected,
    })
}

/// The smallest candidate found so far that still disagrees, and the SPEC's answer to it.
struct Shrunk {
    best: Candidate,
    expected: Output,
}

impl Shrunk {
    /// Takes `c` if it still disagrees; whether it did.
    fn take(&mut self, search: &mut Search<'_>, c: Candidate) -> bool {
        match search.disagrees(&c) {
            Some(o) => {
                (self.best, self.expected) = (c, o);
                true
            }
            None => false,
        }
    }

    /// Trailing snapshots, then trailing reducer steps.
    fn trailing(&mut self, search: &mut Search<'_>) {
        while self.best.snapshots.len() > 1 {
            let mut c = self.best.clone();
            c.snapshots.pop();
            if !self.take(search, c) {
                break;
            }
        }
        while !self.best.steps.is_empty() {
            let mut c = self.best.clone();
            c.steps.pop();
            if !self.take(search, c) {
                break;
            }
        }
    }

    /// Entries, one id at a time, until nothing more can go (within the budget).
    fn entries(&mut self, search: &mut Search<'_>) {
        let mut changed = true;
        while changed && search.spent < BUDGET {
            changed = false;
            for id in self.best.ids() {
                let c = self.best.without(&id);
                if c.entry_count() > 0 && self.take(search, c) {
                    changed = true;
                }
            }
        }
    }

    /// Sizes: 0, else halved, while the candidate still disagrees.
    fn sizes(&mut self, search: &mut Search<'_>) {
        let ids: Vec<String> = self
            .best
            .sizes
            .iter()
            .flat_map(|m| m.keys().cloned())
            .collect();
        for id in ids {
            while let Some(cur) = self.best.sizes.as_ref().and_then(|m| m.get(&id)).copied() {
                let accepted = cur > 0
                    && [0, cur / 2].into_iter().filter(|&n| n != cur).any(|next| {
                        let mut c = self.best.clone();
                        if let Some(m) = c.sizes.as_mut() {
                            m.insert(id.clone(), next);
                        }
                        self.take(search, c)
                    });
                if !accepted {
                    break;
                }
            }
        }
    }

    /// Texts: empty, else halved, while the candidate still disagrees.
    fn texts(&mut self, search: &mut Search<'_>) {
        for id in self.best.ids() {
            while let Some(text) = self.best.text_of(&id).filter(|t| !t.is_empty()) {
                let half: String = text.chars().take(text.chars().count() / 2).collect();
                let accepted = [String::new(), half]
                    .into_iter()
                    .filter(|t| *t != text)
                    .any(|t| {
                        let c = self.best.with_text(&id, &t);
                        self.take(search, c)
                    });
                if !accepted {
                    break;
                }
            }
        }
    }
}
