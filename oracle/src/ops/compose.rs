//! `compose`: one composition call (SPEC CMP-1 .. CMP-4): the status, the nodes installed (only
//! `Success` installs one) and their run coordination.

use hybrid_compaction_model::composition::CompositionError;
use hybrid_compaction_model::seam::{ComposeInput, Composition, Implementation};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::error::{answer, CaseError};
use crate::wire::host::{chain, profile, yes, CapabilityProfileInput};

/// Inputs of `compose`: one composition call (SPEC CMP-1 .. CMP-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComposeCase {
    /// The client chain's middleware, outermost first (`Compaction` or `Other`); absent: no
    /// client (a null reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<Vec<String>>,
    /// The capability profile; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<CapabilityProfileInput>,
    /// Whether an execution binding is supplied (default true).
    #[serde(default = "yes")]
    pub execution_binding: bool,
    /// Whether a binding accessor is supplied (default true).
    #[serde(default = "yes")]
    pub accessor: bool,
    /// The session id (default `session-1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Whether a hybrid profile (the default strategies, SPEC CMP-1) is supplied.
    #[serde(default)]
    pub hybrid_profile: bool,
}

/// `compose`: the status and what was built (SPEC CMP-2 .. CMP-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompositionOutput {
    /// The status (SPEC CMP-2).
    pub status: String,
    /// Nodes built (1 on `Success`, else 0).
    pub nodes_installed: u32,
    /// Run coordination of the installed node (`SharedWithAgent`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<String>,
    /// The installed profile's classifier and integration (SPEC CMP-1), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategies: Option<Vec<String>>,
}

/// The answer of `compose`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComposeAnswer {
    /// The composition.
    pub composition: CompositionOutput,
}

impl Operation for ComposeCase {
    const ANSWER: &'static str = "composition";
    type Answer = ComposeAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<ComposeAnswer, CaseError> {
        let client = match &self.client {
            None => None,
            Some(names) => Some(chain(names, "$.client")?),
        };
        let profile = match &self.profile {
            None => None,
            Some(p) => Some(profile(p, "$.profile")?.0),
        };
        let input = ComposeInput {
            client,
            profile,
            binding: self.execution_binding,
            accessor: self.accessor,
            session_id: self
                .session_id
                .clone()
                .unwrap_or_else(|| "session-1".to_owned()),
            hybrid_profile: self.hybrid_profile,
        };
        let Composition {
            status,
            nodes,
            runs,
        } = imp.compose(input).map_err(|e| {
            let field = match e {
                CompositionError::Missing(input) => input.name(),
                CompositionError::BlankSession => "SessionId",
            };
            CaseError::Answer(answer(e.kind(), Some(field), None, e.to_string()))
        })?;
        let installed = nodes > 0;
        Ok(ComposeAnswer {
            composition: CompositionOutput {
                status: status.name().to_owned(),
                nodes_installed: nodes,
                runs: runs.map(|r| r.name().to_owned()),
                // SPEC CMP-1: the default strategies (CLS-2, SNAP-3).
                strategies: installed.then(|| vec!["ContentHash".to_owned(), "Static".to_owned()]),
            },
        })
    }
}
