//! Tool-exchange analysis (SPEC EXC-1 .. EXC-3).
//!
//! Only `ToolExchange` entries participate. The analysis is done in three plain passes over the
//! list: call ownership (EXC-1), result ownership (EXC-2), then one group per call entry (EXC-3).
//! Every id list is in list order, each id once, except `duplicate_result_call_ids`, which is in
//! order of first result occurrence.

use std::collections::BTreeMap;

use hybrid_compaction_model::analysis::{ToolExchangeAnalysis, ToolGroup};
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::message::Part;

/// The call ids of a `ToolExchange` entry, in part order (repeats kept).
fn call_ids(entry: &Entry) -> Vec<String> {
    let mut ids = Vec::new();
    if entry.kind() != EntryKind::ToolExchange {
        return ids;
    }
    for part in &entry.message().parts {
        if let Part::Call(call) = part {
            ids.push(call.call_id.clone());
        }
    }
    ids
}

/// The result call ids of a `ToolExchange` entry, in part order (repeats kept).
fn result_call_ids(entry: &Entry) -> Vec<String> {
    let mut ids = Vec::new();
    if entry.kind() != EntryKind::ToolExchange {
        return ids;
    }
    for part in &entry.message().parts {
        if let Part::Result(result) = part {
            ids.push(result.call_id.clone());
        }
    }
    ids
}

/// Pushes `id` unless already present (lists hold each id once).
fn push_once(list: &mut Vec<EntryId>, id: &EntryId) {
    if !list.contains(id) {
        list.push(id.clone());
    }
}

