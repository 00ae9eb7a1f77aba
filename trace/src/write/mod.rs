//! Writing the node's call records ([`hybrid_compaction::node::CallTrace`]) as trace lines
//! (`docs/TRACE.md`): the serialization half of the node's trace seam, which lives here because
//! the library has no serialization dependency.
//!
//! By default entries are *redacted*: each carries its size (measured by the policy's own
//! estimator, so the trace's policy says `{"kind": "recorded"}` in the estimator's unit), a
//! content digest (SHA-256 of an internal rendering of the message; only equality matters) and
//! the structure the SPEC looks at (kind, role, call ids and names, result references). With
//! [`Writer::with_content`] the message content is written too, in the wire shapes.
//!
//! Runs are told apart with [`Run::same_run`] and named `run-1`, `run-2`, ... in order of first
//! appearance; calls are `call-1`, `call-2`, ... within their run.
//!
//! Records are written in the compact profile of version 2 by default: each entry is defined
//! once per run (`defs`) and referred to by its index in the run's table afterwards (an entry
//! is the same table entry when it has the same id and equal content and size). With
//! [`Writer::expanded`] every record is self-contained (version 1).
//!
//! [`Writer::observed`] writes a provider call of a system that does not implement the ADR as
//! an observed record (version 3, SPEC TRC-13): the history it held and what it sent, entries
//! measured and redacted (or not) as above, in the compact profile defined once per run. Such
//! runs and calls are named by the caller (a host names its agent's runs and model calls); they
//! share the per-run tables with the node's records under the same run name, as the checker
//! does.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use hybrid_compaction::lease::Run;
use hybrid_compaction::node::{
    CallTrace, CancelPoint, CompactionEvent, Phase as NodePhase, Settlement as NodeSettlement,
    StreamEnd as NodeStreamEnd, TraceObserver,
};
use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::message::Part;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::value::Value;
use serde_json::Value as Json;

use crate::format::{
    compress, tool_calls, tool_results, CallRecord, Defs, Dispatch, EventKind, Header, NewRef,
    NewTraceEntry, ObservedPolicy, ObservedRecord, Phase, ReducerAnswer, ReducerStep, RefItem,
    RunEnd, Settlement, StreamEnd, TraceEntries, TraceEntry, TraceError, TraceEvent, TraceLease,
    TraceProposalItem, TraceResult, TraceSnapshot, TraceVerification, TRACE_VERSION,
};
use crate::shapes::{
    assembly_output, diagnostics_output, BlockInput, CallInput, EstimatorInput, Id, KindInput,
    Name, PartInput, PolicyInput, RecordedEstimatorInput, ResultInput, SegmentInput,
};

/// An observer that keeps every record in memory (tests, small hosts).
#[derive(Debug, Default)]
pub struct Collector(Mutex<Vec<CallTrace>>);

impl Collector {
    /// Takes the records collected so far.
    pub fn take(&self) -> Vec<CallTrace> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl TraceObserver for Collector {
    fn call(&self, record: CallTrace) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(record);
    }
}

/// Names runs and calls and turns records into trace lines.
#[derive(Debug, Default)]
pub struct Writer {
    content: bool,
    expanded: bool,
    runs: Vec<(Run, String, usize)>,
    named: usize,
    tables: HashMap<String, Table>,
}

/// The writer's copy of a run's entry table: where each entry was defined.
#[derive(Debug, Default)]
struct Table {
    by_id: HashMap<EntryId, Vec<(Entry, Option<i32>, u32)>>,
    len: u32,
}

/// One record's view of its run's table while it is written.
struct Defining<'a> {
    table: &'a mut Table,
    defs: Vec<TraceEntry>,
    /// The index of each id this record referred to (the latest).
    ids: HashMap<EntryId, u32>,
}

