//! A `Compactor`'s kept conversions: a repeat call on history + k messages converts only the k
//! new ones (the library's [`Adaptation`], `src/transcript/reuse.rs`; the Python binding's
//! `python/src/reuse.rs` does the same for Python objects).
//!
//! ```text
//!  JS (lib/compact.cjs): per message object, WeakMap -> {witness, Converted}
//!      witness matches (docs/NODE.md, "Repeat calls"): its Converted, nothing written
//!      else: toJson (recording the witness) ---+
//!  adapt_messages(format, indices, [new messages as one JSON array]) -> Converted per message
//!  Session::start_adapted(format, [Converted per message], system?, overrides?)
//!      worker: Transcript::reassemble (ids, kinds; entries and their digests reused) -> the node
//! ```
//!
//! What counts as unchanged is decided in JavaScript (the witness walk); this side only keeps
//! each message's adaptation and reassembles a transcript from them, which is what
//! `Transcript::parse` gives for the same transcript object (the library's
//! `reuse_matches_parse`).

use hybrid_compaction::transcript::reuse::Adaptation;
use hybrid_compaction::transcript::{Transcript, TranscriptFormat};
use napi_derive::napi;
use serde_json::Value as Json;

use crate::answer::{envelope, Failure};
use crate::transcript;

/// One message converted on its own (see the module docs): an opaque handle the JavaScript
/// layer keeps beside the message object.
#[napi]
pub struct Converted {
    pub(crate) adaptation: Adaptation,
}

/// The transcript format named `name`, or invalid input naming `format`.
pub(crate) fn format(name: &str) -> Result<TranscriptFormat, Failure> {
    TranscriptFormat::from_name(name)
        .ok_or_else(|| Failure::invalid("format", format!("unknown transcript format {name:?}")))
}

fn read(text: &str, what: &str) -> Result<Json, Failure> {
    serde_json::from_str(text).map_err(|e| Failure::invalid(what, format!("not JSON: {e}")))
}

/// `messages` (a JSON array of messages) converted one by one in `format`, the `i`-th as
/// message `indices[i]` of its transcript (so a refusal names `$.messages[index]`). Throws an
/// `Error` whose message is the failure's envelope for the first refusal (the JavaScript layer
/// then converts the whole transcript, which reports it as a `TranscriptError`).
#[napi]
pub fn adapt_messages(
    format: String,
    indices: Vec<u32>,
    messages: String,
) -> napi::Result<Vec<Converted>> {
    adapt(&format, &indices, &messages).map_err(|f| napi::Error::from_reason(envelope(Err(f))))
}

fn adapt(format_name: &str, indices: &[u32], messages: &str) -> Result<Vec<Converted>, Failure> {
    let format = format(format_name)?;
    let Json::Array(values) = read(messages, "messages")? else {
        return Err(Failure::invalid("messages", "expected a JSON array"));
    };
    if values.len() != indices.len() {
        return Err(Failure::invalid(
            "indices",
            format!("{} indices for {} messages", indices.len(), values.len()),
        ));
    }
    values
        .iter()
        .zip(indices)
        .map(|(m, &i)| {
            Adaptation::message(format, i as usize, m)
                .map(|adaptation| Converted { adaptation })
                .map_err(|e| transcript::refusal(&e))
        })
        .collect()
}

/// A transcript to compact: its JSON text (converted whole), or kept conversions (see the
/// module docs).
pub(crate) enum Input {
    /// A transcript object as JSON text.
    Text(String),
    /// The messages' kept conversions, with the top-level system and the overrides as JSON
    /// text (converted on every call: small).
    Adapted {
        /// The transcript format's name.
        format: String,
        /// One conversion per message, in order.
        messages: Vec<Adaptation>,
        /// The top-level system (Anthropic's, the Responses instructions), if given.
        system: Option<String>,
        /// The transcript object's `overrides` member, if given.
        overrides: Option<String>,
    },
}

impl Input {
    /// The transcript, or the converter's refusal (the same as `Transcript::parse`'s).
    pub(crate) fn transcript(self) -> Result<Transcript, Failure> {
        match self {
            Input::Text(text) => transcript::parse(&text),
            Input::Adapted {
                format: name,
                messages,
                system,
                overrides,
            } => {
                let format = format(&name)?;
                let overrides = overrides.map(|o| read(&o, "overrides")).transpose()?;
                let mut all = Vec::with_capacity(messages.len() + 1);
                if let Some(s) = system {
                    let s = read(&s, "system")?;
                    all.push(Adaptation::system(format, &s).map_err(|e| transcript::refusal(&e))?);
                }
                all.extend(messages);
                Transcript::reassemble(format, &all, None, overrides.as_ref())
                    .map_err(|e| transcript::refusal(&e))
            }
        }
    }
}
