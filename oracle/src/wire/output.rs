//! Output types: the answer to one case.
//!
//! An [`Output`] has exactly one member set (`error`, `entries`, `policy`, `evaluation`,
//! `analysis`, `selection`, `verification`, or `assembly` together with `diagnostics`). A typed
//! [`ErrorOutput`] is a legitimate answer: the SPEC rejects the input, and the vector records
//! how. Vectors compare outputs as JSON, ignoring only `error.message`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::adr::output as adr;

/// The answer to one case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Output {
    /// A typed error (SPEC ERR-1): the SPEC rejects these inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorOutput>,
    /// `entry`: the constructed entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryOutput>>,
    /// `policy`: the validated policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyOutput>,
    /// `evaluate`: the trigger evaluation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation: Option<EvaluationOutput>,
    /// `analyze`: the tool-exchange analysis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis: Option<AnalysisOutput>,
    /// `select`: the preservation selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<SelectionOutput>,
    /// `verify`: the verification result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<VerificationOutput>,
    /// `assemble`: the assembly result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assembly: Option<AssemblyOutput>,
    /// `assemble`: the diagnostics record built from the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<DiagnosticsOutput>,
    /// `entry` / `assemble` with a `transcript`: the entries (adapted, or the assembly's final
    /// list on success) rendered in the transcript's format (SPEC TRN-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_transcript: Option<serde_json::Value>,
    /// `resolve`: capability resolution (SPEC CAP-1 .. CAP-4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<adr::ResolutionOutput>,
    /// `compose`: the composition status (SPEC CMP-2 .. CMP-4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composition: Option<adr::CompositionOutput>,
    /// `trust`: a guarded call's end and events (SPEC TRU-1 .. TRU-3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<adr::TrustOutput>,
    /// `record`: the validated record (SPEC ARF-1 .. ARF-3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<adr::RecordOutput>,
    /// `rehydrate`: status, segment, diagnostics with attribution (SPEC RHY, ATR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rehydration: Option<adr::RehydrationOutput>,
    /// `offload`: record, diagnostics with attribution (SPEC OFF, ATR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offload: Option<adr::OffloadOutput>,
    /// `configure`: the effective-defaults report and installed compaction (SPEC CFG).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<adr::ConfigurationOutput>,
    /// `bridge`: the result entries of each call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bridge: Option<super::scenario::output::BridgeOutput>,
    /// `leases`: one answer per step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leases: Option<Vec<super::scenario::output::LeaseStepOutput>>,
    /// `node`: the selection and one answer per step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<super::scenario::output::NodeOutput>,
}

impl Output {
    /// An error answer.
    pub fn error(e: ErrorOutput) -> Output {
        Output {
            error: Some(e),
            ..Output::default()
        }
    }
}

/// A typed error (SPEC ERR-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErrorOutput {
    /// The error kind: `OutOfRange`, `NullArgument`, `InvalidArgument`, `InvalidOperation`,
    /// `Overflow`, `Cancelled`, `ReducerContract`, `ReducerFailed`, `NotSupported`.
    pub kind: String,
    /// The offending field (policy member name, or `Version` for snapshots), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The offending entry id, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    /// Human-readable explanation; informative only (never compared).
    pub message: String,
}

/// A constructed entry (SPEC ENT-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EntryOutput {
    /// The id.
    pub id: String,
    /// The kind.
    pub kind: String,
    /// The message role.
    pub role: String,
    /// The message text (concatenated text parts, SPEC ENT-3).
    pub text: String,
    /// The ordered artifact-reference digests.
    pub artifact_reference_digests: Vec<String>,
    /// The single digest when there is exactly one, else null.
    pub artifact_reference_digest: Option<String>,
}

/// A validated policy (SPEC POL-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyOutput {
    /// `HardLimit`.
    pub hard_limit: i32,
    /// `TriggerMargin`.
    pub trigger_margin: i32,
    /// `TriggerThreshold = HardLimit - TriggerMargin`.
    pub trigger_threshold: i32,
    /// `RecentMessageRetentionCount`.
    pub recent_message_retention_count: i32,
    /// `MaximumCompactionAttempts`.
    pub maximum_compaction_attempts: i32,
    /// `PreservationLabel`.
    pub preservation_label: String,
    /// `PreservationVersion`.
    pub preservation_version: i32,
    /// The estimator's unit.
    pub measurement_unit: String,
}

