//! Output types of the scenario operations. Digests are 64 lowercase hex digits (SPEC ART-1);
//! runs are written `R1`, `R2`, ... in creation order and attempts' `AssemblyId`s `A1`, `A2`,
//! ... in order of first appearance, so two outputs are equal exactly when their runs and ids
//! pair up the same way, whatever the underlying values.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::wire::output::{DiagnosticsOutput, EntryOutput, ErrorOutput};

/// `bridge`: the result entries of every call, in call order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BridgeOutput {
    /// One list of result entries per call.
    pub calls: Vec<Vec<EntryOutput>>,
}

/// The observable state of one run after a step (SPEC LSE-1, LSE-7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunOutput {
    /// `R1`, `R2`, ... in creation order.
    pub run: String,
    /// Delivered digests, sorted.
    pub delivered: Vec<String>,
    /// Reserved digest -> the name of the lease holding it.
    pub reserved: BTreeMap<String, String>,
    /// Non-zero revision counters of the digests the scenario names.
    pub revisions: BTreeMap<String, u64>,
    /// Whether a call holds the run's gate.
    pub gate_occupied: bool,
}

/// One capture of a filtering provider (SPEC LSE-8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CaptureOutput {
    /// The effective version.
    pub version: i64,
    /// The kept entry ids, in order.
    pub entry_ids: Vec<String>,
}

/// The answer of one `leases` step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaseStepOutput {
    /// The step's typed error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorOutput>,
    /// `reserve`: whether the reservation succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved: Option<bool>,
    /// `revision`: the counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
    /// `enter`: `admitted` or `waiting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// A waiting call admitted because this step left the gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admitted: Option<String>,
    /// `capture`: the filtered snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<CaptureOutput>,
    /// The step's run after the step (null: the flow has no active run).
    pub run: Option<RunOutput>,
}

/// A dispatched message: role and text (SPEC ENT-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SentOutput {
    /// The role.
    pub role: String,
    /// The concatenated text parts.
    pub text: String,
}

/// One progress event (SPEC EVT-3, EVT-4). No timestamp: the wire reporter has no clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventOutput {
    /// `Started`, `Completed`, `Terminated` or `Composed`.
    pub kind: String,
    /// `A1`, `A2`, ... in order of first appearance.
    pub assembly_id: String,
    /// From the reporter's sequence source (first number 1).
    pub sequence_number: u64,
    /// The reporter's workflow id.
    pub workflow_id: String,
    /// The reporter's agent id.
    pub agent_id: Option<String>,
    /// The reporter's parent agent id.
    pub parent_agent_id: Option<String>,
    /// The reporter's depth.
    pub depth: u32,
    /// `Started`: the policy estimator's unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurement_unit: Option<String>,
    /// `Started`: the hard limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hard_limit: Option<i32>,
    /// `Started`: the trigger threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_threshold: Option<i32>,
    /// `Completed`, `Terminated`, `Composed`: the diagnostics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<DiagnosticsOutput>,
}

/// The typed termination error's content (SPEC NODE-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TerminatedOutput {
    /// The termination outcome.
    pub outcome: String,
    /// The result's final estimated size.
    pub final_estimated_size: i32,
    /// The hard limit.
    pub hard_limit: i32,
}

/// The answer of one `node` step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeStepOutput {
    /// The call's typed error (kind `InvalidOperation` for a termination or a provider failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorOutput>,
    /// The termination error's content (SPEC NODE-4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<TerminatedOutput>,
    /// The messages handed to the real provider (absent: nothing was dispatched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<Vec<SentOutput>>,
    /// A streaming call: how many updates the caller read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streamed: Option<u32>,
    /// Success: the digests committed as delivered (SPEC NODE-5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarded: Option<Vec<String>>,
    /// The events the step emitted, in emission order.
    #[serde(default)]
    pub events: Vec<EventOutput>,
    /// The flow's run after the step (null: no active run).
    pub run: Option<RunOutput>,
}

/// `node`: the selection and every step's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeOutput {
    /// `Installed` (a node wraps the provider) or `Disabled` (calls go to the provider
    /// unchanged), SPEC NODE-1.
    pub selection: String,
    /// One answer per step.
    pub steps: Vec<NodeStepOutput>,
}
