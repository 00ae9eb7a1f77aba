//! The verifier's vocabulary: outcomes, rejection reasons and the result record
//! (SPEC VER-1, VER-3).

use std::collections::BTreeSet;

use crate::entry::EntryId;

crate::names::named_enum! {
    /// Verification outcome (SPEC VER-3).
    pub enum VerificationOutcome {
        /// Every check passed.
        Accepted,
        /// At least one rejection reason.
        Rejected,
    }
}

crate::names::named_enum! {
    /// Rejection reasons, in declaration order (SPEC VER-3). Reasons are *reported* in check order
    /// (SPEC VER-1), which differs from this declaration order.
    pub enum RejectionReason {
        /// A required entry is absent from the proposal.
        MissingRequiredEntry,
        /// Required entries appear out of their original order.
        RequiredEntryOutOfOrder,
        /// A required entry's message changed.
        RequiredEntryContentMismatch,
        /// A call entry without all its results.
        OrphanedToolCall,
        /// A result without its call.
        OrphanedToolResult,
        /// A call id declared twice.
        DuplicateToolCall,
        /// A call id answered twice.
        DuplicateToolResult,
        /// A result before its call.
        ReorderedToolGroup,
        /// One result entry answering calls of several call entries.
        CrossGroupToolResult,
        /// A new entry with a structural kind (not `ConversationalMessage` / `Summary`).
        ForgedStructuralEntry,
        /// A retained original entry whose kind or (non-required) content changed.
        RetainedOriginalEntryMutated,
    }
}

/// The verifier's result (SPEC VER-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationResult {
    /// Accepted iff `rejection_reasons` is empty.
    pub outcome: VerificationOutcome,
    /// Reasons in check order, each once (first occurrence kept).
    pub rejection_reasons: Vec<RejectionReason>,
    /// Required ids of the original absent from the proposal, in required order.
    pub missing_required_entry_ids: Vec<EntryId>,
    /// Ids the checks flagged (a set; rendered in ordinal order).
    pub invalid_entry_ids: BTreeSet<EntryId>,
    /// The required ids of the original, always.
    pub preservation_only_fallback_entry_ids: Vec<EntryId>,
}

impl VerificationResult {
    /// Whether the proposal was accepted.
    pub fn is_accepted(&self) -> bool {
        self.outcome == VerificationOutcome::Accepted
    }
}
