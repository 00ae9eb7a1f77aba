//! Message adaptation and the default content-hash classifier (SPEC CLS-1, CLS-2).
//!
//! [`adapt`] turns one provider call's messages into entries (SPEC CLS-1): the classifier first
//! yields each message's id, then the kind is decided by a fixed precedence in which the
//! classifier's override is only the third voice. [`ContentHashClassifier`] is the default
//! classifier (SPEC CLS-2): ids derived from a canonical rendering of the message content, never
//! an override.

use crate::estimate::{dotnet_f32, dotnet_f64};
use hybrid_compaction_model::artifact::{sha256_hex, ArtifactReference};
pub use hybrid_compaction_model::classifier::AdaptError;
use hybrid_compaction_model::classifier::{Classifier, ClassifierError};
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::message::{Message, Part, ROLE_SYSTEM};
use hybrid_compaction_model::value::Value;

/// Adapts messages to entries, in order (SPEC CLS-1).
pub fn adapt(
    messages: &[Message],
    classifier: &mut dyn Classifier,
) -> Result<Vec<Entry>, AdaptError> {
    let mut entries = Vec::with_capacity(messages.len());
    for (index, message) in messages.iter().enumerate() {
        // The classifier first yields the id; its own failure propagates unchanged (SPEC CLS-3).
        let id = classifier
            .entry_id(messages, index)
            .map_err(|error| AdaptError::Classifier { index, error })?;
        let kind = if message.has_call() || message.has_result() {
            // (1) any call/result part → ToolExchange.
            EntryKind::ToolExchange
        } else if message.role == ROLE_SYSTEM {
            // (2) role system → SystemInstruction; the override is never asked.
            EntryKind::SystemInstruction
        } else if let Some(kind) = classifier.override_kind(messages, index) {
            // (3) the override, if any; three kinds are refused.
            match kind {
                EntryKind::ToolExchange
                | EntryKind::RecoverableContextSegment
                | EntryKind::SystemInstruction => {
                    return Err(AdaptError::ForbiddenOverride { index, kind })
                }
                other => other,
            }
        } else if ArtifactReference::parse(&message.text_content()).is_ok() {
            // (4) text is exactly one canonical reference → ArtifactReference.
            EntryKind::ArtifactReference
        } else {
            // (5) everything else.
            EntryKind::ConversationalMessage
        };
        // SPEC ENT-5 applies to the chosen kind.
        let entry = Entry::new(id, kind, message.clone())
            .map_err(|source| AdaptError::Entry { index, source })?;
        entries.push(entry);
    }
    Ok(entries)
}

/// The default content-hash classifier (SPEC CLS-2): id `"{hex}:{n}"`, never an override.
#[derive(Debug, Clone, Copy, Default)]
pub struct ContentHashClassifier;

impl Classifier for ContentHashClassifier {
    fn entry_id(&mut self, messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        // Out of range (never the case under `adapt`): a blank id, which construction refuses.
        let Some(message) = messages.get(index) else {
            return Ok(String::new());
        };
        let rendering = canonical_rendering(message);
        // n = count of earlier messages with an identical rendering.
        let n = messages[..index]
            .iter()
            .filter(|m| canonical_rendering(m) == rendering)
            .count();
        Ok(format!("{}:{n}", sha256_hex(&rendering)))
    }

    fn override_kind(&mut self, _messages: &[Message], _index: usize) -> Option<EntryKind> {
        None
    }
}

/// The canonical rendering of SPEC CLS-2: role + U+001F, then per part `text:`+text |
/// `call:`+callId+`:`+name | `result:`+callId+`:`+value text | `block:`+type+`:`+JSON, each part
/// followed by U+001E.
/// Author and metadata are ignored; call arguments are excluded.
pub fn canonical_rendering(message: &Message) -> String {
    let mut out = String::new();
    out.push_str(&message.role);
    out.push('\u{1F}');
    for part in &message.parts {
        match part {
            Part::Text(text) => {
                out.push_str("text:");
                out.push_str(text);
            }
            Part::Call(call) => {
                out.push_str("call:");
                out.push_str(&call.call_id);
                out.push(':');
                out.push_str(&call.name);
            }
            Part::Result(result) => {
                out.push_str("result:");
                out.push_str(&result.call_id);
                out.push(':');
                out.push_str(&render_value(&result.value));
            }
            Part::Block(block) => {
                out.push_str("block:");
                out.push_str(&block.block_type);
                out.push(':');
                out.push_str(&block.json);
            }
        }
        out.push('\u{1E}');
    }
    out
}

/// A result value rendered as text, the *value-text* of SPEC CLS-2: a string as-is; null empty;
/// a raw-JSON string decoded; raw-JSON `true` / `false` / `null` as `True` / `False` / empty (as
/// .NET's `JsonElement` renders them); any other raw JSON (number, object, array) its raw text.
/// Every other value (ours, where the reference uses an opaque platform rendering): booleans
/// `True` / `False`, numbers as in SPEC EST-2, a map as `{k1=v1,k2=v2}` (keys in code point
/// order), a list as `[v1,v2]`, without escaping.
pub fn render_value(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::RawJson(raw) => {
            if let Some(decoded) = raw.as_json_string() {
                return decoded;
            }
            match raw.as_str() {
                "true" => "True".to_owned(),
                "false" => "False".to_owned(),
                "null" => String::new(),
                other => other.to_owned(),
            }
        }
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::I16(n) => n.to_string(),
        Value::I32(n) => n.to_string(),
        Value::I64(n) => n.to_string(),
        Value::U8(n) => n.to_string(),
        Value::U32(n) => n.to_string(),
        Value::U64(n) => n.to_string(),
        Value::F32(x) => dotnet_f32(*x),
        Value::F64(x) => dotnet_f64(*x),
        Value::Decimal(d) => d.to_string(),
        Value::Map(map) => {
            // `ValueMap` is a BTreeMap<String, _>: iteration is in byte order, which for UTF-8
            // is code point order.
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}={}", render_value(v)))
                .collect();
            format!("{{{}}}", items.join(","))
        }
        Value::List(items) => {
            let items: Vec<String> = items.iter().map(render_value).collect();
            format!("[{}]", items.join(","))
        }
    }
}
