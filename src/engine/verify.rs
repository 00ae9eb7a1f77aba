//! The verifier (SPEC VER-1 .. VER-4) over positions.
//!
//! The model searches the proposal and the original linearly for every id. The engine maps
//! every proposed entry to its position in the original once (`pos[j]`, or `NONE` for a new
//! id), builds the inverse map in a reusable buffer, and then runs the four checks of SPEC VER-1
//! as single passes over the required positions and the proposal (checks 2 and 3 share one). Structural equality
//! (SPEC VER-2) of two handles to the same allocation is decided without comparing contents,
//! except that a message holding a NaN is never equal to itself (NaN != NaN).
//!
//! When the proposal's `ToolExchange` entries are exactly the original's (same allocations, same
//! order) the tool analysis of the proposal equals the original's, so the original's analysis is
//! reused instead of re-analysing (check 4). Otherwise, when every proposed `ToolExchange` entry
//! is an original allocation (a reducer dropped or moved some), the proposal's analysis is
//! re-derived from the original's call-id interning (`exchange::analyze_known`), hashing no call
//! id a second time; only new or rebuilt tool entries make the verifier analyse from scratch.

#![allow(
    clippy::cast_possible_truncation,
    reason = "positions are u32 by design: the engine indexes lists of at most u32::MAX entries (module docs)"
)]

use std::collections::BTreeSet;

use hybrid_compaction_model::assembly::AssemblyError;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::verification::{
    RejectionReason, VerificationOutcome, VerificationResult,
};

use super::exchange::{analyze_kinds_interned, analyze_known, analyze_list, kinds_of, Analysis};
use super::hash::{map_with_capacity, set_with_capacity, FxHashMap, FxHashSet};
use super::preserve::{check_unique, required_into, Required};
use super::NONE;

/// Structural equality of messages (SPEC VER-2). The vocabulary's derived equality is exactly
/// SPEC VER-2: role, author, parts pairwise by shape; values by variant and value with IEEE
/// float comparison (NaN != NaN), decimals numerically, raw JSON by text, maps per key, lists
/// element-wise (text equality follows from pairwise text parts).
pub fn structurally_equal(a: &Message, b: &Message) -> bool {
    a == b
}

/// The original side of a verification: its entries and required positions, plus the
/// per-position facts the assembler gathered once per snapshot (kinds; NaN flags when known), so
/// that entries shared with the proposal (same allocation) are never dereferenced.
pub(crate) struct Original<'a> {
    pub entries: &'a [Entry],
    pub kinds: &'a [EntryKind],
    pub nan: Option<&'a [bool]>,
    pub required: &'a Required,
    pub analysis: &'a Analysis,
}

/// Whether the `ToolExchange` entries of `proposed` (mapped by `pos`) are exactly those of the
/// original, same allocations, same order: then the tool analysis is the original's.
pub(crate) fn same_tool_sequence(orig: &Original<'_>, proposed: &[Entry], pos: &[u32]) -> bool {
    let tools = &orig.analysis.tool_positions;
    let mut k = 0usize;
    for (j, e) in proposed.iter().enumerate() {
        if e.kind() != EntryKind::ToolExchange {
            continue;
        }
        let p = pos[j];
        if k >= tools.len() || p != tools[k] || !orig.entries[p as usize].ptr_eq(e) {
            return false;
        }
        k += 1;
    }
    k == tools.len()
}

impl Original<'_> {
    /// SPEC VER-2 between original entry `p` and `e`. The same allocation (what reducers
    /// return) is decided inline from the NaN flag; other handles compare contents out of line.
    #[inline]
    fn same_at(&self, p: usize, e: &Entry) -> bool {
        let o = &self.entries[p];
        if o.ptr_eq(e) {
            !match self.nan {
                Some(nan) => nan[p],
                None => o.holds_nan(),
            }
        } else {
            contents_equal(o, e)
        }
    }
}

/// SPEC VER-2 for two different allocations: their messages compared (out of line, so that
/// [`Original::same_at`] stays small enough to inline).
#[inline(never)]
fn contents_equal(a: &Entry, b: &Entry) -> bool {
    a.message() == b.message()
}

/// What the checks of one verification found (SPEC VER-1), turned into the result record
/// (SPEC VER-3) by [`Findings::finish`] only when a result keeps it (the assembler drops the
/// verdicts of intermediate proposals without building their records).
#[derive(Debug, Default)]
pub(crate) struct Findings {
    /// Rejection reasons in check order, each once (first occurrence kept).
    reasons: Vec<RejectionReason>,
    /// `MissingRequiredEntryIds`, in required order.
    missing: Vec<EntryId>,
    /// `InvalidEntryIds`.
    invalid: BTreeSet<EntryId>,
}

