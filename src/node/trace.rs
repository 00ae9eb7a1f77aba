//! The trace observer seam (SPEC TRC; `docs/TRACE.md`): what the node records about each
//! provider call so that `hybrid-compaction check` can judge it.
//!
//! A node built with [`super::CompactionNode::with_trace_observer`] hands one [`CallTrace`] per
//! [`super::CompactionNode::call`] to its [`TraceObserver`], after the call has ended (its lease
//! settled). Without an observer nothing is recorded and nothing changes: every hook is behind an
//! `Option` that is `None`.
//!
//! The records are plain Rust values (entries are shared handles, so recording copies no
//! content). Turning them into the JSON trace format, and deciding whether content is written
//! or only digests and sizes, is the trace crate's job (`hybrid_compaction_trace::Writer`, which
//! a host links without the oracle): the node does no serialization of its own.
//!
//! What is recorded, and where it comes from:
//! * the snapshots the assembler captured, *after* lease filtering (SPEC LSE-8), with their
//!   effective versions, through a recording wrapper around the call's filtering provider;
//! * every reducer request and its answer (entry level, after the bridge, SPEC BRG-1);
//! * where cancellation was first observed: before assembly, during the k-th capture or the
//!   k-th reducer invocation, or elsewhere ([`CancelPoint::Unknown`]);
//! * the assembly result, the diagnostics, the events as emitted (only with a reporter, SPEC
//!   EVT-1), the error and the phase it happened in, the lease settlement and the forwarded
//!   digests.
//!
//! * for a streaming call ([`super::CompactionNode::call_streaming`]), how its response stream
//!   ended ([`StreamEnd`]): the record is handed over when the stream settles the lease (read
//!   to its end, an error update, or dropped early), not when `call_streaming` returns.

use std::cell::Cell;
use std::sync::Arc;

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::assembly::{
    AssemblyError, AssemblyResult, Reducer, ReducerError, ReductionRequest,
};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::diagnostics::Diagnostics;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::snapshot::{Snapshot, SnapshotError, SnapshotProvider};

use super::call::NodeError;
use super::events::CompactionEvent;
use crate::engine::assemble::Assembler;
use crate::lease::{LeaseId, Run};

/// Receives one record per provider call (SPEC TRC). Called on the calling thread after the call
/// ended; must not block for long.
pub trait TraceObserver: Send + Sync {
    /// Receives the record of one call.
    fn call(&self, record: CallTrace);
}

/// Where cancellation was first observed (the wire's cancellation points, `docs/WIRE.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelPoint {
    /// Already cancelled when assembly started.
    Before,
    /// Cancelled during the k-th capture (0-based).
    Capture(usize),
    /// Cancelled during the k-th reducer invocation (0-based).
    Reducer(usize),
    /// Cancelled at a moment no hook observed (the call cannot be replayed exactly).
    Unknown,
}

/// Where a call failed (SPEC NODE-3; decides which events the SPEC allows, EVT-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Entering the run's gate (SPEC LSE-7).
    Gate,
    /// NODE-3 steps 1-5, before `Started`.
    Prepare,
    /// NODE-3 steps 7-9, after `Started`.
    Assembly,
    /// A termination outcome (SPEC NODE-4).
    Terminated,
    /// The provider failed (SPEC NODE-5).
    Provider,
    /// Committing the lease failed after the provider succeeded (SPEC NODE-5).
    Commit,
}

/// How the call's lease ended (SPEC NODE-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement {
    /// Committed with the forwarded digests.
    Committed,
    /// Released.
    Released,
    /// No lease was taken.
    None,
}

/// How a streamed response ended (SPEC NODE-2, NODE-5: only a stream read to its end commits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// Read to its end (zero updates count).
    Completed,
    /// The provider failed: starting the stream, or an error update.
    Failed,
    /// Dropped before its end.
    Abandoned,
}

