//! Case types of the ADR-0007 operations (SPEC sections 16-18): `resolve`, `compose`, `trust`,
//! `record`, `rehydrate`, `offload`, `configure`.
//!
//! Syntax only, like [`super::super::case`]: categorical values are their SPEC names as strings
//! (checked in [`super::exec`], where an unknown name is a wire error listing the known ones).
//! Absent optional inputs model the reference implementation's null references where the SPEC
//! gives them a meaning (CMP-3 step 1, TRU-1), else a documented default.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn yes() -> bool {
    true
}

/// One capability of a profile (SPEC CAP-1 .. CAP-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapabilityInput {
    /// `Compaction` (fixed metadata, SPEC CAP-1) or any other capability name.
    pub name: String,
    /// Whether the caller names it.
    #[serde(default)]
    pub requested: bool,
    /// The resolver's evidence phase (`G2` .. `G7`); absent: no evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// Stability (`Stable`, `Experimental`, `ProviderDependent`); required for every capability
    /// but `Compaction`, refused for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stability: Option<String>,
    /// Whether it is a bundle default (not for `Compaction`; default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_default: Option<bool>,
    /// Declared delivery phase (`G2` .. `G7`); required for every capability but `Compaction`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_phase: Option<String>,
}

/// A resolved capability profile (SPEC CAP-2 .. CAP-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapabilityProfileInput {
    /// Bundle lane: `SelectedProviders` or `CompleteBundle`.
    pub lane: String,
    /// Acceptance: `StableOnly` or `StableAndExperimental`.
    pub acceptance: String,
    /// History coherence (default true).
    #[serde(default = "yes")]
    pub history_coherent: bool,
    /// The capabilities (names distinct).
    pub capabilities: Vec<CapabilityInput>,
}

/// Inputs of `resolve`: capability resolution (SPEC CAP-1 .. CAP-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveCase {
    /// The profile to resolve.
    pub profile: CapabilityProfileInput,
}

/// Inputs of `compose`: one composition call (SPEC CMP-1 .. CMP-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComposeCase {
    /// The client chain's middleware, outermost first (`Compaction` or `Other`); absent: no
    /// client (a null reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<Vec<String>>,
    /// The capability profile; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<CapabilityProfileInput>,
    /// Whether an execution binding is supplied (default true).
    #[serde(default = "yes")]
    pub execution_binding: bool,
    /// Whether a binding accessor is supplied (default true).
    #[serde(default = "yes")]
    pub accessor: bool,
    /// The session id (default `session-1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Whether a hybrid profile (the default strategies, SPEC CMP-1) is supplied.
    #[serde(default)]
    pub hybrid_profile: bool,
}

/// The owners triple (SPEC section 16 "Owners").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OwnersInput {
    /// User id.
    pub user_id: String,
    /// Orchestration id.
    pub orchestration_id: String,
    /// Session id.
    pub session_id: String,
}

/// A trust binding (SPEC section 16 "trust binding").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BindingInput {
    /// The owners.
    pub owners: OwnersInput,
    /// The workspace instance (an opaque token, compared for equality).
    pub workspace: u64,
}

/// One answer of the binding accessor: the current execution context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextInput {
    /// User id.
    pub user_id: String,
    /// Orchestration id.
    pub orchestration_id: String,
    /// Workspace instance; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<u64>,
}

/// Inputs of `trust`: configuration and the revalidations of one provider call (SPEC TRU-1 ..
/// TRU-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustCase {
    /// The binding; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<BindingInput>,
    /// The accessor's answers to successive revalidations (`null`: no context), the last one
    /// repeating; absent: no accessor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessor: Option<Vec<Option<ContextInput>>>,
    /// The configured session id; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// How the assembly between the two revalidations ends: `Success` (default),
    /// `Terminated` (an irreducible history) or `Failed` (the reducer fails).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assembly: Option<String>,
}

