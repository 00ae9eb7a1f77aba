//! The verifier (SPEC VER-1 .. VER-4).
//!
//! `Verify(original, proposed)` judges a proposal against the original list in four checks, in
//! this order (SPEC VER-1): required preservation, forged structural entries, retained identity,
//! tool self-consistency of the proposal. Reasons are reported in check order, each once; no size
//! check is made. [`structurally_equal`] is SPEC VER-2.

use std::collections::BTreeSet;

use crate::exchange::analyze;
use crate::preserve::{check_unique_ids, required_ids};
use hybrid_compaction_model::assembly::AssemblyError;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::message::{FunctionCall, Message, Part};
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::value::{Value, ValueMap};
use hybrid_compaction_model::verification::{
    RejectionReason, VerificationOutcome, VerificationResult,
};

/// Structural equality of messages (SPEC VER-2): role, author, text, part count, then pairwise
/// parts of the same shape.
pub fn structurally_equal(a: &Message, b: &Message) -> bool {
    if a.role != b.role || a.author != b.author {
        return false;
    }
    if a.text_content() != b.text_content() {
        return false;
    }
    if a.parts.len() != b.parts.len() {
        return false;
    }
    a.parts
        .iter()
        .zip(&b.parts)
        .all(|(p, q)| parts_equal(p, q, true))
}

/// Pairwise part equality; `compare_informational` is false for the bridge (SPEC BRG-2).
pub(crate) fn parts_equal(p: &Part, q: &Part, compare_informational: bool) -> bool {
    match (p, q) {
        (Part::Text(x), Part::Text(y)) => x == y,
        (Part::Call(x), Part::Call(y)) => calls_equal(x, y, compare_informational),
        (Part::Result(x), Part::Result(y)) => {
            x.call_id == y.call_id && values_equal(&x.value, &y.value)
        }
        // Blocks: kind, type, JSON text and tokens (ENT-8).
        (Part::Block(x), Part::Block(y)) => x == y,
        // Different shapes are unequal.
        _ => false,
    }
}

fn calls_equal(x: &FunctionCall, y: &FunctionCall, compare_informational: bool) -> bool {
    if x.call_id != y.call_id || x.name != y.name {
        return false;
    }
    if compare_informational && x.informational_only != y.informational_only {
        return false;
    }
    // Arguments: both absent, or equal maps.
    match (&x.arguments, &y.arguments) {
        (None, None) => true,
        (Some(a), Some(b)) => maps_equal(a, b),
        _ => false,
    }
}

/// Value equality of SPEC VER-2: same variant (ENT-4) and equal.
pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::I16(x), Value::I16(y)) => x == y,
        (Value::I32(x), Value::I32(y)) => x == y,
        (Value::I64(x), Value::I64(y)) => x == y,
        (Value::U8(x), Value::U8(y)) => x == y,
        (Value::U32(x), Value::U32(y)) => x == y,
        (Value::U64(x), Value::U64(y)) => x == y,
        // Scalars by value: IEEE comparison, so NaN != NaN.
        (Value::F32(x), Value::F32(y)) => x == y,
        (Value::F64(x), Value::F64(y)) => x == y,
        // Decimals by numeric value (1.50 == 1.5).
        (Value::Decimal(x), Value::Decimal(y)) => x == y,
        // Raw JSON by exact raw text.
        (Value::RawJson(x), Value::RawJson(y)) => x.as_str() == y.as_str(),
        (Value::Map(x), Value::Map(y)) => maps_equal(x, y),
        // Lists element-wise.
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| values_equal(p, q))
        }
        // Different variants (even i32 1 vs i64 1) are unequal.
        _ => false,
    }
}

/// Maps by size and per-key value; key order is irrelevant.
fn maps_equal(a: &ValueMap, b: &ValueMap) -> bool {
    if a.len() != b.len() {
        return false;
    }
    for (key, value) in a {
        match b.get(key) {
            Some(other) if values_equal(value, other) => {}
            _ => return false,
        }
    }
    true
}

/// What the checks of SPEC VER-1 found, in check order.
#[derive(Default)]
struct Findings {
    reasons: Vec<RejectionReason>,
    missing: Vec<EntryId>,
    invalid: BTreeSet<EntryId>,
}

impl Findings {
    /// Adds a reason unless already present (first occurrence kept, SPEC VER-1).
    fn add_reason(&mut self, reason: RejectionReason) {
        if !self.reasons.contains(&reason) {
            self.reasons.push(reason);
        }
    }

    /// Adds a reason and marks `id` invalid.
    fn reject(&mut self, reason: RejectionReason, id: &EntryId) {
        self.add_reason(reason);
        self.invalid.insert(id.clone());
    }

