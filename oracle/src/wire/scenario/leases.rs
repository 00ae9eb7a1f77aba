//! The `leases` scenario's two worlds: the sequential specification (`hybrid_compaction_spec::
//! lease`: [`RunState`], [`Gate`], [`filter_capture`]) and the concurrent library
//! (`hybrid_compaction::lease`: [`Run`], [`RunScope`], [`CallSlot`], its filtering provider).
//!
//! Both answer the same [`LeaseWorld`] operations on flows, runs and calls named by index; the
//! driver ([`super::exec`]) owns every name and renders the outputs, so a difference between
//! the two answers is a difference between the implementations.
//!
//! Scopes: the specification's `Flow` owns its run, so forked flows (which share one run) are
//! modelled here with runs in a table and the same frames (`Began(previous)` / `Reused`); the
//! library world drives its [`RunScope`]s through the `replace` primitive the guards are built on.
//! A call that must wait at the gate (SPEC LSE-7) waits for real in the library world, on a
//! thread blocked in [`Run::enter`]; it is admitted when the holder leaves, or cancelled with
//! [`Run::cancel_and_wake`]. The driver allows one waiter per run, so admission is deterministic.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use hybrid_compaction::lease::{CallSlot, FilteringProvider, Run, RunScope};
use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::lease::{LeaseError, LeaseId, Revision};
use hybrid_compaction_model::snapshot::{Snapshot, SnapshotError, SnapshotProvider};
use hybrid_compaction_spec::lease::{filter_capture, CaptureRecord, Gate, GateStep, RunState};

/// What entering a gate did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entered {
    /// The call holds the gate with this lease.
    Admitted(LeaseId),
    /// Another call holds the gate; the call waits.
    Waiting,
}

/// A run's observable state: delivered digests, reservations, gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunView {
    /// The run's index (creation order).
    pub run: usize,
    /// Delivered digests.
    pub delivered: BTreeSet<Digest>,
    /// Reservations.
    pub reserved: BTreeMap<Digest, LeaseId>,
    /// Whether a call holds the gate.
    pub gate_occupied: bool,
}

/// The operations of a `leases` scenario. Flows and calls are indices the driver allocated in
/// order (flow 0 exists from the start); `begin` seeds the new run's counters (SPEC LSE-5 seam).
pub trait LeaseWorld {
    /// `BeginRun` (SPEC LSE-6).
    fn begin(&mut self, flow: usize, revisions: &[(Digest, Revision)]);
    /// `EnsureRunScope` (SPEC LSE-6).
    fn ensure(&mut self, flow: usize);
    /// Ends the innermost scope (SPEC LSE-6).
    fn end(&mut self, flow: usize);
    /// A new flow (index = number of flows) seeing `flow`'s active run.
    fn fork(&mut self, flow: usize);
    /// SPEC LSE-2.
    fn reserve(&mut self, flow: usize, d: Digest, lease: LeaseId) -> Result<bool, LeaseError>;
    /// SPEC LSE-3.
    fn complete(&mut self, flow: usize, lease: LeaseId, fwd: &[Digest]) -> Result<(), LeaseError>;
    /// SPEC LSE-4.
    fn release(&mut self, flow: usize, lease: LeaseId) -> Result<(), LeaseError>;
    /// SPEC LSE-5.
    fn revision(&mut self, flow: usize, d: Digest) -> Result<Revision, LeaseError>;
    /// SPEC LSE-7: call `call` (the next index) enters `flow`'s run gate.
    fn enter(&mut self, flow: usize, call: usize, cancelled: bool) -> Result<Entered, LeaseError>;
    /// SPEC LSE-7: cancels waiting call `call`; the answer of its wait.
    fn cancel_waiter(&mut self, call: usize) -> Result<Entered, LeaseError>;
    /// Commits (`Some(forwarded)`) or releases (`None`) admitted call `call`'s lease and leaves
    /// the gate (SPEC LSE-10); a waiter admitted as a consequence, with its lease.
    fn finish(
        &mut self,
        call: usize,
        forwarded: Option<&[Digest]>,
    ) -> (Result<(), LeaseError>, Option<(usize, LeaseId)>);
    /// Abandons admitted call `call` (SPEC LSE-10): as a release whose error nobody sees.
    fn abandon(&mut self, call: usize) -> Option<(usize, LeaseId)>;
    /// One capture of call `call`'s filtering provider (SPEC LSE-8).
    fn capture(&mut self, call: usize, inner: Snapshot) -> Result<Snapshot, SnapshotError>;
    /// The run of `flow`, if any.
    fn view(&self, flow: usize) -> Option<RunView>;
    /// The run a call entered.
    fn call_run(&self, call: usize) -> Option<RunView>;
    /// A digest's counter in `flow`'s run (0 without a run).
    fn peek_revision(&self, flow: usize, d: Digest) -> Revision;
    /// The same, in call `call`'s run.
    fn peek_call_revision(&self, call: usize, d: Digest) -> Revision;
}

