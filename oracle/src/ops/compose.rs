//! `compose`: one composition call (SPEC CMP-1 .. CMP-5): the status, the nodes installed (only
//! `Success` installs one) and their run coordination; with `composer: provider`, the provider
//! composer around it (CMP-5): its own statuses and whether the agent was built.

use hybrid_compaction_model::composition::CompositionError;
use hybrid_compaction_model::seam::composition::{context_of, default_binding};
use hybrid_compaction_model::seam::{ComposeInput, Composition, Implementation};
use hybrid_compaction_model::trust::{TrustContext, WorkspaceId};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::error::{answer, wire, CaseError};
use crate::wire::host::{chain, profile, yes, CapabilityProfileInput, ContextInput};

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
    /// `compaction` (default: the narrow composer, CMP-3) or `provider` (the provider composer
    /// around it, CMP-5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composer: Option<Composer>,
    /// The provider composer only: what the accessor answers when the execution binding is
    /// validated (absent: the binding's own context; null: no current context).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub context: Option<Option<ContextInput>>,
}

/// Which composer a `compose` case calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Composer {
    /// The narrow compaction composer (SPEC CMP-3).
    Compaction,
    /// The provider composer around it (SPEC CMP-5).
    Provider,
}

/// A member that may be `null`: present (`Some`, maybe `None` inside) or absent (`None`, by
/// `default`).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
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
    /// The provider composer only: whether the agent was built (exactly on `Success`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_built: Option<bool>,
    /// The provider composer only: why the execution binding did not validate (SPEC TRU-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding_status: Option<String>,
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
        let refused = |e: CompositionError| {
            let field = match e {
                CompositionError::Missing(input) => input.name(),
                CompositionError::BlankSession => "SessionId",
            };
            CaseError::Answer(answer(e.kind(), Some(field), None, e.to_string()))
        };
        // SPEC CMP-1: the default strategies (CLS-2, SNAP-3) of an installed node.
        let strategies =
            |nodes: u32| (nodes > 0).then(|| vec!["ContentHash".to_owned(), "Static".to_owned()]);
        match self.composer.unwrap_or(Composer::Compaction) {
            Composer::Compaction => {
                if self.context.is_some() {
                    return wire(
                        "$.context",
                        "only the provider composer validates the binding against a context",
                    );
                }
                let Composition {
                    status,
                    nodes,
                    runs,
                } = imp.compose(input).map_err(refused)?;
                Ok(ComposeAnswer {
                    composition: CompositionOutput {
                        status: status.name().to_owned(),
                        nodes_installed: nodes,
                        runs: runs.map(|r| r.name().to_owned()),
                        strategies: strategies(nodes),
                        agent_built: None,
                        binding_status: None,
                    },
                })
            }
            Composer::Provider => {
                let context = match &self.context {
                    None => Some(context_of(&default_binding())),
                    Some(c) => c.as_ref().map(|c| TrustContext {
                        user_id: c.user_id.clone(),
                        orchestration_id: c.orchestration_id.clone(),
                        workspace: c.workspace.map(WorkspaceId),
                    }),
                };
                let r = imp.compose_provider(input, context).map_err(refused)?;
                Ok(ComposeAnswer {
                    composition: CompositionOutput {
                        status: r.status.name().to_owned(),
                        nodes_installed: r.nodes,
                        runs: r.runs.map(|x| x.name().to_owned()),
                        strategies: strategies(r.nodes),
                        agent_built: Some(r.agent),
                        binding_status: r.binding.map(|b| b.name().to_owned()),
                    },
                })
            }
        }
    }
}
