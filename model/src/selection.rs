//! The required-preservation selection record (SPEC PRE-4).

use crate::entry::EntryId;

/// Output of required-preservation selection (SPEC PRE-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreservationSelection {
    /// Required entry ids sorted by original position.
    pub required_entry_ids: Vec<EntryId>,
    /// The policy's preservation label.
    pub preservation_label: String,
    /// The policy's preservation version.
    pub preservation_version: i32,
}
