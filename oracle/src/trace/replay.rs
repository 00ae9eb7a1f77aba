//! Rebuilding a recorded call as vocabulary and replaying it through an implementation
//! (SPEC TRC-1).
//!
//! The recorded snapshots become a schedule (SPEC SNAP-5, as the model's `ScriptedProvider`
//! plays one): the k-th capture of the replay sees the k-th recorded capture. The recorded reducer answers become a replay
//! reducer that plays them in order (kept ids are looked up in the replay's own request, exactly
//! like the wire's scripted reducer). The assembler of the chosen implementation (the spec by
//! default, `--engine` for the engine) then answers, and its result and diagnostics are compared
//! with the recorded ones.
//!
//! Redacted entries (no content) are rebuilt by [`super::entries`] with the same structure and
//! the content digest as their only text, so the verifier's structural equality (SPEC VER-2)
//! compares digests. Their sizes come from the trace through [`RecordedSizes`], an estimator keyed by (id, content key):
//! a host-defined unit table per call.

use std::collections::HashMap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use hybrid_compaction_model::assembly::{
    ContractViolation, Reducer, ReducerError, ReductionRequest,
};

use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId};
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::estimator::{Estimator, MeasurementUnit};
use hybrid_compaction_model::message::Part;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::reducers::{CancelAtCall, ProposalItem, ScriptStep, ScriptedReducer};
use hybrid_compaction_model::snapshot::ScriptedProvider;

use super::compact::Resolved;
pub use super::entries::PrepareError;
use super::entries::{entry_at, unreadable};
use super::format::{CallRecord, Phase, ReducerAnswer, TraceEntry, TraceProposalItem};
use crate::wire::convert::{self, CancelPoint};
use crate::wire::error::CaseError;
use crate::wire::error::{error_output, ErrorOutput};
use crate::wire::input::{ConstantEstimatorInput, EstimatorInput};
use crate::wire::output::{assembly_output, diagnostics_output, AssemblyOutput, DiagnosticsOutput};
use hybrid_compaction_model::seam::Implementation;

/// The content key of an entry: the recorded digest for redacted entries (their only text), the
/// message text for entries with content.
pub fn content_key(entry: &Entry) -> std::borrow::Cow<'_, str> {
    match entry.message().parts.as_slice() {
        [Part::Text(t), ..] => std::borrow::Cow::Borrowed(t.as_str()),
        _ => std::borrow::Cow::Owned(entry.message().text_content()),
    }
}

/// Recorded per-entry sizes (the `recorded` estimator): keyed by entry id, then by the entry
/// itself (the same shared value, or equal content). Most ids have one entry; the few with
/// several (other content under the same id) are kept in `more`. The replay measures the very
/// values it was given (shared handles), so `by_handle` answers first, keyed by the address of
/// the entry's id text (one allocation per built entry, shared by its clones) and confirmed by
/// [`Entry::ptr_eq`].
#[derive(Debug, Default)]
pub struct RecordedSizes {
    unit: Option<MeasurementUnit>,
    by_handle: FxHashMap<usize, (Entry, i32)>,
    by_id: FxHashMap<EntryId, (Entry, i32)>,
    more: Vec<(Entry, i32)>,
}

/// The address of an entry's id text: equal for an entry and its clones.
fn handle(e: &Entry) -> usize {
    e.id().as_str().as_ptr() as usize
}

/// The same entry: one shared value, or equal content keys.
fn same(a: &Entry, b: &Entry) -> bool {
    a.ptr_eq(b) || content_key(a) == content_key(b)
}

impl RecordedSizes {
    fn insert(&mut self, entry: &Entry, size: i32) -> Result<(), PrepareError> {
        let found = match self.by_handle.get(&handle(entry)) {
            Some((e, s)) if e.ptr_eq(entry) => Some(*s),
            _ => self.find_or_insert(entry, size),
        };
        match found {
            Some(s) if s != size => Err(PrepareError::Inconsistent(format!(
                "entry {:?} is recorded with sizes {s} and {size} for the same content (an estimator must be pure, SPEC ASM-15)",
                entry.id().as_str()
            ))),
            _ => Ok(()),
        }
    }

