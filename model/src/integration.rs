//! Snapshot integration and the sanctioned augmentation helper (SPEC SNAP-4).
//!
//! A host's snapshot integration maps the baseline entries of one provider call to a snapshot
//! provider. The only sanctioned way to add a recovered body is [`augment`]: it refuses an id
//! already in the baseline and a segment whose digest is not durable in the baseline (SPEC
//! PRE-2), and otherwise appends the new `RecoverableContextSegment` entry at the end.

use crate::entry::{Entry, EntryError, RecoverableSegment};
use crate::error::ErrorKind;
use std::collections::BTreeSet;

use crate::artifact::Digest;
use crate::entry::EntryKind;

/// Why a recovered segment could not be added (SPEC SNAP-4). Both are argument errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AugmentError {
    /// The id is already used by a baseline entry.
    #[error("entry id `{0}` is already in the baseline")]
    DuplicateId(String),
    /// The segment's digest is not in the baseline's durable set.
    #[error("segment digest is not referenced durably by the baseline")]
    NotDurable,
    /// The segment entry could not be built (blank id).
    #[error(transparent)]
    Entry(#[from] EntryError),
}

impl AugmentError {
    /// The language-neutral category (SPEC ERR-1): always an argument error.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidArgument
    }
}

/// Appends a recovered segment to `baseline` (SPEC SNAP-4): (a) rejects an id already in the
/// baseline, (b) rejects a segment whose digest is not in the baseline's durable set, (c) else
/// appends the new entry at the end.
pub fn augment(
    baseline: &[Entry],
    id: &str,
    segment: RecoverableSegment,
) -> Result<Vec<Entry>, AugmentError> {
    // (a) id already in the baseline.
    if baseline.iter().any(|e| e.id().as_str() == id) {
        return Err(AugmentError::DuplicateId(id.to_owned()));
    }
    // (b) the digest must be durable in the baseline.
    if !durable_digests(baseline).contains(&segment.reference.digest()) {
        return Err(AugmentError::NotDurable);
    }
    // (c) append at the end.
    let entry = Entry::recoverable(id, segment)?;
    let mut out = baseline.to_vec();
    out.push(entry);
    Ok(out)
}

/// The durable set (SPEC PRE-2): the union of the artifact-reference digests of the list's
/// `ArtifactReference` and `ToolExchange` entries. A recoverable segment never makes itself
/// durable.
pub fn durable_digests(entries: &[Entry]) -> BTreeSet<Digest> {
    let mut durable = BTreeSet::new();
    for entry in entries {
        if matches!(
            entry.kind(),
            EntryKind::ArtifactReference | EntryKind::ToolExchange
        ) {
            for digest in entry.artifact_reference_digests() {
                durable.insert(*digest);
            }
        }
    }
    durable
}
