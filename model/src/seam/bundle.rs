//! The complete-bundle agent's tool loop (SPEC CFG-6): turns of provider rounds through the node
//! the public configuration installs (CFG-1 .. CFG-4), beside the upstream framework's own
//! per-turn compaction strategy (CFG-5).
//!
//! ```text
//! configure (each implementation's own, CFG-2 .. CFG-5) -> node world of its policy and reducer
//! per turn:  history += user message
//!            strategy on? context = strategy(history), once, before the first round
//!            per round: provider call (through the node when hybrid compaction is on)
//!                       tool calls -> context and history += assistant calls + tool results
//!                       answer     -> context and history += assistant answer; the turn ends
//! ```
//!
//! The agent loop, the tools and the upstream strategy are the host's and the framework's (test
//! doubles here, the same for both implementations); what each implementation answers is its
//! configuration and its node, whose reducer is watched: every invocation's input and output.

use std::sync::{Arc, Mutex, PoisonError};

use super::node::{CallEnd, CallPlan};
use super::{ConfigureInput, Implementation};
use crate::configuration::ConfigurationError;
use crate::error::TypedError;
use crate::message::{Message, Part};
use crate::reducers::{MessageCountingReducer, UpstreamError, UpstreamReducer};
use crate::value::Value;

/// One tool call a provider round asks for, and the tool's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallScript {
    /// The call id.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// What the tool returns (a string value).
    pub result: String,
}

/// What the provider answers in one round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoundScript {
    /// Tool calls: the loop runs the tools and calls the provider again.
    ToolCalls(Vec<ToolCallScript>),
    /// A final answer: the turn ends.
    Answer(String),
}

/// One agent turn: the user's message and the provider's rounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnScript {
    /// The user's message.
    pub user: String,
    /// The rounds, in order (an answer ends the turn).
    pub rounds: Vec<RoundScript>,
}

/// The inputs of one tool loop.
#[derive(Debug, Clone)]
pub struct BundleInput {
    /// The public configuration (its upstream reducer, when supplied, message counting).
    pub configure: ConfigureInput,
    /// The upstream framework's per-turn strategy: keep every system message and the last `n`
    /// others (a caller-supplied `CompactionStrategy`); `None`: the framework's switch is off.
    pub strategy_keep_last: Option<usize>,
    /// The stored history before the first turn.
    pub history: Vec<Message>,
    /// The turns.
    pub turns: Vec<TurnScript>,
}

/// One reducer or strategy invocation: what it was given and what it answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    /// The messages it was given.
    pub input: Vec<Message>,
    /// Its answer (`None`: it failed or answered null).
    pub output: Option<Vec<Message>>,
}

/// One provider call of the loop.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderRound {
    /// The 0-based turn.
    pub turn: usize,
    /// The 0-based round of the turn.
    pub round: usize,
    /// What the real provider received (`None`: the call failed before dispatch).
    pub received: Option<Vec<Message>>,
    /// The call's error (the turn ends there).
    pub error: Option<TypedError>,
}

/// What one tool loop did.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleReport {
    /// Every provider call, in order.
    pub rounds: Vec<ProviderRound>,
    /// The hybrid node's reducer invocations, in order (none without hybrid compaction).
    pub reducer: Vec<Invocation>,
    /// The upstream strategy's invocations, in order (one per turn when it is on).
    pub strategy: Vec<Invocation>,
    /// The stored history after the last turn (never reduced, CFG-4).
    pub history: Vec<Message>,
}

/// A reducer that logs every invocation (SPEC CFG-6: counts, inputs, outputs).
struct Watched {
    inner: MessageCountingReducer,
    log: Arc<Mutex<Vec<Invocation>>>,
}

impl UpstreamReducer for Watched {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        let answer = self.inner.reduce(messages);
        let output = answer.as_ref().ok().cloned().flatten();
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Invocation {
                input: messages.to_vec(),
                output,
            });
        answer
    }
}

/// The messages one round adds: the assistant's calls and one tool message per result, or the
/// assistant's answer.
fn round_messages(round: &RoundScript) -> Vec<Message> {
    match round {
        RoundScript::Answer(text) => vec![Message::text("assistant", text.as_str())],
        RoundScript::ToolCalls(calls) => {
            let parts = calls
                .iter()
                .map(|c| Part::call(c.call_id.as_str(), c.name.as_str()))
                .collect();
            let mut out = vec![Message::new("assistant", parts)];
            out.extend(calls.iter().map(|c| {
                let result = Part::result(c.call_id.as_str(), Value::String(c.result.clone()));
                Message::new("tool", vec![result])
            }));
            out
        }
    }
}

/// Runs the loop through `imp`'s public configuration and node (SPEC CFG-6); a refused
/// configuration is the answer before any turn.
pub fn tool_loop<I: Implementation + ?Sized>(
    imp: &I,
    input: BundleInput,
) -> Result<BundleReport, ConfigurationError> {
    let reducer = input
        .configure
        .options
        .as_ref()
        .and_then(|o| o.upstream_reducer);
    let configured = imp.configure(input.configure)?;
    let log: Arc<Mutex<Vec<Invocation>>> = Arc::default();
    let mut node = match (configured.compaction, reducer) {
        (Some(facts), Some(inner)) => {
            let watched = Watched {
                inner,
                log: Arc::clone(&log),
            };
            imp.node_world(true, Some((facts.policy, Box::new(watched))), None)
                .ok()
                .flatten()
        }
        _ => None,
    };
    let mut history = input.history;
    let mut rounds = Vec::new();
    let mut strategy = Vec::new();
    for (t, turn) in input.turns.iter().enumerate() {
        history.push(Message::text("user", turn.user.as_str()));
        // SPEC CFG-5, CFG-6: the framework's strategy, once per turn, before the first round.
        let mut context = match input.strategy_keep_last {
            Some(n) => {
                let kept = MessageCountingReducer { target_count: n }
                    .reduce(&history)
                    .ok()
                    .flatten()
                    .unwrap_or_else(|| history.clone());
                strategy.push(Invocation {
                    input: history.clone(),
                    output: Some(kept.clone()),
                });
                kept
            }
            None => history.clone(),
        };
        for (r, round) in turn.rounds.iter().enumerate() {
            let (received, error) = match node.as_mut() {
                None => (Some(context.clone()), None),
                Some(world) => match world.call(&CallPlan::new(context.clone())).end {
                    CallEnd::Sent { messages, .. } | CallEnd::Abandoned { messages } => {
                        (Some(messages), None)
                    }
                    CallEnd::Failed {
                        error, dispatched, ..
                    } => (dispatched, Some(error)),
                },
            };
            let failed = error.is_some();
            rounds.push(ProviderRound {
                turn: t,
                round: r,
                received,
                error,
            });
            if failed {
                break;
            }
            let added = round_messages(round);
            context.extend(added.iter().cloned());
            history.extend(added);
            if matches!(round, RoundScript::Answer(_)) {
                break;
            }
        }
    }
    let reducer = std::mem::take(&mut *log.lock().unwrap_or_else(PoisonError::into_inner));
    Ok(BundleReport {
        rounds,
        reducer,
        strategy,
        history,
    })
}
