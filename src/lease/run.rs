//! One run: the coordinator ledger and the one-call gate under a single lock (SPEC LSE-1 ..
//! LSE-5, LSE-7).
//!
//! The ledger keeps, besides the maps of the specification, an index `lease -> digests` so that
//! commit and release touch only the lease's own reservations instead of scanning every
//! reservation of the run. Every public operation is one critical section, and `complete` /
//! `release` first compute every bumped counter and only then mutate, so an overflow leaves the
//! ledger unchanged (SPEC LSE-3, LSE-5).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::lease::{LeaseError, LeaseId, Revision};
use hybrid_compaction_model::snapshot::{SnapshotError, SnapshotProvider};

use super::filter::FilteringProvider;
use crate::sync::{self, Arc, Condvar, Mutex};

/// The coordinator's maps (SPEC LSE-1).
#[derive(Debug, Default)]
pub(super) struct Ledger {
    delivered: HashSet<Digest>,
    reserved: HashMap<Digest, LeaseId>,
    by_lease: HashMap<LeaseId, Vec<Digest>>,
    revisions: HashMap<Digest, Revision>,
}

impl Ledger {
    pub(super) fn revision(&self, digest: Digest) -> Revision {
        self.revisions.get(&digest).copied().unwrap_or(0)
    }

    /// SPEC LSE-2.
    pub(super) fn try_reserve(
        &mut self,
        digest: Digest,
        lease: LeaseId,
    ) -> Result<bool, LeaseError> {
        // SPEC LSE-2: a delivered body is never reserved again in this run.
        if self.delivered.contains(&digest) {
            return Ok(false);
        }
        if let Some(owner) = self.reserved.get(&digest) {
            // Same lease: idempotent, no revision change. Another lease: refused.
            return Ok(*owner == lease);
        }
        // SPEC LSE-5: overflow-checked; nothing changes on overflow.
        let next = self
            .revision(digest)
            .checked_add(1)
            .ok_or(LeaseError::RevisionOverflow)?;
        self.reserved.insert(digest, lease);
        self.by_lease.entry(lease).or_default().push(digest);
        self.revisions.insert(digest, next);
        Ok(true)
    }

    /// SPEC LSE-3 (`forwarded` = the dispatched digests) and LSE-4 (`forwarded` empty).
    fn finish(&mut self, lease: LeaseId, forwarded: &[Digest]) -> Result<(), LeaseError> {
        let Some(owned) = self.by_lease.get(&lease) else {
            return Ok(());
        };
        let mut bumped = Vec::with_capacity(owned.len());
        for d in owned {
            let next = self
                .revision(*d)
                .checked_add(1)
                .ok_or(LeaseError::RevisionOverflow)?;
            bumped.push((*d, next));
        }
        let forwarded: HashSet<&Digest> = forwarded.iter().collect();
        self.by_lease.remove(&lease);
        for (d, next) in bumped {
            self.reserved.remove(&d);
            // SPEC LSE-3: delivered iff forwarded; unowned forwarded digests are ignored.
            if forwarded.contains(&d) {
                self.delivered.insert(d);
            }
            self.revisions.insert(d, next);
        }
        Ok(())
    }
}

/// Everything one run owns, behind its one lock.
#[derive(Debug, Default)]
struct RunInner {
    ledger: Ledger,
    /// SPEC LSE-7: whether a call holds the run's provider-call slot.
    gate_occupied: bool,
    next_lease: u64,
}

impl RunInner {
    fn new_lease(&mut self) -> LeaseId {
        let id = LeaseId(self.next_lease);
        // Unique within the run until 2^64 calls; wrapping is unreachable in practice and is
        // not an arithmetic size, so it cannot corrupt a result.
        self.next_lease = self.next_lease.wrapping_add(1);
        id
    }

    /// Leaves the gate; the caller notifies `gate_cv` after this (still under the lock).
    fn leave(&mut self) {
        self.gate_occupied = false;
    }
}

