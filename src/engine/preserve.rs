//! Required-preservation selection (SPEC PRE-1 .. PRE-4).
use hybrid_compaction_model::assembly::AssemblyError;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId};
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::selection::PreservationSelection;

/// Required ids of `entries` by position (SPEC PRE-1 .. PRE-3); duplicate ids are an error.
pub fn required_ids(_entries: &[Entry], _retention: i32) -> Result<Vec<EntryId>, AssemblyError> {
    todo!("SPEC PRE-1")
}

/// `SelectRequiredPreservation` (SPEC PRE-4), checking cancellation first.
pub fn select_required(
    _entries: &[Entry],
    _policy: &Policy,
    _cancel: &CancellationToken,
) -> Result<PreservationSelection, AssemblyError> {
    todo!("SPEC PRE-4")
}