    /// The size recorded for the same entry, or `None` after recording `size` for it.
    fn find_or_insert(&mut self, entry: &Entry, size: i32) -> Option<i32> {
        self.by_handle.insert(handle(entry), (entry.clone(), size));
        let found = match self.by_id.get(entry.id()) {
            None => {
                self.by_id.insert(entry.id().clone(), (entry.clone(), size));
                return None;
            }
            Some((e, s)) if same(e, entry) => Some(*s),
            Some(_) => self
                .more
                .iter()
                .find(|(e, _)| e.id() == entry.id() && same(e, entry))
                .map(|(_, s)| *s),
        };
        if found.is_none() {
            self.more.push((entry.clone(), size));
        }
        found
    }
}

impl Estimator for RecordedSizes {
    fn unit(&self) -> MeasurementUnit {
        self.unit.unwrap_or(MeasurementUnit::HostDefinedUnits)
    }

    fn estimate(&self, entry: &Entry) -> i32 {
        if let Some((e, s)) = self.by_handle.get(&handle(entry)) {
            if e.ptr_eq(entry) {
                return *s;
            }
        }
        match self.by_id.get(entry.id()) {
            Some((e, s)) if same(e, entry) => *s,
            Some(_) => self
                .more
                .iter()
                .find(|(e, _)| e.id() == entry.id() && same(e, entry))
                .map_or(0, |(_, s)| *s),
            None => 0,
        }
    }
}

/// A recorded call rebuilt as vocabulary.
#[derive(Debug)]
pub struct Prepared {
    /// The policy (with the recorded-sizes estimator for redacted traces).
    pub policy: Policy,
    /// The snapshot schedule, one step per recorded capture.
    pub steps: Vec<(i64, Vec<Entry>)>,
    /// Every new entry of every proposal, in order.
    pub news: Vec<Entry>,
    reducer: Vec<ScriptStep>,
    /// The cancellation point; `Err(())` when it is unknown (no replay).
    pub cancel: Result<Option<CancelPoint>, ()>,
}

/// A policy the wire format or the SPEC refuses (SPEC POL-2): the trace is unreadable.
fn policy_unreadable(e: CaseError) -> PrepareError {
    match e {
        CaseError::Wire(w) => PrepareError::Unreadable(w.to_string()),
        CaseError::Answer(a) => PrepareError::Unreadable(format!("$.policy: {}", a.message)),
    }
}

/// Builds a call's version-1 entries, each distinct one once: an entry recorded again (in a
/// later snapshot or a proposal) with the same id and the same recorded form shares the first
/// build.
#[derive(Default)]
struct Builder<'r> {
    built: HashMap<&'r str, Vec<(&'r TraceEntry, Entry)>>,
}

impl<'r> Builder<'r> {
    fn build(
        &mut self,
        t: &'r TraceEntry,
        path: impl Fn() -> String,
    ) -> Result<Entry, PrepareError> {
        let slot = self.built.entry(t.id.as_str()).or_default();
        if let Some((_, e)) = slot.iter().find(|(s, _)| *s == t) {
            return Ok(e.clone());
        }
        let e = entry_at(t, path)?;
        slot.push((t, e.clone()));
        Ok(e)
    }
}