struct RunShared {
    inner: Mutex<RunInner>,
    gate_cv: Condvar,
}

/// One outer run's non-retransmission state (SPEC LSE-1). Cloning shares the run: nested calls
/// of one run hold clones of the same `Run`; separate runs share nothing.
#[derive(Clone)]
pub struct Run(Arc<RunShared>);

impl fmt::Debug for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Run").finish_non_exhaustive()
    }
}

impl Default for Run {
    fn default() -> Run {
        Run::new()
    }
}

impl Run {
    /// A fresh, empty run.
    pub fn new() -> Run {
        Run(Arc::new(RunShared {
            inner: Mutex::new(RunInner::default()),
            gate_cv: Condvar::new(),
        }))
    }

    /// Whether two handles name the same run.
    pub fn same_run(&self, other: &Run) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    fn with<T>(&self, f: impl FnOnce(&mut RunInner) -> T) -> T {
        let mut guard = sync::lock(&self.0.inner);
        f(&mut guard)
    }

    /// Starts `digest`'s counter at `revision` (a seam for overflow tests, mirroring
    /// `RunState::with_revision` of the model).
    pub fn with_revision(self, digest: Digest, revision: Revision) -> Run {
        self.with(|inner| inner.ledger.revisions.insert(digest, revision));
        self
    }

    /// A new lease id, unique within this run (SPEC LSE-10 step 2).
    pub fn new_lease(&self) -> LeaseId {
        self.with(RunInner::new_lease)
    }

    /// `TryReserve(digest, lease)` (SPEC LSE-2).
    pub fn try_reserve(&self, digest: Digest, lease: LeaseId) -> Result<bool, LeaseError> {
        self.with(|inner| inner.ledger.try_reserve(digest, lease))
    }

    /// `Complete(lease, forwarded)` (SPEC LSE-3), atomic.
    pub fn complete(&self, lease: LeaseId, forwarded: &[Digest]) -> Result<(), LeaseError> {
        self.with(|inner| inner.ledger.finish(lease, forwarded))
    }

    /// `Release(lease)` (SPEC LSE-4), atomic; never marks anything delivered.
    pub fn release(&self, lease: LeaseId) -> Result<(), LeaseError> {
        self.with(|inner| inner.ledger.finish(lease, &[]))
    }

    /// `GetRevision(digest)` (SPEC LSE-5): 0 if never touched.
    pub fn revision(&self, digest: Digest) -> Revision {
        self.with(|inner| inner.ledger.revision(digest))
    }

    /// Whether `digest` was delivered in this run.
    pub fn is_delivered(&self, digest: Digest) -> bool {
        self.with(|inner| inner.ledger.delivered.contains(&digest))
    }

    /// The lease holding `digest`, if any.
    pub fn reserved_by(&self, digest: Digest) -> Option<LeaseId> {
        self.with(|inner| inner.ledger.reserved.get(&digest).copied())
    }

    /// A consistent copy of the delivered set and the reservations (for tests and equivalence
    /// checks against the sequential model).
    pub fn state(&self) -> (BTreeSet<Digest>, BTreeMap<Digest, LeaseId>) {
        self.with(|inner| {
            (
                inner.ledger.delivered.iter().copied().collect(),
                inner
                    .ledger
                    .reserved
                    .iter()
                    .map(|(d, l)| (*d, *l))
                    .collect(),
            )
        })
    }

    /// Whether a call currently holds the gate (SPEC LSE-7).
    pub fn gate_occupied(&self) -> bool {
        self.with(|inner| inner.gate_occupied)
    }

