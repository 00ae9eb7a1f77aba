//! `policy`: policy construction and validation (SPEC POL-1, POL-2).

use hybrid_compaction_model::estimator::MeasurementUnit;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::convert;
use crate::wire::error::CaseError;
use crate::wire::input::PolicyInput;
use crate::wire::names::Name;

/// Inputs of the `policy` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyCase {
    /// The policy to validate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
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
    pub measurement_unit: Name<MeasurementUnit>,
}

/// Renders a validated policy.
pub(crate) fn policy_output(p: &Policy) -> PolicyOutput {
    PolicyOutput {
        hard_limit: p.hard_limit(),
        trigger_margin: p.trigger_margin(),
        trigger_threshold: p.trigger_threshold(),
        recent_message_retention_count: p.recent_message_retention_count(),
        maximum_compaction_attempts: p.maximum_compaction_attempts(),
        preservation_label: p.preservation_label().to_owned(),
        preservation_version: p.preservation_version(),
        measurement_unit: Name(p.estimator().unit()),
    }
}

/// The answer of `policy`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyAnswer {
    /// The validated policy.
    pub policy: PolicyOutput,
}

impl Operation for PolicyCase {
    const ANSWER: &'static str = "policy";
    type Answer = PolicyAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<PolicyAnswer, CaseError> {
        let p = convert::policy(self.policy.as_ref(), imp, "$.policy")?;
        Ok(PolicyAnswer {
            policy: policy_output(&p),
        })
    }

    fn policy_slot(&mut self) -> Option<&mut Option<PolicyInput>> {
        Some(&mut self.policy)
    }
}
