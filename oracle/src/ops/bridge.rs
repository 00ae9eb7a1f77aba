//! `bridge`: the upstream-reducer bridge on its own (SPEC BRG-1 .. BRG-3), one call per scripted
//! upstream answer, including an upstream that throws cancellation.

use std::sync::Arc;

use hybrid_compaction_model::assembly::{AssemblyError, Reducer, ReductionRequest};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::estimator::ConstantEstimator;
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::{CancelAtCall, ScriptedUpstreamReducer, UpstreamStep};
use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::convert;
use crate::wire::error::{typed, wire, CaseError, WireError};
use crate::wire::input::{EntryInput, MessageInput};
use crate::wire::output::{entry_outputs, EntryOutput};

/// Inputs of the `bridge` operation: the upstream-reducer bridge on its own (SPEC BRG-1 ..
/// BRG-3). The bridge is called once per step; the first call receives `entries`, every later
/// call the previous call's result entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BridgeCase {
    /// The request entries of the first call.
    pub entries: Vec<EntryInput>,
    /// The upstream reducer's answers, one per call (at least one).
    pub steps: Vec<BridgeStepInput>,
}

/// One upstream answer of the `bridge` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum BridgeStepInput {
    /// Return the input messages unchanged.
    Echo,
    /// Return null (a `ReducerContract` error, SPEC BRG-1).
    Null,
    /// Fail with this message (a `ReducerFailed` error, SPEC BRG-1).
    Fail(String),
    /// Observe the call's cancellation (the token is set during the call) and throw: a
    /// `Cancelled` error.
    Cancel,
    /// Return these messages.
    Return(Vec<MessageInput>),
}

/// `bridge`: the result entries of every call, in call order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BridgeOutput {
    /// One list of result entries per call.
    pub calls: Vec<Vec<EntryOutput>>,
}

/// The answer of `bridge`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BridgeAnswer {
    /// The result entries of every call.
    pub bridge: BridgeOutput,
}

/// The policy handed to the bridge in its requests (the bridge reads none of it, SPEC BRG-1).
fn bridge_policy() -> Result<Policy, CaseError> {
    Policy::new(PolicySpec {
        hard_limit: 100,
        trigger_margin: 1,
        recent_message_retention_count: 1,
        maximum_compaction_attempts: 1,
        preservation_label: Some("bridge".to_owned()),
        preservation_version: 1,
        estimator: Some(Arc::new(ConstantEstimator(1))),
    })
    .map_err(|e| CaseError::Wire(WireError::new("$", e.to_string())))
}

impl BridgeCase {
    /// The upstream script, and the first step (if any) that observes cancellation.
    fn script(&self) -> Result<(Vec<UpstreamStep>, Option<usize>), CaseError> {
        let mut steps = Vec::with_capacity(self.steps.len());
        let mut cancel_at = None;
        for (i, s) in self.steps.iter().enumerate() {
            let path = format!("$.steps[{i}]");
            steps.push(match s {
                BridgeStepInput::Echo => UpstreamStep::Echo,
                BridgeStepInput::Null => UpstreamStep::Null,
                BridgeStepInput::Fail(m) => UpstreamStep::Fail(m.clone()),
                BridgeStepInput::Cancel => {
                    cancel_at.get_or_insert(i);
                    UpstreamStep::Fail("the upstream reducer observed cancellation".to_owned())
                }
                BridgeStepInput::Return(ms) => {
                    let mut out = Vec::with_capacity(ms.len());
                    for (j, m) in ms.iter().enumerate() {
                        out.push(convert::message(m, &format!("{path}.return[{j}]"))?);
                    }
                    UpstreamStep::Return(out)
                }
            });
        }
        Ok((steps, cancel_at))
    }
}

impl Operation for BridgeCase {
    const ANSWER: &'static str = "bridge";
    type Answer = BridgeAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<BridgeAnswer, CaseError> {
        let mut current = convert::entries(&self.entries, "$.entries")?;
        if self.steps.is_empty() {
            return wire("$.steps", "the bridge needs at least one step");
        }
        let (steps, cancel_at) = self.script()?;
        let token = CancellationToken::new();
        let inner = imp.bridge(Box::new(ScriptedUpstreamReducer::new(steps)));
        // The upstream's cancellation: the token is set during its call, which then throws.
        let mut reducer = match cancel_at {
            Some(k) => CancelAtCall::at(inner, k, token.clone()),
            None => CancelAtCall::never(inner),
        };
        let policy = bridge_policy()?;
        let mut calls = Vec::with_capacity(self.steps.len());
        for k in 0..self.steps.len() {
            let request = ReductionRequest {
                entries: &current,
                required_entry_ids: &[],
                policy: &policy,
                attempt_number: i32::try_from(k + 1).unwrap_or(i32::MAX),
            };
            let result = reducer.reduce(&request);
            if token.is_cancelled() {
                return Err(typed(&AssemblyError::Cancelled));
            }
            let entries = match result {
                Ok(Some(es)) => es,
                Ok(None) => return Err(typed(&AssemblyError::ReducerReturnedNothing)),
                Err(e) => return Err(typed(&AssemblyError::from(e))),
            };
            calls.push(entry_outputs(&entries));
            current = entries;
        }
        Ok(BridgeAnswer {
            bridge: BridgeOutput { calls },
        })
    }
}
