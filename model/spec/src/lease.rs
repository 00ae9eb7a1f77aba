//! The non-retransmission coordinator as a sequential state machine (SPEC LSE-1 .. LSE-10).
//!
//! This is the *sequential* meaning of the concurrent lease code in the root crate: every
//! operation of [`RunState`] is what one critical section under the run's lock does, and
//! [`filter_capture`] is one capture of the lease-filtering provider. Property tests drive the
//! concurrent implementation and this model with the same operation sequences and compare every
//! result; loom models check that concurrent executions are linearizable to these steps.
//!
//! ```text
//!                 try_reserve(d, l)                 complete(l, fwd) / release(l)
//!  unclaimed(d) ------------------> reserved(d, l) -------------------------------> unclaimed(d)
//!      ^                                 |  complete(l, fwd) with d in fwd               |
//!      |                                 v                                               |
//!      |                            delivered(d)  (final: try_reserve(d, _) = false)     |
//!      +---------------------------------------------------------------------------------+
//!  every arrow bumps revision(d) by one; re-reserving by the same lease changes nothing
//! ```
//!
//! Run scopes ([`Flow`]) are modelled for one logical call flow: `begin_run` installs a fresh
//! run and its end restores the previous one; `ensure_run` reuses the active run or begins a
//! call-local one (SPEC LSE-6). The gate ([`Gate`]) is modelled as the step a waiter performs
//! each time it is woken (SPEC LSE-7).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::lease::{LeaseError, LeaseId, Revision};
use hybrid_compaction_model::snapshot::{Snapshot, SnapshotError, SnapshotProvider};

/// The state of one run (SPEC LSE-1): delivered digests, reserved digest -> lease, and the
/// per-digest revision counters (absent = 0).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunState {
    delivered: BTreeSet<Digest>,
    reserved: BTreeMap<Digest, LeaseId>,
    revisions: BTreeMap<Digest, Revision>,
}

impl RunState {
    /// A fresh, empty run (SPEC LSE-1, LSE-6).
    pub fn new() -> RunState {
        RunState::default()
    }

    /// Starts `digest`'s revision counter at `revision` (a seam for tests of the overflow rule;
    /// a real run always starts every counter at 0).
    pub fn with_revision(mut self, digest: Digest, revision: Revision) -> RunState {
        self.revisions.insert(digest, revision);
        self
    }

    /// `TryReserve(d, lease)` (SPEC LSE-2): delivered -> `false`; reserved by the same lease ->
    /// `true`, no revision change; by another lease -> `false`; unclaimed -> reserve, revision
    /// + 1, `true`. A counter overflow changes nothing and is an error (SPEC LSE-5).
    pub fn try_reserve(&mut self, digest: Digest, lease: LeaseId) -> Result<bool, LeaseError> {
        if self.delivered.contains(&digest) {
            return Ok(false);
        }
        match self.reserved.get(&digest) {
            Some(owner) => Ok(*owner == lease),
            None => {
                let next = self.next_revision(digest)?;
                self.reserved.insert(digest, lease);
                self.revisions.insert(digest, next);
                Ok(true)
            }
        }
    }

    /// `Complete(lease, forwarded)` (SPEC LSE-3), atomically: every digest reserved by `lease` is
    /// unreserved, added to the delivered set iff it is in `forwarded`, and its revision bumped
    /// either way. Digests in `forwarded` that `lease` does not hold are ignored.
    pub fn complete(&mut self, lease: LeaseId, forwarded: &[Digest]) -> Result<(), LeaseError> {
        let owned = self.owned_by(lease);
        let bumped = self.bumped(&owned)?;
        for (digest, next) in bumped {
            self.reserved.remove(&digest);
            if forwarded.contains(&digest) {
                self.delivered.insert(digest);
            }
            self.revisions.insert(digest, next);
        }
        Ok(())
    }

    /// `Release(lease)` (SPEC LSE-4): every digest reserved by `lease` is unreserved and its
    /// revision bumped; nothing is ever marked delivered.
    pub fn release(&mut self, lease: LeaseId) -> Result<(), LeaseError> {
        self.complete(lease, &[])
    }

    /// `GetRevision(d)` (SPEC LSE-5): the counter, `0` if the digest was never touched.
    pub fn revision(&self, digest: Digest) -> Revision {
        self.revisions.get(&digest).copied().unwrap_or(0)
    }

    /// Whether `digest` was delivered in this run.
    pub fn is_delivered(&self, digest: Digest) -> bool {
        self.delivered.contains(&digest)
    }