/// One reducer invocation: the request and the answer (SPEC ASM-4).
#[derive(Debug, Clone)]
pub struct ReducerCall {
    /// The 1-based attempt number.
    pub attempt: i32,
    /// The request entries.
    pub request: Vec<Entry>,
    /// The proposal, `Ok(None)` for "nothing", or the error's kind.
    pub answer: Result<Option<Vec<Entry>>, ErrorKind>,
}

/// Everything recorded about one provider call.
#[derive(Debug, Clone)]
pub struct CallTrace {
    /// The run the call belonged to (compare with [`Run::same_run`]).
    pub run: Option<Run>,
    /// The lease the run's gate handed the call (`None`: the gate refused it). Leases are the
    /// run's admission counter (SPEC LSE-7), so they order the calls of a run as the gate
    /// admitted them, whatever order their records are written in.
    pub lease: Option<LeaseId>,
    /// The policy in force.
    pub policy: Policy,
    /// The snapshots the assembler captured, in order (lease-filtered, effective versions).
    pub snapshots: Vec<Snapshot>,
    /// The reducer invocations, in order.
    pub reducer: Vec<ReducerCall>,
    /// Where cancellation was first observed, if it was.
    pub cancel: Option<CancelPoint>,
    /// The assembler's result, if it returned one.
    pub result: Option<AssemblyResult>,
    /// The diagnostics, if they were built.
    pub diagnostics: Option<Arc<Diagnostics>>,
    /// The events, in emission order; `None` when the node has no reporter (SPEC EVT-1).
    pub events: Option<Vec<CompactionEvent>>,
    /// The error's kind and phase, if the call failed.
    pub error: Option<(ErrorKind, Phase)>,
    /// The lease settlement.
    pub settlement: Settlement,
    /// The digests committed as delivered.
    pub forwarded: Vec<Digest>,
    /// A streaming call that dispatched: how its stream ended.
    pub streamed: Option<StreamEnd>,
}

/// The recorder of one call in progress (node-internal).
pub(super) struct Recorder {
    trace: CallTrace,
    cancel: CancellationToken,
    started: bool,
}

impl Recorder {
    /// A recorder if `observer` is present.
    pub(super) fn start(
        observer: Option<&Arc<dyn TraceObserver>>,
        policy: &Policy,
        cancel: &CancellationToken,
        reporting: bool,
    ) -> Option<Recorder> {
        observer.map(|_| Recorder {
            trace: CallTrace {
                run: None,
                lease: None,
                policy: policy.clone(),
                snapshots: Vec::new(),
                reducer: Vec::new(),
                cancel: None,
                result: None,
                diagnostics: None,
                events: reporting.then(Vec::new),
                error: None,
                settlement: Settlement::None,
                forwarded: Vec::new(),
                streamed: None,
            },
            cancel: cancel.clone(),
            started: false,
        })
    }

    /// The run the call entered.
    pub(super) fn run(&mut self, run: Option<&Run>) {
        self.trace.run = run.cloned();
    }

    /// The attempt drew its AssemblyId (NODE-3 step 6), with or without a reporter.
    pub(super) fn admitted(&mut self, lease: LeaseId) {
        self.trace.lease = Some(lease);
    }

    pub(super) fn began(&mut self) {
        self.started = true;
    }

    /// An event was emitted.
    pub(super) fn event(&mut self, event: &CompactionEvent) {
        if let Some(evs) = self.trace.events.as_mut() {
            evs.push(event.clone());
        }
    }

    /// The diagnostics were built.
    pub(super) fn diagnostics(&mut self, d: &Arc<Diagnostics>) {
        self.trace.diagnostics = Some(Arc::clone(d));
    }