/// A trigger evaluation (SPEC POL-3, POL-4) plus the estimator's per-entry sizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvaluationOutput {
    /// The estimator's unit.
    pub measurement_unit: String,
    /// Per-entry estimates, in list order.
    pub entry_sizes: Vec<i32>,
    /// `EstimatedSize`.
    pub estimated_size: i32,
    /// `HardLimit`.
    pub hard_limit: i32,
    /// `TriggerMargin`.
    pub trigger_margin: i32,
    /// `TriggerThreshold`.
    pub trigger_threshold: i32,
    /// `Triggered`.
    pub triggered: bool,
}

/// One tool group (SPEC EXC-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupOutput {
    /// The call entry.
    pub call_entry_id: String,
    /// Its call ids, part order.
    pub call_ids: Vec<String>,
    /// First result owners, by position.
    pub result_entry_ids: Vec<String>,
    /// Call entry then result entries.
    pub all_entry_ids: Vec<String>,
    /// Every call id has an owner.
    pub all_matched: bool,
    /// Every first owner follows the call entry.
    pub all_in_order: bool,
    /// The group is complete.
    pub complete: bool,
}

/// A tool-exchange analysis (SPEC EXC-1 .. EXC-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnalysisOutput {
    /// Groups in list order.
    pub groups: Vec<GroupOutput>,
    /// `OrphanedCallEntryIds`.
    pub orphaned_call_entry_ids: Vec<String>,
    /// `OrphanResultEntryIds`.
    pub orphan_result_entry_ids: Vec<String>,
    /// `DuplicateCallEntryIds`.
    pub duplicate_call_entry_ids: Vec<String>,
    /// `DuplicateResultCallIds`.
    pub duplicate_result_call_ids: Vec<String>,
    /// `DuplicateResultEntryIds`.
    pub duplicate_result_entry_ids: Vec<String>,
    /// `ReorderedCallEntryIds`.
    pub reordered_call_entry_ids: Vec<String>,
    /// `CrossGroupResultEntryIds`.
    pub cross_group_result_entry_ids: Vec<String>,
    /// No defect list is non-empty.
    pub sequence_valid: bool,
}

/// A preservation selection (SPEC PRE-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelectionOutput {
    /// Required ids by position.
    pub required_entry_ids: Vec<String>,
    /// The policy label.
    pub preservation_label: String,
    /// The policy version.
    pub preservation_version: i32,
}

/// A verification result (SPEC VER-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerificationOutput {
    /// `Accepted` or `Rejected`.
    pub outcome: String,
    /// Reasons in check order, each once.
    pub rejection_reasons: Vec<String>,
    /// Missing required ids, in required order.
    pub missing_required_entry_ids: Vec<String>,
    /// Invalid ids, ordinal order.
    pub invalid_entry_ids: Vec<String>,
    /// Required ids of the original.
    pub preservation_only_fallback_entry_ids: Vec<String>,
}

/// An assembly result (SPEC ASM-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssemblyOutput {
    /// The outcome.
    pub outcome: String,
    /// Final entry ids (success only; null for terminations).
    pub final_entry_ids: Option<Vec<String>>,
    /// `OriginalEstimatedSize`.
    pub original_estimated_size: i32,
    /// `FinalEstimatedSize`.
    pub final_estimated_size: i32,
    /// `HardLimit`.
    pub hard_limit: i32,
    /// `AttemptCount`.
    pub attempt_count: i32,
    /// Stages in execution order.
    pub stages: Vec<String>,
    /// `RequiredEntryIds`.
    pub required_entry_ids: Vec<String>,
    /// `LatestSnapshotVersion`.
    pub latest_snapshot_version: i64,
    /// `FinalVerification` (success only; null for terminations).
    pub final_verification: Option<VerificationOutput>,
}

/// One category contribution (SPEC DIA-6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContributionOutput {
    /// The category.
    pub category: String,
    /// Checked size sum.
    pub size: i32,
    /// Number of entries.
    pub entry_count: i32,
}

/// A diagnostics record (SPEC DIA-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiagnosticsOutput {
    /// The outcome category.
    pub outcome: String,
    /// The unit.
    pub measurement_unit: String,
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
    pub stages: Vec<String>,
    /// Contributions in category order.
    pub category_contributions: Vec<ContributionOutput>,
    /// `true` on success, null on termination.
    pub final_sequence_valid: Option<bool>,
}
