//! The offload decision table (SPEC OFF-1 .. OFF-3; C# S82).
//!
//! ```text
//! recovered segment -> Inline/RecoverableSegmentBypass
//! observed <= threshold -> Inline/BelowThreshold
//! no binding or no workspace -> Failed/NoAuthorizedWorkspace
//! revalidate (raises); build the record (raises)
//! read: failure -> Failed/WorkspaceReadFailed; same body -> ExistingReference/ExistingContentMatch;
//!       other body -> Failed/ContentAddressMismatch
//! write: failure -> Failed/WorkspaceWriteFailed
//! cancelled -> RecoveryRequired/CanceledAfterWrite; checkpoint failure -> RecoveryRequired/CheckpointFailed
//! -> Offloaded/ThresholdExceeded
//! ```

use std::sync::Arc;
use std::time::SystemTime;

use hybrid_compaction_model::artifact_diagnostics::{
    ArtifactContent, ArtifactEvent, ArtifactEventSink, ArtifactOutcome, ArtifactReason,
};
use hybrid_compaction_model::artifact_record::ReferenceRecord;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::offload::{OffloadError, OffloadInput, OffloadRequest, OffloadResult};
use hybrid_compaction_model::trust::TrustGuard;
use hybrid_compaction_model::workspace::Workspace;

use crate::attribution::{decide, Decision};
use crate::record::{create, Creation};
use crate::trust::revalidate;

/// The host seams an offload uses; `None` models an absent binding or workspace (SPEC OFF-2
/// row 3).
pub struct OffloadHost<'a> {
    /// The trust guard, if a binding is configured.
    pub guard: Option<&'a TrustGuard>,
    /// The workspace, if any.
    pub workspace: Option<&'a mut dyn Workspace>,
    /// Cancellation, checked after the write (SPEC OFF-2 row 7).
    pub cancel: &'a CancellationToken,
    /// The record's creation time.
    pub now: SystemTime,
}

impl std::fmt::Debug for OffloadHost<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffloadHost")
            .field("guard", &self.guard.is_some())
            .field("workspace", &self.workspace.is_some())
            .finish_non_exhaustive()
    }
}

/// Decides `request` (SPEC OFF-2), reporting the decision to `events` (SPEC OFF-3, ATR-3).
pub fn offload(
    request: &OffloadRequest,
    host: OffloadHost<'_>,
    events: &mut dyn ArtifactEventSink,
) -> Result<OffloadResult, OffloadError> {
    use ArtifactOutcome as O;
    use ArtifactReason as R;
    let threshold = request.threshold();
    let (tool_name, call_id, body, description) = match request.input() {
        // Row 1: a recovered segment always inlines.
        OffloadInput::RecoveredSegment(segment) => {
            let observed = segment.body.len() as i64;
            let step = Step::new(O::Inline, R::RecoverableSegmentBypass, observed);
            return step.segment().finish(threshold, events);
        }
        OffloadInput::ToolResult {
            tool_name,
            call_id,
            serialized,
            description,
        } => (tool_name, call_id, serialized, description),
    };
    // Row 2: the serialized result's UTF-8 length.
    let observed = body.len() as i64;
    let step = |outcome, reason| Step::new(outcome, reason, observed);
    if observed <= threshold {
        return step(O::Inline, R::BelowThreshold).finish(threshold, events);
    }
    // Row 3: an authorized workspace needs a binding and a workspace.
    let (Some(guard), Some(workspace)) = (host.guard, host.workspace) else {
        return step(O::Failed, R::NoAuthorizedWorkspace).finish(threshold, events);
    };
    // Row 4: revalidate, then build the record before touching the workspace.
    revalidate(guard).map_err(OffloadError::Trust)?;
    let creation = Creation {
        body,
        description,
        tool_name,
        call_id,
    };
    let record = create(creation, &guard.binding, host.now).map_err(OffloadError::Record)?;
    // Row 5: read the content address.
    match workspace.read(&record.path()) {
        Err(_) => return step(O::Failed, R::WorkspaceReadFailed).finish(threshold, events),
        Ok(Some(existing)) if existing == *body => {
            return step(O::ExistingReference, R::ExistingContentMatch)
                .with(record)
                .finish(threshold, events);
        }
        Ok(Some(_)) => return step(O::Failed, R::ContentAddressMismatch).finish(threshold, events),
        Ok(None) => {}
    }
    // Row 6: write.
    if workspace.write(&record.path(), body).is_err() {
        return step(O::Failed, R::WorkspaceWriteFailed).finish(threshold, events);
    }
    // Row 7: cancellation after the write.
    if host.cancel.is_cancelled() {
        return step(O::RecoveryRequired, R::CanceledAfterWrite).finish(threshold, events);
    }
    // Row 8: checkpoint.
    if workspace.checkpoint().is_err() {
        return step(O::RecoveryRequired, R::CheckpointFailed).finish(threshold, events);
    }
    // Row 9.
    step(O::Offloaded, R::ThresholdExceeded)
        .with(record)
        .finish(threshold, events)
}

/// One row's decision, before its diagnostics value is built.
struct Step {
    outcome: ArtifactOutcome,
    reason: ArtifactReason,
    content: ArtifactContent,
    observed: i64,
    record: Option<ReferenceRecord>,
}

impl Step {
    fn new(outcome: ArtifactOutcome, reason: ArtifactReason, observed: i64) -> Step {
        Step {
            outcome,
            reason,
            content: ArtifactContent::ToolResult,
            observed,
            record: None,
        }
    }

    fn segment(mut self) -> Step {
        self.content = ArtifactContent::RecoverableContextSegment;
        self
    }

    fn with(mut self, record: ReferenceRecord) -> Step {
        self.record = Some(record);
        self
    }

    /// The one diagnostics value and the one event carrying it (SPEC OFF-3, ATR-3).
    fn finish(
        self,
        threshold: i64,
        events: &mut dyn ArtifactEventSink,
    ) -> Result<OffloadResult, OffloadError> {
        let diagnostics = decide(Decision {
            outcome: self.outcome,
            reason: self.reason,
            content: self.content,
            observed: Some(self.observed),
            threshold_or_budget: threshold,
            // SPEC OFF-3: the reference id iff Offloaded or ExistingReference.
            reference: self.record.as_ref().map(ReferenceRecord::reference),
        })
        .map_err(OffloadError::Diagnostics)?;
        events.report(ArtifactEvent {
            diagnostics: Arc::clone(&diagnostics),
        });
        Ok(OffloadResult {
            record: self.record,
            diagnostics,
        })
    }
}
