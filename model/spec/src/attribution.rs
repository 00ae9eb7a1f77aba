//! The UTF-8 byte attribution table (SPEC ATR-1; C# S83) and the diagnostics value of one
//! artifact decision (SPEC ATR-2).
//!
//! [`attribute`] is the table, written independently of the vocabulary's validator
//! (`ArtifactDiagnostics::new` re-checks it). [`decide`] builds the validated value.

use std::sync::Arc;

use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::artifact_diagnostics::{
    ArtifactContent, ArtifactDiagnostics, ArtifactDiagnosticsError, ArtifactDiagnosticsFields,
    ArtifactOperation, ArtifactOutcome, ArtifactReason, Attribution, REFERENCE_UTF8_BYTES,
};

/// The attribution of a decision (SPEC ATR-1). `observed` is the observed UTF-8 byte size
/// (`None` only for rehydration `Missing` / `Unauthorized`, where it is not used).
pub fn attribute(outcome: ArtifactOutcome, observed: Option<i64>) -> Attribution {
    let observed_bytes = observed.unwrap_or(0);
    let (operation, input, output) = match outcome {
        // Offload: the input is what was observed.
        ArtifactOutcome::Inline => (
            ArtifactOperation::Offload,
            observed_bytes,
            Some(observed_bytes),
        ),
        ArtifactOutcome::Offloaded | ArtifactOutcome::ExistingReference => (
            ArtifactOperation::Offload,
            observed_bytes,
            Some(REFERENCE_UTF8_BYTES),
        ),
        ArtifactOutcome::Failed | ArtifactOutcome::RecoveryRequired => {
            (ArtifactOperation::Offload, observed_bytes, None)
        }
        // Rehydration: the input is the reference id.
        ArtifactOutcome::Resolved => (
            ArtifactOperation::Rehydration,
            REFERENCE_UTF8_BYTES,
            Some(observed_bytes),
        ),
        ArtifactOutcome::Stale
        | ArtifactOutcome::Missing
        | ArtifactOutcome::Unauthorized
        | ArtifactOutcome::OverBudget => {
            (ArtifactOperation::Rehydration, REFERENCE_UTF8_BYTES, None)
        }
    };
    Attribution {
        operation,
        input_utf8_bytes: input,
        output_utf8_bytes: output,
    }
}

/// One decision's facts, from which its diagnostics value is built.
#[derive(Debug, Clone, Copy)]
pub struct Decision {
    /// The outcome.
    pub outcome: ArtifactOutcome,
    /// The reason.
    pub reason: ArtifactReason,
    /// The content kind.
    pub content: ArtifactContent,
    /// Observed UTF-8 bytes.
    pub observed: Option<i64>,
    /// Threshold or budget.
    pub threshold_or_budget: i64,
    /// The reference id, when ATR-2 requires it.
    pub reference: Option<ArtifactReference>,
}

/// The validated, shareable diagnostics value of `decision` (SPEC ATR-2, ATR-3).
pub fn decide(decision: Decision) -> Result<Arc<ArtifactDiagnostics>, ArtifactDiagnosticsError> {
    let attribution = attribute(decision.outcome, decision.observed);
    ArtifactDiagnostics::new(ArtifactDiagnosticsFields {
        operation: attribution.operation,
        outcome: decision.outcome,
        content: decision.content,
        reason: decision.reason,
        observed_utf8_byte_size: decision.observed,
        configured_threshold_or_budget: decision.threshold_or_budget,
        reference: decision.reference,
        attribution,
    })
    .map(Arc::new)
}
