//! JSON helpers shared by the formats (SPEC TRN-2 .. TRN-4, TRN-6).
//!
//! **Values.** Tool arguments and inputs become argument maps with this mapping: string →
//! string, `true` / `false` → bool, `null` → null, a number → raw JSON with the number's text (so
//! it renders back unchanged and counts as written, EST-6), array → list, object → map.

use hybrid_compaction_model::message::{Message, Part};
use hybrid_compaction_model::value::{RawJson, Value, ValueMap};
use serde_json::Value as Json;

use super::{malformed, TranscriptError};
use crate::estimators::text::{map_json, result_text};

/// A JSON value as a vocabulary value (mapping above).
pub fn value(j: &Json) -> Value {
    match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::String(s) => Value::String(s.clone()),
        // A serde_json number's text is always valid JSON.
        Json::Number(n) => RawJson::new(n.to_string())
            .map(Value::RawJson)
            .unwrap_or(Value::Null),
        Json::Array(items) => Value::List(items.iter().map(value).collect()),
        Json::Object(map) => Value::Map(value_map(map)),
    }
}

/// A JSON object as an argument map.
pub fn value_map(map: &serde_json::Map<String, Json>) -> ValueMap {
    map.iter().map(|(k, v)| (k.clone(), value(v))).collect()
}

/// An argument map from a JSON object value, or an error at `path`.
pub fn object_arguments(j: &Json, path: &str) -> Result<ValueMap, TranscriptError> {
    j.as_object()
        .map(value_map)
        .ok_or_else(|| malformed(path, "expected a JSON object of arguments"))
}

/// The compact JSON text of an argument map (EST-6); absent arguments render as `{}`.
pub fn arguments_text(arguments: Option<&ValueMap>) -> String {
    arguments.map(map_json).unwrap_or_else(|| "{}".to_owned())
}

/// The argument map as a JSON value (for formats that carry objects).
pub fn arguments_json(arguments: Option<&ValueMap>) -> Json {
    serde_json::from_str(&arguments_text(arguments)).unwrap_or(Json::Object(Default::default()))
}

/// The text a result value renders as (EST-6's result text).
pub fn result_string(value: &Value) -> String {
    result_text(value).into_owned()
}

/// A required string member.
pub fn string<'a>(obj: &'a Json, key: &str, path: &str) -> Result<&'a str, TranscriptError> {
    obj.get(key)
        .and_then(Json::as_str)
        .ok_or_else(|| malformed(format!("{path}.{key}"), "expected a string"))
}

/// An optional string member (absent or null: `None`).
pub fn opt_string(obj: &Json, key: &str, path: &str) -> Result<Option<String>, TranscriptError> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(malformed(format!("{path}.{key}"), "expected a string")),
    }
}

/// Text content: a string, or an array of text blocks (`{"type": "text", "text"}`; `also` names
/// further text-like block types with their text member). Any other block is unsupported.
pub fn text_blocks(
    content: &Json,
    path: &str,
    also: &[(&str, &str)],
) -> Result<Vec<String>, TranscriptError> {
    match content {
        Json::Null => Ok(Vec::new()),
        Json::String(s) => Ok(vec![s.clone()]),
        Json::Array(blocks) => blocks
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let p = format!("{path}[{i}]");
                if let Json::String(s) = b {
                    return Ok(s.clone());
                }
                let ty = string(b, "type", &p)?;
                let member = if ty == "text" {
                    "text"
                } else if let Some((_, m)) = also.iter().find(|(t, _)| *t == ty) {
                    m
                } else {
                    return Err(TranscriptError::UnsupportedContent {
                        path: p,
                        part_type: ty.to_owned(),
                    });
                };
                string(b, member, &p).map(str::to_owned)
            })
            .collect(),
        _ => Err(malformed(
            path,
            "expected a string or an array of content blocks",
        )),
    }
}

/// The text parts of a message, concatenated (ENT-3).
pub fn text_of(message: &Message) -> String {
    message.text_content()
}

/// Whether the message has any text part.
pub fn has_text(message: &Message) -> bool {
    message.parts.iter().any(|p| matches!(p, Part::Text(_)))
}