// ---------------------------------------------------------------------------------------------
// The specification's world

#[derive(Debug, Clone)]
enum Frame<R> {
    Began(Option<R>),
    Reused,
}

#[derive(Debug, Default)]
struct SpecRun {
    state: RefCell<RunState>,
    gate: Gate,
    next_lease: u64,
    waiter: Option<usize>,
}

#[derive(Debug, Default)]
struct SpecFlow {
    current: Option<usize>,
    frames: Vec<Frame<usize>>,
}

#[derive(Debug)]
struct SpecCall {
    run: usize,
    lease: Option<LeaseId>,
    last: Option<CaptureRecord>,
}

/// The sequential specification's world.
#[derive(Debug)]
pub struct SpecLeases {
    runs: Vec<SpecRun>,
    flows: Vec<SpecFlow>,
    calls: Vec<SpecCall>,
}

impl Default for SpecLeases {
    fn default() -> SpecLeases {
        SpecLeases {
            runs: Vec::new(),
            flows: vec![SpecFlow::default()],
            calls: Vec::new(),
        }
    }
}

impl SpecLeases {
    /// The index the next entering call gets.
    pub fn next_call(&self) -> usize {
        self.calls.len()
    }

    fn run_of(&self, flow: usize) -> Result<usize, LeaseError> {
        self.flows[flow].current.ok_or(LeaseError::NoActiveRun)
    }

    fn new_lease(&mut self, run: usize) -> LeaseId {
        let r = &mut self.runs[run];
        let id = LeaseId(r.next_lease);
        r.next_lease += 1;
        id
    }

    fn view_run(&self, run: usize) -> RunView {
        let r = &self.runs[run];
        let state = r.state.borrow();
        RunView {
            run,
            delivered: state.delivered().clone(),
            reserved: state.reserved().clone(),
            gate_occupied: r.gate.is_occupied(),
        }
    }

    /// Leaves the gate of `run` and steps its waiter, if any (SPEC LSE-7).
    fn leave(&mut self, run: usize) -> Option<(usize, LeaseId)> {
        self.runs[run].gate.leave();
        let waiter = self.runs[run].waiter.take()?;
        match self.runs[run].gate.step(false) {
            Ok(GateStep::Admitted) => {
                let lease = self.new_lease(run);
                self.calls[waiter].lease = Some(lease);
                Some((waiter, lease))
            }
            _ => None,
        }
    }
}

impl LeaseWorld for SpecLeases {
    fn begin(&mut self, flow: usize, revisions: &[(Digest, Revision)]) {
        let mut state = RunState::new();
        for (d, r) in revisions {
            state = state.with_revision(*d, *r);
        }
        self.runs.push(SpecRun {
            state: RefCell::new(state),
            ..SpecRun::default()
        });
        let run = self.runs.len() - 1;
        let f = &mut self.flows[flow];
        let previous = f.current.replace(run);
        f.frames.push(Frame::Began(previous));
    }

    fn ensure(&mut self, flow: usize) {
        if self.flows[flow].current.is_some() {
            self.flows[flow].frames.push(Frame::Reused);
        } else {
            self.begin(flow, &[]);
        }
    }

    fn end(&mut self, flow: usize) {
        let f = &mut self.flows[flow];
        if let Some(Frame::Began(previous)) = f.frames.pop() {
            f.current = previous;
        }
    }

