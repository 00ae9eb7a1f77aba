//! Inputs of the wire format that more than one operation reads: policies and estimators,
//! entries, messages, parts and values, snapshot schedules, reducers and their scripted steps,
//! transcripts.
//!
//! Every struct here is the serde image of one JSON object of `docs/WIRE.md`. They deny unknown
//! fields and use camelCase names; the JSON Schema published by `hybrid-compaction schema` is
//! derived from these same types, so the documentation, the parser and the schema cannot drift.
//! These types are *syntax* only: turning them into vocabulary values (validating a policy,
//! constructing entries) happens in [`super::convert`], where SPEC-level rejections become typed
//! error answers rather than parse failures.
//!
//! An enum's serde name is the format's word for its names (`#[serde(rename = "message
//! part")]`), which the strict reader's refusals use ("unknown message part" and the name); the
//! `#[schemars(rename)]` beside it keeps the schema's definition names.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use super::strict::{self, unlisted, TaggedUnion};
pub(crate) use hybrid_compaction_trace::shapes::entry::*;
pub(crate) use hybrid_compaction_trace::shapes::policy::*;

/// A string (an id) or an object read as `O`, in one pass (serde's untagged enums buffer the
/// value and lose the path of whatever fails inside).
pub(crate) fn id_or_object<'de, D, O, T>(d: D, what: &'static str) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    O: Deserialize<'de>,
    T: From<String> + From<O>,
{
    struct V<O, T>(&'static str, std::marker::PhantomData<(O, T)>);
    impl<'de, O: Deserialize<'de>, T: From<String> + From<O>> serde::de::Visitor<'de> for V<O, T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
        fn visit_str<E>(self, v: &str) -> Result<T, E> {
            Ok(T::from(v.to_owned()))
        }
        fn visit_string<E>(self, v: String) -> Result<T, E> {
            Ok(T::from(v))
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            O::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(T::from)
        }
    }
    d.deserialize_any(V::<O, T>(what, std::marker::PhantomData))
}
/// One entry (SPEC ENT-2). `text` is shorthand for `parts: [{"text": ...}]` (the two are
/// mutually exclusive). `role` defaults to `assistant` when a part is a call, else `tool` when
/// a part is a result, else `system` for `SystemInstruction`, else `user`. `segment` is only
/// allowed with kind `RecoverableContextSegment` and selects the factory of SPEC ENT-6.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("allOf" = [
    {"not": {"required": ["text", "parts"]}},
    {"if": {"required": ["segment"]},
     "then": {"properties": {"kind": {"const": "RecoverableContextSegment"}},
              "not": {"anyOf": [{"required": ["role"]}, {"required": ["text"]}, {"required": ["parts"]}]}}}
]))]
pub struct EntryInput {
    /// The entry id (SPEC ENT-2).
    pub id: String,
    /// The entry kind.
    pub kind: KindInput,
    /// The message role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The optional author name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Shorthand for one text part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The ordered parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<PartInput>>,
    /// The recovered segment (kind `RecoverableContextSegment` only, SPEC ENT-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<SegmentInput>,
}

/// A message (upstream reducer output): role, optional author, `text` or `parts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("not" = {"required": ["text", "parts"]}))]
pub struct MessageInput {
    /// The role.
    pub role: String,
    /// The optional author name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Shorthand for one text part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The ordered parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<PartInput>>,
}

/// One snapshot of a schedule (SPEC SNAP-1, SNAP-5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SnapshotInput {
    /// The version (negative is an `OutOfRange` answer, SPEC SNAP-1).
    pub version: i64,
    /// The entries; absent repeats the previous step's entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryInput>>,
}

/// The reducer of an assembly.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum ReducerInput {
    /// Entry-level script, one step per invocation; past the end it echoes.
    Scripted(ScriptedReducerInput),
    /// Message-level script through the reducer bridge (SPEC BRG-1 .. BRG-3).
    Upstream(UpstreamReducerInput),
    /// `MessageCountingReducer` through the bridge: keep system messages and the last
    /// `targetCount` others.
    MessageCounting(MessageCountingInput),
}

impl TaggedUnion for ReducerInput {
    const TAG: &'static str = "kind";
    const NAMES: &'static [&'static str] = &["scripted", "upstream", "messageCounting"];
    const WHAT: &'static str = "reducer kind";

    fn read_as<'de, D: Deserializer<'de>>(name: &str, rest: D) -> Result<Self, D::Error> {
        Ok(match name {
            "scripted" => ReducerInput::Scripted(ScriptedReducerInput::deserialize(rest)?),
            "upstream" => ReducerInput::Upstream(UpstreamReducerInput::deserialize(rest)?),
            "messageCounting" => {
                ReducerInput::MessageCounting(MessageCountingInput::deserialize(rest)?)
            }
            _ => return Err(unlisted(name)),
        })
    }
}

impl<'de> Deserialize<'de> for ReducerInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        strict::tagged(d)
    }
}

/// Steps of the entry-level scripted reducer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptedReducerInput {
    /// One step per invocation.
    pub steps: Vec<StepInput>,
}

/// Steps of the message-level scripted upstream reducer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpstreamReducerInput {
    /// One step per invocation.
    pub steps: Vec<UpstreamStepInput>,
}