    /// SPEC VER-3: accepted iff no reason.
    fn result(self, required: Vec<EntryId>) -> VerificationResult {
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
            preservation_only_fallback_entry_ids: required,
        }
    }
}

/// The position of `id` in `list`, if present.
fn find(list: &[Entry], id: &EntryId) -> Option<usize> {
    list.iter().position(|e| e.id() == id)
}

/// `Verify(original, proposed)` observing a cancellation token (SPEC VER-5): the token is
/// checked on entry, before any other check, and a cancelled token is the `Cancelled` error.
/// This is the verifier the assembler calls (SPEC ASM-16).
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
    // Duplicate ids in either list are an argument error, not a rejection.
    check_unique_ids(original)?;
    check_unique_ids(proposed)?;
    // Required ids come from `original`.
    let required = required_ids(original, policy.recent_message_retention_count())?;
    let mut findings = Findings::default();
    check_required(original, proposed, &required, &mut findings);
    check_forged(original, proposed, &mut findings);
    check_retained(original, proposed, &required, &mut findings);
    check_tools(proposed, &mut findings);
    Ok(findings.result(required))
}

/// Check 1 of SPEC VER-1: required preservation, per required id in order.
fn check_required(
    original: &[Entry],
    proposed: &[Entry],
    required: &[EntryId],
    findings: &mut Findings,
) {
    let mut previous_position: Option<usize> = None;
    let mut out_of_order = false;
    for id in required {
        let Some(pos) = find(proposed, id) else {
            findings.missing.push(id.clone());
            continue;
        };
        if let Some(prev) = previous_position {
            if pos <= prev {
                out_of_order = true;
            }
        }
        previous_position = Some(pos);
        // Required ids come from `original`, so the lookup always succeeds.
        let content_equal = match find(original, id) {
            Some(opos) => structurally_equal(original[opos].message(), proposed[pos].message()),
            None => true,
        };
        if !content_equal {
            findings.reject(RejectionReason::RequiredEntryContentMismatch, id);
        }
    }
    if !findings.missing.is_empty() {
        findings.add_reason(RejectionReason::MissingRequiredEntry);
    }
    if out_of_order {
        findings.add_reason(RejectionReason::RequiredEntryOutOfOrder);
    }
}

/// Check 2 of SPEC VER-1: forged structural entries (new ids of kinds other than
/// `ConversationalMessage` / `Summary`, or holding a block only the provider makes, ENT-8).
fn check_forged(original: &[Entry], proposed: &[Entry], findings: &mut Findings) {
    for entry in proposed {
        if find(original, entry.id()).is_none()
            && (!matches!(
                entry.kind(),
                EntryKind::ConversationalMessage | EntryKind::Summary
            ) || entry.message().has_provider_block())
        {
            findings.reject(RejectionReason::ForgedStructuralEntry, entry.id());
        }
    }
}

/// Check 3 of SPEC VER-1: retained identity (kind changed, or non-required content changed).
fn check_retained(
    original: &[Entry],
    proposed: &[Entry],
    required: &[EntryId],
    findings: &mut Findings,
) {
    for entry in proposed {
        let Some(opos) = find(original, entry.id()) else {
            continue;
        };
        let original_entry = &original[opos];
        let kind_changed = original_entry.kind() != entry.kind();
        let content_changed = !required.contains(entry.id())
            && !structurally_equal(original_entry.message(), entry.message());
        if kind_changed || content_changed {
            findings.reject(RejectionReason::RetainedOriginalEntryMutated, entry.id());
        }
    }
}

/// Check 4 of SPEC VER-1: tool self-consistency of the proposal (fresh analysis).
fn check_tools(proposed: &[Entry], findings: &mut Findings) {
    let analysis = analyze(proposed);
    let tool_checks = [
        (
            RejectionReason::OrphanedToolCall,
            &analysis.orphaned_call_entry_ids,
        ),
        (
            RejectionReason::OrphanedToolResult,
            &analysis.orphan_result_entry_ids,
        ),
        (
            RejectionReason::DuplicateToolCall,
            &analysis.duplicate_call_entry_ids,
        ),
        (
            RejectionReason::DuplicateToolResult,
            &analysis.duplicate_result_entry_ids,
        ),
        (
            RejectionReason::ReorderedToolGroup,
            &analysis.reordered_call_entry_ids,
        ),
        (
            RejectionReason::CrossGroupToolResult,
            &analysis.cross_group_result_entry_ids,
        ),
    ];
    for (reason, ids) in tool_checks {
        if !ids.is_empty() {
            findings.add_reason(reason);
            findings.invalid.extend(ids.iter().cloned());
        }
    }
}
