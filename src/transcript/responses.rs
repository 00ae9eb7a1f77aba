//! OpenAI Responses input items (SPEC TRN-17): the format of the OpenAI Agents SDK and Codex.
//!
//! A Responses request is a list of *items* and the top-level `instructions`; each item is one
//! message here, so each is kept or dropped whole, and a kept one renders as given (TRN-6).
//!
//! | item | becomes |
//! |---|---|
//! | `instructions` (top-level) | a first message, role `system` |
//! | a message (`type` `message`, or no `type` and a `role`): `user`, `assistant`, `system`, `developer` | that role (`developer` is `system`); `content` a string or `input_text` / `output_text` / `refusal` parts as text, any other part a block (`input_image`, `input_file`: media) |
//! | an item with a `call_id` whose type ends in `_call` (`function_call`, `custom_tool_call`, `computer_call`, `local_shell_call`, a client-run `tool_search_call`, ...) | role `assistant`, one call part: call id `call_id`, name `name` (else the type), arguments the object `arguments` holds (JSON text or an object; other text `{"arguments": text}`, TRN-18), else `{"input": input}` or `{"action": action}` |
//! | an item with a `call_id` whose type ends in `_output` (not `execution: server`) | role `tool`, one result part answering `call_id`: `output` a string as it is, else as raw JSON |
//! | `mcp_approval_request` and `mcp_approval_response` | a call (its `id`) and the result answering it (`approval_request_id`): paired as calls are |
//! | `reasoning` | role `assistant`, a reasoning block |
//! | `compaction` | role `assistant`, a provider-compaction block |
//! | any other item (a provider-run tool: `web_search_call`, `code_interpreter_call`, `mcp_call`, `image_generation_call`; `item_reference`; types to come) | role `assistant`, a block (`ServerTool` for the provider's tools, else `Other`) |

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::message::{
    Block, BlockKind, FunctionCall, Message, Part, ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_TOOL,
};
use hybrid_compaction_model::value::{RawJson, Value};
use serde_json::{json, Value as Json};

use super::json::{
    content_parts, content_parts_of, has_block, object_arguments, string, text_arguments,
    text_blocks, text_of, BlockRule,
};
use super::{malformed, openai, Adapted, Source, TranscriptError};

/// The blocks of Responses content: images and files are media, an image costing OpenAI's tile
/// rule at most (TRN-15); any other part is carried as `Other`.
const BLOCKS: BlockRule = openai::BLOCKS;

/// The provider-run tools among the item types (their items are server-tool blocks).
const SERVER_TOOLS: &[&str] = &[
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "mcp_list_tools",
    "tool_search_call",
    "tool_search_output",
];

/// Adapts the top-level `instructions` (a string, or text parts).
pub(crate) fn adapt_instructions(s: &Json) -> Result<Adapted, TranscriptError> {
    let texts = text_blocks(s, "$.system", &[("input_text", "text")])?;
    Ok(Adapted {
        message: Message::new(ROLE_SYSTEM, texts.into_iter().map(Part::Text).collect()),
        given_id: None,
        source: Source::System(s.clone()),
    })
}

/// Adapts `items[i]` alone (an item's adaptation reads only the item).
pub(crate) fn adapt_one(i: usize, m: &Json) -> Result<Adapted, TranscriptError> {
    Adapted::without_id(i, m, item)
}

fn item(m: &Json, path: &str) -> Result<Message, TranscriptError> {
    if !m.is_object() {
        return Err(malformed(path, "expected an input item (an object)"));
    }
    let ty = match m.get("type") {
        None | Some(Json::Null) => "message",
        Some(Json::String(t)) => t.as_str(),
        Some(_) => return Err(malformed(format!("{path}.type"), "expected a string")),
    };
    let call_id = m.get("call_id").and_then(Json::as_str);
    match (ty, call_id) {
        ("message", _) => message(m, path),
        ("mcp_approval_request", _) => call_message(string(m, "id", path)?, ty, m, path),
        ("mcp_approval_response", _) => result_message(
            string(m, "approval_request_id", path)?,
            m.get("approve"),
            path,
        ),
        (t, Some(id)) if t.ends_with("_call") && !is_server_run(m) => call_message(id, ty, m, path),
        (t, Some(id)) if t.ends_with("_output") && !is_server_run(m) => {
            result_message(id, m.get("output"), path)
        }
        ("reasoning", _) => Ok(block_message(BlockKind::Reasoning, ty, m)),
        ("compaction", _) => Ok(block_message(BlockKind::ProviderCompaction, ty, m)),
        (t, _) if SERVER_TOOLS.contains(&t) || is_server_run(m) => {
            Ok(block_message(BlockKind::ServerTool, ty, m))
        }
        ("", _) => Err(malformed(
            format!("{path}.type"),
            "expected an item type, not empty",
        )),
        (t, _) => Ok(block_message(BlockKind::Other, t, m)),
    }
}

