//! Case types: what a conformance case asks (one operation plus its inputs).
//!
//! Every struct here is the serde image of one JSON object of `docs/WIRE.md`. They deny unknown
//! fields and use camelCase names; the JSON Schema published by `hybrid-compaction schema` is
//! derived from these same types, so the documentation, the parser and the schema cannot drift.
//!
//! These types are *syntax* only: turning them into vocabulary values (validating a policy,
//! constructing entries) happens in [`super::convert`], where SPEC-level rejections become typed
//! error answers rather than parse failures.

use std::collections::BTreeMap;

use hybrid_compaction_model::entry::EntryKind;

use super::adr::case as adr;
use super::scenario::case as scenario;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use super::strict::{self, TaggedUnion};

/// One conformance case: an operation (`op`) and its inputs. Read as a [`TaggedUnion`] (see
/// [`super::strict`]): a new operation adds its variant here and its line to `read_as`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Case {
    /// A full assembly (SPEC ASM-7) followed by diagnostics (SPEC DIA-5).
    Assemble(AssembleCase),
    /// `Verify(original, proposed)` (SPEC VER-1).
    Verify(VerifyCase),
    /// Required-preservation selection (SPEC PRE-4).
    Select(SelectCase),
    /// Trigger evaluation (SPEC POL-3) plus the per-entry estimates.
    Evaluate(EvaluateCase),
    /// Tool-exchange analysis (SPEC EXC-1 .. EXC-3).
    Analyze(AnalyzeCase),
    /// Policy construction and validation (SPEC POL-1, POL-2).
    Policy(PolicyCase),
    /// Entry construction and validation (SPEC ENT-2 .. ENT-6).
    Entry(EntryCase),
    /// Capability resolution (SPEC CAP-1 .. CAP-4).
    Resolve(adr::ResolveCase),
    /// One composition call (SPEC CMP-1 .. CMP-4).
    Compose(adr::ComposeCase),
    /// Trust configuration and a guarded provider call (SPEC TRU-1 .. TRU-3).
    Trust(adr::TrustCase),
    /// Reference-record creation or reconstruction (SPEC ARF-1 .. ARF-3).
    Record(adr::RecordCase),
    /// Rehydration with its attribution (SPEC RHY-1 .. RHY-4, ATR-1 .. ATR-4).
    Rehydrate(adr::RehydrateCase),
    /// The offload decision with its attribution (SPEC OFF-1 .. OFF-3, ATR-1 .. ATR-4).
    Offload(adr::OffloadCase),
    /// The public switch of ADR-0011 (SPEC CFG-1 .. CFG-4).
    Configure(adr::ConfigureCase),
    /// A diagnostics record from its fields (SPEC DIA-1 .. DIA-4).
    Diagnostics(scenario::DiagnosticsCase),
    /// The upstream-reducer bridge on its own (SPEC BRG-1 .. BRG-3).
    Bridge(scenario::BridgeCase),
    /// A lease scenario (SPEC LSE-1 .. LSE-10).
    Leases(scenario::LeasesCase),
    /// A node scenario (SPEC NODE-1 .. NODE-6, EVT-1 .. EVT-6).
    Node(scenario::NodeCase),
}

impl Case {
    /// The operation name as written in `op`.
    pub fn op(&self) -> &'static str {
        match self {
            Case::Assemble(_) => "assemble",
            Case::Verify(_) => "verify",
            Case::Select(_) => "select",
            Case::Evaluate(_) => "evaluate",
            Case::Analyze(_) => "analyze",
            Case::Policy(_) => "policy",
            Case::Entry(_) => "entry",
            Case::Resolve(_) => "resolve",
            Case::Compose(_) => "compose",
            Case::Trust(_) => "trust",
            Case::Record(_) => "record",
            Case::Rehydrate(_) => "rehydrate",
            Case::Offload(_) => "offload",
            Case::Configure(_) => "configure",
            Case::Diagnostics(_) => "diagnostics",
            Case::Bridge(_) => "bridge",
            Case::Leases(_) => "leases",
            Case::Node(_) => "node",
        }
    }
}

