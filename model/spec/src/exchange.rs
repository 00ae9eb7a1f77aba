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
    let calls = call_ownership(entries);
    let owners = result_owners(entries);
    let results = result_lists(entries, &calls, &owners);

    // ---- SPEC EXC-3: one group per call entry, in list order.
    let groups: Vec<ToolGroup> = (0..entries.len())
        .filter_map(|pos| {
            group(
                entries,
                pos,
                &calls,
                &owners,
                &results.cross_group_result_entry_ids,
            )
        })
        .collect();
    let call_entries_where = |pick: fn(&ToolGroup) -> bool| -> Vec<EntryId> {
        groups
            .iter()
            .filter(|g| pick(g))
            .map(|g| g.call_entry_id.clone())
            .collect()
    };
    // OrphanedCallEntryIds: groups not allMatched; ReorderedCallEntryIds: allMatched groups
    // not allInOrder.
    let orphaned_call_entry_ids = call_entries_where(|g| !g.all_matched);
    let reordered_call_entry_ids = call_entries_where(|g| g.all_matched && !g.all_in_order);

    ToolExchangeAnalysis {
        groups,
        orphaned_call_entry_ids,
        orphan_result_entry_ids: results.orphan_result_entry_ids,
        duplicate_call_entry_ids: duplicate_call_entry_ids(entries, &calls),
        duplicate_result_call_ids: results.duplicate_result_call_ids,
        duplicate_result_entry_ids: results.duplicate_result_entry_ids,
        reordered_call_entry_ids,
        cross_group_result_entry_ids: results.cross_group_result_entry_ids,
    }
}

/// Call ownership of a list (SPEC EXC-1).
struct CallOwnership {
    /// Call id -> position of its owner, the first call entry declaring it.
    owner: BTreeMap<String, usize>,
    /// The duplicate call ids (declared more than once), each once.
    duplicate_call_ids: Vec<String>,
}

