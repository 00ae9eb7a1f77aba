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

#![allow(
    clippy::cast_possible_truncation,
    reason = "positions are u32 by design: the engine indexes lists of at most u32::MAX entries (module docs)"
)]

use hybrid_compaction_model::analysis::{ToolExchangeAnalysis, ToolGroup};
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::message::Part;

use super::hash::{map_with_capacity, set_with_capacity, FxHashMap, FxHashSet};
use super::NONE;

/// A half-open range `start..end` of indices into one of the analysis's flat arrays (`u32`
/// halves, `Copy`, unlike `Range<usize>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    /// First index.
    pub start: u32,
    /// One past the last index.
    pub end: u32,
}

impl Span {
    /// The indices as a `usize` range, for slicing.
    #[inline]
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Where one part of a message sits: the entry's position in the analysed list and the part's
/// index in that entry's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct PartAt {
    /// Position of the entry.
    pub pos: u32,
    /// Index of the part among the message's parts.
    pub part: u32,
}

/// One group (SPEC EXC-3), positional.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    /// Position of the call entry.
    pub call_pos: u32,
    /// Range into [`Analysis::group_results`]: first result owners, de-duplicated, by position.
    pub results: Span,
    /// Every call id of the group has a result owner (SPEC EXC-3 *allMatched*).
    pub all_matched: bool,
    /// Every first result owner sits strictly after the call entry (SPEC EXC-3 *allInOrder*).
    pub all_in_order: bool,
    /// SPEC EXC-3 completeness, judged by position.
    pub complete: bool,
    /// A group call id is a duplicate call id or has several result owners.
    pub tainted: bool,
}

/// The analysis of one list (SPEC EXC-1 .. EXC-3) in positions of that list. Every position list
/// is ascending (list order) with each position once (checked in debug builds).
#[derive(Debug, Clone, Default)]
pub(crate) struct Analysis {
    /// One group per call entry, by call position.
    pub groups: Vec<Group>,
    /// The result owners of every group, concatenated (see [`Group::results`]).
    pub group_results: Vec<u32>,
    /// Call entries of groups that are not allMatched (`OrphanedCallEntryIds`).
    pub orphaned_calls: Vec<u32>,
    /// Entries with a result whose call id has no owner (`OrphanResultEntryIds`).
    pub orphan_results: Vec<u32>,
    /// Call entries declaring a duplicate call id, owner included (`DuplicateCallEntryIds`).
    pub duplicate_calls: Vec<u32>,
    /// The first result occurrence of each duplicate-result call id, in first-occurrence order
    /// (`DuplicateResultCallIds`, read from those parts).
    pub duplicate_result_call_ids: Vec<PartAt>,
    /// Result owners of duplicate-result call ids (`DuplicateResultEntryIds`).
    pub duplicate_results: Vec<u32>,
    /// Call entries of allMatched groups that are not allInOrder (`ReorderedCallEntryIds`).
    pub reordered: Vec<u32>,
    /// Result entries answering calls of two or more call entries (`CrossGroupResultEntryIds`).
    pub cross_group: Vec<u32>,
    /// Positions of every `ToolExchange` entry, ascending.
    pub tool_positions: Vec<u32>,
}

/// Whether `v` is strictly ascending (ascending, each element once).
fn strictly_ascending<T: Ord>(v: &[T]) -> bool {
    v.windows(2).all(|w| w[0] < w[1])
}

impl Analysis {
    /// The first result owners of group `g`.
    #[inline]
    pub(crate) fn results_of(&self, g: &Group) -> &[u32] {
        &self.group_results[g.results.range()]
    }

    /// Debug builds: the documented ordering invariant (every position list strictly
    /// ascending, groups by call position, duplicate-result call ids by first occurrence).
    /// Required-preservation, the verifier and [`Analysis::translated_into`] rely on it.
    fn debug_assert_ordered(&self) {
        if !cfg!(debug_assertions) {
            return;
        }
        for list in [
            &self.orphaned_calls,
            &self.orphan_results,
            &self.duplicate_calls,
            &self.duplicate_results,
            &self.reordered,
            &self.cross_group,
            &self.tool_positions,
        ] {
            debug_assert!(strictly_ascending(list), "analysis list out of order");
        }
        let calls: Vec<u32> = self.groups.iter().map(|g| g.call_pos).collect();
        debug_assert!(strictly_ascending(&calls), "groups out of order");
        debug_assert!(
            self.groups
                .iter()
                .all(|g| strictly_ascending(self.results_of(g))),
            "group results out of order"
        );
        debug_assert!(
            strictly_ascending(&self.duplicate_result_call_ids),
            "duplicate-result call ids out of first-occurrence order"
        );
    }

