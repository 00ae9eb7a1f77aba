//! Outputs that more than one operation (and the trace format) writes: constructed entries,
//! verification and assembly results, diagnostics records, and their renderings from the
//! vocabulary. Names of categorical values are [`Name`]s, so the schema lists them; numbers
//! and ids are written as the SPEC names them.

use hybrid_compaction_model::assembly::{AssemblyResult, Outcome, Stage};
use hybrid_compaction_model::diagnostics::{
    Category, CompactionOutcome, Diagnostics, StageCategory,
};
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::estimator::MeasurementUnit;
use hybrid_compaction_model::verification::{
    RejectionReason, VerificationOutcome, VerificationResult,
};
#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::names::{Id, Name};

/// A constructed entry (SPEC ENT-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EntryOutput {
    /// The id.
    pub id: String,
    /// The kind.
    pub kind: Name<EntryKind>,
    /// The message role.
    pub role: String,
    /// The message text (concatenated text parts, SPEC ENT-3).
    pub text: String,
    /// The ordered artifact-reference digests.
    pub artifact_reference_digests: Vec<String>,
    /// The single digest when there is exactly one, else null.
    pub artifact_reference_digest: Option<String>,
}

/// A verification result (SPEC VER-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerificationOutput {
    /// `Accepted` or `Rejected`.
    pub outcome: Name<VerificationOutcome>,
    /// Reasons in check order, each once.
    pub rejection_reasons: Vec<Name<RejectionReason>>,
    /// Missing required ids, in required order.
    pub missing_required_entry_ids: Vec<Id>,
    /// Invalid ids, ordinal order.
    pub invalid_entry_ids: Vec<Id>,
    /// Required ids of the original.
    pub preservation_only_fallback_entry_ids: Vec<Id>,
}

/// An assembly result (SPEC ASM-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssemblyOutput {
    /// The outcome.
    pub outcome: Name<Outcome>,
    /// Final entry ids (success only; null for terminations).
    pub final_entry_ids: Option<Vec<Id>>,
    /// `OriginalEstimatedSize`.
    pub original_estimated_size: i32,
    /// `FinalEstimatedSize`.
    pub final_estimated_size: i32,
    /// `HardLimit`.
    pub hard_limit: i32,
    /// `AttemptCount`.
    pub attempt_count: i32,
    /// Stages in execution order.
    pub stages: Vec<Name<Stage>>,
    /// `RequiredEntryIds`.
    pub required_entry_ids: Vec<Id>,
    /// `LatestSnapshotVersion`.
    pub latest_snapshot_version: i64,
    /// `FinalVerification` (success only; null for terminations).
    pub final_verification: Option<VerificationOutput>,
}

/// One category contribution (SPEC DIA-6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContributionOutput {
    /// The category.
    pub category: Name<Category>,
    /// Checked size sum.
    pub size: i32,
    /// Number of entries.
    pub entry_count: i32,
}

/// A diagnostics record (SPEC DIA-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiagnosticsOutput {
    /// The outcome category.
    pub outcome: Name<CompactionOutcome>,
    /// The unit.
    pub measurement_unit: Name<MeasurementUnit>,
    /// `OriginalSize`.
    pub original_size: i32,
    /// `FinalSize`.
    pub final_size: i32,
    /// `TriggerThreshold`.
    pub trigger_threshold: i32,
    /// `HardLimit`.
    pub hard_limit: i32,
    /// `AttemptCount`.
    pub attempt_count: i32,
    /// Stage categories.
    pub stages: Vec<Name<StageCategory>>,
    /// Contributions in category order.
    pub category_contributions: Vec<ContributionOutput>,
    /// `true` on success, null on termination.
    pub final_sequence_valid: Option<bool>,
}

/// Ids as strings, in order.
pub fn ids(v: &[EntryId]) -> Vec<String> {
    v.iter().map(|i| i.as_str().to_owned()).collect()
}

/// Ids on the wire, in order (shared, not copied).
pub fn id_list(v: &[EntryId]) -> Vec<Id> {
    v.iter().map(Id::from).collect()
}

/// Renders constructed entries.
pub fn entry_outputs(entries: &[Entry]) -> Vec<EntryOutput> {
    entries
        .iter()
        .map(|e| EntryOutput {
            id: e.id().as_str().to_owned(),
            kind: Name(e.kind()),
            role: e.message().role.clone(),
            text: e.message().text_content(),
            artifact_reference_digests: e
                .artifact_reference_digests()
                .iter()
                .map(|d| d.to_hex())
                .collect(),
            artifact_reference_digest: e.artifact_reference_digest().map(|d| d.to_hex()),
        })
        .collect()
}

/// Renders a verification result.
pub fn verification_output(v: &VerificationResult) -> VerificationOutput {
    VerificationOutput {
        outcome: Name(v.outcome),
        rejection_reasons: v.rejection_reasons.iter().copied().map(Name).collect(),
        missing_required_entry_ids: id_list(&v.missing_required_entry_ids),
        invalid_entry_ids: v.invalid_entry_ids.iter().map(Id::from).collect(),
        preservation_only_fallback_entry_ids: id_list(&v.preservation_only_fallback_entry_ids),
    }
}

/// Renders an assembly result.
pub fn assembly_output(r: &AssemblyResult) -> AssemblyOutput {
    AssemblyOutput {
        outcome: Name(r.outcome),
        final_entry_ids: r
            .final_entries
            .as_ref()
            .map(|es| es.iter().map(|e| Id::from(e.id())).collect()),
        original_estimated_size: r.original_estimated_size,
        final_estimated_size: r.final_estimated_size,
        hard_limit: r.hard_limit,
        attempt_count: r.attempt_count,
        stages: r.stages.iter().copied().map(Name).collect(),
        required_entry_ids: id_list(&r.required_entry_ids),
        latest_snapshot_version: r.latest_snapshot_version,
        final_verification: r.final_verification.as_ref().map(verification_output),
    }
}

/// Renders a diagnostics record.
pub fn diagnostics_output(d: &Diagnostics) -> DiagnosticsOutput {
    DiagnosticsOutput {
        outcome: Name(d.outcome),
        measurement_unit: Name(d.measurement_unit),
        original_size: d.original_size,
        final_size: d.final_size,
        trigger_threshold: d.trigger_threshold,
        hard_limit: d.hard_limit,
        attempt_count: d.attempt_count,
        stages: d.stages.iter().copied().map(Name).collect(),
        category_contributions: d
            .category_contributions
            .iter()
            .map(|c| ContributionOutput {
                category: Name(c.category),
                size: c.size,
                entry_count: c.entry_count,
            })
            .collect(),
        final_sequence_valid: d.final_sequence_valid,
    }
}