/// Whether the provider ran the call itself (`execution: "server"`): then the call and its
/// output are server-tool blocks, not an exchange the client answers.
fn is_server_run(m: &Json) -> bool {
    m.get("execution").and_then(Json::as_str) == Some("server")
}

/// A message item: its role and content (text parts and blocks).
fn message(m: &Json, path: &str) -> Result<Message, TranscriptError> {
    let role = match string(m, "role", path)? {
        "developer" | "system" => ROLE_SYSTEM,
        r @ ("user" | "assistant") => r,
        _ => {
            return Err(malformed(
                format!("{path}.role"),
                "expected \"user\", \"assistant\", \"system\" or \"developer\"",
            ))
        }
    };
    let parts = content_parts_of(
        m.get("content").unwrap_or(&Json::Null),
        &format!("{path}.content"),
        &[
            ("input_text", "text"),
            ("output_text", "text"),
            ("refusal", "refusal"),
        ],
        &BLOCKS,
    )?;
    Ok(Message::new(role, parts))
}

/// A call item: role `assistant`, one call part answering to `call_id`.
fn call_message(call_id: &str, ty: &str, m: &Json, path: &str) -> Result<Message, TranscriptError> {
    let name = match m.get("name").and_then(Json::as_str) {
        Some(n) => n,
        None => m.get("server_label").and_then(Json::as_str).unwrap_or(ty),
    };
    let arguments = match (m.get("arguments"), m.get("input"), m.get("action")) {
        (Some(Json::String(text)), _, _) => {
            text_arguments(text, "arguments", &format!("{path}.arguments"))
        }
        (Some(a @ Json::Object(_)), _, _) => {
            Some(object_arguments(a, &format!("{path}.arguments"))?)
        }
        (Some(Json::Null) | None, Some(input), _) => Some(object_arguments(
            &json!({ "input": input }),
            &format!("{path}.input"),
        )?),
        (Some(Json::Null) | None, None, Some(action)) => Some(object_arguments(
            &json!({ "action": action }),
            &format!("{path}.action"),
        )?),
        (Some(Json::Null) | None, None, None) => None,
        (Some(_), _, _) => {
            return Err(malformed(
                format!("{path}.arguments"),
                "expected JSON text or an object",
            ))
        }
    };
    Ok(Message::new(
        ROLE_ASSISTANT,
        vec![Part::Call(FunctionCall {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            arguments,
            informational_only: false,
        })],
    ))
}

/// An output item: role `tool`, one result part answering `call_id`; `output` a string as it
/// is, else (content parts, an object, a boolean) as raw JSON.
fn result_message(
    call_id: &str,
    output: Option<&Json>,
    path: &str,
) -> Result<Message, TranscriptError> {
    let value = match output {
        None | Some(Json::Null) => Value::Null,
        Some(Json::String(s)) => Value::String(s.clone()),
        Some(other) => Value::RawJson(
            RawJson::new(other.to_string())
                .map_err(|_| malformed(format!("{path}.output"), "expected JSON"))?,
        ),
    };
    Ok(Message::new(ROLE_TOOL, vec![Part::result(call_id, value)]))
}

/// An item carried as one block of `kind` (role `assistant`: the model's own, or its tools').
fn block_message(kind: BlockKind, ty: &str, m: &Json) -> Message {
    Message::new(
        ROLE_ASSISTANT,
        vec![Part::Block(Block {
            kind,
            block_type: ty.to_owned(),
            json: m.to_string(),
            tokens: None,
        })],
    )
}

/// Renders an entry the assembly created (TRN-6): a message item without `type` (`{"role",
/// "content"}`: the text, or the text and block parts when it holds blocks); a system message
/// joins the top-level `instructions`.
pub(crate) fn render(entry: &Entry, items: &mut Vec<Json>, instructions: &mut Vec<Json>) {
    let m = entry.message();
    if m.role == ROLE_SYSTEM {
        instructions.push(json!(text_of(m)));
        return;
    }
    let content = if has_block(m) {
        content_parts(m)
    } else {
        json!(text_of(m))
    };
    let role = if m.role == ROLE_ASSISTANT {
        "assistant"
    } else {
        "user"
    };
    items.push(json!({"role": role, "content": content}));
}
