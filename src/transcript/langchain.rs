//! LangChain messages (SPEC TRN-4, TRN-7 .. TRN-10): every shape LangChain's own
//! `convert_to_messages` accepts, as JSON.
//!
//! | input | becomes |
//! |---|---|
//! | `type` `system` / `human` / `ai` / `tool` (and the chunk types `SystemMessageChunk`, `HumanMessageChunk`, `AIMessageChunk`, `ToolMessageChunk`) | role `system` / `user` / `assistant` / `tool` (TRN-4, TRN-7) |
//! | `type` `chat` / `ChatMessageChunk` with `role` | that role (`developer` becomes `system`) |
//! | `{"type", ...fields}`, `{"type", "data": {...}}` (`model_dump()`, `messages_to_dict()`) | the fields (TRN-4) |
//! | a string; a `[role, content]` pair; `{"role", "content", ...}`; a constructor envelope `{"lc": 1, "type": "constructor", "id": [..., class], "kwargs"}` | `human` with that content; by role name; by role name; by class name (TRN-7) |
//! | `content` string / `text` blocks | text parts |
//! | `ai` `tool_calls[]` `{id, name, args}` | call parts (`args` is the argument object) |
//! | `ai` `tool_use` / `tool_call` content blocks (ChatAnthropic, standard blocks) | the call of `tool_calls` with that id, else a call part after them (TRN-8) |
//! | `ai` `invalid_tool_calls[]` `{id, name, args}` | call parts after those of `tool_calls`, `args` text as TRN-18 says; one without a string `id` and `name`: `UnsupportedContent` (TRN-9) |
//! | `tool` with `tool_call_id` | one result part, the content text as a string value; `status` `error`: the value `{content, status}` (TRN-10) |
//! | `id` (non-blank string) | the entry id (TRN-5) |
//! | `name` | the author |
//! | image / audio / file / reasoning / server-tool / other blocks (standard or a provider's) | blocks of their kind, carried as given (TRN-15) |
//! | `function` and `remove` messages | `UnsupportedContent` |
//!
//! The shapes of TRN-7 are first *normalized* to a type name and a field object (`normalize`);
//! the mapping onto parts then reads fields only, whatever shape they came in.

use std::borrow::Cow;

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::message::{
    BlockKind, FunctionCall, Message, Part, ROLE_SYSTEM, ROLE_TOOL,
};
use hybrid_compaction_model::value::{Value, ValueMap};
use serde_json::{json, Map, Value as Json};

use super::image::ImageRule;
use super::json::{
    arguments_json, content_part, content_parts, content_parts_of, content_value, has_block,
    object_arguments, opt_string, result_string, string, text_arguments, text_of,
    tool_result_value, BlockRule,
};
use super::{malformed, Adapted, Source, TranscriptError};

/// Adapts `messages[i]` alone (TRN-4: a message's adaptation reads only the message).
pub(crate) fn adapt_one(i: usize, m: &Json) -> Result<Adapted, TranscriptError> {
    let path = format!("$.messages[{i}]");
    let (ty, data, dpath) = normalize(m, &path)?;
    let given_id = opt_string(&data, "id", &dpath)?.filter(|id| !id.trim().is_empty());
    Ok(Adapted {
        message: message(&ty, &data, &path, &dpath)?,
        given_id,
        source: Source::Message(m.clone()),
    })
}

/// The message type LangChain's role names stand for (`convert_to_messages`), or `None`.
fn type_of_role(role: &str) -> Option<&'static str> {
    Some(match role {
        "human" | "user" => "human",
        "ai" | "assistant" => "ai",
        "system" | "developer" => "system",
        "tool" => "tool",
        "function" => "function",
        "remove" => "remove",
        _ => return None,
    })
}

