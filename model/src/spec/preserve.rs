//! Required-preservation selection (SPEC PRE-1 .. PRE-4).
use crate::assembly::AssemblyError;
use crate::cancel::CancellationToken;
use crate::entry::{Entry, EntryId};
use crate::policy::Policy;
use crate::selection::PreservationSelection;

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
