//! Provider transcripts to entries and back (SPEC TRN-1 .. TRN-24).
//!
//! A host holds its conversation in its provider's or framework's message format.
//! [`Transcript::parse`] turns such a transcript (`openai-chat`, `anthropic-messages`,
//! `langchain`, `openai-responses`, `pydantic-ai`, `gemini` or `ai-sdk`, as JSON) into messages (TRN-2 ..
//! TRN-4, TRN-17, TRN-20 .. TRN-22), gives each a stable id (TRN-5) and classifies it onto an entry
//! kind by the adaptation of SPEC CLS-1, with per-index overrides. [`Transcript::render`] turns the bounded entry list an assembly returns back into
//! the same format: every entry that is still the message it was adapted from is emitted as the
//! **original JSON, verbatim** (unknown members, cache-control markers, `is_error` flags and
//! argument strings included); only entries the assembly created (summaries) are rendered from
//! their message (TRN-6).
//!
//! Content beyond text, calls and results (images, audio, files, reasoning and thinking,
//! server tools, a provider's compaction) is carried as blocks (TRN-15, TRN-16); what a message
//! cannot carry back as given is a typed [`TranscriptError::UnsupportedContent`] naming the
//! message and the part type (TRN-1).
//!
//! Format specifics live in [`openai`], [`anthropic`], [`langchain`], [`responses`],
//! [`pydantic_ai`] and [`gemini`]; the JSON value mapping, arguments given as text (TRN-18) and
//! the rendering of new entries in [`json`]; image sizes by their provider's rule (TRN-19) in
//! [`image`]; the sent messages of an observed call identified against its history (TRC-13) in
//! `sent.rs`. Call ids a transcript reuses across turns are paired by position where the
//! provider's pairing is unambiguous (TRN-14, `pairing.rs`), so the rules see distinct exchanges
//! and the caller gets its own ids back. Items a provider receives whole (an Anthropic run of
//! assistant messages, a Responses reasoning item and what it precedes) are one message
//! (TRN-23, `turns.rs`), and a reducer's answer is read by the transcript's own messages and
//! turns (`answer.rs`); a Responses approval request awaiting its answer is approval state, not
//! an unanswered call (TRN-24, `pending.rs`).
//!
//! The module exists with the crate feature `transcripts` (on by default), which is also the only
//! reason this crate depends on `serde_json`.

// SPEC TRN-20: the AI SDK's ModelMessages.
pub mod ai_sdk;
mod answer;
pub mod anthropic;
pub mod image;
pub mod json;
pub mod langchain;
pub mod openai;
mod pairing;
mod pending;
// SPEC TRN-21: pydantic-ai messages; TRN-22: Gemini contents.
pub mod gemini;
pub mod pydantic_ai;
pub mod responses;
pub mod reuse;
mod sent;
mod sources;
mod turns;

pub use sources::FinalSource;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use hybrid_compaction_model::classifier::{Classifier, ClassifierError};
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::message::{Message, Part, ROLE_SYSTEM};
use rustc_hash::FxHashMap;
use serde_json::Value as Json;

use crate::engine::classify::{adapt, AdaptError, ContentHashClassifier};

/// A transcript format (SPEC TRN-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TranscriptFormat {
    /// OpenAI Chat Completions `messages`.
    OpenAiChat,
    /// Anthropic Messages `messages` (plus the top-level `system`).
    AnthropicMessages,
    /// LangChain message dicts (`model_dump()` or `messages_to_dict()` shape).
    LangChain,
    /// OpenAI Responses input items (plus the top-level `instructions`, given as `system`).
    OpenAiResponses,
    /// pydantic-ai `ModelMessage`s as `ModelMessagesTypeAdapter` dumps them (SPEC TRN-21).
    PydanticAi,
    /// Gemini `Content`s (google-genai, Google ADK), the system instruction as `system` (SPEC TRN-22).
    Gemini,
    /// The Vercel AI SDK's `ModelMessage`s, system messages among them (SPEC TRN-20).
    AiSdk,
}

impl TranscriptFormat {
    /// Every format.
    pub const ALL: [TranscriptFormat; 7] = [
        TranscriptFormat::OpenAiChat,
        TranscriptFormat::AnthropicMessages,
        TranscriptFormat::LangChain,
        TranscriptFormat::OpenAiResponses,
        TranscriptFormat::PydanticAi,
        TranscriptFormat::Gemini,
        TranscriptFormat::AiSdk,
    ];