/// The message type of a message class name (chunk classes included).
fn type_of_class(class: &str) -> Option<&'static str> {
    Some(match class {
        "HumanMessage" | "HumanMessageChunk" => "human",
        "AIMessage" | "AIMessageChunk" => "ai",
        "SystemMessage" | "SystemMessageChunk" => "system",
        "ToolMessage" | "ToolMessageChunk" => "tool",
        "ChatMessage" | "ChatMessageChunk" => "chat",
        "FunctionMessage" | "FunctionMessageChunk" => "function",
        "RemoveMessage" => "remove",
        _ => return None,
    })
}

/// One message-like value as `(type, fields, path of the fields)` (SPEC TRN-4, TRN-7).
pub(crate) fn normalize<'a>(
    m: &'a Json,
    path: &str,
) -> Result<(String, Cow<'a, Json>, String), TranscriptError> {
    let role_type = |role: &str, at: String| {
        type_of_role(role).ok_or_else(|| {
            malformed(at, format!("unknown message role {role:?} (expected human, user, ai, assistant, system, developer or tool)"))
        })
    };
    match m {
        // A string is a human message (TRN-7).
        Json::String(s) => Ok((
            "human".into(),
            Cow::Owned(json!({ "content": s })),
            path.to_owned(),
        )),
        // `(role, content)` (TRN-7).
        Json::Array(pair) => match pair.as_slice() {
            [Json::String(role), content] => Ok((
                role_type(role, format!("{path}[0]"))?.into(),
                Cow::Owned(json!({ "content": content })),
                path.to_owned(),
            )),
            _ => Err(malformed(
                path,
                "a message as a sequence is a (role, content) pair",
            )),
        },
        Json::Object(obj) => {
            if let Some(envelope) = constructor(obj) {
                let (class, kwargs) = envelope;
                let ty = type_of_class(class).ok_or_else(|| {
                    malformed(
                        format!("{path}.id"),
                        format!("unknown message class {class:?}"),
                    )
                })?;
                return Ok((ty.into(), Cow::Borrowed(kwargs), format!("{path}.kwargs")));
            }
            let ty = match (obj.get("type"), obj.get("role")) {
                (Some(Json::String(t)), _) => t.clone(),
                (None, Some(Json::String(r))) => role_type(r, format!("{path}.role"))?.to_owned(),
                _ => return Err(malformed(format!("{path}.type"), "expected a string")),
            };
            let ty = match type_of_class(&ty) {
                Some(t) if ty.ends_with("Chunk") => t.to_owned(),
                _ => ty,
            };
            match m.get("data") {
                Some(d) if d.is_object() => Ok((ty, Cow::Borrowed(d), format!("{path}.data"))),
                _ => Ok((ty, Cow::Borrowed(m), path.to_owned())),
            }
        }
        _ => Err(malformed(
            path,
            "expected a message: an object, a string or a (role, content) pair",
        )),
    }
}

/// `(class name, kwargs)` of a `Serializable` constructor envelope.
fn constructor(obj: &Map<String, Json>) -> Option<(&str, &Json)> {
    if obj.get("lc") != Some(&json!(1)) || obj.get("type") != Some(&json!("constructor")) {
        return None;
    }
    let class = obj.get("id")?.as_array()?.last()?.as_str()?;
    let kwargs = obj.get("kwargs").filter(|k| k.is_object())?;
    Some((class, kwargs))
}