    /// Enters the run's one-call gate (SPEC LSE-7) and takes a fresh lease. Waits while another
    /// call of this run holds the slot. `cancel` is checked on arrival and on every wake-up,
    /// under the lock: if set, the call gets [`LeaseError::Cancelled`] and leaves no trace (it
    /// took no slot and no lease). Wake a waiter whose token you set with
    /// [`Run::cancel_and_wake`].
    pub fn enter(&self, cancel: &CancellationToken) -> Result<CallSlot, LeaseError> {
        let mut guard = sync::lock(&self.0.inner);
        loop {
            if cancel.is_cancelled() {
                return Err(LeaseError::Cancelled);
            }
            if !guard.gate_occupied {
                guard.gate_occupied = true;
                let lease = guard.new_lease();
                drop(guard);
                return Ok(CallSlot {
                    run: self.clone(),
                    lease,
                    finished: false,
                });
            }
            guard = sync::wait(&self.0.gate_cv, guard);
        }
    }

    /// Cancels `cancel` and wakes this run's gate waiters so that a waiter holding `cancel`
    /// observes it (SPEC LSE-7). The token is set *inside* the run's critical section, the same
    /// one in which a waiter checks it before sleeping, so there is no lost wake-up: either the
    /// waiter's check comes first (it is then asleep and this notification wakes it) or this
    /// comes first (the waiter sees the token without sleeping). Keeping both accesses under the
    /// lock also makes the token's order visible to loom, whose scheduler cannot see the plain
    /// atomic inside [`CancellationToken`]. A token cancelled directly (not through this call)
    /// is observed by a waiter at its next wake-up.
    pub fn cancel_and_wake(&self, cancel: &CancellationToken) {
        let _guard = sync::lock(&self.0.inner);
        cancel.cancel();
        self.0.gate_cv.notify_all();
    }

    /// Runs one filtering pass of a capture in one critical section (SPEC LSE-8).
    pub(super) fn filter_pass<T>(
        &self,
        f: impl FnOnce(&mut Ledger) -> Result<T, LeaseError>,
    ) -> Result<T, SnapshotError> {
        self.with(|inner| f(&mut inner.ledger))
            .map_err(SnapshotError::Lease)
    }

    /// Commits or releases `lease` and leaves the gate in one critical section.
    fn finish_and_leave(&self, lease: LeaseId, forwarded: &[Digest]) -> Result<(), LeaseError> {
        let mut guard = sync::lock(&self.0.inner);
        let result = guard.ledger.finish(lease, forwarded);
        guard.leave();
        self.0.gate_cv.notify_all();
        result
    }
}

/// A call admitted through the run's gate, holding its lease (SPEC LSE-7, LSE-10). Finish it with
/// [`CallSlot::complete`] on successful dispatch or [`CallSlot::release`] on failure; dropping
/// an unfinished slot (an error path, a panic, an abandoned stream) releases the lease. Either
/// way the gate is left in the same critical section as the commit or release.
#[derive(Debug)]
pub struct CallSlot {
    run: Run,
    lease: LeaseId,
    finished: bool,
}

impl CallSlot {
    /// This call's lease.
    pub fn lease(&self) -> LeaseId {
        self.lease
    }

    /// The run the call belongs to.
    pub fn run(&self) -> &Run {
        &self.run
    }

    /// The lease-filtering provider of this call over `inner` (SPEC LSE-8).
    pub fn filtering_provider<P: SnapshotProvider>(&self, inner: P) -> FilteringProvider<P> {
        FilteringProvider::new(inner, self.run.clone(), self.lease)
    }

    /// Commits the lease with the digests actually forwarded (SPEC LSE-3) and leaves the gate.
    /// On a counter overflow the reservations stay held and the gate is still left.
    pub fn complete(mut self, forwarded: &[Digest]) -> Result<(), LeaseError> {
        self.finished = true;
        self.run.finish_and_leave(self.lease, forwarded)
    }

    /// Releases the lease (SPEC LSE-4) and leaves the gate.
    pub fn release(mut self) -> Result<(), LeaseError> {
        self.finished = true;
        self.run.finish_and_leave(self.lease, &[])
    }
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        if !self.finished {
            // Failure or abandonment: give the reservations back (SPEC LSE-9). An overflow here
            // cannot be reported from `drop`; the gate is left regardless.
            let _ = self.run.finish_and_leave(self.lease, &[]);
        }
    }
}
