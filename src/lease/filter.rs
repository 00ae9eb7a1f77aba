//! The lease-filtering snapshot provider of one call (SPEC LSE-8).
//!
//! Each capture filters the inner snapshot through the run's coordinator: every
//! `RecoverableContextSegment` is offered to `TryReserve(digest, lease)` and kept only if this
//! call's lease holds it, and the provider reports an *effective version* that changes exactly
//! when the inner version or the `(digest, revision)` signature of the segments changes. Own
//! reservations are idempotent and leave revisions alone, so they never cause a restart; another
//! lease releasing a filtered body bumps its revision, which forces a restart that can pick the
//! body up.
//!
//! The whole filtering pass of one capture runs in one critical section of the run's lock, so the
//! signature is a consistent cut of the ledger (the reference takes the lock per digest; one
//! pass is a linearization of that).

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::entry::EntryKind;
use hybrid_compaction_model::lease::{LeaseError, LeaseId, Revision};
use hybrid_compaction_model::snapshot::{Snapshot, SnapshotError, SnapshotProvider};

use super::run::Run;

#[derive(Debug, Clone, PartialEq, Eq)]
struct LastCapture {
    inner_version: i64,
    signature: Vec<(Digest, Revision)>,
    effective_version: i64,
}

/// Wraps one call's snapshot provider, filtering recoverable bodies through the call's lease
/// (SPEC LSE-8). Build it with [`super::CallSlot::filtering_provider`] or [`FilteringProvider::new`].
#[derive(Debug)]
pub struct FilteringProvider<P> {
    inner: P,
    run: Run,
    lease: LeaseId,
    last: Option<LastCapture>,
}

impl<P: SnapshotProvider> FilteringProvider<P> {
    /// A filtering provider for the call holding `lease` in `run`.
    pub fn new(inner: P, run: Run, lease: LeaseId) -> FilteringProvider<P> {
        FilteringProvider {
            inner,
            run,
            lease,
            last: None,
        }
    }

    /// The lease this provider reserves for.
    pub fn lease(&self) -> LeaseId {
        self.lease
    }

    /// The inner version and effective version of the latest capture, if any.
    pub fn last_versions(&self) -> Option<(i64, i64)> {
        self.last
            .as_ref()
            .map(|l| (l.inner_version, l.effective_version))
    }

    /// The `(digest, revision)` signature of the latest capture (sorted by digest).
    pub fn last_signature(&self) -> Option<&[(Digest, Revision)]> {
        self.last.as_ref().map(|l| l.signature.as_slice())
    }

    /// Takes the inner provider back.
    pub fn into_inner(self) -> P {
        self.inner
    }
}

impl<P: SnapshotProvider> SnapshotProvider for FilteringProvider<P> {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        let inner = self.inner.capture()?;
        let inner_version = inner.version();
        let lease = self.lease;
        let (keep, mut signature) = self.run.filter_pass(|ledger| {
            let mut keep: Vec<bool> = Vec::with_capacity(inner.entries().len());
            let mut signature = Vec::new();
            for entry in inner.entries() {
                let digest = (entry.kind() == EntryKind::RecoverableContextSegment)
                    .then(|| entry.recoverable_segment().map(|s| s.reference.digest()))
                    .flatten();
                match digest {
                    Some(d) => {
                        let reserved = ledger.try_reserve(d, lease)?;
                        signature.push((d, ledger.revision(d)));
                        keep.push(reserved);
                    }
                    None => keep.push(true),
                }
            }
            Ok::<_, LeaseError>((keep, signature))
        })?;
        signature.sort_unstable();
        let effective_version = match &self.last {
            None => 0,
            Some(last) if last.inner_version != inner_version || last.signature != signature => {
                last.effective_version
                    .checked_add(1)
                    .ok_or(SnapshotError::Lease(LeaseError::RevisionOverflow))?
            }
            Some(last) => last.effective_version,
        };
        // The kept entries are a subset of a valid snapshot's: their ids are unique (SNAP-1).
        let snapshot = inner.keeping(effective_version, |i, _| keep[i])?;
        self.last = Some(LastCapture {
            inner_version,
            signature,
            effective_version,
        });
        Ok(snapshot)
    }
}