impl Defining<'_> {
    /// The table index of `e` (measured `size`), defining it if it is new.
    fn index(&mut self, e: &Entry, policy: &Policy, make: impl FnOnce() -> TraceEntry) -> u32 {
        let slot = self.table.by_id.entry(e.id().clone()).or_default();
        let size = Some(policy.estimator().estimate(e));
        let i = match slot
            .iter()
            .find(|(x, s, _)| *s == size && (x.ptr_eq(e) || x == e))
        {
            Some((_, _, i)) => *i,
            None => {
                let i = self.table.len;
                self.table.len += 1;
                slot.push((e.clone(), size, i));
                self.defs.push(make());
                i
            }
        };
        self.ids.insert(e.id().clone(), i);
        i
    }

    /// Ids as references (an id this record never referred to is written out).
    fn id_refs(&self, ids: &[Id]) -> Vec<RefItem> {
        let mut out = Vec::with_capacity(ids.len());
        let mut run: Vec<u32> = Vec::new();
        for id in ids {
            match self.ids.get(id.as_str()) {
                Some(&i) => run.push(i),
                None => {
                    out.extend(compress(&run));
                    run.clear();
                    out.push(RefItem::Id(id.as_str().to_owned()));
                }
            }
        }
        out.extend(compress(&run));
        out
    }
}

/// The header line.
pub fn header(producer: &str) -> Header {
    Header {
        trace: TRACE_VERSION,
        producer: Some(producer.to_owned()),
    }
}

fn kind_input(k: EntryKind) -> KindInput {
    KindInput(k)
}

fn float(x: f64) -> Json {
    if x.is_nan() {
        Json::from("NaN")
    } else if x == f64::INFINITY {
        Json::from("Infinity")
    } else if x == f64::NEG_INFINITY {
        Json::from("-Infinity")
    } else if x == 0.0 && x.is_sign_negative() {
        Json::from("-0")
    } else {
        serde_json::Number::from_f64(x).map_or(Json::Null, Json::Number)
    }
}

/// A value in the wire's tagged form (`docs/WIRE.md`, "Values"), exact for every variant.
pub fn value_json(v: &Value) -> Json {
    let tag = |k: &str, x: Json| serde_json::json!({ k: x });
    match v {
        Value::Null => Json::Null,
        Value::String(s) => Json::from(s.as_str()),
        Value::Bool(b) => Json::from(*b),
        Value::I16(x) => tag("i16", Json::from(*x)),
        Value::I32(x) => tag("i32", Json::from(*x)),
        Value::I64(x) => tag("i64", Json::from(*x)),
        Value::U8(x) => tag("u8", Json::from(*x)),
        Value::U32(x) => tag("u32", Json::from(*x)),
        Value::U64(x) => tag("u64", Json::from(*x)),
        Value::F32(x) => tag(
            "f32",
            match x.to_string().parse::<f64>() {
                Ok(y) if x.is_finite() => float(y),
                _ => float(*x as f64),
            },
        ),
        Value::F64(x) => tag("f64", float(*x)),
        Value::Decimal(d) => tag("decimal", Json::from(d.to_string())),
        Value::RawJson(r) => tag("raw", Json::from(r.as_str())),
        Value::Map(m) => tag(
            "map",
            Json::Object(m.iter().map(|(k, x)| (k.clone(), value_json(x))).collect()),
        ),
        Value::List(xs) => tag("list", Json::Array(xs.iter().map(value_json).collect())),
    }
}

impl Writer {
    /// A writer of redacted traces (no content).
    pub fn new() -> Writer {
        Writer::default()
    }

    /// A writer that also writes message content.
    pub fn with_content() -> Writer {
        Writer {
            content: true,
            ..Writer::default()
        }
    }

    /// This writer, writing self-contained (version-1) records instead of the compact profile.
    pub fn expanded(mut self) -> Writer {
        self.expanded = true;
        self
    }