impl Findings {
    /// Adds `reason` unless already present.
    fn reason(&mut self, reason: RejectionReason) {
        if !self.reasons.contains(&reason) {
            self.reasons.push(reason);
        }
    }

    /// Adds `reason` and marks `id` invalid.
    fn reject(&mut self, reason: RejectionReason, id: &EntryId) {
        self.reason(reason);
        self.invalid.insert(id.clone());
    }

    /// Whether the proposal is accepted (no rejection reason, SPEC VER-3).
    pub(crate) fn is_accepted(&self) -> bool {
        self.reasons.is_empty()
    }

    /// The result record (SPEC VER-3) given the original's required ids: accepted iff no
    /// reason.
    pub(crate) fn finish(self, required_ids: &[EntryId]) -> VerificationResult {
        let outcome = if self.reasons.is_empty() {
            VerificationOutcome::Accepted
        } else {
            VerificationOutcome::Rejected
        };
        VerificationResult {
            outcome,
            rejection_reasons: self.reasons,
            missing_required_entry_ids: self.missing,
            invalid_entry_ids: self.invalid,
            preservation_only_fallback_entry_ids: required_ids.to_vec(),
        }
    }
}

/// Fills the scratch inverse map: `inv[pos[j]] = j` for every retained proposal entry `j`.
/// `inv` (all `NONE` between uses) grows to at least `n` slots.
#[inline]
pub(crate) fn fill_inverse(inv: &mut Vec<u32>, n: usize, pos: &[u32]) {
    if inv.len() < n {
        inv.resize(n, NONE);
    }
    debug_assert!(
        inv.iter().all(|&j| j == NONE),
        "scratch inverse map not cleared"
    );
    for (j, &p) in pos.iter().enumerate() {
        if p != NONE {
            inv[p as usize] = j as u32;
        }
    }
}

/// Resets the slots [`fill_inverse`] set, leaving `inv` all `NONE`.
#[inline]
pub(crate) fn clear_inverse(inv: &mut [u32], pos: &[u32]) {
    for &p in pos {
        if p != NONE {
            inv[p as usize] = NONE;
        }
    }
}

/// The four checks of SPEC VER-1 for a duplicate-free proposal whose entry `j` is original entry
/// `pos[j]` (or new when `NONE`). `reuse_original_analysis` says the proposal's tool analysis is
/// the original's (see [`same_tool_sequence`]); otherwise it is computed. `inv` is a scratch buffer (all `NONE` on
/// entry and on exit) of at least `orig.entries.len()` slots.
pub(crate) fn judge(
    orig: &Original<'_>,
    proposed: &[Entry],
    pos: &[u32],
    reuse_original_analysis: bool,
    inv: &mut Vec<u32>,
) -> Findings {
    if reuse_original_analysis {
        judge_analysed(orig, proposed, pos, None, inv)
    } else {
        judge_analysed(orig, proposed, pos, Some(&analyze_list(proposed)), inv)
    }
}

/// [`judge`] given the tool analysis of the proposal (`None`: it is the original's).
fn judge_analysed(
    orig: &Original<'_>,
    proposed: &[Entry],
    pos: &[u32],
    analysis: Option<&Analysis>,
    inv: &mut Vec<u32>,
) -> Findings {
    debug_assert_eq!(pos.len(), proposed.len());
    fill_inverse(inv, orig.entries.len(), pos);
    let mut findings = Findings::default();
    check_required(orig, proposed, inv, &mut findings);
    check_forged_and_retained(orig, proposed, pos, &mut findings);
    // Check 4: tool self-consistency of the proposal.
    match analysis {
        None => tool_check(orig.analysis, orig.entries, &mut findings),
        Some(analysis) => tool_check(analysis, proposed, &mut findings),
    }
    clear_inverse(inv, pos);
    findings
}

/// Check 1 of SPEC VER-1: required preservation, per required id in order (`inv` maps original
/// positions to proposal indices).
fn check_required(orig: &Original<'_>, proposed: &[Entry], inv: &[u32], f: &mut Findings) {
    let mut previous = NONE;
    let mut out_of_order = false;
    for &r in &orig.required.positions {
        let j = inv[r as usize];
        if j == NONE {
            f.missing.push(orig.entries[r as usize].id().clone());
            continue;
        }
        if previous != NONE && j <= previous {
            out_of_order = true;
        }
        previous = j;
        if !orig.same_at(r as usize, &proposed[j as usize]) {
            f.reject(
                RejectionReason::RequiredEntryContentMismatch,
                orig.entries[r as usize].id(),
            );
        }
    }
    if !f.missing.is_empty() {
        f.reason(RejectionReason::MissingRequiredEntry);
    }
    if out_of_order {
        f.reason(RejectionReason::RequiredEntryOutOfOrder);
    }
}