    /// What a format name must be, for an error naming the choices.
    pub const EXPECTED: &'static str =
        "\"openai-chat\", \"anthropic-messages\", \"langchain\", \"openai-responses\", \"pydantic-ai\", \"gemini\" or \"ai-sdk\"";

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            TranscriptFormat::OpenAiChat => "openai-chat",
            TranscriptFormat::AnthropicMessages => "anthropic-messages",
            TranscriptFormat::LangChain => "langchain",
            TranscriptFormat::OpenAiResponses => "openai-responses",
            TranscriptFormat::PydanticAi => "pydantic-ai",
            TranscriptFormat::Gemini => "gemini",
            TranscriptFormat::AiSdk => "ai-sdk",
        }
    }

    /// Parses a wire name.
    pub fn from_name(name: &str) -> Option<TranscriptFormat> {
        TranscriptFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether a transcript of this format has a top-level `system` member: Anthropic's
    /// `system`, and the Responses `instructions`.
    pub fn has_system(self) -> bool {
        matches!(
            self,
            TranscriptFormat::AnthropicMessages
                | TranscriptFormat::OpenAiResponses
                | TranscriptFormat::Gemini
        )
    }
}

impl fmt::Display for TranscriptFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a transcript could not be adapted (SPEC TRN-1). Paths are JSON paths from the transcript
/// object (`$.messages[3].content[1]`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TranscriptError {
    /// The JSON does not have the shape the format requires.
    #[error("{path}: {message}")]
    Malformed {
        /// Where.
        path: String,
        /// What was expected.
        message: String,
    },
    /// Content a message cannot carry back to the provider as given (TRN-1: OpenAI's `audio`
    /// reply, LangChain's `remove`, an invalid tool call without an id, ...).
    #[error(
        "{path}: {part_type:?} is not supported: it cannot be sent back to the provider as given"
    )]
    UnsupportedContent {
        /// Where.
        path: String,
        /// The part's `type`.
        part_type: String,
    },
    /// Adaptation (SPEC CLS-1, ENT-5) refused a message.
    #[error("{0}")]
    Adapt(#[from] AdaptError),
}

impl TranscriptError {
    /// The language-neutral category (SPEC ERR-1): unsupported content is `NotSupported`,
    /// malformed input `InvalidArgument`, adaptation errors keep theirs.
    pub fn kind(&self) -> ErrorKind {
        match self {
            TranscriptError::Malformed { .. } => ErrorKind::InvalidArgument,
            TranscriptError::UnsupportedContent { .. } => ErrorKind::NotSupported,
            TranscriptError::Adapt(e) => e.kind(),
        }
    }
}

pub(crate) fn malformed(path: impl Into<String>, message: impl Into<String>) -> TranscriptError {
    TranscriptError::Malformed {
        path: path.into(),
        message: message.into(),
    }
}

/// One adapted message before classification: the message, its given id (if any) and the JSON
/// it came from (`None` for Anthropic's top-level `system`, which renders back to `system`).
#[derive(Debug, Clone)]
pub(crate) struct Adapted {
    pub message: Message,
    pub given_id: Option<String>,
    pub source: Source,
}

impl Adapted {
    /// `messages[i]` adapted by a format's `message` reader (given its JSON path), with no given
    /// id: what the OpenAI and Anthropic adapters make of one message.
    fn without_id(
        i: usize,
        m: &Json,
        message: impl FnOnce(&Json, &str) -> Result<Message, TranscriptError>,
    ) -> Result<Adapted, TranscriptError> {
        Ok(Adapted {
            message: message(m, &format!("$.messages[{i}]"))?,
            given_id: None,
            source: Source::Message(m.clone()),
        })
    }
}

/// Where an adapted message came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Source {
    /// `messages[i]`, verbatim.
    Message(Json),
    /// Anthropic's top-level `system`, verbatim.
    System(Json),
    /// `messages[i..i + n]`, verbatim: a turn the provider receives whole (TRN-23).
    Turn(Vec<Json>),
}

/// A reducer's answer read in a transcript's format ([`Transcript::read_answer`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The messages, its turns joined (TRN-23).
    pub messages: Vec<Message>,
    /// Parallel to `messages`: how many of the returned items each was adapted from.
    pub items: Vec<usize>,
}

