//! What a scenario's host does around a provider call, shared by the operations that drive a
//! node (`node`, `trust`): a streaming provider's script and the messages the provider was sent,
//! as the wire writes them, and a scenario step that takes no fields.

use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::seam::StreamPlan;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::{wire, CaseError};

/// A streaming provider call (SPEC NODE-2, NODE-5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StreamInput {
    /// How many updates the provider streams (0 is a stream that ends at once).
    pub updates: u32,
    /// The update at this 0-based position is an error item instead (`< updates`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_at: Option<u32>,
    /// How many times the caller asks for the next item before dropping the stream (absent:
    /// until the stream ends). Reading the end is one ask: `updates + 1` reads to the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<u32>,
}

/// A dispatched message: role and text (SPEC ENT-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SentOutput {
    /// The role.
    pub role: String,
    /// The concatenated text parts.
    pub text: String,
}

/// A step without fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoFields {}

/// A streaming call's script (SPEC NODE-2) from `x` at `path`: the error item's position must
/// be below `updates`.
pub(crate) fn stream_plan(x: &StreamInput, path: &str) -> Result<StreamPlan, CaseError> {
    if x.error_at.is_some_and(|e| e >= x.updates) {
        return wire(
            format!("{path}.errorAt"),
            format!("expected a position below `updates` ({})", x.updates),
        );
    }
    Ok(StreamPlan {
        updates: x.updates as usize,
        error_at: x.error_at.map(|e| e as usize),
        reads: x.reads.map(|r| r as usize),
    })
}

/// The dispatched messages as role and text (SPEC ENT-3).
pub(crate) fn sent(ms: &[Message]) -> Vec<SentOutput> {
    ms.iter()
        .map(|m| SentOutput {
            role: m.role.clone(),
            text: m.text_content(),
        })
        .collect()
}