    fn fork(&mut self, flow: usize) {
        let current = self.flows[flow].current;
        self.flows.push(SpecFlow {
            current,
            frames: Vec::new(),
        });
    }

    fn reserve(&mut self, flow: usize, d: Digest, lease: LeaseId) -> Result<bool, LeaseError> {
        let run = self.run_of(flow)?;
        let result = self.runs[run].state.borrow_mut().try_reserve(d, lease);
        result
    }

    fn complete(&mut self, flow: usize, lease: LeaseId, fwd: &[Digest]) -> Result<(), LeaseError> {
        let run = self.run_of(flow)?;
        let result = self.runs[run].state.borrow_mut().complete(lease, fwd);
        result
    }

    fn release(&mut self, flow: usize, lease: LeaseId) -> Result<(), LeaseError> {
        match self.flows[flow].current {
            Some(run) => self.runs[run].state.borrow_mut().release(lease),
            None => Ok(()),
        }
    }

    fn revision(&mut self, flow: usize, d: Digest) -> Result<Revision, LeaseError> {
        let run = self.run_of(flow)?;
        Ok(self.runs[run].state.borrow().revision(d))
    }

    fn enter(&mut self, flow: usize, call: usize, cancelled: bool) -> Result<Entered, LeaseError> {
        let run = self.run_of(flow)?;
        debug_assert_eq!(call, self.calls.len());
        match self.runs[run].gate.step(cancelled)? {
            GateStep::Admitted => {
                let lease = self.new_lease(run);
                self.calls.push(SpecCall {
                    run,
                    lease: Some(lease),
                    last: None,
                });
                Ok(Entered::Admitted(lease))
            }
            GateStep::Wait => {
                self.calls.push(SpecCall {
                    run,
                    lease: None,
                    last: None,
                });
                self.runs[run].waiter = Some(call);
                Ok(Entered::Waiting)
            }
        }
    }

    fn cancel_waiter(&mut self, call: usize) -> Result<Entered, LeaseError> {
        let run = self.calls[call].run;
        self.runs[run].waiter = None;
        match self.runs[run].gate.step(true)? {
            GateStep::Admitted => Ok(Entered::Admitted(self.new_lease(run))),
            GateStep::Wait => Ok(Entered::Waiting),
        }
    }

    fn finish(
        &mut self,
        call: usize,
        forwarded: Option<&[Digest]>,
    ) -> (Result<(), LeaseError>, Option<(usize, LeaseId)>) {
        let run = self.calls[call].run;
        let lease = self.calls[call].lease.unwrap_or(LeaseId(u64::MAX));
        let result = self.runs[run]
            .state
            .borrow_mut()
            .complete(lease, forwarded.unwrap_or(&[]));
        (result, self.leave(run))
    }

    fn abandon(&mut self, call: usize) -> Option<(usize, LeaseId)> {
        self.finish(call, None).1
    }

    fn capture(&mut self, call: usize, inner: Snapshot) -> Result<Snapshot, SnapshotError> {
        let c = &self.calls[call];
        let lease = c.lease.unwrap_or(LeaseId(u64::MAX));
        let (snapshot, record) = filter_capture(
            &mut self.runs[c.run].state.borrow_mut(),
            lease,
            c.last.as_ref(),
            inner,
        )?;
        self.calls[call].last = Some(record);
        Ok(snapshot)
    }

    fn view(&self, flow: usize) -> Option<RunView> {
        self.flows[flow].current.map(|r| self.view_run(r))
    }

    fn call_run(&self, call: usize) -> Option<RunView> {
        Some(self.view_run(self.calls[call].run))
    }

    fn peek_revision(&self, flow: usize, d: Digest) -> Revision {
        self.flows[flow]
            .current
            .map_or(0, |r| self.runs[r].state.borrow().revision(d))
    }

    fn peek_call_revision(&self, call: usize, d: Digest) -> Revision {
        self.runs[self.calls[call].run].state.borrow().revision(d)
    }
}

// ---------------------------------------------------------------------------------------------
// The library's world

/// An inner provider the driver feeds one snapshot per capture.
#[derive(Debug, Clone, Default)]
struct Feed(Arc<Mutex<Option<Snapshot>>>);

