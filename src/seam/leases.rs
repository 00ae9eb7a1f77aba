//! The library's lease world ([`LeaseWorld`]): the concurrent [`crate::lease`] driven one step
//! at a time.
//!
//! Forked flows (which share one run) are modelled with runs in a table and frames per flow
//! (`Began(previous)` / `Reused`), the flows' [`RunScope`]s driven through the `replace`
//! primitive the guards are built on. A call that must wait at the gate (SPEC LSE-7) waits for
//! real, on a thread blocked in [`Run::enter`]; it is admitted when the holder leaves, or
//! cancelled with [`Run::cancel_and_wake`]. The driver allows one waiter per run, so admission
//! is deterministic.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::lease::{LeaseError, LeaseId, Revision};
use hybrid_compaction_model::seam::{Admission, Entered, LeaseWorld, RunView};
use hybrid_compaction_model::snapshot::{Snapshot, SnapshotError, SnapshotProvider};

use crate::lease::{CallSlot, FilteringProvider, Run, RunScope};

#[derive(Debug, Clone)]
enum Frame {
    Began(Option<Run>),
    Reused,
}

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

/// The library's lease world: real [`RunScope`]s (driven through `replace`, the primitive the
/// scope guards are built on), real gates, filtering providers fed one snapshot per capture.
pub struct Flows {
    runs: Vec<Run>,
    flows: Vec<(RunScope, Vec<Frame>)>,
    calls: Vec<LibCall>,
}

impl std::fmt::Debug for Flows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flows").finish_non_exhaustive()
    }
}

impl Default for Flows {
    fn default() -> Flows {
        Flows {
            runs: Vec::new(),
            flows: vec![(RunScope::new(), Vec::new())],
            calls: Vec::new(),
        }
    }
}

impl Drop for Flows {
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

impl Flows {
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
    fn admit_waiter(&mut self, run: &Run) -> Admission {
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
                self.calls[i] = Flows::admitted(slot);
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

impl LeaseWorld for Flows {
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
            self.calls.push(Flows::admitted(slot));
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
                self.calls[call] = Flows::admitted(slot);
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
    ) -> (Result<(), LeaseError>, Admission) {
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

    fn abandon(&mut self, call: usize) -> Admission {
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
