//! Messages and their three part shapes (SPEC ENT-3).
//!
//! A message has a role string, an optional author name and ordered parts. Only three shapes
//! exist (text, call, result); the closed enum makes any other shape unrepresentable, and the
//! wire format refuses unknown shapes with a not-supported error (SPEC ENT-3, DEP-19).

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

/// One message part (SPEC ENT-3).
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text content.
    Text(String),
    /// A function call.
    Call(FunctionCall),
    /// A function result.
    Result(FunctionResult),
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
}