/// A parsed transcript: its entries and what is needed to render a bounded list back.
#[derive(Debug, Clone)]
pub struct Transcript {
    format: TranscriptFormat,
    entries: Vec<Entry>,
    /// Parallel to `entries`: what each was adapted from (shared, so a host that reuses a
    /// message's adaptation across calls, [`reuse`], copies no content).
    adapted: Vec<Arc<Adapted>>,
    /// Entry id -> position (the last one when ids repeat).
    positions: FxHashMap<EntryId, usize>,
    overrides: BTreeMap<usize, EntryKind>,
    /// Every call id the pairing of reused ids made (TRN-14) -> the caller's id; usually empty.
    originals: FxHashMap<String, String>,
    /// When a message holds several items (TRN-23): the first item of each adapted position,
    /// then the number of items (the top-level system counts as one).
    starts: Option<Vec<usize>>,
    /// Whether an adapted message differs from its item adapted alone (an approval request
    /// awaiting its answer, TRN-24).
    rewritten: bool,
}

impl Transcript {
    /// Parses a transcript object `{"format", "messages", "system"?, "ids"?, "overrides"?}`
    /// (SPEC TRN-1): `ids` is an array of entry ids parallel to the adapted messages (TRN-5),
    /// `overrides` maps decimal message indices to entry kind names (CLS-1 step 3).
    pub fn parse(value: &Json) -> Result<Transcript, TranscriptError> {
        let obj = value
            .as_object()
            .ok_or_else(|| malformed("$", "a transcript is a JSON object"))?;
        for key in obj.keys() {
            if !["format", "messages", "system", "ids", "overrides"].contains(&key.as_str()) {
                return Err(malformed(format!("$.{key}"), "unknown member"));
            }
        }
        let format = obj
            .get("format")
            .and_then(Json::as_str)
            .and_then(TranscriptFormat::from_name)
            .ok_or_else(|| {
                malformed(
                    "$.format",
                    format!("expected {}", TranscriptFormat::EXPECTED),
                )
            })?;
        let messages = obj
            .get("messages")
            .and_then(Json::as_array)
            .ok_or_else(|| malformed("$.messages", "expected an array of messages"))?;
        let system = obj.get("system").filter(|s| !s.is_null());
        if system.is_some() && !format.has_system() {
            return Err(malformed(
                "$.system",
                "`system` is only a member of anthropic-messages transcripts (Anthropic's system) and openai-responses ones (the `instructions`)",
            ));
        }
        let adapted = turns::join(format, adapt_items(format, system, messages)?);
        let ids = parse_ids(obj.get("ids"), adapted.len())?;
        let overrides = parse_overrides(obj.get("overrides"), adapted.len())?;
        refuse_inapplicable(&overrides, |i| &adapted[i].message)?;
        Transcript::classify(format, adapted, ids, overrides)
    }

    fn classify(
        format: TranscriptFormat,
        adapted: Vec<Adapted>,
        ids: Option<Vec<String>>,
        overrides: BTreeMap<usize, EntryKind>,
    ) -> Result<Transcript, TranscriptError> {
        let messages: Vec<Message> = adapted.iter().map(|a| a.message.clone()).collect();
        let given: Vec<Option<String>> = match ids {
            Some(ids) => ids.into_iter().map(Some).collect(),
            None => adapted.iter().map(|a| a.given_id.clone()).collect(),
        };
        let mut classifier = TranscriptClassifier {
            given,
            overrides,
            derived: ContentHashClassifier::new(),
        };
        let entries = adapt(&messages, &mut classifier)?;
        let adapted = adapted.into_iter().map(Arc::new).collect();
        Transcript::new(format, entries, adapted, classifier.overrides)
    }

