//! JSON helpers shared by the formats (SPEC TRN-2 .. TRN-4, TRN-6).
//!
//! **Values.** Tool arguments and inputs become argument maps with this mapping: string →
//! string, `true` / `false` → bool, `null` → null, a number → raw JSON with the number's text (so
//! it renders back unchanged and counts as written, EST-6), array → list, object → map.
//!
//! **Exact integers (SPEC TRN-12).** OpenAI's arguments are JSON *text*, parsed here: an integer
//! literal beyond the 64-bit range keeps its digits ([`parse_arguments`] reads every scalar
//! through `serde_json`'s `RawValue`, so the text is still at hand), where a `serde_json::Value`
//! would hold the nearest float and `2**70` would equal `2**70 + 1`. Every other number keeps
//! `serde_json`'s rendering, as before.

use std::collections::BTreeMap;

use hybrid_compaction_model::message::{Block, BlockKind, Message, Part};
use hybrid_compaction_model::value::{RawJson, Value, ValueMap};
use serde_json::value::RawValue;
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

/// The argument map of a JSON text holding an object (OpenAI's `function.arguments`), or an
/// error at `path`; integer literals beyond 64 bits keep their digits (SPEC TRN-12).
pub fn parse_arguments(text: &str, path: &str) -> Result<ValueMap, TranscriptError> {
    let not_object = || malformed(path, "expected a JSON object in a string");
    let map: BTreeMap<String, Box<RawValue>> =
        serde_json::from_str(text).map_err(|_| not_object())?;
    map.into_iter()
        .map(|(k, v)| Ok((k, exact_value(&v).map_err(|_| not_object())?)))
        .collect()
}

/// The arguments of a call given as text (`member` holds it, at `path`): blank → absent; JSON
/// text holding an object → its argument map (TRN-12); any other text (not JSON, or JSON that
/// is not an object: what models produce and providers accept in history) → the one-entry map
/// `{member: text}`, the text as given (SPEC TRN-18).
pub fn text_arguments(text: &str, member: &str, path: &str) -> Option<ValueMap> {
    if text.trim().is_empty() {
        return None;
    }
    Some(
        parse_arguments(text, path)
            .unwrap_or_else(|_| ValueMap::from([(member.to_owned(), Value::String(text.into()))])),
    )
}

/// One JSON value read from its text (SPEC TRN-1, TRN-12).
fn exact_value(raw: &RawValue) -> Result<Value, serde_json::Error> {
    let text = raw.get();
    Ok(match text.as_bytes().first() {
        Some(b'{') => {
            let map: BTreeMap<String, Box<RawValue>> = serde_json::from_str(text)?;
            let mut out = ValueMap::new();
            for (k, v) in map {
                out.insert(k, exact_value(&v)?);
            }
            Value::Map(out)
        }
        Some(b'[') => {
            let items: Vec<Box<RawValue>> = serde_json::from_str(text)?;
            Value::List(
                items
                    .iter()
                    .map(|v| exact_value(v))
                    .collect::<Result<_, _>>()?,
            )
        }
        _ => match serde_json::from_str::<Json>(text)? {
            Json::Number(n) if n.is_f64() && is_integer_literal(text) => RawJson::new(text)
                .map(Value::RawJson)
                .unwrap_or(Value::Null),
            scalar => value(&scalar),
        },
    })
}

/// Whether `text` is a JSON integer literal (`-`? digits, no fraction or exponent).
fn is_integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
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
            .map(|(i, b)| text_block(b, &format!("{path}[{i}]"), also))
            .collect(),
        _ => Err(malformed(
            path,
            "expected a string or an array of content blocks",
        )),
    }
}

/// One block of text content at `path`: a string or a text(-like) block (see [`text_blocks`]).
pub fn text_block(b: &Json, path: &str, also: &[(&str, &str)]) -> Result<String, TranscriptError> {
    if let Json::String(s) = b {
        return Ok(s.clone());
    }
    let ty = string(b, "type", path)?;
    let member = if ty == "text" {
        "text"
    } else if let Some((_, m)) = also.iter().find(|(t, _)| *t == ty) {
        m
    } else {
        return Err(TranscriptError::UnsupportedContent {
            path: path.to_owned(),
            part_type: ty.to_owned(),
        });
    };
    string(b, member, path).map(str::to_owned)
}

/// How a format's content blocks become block parts (SPEC TRN-15): the kind of each block type,
/// and the tokens its provider charges for an image block (the other blocks have none given: the
/// token estimator counts their JSON, EST-6).
#[derive(Clone, Copy)]
pub struct BlockRule {
    /// The kind of a block of this type.
    pub kind: fn(&str) -> BlockKind,
    /// The tokens of a block of this type, if it is an image (its JSON at hand).
    pub image_tokens: fn(&str, &Json) -> Option<u32>,
}