    /// Runs the assembler through recording wrappers of the provider and the reducer.
    pub(super) fn assemble(
        &mut self,
        assembler: &mut Assembler,
        policy: &Policy,
        provider: &mut dyn SnapshotProvider,
        reducer: &mut dyn Reducer,
    ) -> Result<AssemblyResult, AssemblyError> {
        let cancel = self.cancel.clone();
        let point = Cell::new(cancel.is_cancelled().then_some(CancelPoint::Before));
        let mut snapshots = Vec::new();
        let mut p = RecordingProvider {
            inner: provider,
            snapshots: &mut snapshots,
            point: &point,
            cancel: &cancel,
        };
        let mut r = RecordingReducer {
            inner: reducer,
            calls: Vec::new(),
            point: &point,
            cancel: &cancel,
        };
        let result = assembler.assemble(policy, &mut p, &mut r, &cancel);
        self.trace.reducer = r.calls;
        self.trace.snapshots = snapshots;
        self.trace.cancel = point.get();
        match &result {
            Ok(res) => self.trace.result = Some(res.clone()),
            Err(AssemblyError::Cancelled) if self.trace.cancel.is_none() => {
                self.trace.cancel = Some(CancelPoint::Unknown);
            }
            Err(_) => {}
        }
        result
    }

    /// A streaming call dispatched and its stream ended this way.
    pub(super) fn streamed(&mut self, end: StreamEnd) {
        self.trace.streamed = Some(end);
    }

    /// The call ended (`Ok`: committed with these forwarded digests): settle the record and
    /// hand it to `observer`.
    pub(super) fn finish(
        mut self,
        observer: Option<&Arc<dyn TraceObserver>>,
        outcome: Result<&[Digest], &NodeError>,
    ) {
        let Some(observer) = observer else { return };
        let t = &mut self.trace;
        match outcome {
            Ok(forwarded) => {
                t.settlement = Settlement::Committed;
                t.forwarded = forwarded.to_vec();
            }
            Err(_) if t.streamed == Some(StreamEnd::Abandoned) => {
                t.settlement = Settlement::Released;
            }
            Err(e) => {
                let phase = match e {
                    NodeError::Lease(_) if self.started => Phase::Commit,
                    NodeError::Lease(_) => Phase::Gate,
                    NodeError::Terminated(_) => Phase::Terminated,
                    NodeError::Provider(_) => Phase::Provider,
                    _ if self.started => Phase::Assembly,
                    _ => Phase::Prepare,
                };
                t.settlement = match phase {
                    Phase::Gate => Settlement::None,
                    // A failed commit settles nothing it can report (SPEC NODE-5, LSE-5).
                    Phase::Commit => Settlement::None,
                    _ => Settlement::Released,
                };
                t.error = Some((e.kind(), phase));
            }
        }
        observer.call(self.trace);
    }
}

/// Notes `point` as the cancellation point if the token flipped during `f`, unless one is noted.
fn observe<T>(
    cancel: &CancellationToken,
    point: &Cell<Option<CancelPoint>>,
    here: CancelPoint,
    f: impl FnOnce() -> T,
) -> T {
    let before = cancel.is_cancelled();
    let out = f();
    if !before && cancel.is_cancelled() && point.get().is_none() {
        point.set(Some(here));
    }
    out
}

/// Records every capture and notes a cancellation that happened during one.
struct RecordingProvider<'a> {
    inner: &'a mut dyn SnapshotProvider,
    snapshots: &'a mut Vec<Snapshot>,
    point: &'a Cell<Option<CancelPoint>>,
    cancel: &'a CancellationToken,
}

impl SnapshotProvider for RecordingProvider<'_> {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        let here = CancelPoint::Capture(self.snapshots.len());
        let s = observe(self.cancel, self.point, here, || self.inner.capture())?;
        self.snapshots.push(s.clone());
        Ok(s)
    }
}

/// Records every reducer invocation and notes a cancellation that happened during one.
struct RecordingReducer<'a> {
    inner: &'a mut dyn Reducer,
    calls: Vec<ReducerCall>,
    point: &'a Cell<Option<CancelPoint>>,
    cancel: &'a CancellationToken,
}

impl Reducer for RecordingReducer<'_> {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        let here = CancelPoint::Reducer(self.calls.len());
        let answer = observe(self.cancel, self.point, here, || self.inner.reduce(request));
        self.calls.push(ReducerCall {
            attempt: request.attempt_number,
            request: request.entries.to_vec(),
            answer: match &answer {
                Ok(p) => Ok(p.clone()),
                Err(e) => Err(AssemblyError::from(e.clone()).kind()),
            },
        });
        answer
    }
}