/// SPEC EXC-1: the owner of a call id is the first call entry declaring it (by position); any
/// further declaration (even inside the same message) makes it a duplicate.
fn call_ownership(entries: &[Entry]) -> CallOwnership {
    let mut owner: BTreeMap<String, usize> = BTreeMap::new();
    let mut duplicate_call_ids: Vec<String> = Vec::new();
    for (pos, entry) in entries.iter().enumerate() {
        for call_id in call_ids(entry) {
            match owner.entry(call_id) {
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
    CallOwnership {
        owner,
        duplicate_call_ids,
    }
}

/// SPEC EXC-1 `DuplicateCallEntryIds`: call entries declaring any duplicate call id (the owner
/// included).
fn duplicate_call_entry_ids(entries: &[Entry], calls: &CallOwnership) -> Vec<EntryId> {
    let mut ids = Vec::new();
    for entry in entries {
        if call_ids(entry)
            .iter()
            .any(|c| calls.duplicate_call_ids.contains(c))
        {
            push_once(&mut ids, entry.id());
        }
    }
    ids
}

/// The result owners of one call id (SPEC EXC-2).
struct ResultOwners {
    call_id: String,
    /// Positions of the result-bearing entries carrying a result for it, in entry order,
    /// repeats kept (two parts in one message count twice).
    owners: Vec<usize>,
}

/// SPEC EXC-2: the result owners of every call id appearing in any result part, in order of
/// first result occurrence.
fn result_owners(entries: &[Entry]) -> Vec<ResultOwners> {
    let mut result_owners: Vec<ResultOwners> = Vec::new();
    for (pos, entry) in entries.iter().enumerate() {
        for call_id in result_call_ids(entry) {
            match result_owners.iter_mut().find(|r| r.call_id == call_id) {
                Some(r) => r.owners.push(pos),
                None => result_owners.push(ResultOwners {
                    call_id,
                    owners: vec![pos],
                }),
            }
        }
    }
    result_owners
}

/// The result owners of `call_id` (none if it has no result).
fn owners_of(result_owners: &[ResultOwners], call_id: &str) -> Vec<usize> {
    result_owners
        .iter()
        .find(|r| r.call_id == call_id)
        .map(|r| r.owners.clone())
        .unwrap_or_default()
}

/// The result lists of SPEC EXC-2.
struct ResultLists {
    duplicate_result_call_ids: Vec<String>,
    duplicate_result_entry_ids: Vec<EntryId>,
    orphan_result_entry_ids: Vec<EntryId>,
    cross_group_result_entry_ids: Vec<EntryId>,
}

/// SPEC EXC-2: duplicate results (ids with more than one owner occurrence, in first-occurrence
/// order, and those owners in list order), orphan results and cross-group results.
fn result_lists(
    entries: &[Entry],
    calls: &CallOwnership,
    result_owners: &[ResultOwners],
) -> ResultLists {
    let mut duplicate_result_call_ids = Vec::new();
    let mut duplicate_result_positions: Vec<usize> = Vec::new();
    for r in result_owners {
        if r.owners.len() > 1 {
            duplicate_result_call_ids.push(r.call_id.clone());
            duplicate_result_positions.extend(r.owners.iter().copied());
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
        if results.iter().any(|c| !calls.owner.contains_key(c)) {
            push_once(&mut orphan_result_entry_ids, entry.id());
        }
        // CrossGroupResultEntryIds: results mapping to two or more distinct call entries.
        let mut call_entries: Vec<usize> = Vec::new();
        for c in &results {
            if let Some(owner) = calls.owner.get(c) {
                if !call_entries.contains(owner) {
                    call_entries.push(*owner);
                }
            }
        }
        if call_entries.len() >= 2 {
            push_once(&mut cross_group_result_entry_ids, entry.id());
        }
    }
    ResultLists {
        duplicate_result_call_ids,
        duplicate_result_entry_ids,
        orphan_result_entry_ids,
        cross_group_result_entry_ids,
    }
}

/// SPEC EXC-3: the group of the entry at `pos`, if it is a call entry.
fn group(
    entries: &[Entry],
    pos: usize,
    calls: &CallOwnership,
    result_owners: &[ResultOwners],
    cross_group_result_entry_ids: &[EntryId],
) -> Option<ToolGroup> {
    let entry = &entries[pos];
    let ids = call_ids(entry);
    if ids.is_empty() {
        return None;
    }
    let facts = call_facts(pos, &ids, calls, result_owners);
    // ResultEntryIds: first owners, de-duplicated, sorted by position.
    let result_entry_ids: Vec<EntryId> = facts
        .first_owner_positions
        .iter()
        .map(|&p| entries[p].id().clone())
        .collect();
    let any_cross_group = result_entry_ids
        .iter()
        .any(|id| cross_group_result_entry_ids.contains(id));
    let complete = facts.all_matched
        && facts.all_in_order
        && !facts.has_duplicate_call
        && !facts.has_duplicate_result
        && !any_cross_group;
    let mut all_entry_ids = vec![entry.id().clone()];
    all_entry_ids.extend(result_entry_ids.iter().cloned());
    Some(ToolGroup {
        call_entry_id: entry.id().clone(),
        call_ids: ids,
        result_entry_ids,
        all_entry_ids,
        all_matched: facts.all_matched,
        all_in_order: facts.all_in_order,
        complete,
    })
}

/// What the call ids of one call entry say about its group (SPEC EXC-3).
struct CallFacts {
    /// Every call id has a result owner.
    all_matched: bool,
    /// Every first result owner sits strictly after the call entry.
    all_in_order: bool,
    /// A call id is a duplicate call id (SPEC EXC-1).
    has_duplicate_call: bool,
    /// A call id has more than one result-owner occurrence (SPEC EXC-2).
    has_duplicate_result: bool,
    /// The first result owner of each call id that has one, de-duplicated, by position.
    first_owner_positions: Vec<usize>,
}

/// The [`CallFacts`] of the call entry at `pos` declaring `ids`.
fn call_facts(
    pos: usize,
    ids: &[String],
    calls: &CallOwnership,
    result_owners: &[ResultOwners],
) -> CallFacts {
    let mut facts = CallFacts {
        all_matched: true,
        all_in_order: true,
        has_duplicate_call: false,
        has_duplicate_result: false,
        first_owner_positions: Vec::new(),
    };
    for call_id in ids {
        if calls.duplicate_call_ids.contains(call_id) {
            facts.has_duplicate_call = true;
        }
        let owners = owners_of(result_owners, call_id);
        if owners.len() > 1 {
            facts.has_duplicate_result = true;
        }
        match owners.first() {
            None => facts.all_matched = false,
            Some(&first) => {
                if first <= pos {
                    facts.all_in_order = false;
                }
                if !facts.first_owner_positions.contains(&first) {
                    facts.first_owner_positions.push(first);
                }
            }
        }
    }
    facts.first_owner_positions.sort_unstable();
    facts
}