    /// A transcript of `entries` adapted from `adapted` (parallel), with `overrides`, its reused
    /// call ids paired (TRN-14): the entries were built from the messages as given (so their
    /// ids, TRN-5, are those of the messages as given); those whose calls or results are paired
    /// are built again from the paired message, with the same id and kind.
    fn new(
        format: TranscriptFormat,
        mut entries: Vec<Entry>,
        mut adapted: Vec<Arc<Adapted>>,
        overrides: BTreeMap<usize, EntryKind>,
    ) -> Result<Transcript, TranscriptError> {
        // A top-level system (Anthropic's, the Responses instructions) is adapted first and holds no call.
        let offset = usize::from(matches!(
            adapted.first().map(|a| &a.source),
            Some(Source::System(_))
        ));
        let (paired, originals) = pairing::pair(adapted.iter().map(|a| &a.message), |i| {
            format!("$.messages[{}]", i.saturating_sub(offset))
        })?;
        for (i, message) in paired {
            let kind = entries[i].kind();
            rewrite(&mut entries, &mut adapted, i, kind, message)?;
        }
        let mut overrides = overrides;
        let rewritten = pending::apply(
            format,
            &mut entries,
            &mut adapted,
            &mut overrides,
            &originals,
        )?;
        let positions = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id().clone(), i))
            .collect();
        let starts = turns::starts(&adapted);
        Ok(Transcript {
            format,
            entries,
            adapted,
            positions,
            overrides,
            originals,
            starts,
            rewritten,
        })
    }

    /// The adapted message `entry` is still the message at this position adapted from, if any:
    /// the position's own entry (the same allocation) or an equal message (VER-2).
    fn source(&self, entry: &Entry) -> Option<(usize, &Adapted)> {
        let &i = self.positions.get(entry.id().as_str())?;
        let a = &self.adapted[i];
        (self.entries[i].ptr_eq(entry) || a.message == *entry.message()).then_some((i, &**a))
    }

    /// The format.
    pub fn format(&self) -> TranscriptFormat {
        self.format
    }

    /// The adapted entries, in transcript order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The adapted messages, in transcript order (what a node adapts again with
    /// [`Transcript::classifier`], giving [`Transcript::entries`] back).
    pub fn messages(&self) -> Vec<Message> {
        self.entries.iter().map(|e| e.message().clone()).collect()
    }

    /// A classifier that gives the messages of this transcript their ids and kind overrides
    /// (TRN-5, CLS-1 step 3): adapting [`Transcript::messages`] with it (CLS-1) yields
    /// [`Transcript::entries`]. For a host that hands the messages to a node (NODE-3 step 3).
    pub fn classifier(&self) -> impl Classifier + Send + 'static {
        Replay {
            ids: self
                .entries
                .iter()
                .map(|e| e.id().as_str().to_owned())
                .collect(),
            overrides: self.overrides.clone(),
        }
    }

    /// The position of the adapted message `entry` still is: its id was adapted from this
    /// transcript and its message is equal (VER-2) to the adapted one (TRN-6's "verbatim" case).
    pub fn position(&self, entry: &Entry) -> Option<usize> {
        self.source(entry).map(|(i, _)| i)
    }

    /// `entry` with the caller's call ids where it holds ids the pairing of reused ids made
    /// (TRN-14); `None` when it holds none.
    fn restored(&self, entry: &Entry) -> Option<Entry> {
        let made = |id: &str| self.originals.contains_key(id);
        let holds = entry.message().parts.iter().any(|p| match p {
            Part::Call(c) => made(&c.call_id),
            Part::Result(r) => made(&r.call_id),
            Part::Text(_) | Part::Block(_) => false,
        });
        if !holds {
            return None;
        }
        let message = pairing::restore(&self.originals, entry.message());
        Entry::new(entry.id().as_str(), entry.kind(), message).ok()
    }

    /// Whether the first entry was adapted from the top-level `system` (Anthropic's, the
    /// Responses instructions, Gemini's system instruction), not from a message.
    pub fn has_top_level_system(&self) -> bool {
        matches!(
            self.adapted.first().map(|a| &a.source),
            Some(Source::System(_))
        )
    }

    /// The caller's items (the top-level system first) adapted positions `position ..
    /// position + count` were adapted from: `(first item, number of items)` (TRN-23: a turn is
    /// several items).
    pub fn items(&self, position: usize, count: usize) -> (usize, usize) {
        match &self.starts {
            None => (position, count),
            Some(starts) => {
                let at = |k: usize| starts.get(k).or(starts.last()).copied().unwrap_or(0);
                let (a, b) = (at(position), at(position + count));
                (a, b.saturating_sub(a))
            }
        }
    }

    /// Renders `entries` (typically an assembly's final list) as a transcript object of the
    /// same format (SPEC TRN-6): `{"format", "messages"}` plus `system` for anthropic-messages.
    pub fn render(&self, entries: &[Entry]) -> Json {
        let mut messages = Vec::new();
        let mut system = Vec::new();
        for entry in entries {
            match self.source(entry) {
                Some((_, a)) => match &a.source {
                    Source::Message(j) => messages.push(j.clone()),
                    Source::System(j) => system.push(j.clone()),
                    Source::Turn(items) => messages.extend(items.iter().cloned()),
                },
                _ => {
                    let restored = self.restored(entry);
                    let entry = restored.as_ref().unwrap_or(entry);
                    match self.format {
                        TranscriptFormat::OpenAiChat => openai::render(entry, &mut messages),
                        TranscriptFormat::AnthropicMessages => {
                            anthropic::render(entry, &mut messages, &mut system)
                        }
                        TranscriptFormat::LangChain => langchain::render(entry, &mut messages),
                        TranscriptFormat::OpenAiResponses => {
                            responses::render(entry, &mut messages, &mut system)
                        }
                        TranscriptFormat::PydanticAi => pydantic_ai::render(entry, &mut messages),
                        TranscriptFormat::Gemini => {
                            gemini::render(entry, &mut messages, &mut system)
                        }
                        TranscriptFormat::AiSdk => ai_sdk::render(entry, &mut messages),
                    }
                }
            }
        }
        let mut out = serde_json::Map::new();
        out.insert("format".into(), Json::String(self.format.name().into()));
        if self.format.has_system() && !system.is_empty() {
            let joined = match self.format {
                TranscriptFormat::Gemini => gemini::join_system(system),
                _ => anthropic::join_system(system),
            };
            out.insert("system".into(), joined);
        }
        out.insert("messages".into(), Json::Array(messages));
        Json::Object(out)
    }
}

