//! OpenAI Chat Completions messages (SPEC TRN-2).
//!
//! | message | becomes |
//! |---|---|
//! | `role` `system` / `developer` | role `system` (a `SystemInstruction`, CLS-1) |
//! | `role` `user` / `assistant` | that role |
//! | `content` string / text parts (`text`, `refusal`) | text parts, in order |
//! | `refusal` (a string, what a model returns instead of content) | a text part after the content's (TRN-11) |
//! | `content` `image_url` / `input_audio` / `file` parts | media blocks; an image costs what OpenAI's tile rule charges for it (TRN-19) |
//! | any other `content` part | a block of kind `Other`, carried as given (TRN-15) |
//! | a non-null `audio` | `UnsupportedContent` (TRN-11) |
//! | `name` | the author |
//! | `tool_calls[]` `{id, function: {name, arguments}}` | call parts; `arguments` a JSON string holding an object (`""` = absent), integers beyond 64 bits exact (TRN-12); any other text `{"arguments": text}` (TRN-18) |
//! | `tool_calls[]` `{id, type: "custom", custom: {name, input}}` | a call part, arguments `{"input": input}` (TRN-18) |
//! | `role` `tool` with `tool_call_id` | role `tool`, one result part: the content text as a string value (the content as raw JSON when it holds blocks) |
//! | `function_call` and `role` `function` (deprecated) | a call part and the result answering it, paired by the function's name and position (TRN-16) |
//! | `reasoning_content`, any other member this format does not define (non-null) | a block (`Reasoning`, else `Other`) `{"member": value}`, so it is sized and kept (TRN-16) |

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::message::{
    Block, BlockKind, FunctionCall, Message, Part, ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_TOOL,
};
use hybrid_compaction_model::value::{Value, ValueMap};
use serde_json::{json, Value as Json};

use super::image::ImageRule;
use super::json::{
    arguments_text, content_parts, content_parts_of, content_value, has_block, has_text,
    opt_string, result_string, string, text_arguments, text_of, BlockRule,
};
use super::{malformed, Adapted, TranscriptError};

/// Adapts `messages[i]` alone (TRN-2: a message's adaptation reads only the message).
pub(crate) fn adapt_one(i: usize, m: &Json) -> Result<Adapted, TranscriptError> {
    Adapted::without_id(i, m, message)
}

/// The members OpenAI chat defines for a message (TRN-2, TRN-11); any other non-null member is
/// carried as a block (TRN-16).
const MEMBERS: &[&str] = &[
    "role",
    "content",
    "name",
    "tool_calls",
    "tool_call_id",
    "refusal",
    "audio",
    "function_call",
];

/// The blocks of OpenAI chat content (TRN-15): images, audio and files are media; an image
/// costs what OpenAI's tile rule charges for it (TRN-19).
pub(crate) const BLOCKS: BlockRule = BlockRule {
    kind: |ty| match ty {
        "image_url" | "input_audio" | "file" | "input_image" | "input_file" | "document_url" => {
            BlockKind::Media
        }
        _ => BlockKind::Other,
    },
    image_tokens: |ty, b| {
        let detail = |member: &str| {
            b.get(member)
                .and_then(|i| i.get("detail"))
                .or_else(|| b.get("detail"))
                .and_then(Json::as_str)
        };
        match ty {
            "image_url" | "input_image" => Some(ImageRule::OpenAi.tokens(b, detail(ty))),
            _ => None,
        }
    },
};

fn message(m: &Json, path: &str) -> Result<Message, TranscriptError> {
    if !m.is_object() {
        return Err(malformed(path, "expected a message object"));
    }
    let role = string(m, "role", path)?;
    if m.get("audio").is_some_and(|a| !a.is_null()) {
        // SPEC TRN-11: a spoken reply (`{"id"}` of audio the provider keeps) has no text here.
        return Err(TranscriptError::UnsupportedContent {
            path: format!("{path}.audio"),
            part_type: "audio".into(),
        });
    }
    let content_path = format!("{path}.content");
    let mut content = content_parts_of(
        m.get("content").unwrap_or(&Json::Null),
        &content_path,
        &[("refusal", "refusal")],
        &BLOCKS,
    )?;
    // SPEC TRN-11: the message-level refusal is text the provider sent and will be sent back.
    if let Some(refusal) = opt_string(m, "refusal", path)? {
        content.push(Part::Text(refusal));
    }
    let author = opt_string(m, "name", path)?;
    let members = other_members(m);
    let role = match role {
        "developer" | "system" => ROLE_SYSTEM.to_owned(),
        "tool" => {
            let call_id = string(m, "tool_call_id", path)?;
            return Ok(result_message(call_id, content, author, members));
        }
        // SPEC TRN-16: the deprecated function message answers the `function_call` of its name.
        "function" => {
            let name = string(m, "name", path)?;
            return Ok(result_message(
                &legacy_call_id(name),
                content,
                None,
                members,
            ));
        }
        other => other.to_owned(),
    };
    let mut parts = content;
    calls(m, path, &mut parts)?;
    parts.extend(members);
    Ok(Message {
        role,
        author,
        parts,
    })
}

