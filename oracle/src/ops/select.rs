//! `select`: required-preservation selection (SPEC PRE-1 .. PRE-4).

use hybrid_compaction_model::seam::Implementation;
use hybrid_compaction_model::selection::PreservationSelection;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::convert;
use crate::wire::error::{typed, CaseError};
use crate::wire::input::{EntryInput, PolicyInput, TranscriptInput};
use crate::wire::output::ids;

/// Inputs of the `select` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("oneOf" = [{"required": ["entries"]}, {"required": ["transcript"]}]))]
pub struct SelectCase {
    /// The policy (retention count, label, version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// The list to select from (exactly one of `entries` and `transcript`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryInput>>,
    /// The list to select from, as a transcript (SPEC TRN-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptInput>,
    /// Only `before` is meaningful here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = "^before$"))]
    pub cancel: Option<String>,
}

/// A preservation selection (SPEC PRE-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelectionOutput {
    /// Required ids by position.
    pub required_entry_ids: Vec<String>,
    /// The policy label.
    pub preservation_label: String,
    /// The policy version.
    pub preservation_version: i32,
}

/// Renders a selection.
pub(crate) fn selection_output(s: &PreservationSelection) -> SelectionOutput {
    SelectionOutput {
        required_entry_ids: ids(&s.required_entry_ids),
        preservation_label: s.preservation_label.clone(),
        preservation_version: s.preservation_version,
    }
}

/// The answer of `select`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelectAnswer {
    /// The selection.
    pub selection: SelectionOutput,
}

impl Operation for SelectCase {
    const ANSWER: &'static str = "selection";
    type Answer = SelectAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<SelectAnswer, CaseError> {
        let point = convert::cancel_point(self.cancel.as_ref(), "$.cancel")?;
        let token = convert::token_for(point, "$.cancel", false)?;
        let p = convert::policy(self.policy.as_ref(), imp, "$.policy")?;
        let (es, _) =
            convert::entries_or_transcript(self.entries.as_deref(), self.transcript.as_ref())?;
        let s = imp
            .select_required(&es, &p, &token)
            .map_err(|e| typed(&e))?;
        Ok(SelectAnswer {
            selection: selection_output(&s),
        })
    }

    fn policy_slot(&mut self) -> Option<&mut Option<PolicyInput>> {
        Some(&mut self.policy)
    }
}
