//! What a native function hands back to JavaScript: one JSON text, an envelope.
//!
//! ```text
//! {"ok": <the answer's JSON>}                              an answer (a typed SPEC error is one)
//! {"invalid": {"path", "reason"}}                          not valid input (the CLI's exit 2)
//! {"internal": {"implementation", "reason"}}               an implementation failed (exit 1)
//! {"transcript": {"kind", "path", "reason"}}               a converter's refusal (SPEC TRN)
//! {"spec": {"kind", "field"?, "message"}}                   a typed error of the SPEC (ERR-1)
//! {"terminated": {"outcome", "finalSize", "hardLimit"}}     compaction terminated (NODE-4)
//! ```
//!
//! The JavaScript layer (`lib/errors.cjs`) throws the package's `Error` subclass named by the
//! envelope's one member (`InvalidCaseError`, `InternalError`, `TranscriptError` or
//! `UnsupportedContentError`, `SpecError`, `CompactionTerminated`) with these fields: no JavaScript code parses an error's text. An
//! answer's JSON text is spliced in as it is, never parsed again.

use serde_json::json;

/// Why a case, a trace or an argument got no answer (see the module docs).
#[derive(Debug)]
pub enum Failure {
    /// Not valid input: the JSON path of the offending value (or `"line N"` of a trace, or the
    /// argument's name) and what was expected there.
    Invalid {
        /// Where.
        path: String,
        /// What was expected there.
        reason: String,
    },
    /// An implementation failed (`model` or `engine`) and why.
    Internal {
        /// `model` or `engine`.
        implementation: String,
        /// What failed.
        reason: String,
    },
    /// A converter's refusal: its ERR-1 kind, the path without `$.`, and the reason.
    Transcript {
        /// `InvalidArgument`, `NotSupported`, ...
        kind: String,
        /// `messages[3].content[1]`.
        path: String,
        /// What is wrong there.
        reason: String,
    },
    /// A typed error of the SPEC: its ERR-1 kind, the field it names, its message.
    Spec {
        /// `OutOfRange`, `ReducerFailed`, ...
        kind: String,
        /// The policy member or field it names, if any.
        field: Option<String>,
        /// Its message.
        message: String,
    },
    /// Compaction terminated (SPEC NODE-4): nothing may be sent.
    Terminated {
        /// `Irreducible` or `ConcurrentMutationLimit`.
        outcome: String,
        /// The final estimated size, in the policy's unit.
        final_size: i64,
        /// The policy's hard limit.
        hard_limit: i64,
    },
}

impl Failure {
    /// [`Failure::Invalid`].
    pub fn invalid(path: impl Into<String>, reason: impl Into<String>) -> Failure {
        Failure::Invalid {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// [`Failure::Internal`].
    pub fn internal(implementation: impl Into<String>, reason: impl Into<String>) -> Failure {
        Failure::Internal {
            implementation: implementation.into(),
            reason: reason.into(),
        }
    }
}

/// An answer (JSON text) or why there is none.
pub type Answer = Result<String, Failure>;

/// The envelope of `answer` (see the module docs).
pub fn envelope(answer: Answer) -> String {
    match answer {
        Ok(text) => format!("{{\"ok\":{text}}}"),
        Err(Failure::Invalid { path, reason }) => {
            json!({"invalid": {"path": path, "reason": reason}}).to_string()
        }
        Err(Failure::Internal {
            implementation,
            reason,
        }) => json!({"internal": {"implementation": implementation, "reason": reason}}).to_string(),
        Err(Failure::Transcript { kind, path, reason }) => {
            json!({"transcript": {"kind": kind, "path": path, "reason": reason}}).to_string()
        }
        Err(Failure::Spec {
            kind,
            field,
            message,
        }) => match field {
            Some(f) => json!({"spec": {"kind": kind, "field": f, "message": message}}),
            None => json!({"spec": {"kind": kind, "message": message}}),
        }
        .to_string(),
        Err(Failure::Terminated {
            outcome,
            final_size,
            hard_limit,
        }) => json!({"terminated": {"outcome": outcome, "finalSize": final_size, "hardLimit": hard_limit}})
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_spliced_and_a_failure_named() {
        assert_eq!(envelope(Ok("[1.0]".into())), r#"{"ok":[1.0]}"#);
        assert_eq!(
            envelope(Err(Failure::invalid("$.op", "expected a string"))),
            r#"{"invalid":{"path":"$.op","reason":"expected a string"}}"#
        );
    }
}
