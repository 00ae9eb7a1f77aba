//! LangChain messages (SPEC TRN-4), as `message.model_dump()` (`{"type", "content", ...}`) or
//! `messages_to_dict()` (`{"type", "data": {...}}`) produces them.
//!
//! | input | becomes |
//! |---|---|
//! | `type` `system` / `human` / `ai` / `tool` | role `system` / `user` / `assistant` / `tool` |
//! | `type` `chat` with `role` | that role (`developer` becomes `system`) |
//! | `content` string / `text` blocks | text parts |
//! | `ai` `tool_calls[]` `{id, name, args}` | call parts (`args` is the argument object) |
//! | `tool` with `tool_call_id` | one result part, the content text as a string value |
//! | `id` (non-blank string) | the entry id (TRN-5) |
//! | `name` | the author |
//! | image / audio / file blocks, `function` messages | `UnsupportedContent` |

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::message::{FunctionCall, Message, Part, ROLE_SYSTEM, ROLE_TOOL};
use hybrid_compaction_model::value::Value;
use serde_json::{json, Value as Json};

use super::json::{
    arguments_json, object_arguments, opt_string, result_string, string, text_blocks, text_of,
};
use super::{malformed, Adapted, Source, TranscriptError};

/// Adapts `messages` (TRN-4).
pub(crate) fn adapt(messages: &[Json]) -> Result<Vec<Adapted>, TranscriptError> {
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let path = format!("$.messages[{i}]");
            let ty = string(m, "type", &path)?;
            let (data, dpath) = match m.get("data") {
                Some(d) if d.is_object() => (d, format!("{path}.data")),
                _ => (m, path.clone()),
            };
            let given_id = opt_string(data, "id", &dpath)?.filter(|id| !id.trim().is_empty());
            Ok(Adapted {
                message: message(ty, data, &path, &dpath)?,
                given_id,
                source: Source::Message(m.clone()),
            })
        })
        .collect()
}

fn message(ty: &str, d: &Json, path: &str, dpath: &str) -> Result<Message, TranscriptError> {
    let role = match ty {
        "system" => ROLE_SYSTEM.to_owned(),
        "human" => "user".to_owned(),
        "ai" | "AIMessageChunk" => "assistant".to_owned(),
        "tool" => ROLE_TOOL.to_owned(),
        "chat" => match string(d, "role", dpath)? {
            "developer" => ROLE_SYSTEM.to_owned(),
            r => r.to_owned(),
        },
        "function" => {
            return Err(TranscriptError::UnsupportedContent {
                path: path.to_owned(),
                part_type: "function".into(),
            })
        }
        other => {
            return Err(malformed(
                format!("{path}.type"),
                format!("unknown message type {other:?}"),
            ))
        }
    };
    let texts = text_blocks(
        d.get("content").unwrap_or(&Json::Null),
        &format!("{dpath}.content"),
        &[],
    )?;
    let author = opt_string(d, "name", dpath)?;
    if role == ROLE_TOOL {
        let call_id = string(d, "tool_call_id", dpath)?;
        let parts = vec![Part::result(call_id, Value::String(texts.concat()))];
        return Ok(Message {
            role,
            author,
            parts,
        });
    }
    let mut parts: Vec<Part> = texts.into_iter().map(Part::Text).collect();
    if let Some(calls) = d.get("tool_calls").filter(|c| !c.is_null()) {
        let calls = calls
            .as_array()
            .ok_or_else(|| malformed(format!("{dpath}.tool_calls"), "expected an array"))?;
        for (k, c) in calls.iter().enumerate() {
            let p = format!("{dpath}.tool_calls[{k}]");
            parts.push(Part::Call(FunctionCall {
                call_id: string(c, "id", &p)?.to_owned(),
                name: string(c, "name", &p)?.to_owned(),
                arguments: Some(object_arguments(
                    c.get("args").unwrap_or(&Json::Null),
                    &format!("{p}.args"),
                )?),
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

/// Renders an entry the assembly created (TRN-6), in the `model_dump()` shape, with its id.
pub(crate) fn render(entry: &Entry, out: &mut Vec<Json>) {
    let m = entry.message();
    let ty = match m.role.as_str() {
        "system" => "system",
        "user" => "human",
        "assistant" => "ai",
        "tool" => "tool",
        _ => "chat",
    };
    let mut msg = serde_json::Map::new();
    msg.insert("type".into(), json!(ty));
    if ty == "chat" {
        msg.insert("role".into(), json!(m.role));
    }
    let result = m.parts.iter().find_map(|p| match p {
        Part::Result(r) => Some(r),
        _ => None,
    });
    match result {
        Some(r) => {
            msg.insert("content".into(), json!(result_string(&r.value)));
            msg.insert("tool_call_id".into(), json!(r.call_id));
        }
        None => {
            msg.insert("content".into(), json!(text_of(m)));
        }
    }
    let calls: Vec<Json> = m
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Call(c) => Some(json!({"id": c.call_id, "name": c.name,
                "args": arguments_json(c.arguments.as_ref()), "type": "tool_call"})),
            _ => None,
        })
        .collect();
    if !calls.is_empty() {
        msg.insert("tool_calls".into(), Json::Array(calls));
    }
    if let Some(a) = &m.author {
        msg.insert("name".into(), json!(a));
    }
    msg.insert("id".into(), json!(entry.id().as_str()));
    out.push(Json::Object(msg));
}