/// A reference record's stored fields (SPEC ARF-1, ARF-2); every absent field defaults to the
/// consistent value for `body` (owners: the default binding's; tool `tool`, call `call-1`,
/// description empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordFieldsInput {
    /// The referenced body (defaults derive from it).
    pub body: String,
    /// Schema version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<i32>,
    /// Reference id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_id: Option<String>,
    /// Workspace path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Lowercase hex digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Byte size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_size: Option<i64>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Owners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owners: Option<OwnersInput>,
    /// Creating tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Creating tool call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

/// What a record is created from (SPEC ARF-3): owners come from the binding, never from here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreationInput {
    /// The body.
    pub body: String,
    /// The description.
    #[serde(default)]
    pub description: String,
    /// The creating tool's name.
    pub tool_name: String,
    /// The creating tool call's id.
    pub call_id: String,
}

/// Inputs of `record`: exactly one of `create` (SPEC ARF-3) and `reconstruct` (SPEC ARF-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordCase {
    /// Fresh creation under `binding`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<CreationInput>,
    /// Reconstruction from stored fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconstruct: Option<RecordFieldsInput>,
    /// The trusted binding of a creation (default: owners `user-1` / `orch-1` / `session-1`,
    /// workspace 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<BindingInput>,
}

/// Inputs of `rehydrate` (SPEC RHY-1 .. RHY-4, ATR-1 .. ATR-3). The binding is the default one
/// (see `record`); the record is created from `body` under `recordOwners`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RehydrateCase {
    /// The referenced body (the record's reference is its digest).
    pub body: String,
    /// The record's owners (default: the binding's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_owners: Option<OwnersInput>,
    /// What the workspace holds at the record's path; absent: nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<String>,
    /// The workspace read fails.
    #[serde(default)]
    pub fail_read: bool,
    /// The byte budget.
    pub budget: i64,
    /// `ToolRequest` (default) or `DeterministicPolicy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The accessor's successive answers (default: always the binding's own context).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessor: Option<Vec<Option<ContextInput>>>,
}

/// A tool result to offload (SPEC OFF-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolResultInput {
    /// Tool name.
    pub tool_name: String,
    /// Tool call id.
    pub call_id: String,
    /// The serialized result text.
    pub serialized: String,
    /// The description.
    #[serde(default)]
    pub description: String,
}

/// The workspace an offload sees (SPEC section 17).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkspaceInput {
    /// Bodies already present, by path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Reads fail.
    #[serde(default)]
    pub fail_read: bool,
    /// Writes fail.
    #[serde(default)]
    pub fail_write: bool,
    /// Checkpoints fail.
    #[serde(default)]
    pub fail_checkpoint: bool,
}

/// Inputs of `offload` (SPEC OFF-1 .. OFF-3, ATR-1 .. ATR-3): exactly one of `toolResult` and
/// `segment`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OffloadCase {
    /// A tool result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result: Option<ToolResultInput>,
    /// A recovered segment's body (its reference is the body's digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<String>,
    /// The byte threshold.
    pub threshold: i64,
    /// Whether the default trust binding is configured (default true).
    #[serde(default = "yes")]
    pub binding: bool,
    /// The workspace; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<WorkspaceInput>,
    /// Cancellation is requested (observed after the write, SPEC OFF-2 row 7).
    #[serde(default)]
    pub cancelled: bool,
    /// The accessor's successive answers (default: always the binding's own context).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessor: Option<Vec<Option<ContextInput>>>,
}

/// The five public options of ADR-0011 (SPEC CFG-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicOptionsInput {
    /// `HardLimitBytes`.
    pub hard_limit_bytes: i32,
    /// `TriggerMarginBytes`.
    pub trigger_margin_bytes: i32,
    /// `RecentMessageRetentionCount`.
    pub recent_message_retention_count: i32,
    /// `MaximumCompactionAttempts`.
    pub maximum_compaction_attempts: i32,
    /// Whether an `UpstreamReducer` is supplied.
    pub upstream_reducer: bool,
}

/// Inputs of `configure`: the public switch (SPEC CFG-1 .. CFG-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigureCase {
    /// `EnableHybridCompaction`.
    pub enabled: bool,
    /// The options; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<PublicOptionsInput>,
    /// The client chain's middleware (`Compaction` or `Other`; default none).
    #[serde(default)]
    pub client: Vec<String>,
}
