//! Artifact diagnostics and their UTF-8 byte attribution (SPEC ATR-1 .. ATR-4, OFF-2, RHY-2;
//! C# S81-S83; ADR "one UTF-8 byte attribution shared by the internal result and its event").
//!
//! [`ArtifactDiagnostics`] exists only validated: [`ArtifactDiagnostics::new`] checks the rules
//! of SPEC ATR-2 (outcome and reason families per operation, content, observed size, threshold,
//! reference presence) and that the [`Attribution`] is exactly the one SPEC ATR-1's table
//! prescribes. The executable specification computes the attribution independently
//! (`hybrid_compaction_spec::attribution`); this constructor is the second statement of the
//! table, so the two cannot drift silently.
//!
//! Privacy by type (SPEC ATR-4): no field is a string. The only textual value is the bounded
//! reference id, held as a typed [`ArtifactReference`] (a content address, never content).
//! Results and events share one value through an `Arc` (SPEC ATR-3).

use std::sync::Arc;

use crate::artifact::{ArtifactReference, REFERENCE_LEN};
use crate::error::ErrorKind;
use crate::names::named_enum;

/// The UTF-8 byte length of a canonical reference id (SPEC ATR-1, ART-2).
pub const REFERENCE_UTF8_BYTES: i64 = REFERENCE_LEN as i64;

named_enum! {
    /// The artifact operation (SPEC ATR-2).
    pub enum ArtifactOperation {
        /// An offload decision (SPEC OFF-2).
        Offload,
        /// A rehydration decision (SPEC RHY-3).
        Rehydration,
    }
}

named_enum! {
    /// The decision's outcome: the offload family, then the rehydration family (SPEC ATR-2).
    pub enum ArtifactOutcome {
        /// Kept in the conversation.
        Inline,
        /// Written to the workspace; the reference replaces the body.
        Offloaded,
        /// The identical body was already stored; its reference replaces the body.
        ExistingReference,
        /// Not offloaded, nothing written.
        Failed,
        /// Written, but not confirmed durable.
        RecoveryRequired,
        /// The body was resolved.
        Resolved,
        /// The stored body no longer matches its digest.
        Stale,
        /// Nothing is stored at the path.
        Missing,
        /// The record's owners are not the binding's.
        Unauthorized,
        /// The body exceeds the budget.
        OverBudget,
    }
}

named_enum! {
    /// The reason: the offload family, then the rehydration family (SPEC ATR-2).
    pub enum ArtifactReason {
        /// Observed size at or below the threshold.
        BelowThreshold,
        /// A recovered segment is never offloaded again.
        RecoverableSegmentBypass,
        /// Observed size above the threshold; written.
        ThresholdExceeded,
        /// The identical body is already stored.
        ExistingContentMatch,
        /// No trust binding or no workspace.
        NoAuthorizedWorkspace,
        /// The workspace read failed.
        WorkspaceReadFailed,
        /// A different body is stored at the content address.
        ContentAddressMismatch,
        /// The workspace write failed.
        WorkspaceWriteFailed,
        /// Cancellation observed after the write.
        CanceledAfterWrite,
        /// The checkpoint failed.
        CheckpointFailed,
        /// The body's digest was verified.
        DigestVerified,
        /// The body's digest differs.
        DigestMismatch,
        /// Nothing stored.
        Missing,
        /// Owners differ.
        OwnerMismatch,
        /// Over budget.
        BudgetExceeded,
    }
}

named_enum! {
    /// What kind of content the decision is about (SPEC ATR-2).
    pub enum ArtifactContent {
        /// A tool result.
        ToolResult,
        /// A recovered segment (SPEC ENT-6).
        RecoverableContextSegment,
    }
}

impl ArtifactOutcome {
    /// The operation whose family the outcome belongs to (SPEC ATR-2).
    pub fn operation(self) -> ArtifactOperation {
        match self {
            ArtifactOutcome::Inline
            | ArtifactOutcome::Offloaded
            | ArtifactOutcome::ExistingReference
            | ArtifactOutcome::Failed
            | ArtifactOutcome::RecoveryRequired => ArtifactOperation::Offload,
            _ => ArtifactOperation::Rehydration,
        }
    }