/// Checks 2 and 3 of SPEC VER-1 in one pass over the proposal: a new entry of a structural kind,
/// or holding a block only the provider makes (ENT-8), is forged (check 2); a retained entry whose kind changed, or whose content changed while not
/// required, is mutated (check 3). The reasons are added in check order after the pass (each
/// once), so the record is the one two separate passes give.
fn check_forged_and_retained(
    orig: &Original<'_>,
    proposed: &[Entry],
    pos: &[u32],
    f: &mut Findings,
) {
    let (mut forged, mut mutated) = (false, false);
    for (j, e) in proposed.iter().enumerate() {
        let p = pos[j];
        if p == NONE {
            if !matches!(
                e.kind(),
                EntryKind::ConversationalMessage | EntryKind::Summary
            ) || e.message().has_provider_block()
            {
                forged = true;
                f.invalid.insert(e.id().clone());
            }
            continue;
        }
        let p = p as usize;
        // Same allocation: same kind; content equal unless it holds a NaN.
        let kind_changed = !orig.entries[p].ptr_eq(e) && orig.kinds[p] != e.kind();
        if kind_changed || (!orig.required.flags[p] && !orig.same_at(p, e)) {
            mutated = true;
            f.invalid.insert(e.id().clone());
        }
    }
    if forged {
        f.reason(RejectionReason::ForgedStructuralEntry);
    }
    if mutated {
        f.reason(RejectionReason::RetainedOriginalEntryMutated);
    }
}

/// `Verify(original, original)`: the proposal is the original list itself (same handles, same
/// order), so checks 1 .. 3 can fail only through NaN (a message holding a NaN differs from
/// itself, SPEC VER-2) and check 4 is the original's own analysis. Same result as [`judge`]
/// with the identity mapping, without building it.
pub(crate) fn judge_self(orig: &Original<'_>) -> Findings {
    let mut findings = Findings::default();
    let differs = |p: usize| match orig.nan {
        Some(nan) => nan[p],
        None => orig.entries[p].holds_nan(),
    };
    let any_nan = match orig.nan {
        Some(nan) => nan.contains(&true),
        None => true,
    };
    if any_nan {
        // Check 1: every required entry is present and in order; content differs iff NaN.
        for &r in &orig.required.positions {
            if differs(r as usize) {
                findings.reject(
                    RejectionReason::RequiredEntryContentMismatch,
                    orig.entries[r as usize].id(),
                );
            }
        }
        // Check 2: no new entries. Check 3: kinds are unchanged; non-required content differs
        // iff NaN.
        for p in 0..orig.entries.len() {
            if !orig.required.flags[p] && differs(p) {
                findings.reject(
                    RejectionReason::RetainedOriginalEntryMutated,
                    orig.entries[p].id(),
                );
            }
        }
    }
    // Check 4.
    tool_check(orig.analysis, orig.entries, &mut findings);
    findings
}

/// Check 4 of SPEC VER-1 from the analysis of `list`.
fn tool_check(analysis: &Analysis, list: &[Entry], f: &mut Findings) {
    if analysis.is_valid() {
        return;
    }
    let checks = [
        (RejectionReason::OrphanedToolCall, &analysis.orphaned_calls),
        (
            RejectionReason::OrphanedToolResult,
            &analysis.orphan_results,
        ),
        (
            RejectionReason::DuplicateToolCall,
            &analysis.duplicate_calls,
        ),
        (
            RejectionReason::DuplicateToolResult,
            &analysis.duplicate_results,
        ),
        (RejectionReason::ReorderedToolGroup, &analysis.reordered),
        (RejectionReason::CrossGroupToolResult, &analysis.cross_group),
    ];
    for (reason, positions) in checks {
        if !positions.is_empty() {
            f.reason(reason);
            f.invalid
                .extend(positions.iter().map(|&p| list[p as usize].id().clone()));
        }
    }
}

/// The forward pointer scan of [`map_proposal`]: where the last match was, and how many pointer
/// comparisons are left (a budget of about `2n` keeps the scan O(n) over a whole proposal); and
/// how many id comparisons are left for entries the pointer scan misses.
struct PointerScan {
    cursor: usize,
    budget: usize,
    ids: usize,
}

impl PointerScan {
    /// The position of the same allocation as `e` at or after the cursor, within the budget.
    #[inline]
    fn find(&mut self, original: &[Entry], e: &Entry) -> Option<u32> {
        let mut i = self.cursor;
        while i < original.len() && self.budget > 0 {
            self.budget -= 1;
            if original[i].ptr_eq(e) {
                self.cursor = i + 1;
                return Some(i as u32);
            }
            i += 1;
        }
        None
    }

    /// The position of `e`'s id in `original` (ids unique) by a scan of every id, while the
    /// id budget lasts; `Err` once it would be overdrawn (the caller's index answers instead).
    #[inline]
    fn find_id(&mut self, original: &[Entry], e: &Entry) -> Result<Option<u32>, ()> {
        if self.ids < original.len() {
            return Err(());
        }
        self.ids -= original.len();
        let id = e.id();
        Ok(original.iter().position(|o| o.id() == id).map(|p| p as u32))
    }
}