    /// The same analysis for another list holding exactly the same `ToolExchange` entries in
    /// the same order, where `map[p]` is the new position of old position `p` (monotone on
    /// tool positions, so every list stays ascending), written into `out` (its buffers reused).
    pub(crate) fn translated_into(&self, map: &[u32], out: &mut Analysis) {
        fn t(v: &[u32], map: &[u32], out: &mut Vec<u32>) {
            out.clear();
            out.extend(v.iter().map(|&p| map[p as usize]));
        }
        out.groups.clear();
        out.groups.extend(self.groups.iter().map(|g| Group {
            call_pos: map[g.call_pos as usize],
            ..g.clone()
        }));
        t(&self.group_results, map, &mut out.group_results);
        t(&self.orphaned_calls, map, &mut out.orphaned_calls);
        t(&self.orphan_results, map, &mut out.orphan_results);
        t(&self.duplicate_calls, map, &mut out.duplicate_calls);
        out.duplicate_result_call_ids.clear();
        out.duplicate_result_call_ids
            .extend(self.duplicate_result_call_ids.iter().map(|&at| PartAt {
                pos: map[at.pos as usize],
                ..at
            }));
        t(&self.duplicate_results, map, &mut out.duplicate_results);
        t(&self.reordered, map, &mut out.reordered);
        t(&self.cross_group, map, &mut out.cross_group);
        t(&self.tool_positions, map, &mut out.tool_positions);
        out.debug_assert_ordered();
    }

