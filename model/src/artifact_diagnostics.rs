//! Artifact diagnostics and their UTF-8 byte attribution (SPEC ATR-1 .. ATR-4, OFF-2, RHY-2;
//! C# S81-S83; ADR "one UTF-8 byte attribution shared by the internal result and its event").
//!
//! [`ArtifactDiagnostics`] exists only validated: [`ArtifactDiagnostics::new`] checks the rules
//! of SPEC ATR-2 (outcome and reason families per operation, observed size, threshold,
//! reference presence, the outcome's own reason and content) and that the [`Attribution`] is
//! exactly the one SPEC ATR-1's table prescribes; [`ArtifactDiagnostics::for_offload`] and
//! [`ArtifactDiagnostics::for_rehydration`] are the reference implementation's two factories
//! (SPEC ATR-5): the value from given fields, the reference id as text, the attribution
//! computed. Each broken rule is an error of its own kind ([`ArtifactDiagnosticsRule::kind`]). The executable specification computes the attribution independently
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

impl ArtifactReason {
    /// The operation whose family the reason belongs to (SPEC ATR-2).
    pub fn operation(self) -> ArtifactOperation {
        if self.index() < ArtifactReason::DigestVerified.index() {
            ArtifactOperation::Offload
        } else {
            ArtifactOperation::Rehydration
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
    /// The ATR-2 rule a diagnostics value broke, in the order the rules are checked.
    pub enum ArtifactDiagnosticsRule {
        /// The outcome is not of the operation's family.
        OutcomeFamily,
        /// The reason is not of the operation's family.
        ReasonFamily,
        /// The observed size is negative.
        ObservedSize,
        /// The threshold or budget is not positive.
        ThresholdOrBudget,
        /// The reference id is absent when required or present when forbidden.
        ReferencePresence,
        /// The reference id is not a canonical `artifact://sha256/` reference (SPEC ART-2).
        ReferenceMalformed,
        /// The observed size is absent where the outcome observed one (a resolved body has a
        /// size), or present where nothing was read (rehydration `Missing`, `Unauthorized`).
        ObservedPresence,
        /// The reason is not one of the outcome's own pairs (SPEC OFF-2, RHY-2; DEP-22).
        ReasonPair,
        /// The content kind does not match the operation or reason (DEP-22).
        Content,
        /// The attribution's operation is not the record's.
        AttributionOperation,
        /// The attribution's bytes are not the table's.
        AttributionBytes,
    }
}

impl ArtifactDiagnosticsRule {
    /// The kind of a violation (SPEC ATR-2): as the reference implementation's factories raise
    /// them, `OutOfRange` for a value outside what its field admits (an outcome or reason of
    /// the other operation, a negative size, a threshold or budget not above zero, a resolved
    /// decision without the body's size) and `InvalidArgument` for a reference id that is
    /// missing, forbidden or not canonical; the rules this specification adds (DEP-22) are
    /// arguments that contradict each other, `InvalidArgument`, except the observed size's
    /// presence, which keeps the kind the reference gives its one case of it.
    pub fn kind(self) -> ErrorKind {
        use ArtifactDiagnosticsRule as R;
        match self {
            R::OutcomeFamily
            | R::ReasonFamily
            | R::ObservedSize
            | R::ThresholdOrBudget
            | R::ObservedPresence => ErrorKind::OutOfRange,
            R::ReferencePresence
            | R::ReferenceMalformed
            | R::ReasonPair
            | R::Content
            | R::AttributionOperation
            | R::AttributionBytes => ErrorKind::InvalidArgument,
        }
    }

    /// What the rule requires, in words.
    pub fn text(self) -> &'static str {
        use ArtifactDiagnosticsRule as R;
        match self {
            R::OutcomeFamily => "the outcome must be one of the operation's outcomes",
            R::ReasonFamily => "the reason must be one of the operation's reasons",
            R::ObservedSize => "the observed size must not be negative",
            R::ThresholdOrBudget => "the threshold or budget must be greater than zero",
            R::ReferencePresence => {
                "a reference id is carried exactly by Offloaded, ExistingReference and every rehydration"
            }
            R::ReferenceMalformed => {
                "the reference id must be a canonical artifact://sha256/ reference"
            }
            R::ObservedPresence => {
                "the observed size is absent exactly for rehydration Missing and Unauthorized"
            }
            R::ReasonPair => "the reason must be one of the outcome's own reasons",
            R::Content => {
                "the content is RecoverableContextSegment exactly for RecoverableSegmentBypass and rehydration"
            }
            R::AttributionOperation => "the attribution's operation must be the record's",
            R::AttributionBytes => "the attribution's bytes must be the table's",
        }
    }
}

/// An invalid artifact diagnostics value (SPEC ATR-2): an error of the broken rule's kind,
/// naming the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid artifact diagnostics ({rule}): {}", rule.text())]
pub struct ArtifactDiagnosticsError {
    /// The broken rule.
    pub rule: ArtifactDiagnosticsRule,
}

impl ArtifactDiagnosticsError {
    /// The language-neutral category (SPEC ERR-1): the rule's.
    pub fn kind(&self) -> ErrorKind {
        self.rule.kind()
    }
}

impl From<&ArtifactDiagnosticsError> for crate::error::TypedError {
    fn from(e: &ArtifactDiagnosticsError) -> crate::error::TypedError {
        crate::error::TypedError::new(e.kind(), e.to_string()).with_field(e.rule.name())
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

/// Whether an outcome carries a reference id (SPEC ATR-2): offload `Offloaded` and
/// `ExistingReference`, and every rehydration.
fn reference_required(outcome: ArtifactOutcome) -> bool {
    outcome.operation() == ArtifactOperation::Rehydration
        || matches!(
            outcome,
            ArtifactOutcome::Offloaded | ArtifactOutcome::ExistingReference
        )
}

/// The first two rules of SPEC ATR-2: the outcome and the reason are of the operation's family.
fn check_families(
    operation: ArtifactOperation,
    outcome: ArtifactOutcome,
    reason: ArtifactReason,
) -> Result<(), ArtifactDiagnosticsError> {
    use ArtifactDiagnosticsRule as Rule;
    if outcome.operation() != operation {
        return Err(ArtifactDiagnosticsError {
            rule: Rule::OutcomeFamily,
        });
    }
    if reason.operation() != operation {
        return Err(ArtifactDiagnosticsError {
            rule: Rule::ReasonFamily,
        });
    }
    Ok(())
}

/// The rules that make a value state one decision's facts consistently (SPEC ATR-2): the
/// observed size's presence, then (DEP-22) the outcome's own reason and the content kind.
fn check_consistency(
    outcome: ArtifactOutcome,
    reason: ArtifactReason,
    content: ArtifactContent,
    observed: Option<i64>,
) -> Result<(), ArtifactDiagnosticsError> {
    use ArtifactDiagnosticsRule as Rule;
    let nothing_read = matches!(
        outcome,
        ArtifactOutcome::Missing | ArtifactOutcome::Unauthorized
    );
    if observed.is_some() == nothing_read {
        return Err(ArtifactDiagnosticsError {
            rule: Rule::ObservedPresence,
        });
    }
    if !outcome.reasons().contains(&reason) {
        return Err(ArtifactDiagnosticsError {
            rule: Rule::ReasonPair,
        });
    }
    let segment = outcome.operation() == ArtifactOperation::Rehydration
        || reason == ArtifactReason::RecoverableSegmentBypass;
    if (content == ArtifactContent::RecoverableContextSegment) != segment {
        return Err(ArtifactDiagnosticsError {
            rule: Rule::Content,
        });
    }
    Ok(())
}

impl ArtifactDiagnostics {
    /// Validates `fields` with the rules of SPEC ATR-2, in the order of
    /// [`ArtifactDiagnosticsRule`] (a typed reference cannot be malformed, so that rule is the
    /// factories' alone).
    pub fn new(
        fields: ArtifactDiagnosticsFields,
    ) -> Result<ArtifactDiagnostics, ArtifactDiagnosticsError> {
        use ArtifactDiagnosticsRule as Rule;
        let fail = |rule| Err(ArtifactDiagnosticsError { rule });
        let f = fields;
        check_families(f.operation, f.outcome, f.reason)?;
        if f.observed_utf8_byte_size.is_some_and(|n| n < 0) {
            return fail(Rule::ObservedSize);
        }
        if f.configured_threshold_or_budget <= 0 {
            return fail(Rule::ThresholdOrBudget);
        }
        if f.reference.is_some() != reference_required(f.outcome) {
            return fail(Rule::ReferencePresence);
        }
        check_consistency(f.outcome, f.reason, f.content, f.observed_utf8_byte_size)?;
        if f.attribution.operation != f.operation {
            return fail(Rule::AttributionOperation);
        }
        if table(f.outcome, f.observed_utf8_byte_size) != Some(f.attribution) {
            return fail(Rule::AttributionBytes);
        }
        Ok(ArtifactDiagnostics(fields))
    }

    /// The reference implementation's offload factory (SPEC ATR-5): the value of one offload
    /// decision from its fields, the attribution computed by SPEC ATR-1's table. `reference_id`
    /// is text, so a malformed one is expressible (and refused).
    pub fn for_offload(
        outcome: ArtifactOutcome,
        content: ArtifactContent,
        reason: ArtifactReason,
        observed_utf8_byte_size: i64,
        configured_threshold: i64,
        reference_id: Option<&str>,
    ) -> Result<ArtifactDiagnostics, ArtifactDiagnosticsError> {
        ArtifactDiagnostics::from_given(
            ArtifactOperation::Offload,
            outcome,
            content,
            reason,
            Some(observed_utf8_byte_size),
            configured_threshold,
            reference_id,
        )
    }

    /// The reference implementation's rehydration factory (SPEC ATR-5): the content is always
    /// `RecoverableContextSegment`, and a rehydration always names the reference it resolves.
    pub fn for_rehydration(
        outcome: ArtifactOutcome,
        reason: ArtifactReason,
        observed_utf8_byte_size: Option<i64>,
        configured_budget: i64,
        reference_id: &str,
    ) -> Result<ArtifactDiagnostics, ArtifactDiagnosticsError> {
        ArtifactDiagnostics::from_given(
            ArtifactOperation::Rehydration,
            outcome,
            ArtifactContent::RecoverableContextSegment,
            reason,
            observed_utf8_byte_size,
            configured_budget,
            Some(reference_id),
        )
    }

    /// SPEC ATR-5's steps, shared by both factories: the families, the numbers, the reference
    /// id (present exactly where ATR-2 requires it, then canonical), the rules of DEP-22, and
    /// the attribution of ATR-1's table.
    fn from_given(
        operation: ArtifactOperation,
        outcome: ArtifactOutcome,
        content: ArtifactContent,
        reason: ArtifactReason,
        observed: Option<i64>,
        threshold_or_budget: i64,
        reference_id: Option<&str>,
    ) -> Result<ArtifactDiagnostics, ArtifactDiagnosticsError> {
        use ArtifactDiagnosticsRule as Rule;
        let fail = |rule| Err(ArtifactDiagnosticsError { rule });
        check_families(operation, outcome, reason)?;
        if observed.is_some_and(|n| n < 0) {
            return fail(Rule::ObservedSize);
        }
        if threshold_or_budget <= 0 {
            return fail(Rule::ThresholdOrBudget);
        }
        let reference = match (reference_required(outcome), reference_id) {
            (true, None) | (false, Some(_)) => return fail(Rule::ReferencePresence),
            (false, None) => None,
            (true, Some(text)) => match ArtifactReference::parse(text) {
                Ok(r) => Some(r),
                Err(_) => return fail(Rule::ReferenceMalformed),
            },
        };
        check_consistency(outcome, reason, content, observed)?;
        let attribution = table(outcome, observed).ok_or(ArtifactDiagnosticsError {
            rule: Rule::ObservedPresence,
        })?;
        Ok(ArtifactDiagnostics(ArtifactDiagnosticsFields {
            operation,
            outcome,
            content,
            reason,
            observed_utf8_byte_size: observed,
            configured_threshold_or_budget: threshold_or_budget,
            reference,
            attribution,
        }))
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

/// The fields one of the two factories of SPEC ATR-5 is called with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactGiven {
    /// [`ArtifactDiagnostics::for_offload`]'s arguments.
    Offload {
        /// The outcome.
        outcome: ArtifactOutcome,
        /// The content kind.
        content: ArtifactContent,
        /// The reason.
        reason: ArtifactReason,
        /// The observed UTF-8 byte size (an offload always observes one).
        observed_utf8_byte_size: i64,
        /// The inline threshold.
        configured_threshold: i64,
        /// The reference id as text, if any.
        reference_id: Option<String>,
    },
    /// [`ArtifactDiagnostics::for_rehydration`]'s arguments.
    Rehydration {
        /// The outcome.
        outcome: ArtifactOutcome,
        /// The reason.
        reason: ArtifactReason,
        /// The observed UTF-8 byte size, if the workspace was read.
        observed_utf8_byte_size: Option<i64>,
        /// The byte budget.
        configured_budget: i64,
        /// The reference id being resolved, as text.
        reference_id: String,
    },
}

impl ArtifactGiven {
    /// Calls the factory (SPEC ATR-5).
    pub fn build(&self) -> Result<ArtifactDiagnostics, ArtifactDiagnosticsError> {
        match self {
            ArtifactGiven::Offload {
                outcome,
                content,
                reason,
                observed_utf8_byte_size,
                configured_threshold,
                reference_id,
            } => ArtifactDiagnostics::for_offload(
                *outcome,
                *content,
                *reason,
                *observed_utf8_byte_size,
                *configured_threshold,
                reference_id.as_deref(),
            ),
            ArtifactGiven::Rehydration {
                outcome,
                reason,
                observed_utf8_byte_size,
                configured_budget,
                reference_id,
            } => ArtifactDiagnostics::for_rehydration(
                *outcome,
                *reason,
                *observed_utf8_byte_size,
                *configured_budget,
                reference_id,
            ),
        }
    }
}