    /// The `runEnd` record of `run`, if it was named; its state is dropped.
    pub fn end_run(&mut self, run: &Run) -> Option<RunEnd> {
        let i = self.runs.iter().position(|(r, _, _)| r.same_run(run))?;
        let (_, name, _) = self.runs.remove(i);
        self.tables.remove(&name);
        Some(RunEnd { run: name })
    }

    fn names(&mut self, run: Option<&Run>) -> (String, String) {
        let i = match run.and_then(|r| self.runs.iter().position(|(x, _, _)| x.same_run(r))) {
            Some(i) => i,
            None => {
                self.named += 1;
                let r = run.cloned().unwrap_or_default();
                self.runs.push((r, format!("run-{}", self.named), 0));
                self.runs.len() - 1
            }
        };
        let (_, name, calls) = &mut self.runs[i];
        *calls += 1;
        (name.clone(), format!("call-{calls}"))
    }

    /// One entry, measured by `policy`'s estimator.
    pub fn entry(&self, e: &Entry, policy: &Policy) -> TraceEntry {
        let m = e.message();
        let mut t = TraceEntry {
            id: e.id().as_str().to_owned(),
            kind: kind_input(e.kind()),
            role: None,
            author: m.author.clone(),
            size: Some(policy.estimator().estimate(e)),
            text: None,
            parts: None,
            segment: None,
            digest: None,
            calls: None,
            results: None,
            reference: None,
        };
        let segment = e.recoverable_segment();
        if segment.is_none() {
            t.role = Some(m.role.clone());
        }
        if self.content {
            match segment {
                Some(s) => {
                    t.segment = Some(SegmentInput {
                        reference: Some(s.reference.to_string()),
                        body: s.body.clone(),
                    })
                }
                None => t.parts = Some(m.parts.iter().map(part).collect()),
            }
            return t;
        }
        t.digest = Some(Digest::of(&format!("{m:?}")).to_hex());
        match e.kind() {
            EntryKind::RecoverableContextSegment | EntryKind::ArtifactReference => {
                t.reference = e.artifact_reference_digest().map(|d| d.to_hex());
            }
            EntryKind::ToolExchange => {
                let (calls, results) = (tool_calls(m), tool_results(m));
                t.calls = (!calls.is_empty()).then_some(calls);
                t.results = (!results.is_empty()).then_some(results);
            }
            _ => {}
        }
        t
    }

    /// The trace record of one call.
    pub fn record(&mut self, c: &CallTrace) -> CallRecord {
        let (run, call) = self.names(c.run.as_ref());
        let mut rec = if self.expanded {
            self.expanded_record(c)
        } else {
            let mut table = self.tables.remove(&run).unwrap_or_default();
            let rec = self.compact_record(c, &mut table);
            self.tables.insert(run.clone(), table);
            rec
        };
        rec.run = run;
        rec.call = call;
        rec
    }

    /// The observed record (SPEC TRC-13, version 3) of one provider call of run `run`: the
    /// `history` the system held (its system prompt first, before any compaction) and the
    /// entries it `sent` (`None`: nothing was sent), judged against `policy`'s hard limit and
    /// retention; entries are measured by `policy`'s estimator (the record's estimator is
    /// `recorded` in its unit) and, in the compact profile, defined once per run.
    pub fn observed(
        &mut self,
        run: &str,
        call: &str,
        policy: &Policy,
        history: &[Entry],
        sent: Option<&[Entry]>,
        dispatch: Option<Dispatch>,
    ) -> ObservedRecord {
        let (defs, history, sent) = if self.expanded {
            let list = |es: &[Entry]| TraceEntries {
                entries: Some(es.iter().map(|e| self.entry(e, policy)).collect()),
                refs: None,
            };
            (None, list(history), sent.map(list))
        } else {
            let mut table = self.tables.remove(run).unwrap_or_default();
            let mut d = Defining {
                table: &mut table,
                defs: Vec::new(),
                ids: HashMap::new(),
            };
            let mut refs = |es: &[Entry]| {
                let ix: Vec<u32> = es
                    .iter()
                    .map(|e| d.index(e, policy, || self.entry(e, policy)))
                    .collect();
                TraceEntries {
                    entries: None,
                    refs: Some(compress(&ix)),
                }
            };
            let (h, s) = (refs(history), sent.map(refs));
            let defs = (!d.defs.is_empty()).then(|| Defs::from(d.defs));
            self.tables.insert(run.to_owned(), table);
            (defs, h, s)
        };
        ObservedRecord {
            record_type: None,
            run: run.to_owned(),
            call: call.to_owned(),
            policy: ObservedPolicy {
                hard_limit: policy.hard_limit(),
                recent_message_retention_count: policy.recent_message_retention_count(),
                estimator: EstimatorInput::Recorded(RecordedEstimatorInput {
                    unit: Some(Name(policy.estimator().unit())),
                }),
            },
            defs,
            history,
            sent,
            dispatch,
            note: None,
        }
    }