/// Rebuilds a call record (paths in messages are relative to the record, `$`); `resolved`
/// holds the entries of its version-2 table references ([`super::compact`]).
pub fn prepare(
    rec: &CallRecord,
    resolved: &mut Resolved,
    imp: &dyn Implementation,
) -> Result<Prepared, PrepareError> {
    let recorded = matches!(rec.policy.estimator, Some(EstimatorInput::Recorded(_)));
    let mut sizes = RecordedSizes::default();
    if recorded {
        // Most entries of a call are those of its largest snapshot: size the maps once.
        let n = resolved
            .snapshots
            .iter()
            .flatten()
            .map(Vec::len)
            .chain(
                rec.snapshots
                    .iter()
                    .filter_map(|s| s.entries.as_ref().map(Vec::len)),
            )
            .max()
            .unwrap_or(0);
        sizes.by_handle.reserve(n);
        sizes.by_id.reserve(n);
    }
    let mut sized = |e: &Entry, size: Option<i32>, path: &dyn Fn() -> String| {
        if recorded {
            match size {
                Some(s) => sizes.insert(e, s)?,
                None => {
                    return Err(PrepareError::Unreadable(format!(
                        "{}: the `recorded` estimator needs a `size` on every entry",
                        path()
                    )))
                }
            }
        }
        Ok(())
    };
    let mut builder = Builder::default();
    let mut steps: Vec<(i64, Vec<Entry>)> = Vec::with_capacity(rec.snapshots.len());
    for (i, s) in rec.snapshots.iter().enumerate() {
        let refs = resolved.snapshots.get_mut(i).and_then(Option::take);
        let es = match (&s.entries, refs) {
            (_, Some(ds)) => {
                let mut es = Vec::with_capacity(ds.len());
                for (j, (e, size)) in ds.into_iter().enumerate() {
                    sized(&e, size, &|| format!("$.snapshots[{i}].refs[{j}]"))?;
                    es.push(e);
                }
                es
            }
            (Some(ts), None) => {
                let mut es = Vec::with_capacity(ts.len());
                for (j, t) in ts.iter().enumerate() {
                    let p = || format!("$.snapshots[{i}].entries[{j}]");
                    let e = builder.build(t, p)?;
                    sized(&e, t.size, &p)?;
                    es.push(e);
                }
                es
            }
            (None, None) => match steps.last() {
                Some((_, prev)) => prev.clone(),
                None => {
                    return Err(PrepareError::Unreadable(format!(
                        "$.snapshots[{i}]: the first snapshot needs `entries`"
                    )))
                }
            },
        };
        steps.push((s.version, es));
    }
    let mut news = Vec::new();
    let mut reducer = Vec::with_capacity(rec.reducer.len());
    for (i, st) in rec.reducer.iter().enumerate() {
        let path = format!("$.reducer[{i}].answer");
        let refs = resolved.items.get(i);
        reducer.push(match &st.answer {
            ReducerAnswer::Nothing => ScriptStep::Nothing,
            ReducerAnswer::Error(k) if k == "ReducerContract" => ScriptStep::Contract(ContractViolation::NullResult),
            ReducerAnswer::Error(k) if k == "ReducerFailed" => ScriptStep::Fail("recorded failure".to_owned()),
            ReducerAnswer::Error(k) => {
                return Err(PrepareError::Unreadable(format!(
                    "{path}.error: expected ReducerFailed or ReducerContract, got {k:?}"
                )))
            }
            ReducerAnswer::Propose(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (j, item) in items.iter().enumerate() {
                    let def = refs.and_then(|r| r.get(j)).and_then(Option::as_ref);
                    out.push(match (item, def) {
                        (TraceProposalItem::Keep(id), _) => ProposalItem::Keep(id.clone()),
                        (TraceProposalItem::KeepRef(_), Some(d)) => {
                            ProposalItem::Keep(d.entry.id().as_str().to_owned())
                        }
                        (TraceProposalItem::New(n), _) => {
                            let p = || format!("{path}.propose[{j}].new");
                            let e = builder.build(&n.new, p)?;
                            sized(&e, n.new.size, &p)?;
                            news.push(e.clone());
                            ProposalItem::New(e)
                        }
                        (TraceProposalItem::NewRef(_), Some(d)) => {
                            sized(&d.entry, d.size(), &|| format!("{path}.propose[{j}].new"))?;
                            news.push(d.entry.clone());
                            ProposalItem::New(d.entry.clone())
                        }
                        (TraceProposalItem::KeepRef(_) | TraceProposalItem::NewRef(_), None) => {
                            return Err(PrepareError::Unreadable(format!(
                                "{path}.propose[{j}]: a table index in a record that was not resolved against its run's table"
                            )))
                        }
                    });
                }
                ScriptStep::Propose(out)
            }
        });
    }
    let policy = match &rec.policy.estimator {
        Some(EstimatorInput::Recorded(r)) => {
            sizes.unit = r.unit.map(|u| u.0);
            let mut p = rec.policy.clone();
            p.estimator = Some(EstimatorInput::Constant(ConstantEstimatorInput { size: 0 }));
            convert::policy(Some(&p), imp, "$.policy")
                .map_err(policy_unreadable)?
                .with_estimator(Arc::new(std::mem::take(&mut sizes)))
        }
        _ => convert::policy(Some(&rec.policy), imp, "$.policy").map_err(policy_unreadable)?,
    };
    let cancel = match rec.cancel.as_deref() {
        Some("unknown") => Err(()),
        other => Ok(
            convert::cancel_point(other.map(str::to_owned).as_ref(), "$.cancel")
                .map_err(|e| unreadable("$.cancel", e))?,
        ),
    };
    Ok(Prepared {
        policy,
        steps,
        news,
        reducer,
        cancel,
    })
}

