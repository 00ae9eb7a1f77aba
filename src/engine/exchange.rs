//! Tool-exchange analysis (SPEC EXC-1 .. EXC-3) in one hashing pass plus linear post-passes.
//!
//! The model walks the list once per rule and searches lists linearly; the engine interns every
//! call id once into a record (`owner`, `duplicate`, result-owner count, first result position)
//! through one hash map, remembers per part which record it refers to, and then derives every
//! list of the analysis from those records. Cost: O(parts) hash operations, independent of the
//! number of calls per message.
//!
//! Internally the analysis is positional (`Analysis`: entry positions in the analysed list),
//! which is what required-preservation and the verifier consume; [`analyze`] converts it to the
//! id-based vocabulary record.

use hybrid_compaction_model::analysis::{ToolExchangeAnalysis, ToolGroup};
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::message::Part;

use super::hash::{map_with_capacity, set_with_capacity, FxHashMap, FxHashSet};
use super::NONE;

/// One group (SPEC EXC-3), positional.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    /// Position of the call entry.
    pub call_pos: u32,
    /// Range into [`Analysis::group_results`]: first result owners, de-duplicated, by position.
    pub results: (u32, u32),
    pub all_matched: bool,
    pub all_in_order: bool,
    pub complete: bool,
    /// A group call id is a duplicate call id or has several result owners.
    pub tainted: bool,
}

/// The analysis of one list (SPEC EXC-1 .. EXC-3) in positions of that list. Every position list
/// is ascending (list order) with each position once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Analysis {
    pub groups: Vec<Group>,
    pub group_results: Vec<u32>,
    pub orphaned_calls: Vec<u32>,
    pub orphan_results: Vec<u32>,
    pub duplicate_calls: Vec<u32>,
    /// `(entry position, part index)` of the first result occurrence of each duplicate-result
    /// call id, in first-occurrence order.
    pub duplicate_result_call_ids: Vec<(u32, u32)>,
    pub duplicate_results: Vec<u32>,
    pub reordered: Vec<u32>,
    pub cross_group: Vec<u32>,
    /// Positions of every `ToolExchange` entry, ascending.
    pub tool_positions: Vec<u32>,
}

impl Analysis {
    /// The first result owners of group `g`.
    pub(crate) fn results_of(&self, g: &Group) -> &[u32] {
        &self.group_results[g.results.0 as usize..g.results.1 as usize]
    }

    /// The same analysis for another list holding exactly the same `ToolExchange` entries in
    /// the same order, where `map[p]` is the new position of old position `p` (monotone on
    /// tool positions, so every list stays ascending).
    pub(crate) fn translated(&self, map: &[u32]) -> Analysis {
        let t = |v: &[u32]| -> Vec<u32> { v.iter().map(|&p| map[p as usize]).collect() };
        Analysis {
            groups: self
                .groups
                .iter()
                .map(|g| Group {
                    call_pos: map[g.call_pos as usize],
                    ..g.clone()
                })
                .collect(),
            group_results: t(&self.group_results),
            orphaned_calls: t(&self.orphaned_calls),
            orphan_results: t(&self.orphan_results),
            duplicate_calls: t(&self.duplicate_calls),
            duplicate_result_call_ids: self
                .duplicate_result_call_ids
                .iter()
                .map(|&(p, part)| (map[p as usize], part))
                .collect(),
            duplicate_results: t(&self.duplicate_results),
            reordered: t(&self.reordered),
            cross_group: t(&self.cross_group),
            tool_positions: t(&self.tool_positions),
        }
    }

    /// Whether the list has no tool-structure defect (every list checked by VER-1 step 4 is empty).
    pub(crate) fn is_valid(&self) -> bool {
        self.orphaned_calls.is_empty()
            && self.orphan_results.is_empty()
            && self.duplicate_calls.is_empty()
            && self.duplicate_result_call_ids.is_empty()
            && self.reordered.is_empty()
            && self.cross_group.is_empty()
    }
}

