//! Diagnostics and contributions (SPEC DIA-1 .. DIA-6).
//!
//! [`build`] maps an assembly result to the privacy-safe diagnostics record (DIA-5) through fixed
//! one-to-one enum mappings (DIA-2), computes per-category contributions with the policy's own
//! estimator (DIA-6), and checks the success / termination instance invariants (DIA-3, DIA-4).

use hybrid_compaction_model::assembly::{AssemblyError, AssemblyResult, Outcome, Stage};
use hybrid_compaction_model::diagnostics::{
    Category, CompactionOutcome, Contribution, Diagnostics, StageCategory,
};
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::policy::Policy;

/// The fixed outcome mapping (SPEC DIA-2).
pub fn outcome_category(outcome: Outcome) -> CompactionOutcome {
    match outcome {
        Outcome::WithinLimit => CompactionOutcome::WithinLimit,
        Outcome::Reduced => CompactionOutcome::Reduced,
        Outcome::PreservationFallback => CompactionOutcome::PreservationFallback,
        Outcome::Irreducible => CompactionOutcome::Irreducible,
        Outcome::ConcurrentMutationLimit => CompactionOutcome::ConcurrentMutationLimit,
    }
}

/// The fixed stage mapping (SPEC DIA-2).
pub fn stage_category(stage: Stage) -> StageCategory {
    match stage {
        Stage::SnapshotCaptured => StageCategory::SnapshotCaptured,
        Stage::RecoverableBodyEviction => StageCategory::RecoverableBodyEviction,
        Stage::ReducerAttempt => StageCategory::ReducerAttempt,
        Stage::RestartedAfterMutation => StageCategory::RestartedAfterMutation,
        Stage::DeterministicFallback => StageCategory::DeterministicFallback,
    }
}

/// The fixed kind mapping (SPEC DIA-2).
pub fn category_of(kind: EntryKind) -> Category {
    match kind {
        EntryKind::SystemInstruction => Category::SystemInstruction,
        EntryKind::AuthoritativeSessionState => Category::AuthoritativeSessionState,
        EntryKind::ApprovalSecurityState => Category::ApprovalSecurityState,
        EntryKind::ToolExchange => Category::ToolExchange,
        EntryKind::ArtifactReference => Category::ArtifactReference,
        EntryKind::ConversationalMessage => Category::ConversationalMessage,
        EntryKind::Summary => Category::Summary,
        EntryKind::RecoverableContextSegment => Category::RecoverableContextSegment,
        EntryKind::OptionalContext => Category::OptionalContext,
    }
}

/// Per-category contributions of `entries` (SPEC DIA-6): one per category present, in category
/// declaration order; size = checked Σ of `estimator` over the category's entries (negative →
/// invalid-operation error).
pub fn contributions(
    entries: &[Entry],
    estimator: &dyn Estimator,
) -> Result<Vec<Contribution>, AssemblyError> {
    let mut out = Vec::new();
    for kind in EntryKind::ALL {
        let mut size: i32 = 0;
        let mut count: i32 = 0;
        for entry in entries.iter().filter(|e| e.kind() == kind) {
            let s = estimator.estimate(entry);
            if s < 0 {
                return Err(AssemblyError::NegativeEstimate {
                    entry_id: entry.id().as_str().to_owned(),
                });
            }
            size = size.checked_add(s).ok_or(AssemblyError::SizeOverflow)?;
            count = count.checked_add(1).ok_or(AssemblyError::SizeOverflow)?;
        }
        if count > 0 {
            out.push(Contribution {
                category: category_of(kind),
                size,
                entry_count: count,
            });
        }
    }
    Ok(out)
}

/// Builds the diagnostics record of `result` (SPEC DIA-5), checking the instance invariants of
/// SPEC DIA-3 (success) and DIA-4 (termination).
pub fn build(result: &AssemblyResult, policy: &Policy) -> Result<Diagnostics, AssemblyError> {
    let invariant = AssemblyError::DiagnosticsInvariant;
    // All numbers >= 0 (DIA-3, DIA-4).
    if result.original_estimated_size < 0
        || result.final_estimated_size < 0
        || result.hard_limit < 0
        || result.attempt_count < 0
        || policy.trigger_threshold() < 0
    {
        return Err(invariant("numbers must be non-negative"));
    }
    let success = result.outcome.is_success();
    let (category_contributions, final_sequence_valid) = if success {
        // SPEC DIA-3: success instance.
        if result.final_estimated_size > result.hard_limit {
            return Err(invariant("success final size exceeds the hard limit"));
        }
        match &result.final_verification {
            Some(v) if v.is_accepted() => {}
            _ => return Err(invariant("success requires an accepted verification")),
        }
        let entries = result
            .final_entries
            .as_ref()
            .ok_or(invariant("success requires final entries"))?;
        // SPEC DIA-6: the same estimator instance that governed the policy decision.
        let contributions = contributions(entries, policy.estimator())?;
        let mut total: i32 = 0;
        for c in &contributions {
            if c.size < 0 || c.entry_count < 1 {
                return Err(invariant("contribution size/entry count out of range"));
            }
            total = total
                .checked_add(c.size)
                .ok_or(AssemblyError::SizeOverflow)?;
        }
        if total != result.final_estimated_size {
            return Err(invariant("contributions do not sum to the final size"));
        }
        (contributions, Some(true))
    } else {
        // SPEC DIA-4: termination instance: no contributions, validity unknown.
        (Vec::new(), None)
    };
    Ok(Diagnostics {
        outcome: outcome_category(result.outcome),
        // SPEC DIA-5: the policy estimator's unit; threshold from the policy.
        measurement_unit: policy.estimator().unit(),
        original_size: result.original_estimated_size,
        final_size: result.final_estimated_size,
        trigger_threshold: policy.trigger_threshold(),
        hard_limit: result.hard_limit,
        attempt_count: result.attempt_count,
        stages: result.stages.iter().map(|s| stage_category(*s)).collect(),
        category_contributions,
        final_sequence_valid,
    })
}