    /// The lease holding `digest`, if any.
    pub fn reserved_by(&self, digest: Digest) -> Option<LeaseId> {
        self.reserved.get(&digest).copied()
    }

    /// The delivered digests, in digest order.
    pub fn delivered(&self) -> &BTreeSet<Digest> {
        &self.delivered
    }

    /// The reservations, in digest order.
    pub fn reserved(&self) -> &BTreeMap<Digest, LeaseId> {
        &self.reserved
    }

    /// Every digest reserved by `lease`, in digest order.
    pub fn owned_by(&self, lease: LeaseId) -> Vec<Digest> {
        self.reserved
            .iter()
            .filter(|(_, owner)| **owner == lease)
            .map(|(d, _)| *d)
            .collect()
    }

    fn next_revision(&self, digest: Digest) -> Result<Revision, LeaseError> {
        // SPEC LSE-5: counters are overflow-checked.
        self.revision(digest)
            .checked_add(1)
            .ok_or(LeaseError::RevisionOverflow)
    }

    /// The bumped counters of `digests`, or the overflow error before anything changes (so
    /// `complete` / `release` stay atomic, SPEC LSE-3).
    fn bumped(&self, digests: &[Digest]) -> Result<Vec<(Digest, Revision)>, LeaseError> {
        digests
            .iter()
            .map(|d| Ok((*d, self.next_revision(*d)?)))
            .collect()
    }
}

/// How a scope on a [`Flow`] was opened, so that ending it restores the right run.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ScopeFrame {
    /// `begin_run` (or `ensure_run` with no active run): restore this previous run on end.
    Began(Option<RunState>),
    /// `ensure_run` found an active run and reused it: ending changes nothing.
    Reused,
}

/// One logical call flow's run scopes (SPEC LSE-6).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flow {
    current: Option<RunState>,
    frames: Vec<ScopeFrame>,
}

impl Flow {
    /// A flow with no active run.
    pub fn new() -> Flow {
        Flow::default()
    }

    /// `BeginRun`: installs a fresh empty run; [`Flow::end_scope`] restores the previous one.
    pub fn begin_run(&mut self) {
        let previous = self.current.replace(RunState::new());
        self.frames.push(ScopeFrame::Began(previous));
    }

    /// `EnsureRunScope`: reuses the active run, or begins a call-local one.
    pub fn ensure_run(&mut self) {
        if self.current.is_some() {
            self.frames.push(ScopeFrame::Reused);
        } else {
            self.begin_run();
        }
    }

    /// Ends the innermost scope. Ending with no open scope is a no-op (a guard API makes it
    /// impossible in the concurrent implementation).
    pub fn end_scope(&mut self) {
        if let Some(ScopeFrame::Began(previous)) = self.frames.pop() {
            self.current = previous;
        }
    }

    /// The active run, if any.
    pub fn run(&self) -> Option<&RunState> {
        self.current.as_ref()
    }

    fn run_mut(&mut self) -> Result<&mut RunState, LeaseError> {
        self.current.as_mut().ok_or(LeaseError::NoActiveRun)
    }

    /// [`RunState::try_reserve`] on the active run; no run -> invalid-operation (SPEC LSE-2).
    pub fn try_reserve(&mut self, digest: Digest, lease: LeaseId) -> Result<bool, LeaseError> {
        self.run_mut()?.try_reserve(digest, lease)
    }

    /// [`RunState::complete`] on the active run; no run -> invalid-operation (SPEC LSE-3).
    pub fn complete(&mut self, lease: LeaseId, forwarded: &[Digest]) -> Result<(), LeaseError> {
        self.run_mut()?.complete(lease, forwarded)
    }

    /// [`RunState::release`] on the active run; no run -> no-op (SPEC LSE-4).
    pub fn release(&mut self, lease: LeaseId) -> Result<(), LeaseError> {
        match self.current.as_mut() {
            Some(run) => run.release(lease),
            None => Ok(()),
        }
    }

    /// [`RunState::revision`] on the active run; no run -> invalid-operation (SPEC LSE-5; the
    /// reference implementation reads the counter through the same required-run accessor).
    pub fn revision(&self, digest: Digest) -> Result<Revision, LeaseError> {
        self.current
            .as_ref()
            .map(|run| run.revision(digest))
            .ok_or(LeaseError::NoActiveRun)
    }
}

/// The one-slot gate of a run (SPEC LSE-7), as the step a caller performs under the run's lock
/// on arrival and again on every wake-up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gate {
    occupied: bool,
}

