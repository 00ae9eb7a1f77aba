//! `offload`: the offload decision for a tool result or a recovered segment (SPEC OFF-1 ..
//! OFF-3), with its attribution (SPEC ATR-1 .. ATR-3); the decision itself is
//! [`super::offload_decision`]'s, which `decisions` takes too.

use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::super::Operation;
use super::offload_decision::{OffloadCase, OffloadOutput};
use crate::wire::error::CaseError;

/// The answer of `offload`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OffloadAnswer {
    /// The result.
    pub offload: OffloadOutput,
}

impl Operation for OffloadCase {
    const ANSWER: &'static str = "offload";
    type Answer = OffloadAnswer;

    fn run(&self, _imp: &dyn Implementation) -> Result<OffloadAnswer, CaseError> {
        Ok(OffloadAnswer {
            offload: self.decide(&mut Vec::new())?,
        })
    }
}