impl SnapshotProvider for Feed {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        let taken = self.0.lock().ok().and_then(|mut s| s.take());
        // The driver always feeds before capturing; an empty feed is an empty snapshot.
        match taken {
            Some(s) => Ok(s),
            None => Snapshot::new(0, Vec::new()),
        }
    }
}

enum LibCall {
    Admitted {
        slot: CallSlot,
        provider: FilteringProvider<Feed>,
        feed: Feed,
    },
    Waiting {
        run: Run,
        token: CancellationToken,
        handle: JoinHandle<Result<CallSlot, LeaseError>>,
    },
    Done(Run),
}

/// The concurrent library's world.
pub struct LibraryLeases {
    runs: Vec<Run>,
    flows: Vec<(RunScope, Vec<Frame<Run>>)>,
    calls: Vec<LibCall>,
}

impl std::fmt::Debug for LibraryLeases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LibraryLeases").finish_non_exhaustive()
    }
}

impl Default for LibraryLeases {
    fn default() -> LibraryLeases {
        LibraryLeases {
            runs: Vec::new(),
            flows: vec![(RunScope::new(), Vec::new())],
            calls: Vec::new(),
        }
    }
}

impl Drop for LibraryLeases {
    fn drop(&mut self) {
        // Wake and join every waiter still blocked at a gate.
        for call in self.calls.drain(..) {
            if let LibCall::Waiting { run, token, handle } = call {
                run.cancel_and_wake(&token);
                let _ = handle.join();
            }
        }
    }
}

impl LibraryLeases {
    fn scope(&self, flow: usize) -> &RunScope {
        &self.flows[flow].0
    }

    fn index_of(&self, run: &Run) -> usize {
        self.runs
            .iter()
            .position(|r| r.same_run(run))
            .unwrap_or(usize::MAX)
    }

    fn view_run(&self, run: &Run) -> RunView {
        let (delivered, reserved) = run.state();
        RunView {
            run: self.index_of(run),
            delivered,
            reserved,
            gate_occupied: run.gate_occupied(),
        }
    }

    fn admitted(slot: CallSlot) -> LibCall {
        let feed = Feed::default();
        let provider = slot.filtering_provider(feed.clone());
        LibCall::Admitted {
            slot,
            provider,
            feed,
        }
    }

    /// After `run`'s gate was left: the waiter on it, if any, is admitted (it was woken).
    fn admit_waiter(&mut self, run: &Run) -> Option<(usize, LeaseId)> {
        let i = self
            .calls
            .iter()
            .position(|c| matches!(c, LibCall::Waiting { run: r, .. } if r.same_run(run)))?;
        let call = std::mem::replace(&mut self.calls[i], LibCall::Done(run.clone()));
        let LibCall::Waiting { handle, .. } = call else {
            return None;
        };
        match handle.join() {
            Ok(Ok(slot)) => {
                let lease = slot.lease();
                self.calls[i] = LibraryLeases::admitted(slot);
                Some((i, lease))
            }
            _ => None,
        }
    }

    fn call_run_handle(&self, call: usize) -> Run {
        match &self.calls[call] {
            LibCall::Admitted { slot, .. } => slot.run().clone(),
            LibCall::Waiting { run, .. } | LibCall::Done(run) => run.clone(),
        }
    }
}

impl LeaseWorld for LibraryLeases {
    fn begin(&mut self, flow: usize, revisions: &[(Digest, Revision)]) {
        let mut run = Run::new();
        for (d, r) in revisions {
            run = run.with_revision(*d, *r);
        }
        self.runs.push(run.clone());
        let (scope, frames) = &mut self.flows[flow];
        let previous = scope.replace(Some(run));
        frames.push(Frame::Began(previous));
    }

    fn ensure(&mut self, flow: usize) {
        if self.scope(flow).current().is_some() {
            self.flows[flow].1.push(Frame::Reused);
        } else {
            self.begin(flow, &[]);
        }
    }

    fn end(&mut self, flow: usize) {
        let (scope, frames) = &mut self.flows[flow];
        if let Some(Frame::Began(previous)) = frames.pop() {
            scope.replace(previous);
        }
    }

    fn fork(&mut self, flow: usize) {
        let child = self.scope(flow).fork();
        self.flows.push((child, Vec::new()));
    }