/// What the SPEC answers for a recorded call: the assembly result and its diagnostics, or the
/// error (SPEC ERR-1); when the diagnostics fail after a successful assembly, both the result
/// and that error. Also the facts the answer rests on: how many captures the SPEC's assembler
/// made and the attempt number of each reducer invocation (SPEC TRC-1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    /// The assembly result.
    pub assembly: Option<AssemblyOutput>,
    /// Its diagnostics.
    pub diagnostics: Option<DiagnosticsOutput>,
    /// The error.
    pub error: Option<ErrorOutput>,
    /// Captures the assembler made.
    pub captures: usize,
    /// The 1-based attempt number of each reducer invocation, in order.
    pub attempts: Vec<i32>,
    /// The token was cancelled when the assembler returned a result: the node observes it next
    /// (SPEC NODE-3 step 8) and fails with `Cancelled`.
    pub cancelled_after: bool,
}

/// A reducer that notes the attempt number of every request it forwards.
struct Noting<R> {
    inner: R,
    attempts: Vec<i32>,
}

impl<R: Reducer> Reducer for Noting<R> {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        self.attempts.push(request.attempt_number);
        self.inner.reduce(request)
    }
}

/// What the implementation answers for the recorded inputs: the assembly and diagnostics, or
/// the error (SPEC ERR-1). Diagnostics are built only after a successful assembly.
pub fn answer(prep: &Prepared, imp: &dyn Implementation) -> Answer {
    let point = prep.cancel.ok().flatten();
    let token = match point {
        Some(CancelPoint::Before) => CancellationToken::cancelled(),
        _ => CancellationToken::new(),
    };
    let mut provider = ScriptedProvider::new(prep.steps.clone());
    if let Some(CancelPoint::Capture(k)) = point {
        provider = provider.cancel_at_capture(k, token.clone());
    }
    let script = ScriptedReducer::new(prep.reducer.clone());
    let mut reducer = Noting {
        inner: match point {
            Some(CancelPoint::Reducer(k)) => CancelAtCall::at(script, k, token.clone()),
            _ => CancelAtCall::never(script),
        },
        attempts: Vec::new(),
    };
    let assembled = imp.assemble(&prep.policy, &mut provider, &mut reducer, &token);
    let mut out = Answer {
        captures: provider.captures(),
        attempts: reducer.attempts,
        cancelled_after: assembled.is_ok() && token.is_cancelled(),
        ..Answer::default()
    };
    let result = match assembled {
        Ok(r) => r,
        Err(e) => {
            out.error = Some(error_output(&e));
            return out;
        }
    };
    out.assembly = Some(assembly_output(&result));
    match imp.diagnostics(&result, &prep.policy) {
        Ok(d) => out.diagnostics = Some(diagnostics_output(&d)),
        Err(e) => out.error = Some(error_output(&e)),
    }
    out
}

impl Answer {
    /// The error the node raises for this answer and where (SPEC NODE-3, NODE-4): the
    /// assembler's error; else `Cancelled` when the token was cancelled by then (step 8); else a
    /// diagnostics error (step 9); else a termination's `InvalidOperation` (step 10); else none.
    pub fn expected_error(&self) -> Option<(ErrorKind, Phase)> {
        let failed = |e: &ErrorOutput| Some((e.kind.0, Phase::Assembly));
        match (&self.assembly, &self.error) {
            (None, Some(e)) => failed(e),
            (Some(_), _) if self.cancelled_after => Some((ErrorKind::Cancelled, Phase::Assembly)),
            (Some(_), Some(e)) => failed(e),
            (Some(a), None) if !a.outcome.0.is_success() => {
                Some((ErrorKind::InvalidOperation, Phase::Terminated))
            }
            _ => None,
        }
    }

    /// The diagnostics the node records (built only when it reaches step 9).
    pub fn recorded_diagnostics(&self) -> Option<&DiagnosticsOutput> {
        self.diagnostics.as_ref().filter(|_| !self.cancelled_after)
    }
}