impl TaggedUnion for Case {
    const TAG: &'static str = "op";
    const NAMES: &'static [&'static str] = &[
        "assemble",
        "verify",
        "select",
        "evaluate",
        "analyze",
        "policy",
        "entry",
        "resolve",
        "compose",
        "trust",
        "record",
        "rehydrate",
        "offload",
        "configure",
        "diagnostics",
        "bridge",
        "leases",
        "node",
    ];
    const WHAT: &'static str = "operation";

    fn read_as<'de, D: Deserializer<'de>>(name: &str, rest: D) -> Result<Case, D::Error> {
        Ok(match name {
            "assemble" => Case::Assemble(AssembleCase::deserialize(rest)?),
            "verify" => Case::Verify(VerifyCase::deserialize(rest)?),
            "select" => Case::Select(SelectCase::deserialize(rest)?),
            "evaluate" => Case::Evaluate(EvaluateCase::deserialize(rest)?),
            "analyze" => Case::Analyze(AnalyzeCase::deserialize(rest)?),
            "policy" => Case::Policy(PolicyCase::deserialize(rest)?),
            "entry" => Case::Entry(EntryCase::deserialize(rest)?),
            "resolve" => Case::Resolve(adr::ResolveCase::deserialize(rest)?),
            "compose" => Case::Compose(adr::ComposeCase::deserialize(rest)?),
            "trust" => Case::Trust(adr::TrustCase::deserialize(rest)?),
            "record" => Case::Record(adr::RecordCase::deserialize(rest)?),
            "rehydrate" => Case::Rehydrate(adr::RehydrateCase::deserialize(rest)?),
            "offload" => Case::Offload(adr::OffloadCase::deserialize(rest)?),
            "configure" => Case::Configure(adr::ConfigureCase::deserialize(rest)?),
            "diagnostics" => Case::Diagnostics(scenario::DiagnosticsCase::deserialize(rest)?),
            "bridge" => Case::Bridge(scenario::BridgeCase::deserialize(rest)?),
            "leases" => Case::Leases(scenario::LeasesCase::deserialize(rest)?),
            "node" => Case::Node(scenario::NodeCase::deserialize(rest)?),
            _ => return Err(unlisted(name)),
        })
    }
}

/// A name in `NAMES` without its line in `read_as` (a programming error, reported as input).
fn unlisted<E: serde::de::Error>(name: &str) -> E {
    E::custom(format!(
        "`{name}` is accepted but not readable (oracle bug)"
    ))
}

impl<'de> Deserialize<'de> for Case {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Case, D::Error> {
        strict::tagged(d)
    }
}

impl Case {
    /// The case's policy, if its operation takes one and it is present.
    pub fn policy_mut(&mut self) -> Option<&mut PolicyInput> {
        match self {
            Case::Assemble(c) => c.policy.as_mut(),
            Case::Verify(c) => c.policy.as_mut(),
            Case::Select(c) => c.policy.as_mut(),
            Case::Evaluate(c) => c.policy.as_mut(),
            Case::Policy(c) => c.policy.as_mut(),
            Case::Node(c) => c.policy.as_mut(),
            Case::Analyze(_) | Case::Entry(_) => None,
            Case::Resolve(_)
            | Case::Compose(_)
            | Case::Trust(_)
            | Case::Record(_)
            | Case::Rehydrate(_)
            | Case::Offload(_)
            | Case::Configure(_)
            | Case::Diagnostics(_)
            | Case::Bridge(_)
            | Case::Leases(_) => None,
        }
    }
}