/// Analyzes the tool exchanges of `entries` (SPEC EXC-1 .. EXC-3).
pub fn analyze(entries: &[Entry]) -> ToolExchangeAnalysis {
    // ---- SPEC EXC-1: calls. The owner of a call id is the first call entry declaring it (by
    // position); any further declaration (even inside the same message) makes it a duplicate.
    let mut call_owner: BTreeMap<String, usize> = BTreeMap::new();
    let mut duplicate_call_ids: Vec<String> = Vec::new();
    for (pos, entry) in entries.iter().enumerate() {
        for call_id in call_ids(entry) {
            match call_owner.entry(call_id) {
                std::collections::btree_map::Entry::Occupied(occupied) => {
                    if !duplicate_call_ids.contains(occupied.key()) {
                        duplicate_call_ids.push(occupied.key().clone());
                    }
                }
                std::collections::btree_map::Entry::Vacant(vacant) => {
                    vacant.insert(pos);
                }
            }
        }
    }
    // DuplicateCallEntryIds: call entries declaring any duplicate call id (the owner included).
    let mut duplicate_call_entry_ids = Vec::new();
    for entry in entries {
        if call_ids(entry)
            .iter()
            .any(|c| duplicate_call_ids.contains(c))
        {
            push_once(&mut duplicate_call_entry_ids, entry.id());
        }
    }

    // ---- SPEC EXC-2: results. For every call id appearing in any result part: its result
    // owners are the result-bearing entries carrying a result for it, in entry order, repeats
    // kept (two parts in one message count twice). Kept in order of first result occurrence.
    let mut result_owners: Vec<(String, Vec<usize>)> = Vec::new();
    for (pos, entry) in entries.iter().enumerate() {
        for call_id in result_call_ids(entry) {
            match result_owners.iter_mut().find(|(c, _)| *c == call_id) {
                Some((_, owners)) => owners.push(pos),
                None => result_owners.push((call_id, vec![pos])),
            }
        }
    }
    let owners_of = |call_id: &str| -> Vec<usize> {
        result_owners
            .iter()
            .find(|(c, _)| c == call_id)
            .map(|(_, o)| o.clone())
            .unwrap_or_default()
    };

    // DuplicateResultCallIds: ids with more than one owner occurrence (first-occurrence order);
    // DuplicateResultEntryIds: those owners (list order, each once).
    let mut duplicate_result_call_ids = Vec::new();
    let mut duplicate_result_positions: Vec<usize> = Vec::new();
    for (call_id, owners) in &result_owners {
        if owners.len() > 1 {
            duplicate_result_call_ids.push(call_id.clone());
            duplicate_result_positions.extend(owners.iter().copied());
        }
    }
    let mut duplicate_result_entry_ids = Vec::new();
    let mut orphan_result_entry_ids = Vec::new();
    let mut cross_group_result_entry_ids = Vec::new();
    for (pos, entry) in entries.iter().enumerate() {
        if duplicate_result_positions.contains(&pos) {
            push_once(&mut duplicate_result_entry_ids, entry.id());
        }
        let results = result_call_ids(entry);
        // OrphanResultEntryIds: any result whose call id has no call owner.
        if results.iter().any(|c| !call_owner.contains_key(c)) {
            push_once(&mut orphan_result_entry_ids, entry.id());
        }
        // CrossGroupResultEntryIds: results mapping to two or more distinct call entries.
        let mut call_entries: Vec<usize> = Vec::new();
        for c in &results {
            if let Some(owner) = call_owner.get(c) {
                if !call_entries.contains(owner) {
                    call_entries.push(*owner);
                }
            }
        }
        if call_entries.len() >= 2 {
            push_once(&mut cross_group_result_entry_ids, entry.id());
        }
    }

    // ---- SPEC EXC-3: one group per call entry, in list order.
    let mut groups = Vec::new();
    let mut orphaned_call_entry_ids = Vec::new();
    let mut reordered_call_entry_ids = Vec::new();
    for (pos, entry) in entries.iter().enumerate() {
        let ids = call_ids(entry);
        if ids.is_empty() {
            continue;
        }
        let mut all_matched = true;
        let mut all_in_order = true;
        let mut has_duplicate_call = false;
        let mut has_duplicate_result = false;
        let mut first_owner_positions: Vec<usize> = Vec::new();
        for call_id in &ids {
            if duplicate_call_ids.contains(call_id) {
                has_duplicate_call = true;
            }
            let owners = owners_of(call_id);
            if owners.len() > 1 {
                has_duplicate_result = true;
            }
            match owners.first() {
                None => all_matched = false,
                Some(&first) => {
                    // allInOrder: each first owner sits strictly after the call entry.
                    if first <= pos {
                        all_in_order = false;
                    }
                    if !first_owner_positions.contains(&first) {
                        first_owner_positions.push(first);
                    }
                }
            }
        }
        // ResultEntryIds: first owners, de-duplicated, sorted by position.
        first_owner_positions.sort_unstable();
        let result_entry_ids: Vec<EntryId> = first_owner_positions
            .iter()
            .map(|&p| entries[p].id().clone())
            .collect();
        let any_cross_group = result_entry_ids
            .iter()
            .any(|id| cross_group_result_entry_ids.contains(id));
        let complete = all_matched
            && all_in_order
            && !has_duplicate_call
            && !has_duplicate_result
            && !any_cross_group;
        let mut all_entry_ids = vec![entry.id().clone()];
        all_entry_ids.extend(result_entry_ids.iter().cloned());
        if !all_matched {
            orphaned_call_entry_ids.push(entry.id().clone());
        } else if !all_in_order {
            reordered_call_entry_ids.push(entry.id().clone());
        }
        groups.push(ToolGroup {
            call_entry_id: entry.id().clone(),
            call_ids: ids,
            result_entry_ids,
            all_entry_ids,
            all_matched,
            all_in_order,
            complete,
        });
    }

    ToolExchangeAnalysis {
        groups,
        orphaned_call_entry_ids,
        orphan_result_entry_ids,
        duplicate_call_entry_ids,
        duplicate_result_call_ids,
        duplicate_result_entry_ids,
        reordered_call_entry_ids,
        cross_group_result_entry_ids,
    }
}