impl BlockRule {
    /// The block `b` of type `ty` as a block part: its JSON written compactly (ENT-8).
    pub fn part(&self, ty: &str, b: &Json) -> Part {
        Part::Block(Block {
            kind: (self.kind)(ty),
            block_type: ty.to_owned(),
            json: b.to_string(),
            tokens: (self.image_tokens)(ty, b),
        })
    }
}

/// Content as parts (SPEC TRN-15): a string is one text part, `null` none; in an array, a string
/// or a text(-like) block (see [`text_block`]) is a text part and any other block, with a
/// `type`, a block part by `rule`, in order.
pub fn content_parts_of(
    content: &Json,
    path: &str,
    also: &[(&str, &str)],
    rule: &BlockRule,
) -> Result<Vec<Part>, TranscriptError> {
    let blocks = match content {
        Json::Null => return Ok(Vec::new()),
        Json::String(s) => return Ok(vec![Part::Text(s.clone())]),
        Json::Array(blocks) => blocks,
        _ => {
            return Err(malformed(
                path,
                "expected a string or an array of content blocks",
            ))
        }
    };
    blocks
        .iter()
        .enumerate()
        .map(|(i, b)| content_part(b, &format!("{path}[{i}]"), also, rule))
        .collect()
}

/// One content block at `path` as a part (see [`content_parts_of`]).
pub fn content_part(
    b: &Json,
    path: &str,
    also: &[(&str, &str)],
    rule: &BlockRule,
) -> Result<Part, TranscriptError> {
    if b.is_string() {
        return text_block(b, path, also).map(Part::Text);
    }
    let ty = string(b, "type", path)?;
    if ty == "text" || also.iter().any(|(t, _)| *t == ty) {
        return text_block(b, path, also).map(Part::Text);
    }
    if ty.is_empty() {
        return Err(malformed(
            format!("{path}.type"),
            "expected a block type, not empty",
        ));
    }
    Ok(rule.part(ty, b))
}

/// A tool result's value (SPEC TRN-10): the content text, or for a result the tool reported as
/// failed (LangChain `status: "error"`, Anthropic `is_error: true`) the map
/// `{"content": text, "status": "error"}`, so that the flag is content the verifier compares.
pub fn tool_result_value(content: Value, error: bool) -> Value {
    if !error {
        return content;
    }
    let mut m = ValueMap::new();
    m.insert("content".into(), content);
    m.insert("status".into(), Value::String("error".into()));
    Value::Map(m)
}

/// The text parts of a message, concatenated (ENT-3).
pub fn text_of(message: &Message) -> String {
    message.text_content()
}

/// A block's JSON as a value (its text is one JSON value, ENT-8); `null` if it is not.
pub fn block_json(block: &Block) -> Json {
    serde_json::from_str(&block.json).unwrap_or(Json::Null)
}

/// Whether the message has any block part.
pub fn has_block(message: &Message) -> bool {
    message.parts.iter().any(|p| matches!(p, Part::Block(_)))
}

/// A message's text and block parts as content parts, in order: `{"type": "text", "text"}` per
/// text part, each block's JSON as given (what a message with blocks renders its content as).
pub fn content_parts(message: &Message) -> Json {
    parts_json(&message.parts)
}

/// Text and block parts as content parts (see [`content_parts`]).
pub fn parts_json(parts: &[Part]) -> Json {
    Json::Array(
        parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(serde_json::json!({"type": "text", "text": t})),
                Part::Block(b) => Some(block_json(b)),
                _ => None,
            })
            .collect(),
    )
}

/// A tool result's content value: its text as a string when it is text only, else the content
/// itself as raw JSON ([`blocks_value`], TRN-15).
pub fn content_value(parts: &[Part]) -> Value {
    if parts.iter().all(|p| matches!(p, Part::Text(_))) {
        let mut text = String::new();
        for p in parts {
            if let Part::Text(t) = p {
                text.push_str(t);
            }
        }
        Value::String(text)
    } else {
        blocks_value(parts)
    }
}

/// A tool result's content that holds blocks (TRN-15): the content itself, as raw JSON (exact:
/// sized by its text, compared by its text).
pub fn blocks_value(parts: &[Part]) -> Value {
    match RawJson::new(parts_json(parts).to_string()) {
        Ok(raw) => Value::RawJson(raw),
        Err(_) => Value::Null,
    }
}

/// Whether the message has any text part.
pub fn has_text(message: &Message) -> bool {
    message.parts.iter().any(|p| matches!(p, Part::Text(_)))
}