    /// The `runEnd` record of the run named `run` (observed records name their own runs); its
    /// entry table is dropped.
    pub fn end_named_run(&mut self, run: &str) -> RunEnd {
        self.tables.remove(run);
        RunEnd {
            run: run.to_owned(),
        }
    }

    /// Whether a capture repeats the previous one (written as a version only).
    fn repeats(prev: Option<&[Entry]>, s: &[Entry]) -> bool {
        prev.is_some_and(|p| {
            p.len() == s.len() && p.iter().zip(s).all(|(a, b)| a.ptr_eq(b) || a == b)
        })
    }

    /// A compact (version-2) record: entries defined once per run, referred to by index.
    fn compact_record(&self, c: &CallTrace, table: &mut Table) -> CallRecord {
        let policy = &c.policy;
        let mut d = Defining {
            table,
            defs: Vec::new(),
            ids: HashMap::new(),
        };
        let mut snapshots = Vec::with_capacity(c.snapshots.len());
        let mut prev: Option<&[Entry]> = None;
        for s in &c.snapshots {
            let refs = (!Self::repeats(prev, s.entries())).then(|| {
                let ix: Vec<u32> = s
                    .entries()
                    .iter()
                    .map(|e| d.index(e, policy, || self.entry(e, policy)))
                    .collect();
                compress(&ix)
            });
            snapshots.push(TraceSnapshot {
                version: s.version(),
                entries: None,
                refs,
            });
            prev = Some(s.entries());
        }
        let mut reducer = Vec::with_capacity(c.reducer.len());
        for r in &c.reducer {
            let request: Vec<u32> = r
                .request
                .iter()
                .map(|e| d.index(e, policy, || self.entry(e, policy)))
                .collect();
            let answer = match &r.answer {
                Ok(None) => ReducerAnswer::Nothing,
                Err(k) => ReducerAnswer::Error(k.name().to_owned()),
                Ok(Some(p)) => ReducerAnswer::Propose(
                    p.iter()
                        .zip(kept_positions(&r.request, p))
                        .map(|(e, kept)| match kept {
                            Some(k) => TraceProposalItem::KeepRef(request[k]),
                            None => TraceProposalItem::NewRef(NewRef {
                                new: d.index(e, policy, || self.entry(e, policy)),
                            }),
                        })
                        .collect(),
                ),
            };
            reducer.push(ReducerStep {
                attempt: r.attempt,
                request_ids: Vec::new(),
                request: Some(compress(&request)),
                answer,
            });
        }
        let result_refs = c.result.as_ref().map(|r| {
            let o = assembly_output(r);
            TraceResult {
                outcome: o.outcome,
                final_entry_ids: o.final_entry_ids.as_deref().map(|f| d.id_refs(f)),
                original_estimated_size: o.original_estimated_size,
                final_estimated_size: o.final_estimated_size,
                hard_limit: o.hard_limit,
                attempt_count: o.attempt_count,
                stages: o.stages,
                required_entry_ids: d.id_refs(&o.required_entry_ids),
                latest_snapshot_version: o.latest_snapshot_version,
                final_verification: o.final_verification.map(|v| TraceVerification {
                    outcome: v.outcome,
                    rejection_reasons: v.rejection_reasons,
                    missing_required_entry_ids: d.id_refs(&v.missing_required_entry_ids),
                    invalid_entry_ids: d.id_refs(&v.invalid_entry_ids),
                    preservation_only_fallback_entry_ids: d
                        .id_refs(&v.preservation_only_fallback_entry_ids),
                }),
            }
        });
        let mut rec = self.common(c);
        rec.defs = (!d.defs.is_empty()).then(|| Defs::from(d.defs));
        rec.snapshots = snapshots;
        rec.reducer = reducer;
        rec.result = None;
        rec.result_refs = result_refs;
        rec
    }

