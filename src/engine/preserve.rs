//! Required-preservation selection (SPEC PRE-1 .. PRE-4) in a constant number of linear passes.
//!
//! Given the positional tool analysis (`Analysis`) of a list, `required_into` marks a flag
//! per position: required kinds and reference-less recovered bodies (one pass, the durable set
//! hashed only when the list has recovered bodies at all, and with the assembler's per-position
//! digest flags only from entries that carry digests), groups and incomplete entries (one pass
//! over the groups), and the last `retention` recency units (a backward walk over the tail only,
//! after marking group membership). No id is ever searched for: everything is by position.

#![allow(
    clippy::cast_possible_truncation,
    reason = "positions are u32 by design: the engine indexes lists of at most u32::MAX entries (module docs)"
)]

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::assembly::AssemblyError;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::selection::PreservationSelection;

use super::exchange::{analyze_kinds, kinds_of, Analysis, Group};
use super::hash::{set_with_capacity, FxHashSet};
use super::NONE;

/// Required positions of one list: a flag per position plus the ascending positions.
#[derive(Debug, Clone, Default)]
pub(crate) struct Required {
    /// Per position: the entry is required.
    pub flags: Vec<bool>,
    /// The required positions, strictly ascending (SPEC PRE-4: by position, each once).
    pub positions: Vec<u32>,
    /// The selection's working buffers, kept with its output so that a reused `Required`
    /// (the assembler keeps them across snapshots and calls) allocates nothing.
    scratch: Scratch,
}

/// Working buffers of [`required_into`].
#[derive(Debug, Clone, Default)]
struct Scratch {
    /// Positions of the recovered bodies.
    segments: Vec<u32>,
    /// The durable set (SPEC PRE-2).
    durable: FxHashSet<Digest>,
    /// [`Membership::group_of`].
    group_of: Vec<u32>,
    /// [`Membership::first`].
    first: Vec<u32>,
}

impl Required {
    /// The required ids, by position (SPEC PRE-4).
    pub(crate) fn ids(&self, entries: &[Entry]) -> Vec<EntryId> {
        self.positions
            .iter()
            .map(|&p| entries[p as usize].id().clone())
            .collect()
    }
}

/// Whether entry `i` carries artifact-reference digests: from the per-position flags when the
/// caller gathered them (`refs[i]`), else by looking at the entry.
#[inline]
fn has_refs(entries: &[Entry], refs: Option<&[bool]>, i: usize) -> bool {
    match refs {
        Some(refs) => refs[i],
        None => !entries[i].artifact_reference_digests().is_empty(),
    }
}

/// The durable set (SPEC PRE-2): digests of `ArtifactReference` and `ToolExchange` entries,
/// given the kinds (only reference and tool entries are dereferenced, and with per-position
/// digest flags `refs` only those that carry digests), into `set` (emptied first, its buffer
/// reused).
pub(crate) fn durable_set_into(
    entries: &[Entry],
    kinds: &[EntryKind],
    refs: Option<&[bool]>,
    set: &mut FxHashSet<Digest>,
) {
    set.clear();
    for (i, (e, k)) in entries.iter().zip(kinds).enumerate() {
        if matches!(k, EntryKind::ArtifactReference | EntryKind::ToolExchange)
            && refs.is_none_or(|r| r[i])
        {
            set.extend(e.artifact_reference_digests().iter().copied());
        }
    }
}

/// Whether a recovered body's (single) digest is durable (SPEC PRE-1.2, ASM-8).
pub(crate) fn is_durable(entry: &Entry, durable: &FxHashSet<Digest>) -> bool {
    entry
        .artifact_reference_digest()
        .is_some_and(|d| durable.contains(&d))
}

/// Duplicate ids are an argument error naming the first repeated occurrence (SPEC PRE-1, VER-1).
pub(crate) fn check_unique(entries: &[Entry]) -> Result<(), AssemblyError> {
    let mut seen: FxHashSet<&str> = set_with_capacity(entries.len());
    for e in entries {
        if !seen.insert(e.id().as_str()) {
            return Err(AssemblyError::DuplicateEntryId {
                entry_id: e.id().as_str().to_owned(),
            });
        }
    }
    Ok(())
}

