//! OpenAI Chat Completions messages (SPEC TRN-2).
//!
//! | message | becomes |
//! |---|---|
//! | `role` `system` / `developer` | role `system` (a `SystemInstruction`, CLS-1) |
//! | `role` `user` / `assistant` | that role |
//! | `content` string / text parts (`text`, `refusal`) | text parts, in order |
//! | `refusal` (a string, what a model returns instead of content) | a text part after the content's (TRN-11) |
//! | `content` `image_url` / `input_audio` / `file` / other parts, a non-null `audio` | `UnsupportedContent` (TRN-11 for `audio`) |
//! | `name` | the author |
//! | `tool_calls[]` `{id, function: {name, arguments}}` | call parts; `arguments` is a JSON string holding an object (`""` = absent), integers beyond 64 bits exact (TRN-12) |
//! | `role` `tool` with `tool_call_id` | role `tool`, one result part: the content text as a string value |
//! | `function_call`, `role` `function` (deprecated) | `UnsupportedContent` |

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::message::{
    FunctionCall, Message, Part, ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_TOOL,
};
use hybrid_compaction_model::value::Value;
use serde_json::{json, Value as Json};

use super::json::{
    arguments_text, content_parts, has_block, has_text, opt_string, parse_arguments, result_string,
    string, text_blocks, text_of,
};
use super::{malformed, Adapted, TranscriptError};

/// Adapts `messages` (TRN-2).
pub(crate) fn adapt(messages: &[Json]) -> Result<Vec<Adapted>, TranscriptError> {
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| adapt_one(i, m))
        .collect()
}

/// Adapts `messages[i]` alone (TRN-2: a message's adaptation reads only the message).
pub(crate) fn adapt_one(i: usize, m: &Json) -> Result<Adapted, TranscriptError> {
    Adapted::without_id(i, m, message)
}

fn message(m: &Json, path: &str) -> Result<Message, TranscriptError> {
    if !m.is_object() {
        return Err(malformed(path, "expected a message object"));
    }
    let role = string(m, "role", path)?;
    if role == "function" || m.get("function_call").is_some_and(|f| !f.is_null()) {
        return Err(TranscriptError::UnsupportedContent {
            path: path.to_owned(),
            part_type: "function_call".into(),
        });
    }
    if m.get("audio").is_some_and(|a| !a.is_null()) {
        // SPEC TRN-11: a spoken reply (`{"id"}` of audio the provider keeps) has no text here.
        return Err(TranscriptError::UnsupportedContent {
            path: format!("{path}.audio"),
            part_type: "audio".into(),
        });
    }
    let content_path = format!("{path}.content");
    let mut texts = text_blocks(
        m.get("content").unwrap_or(&Json::Null),
        &content_path,
        &[("refusal", "refusal")],
    )?;
    // SPEC TRN-11: the message-level refusal is text the provider sent and will be sent back.
    if let Some(refusal) = opt_string(m, "refusal", path)? {
        texts.push(refusal);
    }
    let author = opt_string(m, "name", path)?;
    let mut parts = Vec::new();
    let role = match role {
        "developer" | "system" => ROLE_SYSTEM.to_owned(),
        "tool" => {
            let call_id = string(m, "tool_call_id", path)?;
            parts.push(Part::result(call_id, Value::String(texts.concat())));
            return Ok(Message {
                role: ROLE_TOOL.into(),
                author,
                parts,
            });
        }
        other => other.to_owned(),
    };
    parts.extend(texts.into_iter().map(Part::Text));
    if let Some(calls) = m.get("tool_calls").filter(|c| !c.is_null()) {
        let calls = calls
            .as_array()
            .ok_or_else(|| malformed(format!("{path}.tool_calls"), "expected an array"))?;
        for (k, c) in calls.iter().enumerate() {
            let p = format!("{path}.tool_calls[{k}]");
            if let Some(ty) = c
                .get("type")
                .and_then(Json::as_str)
                .filter(|t| *t != "function")
            {
                return Err(TranscriptError::UnsupportedContent {
                    path: p,
                    part_type: ty.into(),
                });
            }
            let f = c
                .get("function")
                .ok_or_else(|| malformed(format!("{p}.function"), "expected an object"))?;
            let fp = format!("{p}.function");
            let args = string(f, "arguments", &fp)?;
            let arguments = if args.trim().is_empty() {
                None
            } else {
                Some(parse_arguments(args, &format!("{fp}.arguments"))?)
            };
            parts.push(Part::Call(FunctionCall {
                call_id: string(c, "id", &p)?.to_owned(),
                name: string(f, "name", &fp)?.to_owned(),
                arguments,
                informational_only: false,
            }));
        }
    }
    Ok(Message {
        role,
        author,
        parts,
    })
}

/// Renders an entry the assembly created (TRN-6): one message, or one `tool` message per result.
pub(crate) fn render(entry: &Entry, out: &mut Vec<Json>) {
    let m = entry.message();
    if m.has_result() {
        for part in &m.parts {
            if let Part::Result(r) = part {
                out.push(json!({"role": "tool", "tool_call_id": r.call_id, "content": result_string(&r.value)}));
            }
        }
        return;
    }
    let mut msg = serde_json::Map::new();
    msg.insert("role".into(), json!(m.role));
    let calls: Vec<Json> = m
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Call(c) => Some(json!({"id": c.call_id, "type": "function",
                "function": {"name": c.name, "arguments": arguments_text(c.arguments.as_ref())}})),
            _ => None,
        })
        .collect();
    let content = if has_block(m) {
        content_parts(m)
    } else if has_text(m) || calls.is_empty() {
        json!(text_of(m))
    } else {
        Json::Null
    };
    msg.insert("content".into(), content);
    if let Some(a) = &m.author {
        msg.insert("name".into(), json!(a));
    }
    if !calls.is_empty() && m.role == ROLE_ASSISTANT {
        msg.insert("tool_calls".into(), Json::Array(calls));
    }
    out.push(Json::Object(msg));
}
