//! Gemini `Content` lists (SPEC TRN-22): google-genai's `Content` as `model_dump(mode="json",
//! exclude_none=True)` gives it, the format of Google ADK's `LlmRequest.contents`.
//!
//! A `Content` is one message, kept or dropped whole (its parallel calls together, the results
//! answering them together), so a kept one is the caller's own object and renders as given
//! (TRN-6). The system instruction is given as `system`.
//!
//! | input | becomes |
//! |---|---|
//! | `system` (a string, a `Content`, or a list of parts) | a first message, role `system` |
//! | `role` `model` | role `assistant` |
//! | `role` `user` (or absent) | role `tool` if it holds a `function_response`, else `user` |
//! | a part's `text` | a text part; with `thought: true` a reasoning block |
//! | `function_call` {`id`?, `name`, `args`?} | a call part; without an id, `function_call:<name>#<j>` for the `j`-th id-less call of that name in the content |
//! | `function_response` {`id`?, `name`, `response`} | a result part (the `response` as raw JSON; with `parts`, `{"response", "parts"}`); without an id it answers `function_call:<name>#<j>` for the `j`-th id-less response of that name in the content |
//! | `inline_data`, `file_data` | a media block |
//! | `executable_code`, `code_execution_result`, `tool_call`, `tool_response` | a server-tool block |
//! | a `thought_signature` on a text, call or result part | a reasoning block after it |
//! | any other part | a block (`Other`) of type its first member |

use std::collections::BTreeMap;

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::message::{
    Block, BlockKind, FunctionCall, Message, Part, ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_TOOL,
};
use hybrid_compaction_model::value::{RawJson, Value};
use serde_json::{json, Value as Json};

use super::json::{arguments_json, block_json, object_arguments, result_string, string, text_of};
use super::{malformed, Adapted, Source, TranscriptError};

/// The part members that are a block of their own, and its kind.
const BLOCK_MEMBERS: &[(&str, BlockKind)] = &[
    ("inline_data", BlockKind::Media),
    ("file_data", BlockKind::Media),
    ("executable_code", BlockKind::ServerTool),
    ("code_execution_result", BlockKind::ServerTool),
    ("tool_call", BlockKind::ServerTool),
    ("tool_response", BlockKind::ServerTool),
];

/// Adapts the system instruction: a string, a `Content`, or a list of parts.
pub(crate) fn adapt_system(s: &Json) -> Result<Adapted, TranscriptError> {
    let parts = match s {
        Json::String(t) => vec![Part::text(t.clone())],
        Json::Array(parts) => content_parts(parts, "$.system", &mut Ids::default())?,
        Json::Object(_) => match s.get("parts") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(parts)) => {
                content_parts(parts, "$.system.parts", &mut Ids::default())?
            }
            Some(_) => return Err(malformed("$.system.parts", "expected an array of parts")),
        },
        _ => {
            return Err(malformed(
                "$.system",
                "expected a string, a Content or a list of parts",
            ))
        }
    };
    Ok(Adapted {
        message: Message::new(ROLE_SYSTEM, parts),
        given_id: None,
        source: Source::System(s.clone()),
    })
}

/// Adapts `contents[i]` alone (a content's adaptation reads only the content).
pub(crate) fn adapt_one(i: usize, m: &Json) -> Result<Adapted, TranscriptError> {
    Adapted::without_id(i, m, content)
}

fn content(m: &Json, path: &str) -> Result<Message, TranscriptError> {
    if !m.is_object() {
        return Err(malformed(path, "expected a Content (an object)"));
    }
    let model = match m.get("role") {
        None | Some(Json::Null) => false,
        Some(Json::String(r)) if r == "user" => false,
        Some(Json::String(r)) if r == "model" => true,
        Some(_) => {
            return Err(malformed(
                format!("{path}.role"),
                "expected \"user\" or \"model\"",
            ))
        }
    };
    let parts_path = format!("{path}.parts");
    let parts = match m.get("parts") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(parts)) => content_parts(parts, &parts_path, &mut Ids::default())?,
        Some(_) => return Err(malformed(parts_path, "expected an array of parts")),
    };
    let role = if model {
        ROLE_ASSISTANT
    } else if parts.iter().any(|p| matches!(p, Part::Result(_))) {
        ROLE_TOOL
    } else {
        "user"
    };
    Ok(Message::new(role, parts))
}

/// The ids of id-less calls and responses in one content: how many of each name so far.
#[derive(Default)]
struct Ids {
    calls: BTreeMap<String, usize>,
    responses: BTreeMap<String, usize>,
}

/// The id of a call or response: its own (a non-empty string), else `function_call:<name>#<j>`
/// for the `j`-th id-less one of that name in the content.
fn id_of(
    v: &Json,
    name: &str,
    seen: &mut BTreeMap<String, usize>,
    path: &str,
) -> Result<String, TranscriptError> {
    match v.get("id") {
        Some(Json::String(id)) if !id.is_empty() => Ok(id.clone()),
        None | Some(Json::Null) | Some(Json::String(_)) => {
            let j = seen.entry(name.to_owned()).or_insert(0);
            *j += 1;
            Ok(format!("function_call:{name}#{j}"))
        }
        Some(_) => Err(malformed(format!("{path}.id"), "expected a string")),
    }
}

