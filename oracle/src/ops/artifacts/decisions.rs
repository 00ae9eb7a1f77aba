//! `decisions`: several artifact decisions (offload and rehydration, as the `offload` and
//! `rehydrate` operations take them) on one logical flow, each reported through the progress
//! accessor to the reporter of the innermost active reporter scope (SPEC ATR-6), root or child
//! reporters (SPEC EVT-7): each decision's answer with its event's envelope (sequence number,
//! workflow id, agent id, parent agent id, depth), or no event without an accessor or outside
//! every scope. Like the other artifact operations, both columns answer with the executable
//! specification (`hybrid_compaction_spec::progress`).

use hybrid_compaction_model::seam::{Implementation, ReporterFields};
use hybrid_compaction_spec::progress::{ReportedArtifactEvent, ReporterScopes};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::super::Operation;
use super::offload_decision::{OffloadCase, OffloadOutput};
use super::rehydration_decision::{RehydrateCase, RehydrationOutput};
use crate::wire::dispatch::NoFields;
use crate::wire::error::{wire, CaseError, ErrorOutput, WireError};
use crate::wire::host::yes;

/// Inputs of `decisions` (SPEC ATR-6, EVT-7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DecisionsCase {
    /// Whether a progress accessor is supplied (default true). Without one nothing is reported.
    #[serde(default = "yes")]
    pub progress: bool,
    /// The steps, in order.
    pub steps: Vec<DecisionStepInput>,
}

/// One step of a `decisions` scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum DecisionStepInput {
    /// Enters a root reporter's scope.
    Reporter(ScopeReporterInput),
    /// Enters the scope of a child of the current reporter (needs an active scope).
    Child(ChildReporterInput),
    /// Leaves the innermost scope (needs an active scope).
    Leave(NoFields),
    /// An offload decision (the `offload` operation's inputs).
    Offload(OffloadCase),
    /// A rehydration decision (the `rehydrate` operation's inputs).
    Rehydrate(RehydrateCase),
}

/// A root reporter (SPEC EVT-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScopeReporterInput {
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
    /// Root reporters naming the same `sequence` share one sequence source; absent: its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<String>,
}

/// A child reporter of the current one (SPEC EVT-7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChildReporterInput {
    /// The child's agent id.
    pub agent_id: String,
}

/// A reported artifact event (SPEC ATR-6): the envelope and what it reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactEventOutput {
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
    /// `Offload` or `Rehydration`.
    pub operation: String,
    /// The decision's outcome.
    pub outcome: String,
}

/// One step's answer: `{}` for a scope step; a decision's answer (or its typed error) and its
/// event (absent: none was reported).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DecisionStepOutput {
    /// An offload decision's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offload: Option<OffloadOutput>,
    /// A rehydration decision's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rehydration: Option<RehydrationOutput>,
    /// The error a decision raised (it reports nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorOutput>,
    /// The decision's reported event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<ArtifactEventOutput>,
}

/// The answer of `decisions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DecisionsAnswer {
    /// One answer per step.
    pub decisions: Vec<DecisionStepOutput>,
}

/// A decision's wire error, its path made the step's (`$.x` -> `$.steps[i].offload.x`).
fn nested(e: CaseError, prefix: &str) -> CaseError {
    match e {
        CaseError::Wire(w) => {
            let rest = w.path.strip_prefix('$').unwrap_or(&w.path);
            CaseError::Wire(WireError::new(format!("{prefix}{rest}"), w.message))
        }
        answer => answer,
    }
}

/// Renders a reported event.
fn event_output(e: &ReportedArtifactEvent) -> ArtifactEventOutput {
    ArtifactEventOutput {
        sequence_number: e.sequence,
        workflow_id: e.identity.workflow_id.clone(),
        agent_id: e.identity.agent_id.clone(),
        parent_agent_id: e.identity.parent_agent_id.clone(),
        depth: e.identity.depth,
        operation: e.diagnostics.operation().name().to_owned(),
        outcome: e.diagnostics.outcome().name().to_owned(),
    }
}

/// A decision's answer into `slot`, or its typed error into `answer.error`; a wire error ends
/// the case, its path made the step's.
fn settle<T>(
    result: Result<T, CaseError>,
    slot: &mut Option<T>,
    error: &mut Option<ErrorOutput>,
    prefix: &str,
) -> Result<(), CaseError> {
    match result {
        Ok(o) => *slot = Some(o),
        Err(CaseError::Answer(e)) => *error = Some(e),
        Err(e) => return Err(nested(e, prefix)),
    }
    Ok(())
}

impl DecisionsCase {
    /// A scope step on `scopes` (SPEC EVT-3, EVT-7).
    fn scope(
        step: &DecisionStepInput,
        scopes: &mut ReporterScopes,
        path: &str,
    ) -> Result<(), CaseError> {
        match step {
            DecisionStepInput::Reporter(r) => {
                let identity = ReporterFields {
                    workflow_id: r.workflow_id.clone(),
                    agent_id: r.agent_id.clone(),
                    parent_agent_id: r.parent_agent_id.clone(),
                    depth: r.depth,
                };
                scopes.enter(identity, r.sequence.as_deref());
                Ok(())
            }
            DecisionStepInput::Child(c) => scopes
                .enter_child(&c.agent_id)
                .or_else(|e| wire(format!("{path}.child"), e.to_string())),
            DecisionStepInput::Leave(_) => scopes
                .leave()
                .or_else(|e| wire(format!("{path}.leave"), e.to_string())),
            _ => Ok(()),
        }
    }
}

impl Operation for DecisionsCase {
    const ANSWER: &'static str = "decisions";
    type Answer = DecisionsAnswer;

    fn run(&self, _imp: &dyn Implementation) -> Result<DecisionsAnswer, CaseError> {
        let mut scopes = ReporterScopes::new();
        let mut out = Vec::with_capacity(self.steps.len());
        for (i, step) in self.steps.iter().enumerate() {
            let path = format!("$.steps[{i}]");
            let mut events = Vec::new();
            let mut answer = DecisionStepOutput::default();
            match step {
                DecisionStepInput::Offload(c) => settle(
                    c.decide(&mut events),
                    &mut answer.offload,
                    &mut answer.error,
                    &format!("{path}.offload"),
                )?,
                DecisionStepInput::Rehydrate(c) => settle(
                    c.decide(&mut events),
                    &mut answer.rehydration,
                    &mut answer.error,
                    &format!("{path}.rehydrate"),
                )?,
                scope => Self::scope(scope, &mut scopes, &path)?,
            }
            // SPEC ATR-6: without a progress accessor nothing is reported; with one, the
            // current reporter (none outside every scope) reports the decision's one event.
            if self.progress {
                for e in events {
                    if let Some(r) = scopes.report(e) {
                        answer.event = Some(event_output(&r));
                    }
                }
            }
            out.push(answer);
        }
        Ok(DecisionsAnswer { decisions: out })
    }
}
