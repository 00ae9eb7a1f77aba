//! Hand-written vectors: transcripts (SPEC TRN-1 .. TRN-6) on the `entry`, `evaluate` and
//! `assemble` operations.
//!
//! Expected kinds follow the mapping tables of TRN-2 .. TRN-4 and CLS-1; rendered transcripts
//! are the inputs themselves (TRN-6, kept messages verbatim); token counts were computed with
//! Python tiktoken (`o200k_base`, EST-6): `3 + T("system") + T("Be brief.") = 7`, user
//! "Weather in Paris?" 8, the `get_weather` call with `{"city":"Paris"}` 12, the tool result
//! "sunny" 6, assistant "It is sunny." 8.

use serde_json::{json, Value as Json};

use super::{group, t, HandGroup};

fn openai() -> Json {
    json!({"format": "openai-chat", "messages": [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather in "}, {"type": "text", "text": "Paris?"}]},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "assistant", "content": "It is sunny."}
    ]})
}

fn anthropic() -> Json {
    json!({"format": "anthropic-messages", "system": "Be brief.", "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]},
        {"role": "assistant", "content": "It is sunny."}
    ], "ids": ["s", "u", "c", "r", "a"]})
}

fn langchain() -> Json {
    json!({"format": "langchain", "messages": [
        {"type": "system", "content": "Be brief.", "id": "s"},
        {"type": "human", "content": "Weather in Paris?", "id": "u"},
        {"type": "ai", "content": "", "tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}], "id": "c"},
        {"type": "tool", "content": "sunny", "tool_call_id": "call_1", "id": "r"},
        {"type": "ai", "content": "It is sunny.", "id": "a"}
    ]})
}

fn kinds(ks: &[&str]) -> Json {
    Json::Array(ks.iter().map(|k| json!({"kind": k})).collect())
}

const FIVE: [&str; 5] = [
    "SystemInstruction",
    "ConversationalMessage",
    "ToolExchange",
    "ToolExchange",
    "ConversationalMessage",
];

fn tokens_policy(hard: i32) -> Json {
    json!({
        "hardLimit": hard, "triggerMargin": 5,
        "recentMessageRetentionCount": 1, "maximumCompactionAttempts": 2,
        "preservationLabel": "vectors", "preservationVersion": 1,
        "estimator": {"kind": "tokens", "encoding": "o200k_base"}
    })
}

/// Transcripts.
pub fn transcripts() -> Vec<HandGroup> {
    let adapt = group(
        "transcripts to entries and back (SPEC TRN-1 .. TRN-6)",
        None,
        vec![
            t(
                "openai-chat: developer is a system instruction, tool calls and results are tool exchanges; rendered back verbatim",
                &["TRN-1", "TRN-2", "TRN-5", "TRN-6", "CLS-1"],
                json!({"op": "entry", "transcript": openai()}),
                json!({"entries": kinds(&FIVE), "finalTranscript": openai()}),
            ),
            t(
                "anthropic-messages: the top-level system is the first entry; given ids",
                &["TRN-1", "TRN-3", "TRN-5", "TRN-6"],
                json!({"op": "entry", "transcript": anthropic()}),
                json!({"entries": [
                    {"id": "s", "kind": "SystemInstruction", "role": "system"},
                    {"id": "u", "kind": "ConversationalMessage", "role": "user"},
                    {"id": "c", "kind": "ToolExchange", "role": "assistant"},
                    {"id": "r", "kind": "ToolExchange", "role": "tool"},
                    {"id": "a", "kind": "ConversationalMessage", "role": "assistant"}],
                    "finalTranscript": {"format": "anthropic-messages", "system": "Be brief.", "messages": anthropic()["messages"]}}),
            ),
            t(
                "langchain: message ids are entry ids",
                &["TRN-1", "TRN-4", "TRN-5"],
                json!({"op": "entry", "transcript": langchain()}),
                json!({"entries": [
                    {"id": "s", "kind": "SystemInstruction"}, {"id": "u", "kind": "ConversationalMessage"},
                    {"id": "c", "kind": "ToolExchange"}, {"id": "r", "kind": "ToolExchange"},
                    {"id": "a", "kind": "ConversationalMessage"}], "finalTranscript": langchain()}),
            ),
            t(
                "overrides inside the transcript reclassify by message index",
                &["TRN-1", "CLS-1"],
                json!({"op": "entry", "transcript": {"format": "openai-chat", "messages": openai()["messages"], "overrides": {"1": "OptionalContext"}}}),
                json!({"entries": kinds(&["SystemInstruction", "OptionalContext", "ToolExchange", "ToolExchange", "ConversationalMessage"])}),
            ),
            t(
                "an image part is NotSupported",
                &["TRN-1"],
                json!({"op": "entry", "transcript": {"format": "openai-chat", "messages": [{"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]}}),
                json!({"error": {"kind": "NotSupported"}}),
            )
            .flags(&["TypedError"]),
            t(
                "tool-call arguments that are not a JSON object are InvalidArgument",
                &["TRN-1", "TRN-2"],
                json!({"op": "entry", "transcript": {"format": "openai-chat", "messages": [{"role": "assistant", "content": null,
                    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "[1]"}}]}]}}),
                json!({"error": {"kind": "InvalidArgument"}}),
            )
            .flags(&["TypedError"]),
        ],
    );
    let measure = group(
        "transcripts measured in tokens and assembled (SPEC TRN-6, EST-6)",
        None,
        vec![
            t(
                "evaluate a transcript with the token estimator",
                &["TRN-1", "EST-6"],
                json!({"op": "evaluate", "policy": tokens_policy(1000), "transcript": anthropic()}),
                json!({"evaluation": {"measurementUnit": "EstimatedTokens", "entrySizes": [7, 8, 12, 6, 8], "estimatedSize": 41}}),
            ),
            t(
                "a reduced assembly renders the request in the transcript's format: the user turn is gone, a summary is added",
                &["TRN-6", "EST-6"],
                json!({"op": "assemble", "policy": tokens_policy(44), "transcript": anthropic(),
                    "reducer": {"kind": "scripted", "steps": [{"propose": ["s", "c", "r", "a",
                        {"new": {"id": "sum", "kind": "Summary", "role": "user", "text": "Paris?"}}]}]}}),
                json!({"assembly": {"outcome": "Reduced", "finalEntryIds": ["s", "c", "r", "a", "sum"]},
                    "finalTranscript": {"format": "anthropic-messages", "system": "Be brief.", "messages": [
                        anthropic()["messages"][1], anthropic()["messages"][2], anthropic()["messages"][3],
                        {"role": "user", "content": "Paris?"}]}}),
            )
            .flags(&["Success"]),
            t(
                "analyze a transcript: the tool_use and its tool_result form one complete group",
                &["TRN-1", "TRN-3", "EXC-1"],
                json!({"op": "analyze", "transcript": anthropic()}),
                json!({"analysis": {"groups": [{"callEntryId": "c", "callIds": ["toolu_1"],
                    "resultEntryIds": ["r"], "complete": true}], "sequenceValid": true}}),
            ),
        ],
    );
    vec![adapt, measure]
}