/// A tool message: one result part answering `call_id` (its content's text as a string, or the
/// content itself as raw JSON when it holds blocks, TRN-15), then the members as blocks.
fn result_message(
    call_id: &str,
    content: Vec<Part>,
    author: Option<String>,
    members: Vec<Part>,
) -> Message {
    let mut parts = vec![Part::result(call_id, content_value(&content))];
    parts.extend(members);
    Message {
        role: ROLE_TOOL.into(),
        author,
        parts,
    }
}

/// The call id of a deprecated `function_call` of function `name` and of the `function` message
/// that answers it (TRN-16): calls of one name are paired by position as reused ids are (TRN-14).
fn legacy_call_id(name: &str) -> String {
    format!("function_call:{name}")
}

/// The members of `m` OpenAI chat does not define, each non-null one a block (TRN-16):
/// `reasoning_content` (what OpenAI-compatible servers and LiteLLM return) is reasoning, any
/// other (`provider_specific_fields`, ...) a block of kind `Other`; the block's JSON is
/// `{"member": value}`, its type the member's name.
fn other_members(m: &Json) -> Vec<Part> {
    let Some(obj) = m.as_object() else {
        return Vec::new();
    };
    obj.iter()
        .filter(|(k, v)| !MEMBERS.contains(&k.as_str()) && !v.is_null())
        .map(|(k, v)| {
            let kind = if k == "reasoning_content" {
                BlockKind::Reasoning
            } else {
                BlockKind::Other
            };
            let mut one = serde_json::Map::new();
            one.insert(k.clone(), v.clone());
            Part::Block(Block {
                kind,
                block_type: k.clone(),
                json: Json::Object(one).to_string(),
                tokens: None,
            })
        })
        .collect()
}

/// The call parts of an assistant message: its `tool_calls`, and a deprecated `function_call`
/// (TRN-16).
fn calls(m: &Json, path: &str, parts: &mut Vec<Part>) -> Result<(), TranscriptError> {
    if let Some(f) = m.get("function_call").filter(|f| !f.is_null()) {
        let fp = format!("{path}.function_call");
        let name = string(f, "name", &fp)?;
        parts.push(call_part(legacy_call_id(name), name, f, &fp)?);
    }
    let Some(calls) = m.get("tool_calls").filter(|c| !c.is_null()) else {
        return Ok(());
    };
    let calls = calls
        .as_array()
        .ok_or_else(|| malformed(format!("{path}.tool_calls"), "expected an array"))?;
    for (k, c) in calls.iter().enumerate() {
        let p = format!("{path}.tool_calls[{k}]");
        match c.get("type").and_then(Json::as_str) {
            None | Some("function") => {}
            Some("custom") => {
                parts.push(custom_call(c, &p)?);
                continue;
            }
            Some(ty) => {
                return Err(TranscriptError::UnsupportedContent {
                    path: p,
                    part_type: ty.into(),
                })
            }
        }
        let f = c
            .get("function")
            .ok_or_else(|| malformed(format!("{p}.function"), "expected an object"))?;
        let fp = format!("{p}.function");
        let call_id = string(c, "id", &p)?.to_owned();
        parts.push(call_part(call_id, string(f, "name", &fp)?, f, &fp)?);
    }
    Ok(())
}

/// A custom tool's call (`type` `custom`): its free-form `custom.input` text is the arguments
/// `{"input": text}` (TRN-18).
fn custom_call(c: &Json, path: &str) -> Result<Part, TranscriptError> {
    let cp = format!("{path}.custom");
    let custom = c
        .get("custom")
        .ok_or_else(|| malformed(&cp, "expected an object"))?;
    let input = string(custom, "input", &cp)?;
    Ok(Part::Call(FunctionCall {
        call_id: string(c, "id", path)?.to_owned(),
        name: string(custom, "name", &cp)?.to_owned(),
        arguments: Some(ValueMap::from([(
            "input".to_owned(),
            Value::String(input.into()),
        )])),
        informational_only: false,
    }))
}

/// One call part: `call_id`, the function `name` and the arguments of `f` (`f.arguments`, JSON
/// text: an object's map, other text as `{"arguments": text}`, blank absent, TRN-18) at `path`.
fn call_part(call_id: String, name: &str, f: &Json, path: &str) -> Result<Part, TranscriptError> {
    let args = string(f, "arguments", path)?;
    let arguments = text_arguments(args, "arguments", &format!("{path}.arguments"));
    Ok(Part::Call(FunctionCall {
        call_id,
        name: name.to_owned(),
        arguments,
        informational_only: false,
    }))
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
