//! pydantic-ai messages (SPEC TRN-21): the `ModelMessage` list as `ModelMessagesTypeAdapter`
//! dumps it to JSON.
//!
//! A `ModelRequest` or `ModelResponse` is one message, kept or dropped whole (parallel calls in
//! one response, their returns in one request, as Anthropic's), so a kept message is the
//! caller's own object and renders as given (TRN-6).
//!
//! | message, part (`kind`, `part_kind`) | becomes |
//! |---|---|
//! | `request` | role `tool` if it holds a result part, else `system` if it holds a `system-prompt` part, else `user` |
//! | `response` | role `assistant` |
//! | `system-prompt` | a text part (`content`) |
//! | `user-prompt` | `content` a string: a text part; a list: a text part per string, a block per other item (its `kind`: `image-url`, `binary`, ... media; an image costs the larger of OpenAI's and Anthropic's image bounds) |
//! | a request part whose kind ends in `-return` with a string `tool_call_id` (`tool-return`, typed returns) | a result part: `content` a string as it is, else raw JSON; `outcome` `failed` or `retried`: the error value (TRN-10) |
//! | `retry-prompt` (legacy) with a `tool_name` and a `tool_call_id` | a result part, the error value of its `content` |
//! | a response part whose kind ends in `-call` (not `builtin-`) with a string `tool_call_id` | a call part: `tool_name`, arguments the object of `args` (JSON text, blank: absent, other text `{"arguments": text}` as TRN-18 says; or an object) |
//! | `text` | a text part (`content`) |
//! | `thinking` | a reasoning block |
//! | `builtin-*` | a server-tool block |
//! | `compaction` | a provider-compaction block |
//! | `file`, `speech` | a media block |
//! | any other part (`retry-feedback`, instruction and delta parts, types to come) | a block (`Other`) |
//! | `instructions` (a string) | a block (`Other`, type `instructions`) after the parts |

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::message::{
    Block, BlockKind, FunctionCall, Message, Part, ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_TOOL,
};
use hybrid_compaction_model::value::{RawJson, Value};
use serde_json::{json, Value as Json};

use super::image::ImageRule;
use super::json::{
    arguments_json, block_json, object_arguments, result_string, string, text_arguments, text_of,
    tool_result_value, BlockRule,
};
use super::{malformed, Adapted, TranscriptError};

/// The tool-return outcomes that reach the model as an error (pydantic-ai's `ERROR_OUTCOMES`).
const ERROR_OUTCOMES: &[&str] = &["failed", "retried"];

/// The blocks of pydantic-ai parts and user content (TRN-21).
const BLOCKS: BlockRule = BlockRule {
    kind: |ty| match ty {
        "image-url" | "audio-url" | "video-url" | "document-url" | "binary" | "uploaded-file"
        | "file" | "speech" => BlockKind::Media,
        "thinking" => BlockKind::Reasoning,
        "compaction" => BlockKind::ProviderCompaction,
        t if t.starts_with("builtin-") => BlockKind::ServerTool,
        _ => BlockKind::Other,
    },
    // An image costs the larger of OpenAI's and Anthropic's rules (TRN-19): the history may be
    // sent to any provider.
    image_tokens: |ty, b| is_image(ty, b).then(|| ImageRule::Either.tokens(b, None)),
};

/// Whether a user-content item (or a `file` part's content) is an image.
fn is_image(ty: &str, b: &Json) -> bool {
    let media = |j: &Json| {
        j.get("media_type")
            .and_then(Json::as_str)
            .is_some_and(|m| m.starts_with("image/"))
    };
    match ty {
        "image-url" => true,
        "binary" | "uploaded-file" => media(b),
        "file" => b.get("content").is_some_and(media),
        _ => false,
    }
}

/// Adapts `messages[i]` alone (a message's adaptation reads only the message).
pub(crate) fn adapt_one(i: usize, m: &Json) -> Result<Adapted, TranscriptError> {
    Adapted::without_id(i, m, message)
}