    /// A self-contained (version-1) record.
    fn expanded_record(&self, c: &CallTrace) -> CallRecord {
        let policy = &c.policy;
        let mut snapshots: Vec<TraceSnapshot> = Vec::with_capacity(c.snapshots.len());
        let mut prev: Option<&[Entry]> = None;
        for s in &c.snapshots {
            let same = Self::repeats(prev, s.entries());
            snapshots.push(TraceSnapshot {
                version: s.version(),
                entries: (!same)
                    .then(|| s.entries().iter().map(|e| self.entry(e, policy)).collect()),
                refs: None,
            });
            prev = Some(s.entries());
        }
        let reducer = c
            .reducer
            .iter()
            .map(|r| ReducerStep {
                attempt: r.attempt,
                request_ids: r
                    .request
                    .iter()
                    .map(|e| e.id().as_str().to_owned())
                    .collect(),
                request: None,
                answer: match &r.answer {
                    Ok(None) => ReducerAnswer::Nothing,
                    Err(k) => ReducerAnswer::Error(k.name().to_owned()),
                    Ok(Some(p)) => ReducerAnswer::Propose(
                        p.iter()
                            .zip(kept_positions(&r.request, p))
                            .map(|(e, kept)| {
                                if kept.is_some() {
                                    TraceProposalItem::Keep(e.id().as_str().to_owned())
                                } else {
                                    TraceProposalItem::New(Box::new(NewTraceEntry {
                                        new: self.entry(e, policy),
                                    }))
                                }
                            })
                            .collect(),
                    ),
                },
            })
            .collect();
        let mut rec = self.common(c);
        rec.snapshots = snapshots;
        rec.reducer = reducer;
        rec
    }

    /// The members both forms share (run and call names are filled in by [`Writer::record`]).
    fn common(&self, c: &CallTrace) -> CallRecord {
        let policy = &c.policy;
        CallRecord {
            record_type: None,
            run: String::new(),
            call: String::new(),
            admitted: c.lease.map(|l| l.0 + 1),
            policy: PolicyInput {
                hard_limit: policy.hard_limit(),
                trigger_margin: policy.trigger_margin(),
                recent_message_retention_count: policy.recent_message_retention_count(),
                maximum_compaction_attempts: policy.maximum_compaction_attempts(),
                preservation_label: Some(policy.preservation_label().to_owned()),
                preservation_version: policy.preservation_version(),
                estimator: Some(EstimatorInput::Recorded(RecordedEstimatorInput {
                    unit: Some(Name(policy.estimator().unit())),
                })),
            },
            defs: None,
            snapshots: Vec::new(),
            reducer: Vec::new(),
            cancel: c.cancel.map(|p| match p {
                CancelPoint::Before => "before".to_owned(),
                CancelPoint::Capture(k) => format!("capture:{k}"),
                CancelPoint::Reducer(k) => format!("reducer:{k}"),
                CancelPoint::Unknown => "unknown".to_owned(),
            }),
            result: c.result.as_ref().map(assembly_output),
            result_refs: None,
            diagnostics: c.diagnostics.as_deref().map(diagnostics_output),
            error: c.error.map(|(k, p)| TraceError {
                kind: k.name().to_owned(),
                phase: match p {
                    NodePhase::Gate => Phase::Gate,
                    NodePhase::Prepare => Phase::Prepare,
                    NodePhase::Assembly => Phase::Assembly,
                    NodePhase::Terminated => Phase::Terminated,
                    NodePhase::Provider => Phase::Provider,
                    NodePhase::Commit => Phase::Commit,
                },
            }),
            events: c.events.as_ref().map(|evs| evs.iter().map(event).collect()),
            lease: Some(TraceLease {
                settled: match c.settlement {
                    NodeSettlement::Committed => Settlement::Committed,
                    NodeSettlement::Released => Settlement::Released,
                    NodeSettlement::None => Settlement::None,
                },
                forwarded: c.forwarded.iter().map(|d| d.to_hex()).collect(),
            }),
            streamed: c.streamed.map(|s| match s {
                NodeStreamEnd::Completed => StreamEnd::Completed,
                NodeStreamEnd::Failed => StreamEnd::Failed,
                NodeStreamEnd::Abandoned => StreamEnd::Abandoned,
            }),
        }
    }
}

