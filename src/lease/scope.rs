//! Run scopes of one logical call flow (SPEC LSE-6).
//!
//! A [`RunScope`] stands for the reference implementation's `AsyncLocal` slot: the run active in
//! the current logical call flow. Scopes nest through guards, which restore the previous run
//! when dropped; [`RunScope::fork`] hands the active run to a child flow (what an `AsyncLocal`
//! does when a child task starts). See the module docs of [`crate::lease`].

use std::ops::{Deref, DerefMut};

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::lease::{LeaseError, LeaseId, Revision};

use super::run::{CallSlot, Run};

/// The run scopes of one logical call flow (SPEC LSE-6). Starts with no active run.
#[derive(Debug, Default)]
pub struct RunScope {
    current: Option<Run>,
}

impl RunScope {
    /// A flow with no active run.
    pub fn new() -> RunScope {
        RunScope::default()
    }

    /// A flow whose active run is `run` (e.g. a task spawned inside that run).
    pub fn with_run(run: Run) -> RunScope {
        RunScope { current: Some(run) }
    }

    /// A child flow that sees the same active run (or none): nested calls of one run, started
    /// on other threads or tasks, share its state (SPEC LSE-6).
    pub fn fork(&self) -> RunScope {
        RunScope {
            current: self.current.clone(),
        }
    }

    /// The active run, if any.
    pub fn current(&self) -> Option<&Run> {
        self.current.as_ref()
    }

    /// Installs `run` as the active run and returns the previous one. This is the primitive the
    /// guards are built on; prefer [`RunScope::begin_run`] / [`RunScope::ensure_run`].
    pub fn replace(&mut self, run: Option<Run>) -> Option<Run> {
        std::mem::replace(&mut self.current, run)
    }

    /// `BeginRun` (SPEC LSE-6): installs a fresh empty run until the guard drops, then restores
    /// the previous one. The guarded agent begins one around each whole outer run.
    pub fn begin_run(&mut self) -> ScopeGuard<'_> {
        let previous = self.replace(Some(Run::new()));
        ScopeGuard {
            scope: self,
            restore: Some(previous),
        }
    }

    /// `EnsureRunScope` (SPEC LSE-6): reuses the active run (the guard then restores nothing),
    /// or begins a call-local run for the guard's lifetime.
    pub fn ensure_run(&mut self) -> ScopeGuard<'_> {
        if self.current.is_some() {
            ScopeGuard {
                scope: self,
                restore: None,
            }
        } else {
            self.begin_run()
        }
    }

    fn run(&self) -> Result<&Run, LeaseError> {
        self.current.as_ref().ok_or(LeaseError::NoActiveRun)
    }

    /// `TryReserve` on the active run; no run -> [`LeaseError::NoActiveRun`] (SPEC LSE-2).
    pub fn try_reserve(&self, digest: Digest, lease: LeaseId) -> Result<bool, LeaseError> {
        self.run()?.try_reserve(digest, lease)
    }

    /// `Complete` on the active run; no run -> [`LeaseError::NoActiveRun`] (SPEC LSE-3).
    pub fn complete(&self, lease: LeaseId, forwarded: &[Digest]) -> Result<(), LeaseError> {
        self.run()?.complete(lease, forwarded)
    }

    /// `Release` on the active run; no run -> no-op (SPEC LSE-4).
    pub fn release(&self, lease: LeaseId) -> Result<(), LeaseError> {
        match &self.current {
            Some(run) => run.release(lease),
            None => Ok(()),
        }
    }

    /// `GetRevision` on the active run; no run -> [`LeaseError::NoActiveRun`] (SPEC LSE-5).
    pub fn revision(&self, digest: Digest) -> Result<Revision, LeaseError> {
        Ok(self.run()?.revision(digest))
    }

    /// Enters the active run's gate (SPEC LSE-7); no run -> [`LeaseError::NoActiveRun`].
    pub fn enter(&self, cancel: &CancellationToken) -> Result<CallSlot, LeaseError> {
        self.run()?.enter(cancel)
    }
}

/// An open run scope; dropping it restores the run that was active before (SPEC LSE-6).
/// Dereferences to the flow's [`RunScope`], so scopes nest: `scope.begin_run().ensure_run()`.
#[derive(Debug)]
pub struct ScopeGuard<'a> {
    scope: &'a mut RunScope,
    /// `Some(previous)` if this scope installed a run; `None` if it reused the active one.
    restore: Option<Option<Run>>,
}

impl ScopeGuard<'_> {
    /// Whether this scope began its own run (rather than reusing the active one).
    pub fn began_run(&self) -> bool {
        self.restore.is_some()
    }
}

impl Deref for ScopeGuard<'_> {
    type Target = RunScope;
    fn deref(&self) -> &RunScope {
        self.scope
    }
}

impl DerefMut for ScopeGuard<'_> {
    fn deref_mut(&mut self) -> &mut RunScope {
        self.scope
    }
}

impl Drop for ScopeGuard<'_> {
    fn drop(&mut self) {
        if let Some(previous) = self.restore.take() {
            self.scope.current = previous;
        }
    }
}