    /// Empties every list, keeping the buffers (an analysis is rebuilt in place, see
    /// [`AnalysisBuilder::finish_into`]).
    pub(crate) fn clear(&mut self) {
        self.groups.clear();
        self.group_results.clear();
        self.orphaned_calls.clear();
        self.orphan_results.clear();
        self.duplicate_calls.clear();
        self.duplicate_result_call_ids.clear();
        self.duplicate_results.clear();
        self.reordered.clear();
        self.cross_group.clear();
        self.tool_positions.clear();
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
#[derive(Debug, Clone, Copy)]
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
#[inline]
fn intern<'a>(map: &mut FxHashMap<&'a str, u32>, recs: &mut Vec<CallRec>, id: &'a str) -> u32 {
    *map.entry(id).or_insert_with(|| {
        recs.push(CallRec::EMPTY);
        (recs.len() - 1) as u32
    })
}

impl CallRec {
    /// The record of a call id not seen yet.
    const EMPTY: CallRec = CallRec {
        owner: NONE,
        duplicate: false,
        results: 0,
        first_result: NONE,
    };
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

/// [`analyze_kinds`] into `out`, building in `buffers` (both emptied first, their capacity
/// reused).
pub(crate) fn analyze_kinds_into(
    entries: &[Entry],
    kinds: &[EntryKind],
    buffers: &mut BuilderBuffers,
    out: &mut Analysis,
) {
    let tools = kinds
        .iter()
        .filter(|k| **k == EntryKind::ToolExchange)
        .count();
    let mut b = AnalysisBuilder::reusing(tools, std::mem::take(buffers));
    for (i, entry) in entries.iter().enumerate() {
        if kinds[i] == EntryKind::ToolExchange {
            b.push(i as u32, entry);
        }
    }
    *buffers = b.finish_into(out);
}

/// The call-id interning of an analysed list: per `ToolExchange` entry (in list order) its part
/// references. Another list made of some of the same entries (same allocations, any order) is
/// analysed again from it by [`analyze_known`] without hashing a call id: equal ids have equal
/// records, different ids different ones, whichever list numbered them.
pub(crate) struct Interning {
    /// Per `ToolExchange` entry, in list order: its range of `part_recs` (the builder's
    /// entries, moved).
    tool: Vec<ToolEntry>,
    /// The part references (see [`AnalysisBuilder::part_recs`]).
    part_recs: Vec<u32>,
    /// The number of records.
    recs: usize,
}

/// [`analyze_kinds`], also returning the interning of the call ids (for [`analyze_known`]).
pub(crate) fn analyze_kinds_interned(
    entries: &[Entry],
    kinds: &[EntryKind],
) -> (Analysis, Interning) {
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
    let analysis = b.analysis();
    let interning = Interning {
        tool: b.tool,
        part_recs: b.part_recs,
        recs: b.recs.len(),
    };
    (analysis, interning)
}

/// The analysis of `proposed` (SPEC EXC-1 .. EXC-3) when each of its `ToolExchange` entries is
/// the same allocation as the entry of `original` at `pos[j]`, a list analysed with
/// `tool_positions` and `interning`: each such entry's parts take their records from the
/// interning instead of hashing their call ids. `None` when some `ToolExchange` entry is new or
/// a different allocation (the caller then analyses by hashing).
pub(crate) fn analyze_known(
    proposed: &[Entry],
    pos: &[u32],
    original: &[Entry],
    tool_positions: &[u32],
    interning: &Interning,
) -> Option<Analysis> {
    let mut b = AnalysisBuilder::with_capacity(0);
    b.recs = vec![CallRec::EMPTY; interning.recs];
    b.tool.reserve(tool_positions.len());
    b.part_recs.reserve(interning.part_recs.len());
    // Proposals mostly keep the original order: try the next tool entry before searching.
    let mut k = 0usize;
    for (j, e) in proposed.iter().enumerate() {
        if e.kind() != EntryKind::ToolExchange {
            continue;
        }
        let p = pos[j];
        if p == NONE || !original[p as usize].ptr_eq(e) {
            return None;
        }
        if tool_positions.get(k) != Some(&p) {
            k = tool_positions.binary_search(&p).ok()?;
        }
        let recs = &interning.part_recs[interning.tool[k].parts.range()];
        b.push_known(j as u32, e, recs);
        k += 1;
    }
    Some(b.finish())
}

/// One pushed `ToolExchange` entry of an [`AnalysisBuilder`].
#[derive(Debug)]
struct ToolEntry {
    /// Position in the analysed list.
    pos: u32,
    /// Its part references: a range into [`AnalysisBuilder::part_recs`].
    parts: Span,
    /// It has at least one call part (a call entry, SPEC EXC-1).
    has_calls: bool,
    /// It has at least one result part (a result-bearing entry, SPEC EXC-2).
    has_results: bool,
}

/// The first result occurrence of a call id: SPEC EXC-2 orders duplicate-result call ids by it.
#[derive(Debug)]
struct FirstResult {
    /// The call id's record.
    rec: u32,
    /// The result part.
    at: PartAt,
}

/// A call id of the most recent call entry, with its record.
struct RecentCall<'a> {
    id: &'a str,
    rec: u32,
}

/// The position-only buffers of an [`AnalysisBuilder`] (no borrowed call ids), kept by the
/// assembler between snapshots and calls so that building an analysis allocates only its hash
/// map ([`AnalysisBuilder::reusing`], [`AnalysisBuilder::finish_into`]).
#[derive(Debug, Default)]
pub(crate) struct BuilderBuffers {
    recs: Vec<CallRec>,
    tool: Vec<ToolEntry>,
    part_recs: Vec<u32>,
    result_order: Vec<FirstResult>,
    firsts: Vec<u32>,
}

/// The analysis built incrementally: the `ToolExchange` entries of a list are pushed in list
/// order (the hashing pass), then [`AnalysisBuilder::finish`] runs the linear post-passes. This
/// lets the assembler fuse the hashing pass with its first estimation pass over a snapshot,
/// while each entry is in cache.
pub(crate) struct AnalysisBuilder<'a> {
    map: FxHashMap<&'a str, u32>,
    recs: Vec<CallRec>,
    /// The pushed entries, in list order.
    tool: Vec<ToolEntry>,
    /// Per part of every pushed entry: its record, [`RESULT_BIT`] set for result parts.
    part_recs: Vec<u32>,
    /// Records in order of first result occurrence.
    result_order: Vec<FirstResult>,
    /// The call ids (and records) of the most recent call entry, when it has at most
    /// [`RECENT_MAX`] of them: results usually answer the calls just before them, so they are
    /// matched here by string comparison instead of a hash lookup (the map holds the same
    /// record for the same id, so the outcome is identical).
    recent: Vec<RecentCall<'a>>,
    /// Scratch of [`AnalysisBuilder::group_into`].
    firsts: Vec<u32>,
}