/// A message part in the wire's part shape (`docs/WIRE.md`, "Parts"), exact for every value.
pub fn part(p: &Part) -> PartInput {
    match p {
        Part::Text(t) => PartInput::Text(t.clone()),
        Part::Call(c) => PartInput::Call(CallInput {
            call_id: c.call_id.clone(),
            name: c.name.clone(),
            arguments: c.arguments.as_ref().map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), value_json(v)))
                    .collect::<BTreeMap<_, _>>()
            }),
            informational_only: c.informational_only,
        }),
        Part::Result(r) => PartInput::Result(ResultInput {
            call_id: r.call_id.clone(),
            value: value_json(&r.value),
        }),
        Part::Block(b) => PartInput::Block(BlockInput {
            kind: Name(b.kind),
            block_type: b.block_type.clone(),
            json: serde_json::from_str(&b.json).unwrap_or(Json::Null),
            tokens: b.tokens,
        }),
    }
}

/// The JSON image of a progress event (docs/TRACE.md): enum names, numbers and the diagnostics
/// record, nothing else (SPEC EVT-6).
pub fn event(e: &CompactionEvent) -> TraceEvent {
    let env = e.envelope();
    let mut t = TraceEvent {
        kind: EventKind::Started,
        assembly_id: env.assembly_id.to_string(),
        sequence: env.sequence_number,
        measurement_unit: None,
        hard_limit: None,
        trigger_threshold: None,
        diagnostics: e.diagnostics().map(|d| diagnostics_output(d)),
    };
    match e {
        CompactionEvent::Started(s) => {
            t.measurement_unit = Some(s.measurement_unit.name().to_owned());
            t.hard_limit = Some(s.hard_limit);
            t.trigger_threshold = Some(s.trigger_threshold);
        }
        CompactionEvent::Completed(_) => t.kind = EventKind::Completed,
        CompactionEvent::Terminated(_) => t.kind = EventKind::Terminated,
        CompactionEvent::Composed(_) => t.kind = EventKind::Composed,
    }
    t
}

/// For each proposed entry, the position of the request entry it keeps (the same id and the
/// same entry), or `None` for a new entry. One id index per reducer step, so recording stays
/// linear in the request and the proposal (request ids are unique: reducers see verified
/// snapshots; the first of a repeated id would win).
fn kept_positions(request: &[Entry], proposal: &[Entry]) -> Vec<Option<usize>> {
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(request.len());
    for (i, q) in request.iter().enumerate() {
        by_id.entry(q.id().as_str()).or_insert(i);
    }
    proposal
        .iter()
        .map(|e| {
            by_id.get(e.id().as_str()).copied().filter(|&k| {
                let q = &request[k];
                q.ptr_eq(e) || q == e
            })
        })
        .collect()
}
