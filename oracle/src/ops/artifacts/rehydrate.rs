//! `rehydrate`: rehydration of a reference record through the trust guard and the workspace
//! (SPEC RHY-1 .. RHY-4), with its attribution (SPEC ATR-1 .. ATR-3); the decision itself is
//! [`super::rehydration_decision`]'s, which `decisions` takes too.

use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::super::Operation;
use super::rehydration_decision::{RehydrateCase, RehydrationOutput};
use crate::wire::error::CaseError;

/// The answer of `rehydrate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RehydrateAnswer {
    /// The result.
    pub rehydration: RehydrationOutput,
}

impl Operation for RehydrateCase {
    const ANSWER: &'static str = "rehydration";
    type Answer = RehydrateAnswer;

    fn run(&self, _imp: &dyn Implementation) -> Result<RehydrateAnswer, CaseError> {
        Ok(RehydrateAnswer {
            rehydration: self.decide(&mut Vec::new())?,
        })
    }
}
