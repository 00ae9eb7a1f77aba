//! Messages and their part shapes (SPEC ENT-3, ENT-8).
//!
//! A message has a role string, an optional author name and ordered parts: text, calls and
//! results (the C# closed model, ENT-3), and *blocks* (ENT-8, DEP-23): the content providers
//! accept beyond those (images, audio, files, reasoning, server tools, a provider's own
//! compaction, block types of a known format this library does not know), each carried as its
//! JSON, exactly, so a kept message is sent as it was given and compared exactly. The enum makes
//! any other shape unrepresentable; the wire's `unsupported` part keeps the C# answer, a
//! not-supported error (SPEC ENT-3, DEP-19).

use crate::names::named_enum;
use crate::value::{Value, ValueMap};

/// Role `system` (SPEC CLS-1).
pub const ROLE_SYSTEM: &str = "system";
/// Role `user`.
pub const ROLE_USER: &str = "user";
/// Role `assistant` (required for call parts, SPEC ENT-5).
pub const ROLE_ASSISTANT: &str = "assistant";
/// Role `tool` (required for result parts, SPEC ENT-5).
pub const ROLE_TOOL: &str = "tool";

/// A function call part (SPEC ENT-3).
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionCall {
    /// The call id that results refer to.
    pub call_id: String,
    /// The function name.
    pub name: String,
    /// Optional argument map (absent differs from empty, SPEC VER-2).
    pub arguments: Option<ValueMap>,
    /// The informational-only flag (compared by the verifier, not by the bridge).
    pub informational_only: bool,
}

/// A function result part (SPEC ENT-3).
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionResult {
    /// The call id this result answers.
    pub call_id: String,
    /// The result value.
    pub value: Value,
}

named_enum! {
    /// What a content block is to the rules (SPEC ENT-8).
    pub enum BlockKind {
        /// An image, audio clip, file or document: inline data, a URL or a file id.
        Media,
        /// The model's reasoning (Anthropic `thinking` and `redacted_thinking`, Responses
        /// `reasoning`, chat `reasoning_content`).
        Reasoning,
        /// A tool the provider runs: its call or its result (`server_tool_use`,
        /// `web_search_tool_result`, ...).
        ServerTool,
        /// The provider's own compaction of earlier context (Anthropic `compaction`, Responses
        /// `compaction`).
        ProviderCompaction,
        /// A block of a known format whose type this library does not know, carried as given.
        Other,
    }
}

/// A content block beyond text, calls and results, carried verbatim (SPEC ENT-8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// What it is to the rules.
    pub kind: BlockKind,
    /// The provider's type of it (`image_url`, `thinking`, `tool_addition`, ...); not empty.
    pub block_type: String,
    /// Its JSON exactly as given: one JSON value, written compactly. Sized (EST-2) and compared
    /// (VER-2) as this text.
    pub json: String,
    /// The tokens its provider charges for it, where the adapter knows the provider's rule or a
    /// bound (an image, TRN-15); `None`: the token estimator counts its JSON (EST-6).
    pub tokens: Option<u32>,
}

/// One message part (SPEC ENT-3, ENT-8).
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text content.
    Text(String),
    /// A function call.
    Call(FunctionCall),
    /// A function result.
    Result(FunctionResult),
    /// A content block (SPEC ENT-8).
    Block(Block),
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Part {
        Part::Text(text.into())
    }

    /// A call part without arguments.
    pub fn call(call_id: impl Into<String>, name: impl Into<String>) -> Part {
        Part::Call(FunctionCall {
            call_id: call_id.into(),
            name: name.into(),
            arguments: None,
            informational_only: false,
        })
    }

    /// A result part.
    pub fn result(call_id: impl Into<String>, value: Value) -> Part {
        Part::Result(FunctionResult {
            call_id: call_id.into(),
            value,
        })
    }

    /// A block part of `kind` and `block_type` whose JSON is `json`, without a token count.
    pub fn block(kind: BlockKind, block_type: impl Into<String>, json: impl Into<String>) -> Part {
        Part::Block(Block {
            kind,
            block_type: block_type.into(),
            json: json.into(),
            tokens: None,
        })
    }
}

impl Block {
    /// Whether a reducer may bring this block in a message of its own (SPEC BRG-3, VER-1):
    /// media may be kept in a summary; reasoning, a server tool's content, a provider's
    /// compaction and unknown blocks are the provider's own and cannot be made up.
    pub fn may_be_new(&self) -> bool {
        self.kind == BlockKind::Media
    }
}

/// A chat message (SPEC ENT-3). Structural equality is SPEC VER-2, implemented by the verifier.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Role string (`system`, `user`, `assistant`, `tool`, or other).
    pub role: String,
    /// Optional author name.
    pub author: Option<String>,
    /// Ordered parts.
    pub parts: Vec<Part>,
}

impl Message {
    /// A message with the given role and parts and no author.
    pub fn new(role: impl Into<String>, parts: Vec<Part>) -> Message {
        Message {
            role: role.into(),
            author: None,
            parts,
        }
    }

    /// A single-text-part message.
    pub fn text(role: impl Into<String>, text: impl Into<String>) -> Message {
        Message::new(role, vec![Part::text(text)])
    }

    /// The message text: concatenation of its text parts, no separator (SPEC ENT-3).
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            if let Part::Text(t) = part {
                out.push_str(t);
            }
        }
        out
    }

    /// Whether any part is a call.
    pub fn has_call(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Call(_)))
    }

    /// Whether any part is a result.
    pub fn has_result(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Result(_)))
    }

    /// Whether any block is one a reducer cannot bring in a new message (see
    /// [`Block::may_be_new`]).
    pub fn has_provider_block(&self) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, Part::Block(b) if !b.may_be_new()))
    }
}
