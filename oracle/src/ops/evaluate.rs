//! `evaluate`: trigger evaluation (SPEC POL-3, POL-4) plus the estimator's per-entry sizes
//! (SPEC EST-1 .. EST-7).

use hybrid_compaction_model::estimator::MeasurementUnit;
use hybrid_compaction_model::policy::{Policy, TriggerEvaluation};
use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::convert;
use crate::wire::error::{typed, CaseError};
use crate::wire::input::{EntryInput, PolicyInput, TranscriptInput};
use crate::wire::names::Name;

/// Inputs of the `evaluate` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("oneOf" = [{"required": ["entries"]}, {"required": ["transcript"]}]))]
pub struct EvaluateCase {
    /// The policy (its estimator measures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// The list to measure (exactly one of `entries` and `transcript`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryInput>>,
    /// The list to measure, as a transcript (SPEC TRN-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptInput>,
    /// Only `before` is meaningful here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = "^before$"))]
    pub cancel: Option<String>,
}

/// A trigger evaluation (SPEC POL-3, POL-4) plus the estimator's per-entry sizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvaluationOutput {
    /// The estimator's unit.
    pub measurement_unit: Name<MeasurementUnit>,
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

/// Renders an evaluation.
pub(crate) fn evaluation_output(
    p: &Policy,
    sizes: Vec<i32>,
    t: &TriggerEvaluation,
) -> EvaluationOutput {
    EvaluationOutput {
        measurement_unit: Name(p.estimator().unit()),
        entry_sizes: sizes,
        estimated_size: t.estimated_size,
        hard_limit: t.hard_limit,
        trigger_margin: t.trigger_margin,
        trigger_threshold: t.trigger_threshold,
        triggered: t.triggered,
    }
}

/// The answer of `evaluate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvaluateAnswer {
    /// The trigger evaluation.
    pub evaluation: EvaluationOutput,
}

impl Operation for EvaluateCase {
    const ANSWER: &'static str = "evaluation";
    type Answer = EvaluateAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<EvaluateAnswer, CaseError> {
        let point = convert::cancel_point(self.cancel.as_ref(), "$.cancel")?;
        let token = convert::token_for(point, "$.cancel", false)?;
        let p = convert::policy(self.policy.as_ref(), imp, "$.policy")?;
        let (es, _) =
            convert::entries_or_transcript(self.entries.as_deref(), self.transcript.as_ref())?;
        let t = imp.evaluate(&es, &p, &token).map_err(|e| typed(&e))?;
        let sizes = es.iter().map(|e| p.estimator().estimate(e)).collect();
        Ok(EvaluateAnswer {
            evaluation: evaluation_output(&p, sizes, &t),
        })
    }

    fn policy_slot(&mut self) -> Option<&mut Option<PolicyInput>> {
        Some(&mut self.policy)
    }
}