impl EstimatorInput {
    /// Parses the CLI shorthand: `utf8`, `utf8-text`, `tokens:o200k_base`, `tokens:cl100k_base`,
    /// each optionally prefixed by `memo:` (SPEC EST-2, EST-4, EST-6, EST-7).
    pub fn from_shorthand(text: &str) -> Option<EstimatorInput> {
        if let Some(inner) = text.strip_prefix("memo:") {
            return Some(EstimatorInput::Memo(MemoEstimatorInput {
                estimator: Box::new(EstimatorInput::from_shorthand(inner)?),
                capacity: None,
            }));
        }
        Some(match text {
            "utf8" => EstimatorInput::Utf8(NoParameters {}),
            "utf8-text" => EstimatorInput::Utf8Text(NoParameters {}),
            "tokens:o200k_base" | "tokens" => EstimatorInput::Tokens(TokensEstimatorInput {
                encoding: EncodingInput::O200kBase,
            }),
            "tokens:cl100k_base" => EstimatorInput::Tokens(TokensEstimatorInput {
                encoding: EncodingInput::Cl100kBase,
            }),
            _ => return None,
        })
    }
}

/// Inputs of the `assemble` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("allOf" = [
    {"not": {"required": ["entries", "transcript"]}},
    {"anyOf": [{"required": ["entries"]}, {"required": ["transcript"]}, {"required": ["snapshots"]}]},
    {"if": {"required": ["snapshots"], "properties": {"snapshots": {"maxItems": 0}}},
     "then": {"not": {"anyOf": [{"required": ["entries"]}, {"required": ["transcript"]}]}}},
    {"if": {"not": {"anyOf": [{"required": ["entries"]}, {"required": ["transcript"]}]}},
     "then": {"properties": {"snapshots": {"prefixItems": [{"required": ["entries"]}]}}}}
]))]
pub struct AssembleCase {
    /// The policy (may be inherited from the vector test group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// Static history (version 0 at every capture, SPEC SNAP-3); also the base of `snapshots`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryInput>>,
    /// The static history as a provider / framework transcript (SPEC TRN-1); exclusive with
    /// `entries`. A successful output then carries `finalTranscript` (SPEC TRN-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptInput>,
    /// Snapshot schedule: the k-th capture (0-based) sees step k; captures past the end repeat
    /// the last step. A step without `entries` repeats the previous step's entries (the first
    /// step: the case's `entries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<Vec<SnapshotInput>>,
    /// The reducer; absent means a scripted reducer that always echoes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reducer: Option<ReducerInput>,
    /// Cancellation point: `before`, `capture:K` or `reducer:K` (K 0-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = "^(before|capture:[0-9]+|reducer:[0-9]+)$"))]
    pub cancel: Option<String>,
}

/// Inputs of the `verify` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerifyCase {
    /// The policy (retention count matters for required ids).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// The original list (required ids come from it).
    pub original: Vec<EntryInput>,
    /// The proposal: entries, or a string naming an original entry to copy unchanged.
    pub proposed: Vec<ProposedItem>,
    /// Only `before` is meaningful here: the verifier checks the token first (SPEC VER-5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = "^before$"))]
    pub cancel: Option<String>,
}

/// One proposed entry: a copy of an original entry (by id) or a new entry.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ProposedItem {
    /// The original entry with this id, unchanged.
    Same(String),
    /// A full entry.
    Entry(EntryInput),
}

impl<'de> Deserialize<'de> for ProposedItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ProposedItem, D::Error> {
        id_or_object::<D, EntryInput, _>(d, "an original entry id (a string) or an entry object")
    }
}

impl From<String> for ProposedItem {
    fn from(id: String) -> ProposedItem {
        ProposedItem::Same(id)
    }
}

impl From<EntryInput> for ProposedItem {
    fn from(e: EntryInput) -> ProposedItem {
        ProposedItem::Entry(e)
    }
}

/// A string (an id) or an object read as `O`, in one pass (serde's untagged enums buffer the
/// value and lose the path of whatever fails inside).
fn id_or_object<'de, D, O, T>(d: D, what: &'static str) -> Result<T, D::Error>
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

/// Inputs of the `select` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("oneOf" = [{"required": ["entries"]}, {"required": ["transcript"]}]))]
pub struct SelectCase {
    /// The policy (retention count, label, version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// The list to select from (exactly one of `entries` and `transcript`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryInput>>,
    /// The list to select from, as a transcript (SPEC TRN-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptInput>,
    /// Only `before` is meaningful here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = "^before$"))]
    pub cancel: Option<String>,
}

