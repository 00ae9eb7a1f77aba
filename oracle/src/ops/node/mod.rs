//! `node`: a node driven through provider calls and run steps (SPEC NODE-1 .. NODE-6, EVT-1 ..
//! EVT-6), answered with each call's event stream, dispatched messages, forwarded digests,
//! typed errors and the run's state. `AssemblyId`s are written `A1`, `A2`, ... and runs `R1`,
//! ... in order of first appearance (SPEC EVT-5). The case and answer types are here; [`drive`]
//! converts the calls into plans and steps the implementation's node world.

use hybrid_compaction_model::assembly::Outcome;
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::estimator::MeasurementUnit;
use hybrid_compaction_model::seam::Implementation;
use hybrid_compaction_model::trust::AttemptEvent;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::dispatch::{NoFields, SentOutput, StreamInput};
use crate::wire::error::{CaseError, ErrorOutput};
use crate::wire::input::{MessageInput, PolicyInput, ReducerInput, SnapshotInput};
use crate::wire::names::Name;
use crate::wire::output::DiagnosticsOutput;
use crate::wire::runs::RunOutput;

pub(crate) mod drive;

/// Inputs of the `node` operation: one node (SPEC NODE-1 .. NODE-6) driven through a sequence
/// of provider calls and run steps on one logical flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeCase {
    /// The policy of the options (may be inherited from the vector test group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// The enabled switch (default `true`, SPEC NODE-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Whether options (policy and reducer) are supplied (default `true`, SPEC NODE-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<bool>,
    /// The upstream reducer of the options (`upstream` or `messageCounting`; absent: an upstream
    /// reducer that always echoes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reducer: Option<ReducerInput>,
    /// The reporter (absent: no reporter, no events, SPEC EVT-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporter: Option<ReporterInput>,
    /// The steps, in order.
    pub steps: Vec<NodeStepInput>,
}

/// The reporter's identity (SPEC EVT-3); its sequence source counts from 1 and it has no clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReporterInput {
    /// The workflow id.
    pub workflow_id: String,
    /// The agent id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The parent agent id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_agent_id: Option<String>,
    /// The depth.
    #[serde(default)]
    pub depth: u32,
}

/// One step of a `node` scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum NodeStepInput {
    /// One provider call through the node (SPEC NODE-2).
    Call(NodeCallInput),
    /// `BeginRun` on the node's flow: later calls share this run (SPEC LSE-6).
    BeginRun(NoFields),
    /// Ends the run begun by the latest unmatched `beginRun`.
    EndRun(NoFields),
    /// Another call of the run holds a reservation of this body with lease `lease` (SPEC
    /// LSE-2; needs an active run).
    Reserve(NodeLeaseInput),
    /// That other lease is released (SPEC LSE-4).
    Release(NodeLeaseInput),
    /// Later calls report through a reporter of these fields, sharing the case reporter's
    /// sequence source (SPEC EVT-3); needs the case's `reporter`.
    Reporter(ReporterInput),
}

/// `reserve` / `release` of a node scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeLeaseInput {
    /// The body (for `reserve`; ignored by `release`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The lease name.
    pub lease: String,
}

/// One provider call of a `node` scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeCallInput {
    /// The call's messages (adapted with the content-hash classifier, SPEC CLS-2).
    pub messages: Vec<MessageInput>,
    /// The snapshot integration's schedule for this call (SPEC SNAP-5): a step without
    /// `entries` repeats the previous one, the first the adapted baseline. Absent: the static
    /// integration over the baseline (SPEC SNAP-3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<Vec<SnapshotInput>>,
    /// The integration returns no provider (an `InvalidOperation` error, SPEC NODE-3 step 4).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_provider: bool,
    /// Cancellation: `before` (token set before the call) or `capture:K` (set during the K-th
    /// capture of the integration's provider).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<String>,
    /// The real provider fails with this message (after `Composed`, SPEC NODE-5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_fails: Option<String>,
    /// A streaming call (SPEC NODE-2): the provider streams updates and the caller reads them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamInput>,
    /// The classifier fails when asked for a message's id (SPEC CLS-3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classifier_fails: Option<ClassifierFailsInput>,
    /// This call parks at its reducer's first invocation while another node makes its calls,
    /// then continues (SPEC EVT-5: two assemblies in flight).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub while_parked: Option<WhileParkedInput>,
}

/// Another node's calls while a call is parked in its reducer (SPEC EVT-5): the case's policy,
/// another logical flow, a reporter sharing the case reporter's sequence source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WhileParkedInput {
    /// The other node's reducer (absent: the case's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reducer: Option<ReducerInput>,
    /// The other node's reporter identity (absent: the case's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporter: Option<ReporterInput>,
    /// Its calls, in order, each to its end (none of them parks).
    pub calls: Vec<NodeCallInput>,
}

/// A failing classifier (SPEC CLS-3): it raises an error of `kind` when asked for the id of
/// message `message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClassifierFailsInput {
    /// The 0-based index of the message (below the call's message count).
    pub message: u32,
    /// The kind the classifier raises (propagated unchanged).
    pub kind: Name<ErrorKind>,
}

/// One progress event (SPEC EVT-3, EVT-4). No timestamp: the wire reporter has no clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventOutput {
    /// `Started`, `Completed`, `Terminated` or `Composed`.
    pub kind: Name<AttemptEvent>,
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
    pub measurement_unit: Option<Name<MeasurementUnit>>,
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
    pub outcome: Name<Outcome>,
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
    /// A call with `whileParked`: whether it reached its reducer and parked there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parked: Option<bool>,
    /// A call with `whileParked`: the other node's calls (each `run` null: call-local runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub while_parked: Option<Vec<NodeStepOutput>>,
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

/// The answer of `node`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeAnswer {
    /// The selection and one answer per step.
    pub node: NodeOutput,
}

impl Operation for NodeCase {
    const ANSWER: &'static str = "node";
    type Answer = NodeAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<NodeAnswer, CaseError> {
        Ok(NodeAnswer {
            node: drive::run(self, imp)?,
        })
    }

    fn policy_slot(&mut self) -> Option<&mut Option<PolicyInput>> {
        Some(&mut self.policy)
    }
}