/// A recency unit (SPEC PRE-3): one entry, or a whole group.
#[derive(Clone, Copy)]
enum Unit {
    /// A conversational entry, or a tool entry in no group, by position.
    Entry(u32),
    /// A group, by index in [`Analysis::groups`].
    Group(u32),
}

/// Computes the required positions of `entries` (unique ids assumed) into `out`. `refs`, when
/// given, flags per position whether the entry carries artifact-reference digests (gathered by
/// the assembler in its first pass), so that tool entries need not be dereferenced here.
pub(crate) fn required_into(
    entries: &[Entry],
    kinds: &[EntryKind],
    refs: Option<&[bool]>,
    analysis: &Analysis,
    retention: i32,
    out: &mut Required,
) {
    debug_assert_eq!(kinds.len(), entries.len());
    let Required {
        flags,
        positions,
        scratch,
    } = out;
    flags.clear();
    flags.resize(entries.len(), false);
    mark_kinds_and_bodies(entries, kinds, refs, flags, scratch);
    mark_exchanges(entries, refs, analysis, flags);
    mark_recent_units(kinds, analysis, retention, flags, scratch);
    // SPEC PRE-4: by position, each once.
    positions.clear();
    positions.reserve(entries.len());
    positions.extend(
        flags
            .iter()
            .enumerate()
            .filter(|(_, &f)| f)
            .map(|(i, _)| i as u32),
    );
    debug_assert!(
        positions.iter().all(|&p| !matches!(
            kinds[p as usize],
            EntryKind::Summary | EntryKind::OptionalContext
        )),
        "SPEC PRE-4: summaries and optional context are never required"
    );
}

/// SPEC PRE-1.1 / PRE-1.2: required kinds and reference-less recovered bodies (the durable set
/// is built only when the list has recovered bodies at all).
fn mark_kinds_and_bodies(
    entries: &[Entry],
    kinds: &[EntryKind],
    refs: Option<&[bool]>,
    flags: &mut [bool],
    scratch: &mut Scratch,
) {
    let segments = &mut scratch.segments;
    segments.clear();
    for (i, kind) in kinds.iter().enumerate() {
        match kind {
            EntryKind::SystemInstruction
            | EntryKind::AuthoritativeSessionState
            | EntryKind::ApprovalSecurityState
            | EntryKind::ArtifactReference => flags[i] = true,
            EntryKind::RecoverableContextSegment => segments.push(i as u32),
            _ => {}
        }
    }
    if !segments.is_empty() {
        let durable = &mut scratch.durable;
        durable_set_into(entries, kinds, refs, durable);
        for &i in segments.iter() {
            if !is_durable(&entries[i as usize], durable) {
                flags[i as usize] = true;
            }
        }
    }
}

/// SPEC PRE-1.3 / PRE-1.4: complete reference-bearing groups, every incomplete group, orphan-
/// result entries and every entry answering a duplicate-result id.
fn mark_exchanges(
    entries: &[Entry],
    refs: Option<&[bool]>,
    analysis: &Analysis,
    flags: &mut [bool],
) {
    for g in &analysis.groups {
        let results = analysis.results_of(g);
        if !g.complete || results.iter().any(|&r| has_refs(entries, refs, r as usize)) {
            mark_group(analysis, g, flags);
        }
    }
    for &p in analysis
        .orphan_results
        .iter()
        .chain(&analysis.duplicate_results)
    {
        flags[p as usize] = true;
    }
}

/// Marks the whole group `g` (its `AllEntryIds`).
#[inline]
fn mark_group(analysis: &Analysis, g: &Group, flags: &mut [bool]) {
    flags[g.call_pos as usize] = true;
    for &r in analysis.results_of(g) {
        flags[r as usize] = true;
    }
}