/// Inputs of the `evaluate` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("oneOf" = [{"required": ["entries"]}, {"required": ["transcript"]}]))]
pub struct EvaluateCase {
    /// The policy (its estimator measures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// The list to measure (exactly one of `entries` and `transcript`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryInput>>,
    /// The list to measure, as a transcript (SPEC TRN-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptInput>,
    /// Only `before` is meaningful here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = "^before$"))]
    pub cancel: Option<String>,
}

/// Inputs of the `analyze` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("oneOf" = [{"required": ["entries"]}, {"required": ["transcript"]}]))]
pub struct AnalyzeCase {
    /// The list to analyze (exactly one of `entries` and `transcript`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryInput>>,
    /// The list to analyze, as a transcript (SPEC TRN-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptInput>,
}

/// Inputs of the `policy` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyCase {
    /// The policy to validate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
}

/// Inputs of the `entry` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("allOf" = [
    {"if": {"required": ["transcript"]},
     "then": {"properties": {"entries": {"maxItems": 0}},
              "not": {"anyOf": [{"required": ["messages"]}, {"required": ["overrides"]}]}}},
    {"if": {"required": ["messages"]}, "then": {"properties": {"entries": {"maxItems": 0}}}},
    {"dependentRequired": {"overrides": ["messages"]}}
]))]
pub struct EntryCase {
    /// The entries to construct, in order (the first failure is the answer).
    #[serde(default)]
    pub entries: Vec<EntryInput>,
    /// Messages to adapt into entries with the default content-hash classifier (SPEC CLS-1,
    /// CLS-2); exclusive with a non-empty `entries`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<MessageInput>>,
    /// Classifier kind overrides by message index (decimal string keys), consulted per SPEC
    /// CLS-1 step 3.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "index_keyed"
    )]
    #[schemars(with = "Option<BTreeMap<IndexKey, KindInput>>")]
    pub overrides: Option<BTreeMap<String, KindInput>>,
    /// A provider / framework transcript to adapt (SPEC TRN-1 .. TRN-5); exclusive with
    /// `entries` and `messages`. The output also carries the transcript rendered back from the
    /// adapted entries as `finalTranscript` (SPEC TRN-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptInput>,
    /// Append a recovered segment with the augmentation helper (SPEC SNAP-4) to the list built
    /// from `entries` / `messages`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub augment: Option<AugmentInput>,
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
    /// Anthropic's top-level `system` (string or text blocks).
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
pub struct IndexKey(pub String);

/// The pattern of an [`IndexKey`].
pub const INDEX_KEY_PATTERN: &str = "^(0|[1-9][0-9]*)$";

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
fn index_keyed<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<BTreeMap<String, KindInput>>, D::Error> {
    let m = Option::<BTreeMap<IndexKey, KindInput>>::deserialize(d)?;
    Ok(m.map(|m| m.into_iter().map(|(k, v)| (k.0, v)).collect()))
}

/// A transcript format (SPEC TRN-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(expecting = "a transcript format: `openai-chat`, `anthropic-messages` or `langchain`")]
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
}

/// A recovered segment to append with the augmentation helper (SPEC SNAP-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AugmentInput {
    /// The new entry id.
    pub id: String,
    /// The segment (reference defaults to the body's SHA-256 reference).
    pub segment: SegmentInput,
}

/// Policy inputs (SPEC POL-1). Numbers are signed 32-bit; label and estimator may be absent
/// (or null), which the policy rejects as a null argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyInput {
    /// `HardLimit`.
    pub hard_limit: i32,
    /// `TriggerMargin`.
    pub trigger_margin: i32,
    /// `RecentMessageRetentionCount`.
    pub recent_message_retention_count: i32,
    /// `MaximumCompactionAttempts`.
    pub maximum_compaction_attempts: i32,
    /// `PreservationLabel` (absent or null: missing).
    #[serde(default)]
    pub preservation_label: Option<String>,
    /// `PreservationVersion`.
    pub preservation_version: i32,
    /// `SizeEstimator` (absent or null: missing).
    #[serde(default)]
    pub estimator: Option<EstimatorInput>,
}

