//! The public switch's options (ADR-0011, SPEC CFG-1 .. CFG-5) as the wire writes them, shared
//! by the operations that configure a node (`configure`, `bundle`): the inputs of one public
//! configuration, and a refused configuration's typed answer.

use hybrid_compaction_model::configuration::{
    ConfigurationError, PublicOptions, UpstreamCompaction,
};
use hybrid_compaction_model::reducers::MessageCountingReducer;
use hybrid_compaction_model::seam::ConfigureInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::{answer, CaseError};
use super::host::chain;

/// The five public options of ADR-0011 (SPEC CFG-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicOptionsInput {
    /// `HardLimitBytes`.
    pub hard_limit_bytes: i32,
    /// `TriggerMarginBytes`.
    pub trigger_margin_bytes: i32,
    /// `RecentMessageRetentionCount`.
    pub recent_message_retention_count: i32,
    /// `MaximumCompactionAttempts`.
    pub maximum_compaction_attempts: i32,
    /// Whether an `UpstreamReducer` is supplied.
    pub upstream_reducer: bool,
}

/// The inputs of one public configuration (SPEC CFG-1 .. CFG-5); a supplied upstream reducer is
/// message counting, keeping 2.
pub(crate) fn configure_input(
    enabled: bool,
    options: Option<&PublicOptionsInput>,
    client: &[String],
    upstream: UpstreamCompaction,
) -> Result<ConfigureInput, CaseError> {
    let client = chain(client, "$.client")?;
    let options = options.map(|o| PublicOptions {
        hard_limit_bytes: o.hard_limit_bytes,
        trigger_margin_bytes: o.trigger_margin_bytes,
        recent_message_retention_count: o.recent_message_retention_count,
        maximum_compaction_attempts: o.maximum_compaction_attempts,
        upstream_reducer: o
            .upstream_reducer
            .then_some(MessageCountingReducer { target_count: 2 }),
    });
    Ok(ConfigureInput {
        enabled,
        options,
        upstream,
        client,
    })
}

/// A refused configuration's typed answer, naming the member (SPEC CFG-2, CFG-5).
pub(crate) fn configuration_error(e: &ConfigurationError) -> CaseError {
    let field = match e {
        ConfigurationError::EnabledWithoutOptions => "EnabledWithoutOptions",
        ConfigurationError::OptionsWithoutEnabled => "OptionsWithoutEnabled",
        ConfigurationError::MissingReducer => "UpstreamReducer",
        ConfigurationError::ExistingCompactionComponent => "ExistingCompactionComponent",
        ConfigurationError::Policy(p) => p.field().name(),
        ConfigurationError::TokenBudget(b) => b.name(),
        ConfigurationError::OutputBudgetNotBelowContextWindow => "MaxOutputTokens",
        ConfigurationError::UpstreamCompactionWithoutBacking => "EnableCompaction",
        _ => "Options",
    };
    CaseError::Answer(answer(e.kind(), Some(field), None, e.to_string()))
}