fn message(m: &Json, path: &str) -> Result<Message, TranscriptError> {
    if !m.is_object() {
        return Err(malformed(
            path,
            "expected a ModelRequest or ModelResponse (an object)",
        ));
    }
    let request = match string(m, "kind", path)? {
        "request" => true,
        "response" => false,
        _ => {
            return Err(malformed(
                format!("{path}.kind"),
                "expected \"request\" or \"response\"",
            ))
        }
    };
    let parts_path = format!("{path}.parts");
    let given = m
        .get("parts")
        .and_then(Json::as_array)
        .ok_or_else(|| malformed(&parts_path, "expected an array of parts"))?;
    let mut parts = Vec::with_capacity(given.len() + 1);
    let mut system = false;
    for (k, p) in given.iter().enumerate() {
        let pp = format!("{parts_path}[{k}]");
        if !p.is_object() {
            return Err(malformed(&pp, "expected a part (an object)"));
        }
        let kind = string(p, "part_kind", &pp)?;
        if kind.is_empty() {
            return Err(malformed(
                format!("{pp}.part_kind"),
                "expected a part kind, not empty",
            ));
        }
        if request {
            system |= kind == "system-prompt";
            request_part(kind, p, &pp, &mut parts)?;
        } else {
            parts.push(response_part(kind, p, &pp)?);
        }
    }
    match m.get("instructions") {
        None | Some(Json::Null) => {}
        Some(s @ Json::String(_)) => parts.push(Part::Block(Block {
            kind: BlockKind::Other,
            block_type: "instructions".into(),
            json: json!({ "instructions": s }).to_string(),
            tokens: None,
        })),
        Some(_) => {
            return Err(malformed(
                format!("{path}.instructions"),
                "expected a string",
            ))
        }
    }
    let role = if !request {
        ROLE_ASSISTANT
    } else if parts.iter().any(|p| matches!(p, Part::Result(_))) {
        ROLE_TOOL
    } else if system {
        ROLE_SYSTEM
    } else {
        "user"
    };
    Ok(Message::new(role, parts))
}

/// One part of a request, appended to `parts`.
fn request_part(
    kind: &str,
    p: &Json,
    path: &str,
    parts: &mut Vec<Part>,
) -> Result<(), TranscriptError> {
    let call_id = p.get("tool_call_id").and_then(Json::as_str);
    match (kind, call_id) {
        ("system-prompt", _) => parts.push(Part::text(string(p, "content", path)?)),
        ("user-prompt", _) => user_content(p.get("content"), &format!("{path}.content"), parts)?,
        (k, Some(id)) if k.ends_with("-return") && !k.starts_with("builtin-") => {
            let error = match p.get("outcome") {
                None | Some(Json::Null) => false,
                Some(Json::String(o)) => ERROR_OUTCOMES.contains(&o.as_str()),
                Some(_) => return Err(malformed(format!("{path}.outcome"), "expected a string")),
            };
            parts.push(result(id, p.get("content"), error, path)?);
        }
        ("retry-prompt", Some(id)) if p.get("tool_name").is_some_and(Json::is_string) => {
            parts.push(result(id, p.get("content"), true, path)?);
        }
        _ => parts.push(BLOCKS.part(kind, p)),
    }
    Ok(())
}

/// A result part answering `id`: the content a string as it is, else raw JSON; the error value
/// when the tool failed (TRN-10).
fn result(
    id: &str,
    content: Option<&Json>,
    error: bool,
    path: &str,
) -> Result<Part, TranscriptError> {
    let value = match content {
        None | Some(Json::Null) => Value::Null,
        Some(Json::String(s)) => Value::String(s.clone()),
        Some(other) => Value::RawJson(
            RawJson::new(other.to_string())
                .map_err(|_| malformed(format!("{path}.content"), "expected JSON"))?,
        ),
    };
    Ok(Part::result(id, tool_result_value(value, error)))
}