fn message(ty: &str, d: &Json, path: &str, dpath: &str) -> Result<Message, TranscriptError> {
    let unsupported = |part_type: &str| TranscriptError::UnsupportedContent {
        path: path.to_owned(),
        part_type: part_type.into(),
    };
    let role = match ty {
        "system" => ROLE_SYSTEM.to_owned(),
        "human" => "user".to_owned(),
        "ai" => "assistant".to_owned(),
        "tool" => ROLE_TOOL.to_owned(),
        "chat" => match string(d, "role", dpath)? {
            "developer" => ROLE_SYSTEM.to_owned(),
            r => r.to_owned(),
        },
        // SPEC TRN-1: the deprecated function role; TRN-7: a state edit, not a message.
        "function" => return Err(unsupported("function")),
        "remove" => return Err(unsupported("remove")),
        other => {
            return Err(malformed(
                format!("{path}.type"),
                format!("unknown message type {other:?}"),
            ))
        }
    };
    let content = d.get("content").unwrap_or(&Json::Null);
    let content_path = format!("{dpath}.content");
    let author = opt_string(d, "name", dpath)?;
    if role == ROLE_TOOL {
        let content = content_parts_of(content, &content_path, &[], &BLOCKS)?;
        let call_id = string(d, "tool_call_id", dpath)?;
        let error = match d.get("status") {
            None | Some(Json::Null) => false,
            Some(Json::String(s)) if s == "success" => false,
            Some(Json::String(s)) if s == "error" => true,
            Some(_) => {
                return Err(malformed(
                    format!("{dpath}.status"),
                    "expected \"success\" or \"error\"",
                ))
            }
        };
        let parts = vec![Part::result(
            call_id,
            tool_result_value(content_value(&content), error),
        )];
        return Ok(Message {
            role,
            author,
            parts,
        });
    }
    let mut calls = tool_calls(d, dpath)?;
    calls.extend(invalid_tool_calls(d, dpath)?);
    let (mut parts, blocks) = if role == "assistant" {
        ai_content(content, &content_path)?
    } else {
        (
            content_parts_of(content, &content_path, &[], &BLOCKS)?,
            Vec::new(),
        )
    };
    // SPEC TRN-8: a tool_use block naming a call of `tool_calls` is that call.
    let named: Vec<&str> = calls.iter().map(|c| c.call_id.as_str()).collect();
    parts.extend(calls.iter().cloned().map(Part::Call));
    parts.extend(
        blocks
            .into_iter()
            .filter(|b| !named.contains(&b.call_id.as_str()))
            .map(Part::Call),
    );
    Ok(Message {
        role,
        author,
        parts,
    })
}

/// The call parts of `tool_calls` (TRN-4).
fn tool_calls(d: &Json, dpath: &str) -> Result<Vec<FunctionCall>, TranscriptError> {
    let Some(calls) = d.get("tool_calls").filter(|c| !c.is_null()) else {
        return Ok(Vec::new());
    };
    let calls = calls
        .as_array()
        .ok_or_else(|| malformed(format!("{dpath}.tool_calls"), "expected an array"))?;
    calls
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let p = format!("{dpath}.tool_calls[{k}]");
            call(c, "args", &p)
        })
        .collect()
}

/// The call parts of `invalid_tool_calls` (TRN-9): each `{id, name, args}` whose `args` text
/// did not parse is a call with that text as its arguments (TRN-18), as LangChain's chat models
/// send it; one without a string `id` and `name` cannot be paired and is not supported.
fn invalid_tool_calls(d: &Json, dpath: &str) -> Result<Vec<FunctionCall>, TranscriptError> {
    let Some(calls) = d.get("invalid_tool_calls").filter(|c| !c.is_null()) else {
        return Ok(Vec::new());
    };
    let calls = calls
        .as_array()
        .ok_or_else(|| malformed(format!("{dpath}.invalid_tool_calls"), "expected an array"))?;
    calls
        .iter()
        .enumerate()
        .map(|(k, c)| invalid_call(c, &format!("{dpath}.invalid_tool_calls[{k}]")))
        .collect()
}

/// One invalid tool call (TRN-9, TRN-18).
fn invalid_call(c: &Json, p: &str) -> Result<FunctionCall, TranscriptError> {
    let (Some(id), Some(name)) = (
        c.get("id").and_then(Json::as_str),
        c.get("name").and_then(Json::as_str),
    ) else {
        return Err(TranscriptError::UnsupportedContent {
            path: p.to_owned(),
            part_type: "invalid_tool_call".into(),
        });
    };
    let arguments = match c.get("args") {
        None | Some(Json::Null) => None,
        Some(Json::String(text)) => text_arguments(text, "arguments", &format!("{p}.args")),
        Some(_) => return Err(malformed(format!("{p}.args"), "expected a string or null")),
    };
    Ok(FunctionCall {
        call_id: id.to_owned(),
        name: name.to_owned(),
        arguments,
        informational_only: false,
    })
}