fn content_parts(parts: &[Json], path: &str, ids: &mut Ids) -> Result<Vec<Part>, TranscriptError> {
    let mut out = Vec::with_capacity(parts.len());
    for (k, p) in parts.iter().enumerate() {
        let pp = format!("{path}[{k}]");
        if !p.is_object() {
            return Err(malformed(&pp, "expected a Part (an object)"));
        }
        let own = part(p, &pp, ids)?;
        let signed = !matches!(own, Part::Block(_));
        out.push(own);
        if let (true, Some(sig)) = (signed, p.get("thought_signature").filter(|s| !s.is_null())) {
            out.push(Part::Block(Block {
                kind: BlockKind::Reasoning,
                block_type: "thought_signature".into(),
                json: json!({ "thought_signature": sig }).to_string(),
                tokens: None,
            }));
        }
    }
    Ok(out)
}

/// One part: text, a call, a result, or a block.
fn part(p: &Json, path: &str, ids: &mut Ids) -> Result<Part, TranscriptError> {
    let thought = match p.get("thought") {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(_) => return Err(malformed(format!("{path}.thought"), "expected a boolean")),
    };
    if let Some(text) = p.get("text").filter(|t| !t.is_null()) {
        let text = text
            .as_str()
            .ok_or_else(|| malformed(format!("{path}.text"), "expected a string"))?;
        if !thought {
            return Ok(Part::text(text));
        }
        return Ok(block(BlockKind::Reasoning, "thought", p));
    }
    if let Some(call) = p.get("function_call").filter(|c| !c.is_null()) {
        let cp = format!("{path}.function_call");
        let name = string(call, "name", &cp)?;
        let arguments = match call.get("args") {
            None | Some(Json::Null) => None,
            Some(a) => Some(object_arguments(a, &format!("{cp}.args"))?),
        };
        return Ok(Part::Call(FunctionCall {
            call_id: id_of(call, name, &mut ids.calls, &cp)?,
            name: name.to_owned(),
            arguments,
            informational_only: false,
        }));
    }
    if let Some(r) = p.get("function_response").filter(|r| !r.is_null()) {
        let rp = format!("{path}.function_response");
        let name = string(r, "name", &rp)?;
        let response = r.get("response").cloned().unwrap_or(Json::Null);
        let value = match r.get("parts").filter(|p| !p.is_null()) {
            None => response,
            Some(parts) => json!({"response": response, "parts": parts}),
        };
        let value = match value {
            Json::Null => Value::Null,
            v => Value::RawJson(
                RawJson::new(v.to_string())
                    .map_err(|_| malformed(format!("{rp}.response"), "expected JSON"))?,
            ),
        };
        return Ok(Part::result(
            id_of(r, name, &mut ids.responses, &rp)?,
            value,
        ));
    }
    for (member, kind) in BLOCK_MEMBERS {
        if p.get(*member).is_some_and(|v| !v.is_null()) {
            return Ok(block(*kind, member, p));
        }
    }
    let ty = p
        .as_object()
        .and_then(|o| o.keys().next().cloned())
        .unwrap_or_else(|| "part".to_owned());
    Ok(block(BlockKind::Other, &ty, p))
}

fn block(kind: BlockKind, ty: &str, p: &Json) -> Part {
    Part::Block(Block {
        kind,
        block_type: ty.to_owned(),
        json: p.to_string(),
        tokens: None,
    })
}

/// Renders an entry the assembly created (TRN-6): a system message joins the `system`; an
/// assistant message a `model` content, any other a `user` content, of `text` parts, its calls
/// as `function_call` parts, its results as `function_response` parts (`{"result": text}`)
/// and its blocks as given.
pub(crate) fn render(entry: &Entry, contents: &mut Vec<Json>, system: &mut Vec<Json>) {
    let m = entry.message();
    if m.role == ROLE_SYSTEM {
        system.push(json!(text_of(m)));
        return;
    }
    let parts: Vec<Json> = m
        .parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => json!({"text": t}),
            Part::Call(c) => json!({"function_call": {"id": c.call_id, "name": c.name,
                "args": arguments_json(c.arguments.as_ref())}}),
            Part::Result(r) => json!({"function_response": {"id": r.call_id, "name": "",
                "response": {"result": result_string(&r.value)}}}),
            Part::Block(b) => block_json(b),
        })
        .collect();
    let role = if m.role == ROLE_ASSISTANT {
        "model"
    } else {
        "user"
    };
    contents.push(json!({"role": role, "parts": parts}));
}

/// The `system` of a rendered request: one piece as it is, several as one string of their
/// texts.
pub(crate) fn join_system(pieces: Vec<Json>) -> Json {
    if pieces.len() == 1 {
        return pieces.into_iter().next().unwrap_or(Json::Null);
    }
    let mut text = String::new();
    for piece in &pieces {
        match piece {
            Json::String(s) => text.push_str(s),
            other => {
                let parts = other.get("parts").unwrap_or(other);
                for p in parts.as_array().into_iter().flatten() {
                    text.push_str(p.get("text").and_then(Json::as_str).unwrap_or_default());
                }
            }
        }
    }
    Json::String(text)
}
