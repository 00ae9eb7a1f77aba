//! Required-preservation selection (SPEC PRE-1 .. PRE-4) in a constant number of linear passes.
//!
//! Given the positional tool analysis (`Analysis`) of a list, `required_into` marks a flag
//! per position: required kinds and reference-less recovered bodies (one pass; the durable set
//! consulted only when the list has recovered bodies at all, compared digest by digest when
//! they are few, and with the assembler's per-position digest flags only from entries that
//! carry digests: `Durability`), groups and incomplete entries (one pass over the groups), and
//! the last `retention` recency units (a backward walk over the tail only, after marking group
//! membership). No id is ever searched for: everything is by position.

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
    /// The recovered bodies and their durability (SPEC PRE-2).
    durability: Durability,
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

/// Recovered bodies up to this many are judged by comparing each durable-set source's digests
/// with theirs (a list rarely holds more than a few bodies); more go through a hash set of the
/// durable digests.
const FEW_BODIES: usize = 8;

/// Which recovered bodies of a list are durable (SPEC PRE-2, ASM-8), with its buffers (kept by
/// the assembler across lists: judging allocates nothing once they have grown).
///
/// The durable set is the digests of the `ArtifactReference` and `ToolExchange` entries (only
/// those are dereferenced, and with per-position digest flags `refs` only those that carry
/// digests); a body is durable when its single digest is in it. With at most [`FEW_BODIES`]
/// bodies the set is never built: each source's digests are compared with the bodies' own, and
/// the pass stops once every body is found durable.
#[derive(Debug, Clone, Default)]
pub(crate) struct Durability {
    /// The recovered bodies: position (ascending) and whether durable.
    bodies: Vec<(u32, bool)>,
    /// The durable set, when there are many bodies.
    set: FxHashSet<Digest>,
}

impl Durability {
    /// Judges the recovered bodies of `entries` (given their kinds): afterwards
    /// [`Durability::bodies`] lists them.
    pub(crate) fn judge(&mut self, entries: &[Entry], kinds: &[EntryKind], refs: Option<&[bool]>) {
        self.bodies.clear();
        self.bodies.extend(
            (0u32..)
                .zip(kinds)
                .filter(|(_, k)| **k == EntryKind::RecoverableContextSegment)
                .map(|(i, _)| (i, false)),
        );
        if self.bodies.is_empty() {
            return;
        }
        let digest = |i: u32| entries[i as usize].artifact_reference_digest();
        let sources = entries.iter().zip(kinds).enumerate().filter(|(i, (_, k))| {
            matches!(k, EntryKind::ArtifactReference | EntryKind::ToolExchange)
                && refs.is_none_or(|r| r[*i])
        });
        if self.bodies.len() > FEW_BODIES {
            self.set.clear();
            for (_, (e, _)) in sources {
                self.set
                    .extend(e.artifact_reference_digests().iter().copied());
            }
            for (i, durable) in &mut self.bodies {
                *durable = digest(*i).is_some_and(|d| self.set.contains(&d));
            }
            return;
        }
        let mut wanted = [None; FEW_BODIES];
        for (w, (i, _)) in wanted.iter_mut().zip(&self.bodies) {
            *w = digest(*i);
        }
        let mut left = wanted.iter().filter(|w| w.is_some()).count();
        for (_, (e, _)) in sources {
            if left == 0 {
                break;
            }
            for d in e.artifact_reference_digests() {
                for ((_, durable), w) in self.bodies.iter_mut().zip(&wanted) {
                    if !*durable && *w == Some(*d) {
                        *durable = true;
                        left -= 1;
                    }
                }
            }
        }
    }

    /// The recovered bodies last judged: position and whether durable, by position.
    pub(crate) fn bodies(&self) -> impl Iterator<Item = (u32, bool)> + '_ {
        self.bodies.iter().copied()
    }
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
    for (i, kind) in kinds.iter().enumerate() {
        if matches!(
            kind,
            EntryKind::SystemInstruction
                | EntryKind::AuthoritativeSessionState
                | EntryKind::ApprovalSecurityState
                | EntryKind::ArtifactReference
        ) {
            flags[i] = true;
        }
    }
    scratch.durability.judge(entries, kinds, refs);
    for (i, durable) in scratch.durability.bodies() {
        if !durable {
            flags[i as usize] = true;
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

#[cfg(test)]
mod tests {
    use super::*;
    use hybrid_compaction_model::artifact::ArtifactReference;
    use hybrid_compaction_model::entry::RecoverableSegment;
    use hybrid_compaction_model::message::Message;

    /// A body per digest number in `bodies` (`None`: a body whose digest nothing names) and a
    /// reference per digest number in `refs`, interleaved.
    fn list(bodies: &[Option<u8>], refs: &[u8]) -> Vec<Entry> {
        let reference = |d: u8| ArtifactReference::new(Digest::of(&format!("d{d}")));
        let mut out = Vec::new();
        for i in 0..bodies.len().max(refs.len()) {
            if let Some(&b) = bodies.get(i) {
                let segment = RecoverableSegment {
                    reference: reference(b.unwrap_or(200)),
                    body: format!("body {i}"),
                };
                out.push(Entry::recoverable(format!("b{i}"), segment).expect("body"));
            }
            if let Some(&r) = refs.get(i) {
                let text = Message::text("user", reference(r).text());
                out.push(
                    Entry::new(format!("r{i}"), EntryKind::ArtifactReference, text).expect("ref"),
                );
            }
        }
        out
    }

    /// The definition (SPEC PRE-2): a body is durable when its digest is among the digests of
    /// the list's references and tool exchanges.
    fn durable_by_definition(entries: &[Entry]) -> Vec<(u32, bool)> {
        let set: FxHashSet<Digest> = entries
            .iter()
            .filter(|e| {
                matches!(
                    e.kind(),
                    EntryKind::ArtifactReference | EntryKind::ToolExchange
                )
            })
            .flat_map(|e| e.artifact_reference_digests().iter().copied())
            .collect();
        (0u32..)
            .zip(entries)
            .filter(|(_, e)| e.kind() == EntryKind::RecoverableContextSegment)
            .map(|(i, e)| {
                (
                    i,
                    set.contains(&e.artifact_reference_digest().expect("one digest")),
                )
            })
            .collect()
    }

    /// Both ways of judging (a few bodies, digest by digest; more, through the set) agree with
    /// the definition, at every count of bodies around the switch, with every body named,
    /// none, and every other one; a reused `Durability` forgets the previous list.
    #[test]
    fn durability_matches_its_definition_for_few_and_many_bodies() {
        let mut judged = Durability::default();
        for n in 0..=2 * FEW_BODIES + 1 {
            let digests = |k: usize| (0..n).map(move |i| Some((i % k) as u8));
            let cases: [(Vec<Option<u8>>, Vec<u8>); 4] = [
                (digests(3).collect(), vec![0, 1, 2]),
                (digests(n.max(1)).collect(), vec![]),
                (
                    (0..n).map(|i| (i % 2 == 0).then_some(i as u8)).collect(),
                    (0..n as u8).collect(),
                ),
                (digests(5).collect(), vec![4, 4, 1]),
            ];
            for (bodies, refs) in cases {
                let entries = list(&bodies, &refs);
                let kinds: Vec<EntryKind> = entries.iter().map(Entry::kind).collect();
                judged.judge(&entries, &kinds, None);
                let got: Vec<(u32, bool)> = judged.bodies().collect();
                assert_eq!(got, durable_by_definition(&entries), "{bodies:?} {refs:?}");
            }
        }
    }
}
