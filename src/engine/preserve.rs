//! Required-preservation selection (SPEC PRE-1 .. PRE-4) in a constant number of linear passes.
//!
//! Given the positional tool analysis (`Analysis`) of a list, `required_into` marks a flag
//! per position: required kinds and reference-less recovered bodies (one pass, the durable set
//! hashed only when the list has recovered bodies at all, and with the assembler's per-position
//! digest flags only from entries that carry digests), groups and incomplete entries (one pass
//! over the groups), and the last `retention` recency units (a backward walk over the tail only,
//! after marking group membership). No id is ever searched for: everything is by position.

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::assembly::AssemblyError;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::selection::PreservationSelection;

use super::exchange::{analyze_kinds, kinds_of, Analysis};
use super::hash::{set_with_capacity, FxHashSet};
use super::NONE;

/// Required positions of one list: a flag per position plus the ascending positions.
#[derive(Debug, Clone, Default)]
pub(crate) struct Required {
    pub flags: Vec<bool>,
    pub positions: Vec<u32>,
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
/// digest flags `refs` only those that carry digests).
pub(crate) fn durable_set_kinds(
    entries: &[Entry],
    kinds: &[EntryKind],
    refs: Option<&[bool]>,
) -> FxHashSet<Digest> {
    let mut set = set_with_capacity(16);
    for (i, (e, k)) in entries.iter().zip(kinds).enumerate() {
        if matches!(k, EntryKind::ArtifactReference | EntryKind::ToolExchange)
            && refs.is_none_or(|r| r[i])
        {
            set.extend(e.artifact_reference_digests().iter().copied());
        }
    }
    set
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
    Entry(u32),
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
    let n = entries.len();
    let flags = &mut out.flags;
    flags.clear();
    flags.resize(n, false);

    // SPEC PRE-1.1 / PRE-1.2: required kinds and reference-less recovered bodies.
    let mut segments: Vec<u32> = Vec::new();
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
        let durable = durable_set_kinds(entries, kinds, refs);
        for &i in &segments {
            if !is_durable(&entries[i as usize], &durable) {
                flags[i as usize] = true;
            }
        }
    }

    // SPEC PRE-1.3 / PRE-1.4: complete reference-bearing groups, and every incomplete group.
    for g in &analysis.groups {
        let results = analysis.results_of(g);
        let keep = !g.complete || results.iter().any(|&r| has_refs(entries, refs, r as usize));
        if keep {
            flags[g.call_pos as usize] = true;
            for &r in results {
                flags[r as usize] = true;
            }
        }
    }
    // SPEC PRE-1.4: orphan-result entries and every entry answering a duplicate-result id.
    for &p in analysis
        .orphan_results
        .iter()
        .chain(&analysis.duplicate_results)
    {
        flags[p as usize] = true;
    }

    // SPEC PRE-1.5 / PRE-3: recency units. An entry in several groups belongs to the last.
    // Units are ordered by their first entry, so the last `retention` units are found walking
    // backwards from the end: a conversational entry, a tool entry outside every group, or the
    // first (in list order) remaining member of a group starts a unit. Only the tail is walked.
    let keep = usize::try_from(retention).unwrap_or(0);
    if keep > 0 {
        let mut member: Vec<u32> = Vec::new();
        let mut first: Vec<u32> = Vec::new();
        if !analysis.groups.is_empty() {
            member.resize(n, NONE);
            for (gi, g) in analysis.groups.iter().enumerate() {
                member[g.call_pos as usize] = gi as u32;
                for &r in analysis.results_of(g) {
                    member[r as usize] = gi as u32;
                }
            }
            first.resize(analysis.groups.len(), NONE);
            for (gi, g) in analysis.groups.iter().enumerate() {
                for &p in std::iter::once(&g.call_pos).chain(analysis.results_of(g)) {
                    if member[p as usize] == gi as u32 && p < first[gi] {
                        first[gi] = p;
                    }
                }
            }
        }
        let mut taken = 0usize;
        let mut i = n;
        while taken < keep && i > 0 {
            i -= 1;
            let unit = match kinds[i] {
                EntryKind::ConversationalMessage => Some(Unit::Entry(i as u32)),
                EntryKind::ToolExchange => {
                    let g = if member.is_empty() { NONE } else { member[i] };
                    if g == NONE {
                        Some(Unit::Entry(i as u32))
                    } else if first[g as usize] == i as u32 {
                        Some(Unit::Group(g))
                    } else {
                        None
                    }
                }
                _ => None,
            };
            match unit {
                None => {}
                Some(Unit::Entry(p)) => {
                    taken += 1;
                    flags[p as usize] = true;
                }
                Some(Unit::Group(g)) => {
                    taken += 1;
                    let g = &analysis.groups[g as usize];
                    flags[g.call_pos as usize] = true;
                    for &r in analysis.results_of(g) {
                        flags[r as usize] = true;
                    }
                }
            }
        }
    }

    out.positions.clear();
    out.positions.reserve(n);
    out.positions.extend(
        flags
            .iter()
            .enumerate()
            .filter(|(_, &f)| f)
            .map(|(i, _)| i as u32),
    );
}

/// Required ids of `entries` by position (SPEC PRE-1 .. PRE-3); duplicate ids are an error.
pub fn required_ids(entries: &[Entry], retention: i32) -> Result<Vec<EntryId>, AssemblyError> {
    check_unique(entries)?;
    let kinds = kinds_of(entries);
    let analysis = analyze_kinds(entries, &kinds);
    let mut req = Required::default();
    required_into(entries, &kinds, None, &analysis, retention, &mut req);
    Ok(req.ids(entries))
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
