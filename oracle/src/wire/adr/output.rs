//! Output types of the ADR-0007 operations (SPEC sections 16-18).
//!
//! Artifact diagnostics are rendered field by field as enum names and numbers plus the bounded
//! reference id: the JSON has no string an input could have supplied except that content address
//! (SPEC ATR-4).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One capability's resolution (SPEC CAP-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapabilityStateOutput {
    /// The capability name.
    pub name: String,
    /// Whether it is requested (active).
    pub requested: bool,
    /// Its effective state.
    pub state: String,
}

/// The fixed metadata of `Compaction` (SPEC CAP-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactionMetadataOutput {
    /// Stability.
    pub stability: String,
    /// Source.
    pub source: String,
    /// Bundle default.
    pub bundle_default: bool,
    /// Provider requirement.
    pub provider_requirement: bool,
    /// Trust boundary.
    pub trust_boundary: String,
    /// AOT status.
    pub aot: String,
    /// Diagnostics status.
    pub diagnostics: String,
    /// Delivery phase.
    pub delivery_phase: String,
    /// The delivery phase's numeric value (SPEC CAP-2).
    pub delivery_phase_value: u8,
}

/// `resolve`: the profile's resolution (SPEC CAP-1 .. CAP-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolutionOutput {
    /// Every capability, in input order.
    pub capabilities: Vec<CapabilityStateOutput>,
    /// Whether the profile is executable (SPEC CAP-4).
    pub executable: bool,
    /// `Compaction`'s fixed metadata (SPEC CAP-1).
    pub compaction: CompactionMetadataOutput,
}

/// `compose`: the status and what was built (SPEC CMP-2 .. CMP-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompositionOutput {
    /// The status (SPEC CMP-2).
    pub status: String,
    /// Nodes built (1 on `Success`, else 0).
    pub nodes_installed: u32,
    /// Run coordination of the installed node (`SharedWithAgent`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<String>,
    /// The installed profile's classifier and integration (SPEC CMP-1), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategies: Option<Vec<String>>,
}

/// A failure that names only its status (SPEC TRU-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttemptFailureOutput {
    /// The error kind.
    pub kind: String,
    /// The trust status, for a revalidation failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// `trust`: one provider call's revalidations and events (SPEC TRU-1 .. TRU-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustOutput {
    /// Whether calls revalidate (SPEC TRU-1).
    pub guarded: bool,
    /// Where the attempt ended (`BeforeStarted`, `DuringAssembly`, `Terminated`,
    /// `RevalidationAfterAssembly`, `Success`).
    pub end: String,
    /// The progress events, in order.
    pub events: Vec<String>,
    /// Whether the bounded messages were dispatched.
    pub dispatched: bool,
    /// The error the call raised, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<AttemptFailureOutput>,
}

/// The owners triple.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OwnersOutput {
    /// User id.
    pub user_id: String,
    /// Orchestration id.
    pub orchestration_id: String,
    /// Session id.
    pub session_id: String,
}

/// A validated reference record (SPEC ARF-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordOutput {
    /// Schema version (1).
    pub schema: i32,
    /// Reference id.
    pub reference_id: String,
    /// The reference id's UTF-8 length (82, SPEC ART-2).
    pub reference_utf8_bytes: u32,
    /// Workspace path (derived from the digest).
    pub path: String,
    /// Digest.
    pub digest: String,
    /// The body's UTF-8 byte size.
    pub byte_size: i64,
    /// The description's length in UTF-16 code units.
    pub description_utf16_units: u32,
    /// Owners.
    pub owners: OwnersOutput,
    /// Creating tool name.
    pub tool_name: String,
    /// Creating tool call id.
    pub call_id: String,
}

/// An attribution (SPEC ATR-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttributionOutput {
    /// `Offload` or `Rehydration`.
    pub operation: String,
    /// Input UTF-8 bytes.
    pub input_utf8_bytes: i64,
    /// Output UTF-8 bytes, or null.
    pub output_utf8_bytes: Option<i64>,
}

/// An artifact diagnostics value (SPEC ATR-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactDiagnosticsOutput {
    /// Operation.
    pub operation: String,
    /// Outcome.
    pub outcome: String,
    /// Content.
    pub content: String,
    /// Reason.
    pub reason: String,
    /// Observed UTF-8 byte size, or null.
    pub observed_utf8_byte_size: Option<i64>,
    /// Threshold or budget.
    pub configured_threshold_or_budget: i64,
    /// Reference id, or null.
    pub reference_id: Option<String>,
    /// Attribution.
    pub attribution: AttributionOutput,
}

/// A recovered segment (SPEC RHY-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolvedSegmentOutput {
    /// Reference id.
    pub reference_id: String,
    /// The exact body.
    pub body: String,
    /// Always true.
    pub skip_eager_reoffload: bool,
}

/// `rehydrate` (SPEC RHY-2 .. RHY-4, ATR-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RehydrationOutput {
    /// Resolution status.
    pub status: String,
    /// The recovered segment (only `Resolved`).
    pub segment: Option<ResolvedSegmentOutput>,
    /// The decision's diagnostics.
    pub diagnostics: ArtifactDiagnosticsOutput,
    /// Events reported (1).
    pub events: u32,
    /// Whether the event holds the result's very diagnostics value (SPEC ATR-3).
    pub shared_with_event: bool,
    /// Workspace reads performed.
    pub workspace_reads: u32,
}

/// `offload` (SPEC OFF-2, OFF-3, ATR-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OffloadOutput {
    /// The record replacing the body (only `Offloaded` / `ExistingReference`).
    pub record: Option<RecordOutput>,
    /// The decision's diagnostics.
    pub diagnostics: ArtifactDiagnosticsOutput,
    /// Events reported (1).
    pub events: u32,
    /// Whether the event holds the result's very diagnostics value (SPEC ATR-3).
    pub shared_with_event: bool,
    /// Workspace writes attempted.
    pub workspace_writes: u32,
}

/// The effective-defaults report (SPEC CFG-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EffectiveDefaultOutput {
    /// `RequestedEnabled` or `RequestedDisabled`.
    pub requested: String,
    /// `Enabled` or `Disabled`.
    pub effective: String,
    /// `CallerSupplied` or `NotApplicable`.
    pub source: String,
}

/// The compaction the public path installs (SPEC CFG-3, CFG-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BundleCompactionOutput {
    /// The estimator's unit (`Utf8Bytes`).
    pub measurement_unit: String,
    /// Hard limit.
    pub hard_limit: i32,
    /// Trigger threshold.
    pub trigger_threshold: i32,
    /// Preservation label.
    pub preservation_label: String,
    /// Preservation version.
    pub preservation_version: i32,
    /// Classifier and integration.
    pub strategies: Vec<String>,
    /// Run coordination (`CallLocal`).
    pub runs: String,
    /// Whether a trust binding is configured (false).
    pub trust_binding: bool,
    /// Whether the capability resolver was consulted (false).
    pub capability_resolver_consulted: bool,
    /// Where the node sits (`InsidePerCallHistory`, SPEC CFG-4).
    pub placement: String,
}

/// `configure` (SPEC CFG-2 .. CFG-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigurationOutput {
    /// The effective-defaults report.
    pub report: EffectiveDefaultOutput,
    /// The compaction installed, if any.
    pub compaction: Option<BundleCompactionOutput>,
}
