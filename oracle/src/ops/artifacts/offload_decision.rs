//! The offload decision for a tool result or a recovered segment (SPEC OFF-1 .. OFF-3), with its
//! attribution (SPEC ATR-1 .. ATR-3): its inputs as the wire writes them, its answer, and the
//! decision itself, which the operations `offload` and `decisions` both take.

use std::collections::BTreeMap;
use std::sync::Arc;

use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::artifact_diagnostics::ArtifactEvent;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::RecoverableSegment;
use hybrid_compaction_model::offload::{OffloadError, OffloadInput, OffloadRequest};
use hybrid_compaction_model::workspace::{ScriptedWorkspace, Workspace};
use hybrid_compaction_spec as spec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    artifact_diagnostics_output, default_guard, record_error, record_output, trust_answer,
    ArtifactDiagnosticsOutput, RecordOutput,
};
use crate::wire::error::{answer, wire, CaseError};
use crate::wire::host::{fixed_now, yes, ContextInput};

/// A tool result to offload (SPEC OFF-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolResultInput {
    /// Tool name.
    pub tool_name: String,
    /// Tool call id.
    pub call_id: String,
    /// The serialized result text.
    pub serialized: String,
    /// The description.
    #[serde(default)]
    pub description: String,
}

/// The workspace an offload sees (SPEC section 17).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkspaceInput {
    /// Bodies already present, by path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Reads fail.
    #[serde(default)]
    pub fail_read: bool,
    /// Writes fail.
    #[serde(default)]
    pub fail_write: bool,
    /// Checkpoints fail.
    #[serde(default)]
    pub fail_checkpoint: bool,
}

/// Inputs of `offload` (SPEC OFF-1 .. OFF-3, ATR-1 .. ATR-3): exactly one of `toolResult` and
/// `segment`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OffloadCase {
    /// A tool result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result: Option<ToolResultInput>,
    /// A recovered segment's body (its reference is the body's digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<String>,
    /// The byte threshold.
    pub threshold: i64,
    /// Whether the default trust binding is configured (default true).
    #[serde(default = "yes")]
    pub binding: bool,
    /// The workspace; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<WorkspaceInput>,
    /// Cancellation is requested (observed after the write, SPEC OFF-2 row 7).
    #[serde(default)]
    pub cancelled: bool,
    /// The accessor's successive answers (default: always the binding's own context).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessor: Option<Vec<Option<ContextInput>>>,
}

/// `offload` (SPEC OFF-2, OFF-3, ATR-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OffloadOutput {
    /// The record replacing the body (only `Offloaded` / `ExistingReference`).
    pub record: Option<RecordOutput>,
    /// The decision's diagnostics.
    pub diagnostics: ArtifactDiagnosticsOutput,
    /// Events reported (1).
    pub events: u32,
    /// Whether the event holds the result's very diagnostics value (SPEC ATR-3).
    pub shared_with_event: bool,
    /// Workspace writes attempted.
    pub workspace_writes: u32,
}

impl OffloadCase {
    /// The decision, its event reported to `events` (SPEC ATR-3: one event per decision, none
    /// when it raises).
    pub fn decide(&self, events: &mut Vec<ArtifactEvent>) -> Result<OffloadOutput, CaseError> {
        let c = self;
        let input = match (&c.tool_result, &c.segment) {
            (Some(t), None) => OffloadInput::ToolResult {
                tool_name: t.tool_name.clone(),
                call_id: t.call_id.clone(),
                serialized: t.serialized.clone(),
                description: t.description.clone(),
            },
            (None, Some(body)) => OffloadInput::RecoveredSegment(RecoverableSegment {
                reference: ArtifactReference::to_content(body),
                body: body.clone(),
            }),
            _ => {
                return wire(
                    "$",
                    "an offload case needs exactly one of `toolResult` and `segment`",
                )
            }
        };
        let request = OffloadRequest::new(input, c.threshold).map_err(|e| {
            CaseError::Answer(answer(e.kind(), Some("Threshold"), None, e.to_string()))
        })?;
        let guard = default_guard(c.accessor.as_deref())?;
        let mut workspace = c.workspace.as_ref().map(|w| ScriptedWorkspace {
            files: w.files.clone(),
            fail_read: w.fail_read,
            fail_write: w.fail_write,
            fail_checkpoint: w.fail_checkpoint,
            ..ScriptedWorkspace::default()
        });
        let cancel = if c.cancelled {
            CancellationToken::cancelled()
        } else {
            CancellationToken::new()
        };
        let host = spec::offload::OffloadHost {
            guard: c.binding.then_some(&guard),
            workspace: workspace.as_mut().map(|w| w as &mut dyn Workspace),
            cancel: &cancel,
            now: fixed_now(),
        };
        let result = spec::offload::offload(&request, host, events).map_err(|e| match e {
            OffloadError::Trust(t) => trust_answer(t.status, e.to_string()),
            OffloadError::Record(r) => record_error(&r),
            OffloadError::Diagnostics(d) => {
                CaseError::Answer(answer(e.kind(), Some(d.rule.name()), None, e.to_string()))
            }
            _ => CaseError::Answer(answer(e.kind(), None, None, e.to_string())),
        })?;
        let shared = matches!(events.as_slice(), [only] if Arc::ptr_eq(&only.diagnostics, &result.diagnostics));
        Ok(OffloadOutput {
            record: result.record.as_ref().map(record_output),
            diagnostics: artifact_diagnostics_output(&result.diagnostics),
            events: u32::try_from(events.len()).unwrap_or(u32::MAX),
            shared_with_event: shared,
            workspace_writes: workspace.map_or(0, |w| u32::try_from(w.writes).unwrap_or(u32::MAX)),
        })
    }
}
