//! The tool-exchange analysis record (SPEC EXC-1 .. EXC-3).
//!
//! Computed by `spec::exchange::analyze` (and independently by the engine). Every id list is in
//! list order (position of the entry), each id once, unless a clause says otherwise.

use crate::entry::EntryId;

/// One group per call entry, in list order (SPEC EXC-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolGroup {
    /// The call entry's id.
    pub call_entry_id: EntryId,
    /// Its call ids in part order (repeats inside the message kept).
    pub call_ids: Vec<String>,
    /// The first result owner of each call id that has one, de-duplicated, by position.
    pub result_entry_ids: Vec<EntryId>,
    /// `call_entry_id` followed by `result_entry_ids`.
    pub all_entry_ids: Vec<EntryId>,
    /// Every call id has a result owner.
    pub all_matched: bool,
    /// Every first result owner sits strictly after the call entry.
    pub all_in_order: bool,
    /// The group is complete (SPEC EXC-3).
    pub complete: bool,
}

/// The analysis of one entry list (SPEC EXC-1 .. EXC-3).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolExchangeAnalysis {
    /// Groups, one per call entry, in list order.
    pub groups: Vec<ToolGroup>,
    /// Call entries of groups that are not all-matched.
    pub orphaned_call_entry_ids: Vec<EntryId>,
    /// Entries carrying any result whose call id has no owner.
    pub orphan_result_entry_ids: Vec<EntryId>,
    /// Call entries declaring any duplicate call id.
    pub duplicate_call_entry_ids: Vec<EntryId>,
    /// Call ids with more than one result-owner occurrence, by first result occurrence.
    pub duplicate_result_call_ids: Vec<String>,
    /// The result owners of those call ids.
    pub duplicate_result_entry_ids: Vec<EntryId>,
    /// Call entries of groups that are all-matched but not all-in-order.
    pub reordered_call_entry_ids: Vec<EntryId>,
    /// Result entries whose results map to two or more distinct call entries.
    pub cross_group_result_entry_ids: Vec<EntryId>,
}

impl ToolExchangeAnalysis {
    /// Whether the list has no tool-structure defect of any kind (every list checked by VER-1 step 4 is empty).
    pub fn is_sequence_valid(&self) -> bool {
        self.orphaned_call_entry_ids.is_empty()
            && self.orphan_result_entry_ids.is_empty()
            && self.duplicate_call_entry_ids.is_empty()
            && self.duplicate_result_call_ids.is_empty()
            && self.reordered_call_entry_ids.is_empty()
            && self.cross_group_result_entry_ids.is_empty()
    }
}
