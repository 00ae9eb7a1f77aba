//! Entries' content as the wire and the trace write it (SPEC ENT-1 .. ENT-6): kinds, message
//! parts (text, calls, results), recovered segments, and the schema of a wire value.
//!
//! Syntax only: constructing vocabulary entries from them is the oracle's job.

use std::collections::BTreeMap;

use hybrid_compaction_model::entry::EntryKind;
use hybrid_compaction_model::message::BlockKind;

use super::names::Name;
#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
        // Borrowed where it can be: a kind is only looked up.
        let name = crate::strict::Text::deserialize(deserializer)?;
        EntryKind::from_name(&name).map(KindInput).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown entry kind {}, expected one of {}",
                serde_json::Value::from(&*name),
                EntryKind::NAMES.join(", ")
            ))
        })
    }
}

#[cfg(feature = "schema")]
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

/// A recovered segment (SPEC ENT-6): `reference` defaults to the SHA-256 reference of `body`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SegmentInput {
    /// Canonical reference `artifact://sha256/<64 lowercase hex>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The exact body.
    pub body: String,
}

/// One message part (SPEC ENT-3): exactly one key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename = "message part", rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "schema", schemars(rename = "PartInput"))]
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
    /// A content block carried verbatim (SPEC ENT-8, DEP-23).
    Block(BlockInput),
}

/// A content block (SPEC ENT-8): what it is to the rules, the provider's type of it, its JSON as
/// given (any JSON value; the vocabulary holds it written compactly, object members in code
/// point order), and the tokens its provider charges for it, where known (EST-6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockInput {
    /// `Media`, `Reasoning`, `ServerTool`, `ProviderCompaction` or `Other`.
    pub kind: Name<BlockKind>,
    /// The provider's type of the block (`image_url`, `thinking`, ...); not empty.
    #[serde(rename = "type")]
    pub block_type: String,
    /// The block, as given.
    pub json: serde_json::Value,
    /// The tokens its provider charges for it (absent: the token estimator counts its JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u32>,
}

/// A function call part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallInput {
    /// The call id.
    pub call_id: String,
    /// The function name.
    pub name: String,
    /// Optional argument map (absent differs from `{}`); values are wire values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<BTreeMap<String, WireValueSchema>>")
    )]
    pub arguments: Option<BTreeMap<String, serde_json::Value>>,
    /// The informational-only flag.
    #[serde(default, skip_serializing_if = "is_false")]
    pub informational_only: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A function result part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResultInput {
    /// The call id answered.
    pub call_id: String,
    /// The result value (a wire value; absent means null).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "WireValueSchema"))]
    pub value: serde_json::Value,
}

/// Schema stand-in for a wire value (see `docs/WIRE.md`, "Values").
#[cfg(feature = "schema")]
#[derive(Debug)]
pub struct WireValueSchema;

#[cfg(feature = "schema")]
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
