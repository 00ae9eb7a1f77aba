//! `bundle`: the complete-bundle agent's tool loop (SPEC CFG-6): turns of scripted provider rounds
//! (tool calls, then an answer) through the node the public configuration installs, beside the
//! upstream framework's per-turn strategy; answered with every provider call's received
//! messages, the node reducer's invocations and the strategy's. The loop is the seam's
//! (`seam::bundle::tool_loop`); each implementation answers with its own configuration and node.

use hybrid_compaction_model::configuration::UpstreamCompaction;
use hybrid_compaction_model::message::{Message, Part};
use hybrid_compaction_model::seam::bundle::{
    tool_loop, BundleInput, Invocation, RoundScript, ToolCallScript, TurnScript,
};
use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::convert;
use crate::wire::error::{wire, CaseError, ErrorOutput};
use crate::wire::input::MessageInput;
use crate::wire::options::{configuration_error, configure_input, PublicOptionsInput};

/// Inputs of `bundle` (SPEC CFG-6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BundleCase {
    /// `EnableHybridCompaction`.
    pub enabled: bool,
    /// The public options (as for `configure`); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<PublicOptionsInput>,
    /// The upstream framework's per-turn strategy (its switch on with a caller-supplied
    /// strategy, CFG-5); absent: its switch off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_strategy: Option<UpstreamStrategyInput>,
    /// The stored history before the first turn.
    #[serde(default)]
    pub history: Vec<MessageInput>,
    /// The turns.
    pub turns: Vec<TurnInput>,
}

/// A caller-supplied per-turn strategy: every system message and the last `keepLast` others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpstreamStrategyInput {
    /// How many non-system messages it keeps.
    pub keep_last: u32,
}

/// One agent turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnInput {
    /// The user's message.
    pub user: String,
    /// The provider's rounds: tool calls, then an answer (which ends the turn; no round after
    /// it).
    pub rounds: Vec<RoundInput>,
}

/// What the provider answers in one round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum RoundInput {
    /// Tool calls; the loop runs the tools and calls the provider again.
    ToolCalls(Vec<ToolCallInput>),
    /// The final answer.
    Answer(String),
}

/// One tool call and its tool's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallInput {
    /// The call id.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// What the tool returns.
    pub result: String,
}

/// A message of the loop: role, text, and the ids of its call or result parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoopMessageOutput {
    /// The role.
    pub role: String,
    /// The concatenated text parts.
    pub text: String,
    /// The call ids of its call and result parts, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub call_ids: Vec<String>,
}

/// One provider call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderCallOutput {
    /// The 0-based turn.
    pub turn: u32,
    /// The 0-based round of the turn.
    pub round: u32,
    /// What the real provider received (null: nothing was dispatched).
    pub received: Option<Vec<LoopMessageOutput>>,
    /// The call's typed error (the turn ends there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorOutput>,
}

/// One reducer or strategy invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InvocationOutput {
    /// What it was given.
    pub input: Vec<LoopMessageOutput>,
    /// What it answered (null: it failed or answered null).
    pub output: Option<Vec<LoopMessageOutput>>,
}

/// `bundle` (SPEC CFG-6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BundleOutput {
    /// Every provider call, in order.
    pub calls: Vec<ProviderCallOutput>,
    /// The node reducer's invocations.
    pub reducer_calls: u32,
    /// Each of them.
    pub reducer: Vec<InvocationOutput>,
    /// The upstream strategy's invocations.
    pub strategy_calls: u32,
    /// Each of them.
    pub strategy: Vec<InvocationOutput>,
    /// How many messages the stored history holds after the last turn (never reduced).
    pub stored_messages: u32,
}

/// The answer of `bundle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BundleAnswer {
    /// The loop.
    pub bundle: BundleOutput,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn messages(ms: &[Message]) -> Vec<LoopMessageOutput> {
    ms.iter()
        .map(|m| LoopMessageOutput {
            role: m.role.clone(),
            text: m.text_content(),
            call_ids: m
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::Call(c) => Some(c.call_id.clone()),
                    Part::Result(r) => Some(r.call_id.clone()),
                    Part::Text(_) | Part::Block(_) => None,
                })
                .collect(),
        })
        .collect()
}

fn invocations(is: &[Invocation]) -> Vec<InvocationOutput> {
    is.iter()
        .map(|i| InvocationOutput {
            input: messages(&i.input),
            output: i.output.as_deref().map(messages),
        })
        .collect()
}

/// The turns as scripts; an answer must be its turn's last round.
fn turns(ts: &[TurnInput]) -> Result<Vec<TurnScript>, CaseError> {
    let mut out = Vec::with_capacity(ts.len());
    for (t, turn) in ts.iter().enumerate() {
        let mut rounds = Vec::with_capacity(turn.rounds.len());
        for (r, round) in turn.rounds.iter().enumerate() {
            if r + 1 < turn.rounds.len() && matches!(round, RoundInput::Answer(_)) {
                return wire(
                    format!("$.turns[{t}].rounds[{r}]"),
                    "an answer ends the turn: it must be the turn's last round",
                );
            }
            rounds.push(match round {
                RoundInput::Answer(text) => RoundScript::Answer(text.clone()),
                RoundInput::ToolCalls(calls) => RoundScript::ToolCalls(
                    calls
                        .iter()
                        .map(|c| ToolCallScript {
                            call_id: c.call_id.clone(),
                            name: c.name.clone(),
                            result: c.result.clone(),
                        })
                        .collect(),
                ),
            });
        }
        out.push(TurnScript {
            user: turn.user.clone(),
            rounds,
        });
    }
    Ok(out)
}

impl Operation for BundleCase {
    const ANSWER: &'static str = "bundle";
    type Answer = BundleAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<BundleAnswer, CaseError> {
        let upstream = UpstreamCompaction {
            enabled: self.upstream_strategy.is_some(),
            strategy: self.upstream_strategy.is_some(),
            ..UpstreamCompaction::default()
        };
        let configure = configure_input(self.enabled, self.options.as_ref(), &[], upstream)?;
        let mut history = Vec::with_capacity(self.history.len());
        for (i, m) in self.history.iter().enumerate() {
            history.push(convert::message(m, &format!("$.history[{i}]"))?);
        }
        let input = BundleInput {
            configure,
            strategy_keep_last: self
                .upstream_strategy
                .as_ref()
                .map(|s| s.keep_last as usize),
            history,
            turns: turns(&self.turns)?,
        };
        let report = tool_loop(imp, input).map_err(|e| configuration_error(&e))?;
        Ok(BundleAnswer {
            bundle: BundleOutput {
                calls: report
                    .rounds
                    .iter()
                    .map(|r| ProviderCallOutput {
                        turn: count(r.turn),
                        round: count(r.round),
                        received: r.received.as_deref().map(messages),
                        error: r.error.clone().map(Into::into),
                    })
                    .collect(),
                reducer_calls: count(report.reducer.len()),
                reducer: invocations(&report.reducer),
                strategy_calls: count(report.strategy.len()),
                strategy: invocations(&report.strategy),
                stored_messages: count(report.history.len()),
            },
        })
    }
}