/// Entry `i` (and its adaptation) rebuilt around `message` with the same id and the kind `kind`:
/// a message the transcript rewrote after adapting it (TRN-14's paired ids, TRN-24's pending
/// approval requests).
fn rewrite(
    entries: &mut [Entry],
    adapted: &mut [Arc<Adapted>],
    i: usize,
    kind: EntryKind,
    message: Message,
) -> Result<(), AdaptError> {
    entries[i] = Entry::new(entries[i].id().as_str(), kind, message.clone())
        .map_err(|source| AdaptError::Entry { index: i, source })?;
    let a = &adapted[i];
    adapted[i] = Arc::new(Adapted {
        message,
        given_id: a.given_id.clone(),
        source: a.source.clone(),
    });
    Ok(())
}

fn parse_ids(ids: Option<&Json>, n: usize) -> Result<Option<Vec<String>>, TranscriptError> {
    let Some(ids) = ids.filter(|i| !i.is_null()) else {
        return Ok(None);
    };
    let arr = ids
        .as_array()
        .filter(|a| a.len() == n)
        .ok_or_else(|| malformed("$.ids", format!("expected an array of {n} entry ids (one per adapted message, the anthropic system first)")))?;
    arr.iter()
        .enumerate()
        .map(|(i, id)| {
            id.as_str()
                .map(str::to_owned)
                .ok_or_else(|| malformed(format!("$.ids[{i}]"), "expected a string"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn parse_overrides(
    overrides: Option<&Json>,
    n: usize,
) -> Result<BTreeMap<usize, EntryKind>, TranscriptError> {
    let mut out = BTreeMap::new();
    let Some(map) = overrides.filter(|o| !o.is_null()) else {
        return Ok(out);
    };
    let map = map
        .as_object()
        .ok_or_else(|| malformed("$.overrides", "expected an object of index: kind"))?;
    for (k, v) in map {
        let path = format!("$.overrides.{k}");
        let index = k
            .parse::<usize>()
            .ok()
            .filter(|i| *i < n)
            .ok_or_else(|| malformed(&path, "expected the decimal index of a message"))?;
        let kind = v
            .as_str()
            .and_then(EntryKind::from_name)
            .ok_or_else(|| malformed(&path, "expected an entry kind name"))?;
        out.insert(index, kind);
    }
    Ok(out)
}

/// Messages in `format` (its `messages` only, no `system`), adapted to ENT-3 messages without
/// ids or kinds (TRN-2 .. TRN-4, TRN-7 .. TRN-12): for what an upstream reducer returns. Errors
/// name `$.messages[i]...`.
pub fn parse_messages(
    format: TranscriptFormat,
    messages: &[Json],
) -> Result<Vec<Message>, TranscriptError> {
    let adapted = turns::join(format, adapt_items(format, None, messages)?);
    Ok(adapted.into_iter().map(|a| a.message).collect())
}

/// The top-level `system` and every one of `messages` adapted alone, in order (TRN-2 .. TRN-4,
/// TRN-17, TRN-21, TRN-22), before turns are joined (TRN-23).
fn adapt_items(
    format: TranscriptFormat,
    system: Option<&Json>,
    messages: &[Json],
) -> Result<Vec<Adapted>, TranscriptError> {
    let system = system.map(|s| adapt_system(format, s));
    system
        .into_iter()
        .chain(
            messages
                .iter()
                .enumerate()
                .map(|(i, m)| adapt_one(format, i, m)),
        )
        .collect()
}

/// `messages[i]` of a `format` transcript adapted alone: a message's adaptation reads only the
/// message (its refusals name `$.messages[i]...`).
fn adapt_one(format: TranscriptFormat, i: usize, m: &Json) -> Result<Adapted, TranscriptError> {
    match format {
        TranscriptFormat::OpenAiChat => openai::adapt_one(i, m),
        TranscriptFormat::AnthropicMessages => anthropic::adapt_one(i, m),
        TranscriptFormat::LangChain => langchain::adapt_one(i, m),
        TranscriptFormat::OpenAiResponses => responses::adapt_one(i, m),
        TranscriptFormat::PydanticAi => pydantic_ai::adapt_one(i, m),
        TranscriptFormat::Gemini => gemini::adapt_one(i, m),
        TranscriptFormat::AiSdk => ai_sdk::adapt_one(i, m),
    }
}

/// A `format` transcript's top-level `system` adapted: Anthropic's `system` (TRN-3), the
/// Responses `instructions` (TRN-17), Gemini's system instruction (TRN-22). Only those formats
/// have one (TRN-1 refuses it for the others before this is asked).
fn adapt_system(format: TranscriptFormat, s: &Json) -> Result<Adapted, TranscriptError> {
    match format {
        TranscriptFormat::OpenAiResponses => responses::adapt_instructions(s),
        TranscriptFormat::Gemini => gemini::adapt_system(s),
        _ => anthropic::adapt_system(s),
    }
}

/// The classifier of [`Transcript::classifier`]: ids and overrides by index, replayed.
struct Replay {
    ids: Vec<String>,
    overrides: BTreeMap<usize, EntryKind>,
}

impl Classifier for Replay {
    fn entry_id(&mut self, _messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        Ok(self.ids.get(index).cloned().unwrap_or_default())
    }

    fn override_kind(&mut self, _messages: &[Message], index: usize) -> Option<EntryKind> {
        self.overrides.get(&index).copied()
    }
}

/// SPEC TRN-13: an override of a message whose kind CLS-1 decides before consulting it (steps 1
/// and 2: tool content, role `system`) would be ignored; it is an error instead.
fn refuse_inapplicable<'a>(
    overrides: &BTreeMap<usize, EntryKind>,
    message: impl Fn(usize) -> &'a Message,
) -> Result<(), TranscriptError> {
    for &i in overrides.keys() {
        let m = message(i);
        let decided = if m.parts.iter().any(|p| !matches!(p, Part::Text(_))) {
            "it holds tool calls or results, so it is a ToolExchange (CLS-1 step 1)"
        } else if m.role == ROLE_SYSTEM {
            "it is a system message, so it is a SystemInstruction (CLS-1 step 2)"
        } else {
            continue;
        };
        return Err(malformed(
            format!("$.overrides.{i}"),
            format!("message {i} cannot be reclassified: {decided}"),
        ));
    }
    Ok(())
}

/// Ids given (TRN-5) or derived by the content-hash classifier (CLS-2); per-index overrides.
struct TranscriptClassifier {
    given: Vec<Option<String>>,
    overrides: BTreeMap<usize, EntryKind>,
    derived: ContentHashClassifier,
}

impl Classifier for TranscriptClassifier {
    fn entry_id(&mut self, messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        // The derived classifier is asked for every index, so its table stays consistent.
        let derived = self.derived.entry_id(messages, index)?;
        Ok(match self.given.get(index) {
            Some(Some(id)) => id.clone(),
            _ => derived,
        })
    }

    fn override_kind(&mut self, _messages: &[Message], index: usize) -> Option<EntryKind> {
        self.overrides.get(&index).copied()
    }
}
