//! The Vercel AI SDK's `ModelMessage`s (SPEC TRN-20): what `generateText`, `streamText` and
//! `ToolLoopAgent` hold and hand to `prepareStep` as `messages`, written as JSON (binary data as
//! base64 text, URLs as their text).
//!
//! A `ModelMessage` is one message, kept or dropped whole (an assistant message holds its
//! parallel calls, the tool message after it their results), so a kept one is the caller's own
//! object and renders as given (TRN-6).
//!
//! | message, part (`type`) | becomes |
//! |---|---|
//! | `role` `system` (`content` a string) | role `system`, a text part |
//! | `role` `user`, `assistant` | that role; `content` a string: a text part, a list: its parts in order |
//! | `role` `tool` | role `tool` when it holds a result, else `user` |
//! | `text` | a text part |
//! | `tool-call` | a call part: `toolCallId`, `toolName`, arguments the object `input` (text as TRN-18 says, other JSON `{"input": value}`, `null` or absent: absent) |
//! | `tool-call` with `providerExecuted: true`, `tool-result` in assistant content | a server-tool block |
//! | `tool-result` in tool content | a result part answering `toolCallId`, valued by its `output` |
//! | `tool-approval-request`, `tool-approval-response` | a call (its `approvalId`) and the result answering it |
//! | `image`, `file` | a media block (an image sized by the larger of OpenAI's and Anthropic's rules, TRN-19) |
//! | `reasoning`, `reasoning-file` | a reasoning block |
//! | any other part (`custom`, types to come) | a block (`Other`) |
//! | a message member other than `role`, `content`, `providerOptions` | a block (`Other`) after the parts, as TRN-16 |

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::message::{
    Block, BlockKind, FunctionCall, Message, Part, ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_TOOL,
};
use hybrid_compaction_model::value::{RawJson, Value, ValueMap};
use serde_json::{json, Value as Json};

use super::image::{self, ImageRule};
use super::json::{
    arguments_json, block_json, object_arguments, result_string, string, text_arguments, text_of,
    tool_result_value, value,
};
use super::{malformed, Adapted, TranscriptError};

/// The message members a `ModelMessage` defines; every other is carried as a block (TRN-16).
const MEMBERS: &[&str] = &["role", "content", "providerOptions"];

/// The roles, for an error naming them.
const ROLES: &str = "expected \"system\", \"user\", \"assistant\" or \"tool\"";

/// Adapts `messages[i]` alone (a message's adaptation reads only the message).
pub(crate) fn adapt_one(i: usize, m: &Json) -> Result<Adapted, TranscriptError> {
    Adapted::without_id(i, m, message)
}

fn message(m: &Json, path: &str) -> Result<Message, TranscriptError> {
    let Some(obj) = m.as_object() else {
        return Err(malformed(path, "expected a ModelMessage (an object)"));
    };
    let role = string(m, "role", path).map_err(|_| malformed(format!("{path}.role"), ROLES))?;
    let content = m.get("content").unwrap_or(&Json::Null);
    let cp = format!("{path}.content");
    let mut parts = match role {
        "system" => match content {
            Json::String(s) => vec![Part::text(s.clone())],
            _ => {
                return Err(malformed(
                    cp,
                    "expected a string (a system message's content)",
                ))
            }
        },
        "user" | "assistant" | "tool" => content_parts(role, content, &cp)?,
        _ => return Err(malformed(format!("{path}.role"), ROLES)),
    };
    // SPEC TRN-20 (as TRN-16): members the format does not define are carried, in name order.
    let mut others: Vec<(&String, &Json)> = obj
        .iter()
        .filter(|(k, v)| !MEMBERS.contains(&k.as_str()) && !v.is_null())
        .collect();
    others.sort_by(|a, b| a.0.cmp(b.0));
    for (k, v) in others {
        parts.push(Part::Block(Block {
            kind: BlockKind::Other,
            block_type: k.clone(),
            json: json!({ k.as_str(): v }).to_string(),
            tokens: None,
        }));
    }
    let role = match role {
        "system" => ROLE_SYSTEM,
        "assistant" => ROLE_ASSISTANT,
        "tool" if parts.iter().any(|p| matches!(p, Part::Result(_))) => ROLE_TOOL,
        _ => "user",
    };
    Ok(Message::new(role, parts))
}

/// A user, assistant or tool message's content: a string (not for a tool message), or parts.
fn content_parts(role: &str, content: &Json, path: &str) -> Result<Vec<Part>, TranscriptError> {
    let items = match content {
        Json::String(s) if role != "tool" => return Ok(vec![Part::text(s.clone())]),
        Json::Array(items) => items,
        _ if role == "tool" => {
            return Err(malformed(
                path,
                "expected an array of tool-result and tool-approval-response parts",
            ))
        }
        _ => return Err(malformed(path, "expected a string or an array of parts")),
    };
    items
        .iter()
        .enumerate()
        .map(|(k, p)| part(role, p, &format!("{path}[{k}]")))
        .collect()
}

