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

use std::collections::BTreeMap;
use std::sync::Mutex;

use hybrid_compaction::lease::Run;
use hybrid_compaction::node::{
    CallTrace, CancelPoint, CompactionEvent, Phase as NodePhase, Settlement as NodeSettlement,
    TraceObserver,
};
use hybrid_compaction_model::artifact::{ArtifactReference, Digest};
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::message::Part;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::value::Value;
use serde_json::Value as Json;

use super::format::{
    CallRecord, EventKind, Header, NewTraceEntry, Phase, ReducerAnswer, ReducerStep, RunEnd,
    Settlement, TraceEntry, TraceError, TraceEstimator, TraceEvent, TraceLease, TracePolicy,
    TraceProposalItem, TraceSnapshot, TraceToolCall, TraceToolResult, TRACE_VERSION,
};
use crate::wire::case::{CallInput, KindInput, PartInput, ResultInput, SegmentInput};
use crate::wire::convert;

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
    runs: Vec<(Run, String, usize)>,
    named: usize,
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

/// The artifact digest a result value carries, if it is a canonical reference (SPEC ENT-5.4).
fn result_reference(v: &Value) -> Option<Digest> {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::RawJson(r) => serde_json::from_str::<String>(r.as_str()).ok()?,
        _ => return None,
    };
    ArtifactReference::parse(&s).ok().map(|r| r.digest())
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

    /// The `runEnd` record of `run`, if it was named; its state is dropped.
    pub fn end_run(&mut self, run: &Run) -> Option<RunEnd> {
        let i = self.runs.iter().position(|(r, _, _)| r.same_run(run))?;
        let (_, name, _) = self.runs.remove(i);
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
                let calls: Vec<TraceToolCall> = m
                    .parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::Call(c) => Some(TraceToolCall {
                            call_id: c.call_id.clone(),
                            name: c.name.clone(),
                        }),
                        _ => None,
                    })
                    .collect();
                let results: Vec<TraceToolResult> = m
                    .parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::Result(r) => Some(TraceToolResult {
                            call_id: r.call_id.clone(),
                            reference: result_reference(&r.value).map(|d| d.to_hex()),
                        }),
                        _ => None,
                    })
                    .collect();
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
        let policy = &c.policy;
        let mut snapshots: Vec<TraceSnapshot> = Vec::with_capacity(c.snapshots.len());
        let mut prev: Option<&[Entry]> = None;
        for s in &c.snapshots {
            let same = prev.is_some_and(|p| {
                p.len() == s.entries().len()
                    && p.iter()
                        .zip(s.entries())
                        .all(|(a, b)| a.ptr_eq(b) || a == b)
            });
            snapshots.push(TraceSnapshot {
                version: s.version(),
                entries: (!same)
                    .then(|| s.entries().iter().map(|e| self.entry(e, policy)).collect()),
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
                answer: match &r.answer {
                    Ok(None) => ReducerAnswer::Nothing,
                    Err(k) => ReducerAnswer::Error(k.name().to_owned()),
                    Ok(Some(p)) => ReducerAnswer::Propose(
                        p.iter()
                            .map(|e| {
                                let kept = r
                                    .request
                                    .iter()
                                    .any(|q| q.id() == e.id() && (q.ptr_eq(e) || q == e));
                                if kept {
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
        CallRecord {
            record_type: None,
            run,
            call,
            policy: TracePolicy {
                hard_limit: policy.hard_limit(),
                trigger_margin: policy.trigger_margin(),
                recent_message_retention_count: policy.recent_message_retention_count(),
                maximum_compaction_attempts: policy.maximum_compaction_attempts(),
                preservation_label: policy.preservation_label().to_owned(),
                preservation_version: policy.preservation_version(),
                estimator: TraceEstimator::Recorded {
                    unit: Some(policy.estimator().unit().name().to_owned()),
                },
            },
            snapshots,
            reducer,
            cancel: c.cancel.map(|p| match p {
                CancelPoint::Before => "before".to_owned(),
                CancelPoint::Capture(k) => format!("capture:{k}"),
                CancelPoint::Reducer(k) => format!("reducer:{k}"),
                CancelPoint::Unknown => "unknown".to_owned(),
            }),
            result: c.result.as_ref().map(convert::assembly_output),
            diagnostics: c.diagnostics.as_deref().map(convert::diagnostics_output),
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
        }
    }
}

fn part(p: &Part) -> PartInput {
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
        diagnostics: e.diagnostics().map(|d| convert::diagnostics_output(d)),
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
