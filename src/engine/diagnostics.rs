//! Diagnostics and contributions (SPEC DIA-1 .. DIA-6).
//!
//! Contributions are computed in one pass over the final entries (the model makes one pass per
//! category). To report the same error as the model when an estimate is negative or a sum
//! overflows, each category keeps its own first error, and the error of the first category in
//! declaration order wins, exactly the error the model's category-major loop meets first.

use hybrid_compaction_model::assembly::{AssemblyError, AssemblyResult, Outcome, Stage};
use hybrid_compaction_model::diagnostics::{
    Category, CompactionOutcome, Contribution, Diagnostics, StageCategory,
};
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::policy::Policy;

fn outcome_category(o: Outcome) -> CompactionOutcome {
    match o {
        Outcome::WithinLimit => CompactionOutcome::WithinLimit,
        Outcome::Reduced => CompactionOutcome::Reduced,
        Outcome::PreservationFallback => CompactionOutcome::PreservationFallback,
        Outcome::Irreducible => CompactionOutcome::Irreducible,
        Outcome::ConcurrentMutationLimit => CompactionOutcome::ConcurrentMutationLimit,
    }
}

fn stage_category(s: Stage) -> StageCategory {
    match s {
        Stage::SnapshotCaptured => StageCategory::SnapshotCaptured,
        Stage::RecoverableBodyEviction => StageCategory::RecoverableBodyEviction,
        Stage::ReducerAttempt => StageCategory::ReducerAttempt,
        Stage::RestartedAfterMutation => StageCategory::RestartedAfterMutation,
        Stage::DeterministicFallback => StageCategory::DeterministicFallback,
    }
}

const CATEGORIES: [Category; 9] = [
    Category::SystemInstruction,
    Category::AuthoritativeSessionState,
    Category::ApprovalSecurityState,
    Category::ToolExchange,
    Category::ArtifactReference,
    Category::ConversationalMessage,
    Category::Summary,
    Category::RecoverableContextSegment,
    Category::OptionalContext,
];

fn kind_index(k: EntryKind) -> usize {
    match k {
        EntryKind::SystemInstruction => 0,
        EntryKind::AuthoritativeSessionState => 1,
        EntryKind::ApprovalSecurityState => 2,
        EntryKind::ToolExchange => 3,
        EntryKind::ArtifactReference => 4,
        EntryKind::ConversationalMessage => 5,
        EntryKind::Summary => 6,
        EntryKind::RecoverableContextSegment => 7,
        EntryKind::OptionalContext => 8,
    }
}

/// Per-category contributions (SPEC DIA-6): one per category present, in declaration order.
pub fn contributions(
    entries: &[Entry],
    estimator: &dyn Estimator,
) -> Result<Vec<Contribution>, AssemblyError> {
    let mut sizes = [0i32; 9];
    let mut counts = [0i32; 9];
    let mut errors: [Option<AssemblyError>; 9] = Default::default();
    for e in entries {
        let k = kind_index(e.kind());
        if errors[k].is_some() {
            continue;
        }
        let s = estimator.estimate(e);
        if s < 0 {
            errors[k] = Some(AssemblyError::NegativeEstimate {
                entry_id: e.id().as_str().to_owned(),
            });
            continue;
        }
        match (sizes[k].checked_add(s), counts[k].checked_add(1)) {
            (Some(total), Some(count)) => {
                sizes[k] = total;
                counts[k] = count;
            }
            _ => errors[k] = Some(AssemblyError::SizeOverflow),
        }
    }
    if let Some(err) = errors.into_iter().flatten().next() {
        return Err(err);
    }
    Ok((0..9)
        .filter(|&k| counts[k] > 0)
        .map(|k| Contribution {
            category: CATEGORIES[k],
            size: sizes[k],
            entry_count: counts[k],
        })
        .collect())
}

/// Builds the diagnostics record of `result` (SPEC DIA-5), checking the instance invariants of
/// SPEC DIA-3 / DIA-4 in the model's order, with the model's invariant names.
pub fn build(result: &AssemblyResult, policy: &Policy) -> Result<Diagnostics, AssemblyError> {
    let invariant = AssemblyError::DiagnosticsInvariant;
    if result.original_estimated_size < 0
        || result.final_estimated_size < 0
        || result.hard_limit < 0
        || result.attempt_count < 0
        || policy.trigger_threshold() < 0
    {
        return Err(invariant("numbers must be non-negative"));
    }
    let (category_contributions, final_sequence_valid) = if result.outcome.is_success() {
        if result.final_estimated_size > result.hard_limit {
            return Err(invariant("success final size exceeds the hard limit"));
        }
        if !result
            .final_verification
            .as_ref()
            .is_some_and(|v| v.is_accepted())
        {
            return Err(invariant("success requires an accepted verification"));
        }
        let entries = result
            .final_entries
            .as_ref()
            .ok_or(invariant("success requires final entries"))?;
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
        (Vec::new(), None)
    };
    Ok(Diagnostics {
        outcome: outcome_category(result.outcome),
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
