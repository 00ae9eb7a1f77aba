//! The privacy canary's history (SPEC EVT-6, DIA-1, NODE-4), shared by the clause suite and the
//! library's own node tests: every piece of content carries a marker, and none of [`MARKERS`] may
//! appear in an event, a diagnostics record or an error rendering.

use std::collections::BTreeMap;

use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::message::{FunctionCall, Message, Part};
use hybrid_compaction_model::value::Value;

/// Every marker the history's content carries (the recovered body's included).
pub const MARKERS: [&str; 11] = [
    "MARKER-SYS-1",
    "MARKER-USER-2",
    "MARKER-CALLID-3",
    "MARKER-FN-4",
    "MARKER-ARG-5",
    "MARKER-RESULT-6",
    "MARKER-BODY-7",
    "MARKER-ERR-8",
    "MARKER-ID-9",
    "MARKER-PROVIDER-ERR",
    "MARKER",
];

/// System prompt, a user turn, a reference to the recovered body, and a tool exchange, each
/// carrying markers.
pub fn marker_history(reference: &ArtifactReference) -> Vec<Message> {
    let mut args = BTreeMap::new();
    args.insert("q".to_string(), Value::String("MARKER-ARG-5".into()));
    vec![
        Message::text("system", "MARKER-SYS-1"),
        Message::text("user", "MARKER-USER-2"),
        Message::text("user", reference.to_string()),
        Message::new(
            "assistant",
            vec![Part::Call(FunctionCall {
                call_id: "MARKER-CALLID-3".into(),
                name: "MARKER-FN-4".into(),
                arguments: Some(args),
                informational_only: false,
            })],
        ),
        Message::new(
            "tool",
            vec![Part::result(
                "MARKER-CALLID-3",
                Value::String("MARKER-RESULT-6".into()),
            )],
        ),
    ]
}
