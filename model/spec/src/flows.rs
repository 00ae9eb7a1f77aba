//! Flows and run scopes over the sequential lease rules (SPEC LSE-6, LSE-7, LSE-10): the
//! specification's [`LeaseWorld`].
//!
//! [`crate::lease`] states each rule on one run ([`RunState`], [`Gate`], [`filter_capture`]).
//! A host sees more than one run: scopes nest and restore the previous run when they end
//! (SPEC LSE-6), and forked flows (child agents) share the run that was active when they
//! forked. This module keeps the runs in a table, each flow's active run and a stack of
//! frames per flow (`Began(previous)` restores `previous`, `Reused` restores nothing), and
//! steps a run's gate one event at a time: the driver allows one waiter per run, so a waiter is
//! admitted deterministically when the holder leaves.

use std::cell::RefCell;

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::lease::{LeaseError, LeaseId, Revision};
use hybrid_compaction_model::seam::{Admission, Entered, LeaseWorld, RunView};
use hybrid_compaction_model::snapshot::{Snapshot, SnapshotError};

use crate::lease::{filter_capture, CaptureRecord, Gate, GateStep, RunState};

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

/// The specification's lease world: runs in a table, flows, frames, one waiter per run.
#[derive(Debug)]
pub struct Flows {
    runs: Vec<SpecRun>,
    flows: Vec<SpecFlow>,
    calls: Vec<SpecCall>,
}

impl Default for Flows {
    fn default() -> Flows {
        Flows {
            runs: Vec::new(),
            flows: vec![SpecFlow::default()],
            calls: Vec::new(),
        }
    }
}

impl Flows {
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
    fn leave(&mut self, run: usize) -> Admission {
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

impl LeaseWorld for Flows {
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
    ) -> (Result<(), LeaseError>, Admission) {
        let run = self.calls[call].run;
        let lease = self.calls[call].lease.unwrap_or(LeaseId(u64::MAX));
        let result = self.runs[run]
            .state
            .borrow_mut()
            .complete(lease, forwarded.unwrap_or(&[]));
        (result, self.leave(run))
    }

    fn abandon(&mut self, call: usize) -> Admission {
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