/// The most call ids per entry that [`AnalysisBuilder`] matches results against linearly.
const RECENT_MAX: usize = 8;

impl<'a> AnalysisBuilder<'a> {
    /// An empty builder with room for about `tools` tool entries.
    pub(crate) fn with_capacity(tools: usize) -> AnalysisBuilder<'a> {
        AnalysisBuilder::reusing(tools, BuilderBuffers::default())
    }

    /// An empty builder with room for about `tools` tool entries, in the buffers `buffers`
    /// (emptied; their capacity kept).
    pub(crate) fn reusing(tools: usize, buffers: BuilderBuffers) -> AnalysisBuilder<'a> {
        let BuilderBuffers {
            mut recs,
            mut tool,
            mut part_recs,
            mut result_order,
            firsts,
        } = buffers;
        recs.clear();
        tool.clear();
        part_recs.clear();
        result_order.clear();
        recs.reserve(tools * 2);
        tool.reserve(tools);
        part_recs.reserve(tools * 2);
        result_order.reserve(tools);
        AnalysisBuilder {
            map: map_with_capacity(tools * 2),
            recs,
            tool,
            part_recs,
            result_order,
            recent: Vec::with_capacity(RECENT_MAX),
            firsts,
        }
    }

    /// Adds the `ToolExchange` entry at position `i` (positions strictly increasing).
    pub(crate) fn push(&mut self, i: u32, entry: &'a Entry) {
        debug_assert!(
            self.tool.last().is_none_or(|t| t.pos < i),
            "tool entries pushed out of list order"
        );
        let start = self.part_recs.len() as u32;
        let (mut has_calls, mut has_results) = (false, false);
        for (pi, part) in entry.message().parts.iter().enumerate() {
            match part {
                Part::Call(call) => {
                    if !has_calls {
                        self.recent.clear();
                    }
                    has_calls = true;
                    self.push_call(i, call.call_id.as_str());
                }
                Part::Result(result) => {
                    has_results = true;
                    let at = PartAt {
                        pos: i,
                        part: pi as u32,
                    };
                    self.push_result(at, result.call_id.as_str());
                }
                Part::Text(_) | Part::Block(_) => {}
            }
        }
        self.tool.push(ToolEntry {
            pos: i,
            parts: Span {
                start,
                end: self.part_recs.len() as u32,
            },
            has_calls,
            has_results,
        });
    }

    /// Adds the `ToolExchange` entry at position `i` (positions strictly increasing) whose
    /// call and result parts have the records `recs` (in part order, [`RESULT_BIT`] set for
    /// results), numbered as this builder's records (see [`analyze_known`]).
    fn push_known(&mut self, i: u32, entry: &Entry, recs: &[u32]) {
        let start = self.part_recs.len() as u32;
        let (mut has_calls, mut has_results) = (false, false);
        let mut next = recs.iter();
        for (pi, part) in entry.message().parts.iter().enumerate() {
            if matches!(part, Part::Text(_) | Part::Block(_)) {
                continue;
            }
            let r = *next.next().expect("one record per call or result part");
            if r & RESULT_BIT == 0 {
                has_calls = true;
                self.push_call_rec(i, r);
            } else {
                has_results = true;
                let at = PartAt {
                    pos: i,
                    part: pi as u32,
                };
                self.push_result_rec(at, r & !RESULT_BIT);
            }
        }
        self.tool.push(ToolEntry {
            pos: i,
            parts: Span {
                start,
                end: self.part_recs.len() as u32,
            },
            has_calls,
            has_results,
        });
    }

    /// A call part of the entry at `i` declaring `id` (SPEC EXC-1: the first declaration owns;
    /// any further one is a duplicate).
    #[inline]
    fn push_call(&mut self, i: u32, id: &'a str) {
        let r = intern(&mut self.map, &mut self.recs, id);
        self.recent.push(RecentCall { id, rec: r });
        self.push_call_rec(i, r);
    }

    /// A call part of the entry at `i` whose call id has record `r`.
    #[inline]
    fn push_call_rec(&mut self, i: u32, r: u32) {
        let rec = &mut self.recs[r as usize];
        if rec.owner == NONE {
            rec.owner = i;
        } else {
            rec.duplicate = true;
        }
        self.part_recs.push(r);
    }

    /// A result part at `at` answering `id` (SPEC EXC-2: every occurrence counts, even two in
    /// one message).
    #[inline]
    fn push_result(&mut self, at: PartAt, id: &'a str) {
        let near = if self.recent.len() <= RECENT_MAX {
            self.recent.iter().find(|c| c.id == id).map(|c| c.rec)
        } else {
            None
        };
        let r = match near {
            Some(r) => r,
            None => intern(&mut self.map, &mut self.recs, id),
        };
        self.push_result_rec(at, r);
    }

    /// A result part at `at` whose call id has record `r`.
    #[inline]
    fn push_result_rec(&mut self, at: PartAt, r: u32) {
        let rec = &mut self.recs[r as usize];
        rec.results += 1;
        if rec.results == 1 {
            rec.first_result = at.pos;
            self.result_order.push(FirstResult { rec: r, at });
        }
        self.part_recs.push(r | RESULT_BIT);
    }

    /// The records of the call parts of pushed entry `t`, in part order.
    #[inline]
    fn call_recs<'s>(&'s self, t: &ToolEntry) -> impl Iterator<Item = &'s CallRec> + 's {
        self.part_recs[t.parts.range()]
            .iter()
            .filter(|&&r| r & RESULT_BIT == 0)
            .map(|&r| &self.recs[r as usize])
    }

    /// The records of the result parts of pushed entry `t`, in part order.
    #[inline]
    fn result_recs<'s>(&'s self, t: &ToolEntry) -> impl Iterator<Item = &'s CallRec> + 's {
        self.part_recs[t.parts.range()]
            .iter()
            .filter(|&&r| r & RESULT_BIT != 0)
            .map(|&r| &self.recs[(r & !RESULT_BIT) as usize])
    }

    /// The analysis of the pushed entries.
    pub(crate) fn finish(mut self) -> Analysis {
        self.analysis()
    }

    /// The analysis of the pushed entries written into `out` (its buffers reused); hands back
    /// the builder's buffers for the next analysis.
    pub(crate) fn finish_into(mut self, out: &mut Analysis) -> BuilderBuffers {
        self.analysis_into(out);
        BuilderBuffers {
            recs: self.recs,
            tool: self.tool,
            part_recs: self.part_recs,
            result_order: self.result_order,
            firsts: self.firsts,
        }
    }

    /// The analysis of the pushed entries, keeping the builder (see [`analyze_kinds_interned`]).
    fn analysis(&mut self) -> Analysis {
        let mut a = Analysis::default();
        self.analysis_into(&mut a);
        a
    }

    /// The analysis of the pushed entries into `a` (emptied first).
    fn analysis_into(&mut self, a: &mut Analysis) {
        a.clear();
        let calls = self.tool.iter().filter(|t| t.has_calls).count();
        a.tool_positions.extend(self.tool.iter().map(|t| t.pos));
        a.groups.reserve(calls);
        a.group_results.reserve(self.tool.len());
        // EXC-2 first: completeness (EXC-3) reads the cross-group list.
        self.result_entries_into(a);
        let mut firsts = std::mem::take(&mut self.firsts);
        self.groups_into(&mut firsts, a);
        self.firsts = firsts;
        a.debug_assert_ordered();
    }

    /// SPEC EXC-2: the duplicate, orphan and cross-group result entries (per result-bearing
    /// entry, in list order), and the duplicate-result call ids (first-occurrence order).
    fn result_entries_into(&self, a: &mut Analysis) {
        for t in self.tool.iter().filter(|t| t.has_results) {
            let (mut dup, mut orphan, mut cross) = (false, false, false);
            let mut first_owner = NONE;
            for rec in self.result_recs(t) {
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
                a.duplicate_results.push(t.pos);
            }
            if orphan {
                a.orphan_results.push(t.pos);
            }
            if cross {
                a.cross_group.push(t.pos);
            }
        }
        for first in &self.result_order {
            if self.recs[first.rec as usize].results > 1 {
                a.duplicate_result_call_ids.push(first.at);
            }
        }
    }

    /// SPEC EXC-1 / EXC-3: one group per call entry, in list order.
    fn groups_into(&self, firsts: &mut Vec<u32>, a: &mut Analysis) {
        for t in self.tool.iter().filter(|t| t.has_calls) {
            self.group_into(t, firsts, a);
        }
    }

    /// The group of call entry `t` (SPEC EXC-3), its membership in the duplicate-call list
    /// (EXC-1) and the orphaned / reordered lists; `firsts` is scratch.
    fn group_into(&self, t: &ToolEntry, firsts: &mut Vec<u32>, a: &mut Analysis) {
        let (mut matched, mut in_order, mut dup_call, mut dup_result) = (true, true, false, false);
        firsts.clear();
        for rec in self.call_recs(t) {
            dup_call |= rec.duplicate;
            dup_result |= rec.results > 1;
            if rec.results == 0 {
                matched = false;
            } else {
                if rec.first_result <= t.pos {
                    in_order = false;
                }
                firsts.push(rec.first_result);
            }
        }
        if dup_call {
            // The owner included (model decision: every call entry declaring a duplicate id).
            a.duplicate_calls.push(t.pos);
        }
        firsts.sort_unstable();
        firsts.dedup();
        let any_cross = firsts
            .iter()
            .any(|p| a.cross_group.binary_search(p).is_ok());
        let start = a.group_results.len() as u32;
        a.group_results.extend_from_slice(firsts);
        let complete = matched && in_order && !dup_call && !dup_result && !any_cross;
        if !matched {
            a.orphaned_calls.push(t.pos);
        } else if !in_order {
            a.reordered.push(t.pos);
        }
        a.groups.push(Group {
            call_pos: t.pos,
            results: Span {
                start,
                end: a.group_results.len() as u32,
            },
            all_matched: matched,
            all_in_order: in_order,
            complete,
            tainted: dup_call || dup_result,
        });
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
    let groups = if unique {
        a.groups
            .iter()
            .map(|g| tool_group(entries, &a, g, g.complete))
            .collect()
    } else {
        // With duplicate ids, "result entry is cross-group" is judged by id (SPEC EXC-3 over
        // ids): an entry sharing its id with a cross-group entry counts as one.
        let cross_ids: FxHashSet<&str> = a
            .cross_group
            .iter()
            .map(|&p| entries[p as usize].id().as_str())
            .collect();
        a.groups
            .iter()
            .map(|g| {
                let any_cross = a
                    .results_of(g)
                    .iter()
                    .any(|&p| cross_ids.contains(entries[p as usize].id().as_str()));
                let complete = g.all_matched && g.all_in_order && !g.tainted && !any_cross;
                tool_group(entries, &a, g, complete)
            })
            .collect()
    };
    ToolExchangeAnalysis {
        groups,
        orphaned_call_entry_ids: ids(entries, &a.orphaned_calls),
        orphan_result_entry_ids: ids_once(entries, &a.orphan_results, unique),
        duplicate_call_entry_ids: ids_once(entries, &a.duplicate_calls, unique),
        duplicate_result_call_ids: a
            .duplicate_result_call_ids
            .iter()
            .map(|&at| result_call_id(entries, at))
            .collect(),
        duplicate_result_entry_ids: ids_once(entries, &a.duplicate_results, unique),
        reordered_call_entry_ids: ids(entries, &a.reordered),
        cross_group_result_entry_ids: ids_once(entries, &a.cross_group, unique),
    }
}

/// The id-based record of positional group `g` (SPEC EXC-3), with its completeness.
fn tool_group(entries: &[Entry], a: &Analysis, g: &Group, complete: bool) -> ToolGroup {
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
        complete,
    }
}

/// The call id of the result part at `at` (SPEC EXC-2 `DuplicateResultCallIds`).
fn result_call_id(entries: &[Entry], at: PartAt) -> String {
    match &entries[at.pos as usize].message().parts[at.part as usize] {
        Part::Result(r) => r.call_id.clone(),
        _ => String::new(), // unreachable: recorded from a result part
    }
}