    /// The reasons that may accompany the outcome (the pairs of SPEC OFF-2 and RHY-2).
    pub fn reasons(self) -> &'static [ArtifactReason] {
        use ArtifactReason as R;
        match self {
            ArtifactOutcome::Inline => &[R::BelowThreshold, R::RecoverableSegmentBypass],
            ArtifactOutcome::Offloaded => &[R::ThresholdExceeded],
            ArtifactOutcome::ExistingReference => &[R::ExistingContentMatch],
            ArtifactOutcome::Failed => &[
                R::NoAuthorizedWorkspace,
                R::WorkspaceReadFailed,
                R::ContentAddressMismatch,
                R::WorkspaceWriteFailed,
            ],
            ArtifactOutcome::RecoveryRequired => &[R::CanceledAfterWrite, R::CheckpointFailed],
            ArtifactOutcome::Resolved => &[R::DigestVerified],
            ArtifactOutcome::Stale => &[R::DigestMismatch],
            ArtifactOutcome::Missing => &[R::Missing],
            ArtifactOutcome::Unauthorized => &[R::OwnerMismatch],
            ArtifactOutcome::OverBudget => &[R::BudgetExceeded],
        }
    }
}

/// The UTF-8 byte attribution of one decision (SPEC ATR-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Attribution {
    /// The operation.
    pub operation: ArtifactOperation,
    /// Input bytes (observed for offload, the reference id's 82 for rehydration).
    pub input_utf8_bytes: i64,
    /// Artifact-derived output bytes, absent when none was committed.
    pub output_utf8_bytes: Option<i64>,
}

/// The fields of an artifact diagnostics value before validation (SPEC ATR-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArtifactDiagnosticsFields {
    /// The operation.
    pub operation: ArtifactOperation,
    /// The outcome.
    pub outcome: ArtifactOutcome,
    /// The content kind.
    pub content: ArtifactContent,
    /// The reason.
    pub reason: ArtifactReason,
    /// Observed UTF-8 byte size; absent only for rehydration `Missing` / `Unauthorized`.
    pub observed_utf8_byte_size: Option<i64>,
    /// The offload threshold or the rehydration budget (`> 0`).
    pub configured_threshold_or_budget: i64,
    /// The bounded reference id (SPEC ATR-2 presence rule).
    pub reference: Option<ArtifactReference>,
    /// The attribution (exactly SPEC ATR-1's).
    pub attribution: Attribution,
}

named_enum! {
    /// The ATR-2 rule a diagnostics value broke.
    pub enum ArtifactDiagnosticsRule {
        /// The outcome is not of the operation's family.
        OutcomeFamily,
        /// The reason is not one of the outcome's pairs.
        ReasonFamily,
        /// The content kind does not match the operation or reason.
        Content,
        /// The observed size is absent when required, present when forbidden, or negative.
        ObservedSize,
        /// The threshold or budget is not positive.
        ThresholdOrBudget,
        /// The reference id is absent when required or present when forbidden.
        ReferencePresence,
        /// The attribution's operation is not the record's.
        AttributionOperation,
        /// The attribution's bytes are not the table's.
        AttributionBytes,
    }
}

/// An invalid artifact diagnostics value (SPEC ATR-2): an `InvalidArgument` naming the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid artifact diagnostics: {rule}")]
pub struct ArtifactDiagnosticsError {
    /// The broken rule.
    pub rule: ArtifactDiagnosticsRule,
}

impl ArtifactDiagnosticsError {
    /// The language-neutral category (SPEC ERR-1).
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidArgument
    }
}

/// A validated artifact diagnostics value (SPEC ATR-2). No string field (SPEC ATR-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArtifactDiagnostics(ArtifactDiagnosticsFields);