/// One content part of a message of `role`.
fn part(role: &str, p: &Json, path: &str) -> Result<Part, TranscriptError> {
    if !p.is_object() {
        return Err(malformed(path, "expected a part (an object with a type)"));
    }
    let ty = string(p, "type", path)?;
    let server = p.get("providerExecuted") == Some(&Json::Bool(true));
    match (role, ty) {
        (_, "") => Err(malformed(
            format!("{path}.type"),
            "expected a part type, not empty",
        )),
        (_, "text") => Ok(Part::text(string(p, "text", path)?)),
        ("assistant", "tool-call") if !server => call(p, path),
        ("assistant", "tool-call" | "tool-result") => Ok(block(BlockKind::ServerTool, ty, p)),
        ("assistant", "tool-approval-request") => approval_request(p, path),
        ("tool", "tool-result") => tool_result(p, path),
        ("tool", "tool-approval-response") => {
            let id = string(p, "approvalId", path)?;
            Ok(Part::result(id, raw(p, path)?))
        }
        (_, "image" | "file") => Ok(media(ty, p)),
        (_, "reasoning" | "reasoning-file") => Ok(block(BlockKind::Reasoning, ty, p)),
        _ => Ok(block(BlockKind::Other, ty, p)),
    }
}

/// A `tool-call` part the application runs: a call part.
fn call(p: &Json, path: &str) -> Result<Part, TranscriptError> {
    let input_path = format!("{path}.input");
    let arguments = match p.get("input") {
        None | Some(Json::Null) => None,
        Some(Json::String(t)) => text_arguments(t, "arguments", &input_path),
        Some(o @ Json::Object(_)) => Some(object_arguments(o, &input_path)?),
        Some(other) => Some(ValueMap::from([("input".to_owned(), value(other))])),
    };
    Ok(Part::Call(FunctionCall {
        call_id: string(p, "toolCallId", path)?.to_owned(),
        name: string(p, "toolName", path)?.to_owned(),
        arguments,
        informational_only: false,
    }))
}

/// A `tool-approval-request`: a call named by its type, its id the `approvalId`, its arguments
/// the part's other members (the tool call it asks about, a reason).
fn approval_request(p: &Json, path: &str) -> Result<Part, TranscriptError> {
    let id = string(p, "approvalId", path)?;
    string(p, "toolCallId", path)?;
    let mut arguments = object_arguments(p, path)?;
    arguments.remove("type");
    arguments.remove("approvalId");
    Ok(Part::Call(FunctionCall {
        call_id: id.to_owned(),
        name: "tool-approval-request".to_owned(),
        arguments: Some(arguments),
        informational_only: false,
    }))
}

/// A `tool-result` in a tool message: the result part its `output` values (TRN-10 for errors).
fn tool_result(p: &Json, path: &str) -> Result<Part, TranscriptError> {
    let id = string(p, "toolCallId", path)?;
    string(p, "toolName", path)?;
    let op = format!("{path}.output");
    let output = p
        .get("output")
        .filter(|o| o.is_object())
        .ok_or_else(|| malformed(&op, "expected a tool result output (an object with a type)"))?;
    let ty = string(output, "type", &op)?;
    let vp = format!("{op}.value");
    let text = || string(output, "value", &op).map(|s| Value::String(s.to_owned()));
    let json_value = || raw(output.get("value").unwrap_or(&Json::Null), &vp);
    let value = match ty {
        "text" => text()?,
        "json" | "content" => json_value()?,
        "error-text" => tool_result_value(text()?, true),
        "error-json" => tool_result_value(json_value()?, true),
        // `execution-denied` and output types to come: the output itself.
        _ => raw(output, &op)?,
    };
    Ok(Part::result(id, value))
}

/// A JSON value as a result value: `null` null, else raw JSON (exact: sized and compared by its
/// text).
fn raw(v: &Json, path: &str) -> Result<Value, TranscriptError> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    RawJson::new(v.to_string())
        .map(Value::RawJson)
        .map_err(|_| malformed(path, "expected JSON"))
}

fn block(kind: BlockKind, ty: &str, p: &Json) -> Part {
    Part::Block(Block {
        kind,
        block_type: ty.to_owned(),
        json: p.to_string(),
        tokens: None,
    })
}

