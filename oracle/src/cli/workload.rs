//! `hybrid-compaction workload`: print a seeded agent conversation ([`crate::workload`]) as a
//! transcript object, the input of `run`, `bench` and the peer harness (`peers/run.py`).

use clap::Args;
use hybrid_compaction::transcript::TranscriptFormat;

use super::{invalid, Expected, Failure};
use crate::workload::{generate, Ending, MAX_MESSAGES, MIN_MESSAGES};

pub(super) const WORKLOAD_EXAMPLE: &str = r#"Examples:
  hybrid-compaction workload --messages 1000 --seed 7 --format openai > conv.json
  hybrid-compaction workload --messages 10000 --seed 1 --format langchain --ending pending-call
  hybrid-compaction bench conv.json            # what estimation, verification, assembly cost

Formats: openai-chat (alias openai), anthropic-messages (anthropic), langchain,
openai-responses (responses: the system prompt as `system`, each call its own item).
Endings (the last message; default: by seed, seed % 4 in this order): user-question,
tool-results, pending-call, final-answer. The same messages and seed give the same bytes."#;

/// Arguments of `workload`.
#[derive(Debug, Args)]
pub(super) struct WorkloadArgs {
    /// Number of messages (7 to 1000000).
    #[arg(long, value_parser = messages_count)]
    messages: usize,
    /// Seed of the conversation.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Transcript format.
    #[arg(long, default_value = "openai-chat", value_parser = format_name)]
    format: TranscriptFormat,
    /// Shape of the last message (default: by seed).
    #[arg(long, value_parser = ending_name)]
    ending: Option<Ending>,
}

fn messages_count(text: &str) -> Result<usize, Expected> {
    match text.parse::<usize>() {
        Ok(n) if (MIN_MESSAGES..=MAX_MESSAGES).contains(&n) => Ok(n),
        _ => Err(Expected::new(format!(
            "a whole number from {MIN_MESSAGES} to {MAX_MESSAGES}"
        ))),
    }
}

/// A transcript format by wire name or short alias (`openai`, `anthropic`, `responses`).
pub(super) fn format_name(text: &str) -> Result<TranscriptFormat, Expected> {
    let name = match text {
        "openai" => "openai-chat",
        "anthropic" => "anthropic-messages",
        "responses" => "openai-responses",
        other => other,
    };
    TranscriptFormat::from_name(name).ok_or_else(|| Expected::new(TranscriptFormat::EXPECTED))
}

fn ending_name(text: &str) -> Result<Ending, Expected> {
    Ending::from_name(text)
        .ok_or_else(|| Expected::new("user-question, tool-results, pending-call or final-answer"))
}

pub(super) fn cmd_workload(a: &WorkloadArgs, out: &mut Vec<u8>) -> Result<(), Failure> {
    let conv = generate(a.messages, a.seed, a.ending).map_err(|e| invalid(e.to_string()))?;
    out.extend(conv.transcript(a.format).to_string().as_bytes());
    out.push(b'\n');
    Ok(())
}