/// A size estimator (SPEC EST-1 .. EST-5).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum EstimatorInput {
    /// The UTF-8 context estimator (SPEC EST-2), `Utf8Bytes`.
    Utf8(NoParameters),
    /// The UTF-8 text-only estimator (SPEC EST-4), `Utf8Bytes`.
    Utf8Text(NoParameters),
    /// Every entry measures `size` (SPEC EST-5), `HostDefinedUnits`.
    Constant(ConstantEstimatorInput),
    /// Per-id sizes with a default (SPEC EST-5), `HostDefinedUnits`.
    Table(TableEstimatorInput),
    /// Provider tokens with a bundled BPE encoding (SPEC EST-6), `EstimatedTokens`.
    Tokens(TokensEstimatorInput),
    /// Another estimator behind a memo (SPEC EST-7); its unit.
    Memo(MemoEstimatorInput),
}

impl TaggedUnion for EstimatorInput {
    const TAG: &'static str = "kind";
    const NAMES: &'static [&'static str] =
        &["utf8", "utf8-text", "constant", "table", "tokens", "memo"];
    const WHAT: &'static str = "estimator kind";

    fn read_as<'de, D: Deserializer<'de>>(name: &str, rest: D) -> Result<Self, D::Error> {
        Ok(match name {
            "utf8" => EstimatorInput::Utf8(NoParameters::deserialize(rest)?),
            "utf8-text" => EstimatorInput::Utf8Text(NoParameters::deserialize(rest)?),
            "constant" => EstimatorInput::Constant(ConstantEstimatorInput::deserialize(rest)?),
            "table" => EstimatorInput::Table(TableEstimatorInput::deserialize(rest)?),
            "tokens" => EstimatorInput::Tokens(TokensEstimatorInput::deserialize(rest)?),
            "memo" => EstimatorInput::Memo(MemoEstimatorInput::deserialize(rest)?),
            _ => return Err(unlisted(name)),
        })
    }
}

impl<'de> Deserialize<'de> for EstimatorInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        strict::tagged(d)
    }
}

/// Parameters of the `memo` estimator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoEstimatorInput {
    /// The wrapped estimator.
    pub estimator: Box<EstimatorInput>,
    /// Sizes per cache generation (absent: the library default, 65536; 0 means 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u32>,
}

/// Parameters of the `tokens` estimator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokensEstimatorInput {
    /// The BPE encoding.
    pub encoding: EncodingInput,
}

/// A bundled BPE encoding (SPEC EST-6), by its tiktoken name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(expecting = "an encoding: `o200k_base` or `cl100k_base`")]
pub enum EncodingInput {
    /// `o200k_base`.
    #[serde(rename = "o200k_base")]
    O200kBase,
    /// `cl100k_base`.
    #[serde(rename = "cl100k_base")]
    Cl100kBase,
}

/// An estimator without parameters (only `kind`; any other member is refused).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParameters {}

/// Parameters of the `constant` estimator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConstantEstimatorInput {
    /// The size of every entry (may be negative, to exercise SPEC POL-3).
    pub size: i32,
}

/// Parameters of the `table` estimator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TableEstimatorInput {
    /// Size per entry id.
    pub sizes: BTreeMap<String, i32>,
    /// Size of every entry not in `sizes`.
    pub default: i32,
}

/// Entry kinds (SPEC ENT-1), by their exact names: a kind of the vocabulary, whose
/// `EntryKind::ALL` / `EntryKind::NAMES` are the one list (serde and the schema read it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindInput(pub EntryKind);

impl Serialize for KindInput {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.name())
    }
}

impl<'de> Deserialize<'de> for KindInput {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        EntryKind::from_name(&name).map(KindInput).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown entry kind {}, expected one of {}",
                serde_json::Value::from(name),
                EntryKind::NAMES.join(", ")
            ))
        })
    }
}

