//! Required-preservation selection (SPEC PRE-1 .. PRE-4).
//!
//! [`required_ids`] accumulates the required ids of a list in the five steps of SPEC PRE-1, then
//! returns them sorted by position. [`durable_digests`] is the durable set of SPEC PRE-2, shared
//! by eviction (ASM-8) and snapshot augmentation (SNAP-4). [`recency_units`] is SPEC PRE-3.

use std::collections::BTreeSet;

use crate::exchange::analyze;
use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::assembly::AssemblyError;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::selection::PreservationSelection;

/// Duplicate ids in a list handed to selection or verification are an argument error (SPEC
/// PRE-1, VER-1).
pub(crate) fn check_unique_ids(entries: &[Entry]) -> Result<(), AssemblyError> {
    let mut seen = BTreeSet::new();
    for entry in entries {
        if !seen.insert(entry.id().clone()) {
            return Err(AssemblyError::DuplicateEntryId {
                entry_id: entry.id().as_str().to_owned(),
            });
        }
    }
    Ok(())
}

/// The durable set (SPEC PRE-2), shared with the vocabulary's augmentation helper (SNAP-4),
/// which needs the same rule.
pub use hybrid_compaction_model::integration::durable_digests;

/// Whether a `RecoverableContextSegment` entry's digest is in `durable` (SPEC PRE-1.2, ASM-8).
pub(crate) fn segment_is_durable(entry: &Entry, durable: &BTreeSet<Digest>) -> bool {
    match entry.artifact_reference_digest() {
        Some(digest) => durable.contains(&digest),
        None => false,
    }
}

/// The recency units of a list, in list order (SPEC PRE-3). Each unit is a list of entry ids.
pub fn recency_units(entries: &[Entry]) -> Vec<Vec<EntryId>> {
    let analysis = analyze(entries);
    let mut units: Vec<Vec<EntryId>> = Vec::new();
    let mut groups_met: Vec<usize> = Vec::new();
    for entry in entries {
        match entry.kind() {
            // Each ConversationalMessage is one unit.
            EntryKind::ConversationalMessage => units.push(vec![entry.id().clone()]),
            EntryKind::ToolExchange => {
                // An entry in several groups maps to the last of them in group order.
                let mut group_index = None;
                for (g, group) in analysis.groups.iter().enumerate() {
                    if group.all_entry_ids.contains(entry.id()) {
                        group_index = Some(g);
                    }
                }
                match group_index {
                    // The group's whole AllEntryIds is one unit, when the group is first met.
                    Some(g) => {
                        if !groups_met.contains(&g) {
                            groups_met.push(g);
                            units.push(analysis.groups[g].all_entry_ids.clone());
                        }
                    }
                    // A ToolExchange entry in no group (pure orphan result) is a one-entry unit.
                    None => units.push(vec![entry.id().clone()]),
                }
            }
            // No other kind is a unit or counts toward retention.
            _ => {}
        }
    }
    units
}

/// Required ids of `entries` by position (SPEC PRE-1 .. PRE-3); duplicate ids are an error.
pub fn required_ids(entries: &[Entry], retention: i32) -> Result<Vec<EntryId>, AssemblyError> {
    check_unique_ids(entries)?;
    let mut required: BTreeSet<EntryId> = BTreeSet::new();
    add_required_kinds(entries, &mut required);
    add_exchanges(entries, &mut required);
    add_recent_units(entries, retention, &mut required);

    // SPEC PRE-4: sorted by original position, each once.
    let ids: Vec<EntryId> = entries
        .iter()
        .filter(|e| required.contains(e.id()))
        .map(|e| e.id().clone())
        .collect();
    debug_assert_eq!(ids.len(), required.len(), "every required id once");
    debug_assert!(
        entries.iter().all(|e| !required.contains(e.id())
            || !matches!(e.kind(), EntryKind::Summary | EntryKind::OptionalContext)),
        "SPEC PRE-4: summaries and optional context are never required"
    );
    Ok(ids)
}

/// SPEC PRE-1.1 / PRE-1.2: required kinds, and reference-less recovered bodies (digest not
/// durable).
fn add_required_kinds(entries: &[Entry], required: &mut BTreeSet<EntryId>) {
    let durable = durable_digests(entries);
    for entry in entries {
        match entry.kind() {
            EntryKind::SystemInstruction
            | EntryKind::AuthoritativeSessionState
            | EntryKind::ApprovalSecurityState
            | EntryKind::ArtifactReference => {
                required.insert(entry.id().clone());
            }
            EntryKind::RecoverableContextSegment if !segment_is_durable(entry, &durable) => {
                required.insert(entry.id().clone());
            }
            _ => {}
        }
    }
}

/// SPEC PRE-1.3 / PRE-1.4: complete reference-bearing groups and everything flagged incomplete,
/// regardless of recency.
fn add_exchanges(entries: &[Entry], required: &mut BTreeSet<EntryId>) {
    let analysis = analyze(entries);
    // SPEC PRE-1.3: complete groups with a result entry carrying >= 1 digest.
    for group in &analysis.groups {
        if !group.complete {
            continue;
        }
        let reference_bearing = group.result_entry_ids.iter().any(|id| {
            entries
                .iter()
                .any(|e| e.id() == id && !e.artifact_reference_digests().is_empty())
        });
        if reference_bearing {
            required.extend(group.all_entry_ids.iter().cloned());
        }
    }
    // SPEC PRE-1.4: incomplete groups, orphan results, duplicate results.
    for group in &analysis.groups {
        if !group.complete {
            required.extend(group.all_entry_ids.iter().cloned());
        }
    }
    required.extend(analysis.orphan_result_entry_ids.iter().cloned());
    required.extend(analysis.duplicate_result_entry_ids.iter().cloned());
}

/// SPEC PRE-1.5 / PRE-3: the last `retention` recency units (all, if fewer).
fn add_recent_units(entries: &[Entry], retention: i32, required: &mut BTreeSet<EntryId>) {
    let units = recency_units(entries);
    let keep = usize::try_from(retention.max(0)).unwrap_or(0);
    let start = units.len().saturating_sub(keep);
    for unit in &units[start..] {
        required.extend(unit.iter().cloned());
    }
}

/// `SelectRequiredPreservation` (SPEC PRE-4), checking cancellation on entry (SPEC ASM-16).
/// Selection calls no host code, so nothing can cancel while it runs.
pub fn select_required(
    entries: &[Entry],
    policy: &Policy,
    cancel: &CancellationToken,
) -> Result<PreservationSelection, AssemblyError> {
    if cancel.is_cancelled() {
        return Err(AssemblyError::Cancelled);
    }
    let required_entry_ids = required_ids(entries, policy.recent_message_retention_count())?;
    Ok(PreservationSelection {
        required_entry_ids,
        preservation_label: policy.preservation_label().to_owned(),
        preservation_version: policy.preservation_version(),
    })
}