/// A call from `{id, name, <args member>}`.
fn call(c: &Json, args: &str, p: &str) -> Result<FunctionCall, TranscriptError> {
    Ok(FunctionCall {
        call_id: string(c, "id", p)?.to_owned(),
        name: string(c, "name", p)?.to_owned(),
        arguments: Some(object_arguments(
            c.get(args).unwrap_or(&Json::Null),
            &format!("{p}.{args}"),
        )?),
        informational_only: false,
    })
}

/// An AI message's content: its text and blocks as parts, and its `tool_use` / `tool_call`
/// blocks as calls (TRN-8, TRN-15), each in order.
fn ai_content(
    content: &Json,
    path: &str,
) -> Result<(Vec<Part>, Vec<FunctionCall>), TranscriptError> {
    let Json::Array(blocks) = content else {
        return Ok((content_parts_of(content, path, &[], &BLOCKS)?, Vec::new()));
    };
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let p = format!("{path}[{i}]");
        match b.get("type").and_then(Json::as_str) {
            Some("tool_use") => calls.push(call(b, "input", &p)?),
            Some("tool_call") => calls.push(call(b, "args", &p)?),
            _ => parts.push(content_part(b, &p, &[], &BLOCKS)?),
        }
    }
    Ok((parts, calls))
}

/// The blocks of LangChain content (TRN-15): its standard blocks (`image`, `audio`, `video`,
/// `file`, `text-plain`: media; `reasoning`: reasoning; `server_tool_call`,
/// `server_tool_result`: server tools; `non_standard`) and the provider blocks a chat model
/// passes through (`image_url`, Anthropic's `thinking`, ...); an image costs the larger of what
/// the two providers' rules charge for it (TRN-19).
pub(crate) const BLOCKS: BlockRule = BlockRule {
    kind: |ty| match ty {
        "image" | "image_url" | "audio" | "video" | "file" | "text-plain" | "document"
        | "input_audio" => BlockKind::Media,
        "reasoning" | "thinking" | "redacted_thinking" => BlockKind::Reasoning,
        "server_tool_call"
        | "server_tool_call_chunk"
        | "server_tool_result"
        | "server_tool_use" => BlockKind::ServerTool,
        t if t.ends_with("_tool_result") => BlockKind::ServerTool,
        "compaction" => BlockKind::ProviderCompaction,
        _ => BlockKind::Other,
    },
    image_tokens: |ty, b| {
        let detail = b
            .get("image_url")
            .and_then(|i| i.get("detail"))
            .or_else(|| b.get("detail"))
            .and_then(Json::as_str);
        matches!(ty, "image" | "image_url").then(|| ImageRule::Either.tokens(b, detail))
    },
};

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
            let (content, error) = split_result(&r.value);
            msg.insert("content".into(), json!(content));
            msg.insert("tool_call_id".into(), json!(r.call_id));
            if error {
                msg.insert("status".into(), json!("error"));
            }
        }
        None if has_block(m) => {
            msg.insert("content".into(), content_parts(m));
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

/// A result value as `(content text, is an error)` (TRN-10's map, or any other value).
pub(crate) fn split_result(value: &Value) -> (String, bool) {
    match value {
        Value::Map(m) if is_error_result(m) => match m.get("content") {
            Some(Value::String(s)) => (s.clone(), true),
            _ => (result_string(value), false),
        },
        _ => (result_string(value), false),
    }
}

fn is_error_result(m: &ValueMap) -> bool {
    m.len() == 2 && m.get("status") == Some(&Value::String("error".into()))
}