/// Per call id record.
struct CallRec {
    /// Position of the owning call entry (first declaration), or `NONE`.
    owner: u32,
    /// Declared more than once (SPEC EXC-1).
    duplicate: bool,
    /// Number of result-owner occurrences (SPEC EXC-2, repeats kept).
    results: u32,
    /// Position of the first result owner.
    first_result: u32,
}

/// The record index of `id`, creating an empty record on first sight.
fn intern<'a>(map: &mut FxHashMap<&'a str, u32>, recs: &mut Vec<CallRec>, id: &'a str) -> u32 {
    *map.entry(id).or_insert_with(|| {
        recs.push(CallRec {
            owner: NONE,
            duplicate: false,
            results: 0,
            first_result: NONE,
        });
        (recs.len() - 1) as u32
    })
}

/// A part reference: record index, with the top bit set for result parts.
const RESULT_BIT: u32 = 1 << 31;

/// The kinds of `entries`, in order (one pass over the entries).
pub(crate) fn kinds_of(entries: &[Entry]) -> Vec<EntryKind> {
    entries.iter().map(Entry::kind).collect()
}

/// Analyzes `entries` positionally (SPEC EXC-1 .. EXC-3).
pub(crate) fn analyze_list(entries: &[Entry]) -> Analysis {
    analyze_kinds(entries, &kinds_of(entries))
}

/// Analyzes `entries` positionally given their kinds (`kinds[i]` is `entries[i].kind()`), so
/// that only `ToolExchange` entries are dereferenced.
pub(crate) fn analyze_kinds(entries: &[Entry], kinds: &[EntryKind]) -> Analysis {
    let tools = kinds
        .iter()
        .filter(|k| **k == EntryKind::ToolExchange)
        .count();
    let mut b = AnalysisBuilder::with_capacity(tools);
    for (i, entry) in entries.iter().enumerate() {
        if kinds[i] == EntryKind::ToolExchange {
            b.push(i as u32, entry);
        }
    }
    b.finish()
}

/// The analysis built incrementally: the `ToolExchange` entries of a list are pushed in list
/// order (the hashing pass), then [`AnalysisBuilder::finish`] runs the linear post-passes. This
/// lets the assembler fuse the hashing pass with its first estimation pass over a snapshot,
/// while each entry is in cache.
pub(crate) struct AnalysisBuilder<'a> {
    map: FxHashMap<&'a str, u32>,
    recs: Vec<CallRec>,
    /// (position, range into part_recs, has calls, has results) per ToolExchange entry.
    tool: Vec<(u32, u32, u32, bool, bool)>,
    part_recs: Vec<u32>,
    /// Record indices in order of first result occurrence, with that occurrence's location.
    result_order: Vec<(u32, u32, u32)>,
    /// The call ids (and records) of the most recent call entry, when it has at most
    /// [`RECENT_MAX`] of them: results usually answer the calls just before them, so they are
    /// matched here by string comparison instead of a hash lookup (the map holds the same
    /// record for the same id, so the outcome is identical).
    recent: Vec<(&'a str, u32)>,
}

/// The most call ids per entry that [`AnalysisBuilder`] matches results against linearly.
const RECENT_MAX: usize = 8;