impl JsonSchema for KindInput {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "KindInput".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Entry kinds (SPEC ENT-1), by their exact names.",
            "type": "string",
            "enum": EntryKind::NAMES,
        })
    }
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

/// A recovered segment (SPEC ENT-6): `reference` defaults to the SHA-256 reference of `body`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SegmentInput {
    /// Canonical reference `artifact://sha256/<64 lowercase hex>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The exact body.
    pub body: String,
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

/// One message part (SPEC ENT-3): exactly one key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "a message part: an object with one key, `text`, `call`, `result` or `unsupported`"
)]
pub enum PartInput {
    /// A text part.
    Text(String),
    /// A function call part.
    Call(CallInput),
    /// A function result part.
    Result(ResultInput),
    /// A content shape outside the closed model, named by its type; constructing it is a
    /// `NotSupported` error (SPEC ENT-3, DEP-19).
    Unsupported(String),
}

/// A function call part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallInput {
    /// The call id.
    pub call_id: String,
    /// The function name.
    pub name: String,
    /// Optional argument map (absent differs from `{}`); values are wire values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<BTreeMap<String, WireValueSchema>>")]
    pub arguments: Option<BTreeMap<String, serde_json::Value>>,
    /// The informational-only flag.
    #[serde(default, skip_serializing_if = "is_false")]
    pub informational_only: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A function result part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResultInput {
    /// The call id answered.
    pub call_id: String,
    /// The result value (a wire value; absent means null).
    #[serde(default)]
    #[schemars(with = "WireValueSchema")]
    pub value: serde_json::Value,
}

/// Schema stand-in for a wire value (see `docs/WIRE.md`, "Values").
#[derive(Debug)]
pub struct WireValueSchema;

impl JsonSchema for WireValueSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "WireValue".into()
    }

    fn json_schema(_gen: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let int = |min: serde_json::Value, max: serde_json::Value| serde_json::json!({"type": "integer", "minimum": min, "maximum": max});
        let float = serde_json::json!({"anyOf": [
            {"type": "number"},
            {"enum": ["NaN", "Infinity", "-Infinity", "-0"]}
        ]});
        let tagged = |key: &str, schema: serde_json::Value| {
            serde_json::json!({
                "type": "object",
                "properties": {key: schema},
                "required": [key],
                "additionalProperties": false
            })
        };
        let me = serde_json::json!({"$ref": "#/$defs/WireValue"});
        schemars::json_schema!({
            "description": "A value (SPEC ENT-4). Plain JSON shorthand: null, bool, string, integer (i32 if it fits, else i64, else u64), other number (f64), array (list). Objects are always tagged with exactly one key.",
            "anyOf": [
                {"type": ["null", "boolean", "string", "number"]},
                {"type": "array", "items": me},
                tagged("string", serde_json::json!({"type": "string"})),
                tagged("bool", serde_json::json!({"type": "boolean"})),
                tagged("i16", int((-32768).into(), 32767.into())),
                tagged("i32", int(i32::MIN.into(), i32::MAX.into())),
                tagged("i64", int(i64::MIN.into(), i64::MAX.into())),
                tagged("u8", int(0.into(), 255.into())),
                tagged("u32", int(0.into(), u32::MAX.into())),
                tagged("u64", int(0.into(), u64::MAX.into())),
                tagged("f32", float.clone()),
                tagged("f64", float),
                tagged("decimal", serde_json::json!({"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]{1,28})?$"})),
                tagged("raw", serde_json::json!({"type": "string"})),
                tagged("map", serde_json::json!({"type": "object", "additionalProperties": me})),
                tagged("list", serde_json::json!({"type": "array", "items": me})),
                tagged("unsupported", serde_json::json!({"type": "string"}))
            ]
        })
    }
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
#[serde(
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "a reducer step: `echo`, `nothing`, {\"fail\": message} or {\"propose\": [...]}"
)]
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
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "an upstream step: `echo`, `null`, {\"fail\": message} or {\"return\": [...]}"
)]
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