/// The attribution SPEC ATR-1's table prescribes, or `None` when the observed size is
/// inconsistent with the outcome (absent where the table needs it).
fn table(outcome: ArtifactOutcome, observed: Option<i64>) -> Option<Attribution> {
    use ArtifactOutcome as O;
    let operation = outcome.operation();
    let (input, output) = match outcome {
        O::Inline => (observed?, observed),
        O::Offloaded | O::ExistingReference => (observed?, Some(REFERENCE_UTF8_BYTES)),
        O::Failed | O::RecoveryRequired => (observed?, None),
        O::Resolved => (REFERENCE_UTF8_BYTES, Some(observed?)),
        O::Stale | O::Missing | O::Unauthorized | O::OverBudget => (REFERENCE_UTF8_BYTES, None),
    };
    Some(Attribution {
        operation,
        input_utf8_bytes: input,
        output_utf8_bytes: output,
    })
}

impl ArtifactDiagnostics {
    /// Validates `fields` with the rules of SPEC ATR-2, in the order listed there.
    pub fn new(
        fields: ArtifactDiagnosticsFields,
    ) -> Result<ArtifactDiagnostics, ArtifactDiagnosticsError> {
        use ArtifactDiagnosticsRule as Rule;
        use ArtifactOutcome as O;
        let fail = |rule| Err(ArtifactDiagnosticsError { rule });
        let f = fields;
        let rehydration = f.operation == ArtifactOperation::Rehydration;
        if f.outcome.operation() != f.operation {
            return fail(Rule::OutcomeFamily);
        }
        if !f.outcome.reasons().contains(&f.reason) {
            return fail(Rule::ReasonFamily);
        }
        let segment = rehydration || f.reason == ArtifactReason::RecoverableSegmentBypass;
        if (f.content == ArtifactContent::RecoverableContextSegment) != segment {
            return fail(Rule::Content);
        }
        let observed_absent = matches!(f.outcome, O::Missing | O::Unauthorized);
        match f.observed_utf8_byte_size {
            None if observed_absent => {}
            Some(n) if !observed_absent && n >= 0 => {}
            _ => return fail(Rule::ObservedSize),
        }
        if f.configured_threshold_or_budget <= 0 {
            return fail(Rule::ThresholdOrBudget);
        }
        let reference_required =
            rehydration || matches!(f.outcome, O::Offloaded | O::ExistingReference);
        if f.reference.is_some() != reference_required {
            return fail(Rule::ReferencePresence);
        }
        if f.attribution.operation != f.operation {
            return fail(Rule::AttributionOperation);
        }
        if table(f.outcome, f.observed_utf8_byte_size) != Some(f.attribution) {
            return fail(Rule::AttributionBytes);
        }
        Ok(ArtifactDiagnostics(fields))
    }

    /// The validated fields.
    pub fn fields(&self) -> &ArtifactDiagnosticsFields {
        &self.0
    }

    /// The operation.
    pub fn operation(&self) -> ArtifactOperation {
        self.0.operation
    }

    /// The outcome.
    pub fn outcome(&self) -> ArtifactOutcome {
        self.0.outcome
    }

    /// The reason.
    pub fn reason(&self) -> ArtifactReason {
        self.0.reason
    }

    /// The content kind.
    pub fn content(&self) -> ArtifactContent {
        self.0.content
    }

    /// The observed UTF-8 byte size.
    pub fn observed_utf8_byte_size(&self) -> Option<i64> {
        self.0.observed_utf8_byte_size
    }

    /// The threshold or budget.
    pub fn configured_threshold_or_budget(&self) -> i64 {
        self.0.configured_threshold_or_budget
    }

    /// The reference id, when present.
    pub fn reference(&self) -> Option<ArtifactReference> {
        self.0.reference
    }

    /// The attribution.
    pub fn attribution(&self) -> &Attribution {
        &self.0.attribution
    }
}

/// The progress event of one artifact decision (SPEC RHY-4, OFF-3, ATR-3): it carries the same
/// diagnostics value as the decision's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactEvent {
    /// The shared diagnostics value.
    pub diagnostics: Arc<ArtifactDiagnostics>,
}

/// Receives artifact events (SPEC RHY-4, OFF-3).
pub trait ArtifactEventSink {
    /// Receives one event.
    fn report(&mut self, event: ArtifactEvent);
}

impl ArtifactEventSink for Vec<ArtifactEvent> {
    fn report(&mut self, event: ArtifactEvent) {
        self.push(event);
    }
}