impl<'a> AnalysisBuilder<'a> {
    /// An empty builder with room for about `tools` tool entries.
    pub(crate) fn with_capacity(tools: usize) -> AnalysisBuilder<'a> {
        AnalysisBuilder {
            map: map_with_capacity(tools * 2),
            recs: Vec::with_capacity(tools * 2),
            tool: Vec::with_capacity(tools),
            part_recs: Vec::with_capacity(tools * 2),
            result_order: Vec::with_capacity(tools),
            recent: Vec::with_capacity(RECENT_MAX),
        }
    }

    /// Adds the `ToolExchange` entry at position `i` (positions strictly increasing).
    pub(crate) fn push(&mut self, i: u32, entry: &'a Entry) {
        let (map, recs, recent) = (&mut self.map, &mut self.recs, &mut self.recent);
        let start = self.part_recs.len() as u32;
        let (mut has_calls, mut has_results) = (false, false);
        for (pi, part) in entry.message().parts.iter().enumerate() {
            match part {
                Part::Call(call) => {
                    if !has_calls {
                        recent.clear();
                    }
                    has_calls = true;
                    let r = intern(map, recs, call.call_id.as_str());
                    recent.push((call.call_id.as_str(), r));
                    let rec = &mut recs[r as usize];
                    // SPEC EXC-1: the first declaration owns; any further one is a duplicate.
                    if rec.owner == NONE {
                        rec.owner = i;
                    } else {
                        rec.duplicate = true;
                    }
                    self.part_recs.push(r);
                }
                Part::Result(result) => {
                    has_results = true;
                    let id = result.call_id.as_str();
                    let near = if recent.len() <= RECENT_MAX {
                        recent.iter().find(|(c, _)| *c == id).map(|&(_, r)| r)
                    } else {
                        None
                    };
                    let r = match near {
                        Some(r) => r,
                        None => intern(map, recs, id),
                    };
                    let rec = &mut recs[r as usize];
                    // SPEC EXC-2: every occurrence counts, even two in one message.
                    rec.results += 1;
                    if rec.results == 1 {
                        rec.first_result = i;
                        self.result_order.push((r, i, pi as u32));
                    }
                    self.part_recs.push(r | RESULT_BIT);
                }
                Part::Text(_) => {}
            }
        }
        self.tool.push((
            i,
            start,
            self.part_recs.len() as u32,
            has_calls,
            has_results,
        ));
    }

    /// The analysis of the pushed entries.
    pub(crate) fn finish(self) -> Analysis {
        let AnalysisBuilder {
            recs,
            tool,
            part_recs,
            result_order,
            ..
        } = self;
        let calls = tool.iter().filter(|t| t.3).count();
        let mut a = Analysis {
            tool_positions: tool.iter().map(|t| t.0).collect(),
            groups: Vec::with_capacity(calls),
            group_results: Vec::with_capacity(tool.len()),
            ..Analysis::default()
        };
        let parts_of = |s: u32, e: u32| &part_recs[s as usize..e as usize];

        // SPEC EXC-2: per result-bearing entry, in list order.
        for &(pos, s, e, _, has_results) in &tool {
            if !has_results {
                continue;
            }
            let (mut dup, mut orphan) = (false, false);
            let mut first_owner = NONE;
            let mut cross = false;
            for &r in parts_of(s, e) {
                if r & RESULT_BIT == 0 {
                    continue;
                }
                let rec = &recs[(r & !RESULT_BIT) as usize];
                dup |= rec.results > 1;
                if rec.owner == NONE {
                    orphan = true;
                } else if first_owner == NONE {
                    first_owner = rec.owner;
                } else if first_owner != rec.owner {
                    cross = true;
                }
            }
            if dup {
                a.duplicate_results.push(pos);
            }
            if orphan {
                a.orphan_results.push(pos);
            }
            if cross {
                a.cross_group.push(pos);
            }
        }
        for &(r, pos, pi) in &result_order {
            if recs[r as usize].results > 1 {
                a.duplicate_result_call_ids.push((pos, pi));
            }
        }

        // SPEC EXC-1 / EXC-3: one group per call entry, in list order.
        let mut firsts: Vec<u32> = Vec::with_capacity(8);
        for &(pos, s, e, has_calls, _) in &tool {
            if !has_calls {
                continue;
            }
            let (mut matched, mut in_order, mut dup_call, mut dup_result) =
                (true, true, false, false);
            firsts.clear();
            for &r in parts_of(s, e) {
                if r & RESULT_BIT != 0 {
                    continue;
                }
                let rec = &recs[r as usize];
                dup_call |= rec.duplicate;
                dup_result |= rec.results > 1;
                if rec.results == 0 {
                    matched = false;
                } else {
                    if rec.first_result <= pos {
                        in_order = false;
                    }
                    firsts.push(rec.first_result);
                }
            }
            if dup_call {
                // The owner included (model decision: every call entry declaring a duplicate id).
                a.duplicate_calls.push(pos);
            }
            firsts.sort_unstable();
            firsts.dedup();
            let any_cross = firsts
                .iter()
                .any(|p| a.cross_group.binary_search(p).is_ok());
            let start = a.group_results.len() as u32;
            a.group_results.extend_from_slice(&firsts);
            let complete = matched && in_order && !dup_call && !dup_result && !any_cross;
            if !matched {
                a.orphaned_calls.push(pos);
            } else if !in_order {
                a.reordered.push(pos);
            }
            a.groups.push(Group {
                call_pos: pos,
                results: (start, a.group_results.len() as u32),
                all_matched: matched,
                all_in_order: in_order,
                complete,
                tainted: dup_call || dup_result,
            });
        }
        a
    }
}