/// A user prompt's content: a string, or a list of strings and content items.
fn user_content(
    content: Option<&Json>,
    path: &str,
    parts: &mut Vec<Part>,
) -> Result<(), TranscriptError> {
    match content {
        Some(Json::String(s)) => parts.push(Part::text(s.clone())),
        Some(Json::Array(items)) => {
            for (k, item) in items.iter().enumerate() {
                match item {
                    Json::String(s) => parts.push(Part::text(s.clone())),
                    Json::Object(_) => {
                        let ty = string(item, "kind", &format!("{path}[{k}]"))?;
                        parts.push(BLOCKS.part(ty, item));
                    }
                    _ => {
                        return Err(malformed(
                            format!("{path}[{k}]"),
                            "expected a string or a content item (an object with a kind)",
                        ))
                    }
                }
            }
        }
        _ => {
            return Err(malformed(
                path,
                "expected a string or a list of strings and content items",
            ))
        }
    }
    Ok(())
}

/// One part of a response.
fn response_part(kind: &str, p: &Json, path: &str) -> Result<Part, TranscriptError> {
    let call_id = p.get("tool_call_id").and_then(Json::as_str);
    match (kind, call_id) {
        ("text", _) => Ok(Part::text(string(p, "content", path)?)),
        (k, Some(id)) if k.ends_with("-call") && !k.starts_with("builtin-") => {
            let args_path = format!("{path}.args");
            let arguments = match p.get("args") {
                None | Some(Json::Null) => None,
                Some(Json::String(t)) if t.trim().is_empty() => None,
                Some(Json::String(t)) => text_arguments(t, "arguments", &args_path),
                Some(a @ Json::Object(_)) => Some(object_arguments(a, &args_path)?),
                Some(_) => return Err(malformed(args_path, "expected JSON text or an object")),
            };
            Ok(Part::Call(FunctionCall {
                call_id: id.to_owned(),
                name: string(p, "tool_name", path)?.to_owned(),
                arguments,
                informational_only: false,
            }))
        }
        _ => Ok(BLOCKS.part(kind, p)),
    }
}

/// Renders an entry the assembly created (TRN-6): a system message as a request of one
/// `system-prompt` part; an assistant message as a response of `text` parts, its calls as
/// `tool-call` parts and its blocks as given; any other as a request of its results as
/// `tool-return` parts and one `user-prompt` part (its text, or its text and blocks), an
/// `instructions` block back as its `instructions`.
pub(crate) fn render(entry: &Entry, messages: &mut Vec<Json>) {
    let m = entry.message();
    if m.role == ROLE_SYSTEM {
        messages.push(json!({"kind": "request", "parts": [
            {"part_kind": "system-prompt", "content": text_of(m)}]}));
        return;
    }
    if m.role == ROLE_ASSISTANT {
        let parts: Vec<Json> = m
            .parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => json!({"part_kind": "text", "content": t}),
                Part::Call(c) => json!({"part_kind": "tool-call", "tool_name": c.name,
                    "args": arguments_json(c.arguments.as_ref()), "tool_call_id": c.call_id}),
                Part::Result(r) => json!({"part_kind": "text", "content": result_string(&r.value)}),
                Part::Block(b) => block_json(b),
            })
            .collect();
        messages.push(json!({"kind": "response", "parts": parts}));
        return;
    }
    let mut parts: Vec<Json> = Vec::new();
    let mut content: Vec<Json> = Vec::new();
    let mut instructions = Json::Null;
    for p in &m.parts {
        match p {
            Part::Block(b) if b.block_type == "instructions" => {
                instructions = block_json(b)
                    .get("instructions")
                    .cloned()
                    .unwrap_or_default();
            }
            Part::Result(r) => parts.push(json!({"part_kind": "tool-return", "tool_name": "",
                "tool_call_id": r.call_id, "content": result_string(&r.value)})),
            Part::Text(t) => content.push(json!(t)),
            Part::Block(b) => content.push(block_json(b)),
            Part::Call(_) => {}
        }
    }
    if !content.is_empty() || parts.is_empty() {
        let content = if content.iter().all(Json::is_string) {
            json!(text_of(m))
        } else {
            Json::Array(content)
        };
        parts.push(json!({"part_kind": "user-prompt", "content": content}));
    }
    let mut request = json!({"kind": "request", "parts": parts});
    if !instructions.is_null() {
        request["instructions"] = instructions;
    }
    messages.push(request);
}