/// SPEC PRE-1.5 / PRE-3: the last `retention` recency units. Units are ordered by their first
/// entry, so they are found walking backwards from the end, over the tail only: a conversational
/// entry, a tool entry outside every group, or the first (in list order) remaining member of a
/// group starts a unit.
fn mark_recent_units(
    kinds: &[EntryKind],
    analysis: &Analysis,
    retention: i32,
    flags: &mut [bool],
    scratch: &mut Scratch,
) {
    let keep = usize::try_from(retention).unwrap_or(0);
    if keep == 0 {
        return;
    }
    let membership = Membership::of(
        kinds.len(),
        analysis,
        std::mem::take(&mut scratch.group_of),
        std::mem::take(&mut scratch.first),
    );
    let mut taken = 0usize;
    let mut i = kinds.len();
    while taken < keep && i > 0 {
        i -= 1;
        match membership.unit_starting_at(kinds, i) {
            None => {}
            Some(Unit::Entry(p)) => {
                taken += 1;
                flags[p as usize] = true;
            }
            Some(Unit::Group(g)) => {
                taken += 1;
                mark_group(analysis, &analysis.groups[g as usize], flags);
            }
        }
    }
    scratch.group_of = membership.group_of;
    scratch.first = membership.first;
}

/// Group membership for the recency walk (SPEC PRE-3): an entry in several groups belongs to the
/// last of them in group order.
struct Membership {
    /// Per position: the index of the group it belongs to, or `NONE` (empty: no groups).
    group_of: Vec<u32>,
    /// Per group: the first position (in list order) of its remaining members.
    first: Vec<u32>,
}

impl Membership {
    /// The membership of `analysis` over `n` positions, in the buffers `group_of` and `first`
    /// (overwritten; their capacity reused).
    fn of(
        n: usize,
        analysis: &Analysis,
        mut group_of: Vec<u32>,
        mut first: Vec<u32>,
    ) -> Membership {
        group_of.clear();
        first.clear();
        if analysis.groups.is_empty() {
            return Membership { group_of, first };
        }
        group_of.resize(n, NONE);
        for (gi, g) in analysis.groups.iter().enumerate() {
            for &p in std::iter::once(&g.call_pos).chain(analysis.results_of(g)) {
                group_of[p as usize] = gi as u32;
            }
        }
        first.resize(analysis.groups.len(), NONE);
        for (gi, g) in analysis.groups.iter().enumerate() {
            for &p in std::iter::once(&g.call_pos).chain(analysis.results_of(g)) {
                if group_of[p as usize] == gi as u32 && p < first[gi] {
                    first[gi] = p;
                }
            }
        }
        Membership { group_of, first }
    }

    /// The recency unit whose first entry is at position `i`, if any.
    #[inline]
    fn unit_starting_at(&self, kinds: &[EntryKind], i: usize) -> Option<Unit> {
        match kinds[i] {
            EntryKind::ConversationalMessage => Some(Unit::Entry(i as u32)),
            EntryKind::ToolExchange => {
                let g = if self.group_of.is_empty() {
                    NONE
                } else {
                    self.group_of[i]
                };
                if g == NONE {
                    Some(Unit::Entry(i as u32))
                } else if self.first[g as usize] == i as u32 {
                    Some(Unit::Group(g))
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

/// Required ids of `entries` by position (SPEC PRE-1 .. PRE-3); duplicate ids are an error.
pub fn required_ids(entries: &[Entry], retention: i32) -> Result<Vec<EntryId>, AssemblyError> {
    check_unique(entries)?;
    Ok(required_ids_of(entries, retention))
}

/// `req(entries)` of a list whose ids are known to be unique (a snapshot's, SPEC SNAP-1).
pub(crate) fn required_ids_of(entries: &[Entry], retention: i32) -> Vec<EntryId> {
    let kinds = kinds_of(entries);
    let analysis = analyze_kinds(entries, &kinds);
    let mut req = Required::default();
    required_into(entries, &kinds, None, &analysis, retention, &mut req);
    req.ids(entries)
}

/// `SelectRequiredPreservation` (SPEC PRE-4), checking cancellation on entry (SPEC ASM-16), as
/// the spec does: selection calls no host code, so nothing can cancel while it runs.
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