fn ids(entries: &[Entry], positions: &[u32]) -> Vec<EntryId> {
    positions
        .iter()
        .map(|&p| entries[p as usize].id().clone())
        .collect()
}

/// Id lists hold each id once (first occurrence), which matters only for lists with
/// duplicate ids (the public analysis accepts them; selection and verification refuse them).
fn ids_once(entries: &[Entry], positions: &[u32], unique: bool) -> Vec<EntryId> {
    if unique {
        return ids(entries, positions);
    }
    let mut seen: FxHashSet<&str> = set_with_capacity(positions.len());
    positions
        .iter()
        .map(|&p| entries[p as usize].id())
        .filter(|id| seen.insert(id.as_str()))
        .cloned()
        .collect()
}

/// Analyzes the tool exchanges of `entries` (SPEC EXC-1 .. EXC-3).
pub fn analyze(entries: &[Entry]) -> ToolExchangeAnalysis {
    let a = analyze_list(entries);
    let mut all_ids: FxHashSet<&str> = set_with_capacity(entries.len());
    let unique = entries.iter().all(|e| all_ids.insert(e.id().as_str()));
    // With duplicate ids, "result entry is cross-group" is judged by id (SPEC EXC-3 over ids).
    let cross_ids: FxHashSet<&str> = a
        .cross_group
        .iter()
        .map(|&p| entries[p as usize].id().as_str())
        .collect();
    let groups = a
        .groups
        .iter()
        .map(|g| {
            let call = &entries[g.call_pos as usize];
            let call_ids = call
                .message()
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::Call(c) => Some(c.call_id.clone()),
                    _ => None,
                })
                .collect();
            let result_entry_ids = ids(entries, a.results_of(g));
            let mut all_entry_ids = Vec::with_capacity(result_entry_ids.len() + 1);
            all_entry_ids.push(call.id().clone());
            all_entry_ids.extend(result_entry_ids.iter().cloned());
            ToolGroup {
                call_entry_id: call.id().clone(),
                call_ids,
                result_entry_ids,
                all_entry_ids,
                all_matched: g.all_matched,
                all_in_order: g.all_in_order,
                complete: if unique {
                    g.complete
                } else {
                    g.all_matched
                        && g.all_in_order
                        && !g.tainted
                        && !a
                            .results_of(g)
                            .iter()
                            .any(|&p| cross_ids.contains(entries[p as usize].id().as_str()))
                },
            }
        })
        .collect();
    let duplicate_result_call_ids = a
        .duplicate_result_call_ids
        .iter()
        .map(
            |&(pos, pi)| match &entries[pos as usize].message().parts[pi as usize] {
                Part::Result(r) => r.call_id.clone(),
                _ => String::new(), // unreachable: recorded from a result part
            },
        )
        .collect();
    ToolExchangeAnalysis {
        groups,
        orphaned_call_entry_ids: ids(entries, &a.orphaned_calls),
        orphan_result_entry_ids: ids_once(entries, &a.orphan_results, unique),
        duplicate_call_entry_ids: ids_once(entries, &a.duplicate_calls, unique),
        duplicate_result_call_ids,
        duplicate_result_entry_ids: ids_once(entries, &a.duplicate_results, unique),
        reordered_call_entry_ids: ids(entries, &a.reordered),
        cross_group_result_entry_ids: ids_once(entries, &a.cross_group, unique),
    }
}