    fn reserve(&mut self, flow: usize, d: Digest, lease: LeaseId) -> Result<bool, LeaseError> {
        self.scope(flow).try_reserve(d, lease)
    }

    fn complete(&mut self, flow: usize, lease: LeaseId, fwd: &[Digest]) -> Result<(), LeaseError> {
        self.scope(flow).complete(lease, fwd)
    }

    fn release(&mut self, flow: usize, lease: LeaseId) -> Result<(), LeaseError> {
        self.scope(flow).release(lease)
    }

    fn revision(&mut self, flow: usize, d: Digest) -> Result<Revision, LeaseError> {
        self.scope(flow).revision(d)
    }

    fn enter(&mut self, flow: usize, call: usize, cancelled: bool) -> Result<Entered, LeaseError> {
        debug_assert_eq!(call, self.calls.len());
        let run = self
            .scope(flow)
            .current()
            .cloned()
            .ok_or(LeaseError::NoActiveRun)?;
        let token = if cancelled {
            CancellationToken::cancelled()
        } else {
            CancellationToken::new()
        };
        if cancelled || !run.gate_occupied() {
            let slot = self.scope(flow).enter(&token)?;
            let lease = slot.lease();
            self.calls.push(LibraryLeases::admitted(slot));
            return Ok(Entered::Admitted(lease));
        }
        let (waiting_run, waiting_token) = (run.clone(), token.clone());
        let handle = std::thread::spawn(move || waiting_run.enter(&waiting_token));
        self.calls.push(LibCall::Waiting { run, token, handle });
        Ok(Entered::Waiting)
    }

    fn cancel_waiter(&mut self, call: usize) -> Result<Entered, LeaseError> {
        let run = self.call_run_handle(call);
        let LibCall::Waiting { run, token, handle } =
            std::mem::replace(&mut self.calls[call], LibCall::Done(run))
        else {
            return Err(LeaseError::NoActiveRun);
        };
        run.cancel_and_wake(&token);
        match handle.join() {
            Ok(Ok(slot)) => {
                let lease = slot.lease();
                self.calls[call] = LibraryLeases::admitted(slot);
                Ok(Entered::Admitted(lease))
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(LeaseError::NoActiveRun),
        }
    }

    fn finish(
        &mut self,
        call: usize,
        forwarded: Option<&[Digest]>,
    ) -> (Result<(), LeaseError>, Option<(usize, LeaseId)>) {
        let run = self.call_run_handle(call);
        let LibCall::Admitted { slot, .. } =
            std::mem::replace(&mut self.calls[call], LibCall::Done(run.clone()))
        else {
            return (Ok(()), None);
        };
        let result = match forwarded {
            Some(fwd) => slot.complete(fwd),
            None => slot.release(),
        };
        (result, self.admit_waiter(&run))
    }

    fn abandon(&mut self, call: usize) -> Option<(usize, LeaseId)> {
        let run = self.call_run_handle(call);
        // Dropping the unfinished slot releases and leaves the gate (SPEC LSE-10).
        drop(std::mem::replace(
            &mut self.calls[call],
            LibCall::Done(run.clone()),
        ));
        self.admit_waiter(&run)
    }

    fn capture(&mut self, call: usize, inner: Snapshot) -> Result<Snapshot, SnapshotError> {
        match &mut self.calls[call] {
            LibCall::Admitted { provider, feed, .. } => {
                if let Ok(mut slot) = feed.0.lock() {
                    *slot = Some(inner);
                }
                provider.capture()
            }
            _ => Err(SnapshotError::Lease(LeaseError::NoActiveRun)),
        }
    }

    fn view(&self, flow: usize) -> Option<RunView> {
        self.scope(flow).current().map(|r| self.view_run(r))
    }

    fn call_run(&self, call: usize) -> Option<RunView> {
        Some(self.view_run(&self.call_run_handle(call)))
    }

    fn peek_revision(&self, flow: usize, d: Digest) -> Revision {
        self.scope(flow).current().map_or(0, |r| r.revision(d))
    }

    fn peek_call_revision(&self, call: usize, d: Digest) -> Revision {
        self.call_run_handle(call).revision(d)
    }
}