/// What one gate step decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateStep {
    /// The caller now holds the slot.
    Admitted,
    /// The slot is held by another call: wait for a wake-up and step again.
    Wait,
}

impl Gate {
    /// One step (SPEC LSE-7): cancellation first (error, no trace: the gate is unchanged), then
    /// admission if the slot is free, else wait.
    pub fn step(&mut self, cancelled: bool) -> Result<GateStep, LeaseError> {
        if cancelled {
            return Err(LeaseError::Cancelled);
        }
        if self.occupied {
            return Ok(GateStep::Wait);
        }
        self.occupied = true;
        Ok(GateStep::Admitted)
    }

    /// Leaves the slot (after the call's commit or release) and wakes every waiter.
    pub fn leave(&mut self) {
        self.occupied = false;
    }

    /// Whether a call holds the slot.
    pub fn is_occupied(&self) -> bool {
        self.occupied
    }
}

/// What the filtering provider remembers of its previous capture (SPEC LSE-8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureRecord {
    /// The inner provider's version.
    pub inner_version: i64,
    /// `(digest, revision)` of every recoverable segment seen, sorted by digest.
    pub signature: Vec<(Digest, Revision)>,
    /// The effective version handed to the assembler.
    pub effective_version: i64,
}

/// One capture of the lease-filtering provider (SPEC LSE-8), given the inner snapshot: for each
/// `RecoverableContextSegment`, `TryReserve(digest, lease)` and record `(digest, revision)`;
/// keep the entry iff reserved; keep every other entry unchanged. The effective version is `0`
/// on the first capture, else the previous one plus 1 if the inner version or the signature
/// changed, else unchanged.
pub fn filter_capture(
    run: &mut RunState,
    lease: LeaseId,
    previous: Option<&CaptureRecord>,
    inner: Snapshot,
) -> Result<(Snapshot, CaptureRecord), SnapshotError> {
    let inner_version = inner.version();
    let mut kept = Vec::with_capacity(inner.entries().len());
    let mut signature = Vec::new();
    for entry in inner.into_entries() {
        match segment_digest(&entry) {
            Some(digest) => {
                let reserved = run
                    .try_reserve(digest, lease)
                    .map_err(SnapshotError::Lease)?;
                signature.push((digest, run.revision(digest)));
                if reserved {
                    kept.push(entry);
                }
            }
            None => kept.push(entry),
        }
    }
    signature.sort();
    let effective_version = match previous {
        None => 0,
        Some(p) if p.inner_version != inner_version || p.signature != signature => p
            .effective_version
            .checked_add(1)
            .ok_or(SnapshotError::Lease(LeaseError::RevisionOverflow))?,
        Some(p) => p.effective_version,
    };
    let snapshot = Snapshot::new(effective_version, kept)?;
    let record = CaptureRecord {
        inner_version,
        signature,
        effective_version,
    };
    Ok((snapshot, record))
}

/// The digest a recoverable segment entry carries (SPEC ENT-6: exactly one); `None` for every
/// other kind, which the filter passes through.
fn segment_digest(entry: &Entry) -> Option<Digest> {
    if entry.kind() != EntryKind::RecoverableContextSegment {
        return None;
    }
    entry.recoverable_segment().map(|s| s.reference.digest())
}

/// The lease-filtering provider of one call (SPEC LSE-8) over a sequential run. The run sits in a
/// `RefCell` so that several calls' providers of one run can be interleaved by a test.
#[derive(Debug)]
pub struct FilteringProvider<'a, P> {
    inner: P,
    run: &'a RefCell<RunState>,
    lease: LeaseId,
    last: Option<CaptureRecord>,
}

impl<'a, P: SnapshotProvider> FilteringProvider<'a, P> {
    /// A provider for the call holding `lease` in `run`.
    pub fn new(inner: P, run: &'a RefCell<RunState>, lease: LeaseId) -> FilteringProvider<'a, P> {
        FilteringProvider {
            inner,
            run,
            lease,
            last: None,
        }
    }

    /// The record of the latest capture, if any.
    pub fn last_capture(&self) -> Option<&CaptureRecord> {
        self.last.as_ref()
    }
}

impl<P: SnapshotProvider> SnapshotProvider for FilteringProvider<'_, P> {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        let inner = self.inner.capture()?;
        let (snapshot, record) = filter_capture(
            &mut self.run.borrow_mut(),
            self.lease,
            self.last.as_ref(),
            inner,
        )?;
        self.last = Some(record);
        Ok(snapshot)
    }
}