/// An `image` or `file` part: a media block; an image carries the larger of OpenAI's and
/// Anthropic's charges for it (TRN-19: the transcript does not name the model).
fn media(ty: &str, p: &Json) -> Part {
    let media_type = p.get("mediaType").and_then(Json::as_str).unwrap_or("");
    let is_image = ty == "image" || media_type.starts_with("image");
    let tokens = is_image.then(|| {
        let size = inline_image(ty, p).and_then(image::dimensions);
        ImageRule::Either.tokens_of(size, None)
    });
    Part::Block(Block {
        kind: BlockKind::Media,
        block_type: ty.to_owned(),
        json: p.to_string(),
        tokens,
    })
}

/// The base64 text of an image part's inline data: `image` (or a file's `data`) a base64 string
/// or a `data:` URL, or `{"type": "data", "data": base64}`.
fn inline_image<'a>(ty: &str, p: &'a Json) -> Option<&'a str> {
    let data = p.get(if ty == "image" { "image" } else { "data" })?;
    let text = match data {
        Json::String(s) => s.as_str(),
        Json::Object(_) if data.get("type").and_then(Json::as_str) == Some("data") => {
            data.get("data")?.as_str()?
        }
        _ => return None,
    };
    if text.starts_with("data:") {
        return image::data_url(text);
    }
    // A URL is not inline data; anything else is base64 (the SDK's reading of a string).
    (!text.contains("://")).then_some(text)
}

/// Renders an entry the assembly created (TRN-6): a system message as `{"role": "system",
/// "content": text}`; an assistant message with its text as a string, or as parts (`text`,
/// `tool-call` with `input` the arguments, blocks as given); results as one `tool` message of
/// `tool-result` parts (`output` `{"type": "text", "value": text}`), any text or blocks beside
/// them, and any other message, as a `user` message.
pub(crate) fn render(entry: &Entry, messages: &mut Vec<Json>) {
    let m = entry.message();
    if m.role == ROLE_SYSTEM {
        messages.push(json!({"role": "system", "content": text_of(m)}));
        return;
    }
    let assistant = m.role == ROLE_ASSISTANT;
    let mut results = Vec::new();
    let mut content = Vec::new();
    for p in &m.parts {
        match p {
            Part::Text(t) => content.push(json!({"type": "text", "text": t})),
            Part::Call(c) if assistant => content.push(json!({"type": "tool-call",
                "toolCallId": c.call_id, "toolName": c.name,
                "input": arguments_json(c.arguments.as_ref())})),
            Part::Call(_) => {}
            Part::Result(r) if assistant => {
                content.push(json!({"type": "text", "text": result_string(&r.value)}))
            }
            Part::Result(r) => results.push(json!({"type": "tool-result",
                "toolCallId": r.call_id, "toolName": "",
                "output": {"type": "text", "value": result_string(&r.value)}})),
            Part::Block(b) => content.push(block_json(b)),
        }
    }
    if !results.is_empty() {
        messages.push(json!({"role": "tool", "content": results}));
        if content.is_empty() {
            return;
        }
    }
    let content = if content.iter().all(|c| c["type"] == "text") {
        json!(text_of(m))
    } else {
        Json::Array(content)
    };
    let role = if assistant { "assistant" } else { "user" };
    messages.push(json!({"role": role, "content": content}));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(m: Json) -> Message {
        message(&m, "$.messages[0]").expect("adapts")
    }

    #[test]
    fn an_image_is_sized_by_the_larger_rule_trn_19() {
        let url = one(json!({"role": "user", "content": [
            {"type": "image", "image": "https://x/a.png"}]}));
        let Part::Block(b) = &url.parts[0] else {
            panic!("a block")
        };
        assert_eq!(b.tokens, Some(image::ANTHROPIC_MAX));
        let file = one(json!({"role": "user", "content": [
            {"type": "file", "data": {"type": "url", "url": "https://x/a.pdf"}, "mediaType": "application/pdf"}]}));
        let Part::Block(b) = &file.parts[0] else {
            panic!("a block")
        };
        assert_eq!((b.kind, b.tokens), (BlockKind::Media, None));
    }

    #[test]
    fn inline_data_is_read_from_every_shape() {
        let p = |ty: &str, data: Json| {
            inline_image(
                ty,
                &json!({ if ty == "image" { "image" } else { "data" }: data }),
            )
            .map(str::to_owned)
        };
        assert_eq!(p("image", json!("iVBOR")), Some("iVBOR".into()));
        assert_eq!(
            p("image", json!("data:image/png;base64,iVBOR")),
            Some("iVBOR".into())
        );
        assert_eq!(
            p("file", json!({"type": "data", "data": "iVBOR"})),
            Some("iVBOR".into())
        );
        assert_eq!(p("image", json!("https://x/a.png")), None);
        assert_eq!(p("file", json!({"type": "url", "url": "https://x"})), None);
    }
}
