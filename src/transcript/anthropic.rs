//! Anthropic Messages (SPEC TRN-3).
//!
//! | input | becomes |
//! |---|---|
//! | top-level `system` (string or text blocks) | a first message, role `system` |
//! | `role` `user` / `assistant`, `content` string or `text` blocks | that role, text parts |
//! | `tool_use` block `{id, name, input}` | a call part (`input` is the argument object) |
//! | a `user` message with `tool_result` blocks `{tool_use_id, content}` | role `tool`; one result part per block, the content text as a string value; `is_error: true`: the value `{content, status}` (TRN-10) |
//! | `role` `system` inside `messages` | a system message (TRN-3) |
//! | `image`, `document`, `thinking`, `redacted_thinking`, `server_tool_use` and `*_tool_result`, `compaction`, any other block | a block of its kind, carried as given; an image costs what Anthropic's pixel rule charges for it (TRN-19) |
//! | a `tool_result` whose content holds blocks (image, document, `tool_reference`) | its value is the content as raw JSON (TRN-15) |

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::message::{
    BlockKind, FunctionCall, Message, Part, ROLE_SYSTEM, ROLE_TOOL,
};
use serde_json::{json, Value as Json};

use super::image::ImageRule;
use super::json::{
    arguments_json, block_json, content_parts_of, content_value, object_arguments, result_string,
    string, text_blocks, text_of, tool_result_value, BlockRule,
};
use super::{malformed, Adapted, Source, TranscriptError};

/// Adapts the top-level `system` (TRN-3).
pub(crate) fn adapt_system(s: &Json) -> Result<Adapted, TranscriptError> {
    let texts = text_blocks(s, "$.system", &[])?;
    Ok(Adapted {
        message: Message::new(ROLE_SYSTEM, texts.into_iter().map(Part::Text).collect()),
        given_id: None,
        source: Source::System(s.clone()),
    })
}

/// Adapts `messages[i]` alone (TRN-3: a message's adaptation reads only the message).
pub(crate) fn adapt_one(i: usize, m: &Json) -> Result<Adapted, TranscriptError> {
    Adapted::without_id(i, m, message)
}

/// The blocks of Anthropic content (TRN-15): images and documents are media (an image costs what
/// Anthropic's pixel rule charges for it, TRN-19); thinking is reasoning; the tools
/// Anthropic runs (`server_tool_use`, `mcp_tool_use` and their `*_tool_result` blocks) are
/// server tools; `compaction` is its own compaction; any other type is carried as `Other`.
pub(crate) const BLOCKS: BlockRule = BlockRule {
    kind: |ty| match ty {
        "image" | "document" | "search_result" => BlockKind::Media,
        "thinking" | "redacted_thinking" => BlockKind::Reasoning,
        "server_tool_use" | "mcp_tool_use" => BlockKind::ServerTool,
        "compaction" => BlockKind::ProviderCompaction,
        t if t.ends_with("_tool_result") => BlockKind::ServerTool,
        _ => BlockKind::Other,
    },
    image_tokens: |ty, b| (ty == "image").then(|| ImageRule::Anthropic.tokens(b, None)),
};

fn message(m: &Json, path: &str) -> Result<Message, TranscriptError> {
    let role = string(m, "role", path)?;
    // SPEC TRN-3: `system` inside `messages` (which the API accepts) is a system message.
    if !["user", "assistant", "system"].contains(&role) {
        return Err(malformed(
            format!("{path}.role"),
            "expected \"user\", \"assistant\" or \"system\"",
        ));
    }
    let content_path = format!("{path}.content");
    let content = m
        .get("content")
        .ok_or_else(|| malformed(&content_path, "missing content"))?;
    let blocks = match content {
        Json::String(s) => return Ok(Message::text(role, s.clone())),
        Json::Array(blocks) => blocks,
        _ => {
            return Err(malformed(
                content_path,
                "expected a string or an array of blocks",
            ))
        }
    };
    let mut parts = Vec::with_capacity(blocks.len());
    let mut results = false;
    for (k, b) in blocks.iter().enumerate() {
        let p = format!("{content_path}[{k}]");
        match string(b, "type", &p)? {
            "text" => parts.push(Part::text(string(b, "text", &p)?)),
            "tool_use" => parts.push(Part::Call(FunctionCall {
                call_id: string(b, "id", &p)?.to_owned(),
                name: string(b, "name", &p)?.to_owned(),
                arguments: Some(object_arguments(
                    b.get("input").unwrap_or(&Json::Null),
                    &format!("{p}.input"),
                )?),
                informational_only: false,
            })),
            "tool_result" => {
                results = true;
                parts.push(tool_result(b, &p)?);
            }
            "" => {
                return Err(malformed(
                    format!("{p}.type"),
                    "expected a block type, not empty",
                ))
            }
            other => parts.push(BLOCKS.part(other, b)),
        }
    }
    let role = if results { ROLE_TOOL } else { role };
    Ok(Message::new(role, parts))
}

/// A `tool_result` block: a result part answering `tool_use_id`, its value the content's text as
/// a string, or the content itself as raw JSON when it holds blocks (an image, a document, a
/// `tool_reference`, TRN-15); `is_error: true` the error value (TRN-10).
fn tool_result(b: &Json, path: &str) -> Result<Part, TranscriptError> {
    let content = content_parts_of(
        b.get("content").unwrap_or(&Json::Null),
        &format!("{path}.content"),
        &[],
        &BLOCKS,
    )?;
    let error = match b.get("is_error") {
        None | Some(Json::Null) => false,
        Some(Json::Bool(e)) => *e,
        Some(_) => return Err(malformed(format!("{path}.is_error"), "expected a boolean")),
    };
    Ok(Part::result(
        string(b, "tool_use_id", path)?,
        tool_result_value(content_value(&content), error),
    ))
}

/// Renders an entry the assembly created (TRN-6).
pub(crate) fn render(entry: &Entry, messages: &mut Vec<Json>, system: &mut Vec<Json>) {
    let m = entry.message();
    if m.role == ROLE_SYSTEM {
        system.push(json!(text_of(m)));
        return;
    }
    let only_text = m.parts.iter().all(|p| matches!(p, Part::Text(_)));
    let role = if m.role == ROLE_TOOL || m.role == "user" {
        "user"
    } else {
        "assistant"
    };
    if only_text {
        messages.push(json!({"role": role, "content": text_of(m)}));
        return;
    }
    let blocks: Vec<Json> = m
        .parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => json!({"type": "text", "text": t}),
            Part::Call(c) => json!({"type": "tool_use", "id": c.call_id, "name": c.name,
                "input": arguments_json(c.arguments.as_ref())}),
            Part::Result(r) => json!({"type": "tool_result", "tool_use_id": r.call_id,
                "content": result_string(&r.value)}),
            Part::Block(b) => block_json(b),
        })
        .collect();
    messages.push(json!({"role": role, "content": blocks}));
}

/// The top-level `system` of a rendered request: one string when there is one string, else the
/// text blocks of every piece in order.
pub(crate) fn join_system(pieces: Vec<Json>) -> Json {
    if let [Json::String(_)] = pieces.as_slice() {
        return pieces.into_iter().next().unwrap_or(Json::Null);
    }
    let mut blocks = Vec::new();
    for piece in pieces {
        match piece {
            Json::String(s) => blocks.push(json!({"type": "text", "text": s})),
            Json::Array(items) => blocks.extend(items),
            other => blocks.push(other),
        }
    }
    Json::Array(blocks)
}
