//! `analyze`: tool-exchange analysis (SPEC EXC-1 .. EXC-3).

use hybrid_compaction_model::analysis::ToolExchangeAnalysis;
use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::convert;
use crate::wire::error::CaseError;
use crate::wire::input::{EntryInput, TranscriptInput};
use crate::wire::output::ids;

/// Inputs of the `analyze` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("oneOf" = [{"required": ["entries"]}, {"required": ["transcript"]}]))]
pub struct AnalyzeCase {
    /// The list to analyze (exactly one of `entries` and `transcript`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryInput>>,
    /// The list to analyze, as a transcript (SPEC TRN-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptInput>,
}

/// One tool group (SPEC EXC-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupOutput {
    /// The call entry.
    pub call_entry_id: String,
    /// Its call ids, part order.
    pub call_ids: Vec<String>,
    /// First result owners, by position.
    pub result_entry_ids: Vec<String>,
    /// Call entry then result entries.
    pub all_entry_ids: Vec<String>,
    /// Every call id has an owner.
    pub all_matched: bool,
    /// Every first owner follows the call entry.
    pub all_in_order: bool,
    /// The group is complete.
    pub complete: bool,
}

/// A tool-exchange analysis (SPEC EXC-1 .. EXC-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnalysisOutput {
    /// Groups in list order.
    pub groups: Vec<GroupOutput>,
    /// `OrphanedCallEntryIds`.
    pub orphaned_call_entry_ids: Vec<String>,
    /// `OrphanResultEntryIds`.
    pub orphan_result_entry_ids: Vec<String>,
    /// `DuplicateCallEntryIds`.
    pub duplicate_call_entry_ids: Vec<String>,
    /// `DuplicateResultCallIds`.
    pub duplicate_result_call_ids: Vec<String>,
    /// `DuplicateResultEntryIds`.
    pub duplicate_result_entry_ids: Vec<String>,
    /// `ReorderedCallEntryIds`.
    pub reordered_call_entry_ids: Vec<String>,
    /// `CrossGroupResultEntryIds`.
    pub cross_group_result_entry_ids: Vec<String>,
    /// No defect list is non-empty.
    pub sequence_valid: bool,
}

/// Renders an analysis.
pub(crate) fn analysis_output(a: &ToolExchangeAnalysis) -> AnalysisOutput {
    AnalysisOutput {
        groups: a
            .groups
            .iter()
            .map(|g| GroupOutput {
                call_entry_id: g.call_entry_id.as_str().to_owned(),
                call_ids: g.call_ids.clone(),
                result_entry_ids: ids(&g.result_entry_ids),
                all_entry_ids: ids(&g.all_entry_ids),
                all_matched: g.all_matched,
                all_in_order: g.all_in_order,
                complete: g.complete,
            })
            .collect(),
        orphaned_call_entry_ids: ids(&a.orphaned_call_entry_ids),
        orphan_result_entry_ids: ids(&a.orphan_result_entry_ids),
        duplicate_call_entry_ids: ids(&a.duplicate_call_entry_ids),
        duplicate_result_call_ids: a.duplicate_result_call_ids.clone(),
        duplicate_result_entry_ids: ids(&a.duplicate_result_entry_ids),
        reordered_call_entry_ids: ids(&a.reordered_call_entry_ids),
        cross_group_result_entry_ids: ids(&a.cross_group_result_entry_ids),
        sequence_valid: a.is_sequence_valid(),
    }
}

/// The answer of `analyze`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnalyzeAnswer {
    /// The analysis.
    pub analysis: AnalysisOutput,
}

impl Operation for AnalyzeCase {
    const ANSWER: &'static str = "analysis";
    type Answer = AnalyzeAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<AnalyzeAnswer, CaseError> {
        let (es, _) =
            convert::entries_or_transcript(self.entries.as_deref(), self.transcript.as_ref())?;
        Ok(AnalyzeAnswer {
            analysis: analysis_output(&imp.analyze(&es)),
        })
    }
}
