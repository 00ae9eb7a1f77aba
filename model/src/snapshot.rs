//! Snapshots and snapshot providers (SPEC SNAP-1 .. SNAP-3).
//!
//! A [`Snapshot`] is a version (`>= 0`) and an entry list with unique ids. A
//! [`SnapshotProvider`] hands out snapshots; the assembler compares versions only for
//! (in)equality. Two providers ship here: [`StaticProvider`] (always version 0) and
//! [`ScriptedProvider`], which plays a schedule of captures, for tests, vectors and churn.

use std::collections::HashSet;

use crate::cancel::CancellationToken;
use crate::entry::Entry;
use crate::error::ErrorKind;

/// Why a snapshot could not be constructed (SPEC SNAP-1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The version is negative.
    #[error("snapshot version {0} is negative")]
    NegativeVersion(i64),
    /// Two entries share an id.
    #[error("snapshot has duplicate entry id `{0}`")]
    DuplicateEntryId(String),
    /// A lease-filtering provider could not update its run's coordinator (SPEC LSE-8); in
    /// practice only a revision-counter overflow.
    #[error("lease coordinator failed during capture: {0}")]
    Lease(crate::lease::LeaseError),
}

impl SnapshotError {
    /// The language-neutral category.
    pub fn kind(&self) -> ErrorKind {
        match self {
            SnapshotError::NegativeVersion(_) => ErrorKind::OutOfRange,
            SnapshotError::DuplicateEntryId(_) => ErrorKind::InvalidArgument,
            SnapshotError::Lease(e) => e.kind(),
        }
    }
}

/// A captured history: `(version, entries)` (SPEC SNAP-1).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    version: i64,
    entries: Vec<Entry>,
}

impl Snapshot {
    /// Validates version `>= 0` and unique entry ids (SPEC SNAP-1).
    pub fn new(version: i64, entries: Vec<Entry>) -> Result<Snapshot, SnapshotError> {
        if version < 0 {
            return Err(SnapshotError::NegativeVersion(version));
        }
        let mut seen = HashSet::with_capacity(entries.len());
        for e in &entries {
            if !seen.insert(e.id().as_str()) {
                return Err(SnapshotError::DuplicateEntryId(e.id().as_str().to_owned()));
            }
        }
        Ok(Snapshot { version, entries })
    }

    /// The version.
    pub fn version(&self) -> i64 {
        self.version
    }

    /// The entries in order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Takes the entries.
    pub fn into_entries(self) -> Vec<Entry> {
        self.entries
    }
}

/// Source of snapshots for one provider call (SPEC SNAP-2). Contract: versions never decrease
/// and stay equal while the entries are unchanged.
pub trait SnapshotProvider {
    /// Captures the current history.
    fn capture(&mut self) -> Result<Snapshot, SnapshotError>;
}

impl<P: SnapshotProvider + ?Sized> SnapshotProvider for &mut P {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        (**self).capture()
    }
}

impl<P: SnapshotProvider + ?Sized> SnapshotProvider for Box<P> {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        (**self).capture()
    }
}

/// The default provider: fixed entries, always version 0 (SPEC SNAP-3).
#[derive(Debug, Clone)]
pub struct StaticProvider {
    entries: Vec<Entry>,
}

impl StaticProvider {
    /// A provider over fixed entries. Duplicate ids surface at capture (SPEC SNAP-1).
    pub fn new(entries: Vec<Entry>) -> StaticProvider {
        StaticProvider { entries }
    }
}

impl SnapshotProvider for StaticProvider {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        Snapshot::new(0, self.entries.clone())
    }
}

/// A provider that plays a schedule: the k-th capture (0-based) returns step `k`, and every
/// capture past the end repeats the last step. Optionally sets a cancellation token when a
/// chosen capture happens (after building that capture's snapshot).
#[derive(Debug, Clone)]
pub struct ScriptedProvider {
    steps: Vec<(i64, Vec<Entry>)>,
    captures: usize,
    cancel_at: Option<(usize, CancellationToken)>,
}

impl ScriptedProvider {
    /// A provider over `(version, entries)` steps; an empty schedule captures version 0, no entries.
    pub fn new(steps: Vec<(i64, Vec<Entry>)>) -> ScriptedProvider {
        ScriptedProvider {
            steps,
            captures: 0,
            cancel_at: None,
        }
    }

    /// Sets `token` during the `capture`-th capture (0-based).
    pub fn cancel_at_capture(
        mut self,
        capture: usize,
        token: CancellationToken,
    ) -> ScriptedProvider {
        self.cancel_at = Some((capture, token));
        self
    }

    /// How many captures happened so far.
    pub fn captures(&self) -> usize {
        self.captures
    }
}

impl SnapshotProvider for ScriptedProvider {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        let k = self.captures;
        self.captures += 1;
        if let Some((at, token)) = &self.cancel_at {
            if *at == k {
                token.cancel();
            }
        }
        match self.steps.get(k).or_else(|| self.steps.last()) {
            Some((version, entries)) => Snapshot::new(*version, entries.clone()),
            None => Snapshot::new(0, Vec::new()),
        }
    }
}
