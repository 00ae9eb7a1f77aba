//! The lease world of the seam: run scopes, the gate, the ledger and the filtering provider
//! driven one step at a time (SPEC LSE-1 .. LSE-10).
//!
//! Flows and calls are indices a driver allocates in order (flow 0 exists from the start, call
//! `k` is the `k`-th call that entered a gate). Both implementations answer the same
//! [`LeaseWorld`] operations, so a driver that names things and renders the answers (the
//! oracle's `leases` operation, the lease properties) sees a difference between the two answers
//! only where the implementations differ.

use std::collections::{BTreeMap, BTreeSet};

use crate::artifact::Digest;
use crate::lease::{LeaseError, LeaseId, Revision};
use crate::snapshot::{Snapshot, SnapshotError};

/// What entering a gate did (SPEC LSE-7).
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

/// A waiter admitted when the gate was left: its call index and its lease.
pub type Admission = Option<(usize, LeaseId)>;

/// The operations of a lease scenario. `begin` seeds the new run's revision counters (the
/// SPEC LSE-5 seam).
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
    ) -> (Result<(), LeaseError>, Admission);
    /// Abandons admitted call `call` (SPEC LSE-10): as a release whose error nobody sees.
    fn abandon(&mut self, call: usize) -> Admission;
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