/// Parameter of the message-counting reducer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageCountingInput {
    /// Non-system messages kept.
    pub target_count: u32,
}

/// One entry-level reducer step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename = "reducer step", rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "StepInput")]
pub enum StepInput {
    /// Return the request entries unchanged.
    Echo,
    /// Return nothing (an `InvalidOperation` error, SPEC ASM-4).
    Nothing,
    /// Fail with this message (a `ReducerFailed` error).
    Fail(String),
    /// Return these items in order: a string keeps the request entry with that id; `{"new":
    /// entry}` adds an entry.
    Propose(Vec<ProposalItemInput>),
}

/// One item of a proposal.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ProposalItemInput {
    /// Keep the request entry with this id (unknown id: the reducer fails).
    Keep(String),
    /// Add a new entry.
    New(NewItemInput),
}

impl<'de> Deserialize<'de> for ProposalItemInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ProposalItemInput, D::Error> {
        id_or_object::<D, NewItemInput, _>(d, "a request entry id (a string) or {\"new\": entry}")
    }
}

impl From<String> for ProposalItemInput {
    fn from(id: String) -> ProposalItemInput {
        ProposalItemInput::Keep(id)
    }
}

impl From<NewItemInput> for ProposalItemInput {
    fn from(n: NewItemInput) -> ProposalItemInput {
        ProposalItemInput::New(n)
    }
}

/// `{"new": entry}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewItemInput {
    /// The new entry.
    pub new: EntryInput,
}

/// One upstream reducer step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    rename = "upstream step",
    rename_all = "camelCase",
    deny_unknown_fields
)]
#[schemars(rename = "UpstreamStepInput")]
pub enum UpstreamStepInput {
    /// Return the input messages unchanged.
    Echo,
    /// Return null (a `ReducerContract` error, SPEC BRG-1).
    Null,
    /// Fail with this message (a `ReducerFailed` error).
    Fail(String),
    /// Return these messages.
    Return(Vec<MessageInput>),
}

/// A provider / framework transcript (SPEC TRN-1). `messages` (and `system`) are the format's
/// own JSON, checked by the adaptation (a typed `InvalidArgument` / `NotSupported` answer), not
/// by the wire parser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TranscriptInput {
    /// The format.
    pub format: TranscriptFormatInput,
    /// The messages, in the format's JSON.
    pub messages: Vec<serde_json::Value>,
    /// The top-level system prompt: Anthropic's `system`, the Responses `instructions` (a string
    /// or text blocks); no other format has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<serde_json::Value>,
    /// Entry ids, one per adapted message (SPEC TRN-5); absent: given or content-hash ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<String>>,
    /// Kind overrides by message index (decimal string keys), per SPEC CLS-1 step 3.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "index_keyed"
    )]
    #[schemars(with = "Option<BTreeMap<IndexKey, KindInput>>")]
    pub overrides: Option<BTreeMap<String, KindInput>>,
}

/// A message index as an object key: a canonical decimal (`0`, `12`; not `00`, `+1`, `-0`), so
/// that two keys never name the same message.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct IndexKey(pub String);

/// The pattern of an [`IndexKey`].
pub(crate) const INDEX_KEY_PATTERN: &str = "^(0|[1-9][0-9]*)$";

impl<'de> Deserialize<'de> for IndexKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let key = String::deserialize(d)?;
        let canonical = key == "0"
            || (!key.is_empty()
                && !key.starts_with('0')
                && key.len() <= 19
                && key.bytes().all(|b| b.is_ascii_digit()));
        if canonical {
            Ok(IndexKey(key))
        } else {
            Err(serde::de::Error::custom(format!(
                "expected a message index as a decimal key without sign or leading zeros (such as \"0\" or \"12\"), got {}",
                serde_json::Value::from(key)
            )))
        }
    }
}

impl JsonSchema for IndexKey {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "IndexKey".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "pattern": INDEX_KEY_PATTERN})
    }
}

/// `overrides`: kinds by canonical message index.
pub(crate) fn index_keyed<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<BTreeMap<String, KindInput>>, D::Error> {
    let m = Option::<BTreeMap<IndexKey, KindInput>>::deserialize(d)?;
    Ok(m.map(|m| m.into_iter().map(|(k, v)| (k.0, v)).collect()))
}

/// A transcript format (SPEC TRN-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename = "transcript format")]
#[schemars(rename = "TranscriptFormatInput")]
pub enum TranscriptFormatInput {
    /// OpenAI Chat Completions messages (SPEC TRN-2).
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// Anthropic Messages (SPEC TRN-3).
    #[serde(rename = "anthropic-messages")]
    AnthropicMessages,
    /// LangChain message dicts (SPEC TRN-4).
    #[serde(rename = "langchain")]
    LangChain,
    /// OpenAI Responses input items, `system` the top-level `instructions` (SPEC TRN-17).
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// pydantic-ai `ModelMessage`s as `ModelMessagesTypeAdapter` dumps them (SPEC TRN-21).
    #[serde(rename = "pydantic-ai")]
    PydanticAi,
    /// Gemini `Content`s, `system` the system instruction (SPEC TRN-22).
    #[serde(rename = "gemini")]
    Gemini,
    /// The Vercel AI SDK's `ModelMessage`s (SPEC TRN-20).
    #[serde(rename = "ai-sdk")]
    AiSdk,
}
