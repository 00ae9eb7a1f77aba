//! `trust`: trust configuration and the revalidations of one guarded provider call (SPEC TRU-1 ..
//! TRU-3): where the attempt ends, its events, whether it was dispatched, and its failure.

use std::sync::Arc;

use hybrid_compaction_model::seam::{AssemblyScript, Implementation, TrustInput, TrustReport};
use hybrid_compaction_model::trust::BindingAccessor;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::error::{answer, wire, CaseError};
use crate::wire::host::{accessor, binding, BindingInput, ContextInput};

/// Inputs of `trust`: configuration and the revalidations of one provider call (SPEC TRU-1 ..
/// TRU-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustCase {
    /// The binding; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<BindingInput>,
    /// The accessor's answers to successive revalidations (`null`: no context), the last one
    /// repeating; absent: no accessor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessor: Option<Vec<Option<ContextInput>>>,
    /// The configured session id; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// How the assembly between the two revalidations ends: `Success` (default),
    /// `Terminated` (an irreducible history) or `Failed` (the reducer fails).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assembly: Option<String>,
}

/// A failure that names only its status (SPEC TRU-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttemptFailureOutput {
    /// The error kind.
    pub kind: String,
    /// The trust status, for a revalidation failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// `trust`: one provider call's revalidations and events (SPEC TRU-1 .. TRU-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustOutput {
    /// Whether calls revalidate (SPEC TRU-1).
    pub guarded: bool,
    /// Where the attempt ended (`BeforeStarted`, `DuringAssembly`, `Terminated`,
    /// `RevalidationAfterAssembly`, `Success`).
    pub end: String,
    /// The progress events, in order.
    pub events: Vec<String>,
    /// Whether the bounded messages were dispatched.
    pub dispatched: bool,
    /// The error the call raised, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<AttemptFailureOutput>,
}

/// Renders a guarded call's report.
fn trust_output(r: &TrustReport) -> TrustOutput {
    TrustOutput {
        guarded: r.guarded,
        end: r.end.name().to_owned(),
        events: r.events.iter().map(|e| e.name().to_owned()).collect(),
        dispatched: r.dispatched,
        failure: r.failure.map(|f| AttemptFailureOutput {
            kind: f.kind.name().to_owned(),
            status: f.status.map(|s| s.name().to_owned()),
        }),
    }
}

/// The answer of `trust`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustAnswer {
    /// The guarded call.
    pub trust: TrustOutput,
}

impl Operation for TrustCase {
    const ANSWER: &'static str = "trust";
    type Answer = TrustAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<TrustAnswer, CaseError> {
        let accessor = match &self.accessor {
            None => None,
            Some(a) => Some(Arc::new(accessor(a, "$.accessor")?) as Arc<dyn BindingAccessor>),
        };
        let assembly = match self.assembly.as_deref() {
            None | Some("Success") => AssemblyScript::Success,
            Some("Terminated") => AssemblyScript::Terminated,
            Some("Failed") => AssemblyScript::Failed,
            Some(other) => {
                return wire(
                    "$.assembly",
                    format!(
                        "unknown assembly end {other:?}; expected Success, Terminated or Failed"
                    ),
                )
            }
        };
        let input = TrustInput {
            binding: self.binding.as_ref().map(binding),
            accessor,
            session_id: self.session_id.clone(),
            assembly,
        };
        let report = imp
            .trust(input)
            .map_err(|e| CaseError::Answer(answer(e.kind(), None, None, e.to_string())))?;
        Ok(TrustAnswer {
            trust: trust_output(&report),
        })
    }
}