/// Maps a proposal onto original positions, failing on the first repeated id (SPEC VER-1:
/// duplicates are an argument error, not a rejection).
///
/// Reducers mostly return an order-preserving subsequence of the original, sharing its
/// allocations, so each proposed entry is first looked for by *pointer* from a cursor moving
/// forward through the original (no id hashing, no dereference); a bounded budget of `2n`
/// pointer comparisons keeps this O(n) overall. An entry the pointer scan misses (new, mutated
/// or reordered) is looked for by id: by a scan of the original's ids while a second budget of
/// `2n` id comparisons lasts (a proposal that adds a summary or two builds no index: a summary
/// costs one scan, not `n` hash insertions), then in the id index, built on first need. `seen`
/// is a scratch buffer (all `NONE` on entry and on exit).
pub(crate) fn map_proposal(
    original: &[Entry],
    index: &mut Option<FxHashMap<EntryId, u32>>,
    proposed: &[Entry],
    seen: &mut Vec<u32>,
    pos: &mut Vec<u32>,
) -> Result<(), AssemblyError> {
    let n = original.len();
    if seen.len() < n {
        seen.resize(n, NONE);
    }
    pos.clear();
    let mut new_ids: FxHashSet<&str> = set_with_capacity(0);
    let mut dup: Option<&Entry> = None;
    let mut scan = PointerScan {
        cursor: 0,
        budget: 2 * n + 16,
        ids: 2 * n,
    };
    for e in proposed {
        let found = scan.find(original, e).or_else(|| {
            if index.is_none() {
                if let Ok(found) = scan.find_id(original, e) {
                    return found;
                }
            }
            index
                .get_or_insert_with(|| index_of(original))
                .get(e.id().as_str())
                .copied()
        });
        let repeated = match found {
            Some(p) => std::mem::replace(&mut seen[p as usize], 0) != NONE,
            None => !new_ids.insert(e.id().as_str()),
        };
        if repeated {
            dup = Some(e);
            break;
        }
        pos.push(found.unwrap_or(NONE));
    }
    clear_inverse(seen, pos);
    match dup {
        Some(e) => Err(AssemblyError::DuplicateEntryId {
            entry_id: e.id().as_str().to_owned(),
        }),
        None => Ok(()),
    }
}

/// The id -> position index of a duplicate-free list.
pub(crate) fn index_of(entries: &[Entry]) -> FxHashMap<EntryId, u32> {
    let mut map = map_with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        map.insert(e.id().clone(), i as u32);
    }
    map
}

/// `Verify(original, proposed)` observing a cancellation token (SPEC VER-5): checked on entry,
/// before any other check.
pub fn verify_cancellable(
    original: &[Entry],
    proposed: &[Entry],
    policy: &Policy,
    cancel: &CancellationToken,
) -> Result<VerificationResult, AssemblyError> {
    cancel.check()?;
    verify(original, proposed, policy)
}

/// `Verify(original, proposed)` (SPEC VER-1, VER-3), without a cancellation token.
pub fn verify(
    original: &[Entry],
    proposed: &[Entry],
    policy: &Policy,
) -> Result<VerificationResult, AssemblyError> {
    // Duplicate ids in either list are an argument error, original first.
    check_unique(original)?;
    check_unique(proposed)?;
    let kinds = kinds_of(original);
    let (analysis, interning) = analyze_kinds_interned(original, &kinds);
    let mut required = Required::default();
    required_into(
        original,
        &kinds,
        None,
        &analysis,
        policy.recent_message_retention_count(),
        &mut required,
    );
    let required_ids = required.ids(original);
    let mut seen = Vec::new();
    let mut pos = Vec::new();
    map_proposal(original, &mut None, proposed, &mut seen, &mut pos)?;
    let orig = Original {
        entries: original,
        kinds: &kinds,
        nan: None,
        required: &required,
        analysis: &analysis,
    };
    // Check 4 on the proposal's own analysis: the original's when the tool entries are the same,
    // else re-derived from the original's call-id interning when they are shared allocations
    // (no call id hashed again), else analysed from scratch.
    if same_tool_sequence(&orig, proposed, &pos) {
        return Ok(judge_analysed(&orig, proposed, &pos, None, &mut seen).finish(&required_ids));
    }
    let tools = &analysis.tool_positions;
    let known = analyze_known(proposed, &pos, original, tools, &interning);
    let analysis = known.unwrap_or_else(|| analyze_list(proposed));
    Ok(judge_analysed(&orig, proposed, &pos, Some(&analysis), &mut seen).finish(&required_ids))
}
