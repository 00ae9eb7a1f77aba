//! Rehydrating a reference record through the trust guard and the workspace (SPEC RHY-1 ..
//! RHY-4), with its attribution (SPEC ATR-1 .. ATR-3): its inputs as the wire writes them, its
//! answer, and the decision itself, which the operations `rehydrate` and `decisions` both take.

use std::sync::Arc;

use hybrid_compaction_model::artifact_diagnostics::ArtifactEvent;
use hybrid_compaction_model::rehydration::{
    RehydrationError, RehydrationRequest, RehydrationSource, ResolutionStatus,
};
use hybrid_compaction_model::trust::TrustBinding;
use hybrid_compaction_model::workspace::ScriptedWorkspace;
use hybrid_compaction_spec as spec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    artifact_diagnostics_output, default_guard, record_error, trust_answer,
    ArtifactDiagnosticsOutput,
};
use crate::wire::error::{answer, CaseError};
use crate::wire::host::{fixed_now, named, owners, ContextInput, OwnersInput};

/// Inputs of `rehydrate` (SPEC RHY-1 .. RHY-4, ATR-1 .. ATR-3). The binding is the default one
/// (see `record`); the record is created from `body` under `recordOwners`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RehydrateCase {
    /// The referenced body (the record's reference is its digest).
    pub body: String,
    /// The record's owners (default: the binding's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_owners: Option<OwnersInput>,
    /// What the workspace holds at the record's path; absent: nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<String>,
    /// The workspace read fails.
    #[serde(default)]
    pub fail_read: bool,
    /// The byte budget.
    pub budget: i64,
    /// `ToolRequest` (default) or `DeterministicPolicy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The accessor's successive answers (default: always the binding's own context).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessor: Option<Vec<Option<ContextInput>>>,
}

/// A recovered segment (SPEC RHY-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolvedSegmentOutput {
    /// Reference id.
    pub reference_id: String,
    /// The exact body.
    pub body: String,
    /// Always true.
    pub skip_eager_reoffload: bool,
}

/// `rehydrate` (SPEC RHY-2 .. RHY-4, ATR-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RehydrationOutput {
    /// Resolution status.
    pub status: String,
    /// The recovered segment (only `Resolved`).
    pub segment: Option<ResolvedSegmentOutput>,
    /// The decision's diagnostics.
    pub diagnostics: ArtifactDiagnosticsOutput,
    /// Events reported (1).
    pub events: u32,
    /// Whether the event holds the result's very diagnostics value (SPEC ATR-3).
    pub shared_with_event: bool,
    /// Workspace reads performed.
    pub workspace_reads: u32,
}

impl RehydrateCase {
    /// The decision, its event reported to `events` (SPEC ATR-3: one event per decision, none
    /// when it raises).
    pub fn decide(&self, events: &mut Vec<ArtifactEvent>) -> Result<RehydrationOutput, CaseError> {
        let c = self;
        let guard = default_guard(c.accessor.as_deref())?;
        let source = named(
            c.source.as_deref().unwrap_or("ToolRequest"),
            "$.source",
            RehydrationSource::from_name,
            &RehydrationSource::NAMES,
        )?;
        let record_binding = TrustBinding {
            owners: c
                .record_owners
                .as_ref()
                .map_or_else(|| guard.binding.owners.clone(), owners),
            workspace: guard.binding.workspace,
        };
        let creation = spec::record::Creation {
            body: &c.body,
            description: "",
            tool_name: "tool",
            call_id: "call-1",
        };
        let record = spec::record::create(creation, &record_binding, fixed_now())
            .map_err(|e| record_error(&e))?;
        let mut workspace = ScriptedWorkspace {
            fail_read: c.fail_read,
            ..ScriptedWorkspace::default()
        };
        if let Some(stored) = &c.stored {
            workspace.files.insert(record.path(), stored.clone());
        }
        let request = RehydrationRequest::new(record, source, c.budget).map_err(|e| {
            CaseError::Answer(answer(e.kind(), Some("Budget"), None, e.to_string()))
        })?;
        let result =
            spec::rehydrate::rehydrate(&request, &guard, &mut workspace, fixed_now(), events)
                .map_err(|e| match e {
                    RehydrationError::Trust(t) => trust_answer(t.status, e.to_string()),
                    RehydrationError::Diagnostics(d) => CaseError::Answer(answer(
                        e.kind(),
                        Some(d.rule.name()),
                        None,
                        e.to_string(),
                    )),
                    _ => {
                        CaseError::Answer(answer(e.kind(), Some("Workspace"), None, e.to_string()))
                    }
                })?;
        let shared = matches!(events.as_slice(), [only] if Arc::ptr_eq(&only.diagnostics, &result.diagnostics));
        let segment = result.segment.as_ref().map(|s| ResolvedSegmentOutput {
            reference_id: s.segment.reference.to_string(),
            body: s.segment.body.clone(),
            skip_eager_reoffload: s.skip_eager_reoffload,
        });
        debug_assert!(result.status != ResolutionStatus::Resolved || segment.is_some());
        Ok(RehydrationOutput {
            status: result.status.name().to_owned(),
            segment,
            diagnostics: artifact_diagnostics_output(&result.diagnostics),
            events: u32::try_from(events.len()).unwrap_or(u32::MAX),
            shared_with_event: shared,
            workspace_reads: u32::try_from(workspace.reads).unwrap_or(u32::MAX),
        })
    }
}
