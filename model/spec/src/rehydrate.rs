//! Rehydration (SPEC RHY-1 .. RHY-4; C# S81).
//!
//! ```text
//! revalidate (raises) -> owners differ? Unauthorized (no read) -> read: absent? Missing
//!   (failure raises) -> digest differs? Stale -> bytes > budget? OverBudget
//!   -> revalidate (raises) -> Resolved (segment: reference, exact body, time)
//! every decision: one diagnostics value, shared by the result and its one event
//! ```

use std::sync::Arc;
use std::time::SystemTime;

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::artifact_diagnostics::{
    ArtifactContent, ArtifactEvent, ArtifactEventSink, ArtifactOutcome, ArtifactReason,
};
use hybrid_compaction_model::entry::RecoverableSegment;
use hybrid_compaction_model::rehydration::{
    RehydrationError, RehydrationRequest, RehydrationResult, ResolutionStatus, ResolvedSegment,
};
use hybrid_compaction_model::trust::TrustGuard;
use hybrid_compaction_model::workspace::Workspace;

use crate::attribution::{decide, Decision};
use crate::trust::revalidate;

/// The fixed (outcome, reason) pair of a status (SPEC RHY-2).
pub fn outcome_of(status: ResolutionStatus) -> (ArtifactOutcome, ArtifactReason) {
    match status {
        ResolutionStatus::Resolved => (ArtifactOutcome::Resolved, ArtifactReason::DigestVerified),
        ResolutionStatus::Stale => (ArtifactOutcome::Stale, ArtifactReason::DigestMismatch),
        ResolutionStatus::Missing => (ArtifactOutcome::Missing, ArtifactReason::Missing),
        ResolutionStatus::Unauthorized => {
            (ArtifactOutcome::Unauthorized, ArtifactReason::OwnerMismatch)
        }
        ResolutionStatus::OverBudget => {
            (ArtifactOutcome::OverBudget, ArtifactReason::BudgetExceeded)
        }
    }
}

/// Rehydrates `request` (SPEC RHY-3), reporting the decision to `events` (SPEC RHY-4, ATR-3).
pub fn rehydrate(
    request: &RehydrationRequest,
    guard: &TrustGuard,
    workspace: &mut dyn Workspace,
    now: SystemTime,
    events: &mut dyn ArtifactEventSink,
) -> Result<RehydrationResult, RehydrationError> {
    let record = request.record();
    // (1) revalidate; a failure raises.
    revalidate(guard).map_err(RehydrationError::Trust)?;
    // (2) owners differ -> Unauthorized; the workspace is not read.
    if record.owners() != &guard.binding.owners {
        return finish(request, ResolutionStatus::Unauthorized, None, None, events);
    }
    // (3) read: absent -> Missing; a failure raises.
    let body = match workspace.read(&record.path()) {
        Err(_) => return Err(RehydrationError::WorkspaceRead),
        Ok(None) => return finish(request, ResolutionStatus::Missing, None, None, events),
        Ok(Some(body)) => body,
    };
    let observed = Some(body.len() as i64);
    // (4) digest differs -> Stale.
    if Digest::of(&body) != record.reference().digest() {
        return finish(request, ResolutionStatus::Stale, observed, None, events);
    }
    // (5) over budget.
    if body.len() as i64 > request.budget() {
        return finish(
            request,
            ResolutionStatus::OverBudget,
            observed,
            None,
            events,
        );
    }
    // (6) revalidate again; a failure raises.
    revalidate(guard).map_err(RehydrationError::Trust)?;
    // (7) Resolved: the exact body, always skipping eager re-offload (SPEC RHY-4).
    let segment = ResolvedSegment {
        segment: RecoverableSegment {
            reference: record.reference(),
            body,
        },
        resolved_at: now,
        skip_eager_reoffload: true,
    };
    finish(
        request,
        ResolutionStatus::Resolved,
        observed,
        Some(segment),
        events,
    )
}

/// Builds the one diagnostics value of the decision and reports the one event carrying it
/// (SPEC RHY-4, ATR-3).
fn finish(
    request: &RehydrationRequest,
    status: ResolutionStatus,
    observed: Option<i64>,
    segment: Option<ResolvedSegment>,
    events: &mut dyn ArtifactEventSink,
) -> Result<RehydrationResult, RehydrationError> {
    let (outcome, reason) = outcome_of(status);
    let diagnostics = decide(Decision {
        outcome,
        reason,
        // SPEC ATR-2 (ours): a resolved body becomes a recoverable segment.
        content: ArtifactContent::RecoverableContextSegment,
        observed,
        threshold_or_budget: request.budget(),
        reference: Some(request.record().reference()),
    })
    .map_err(RehydrationError::Diagnostics)?;
    events.report(ArtifactEvent {
        diagnostics: Arc::clone(&diagnostics),
    });
    Ok(RehydrationResult {
        status,
        segment,
        diagnostics,
    })
}
