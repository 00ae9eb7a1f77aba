//! Malformed cases, table-driven: each must be refused by `hybrid-compaction run` with exit 2,
//! nothing on stdout and one line on stderr that names **where** (the JSON path, or the line and
//! column for text that is not JSON) and **what** was expected, in the wire format's words: no
//! message anywhere in the table mentions a Rust type (`enum`, `struct`, `variant`, `serde`, a
//! `::` path).
//!
//! The same table checks that the published case schema is the contract: every row the parser
//! refuses is refused by a real JSON Schema validator too, except the rows marked
//! [`Schema::Cannot`], whose rule is listed in `docs/WIRE.md` under "Rules the schema cannot
//! express" (and which the schema must indeed accept, so the list stays honest). Every shipped
//! vector is accepted by both.

use crate::schema_support;

use std::io::Write;
use std::process::{Command, Stdio};

use hybrid_compaction_oracle::{schema, Case};
use hybrid_compaction_trace::strict;
use serde_json::{json, Value as Json};

const BIN: &str = env!("CARGO_BIN_EXE_hybrid-compaction");

/// What the case schema says about a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Schema {
    /// The schema refuses it too.
    Rejects,
    /// A rule the schema cannot express (the name of its line in WIRE.md).
    Cannot(&'static str),
    /// Not JSON (or not JSON a schema validator can read): the schema has no say.
    NotJson,
}
use Schema::{Cannot, NotJson, Rejects};

struct Bad {
    what: &'static str,
    input: Vec<u8>,
    /// Where: a JSON path (`$.policy.hardLimit`) or a text position (`<stdin>:1:`).
    at: &'static str,
    /// Key words of what was expected.
    words: &'static str,
    schema: Schema,
}

fn bad(
    what: &'static str,
    input: impl Into<Vec<u8>>,
    at: &'static str,
    words: &'static str,
    schema: Schema,
) -> Bad {
    Bad {
        what,
        input: input.into(),
        at,
        words,
        schema,
    }
}

fn policy() -> Json {
    json!({"hardLimit": 100, "triggerMargin": 10, "recentMessageRetentionCount": 1,
           "maximumCompactionAttempts": 2, "preservationLabel": "l", "preservationVersion": 1,
           "estimator": {"kind": "utf8"}})
}

fn text(v: Json) -> Vec<u8> {
    v.to_string().into_bytes()
}

/// A `policy` case whose policy has `key` set to `v` (`null`: removed).
fn policy_with(key: &str, v: Json) -> Vec<u8> {
    let mut p = policy();
    if v.is_null() {
        p.as_object_mut().expect("object").remove(key);
    } else {
        p[key] = v;
    }
    text(json!({"op": "policy", "policy": p}))
}

/// A `policy` case whose policy member `key` is the raw JSON text `raw`.
fn policy_raw(key: &str, raw: &str) -> Vec<u8> {
    let mut p = policy();
    p[key] = json!("@@");
    json!({"op": "policy", "policy": p})
        .to_string()
        .replace("\"@@\"", raw)
        .into_bytes()
}

fn estimator(e: Json) -> Vec<u8> {
    policy_with("estimator", e)
}

fn entry(e: Json) -> Vec<u8> {
    text(json!({"op": "entry", "entries": [e]}))
}

fn parts(ps: Json) -> Vec<u8> {
    entry(json!({"id": "a", "kind": "ToolExchange", "parts": ps}))
}

fn value(v: Json) -> Vec<u8> {
    parts(json!([{"result": {"callId": "c", "value": v}}]))
}

fn assemble(extra: Json) -> Vec<u8> {
    let mut c = json!({"op": "assemble", "policy": policy(),
                       "entries": [{"id": "u", "kind": "ConversationalMessage", "text": "hi"}]});
    for (k, v) in extra.as_object().expect("object") {
        if v.is_null() {
            c.as_object_mut().expect("object").remove(k);
        } else {
            c[k] = v.clone();
        }
    }
    text(c)
}

fn reducer(r: Json) -> Vec<u8> {
    assemble(json!({"reducer": r}))
}

fn verify(proposed: Json) -> Vec<u8> {
    text(json!({"op": "verify", "policy": policy(),
                "original": [{"id": "u", "kind": "ConversationalMessage", "text": "hi"}],
                "proposed": proposed}))
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[allow(clippy::too_many_lines, reason = "the table")]
fn table() -> Vec<Bad> {
    let p = policy();
    let raw_case = |s: &str| s.as_bytes().to_vec();
    vec![
        // ---- not JSON
        bad("empty input", "", "<stdin>", "empty input", NotJson),
        bad("whitespace only", "  \n\t ", "<stdin>", "empty input", NotJson),
        bad("truncated", raw_case(r#"{"op":"policy","policy":{"hardLimit":1"#), "<stdin>:1:", "invalid JSON: EOF", NotJson),
        bad("not JSON", "hello", "<stdin>:1:1", "invalid JSON: expected value", NotJson),
        bad("trailing garbage", [text(json!({"op": "policy", "policy": p})), b" x".to_vec()].concat(), "<stdin>:1:", "invalid JSON: expected value", NotJson),
        bad("byte order mark", [b"\xEF\xBB\xBF".to_vec(), text(json!({"op": "policy", "policy": p}))].concat(), "<stdin>:1:1", "invalid JSON", NotJson),
        bad("invalid UTF-8", b"{\"op\":\"entry\",\"entries\":[{\"id\":\"\xff\",\"kind\":\"Summary\"}]}".to_vec(), "<stdin>:1:", "invalid UTF-8", NotJson),
        bad("lone trailing surrogate", raw_case(r#"{"op":"entry","entries":[{"id":"a\udc00","kind":"Summary"}]}"#), "<stdin>:1:", "lone trailing surrogate \\udc00", NotJson),
        bad("lone leading surrogate", raw_case(r#"{"op":"entry","entries":[{"id":"a\ud800x","kind":"Summary"}]}"#), "<stdin>:1:", "hex escape", NotJson),
        bad("1e400", policy_raw("hardLimit", "1e400"), "<stdin>:1:", "number out of range", NotJson),
        bad("nesting over 128", format!(r#"{{"op":"entry","entries":[{{"id":"r","kind":"ToolExchange","parts":[{{"result":{{"callId":"c","value":{}}}}}]}}]}}"#, nested(200)).into_bytes(), "<stdin>:1:", "nested deeper than 128", NotJson),
        bad("a bad line in JSONL", [text(json!({"op": "policy", "policy": p})), b"\n{\"op\":\n".to_vec()].concat(), "<stdin>:3:", "invalid JSON", NotJson),
        // ---- duplicate keys
        bad("duplicate key in a case", raw_case(r#"{"op":"analyze","entries":[],"entries":[]}"#), "$.entries", "duplicate key \"entries\"", Cannot("duplicate keys")),
        bad("duplicate op", raw_case(r#"{"op":"analyze","op":"analyze","entries":[]}"#), "$.op", "duplicate key", Cannot("duplicate keys")),
        bad("duplicate key in an entry", raw_case(r#"{"op":"entry","entries":[{"id":"a","id":"b","kind":"Summary"}]}"#), "$.entries[0].id", "duplicate key", Cannot("duplicate keys")),
        bad("duplicate key in a value map", raw_case(r#"{"op":"entry","entries":[{"id":"r","kind":"ToolExchange","parts":[{"result":{"callId":"c","value":{"map":{"k":1,"k":2}}}}]}]}"#), "$.entries[0].parts[0].result.value.map.k", "duplicate key", Cannot("duplicate keys")),
        bad("duplicate key in call arguments", raw_case(r#"{"op":"entry","entries":[{"id":"r","kind":"ToolExchange","parts":[{"call":{"callId":"c","name":"f","arguments":{"q":1,"q":1}}}]}]}"#), "$.entries[0].parts[0].call.arguments.q", "duplicate key", Cannot("duplicate keys")),
        // ---- the case object
        bad("a bare number", "42", "$", "expected an object with `op`, got the number 42", Rejects),
        bad("a bare string", "\"case\"", "$", "got the string \"case\"", Rejects),
        bad("null", "null", "$", "got null", Rejects),
        bad("a batch of numbers", "[1]", "case #0", "got the number 1", Rejects),
        bad("one bad case in a batch", text(json!([{"op": "policy", "policy": p}, {"op": "nope"}])), "case #1 invalid case: $.op", "unknown operation \"nope\"", Rejects),
        bad("unknown op", text(json!({"op": "compact", "entries": []})), "$.op", "unknown operation \"compact\", expected one of `assemble`", Rejects),
        bad("missing op", text(json!({"entries": []})), "$:", "missing member `op`", Rejects),
        bad("op not a string", text(json!({"op": 5})), "$.op", "expected a string, got the number 5", Rejects),
        bad("op last, a wrong type first", raw_case(r#"{"entries":{},"op":"analyze"}"#), "$.entries", "expected an array, got an object", Rejects),
        bad("op last, an unknown member", raw_case(r#"{"extra":1,"op":"analyze","entries":[]}"#), "$.extra", "unknown member `extra`", Rejects),
        bad("unknown member in a case", text(json!({"op": "analyze", "entries": [], "extra": true})), "$.extra", "unknown member `extra`, expected `entries` or `transcript`", Rejects),
        bad("another op's member", text(json!({"op": "analyze", "entries": [], "proposed": []})), "$.proposed", "unknown member `proposed`", Rejects),
        bad("policy on analyze", text(json!({"op": "analyze", "entries": [], "policy": p})), "$.policy", "unknown member `policy`", Rejects),
        // ---- policy
        bad("unknown policy member", policy_with("hardlimit", json!(5)), "$.policy.hardlimit", "unknown member `hardlimit`", Rejects),
        bad("string hard limit", policy_with("hardLimit", json!("100")), "$.policy.hardLimit", "expected a signed 32-bit integer (-2147483648 to 2147483647), got the string \"100\"", Rejects),
        bad("fractional hard limit", policy_with("hardLimit", json!(1.5)), "$.policy.hardLimit", "got the number 1.5", Rejects),
        bad("hard limit 2^31", policy_with("hardLimit", json!(2_147_483_648u64)), "$.policy.hardLimit", "signed 32-bit integer", Rejects),
        bad("margin -2^31-1", policy_with("triggerMargin", json!(-2_147_483_649i64)), "$.policy.triggerMargin", "signed 32-bit integer", Rejects),
        bad("attempts 2^40", policy_with("maximumCompactionAttempts", json!(1u64 << 40)), "$.policy.maximumCompactionAttempts", "signed 32-bit integer", Rejects),
        bad("version 2^63", policy_with("preservationVersion", json!(1u64 << 63)), "$.policy.preservationVersion", "signed 32-bit integer", Rejects),
        bad("retention true", policy_with("recentMessageRetentionCount", json!(true)), "$.policy.recentMessageRetentionCount", "got true", Rejects),
        bad("hard limit -0", policy_raw("hardLimit", "-0"), "$.policy.hardLimit", "negative zero", Cannot("integer spelling")),
        bad("hard limit 1.0", policy_raw("hardLimit", "1.0"), "$.policy.hardLimit", "got the number 1.0", Cannot("integer spelling")),
        bad("hard limit 1e2", policy_raw("hardLimit", "1e2"), "$.policy.hardLimit", "got the number 100", Cannot("integer spelling")),
        bad("missing version", policy_with("preservationVersion", Json::Null), "$.policy", "missing member `preservationVersion`", Rejects),
        bad("label a number", policy_with("preservationLabel", json!(7)), "$.policy.preservationLabel", "expected a string", Rejects),
        bad("policy an array", text(json!({"op": "policy", "policy": [100, 10, 1, 2, "l", 1, {"kind": "utf8"}]})), "$.policy", "expected an object, got an array", Rejects),
        bad("policy a string", text(json!({"op": "policy", "policy": "default"})), "$.policy", "expected an object", Rejects),
        bad("policy missing", text(json!({"op": "select", "entries": []})), "$.policy", "missing member `policy`", Cannot("policy from the test group")),
        // ---- estimators
        bad("unknown estimator kind", estimator(json!({"kind": "tokenz"})), "$.policy.estimator.kind", "unknown estimator kind \"tokenz\", expected one of `utf8`", Rejects),
        bad("estimator without kind", estimator(json!({})), "$.policy.estimator", "missing member `kind`", Rejects),
        bad("estimator kind a number", estimator(json!({"kind": 1})), "$.policy.estimator.kind", "expected a string", Rejects),
        bad("estimator a string", estimator(json!("utf8")), "$.policy.estimator", "expected an object with `kind`", Rejects),
        bad("utf8 with a size", estimator(json!({"kind": "utf8", "size": 3})), "$.policy.estimator.size", "unknown member `size`", Rejects),
        bad("constant size a string, kind last", raw_case(r#"{"op":"policy","policy":{"hardLimit":1,"triggerMargin":1,"recentMessageRetentionCount":1,"maximumCompactionAttempts":1,"preservationLabel":"l","preservationVersion":1,"estimator":{"size":"x","kind":"constant"}}}"#), "$.policy.estimator.size", "expected a signed 32-bit integer", Rejects),
        bad("constant size 2^31", estimator(json!({"kind": "constant", "size": 2_147_483_648u64})), "$.policy.estimator.size", "signed 32-bit integer", Rejects),
        bad("constant without size", estimator(json!({"kind": "constant"})), "$.policy.estimator", "missing member `size`", Rejects),
        bad("table sizes an array", estimator(json!({"kind": "table", "sizes": [1], "default": 1})), "$.policy.estimator.sizes", "expected an object", Rejects),
        bad("table size 2^31", estimator(json!({"kind": "table", "sizes": {"a": 2_147_483_648u64}, "default": 1})), "$.policy.estimator.sizes.a", "signed 32-bit integer", Rejects),
        bad("table without default", estimator(json!({"kind": "table", "sizes": {}})), "$.policy.estimator", "missing member `default`", Rejects),
        bad("unknown encoding", estimator(json!({"kind": "tokens", "encoding": "p50k_base"})), "$.policy.estimator.encoding", "unknown encoding `p50k_base`, expected `o200k_base` or `cl100k_base`", Rejects),
        bad("tokens without encoding", estimator(json!({"kind": "tokens"})), "$.policy.estimator", "missing member `encoding`", Rejects),
        bad("memo capacity negative", estimator(json!({"kind": "memo", "estimator": {"kind": "utf8"}, "capacity": -1})), "$.policy.estimator.capacity", "unsigned 32-bit integer", Rejects),
        bad("memo of an unknown kind", estimator(json!({"kind": "memo", "estimator": {"kind": "words"}})), "$.policy.estimator.estimator.kind", "unknown estimator kind \"words\"", Rejects),
        // ---- entries
        bad("entries an object", text(json!({"op": "analyze", "entries": {}})), "$.entries", "expected an array, got an object", Rejects),
        bad("entry a string", entry(json!("u1")), "$.entries[0]", "expected an object, got the string \"u1\"", Rejects),
        bad("entry id a number", entry(json!({"id": 5, "kind": "Summary"})), "$.entries[0].id", "expected a string, got the number 5", Rejects),
        bad("entry without id", entry(json!({"kind": "Summary"})), "$.entries[0]", "missing member `id`", Rejects),
        bad("entry without kind", entry(json!({"id": "a"})), "$.entries[0]", "missing member `kind`", Rejects),
        bad("unknown entry kind", entry(json!({"id": "a", "kind": "Chat"})), "$.entries[0].kind", "unknown entry kind \"Chat\", expected one of SystemInstruction", Rejects),
        bad("lowercase entry kind", entry(json!({"id": "a", "kind": "summary"})), "$.entries[0].kind", "unknown entry kind \"summary\"", Rejects),
        bad("entry kind a number", entry(json!({"id": "a", "kind": 3})), "$.entries[0].kind", "expected a string", Rejects),
        bad("unknown entry member", entry(json!({"id": "a", "kind": "Summary", "txt": "x"})), "$.entries[0].txt", "unknown member `txt`", Rejects),
        bad("text and parts", entry(json!({"id": "a", "kind": "Summary", "text": "x", "parts": []})), "$.entries[0]", "`text` and `parts` are mutually exclusive", Rejects),
        bad("text a number", entry(json!({"id": "a", "kind": "Summary", "text": 1})), "$.entries[0].text", "expected a string", Rejects),
        bad("role a number", entry(json!({"id": "a", "kind": "Summary", "role": 1})), "$.entries[0].role", "expected a string", Rejects),
        bad("author a boolean", entry(json!({"id": "a", "kind": "Summary", "author": false})), "$.entries[0].author", "expected a string, got false", Rejects),
        bad("segment on a summary", entry(json!({"id": "a", "kind": "Summary", "segment": {"body": "x"}})), "$.entries[0].segment", "only allowed with kind RecoverableContextSegment", Rejects),
        bad("segment with text", entry(json!({"id": "a", "kind": "RecoverableContextSegment", "text": "t", "segment": {"body": "x"}})), "$.entries[0]", "takes no `role`, `text` or `parts`", Rejects),
        bad("segment without body", entry(json!({"id": "a", "kind": "RecoverableContextSegment", "segment": {}})), "$.entries[0].segment", "missing member `body`", Rejects),
        bad("segment reference a number", entry(json!({"id": "a", "kind": "RecoverableContextSegment", "segment": {"body": "x", "reference": 1}})), "$.entries[0].segment.reference", "expected a string", Rejects),
        // ---- parts
        bad("parts an object", parts(json!({"text": "x"})), "$.entries[0].parts", "expected an array, got an object", Rejects),
        bad("part a string", parts(json!(["hi"])), "$.entries[0].parts[0]", "unknown message part `hi`, expected one of `text`, `call`, `result`, `unsupported`, `block`", Rejects),
        bad("unknown part key", parts(json!([{"image": "x"}])), "$.entries[0].parts[0]", "unknown message part `image`", Rejects),
        bad("part with two keys", parts(json!([{"text": "x", "call": {"callId": "c", "name": "f"}}])), "$.entries[0].parts[0]", "exactly one key", Rejects),
        bad("empty part", parts(json!([{}])), "$.entries[0].parts[0]", "exactly one key, got an empty object", Rejects),
        bad("part a number", parts(json!([5])), "$.entries[0].parts[0]", "expected a message part: `text`, `call`, `result`, `unsupported` or `block`, as a name or as the one key of an object, got the number 5", Rejects),
        bad("text part a number", parts(json!([{"text": 5}])), "$.entries[0].parts[0].text", "expected a string", Rejects),
        bad("call without callId", parts(json!([{"call": {"name": "f"}}])), "$.entries[0].parts[0].call", "missing member `callId`", Rejects),
        bad("call arguments an array", parts(json!([{"call": {"callId": "c", "name": "f", "arguments": [1]}}])), "$.entries[0].parts[0].call.arguments", "expected an object, got an array", Rejects),
        bad("informationalOnly a string", parts(json!([{"call": {"callId": "c", "name": "f", "informationalOnly": "yes"}}])), "$.entries[0].parts[0].call.informationalOnly", "expected true or false", Rejects),
        bad("unknown call member", parts(json!([{"call": {"callId": "c", "name": "f", "args": {}}}])), "$.entries[0].parts[0].call.args", "unknown member `args`", Rejects),
        bad("result callId a number", parts(json!([{"result": {"callId": 1}}])), "$.entries[0].parts[0].result.callId", "expected a string", Rejects),
        bad("unsupported a number", parts(json!([{"unsupported": 1}])), "$.entries[0].parts[0].unsupported", "expected a string", Rejects),
        // ---- values
        bad("u8 300", value(json!({"u8": 300})), "$.entries[0].parts[0].result.value.u8", "u8 out of range: 300", Rejects),
        bad("i16 40000", value(json!({"i16": 40000})), "$.entries[0].parts[0].result.value.i16", "i16 out of range", Rejects),
        bad("i32 tag 2^31", value(json!({"i32": 2_147_483_648u64})), "$.entries[0].parts[0].result.value.i32", "i32 out of range", Rejects),
        bad("u64 negative", value(json!({"u64": -1})), "$.entries[0].parts[0].result.value.u64", "u64 out of range", Rejects),
        bad("u32 fractional", value(json!({"u32": 1.5})), "$.entries[0].parts[0].result.value.u32", "expected an integer for `u32`", Rejects),
        bad("malformed decimal", value(json!({"decimal": "1.2.3"})), "$.entries[0].parts[0].result.value.decimal", "expected a decimal string", Rejects),
        bad("decimal scale 29", value(json!({"decimal": format!("0.{}", "1".repeat(29))})), "$.entries[0].parts[0].result.value.decimal", "scale <= 28", Rejects),
        bad("decimal over 96 bits", value(json!({"decimal": "99999999999999999999999999999"})), "$.entries[0].parts[0].result.value.decimal", "2^96", Cannot("decimal magnitude")),
        bad("decimal a number", value(json!({"decimal": 1.5})), "$.entries[0].parts[0].result.value.decimal", "expected a decimal string", Rejects),
        bad("raw not JSON", value(json!({"raw": "{"})), "$.entries[0].parts[0].result.value.raw", "exactly one JSON value", Cannot("raw JSON text")),
        bad("raw with whitespace", value(json!({"raw": " 1"})), "$.entries[0].parts[0].result.value.raw", "without surrounding whitespace", Cannot("raw JSON text")),
        bad("raw nested 100000 deep", value(json!({"raw": nested(100_000)})), "$.entries[0].parts[0].result.value.raw", "nested deeper than 128", Cannot("raw JSON text")),
        bad("value object with two tags", value(json!({"i32": 1, "i64": 2})), "$.entries[0].parts[0].result.value", "exactly one tag key", Rejects),
        bad("untagged value object", value(json!({"a": 1})), "$.entries[0].parts[0].result.value", "unknown value tag `a`", Rejects),
        bad("unknown value tag", value(json!({"int": 1})), "$.entries[0].parts[0].result.value", "unknown value tag `int`", Rejects),
        bad("lowercase nan", value(json!({"f64": "nan"})), "$.entries[0].parts[0].result.value.f64", "\"NaN\", \"Infinity\"", Rejects),
        bad("f32 overflow", value(json!({"f32": 1e39})), "$.entries[0].parts[0].result.value.f32", "f32 out of range", Cannot("f32 range")),
        bad("list tag an object", value(json!({"list": {}})), "$.entries[0].parts[0].result.value.list", "expected an array", Rejects),
        bad("map tag an array", value(json!({"map": []})), "$.entries[0].parts[0].result.value.map", "expected an object", Rejects),
        bad("bool tag a string", value(json!({"bool": "true"})), "$.entries[0].parts[0].result.value.bool", "expected a boolean", Rejects),
        bad("string tag a number", value(json!({"string": 1})), "$.entries[0].parts[0].result.value.string", "expected a string", Rejects),
        bad("bad value inside a map", value(json!({"map": {"k": {"u8": -1}}})), "$.entries[0].parts[0].result.value.map.k.u8", "u8 out of range", Rejects),
        bad("bad value under a map key that needs quoting", value(json!({"map": {"a b": {"u8": -1}}})), "$.entries[0].parts[0].result.value.map[\"a b\"].u8", "u8 out of range", Rejects),
        bad("bad value inside a list", value(json!([1, {"i16": 1e10}])), "$.entries[0].parts[0].result.value[1].i16", "i16", Rejects),
        bad("bad call argument", parts(json!([{"call": {"callId": "c", "name": "f", "arguments": {"x": {"u8": 256}}}}])), "$.entries[0].parts[0].call.arguments.x.u8", "u8 out of range: 256", Rejects),
        // ---- cancellation
        bad("unknown cancellation point", assemble(json!({"cancel": "middle"})), "$.cancel", "expected `before`, `capture:K` or `reducer:K`", Rejects),
        bad("non-numeric index", assemble(json!({"cancel": "capture:x"})), "$.cancel", "K a non-negative integer", Rejects),
        bad("negative index", assemble(json!({"cancel": "reducer:-1"})), "$.cancel", "K a non-negative integer", Rejects),
        bad("index past 64 bits", assemble(json!({"cancel": "capture:99999999999999999999999"})), "$.cancel", "K a non-negative integer", Cannot("cancellation index size")),
        bad("cancel a number", assemble(json!({"cancel": 0})), "$.cancel", "expected a string", Rejects),
        bad("capture point on evaluate", text(json!({"op": "evaluate", "policy": p, "entries": [], "cancel": "capture:0"})), "$.cancel", "only `before`", Rejects),
        bad("reducer point on select", text(json!({"op": "select", "policy": p, "entries": [], "cancel": "reducer:0"})), "$.cancel", "only `before`", Rejects),
        bad("capture point on verify", text(json!({"op": "verify", "policy": p, "original": [], "proposed": [], "cancel": "capture:0"})), "$.cancel", "only `before`", Rejects),
        // ---- assemble
        bad("empty schedule with entries", assemble(json!({"snapshots": []})), "$.snapshots", "an empty schedule captures no entries", Rejects),
        bad("nothing to capture", assemble(json!({"entries": null})), "$:", "needs `entries` or `snapshots`", Rejects),
        bad("entries and transcript", assemble(json!({"transcript": {"format": "openai-chat", "messages": []}})), "$:", "mutually exclusive", Rejects),
        bad("snapshot version 2^63", raw_case(&format!(r#"{{"op":"assemble","policy":{p},"snapshots":[{{"version":9223372036854775808,"entries":[]}}]}}"#)), "$.snapshots[0].version", "signed 64-bit integer", Cannot("64-bit bounds")),
        bad("snapshot version a string", assemble(json!({"entries": null, "snapshots": [{"version": "1", "entries": []}]})), "$.snapshots[0].version", "expected a signed 64-bit integer", Rejects),
        bad("first snapshot without entries", assemble(json!({"entries": null, "snapshots": [{"version": 1}]})), "$.snapshots[0]", "needs `entries`", Rejects),
        bad("snapshot unknown member", assemble(json!({"snapshots": [{"version": 1, "items": []}]})), "$.snapshots[0].items", "unknown member `items`", Rejects),
        bad("unknown reducer kind", reducer(json!({"kind": "smart"})), "$.reducer.kind", "unknown reducer kind \"smart\"", Rejects),
        bad("reducer without kind", reducer(json!({"steps": []})), "$.reducer", "missing member `kind`", Rejects),
        bad("unknown reducer step", reducer(json!({"kind": "scripted", "steps": ["shrink"]})), "$.reducer.steps[0]", "unknown reducer step `shrink`, expected one of `echo`, `nothing`, `fail`, `propose`", Rejects),
        bad("fail without a message", reducer(json!({"kind": "scripted", "steps": ["fail"]})), "$.reducer.steps[0]", "`fail` takes a value", Rejects),
        bad("fail message a number", reducer(json!({"kind": "scripted", "steps": [{"fail": 1}]})), "$.reducer.steps[0].fail", "expected a string, got the number 1", Rejects),
        bad("steps a string, kind last", raw_case(&format!(r#"{{"op":"assemble","policy":{p},"entries":[],"reducer":{{"steps":"x","kind":"scripted"}}}}"#)), "$.reducer.steps", "expected an array", Rejects),
        bad("propose item a number", reducer(json!({"kind": "scripted", "steps": [{"propose": [1]}]})), "$.reducer.steps[0].propose[0]", "expected a request entry id (a string) or {\"new\": entry}", Rejects),
        bad("proposed new entry of an unknown kind", reducer(json!({"kind": "scripted", "steps": [{"propose": [{"new": {"id": "s", "kind": "Digest"}}]}]})), "$.reducer.steps[0].propose[0].new.kind", "unknown entry kind \"Digest\"", Rejects),
        bad("propose object without new", reducer(json!({"kind": "scripted", "steps": [{"propose": [{"keep": "u"}]}]})), "$.reducer.steps[0].propose[0].keep", "unknown member `keep`", Rejects),
        bad("negative target count", reducer(json!({"kind": "messageCounting", "targetCount": -1})), "$.reducer.targetCount", "unsigned 32-bit integer", Rejects),
        bad("target count missing", reducer(json!({"kind": "messageCounting"})), "$.reducer", "missing member `targetCount`", Rejects),
        bad("scripted with a target count", reducer(json!({"kind": "scripted", "steps": [], "targetCount": 1})), "$.reducer.targetCount", "unknown member `targetCount`", Rejects),
        bad("unknown upstream step", reducer(json!({"kind": "upstream", "steps": ["nothing"]})), "$.reducer.steps[0]", "unknown upstream step `nothing`", Rejects),
        bad("upstream message without role", reducer(json!({"kind": "upstream", "steps": [{"return": [{"text": "x"}]}]})), "$.reducer.steps[0].return[0]", "missing member `role`", Rejects),
        // ---- verify
        bad("proposed item a number", verify(json!([1])), "$.proposed[0]", "expected an original entry id (a string) or an entry object, got the number 1", Rejects),
        bad("proposed entry of an unknown kind", verify(json!([{"id": "x", "kind": "Chatty"}])), "$.proposed[0].kind", "unknown entry kind \"Chatty\"", Rejects),
        bad("proposed entry without id", verify(json!([{"kind": "Summary"}])), "$.proposed[0]", "missing member `id`", Rejects),
        bad("proposed an object", verify(json!({"u": true})), "$.proposed", "expected an array", Rejects),
        bad("proposed names no original", verify(json!(["ghost"])), "$.proposed[0]", "no original entry with id \"ghost\"", Cannot("ids name entries")),
        bad("verify without original", text(json!({"op": "verify", "policy": p, "proposed": []})), "$:", "missing member `original`", Rejects),
        // ---- entry op: messages, overrides, transcripts, augmentation
        bad("override key 00", text(json!({"op": "entry", "messages": [{"role": "user", "text": "x"}], "overrides": {"00": "Summary"}})), "$.overrides[\"00\"]", "without sign or leading zeros", Rejects),
        bad("override key +0", text(json!({"op": "entry", "messages": [{"role": "user", "text": "x"}], "overrides": {"+0": "Summary"}})), "$.overrides[\"+0\"]", "without sign or leading zeros", Rejects),
        bad("override key -1", text(json!({"op": "entry", "messages": [{"role": "user", "text": "x"}], "overrides": {"-1": "Summary"}})), "$.overrides[\"-1\"]", "message index", Rejects),
        bad("override key a word", text(json!({"op": "entry", "messages": [{"role": "user", "text": "x"}], "overrides": {"first": "Summary"}})), "$.overrides.first", "message index", Rejects),
        bad("override of an unknown kind", text(json!({"op": "entry", "messages": [{"role": "user", "text": "x"}], "overrides": {"0": "Note"}})), "$.overrides[\"0\"]", "unknown entry kind \"Note\"", Rejects),
        bad("overrides without messages", text(json!({"op": "entry", "entries": [], "overrides": {"0": "Summary"}})), "$.overrides", "needs `messages`", Rejects),
        bad("override index past the messages", text(json!({"op": "entry", "messages": [{"role": "user", "text": "x"}], "overrides": {"5": "Summary"}})), "$.overrides[\"5\"]", "index of a message", Cannot("override index bound")),
        bad("entries and messages", text(json!({"op": "entry", "entries": [{"id": "a", "kind": "Summary"}], "messages": [{"role": "user"}]})), "$:", "mutually exclusive", Rejects),
        bad("message without role", text(json!({"op": "entry", "messages": [{"text": "x"}]})), "$.messages[0]", "missing member `role`", Rejects),
        bad("message text and parts", text(json!({"op": "entry", "messages": [{"role": "user", "text": "x", "parts": []}]})), "$.messages[0]", "mutually exclusive", Rejects),
        bad("transcript with messages", text(json!({"op": "entry", "messages": [], "transcript": {"format": "openai-chat", "messages": []}})), "$:", "`transcript` excludes", Rejects),
        bad("unknown transcript format", text(json!({"op": "entry", "transcript": {"format": "bedrock-converse", "messages": []}})), "$.transcript.format", "unknown transcript format `bedrock-converse`", Rejects),
        bad("transcript messages an object", text(json!({"op": "entry", "transcript": {"format": "openai-chat", "messages": {}}})), "$.transcript.messages", "expected an array", Rejects),
        bad("transcript ids a number", text(json!({"op": "entry", "transcript": {"format": "openai-chat", "messages": [], "ids": 1}})), "$.transcript.ids", "expected an array", Rejects),
        bad("transcript override key 01", text(json!({"op": "entry", "transcript": {"format": "openai-chat", "messages": [{"role": "user", "content": "x"}], "overrides": {"01": "Summary"}}})), "$.transcript.overrides[\"01\"]", "without sign or leading zeros", Rejects),
        bad("augment without id", text(json!({"op": "entry", "entries": [], "augment": {"segment": {"body": "x"}}})), "$.augment", "missing member `id`", Rejects),
        // ---- each kind of refusal of the reader, at several depths (its own words, built from
        // what it was asked to read: never serde's sentences)
        // wrong type (serde's invalid_type)
        bad("a number for a string, six levels down", reducer(json!({"kind": "scripted", "steps": [{"propose": [{"new": {"id": "s", "kind": "Summary", "parts": [{"call": {"callId": "c", "name": 1}}]}}]}]})), "$.reducer.steps[0].propose[0].new.parts[0].call.name", "expected a string, got the number 1", Rejects),
        bad("true for an id in a later snapshot", assemble(json!({"entries": null, "snapshots": [{"version": 0, "entries": []}, {"version": 1, "entries": [{"id": true, "kind": "Summary"}]}]})), "$.snapshots[1].entries[0].id", "expected a string, got true", Rejects),
        bad("an array for a string", entry(json!({"id": "a", "kind": "Summary", "role": ["user"]})), "$.entries[0].role", "expected a string, got an array", Rejects),
        bad("null for a required integer", policy_raw("hardLimit", "null"), "$.policy.hardLimit", "expected a signed 32-bit integer (-2147483648 to 2147483647), got null", Rejects),
        bad("an object for an array, deep", reducer(json!({"kind": "upstream", "steps": [{"return": [{"role": "user", "parts": {"text": "x"}}]}]})), "$.reducer.steps[0].return[0].parts", "expected an array, got an object", Rejects),
        bad("an array for an object, in a schedule", assemble(json!({"entries": null, "snapshots": [[0, []]]})), "$.snapshots[0]", "expected an object, got an array", Rejects),
        bad("a unit step given a value", reducer(json!({"kind": "scripted", "steps": [{"echo": 1}]})), "$.reducer.steps[0].echo", "expected null, got the number 1", Rejects),
        bad("a plain enum given a number", text(json!({"op": "entry", "transcript": {"format": 5, "messages": []}})), "$.transcript.format", "expected a transcript format: `openai-chat`, `anthropic-messages`, `langchain`, `openai-responses`, `pydantic-ai`, `gemini` or `ai-sdk`, as a name or as the one key of an object, got the number 5", Rejects),
        // integer out of each range (serde's invalid_value, stated by the adapter)
        bad("u32 at 2^32", estimator(json!({"kind": "memo", "estimator": {"kind": "utf8"}, "capacity": 4_294_967_296u64})), "$.policy.estimator.capacity", "expected an unsigned 32-bit integer (0 to 4294967295), got the number 4294967296", Rejects),
        bad("u32 negative, deep", reducer(json!({"kind": "messageCounting", "targetCount": -5})), "$.reducer.targetCount", "expected an unsigned 32-bit integer (0 to 4294967295), got the number -5", Rejects),
        bad("i32 fraction in a table size", estimator(json!({"kind": "table", "sizes": {"a": 0.5}, "default": 1})), "$.policy.estimator.sizes.a", "expected a signed 32-bit integer (-2147483648 to 2147483647), got the number 0.5", Rejects),
        bad("i64 below -2^63", raw_case(&format!(r#"{{"op":"assemble","policy":{p},"snapshots":[{{"version":-9223372036854775809,"entries":[]}}]}}"#)), "$.snapshots[0].version", "expected a signed 64-bit integer (-9223372036854775808 to 9223372036854775807), got the number -9.223372036854776e18", Cannot("64-bit bounds")),
        bad("u64 negative in a value map", text(json!({"op": "leases", "steps": [{"beginRun": {"revisions": {"b": -1}}}]})), "$.steps[0].beginRun.revisions.b", "expected an unsigned 64-bit integer (0 to 18446744073709551615), got the number -1", Rejects),
        bad("u64 past 2^64", raw_case(r#"{"op":"leases","steps":[{"beginRun":{"revisions":{"b":18446744073709551616}}}]}"#), "$.steps[0].beginRun.revisions.b", "expected an unsigned 64-bit integer (0 to 18446744073709551615), got the number 1.8446744073709552e19", Cannot("64-bit bounds")),
        // unknown member (serde's unknown_field)
        bad("unknown member of a proposed entry", reducer(json!({"kind": "scripted", "steps": [{"propose": [{"new": {"id": "s", "kind": "Summary", "txt": "x"}}]}]})), "$.reducer.steps[0].propose[0].new.txt", "unknown member `txt`, expected one of `id`, `kind`, `role`, `author`, `text`, `parts`, `segment`", Rejects),
        bad("unknown member of a segment", entry(json!({"id": "a", "kind": "RecoverableContextSegment", "segment": {"body": "x", "ref": "y"}})), "$.entries[0].segment.ref", "unknown member `ref`, expected `reference` or `body`", Rejects),
        bad("unknown member before the tag", raw_case(r#"{"op":"policy","policy":{"hardLimit":1,"triggerMargin":1,"recentMessageRetentionCount":1,"maximumCompactionAttempts":1,"preservationLabel":"l","preservationVersion":1,"estimator":{"sizes":{},"kind":"constant"}}}"#), "$.policy.estimator.sizes", "unknown member `sizes`, expected `size`", Rejects),
        // unknown name (serde's unknown_variant) of a tagged union and of plain enums
        bad("unknown tagged name, tag last", raw_case(&format!(r#"{{"op":"assemble","policy":{p},"entries":[],"reducer":{{"steps":[],"kind":"smart"}}}}"#)), "$.reducer.kind", "unknown reducer kind \"smart\", expected one of `scripted`, `upstream`, `messageCounting`", Rejects),
        bad("unknown name of an enum with a word, as a key", reducer(json!({"kind": "upstream", "steps": [{"yield": []}]})), "$.reducer.steps[0]", "unknown upstream step `yield`, expected one of `echo`, `null`, `fail`, `return`", Rejects),
        bad("unknown name of an enum without a word", text(json!({"op": "leases", "steps": ["jump"]})), "$.steps[0]", "unknown name `jump`, expected one of `beginRun`, `ensureRun`", Rejects),
        bad("unknown name of an enum without a word, as a key", text(json!({"op": "leases", "steps": [{"jump": {}}]})), "$.steps[0]", "unknown name `jump`, expected one of `beginRun`", Rejects),
        // missing member (serde's missing_field)
        bad("missing member of a proposed entry", reducer(json!({"kind": "scripted", "steps": [{"propose": [{"new": {"id": "s"}}]}]})), "$.reducer.steps[0].propose[0].new:", "missing member `kind`", Rejects),
        bad("missing member of a result part", parts(json!([{"result": {"value": 1}}])), "$.entries[0].parts[0].result:", "missing member `callId`", Rejects),
        bad("missing member of a later snapshot", assemble(json!({"entries": null, "snapshots": [{"version": 0, "entries": []}, {"entries": []}]})), "$.snapshots[1]:", "missing member `version`", Rejects),
        // duplicate key (the adapter's check; serde's duplicate_field)
        bad("duplicate key in a table's sizes", raw_case(r#"{"op":"policy","policy":{"hardLimit":1,"triggerMargin":1,"recentMessageRetentionCount":1,"maximumCompactionAttempts":1,"preservationLabel":"l","preservationVersion":1,"estimator":{"kind":"table","sizes":{"a":1,"a":2},"default":0}}}"#), "$.policy.estimator.sizes.a", "duplicate key \"a\": an object may name each member once", Cannot("duplicate keys")),
        bad("duplicate policy member", raw_case(r#"{"op":"policy","policy":{"hardLimit":1,"hardLimit":2,"triggerMargin":1,"recentMessageRetentionCount":1,"maximumCompactionAttempts":1,"preservationLabel":"l","preservationVersion":1}}"#), "$.policy.hardLimit", "duplicate key \"hardLimit\"", Cannot("duplicate keys")),
        bad("duplicate key in a provider message", raw_case(r#"{"op":"entry","transcript":{"format":"openai-chat","messages":[{"role":"user","role":"user","content":"x"}]}}"#), "$.transcript.messages[0].role", "duplicate key \"role\"", Cannot("duplicate keys")),
        bad("duplicate key of a one-key part", raw_case(r#"{"op":"entry","entries":[{"id":"a","kind":"Summary","parts":[{"text":"a","text":"b"}]}]}"#), "$.entries[0].parts[0].text", "duplicate key \"text\"", Cannot("duplicate keys")),
        bad("duplicate tag, tag last", raw_case(r#"{"op":"policy","policy":{"hardLimit":1,"triggerMargin":1,"recentMessageRetentionCount":1,"maximumCompactionAttempts":1,"preservationLabel":"l","preservationVersion":1,"estimator":{"size":1,"kind":"constant","kind":"constant"}}}"#), "$.policy.estimator.kind", "duplicate key \"kind\"", Cannot("duplicate keys")),
        // ---- artifactDiagnostics (SPEC ATR-5)
        bad("artifact outcome unknown", text(json!({"op": "artifactDiagnostics", "operation": "Offload", "outcome": "Kept", "content": "ToolResult", "reason": "BelowThreshold", "observedUtf8ByteSize": 1, "configuredThresholdOrBudget": 1})), "$.outcome", "unknown ArtifactOutcome \"Kept\", expected one of Inline, Offloaded", Rejects),
        bad("artifact observed size a string", text(json!({"op": "artifactDiagnostics", "operation": "Offload", "outcome": "Inline", "content": "ToolResult", "reason": "BelowThreshold", "observedUtf8ByteSize": "1", "configuredThresholdOrBudget": 1})), "$.observedUtf8ByteSize", "expected a signed 64-bit integer", Rejects),
        bad("offload factory without content", text(json!({"op": "artifactDiagnostics", "operation": "Offload", "outcome": "Inline", "reason": "BelowThreshold", "observedUtf8ByteSize": 1, "configuredThresholdOrBudget": 1})), "$.content", "an offload names its content kind", Cannot("factory parameters")),
        bad("offload factory without an observed size", text(json!({"op": "artifactDiagnostics", "operation": "Offload", "outcome": "Inline", "content": "ToolResult", "reason": "BelowThreshold", "configuredThresholdOrBudget": 1})), "$.observedUtf8ByteSize", "an offload always observes a size", Cannot("factory parameters")),
        bad("rehydration factory given a content", text(json!({"op": "artifactDiagnostics", "operation": "Rehydration", "outcome": "Missing", "content": "ToolResult", "reason": "Missing", "configuredThresholdOrBudget": 1, "referenceId": "r"})), "$.content", "always RecoverableContextSegment", Cannot("factory parameters")),
        bad("rehydration factory without a reference id", text(json!({"op": "artifactDiagnostics", "operation": "Rehydration", "outcome": "Missing", "reason": "Missing", "configuredThresholdOrBudget": 1})), "$.referenceId", "always names the reference it resolves", Cannot("factory parameters")),
        // ---- configure: the upstream compaction switch (SPEC CFG-5)
        bad("upstream strategy a string", text(json!({"op": "configure", "enabled": false, "upstreamCompaction": {"enabled": true, "strategy": "yes"}})), "$.upstreamCompaction.strategy", "expected true or false, got the string", Rejects),
        bad("upstream budget a fraction", text(json!({"op": "configure", "enabled": false, "upstreamCompaction": {"enabled": true, "maxOutputTokens": 1.5}})), "$.upstreamCompaction.maxOutputTokens", "expected a signed 32-bit integer", Rejects),
        bad("upstream switch missing", text(json!({"op": "configure", "enabled": false, "upstreamCompaction": {"strategy": true}})), "$.upstreamCompaction:", "missing member `enabled`", Rejects),
        bad("upstream unknown member", text(json!({"op": "configure", "enabled": false, "upstreamCompaction": {"enabled": true, "tokens": 5}})), "$.upstreamCompaction.tokens", "unknown member `tokens`", Rejects),
        // ---- compose: the provider composer (SPEC CMP-5)
        bad("unknown composer", text(json!({"op": "compose", "composer": "agent"})), "$.composer", "unknown name `agent`, expected `compaction` or `provider`", Rejects),
        bad("composer context a string", text(json!({"op": "compose", "composer": "provider", "context": "none"})), "$.context", "expected an object, got the string", Rejects),
        bad("a context for the narrow composer", text(json!({"op": "compose", "context": null})), "$.context", "only the provider composer", Cannot("provider context")),
        // ---- decisions: reporter scopes (SPEC ATR-6, EVT-7)
        bad("decisions child without a scope", text(json!({"op": "decisions", "steps": [{"child": {"agentId": "a"}}]})), "$.steps[0].child", "a child reporter needs an active reporter scope", Cannot("reporter scopes")),
        bad("decisions leave without a scope", text(json!({"op": "decisions", "steps": [{"reporter": {"workflowId": "w"}}, {"leave": {}}, {"leave": {}}]})), "$.steps[2].leave", "no active reporter scope to leave", Cannot("reporter scopes")),
        bad("decisions workflow id a number", text(json!({"op": "decisions", "steps": [{"reporter": {"workflowId": 3}}]})), "$.steps[0].reporter.workflowId", "expected a string, got the number 3", Rejects),
        bad("decisions unknown step", text(json!({"op": "decisions", "steps": [{"jump": {}}]})), "$.steps[0]", "unknown name `jump`, expected one of `reporter`, `child`, `leave`, `offload`, `rehydrate`", Rejects),
        bad("decisions progress a string", text(json!({"op": "decisions", "progress": "yes", "steps": []})), "$.progress", "expected true or false, got the string \"yes\"", Rejects),
        bad("decisions child without an agent id", text(json!({"op": "decisions", "steps": [{"child": {}}]})), "$.steps[0].child:", "missing member `agentId`", Rejects),
        // ---- bundle: the tool loop (SPEC CFG-6)
        bad("bundle answer before the last round", text(json!({"op": "bundle", "enabled": false, "turns": [{"user": "q", "rounds": [{"answer": "a"}, {"answer": "b"}]}]})), "$.turns[0].rounds[0]", "an answer ends the turn: it must be the turn's last round", Cannot("answers end turns")),
        bad("bundle tool call without a result", text(json!({"op": "bundle", "enabled": false, "turns": [{"user": "q", "rounds": [{"toolCalls": [{"callId": "c", "name": "t"}]}]}]})), "$.turns[0].rounds[0].toolCalls[0]:", "missing member `result`", Rejects),
        bad("bundle strategy keeps a negative count", text(json!({"op": "bundle", "enabled": false, "upstreamStrategy": {"keepLast": -1}, "turns": []})), "$.upstreamStrategy.keepLast", "expected an unsigned 32-bit integer", Rejects),
        bad("bundle without the switch", text(json!({"op": "bundle", "turns": []})), "$:", "missing member `enabled`", Rejects),
        // ---- node: two assemblies in flight (SPEC EVT-5)
        bad("a parked call's call parks too", text(json!({"op": "node", "policy": policy(), "steps": [{"call": {"messages": [], "whileParked": {"calls": [{"messages": [], "whileParked": {"calls": []}}]}}}]})), "$.steps[0].call.whileParked.calls[0].whileParked", "does not park itself", Cannot("parked calls")),
        bad("a parked call's call without messages", text(json!({"op": "node", "policy": policy(), "steps": [{"call": {"messages": [], "whileParked": {"calls": [{}]}}}]})), "$.steps[0].call.whileParked.calls[0]:", "missing member `messages`", Rejects),
        bad("whileParked without calls", text(json!({"op": "node", "policy": policy(), "steps": [{"call": {"messages": [], "whileParked": {}}}]})), "$.steps[0].call.whileParked:", "missing member `calls`", Rejects),
        // ---- node: reporters sharing one source (SPEC EVT-3)
        bad("node reporter step without a case reporter", text(json!({"op": "node", "policy": policy(), "steps": [{"reporter": {"workflowId": "w"}}]})), "$.steps[0].reporter", "shares the sequence source of the case's `reporter`, which is absent", Cannot("shared reporter source")),
        bad("node reporter step depth negative", text(json!({"op": "node", "policy": policy(), "reporter": {"workflowId": "w"}, "steps": [{"reporter": {"workflowId": "w", "depth": -1}}]})), "$.steps[0].reporter.depth", "expected an unsigned 32-bit integer", Rejects),
        // ---- trust: a chosen call (SPEC TRU-4)
        bad("trust message role a number", text(json!({"op": "trust", "messages": [{"role": 1}]})), "$.messages[0].role", "expected a string, got the number 1", Rejects),
        bad("trust assembly with a policy", text(json!({"op": "trust", "assembly": "Failed", "policy": policy()})), "$.policy", "mutually exclusive with `policy` and `reducer`", Cannot("fixed or chosen trust call")),
        bad("trust stream error past the updates", text(json!({"op": "trust", "messages": [], "stream": {"updates": 1, "errorAt": 1}})), "$.stream.errorAt", "expected a position below `updates` (1)", Cannot("stream error position")),
        bad("trust stream updates negative", text(json!({"op": "trust", "stream": {"updates": -1}})), "$.stream.updates", "expected an unsigned 32-bit integer", Rejects),
        bad("trust reducer kind unknown", text(json!({"op": "trust", "reducer": {"kind": "nope"}})), "$.reducer.kind", "unknown reducer kind \"nope\"", Rejects),
        // ---- node: a failing classifier (SPEC CLS-3)
        bad("classifier failure kind unknown", text(json!({"op": "node", "policy": policy(), "steps": [{"call": {"messages": [{"role": "user", "text": "q"}], "classifierFails": {"message": 0, "kind": "Boom"}}}]})), "$.steps[0].call.classifierFails.kind", "unknown ErrorKind \"Boom\", expected one of OutOfRange", Rejects),
        bad("classifier failure past the messages", text(json!({"op": "node", "policy": policy(), "steps": [{"call": {"messages": [{"role": "user", "text": "q"}], "classifierFails": {"message": 1, "kind": "InvalidOperation"}}}]})), "$.steps[0].call.classifierFails.message", "the index of a message of the call (below 1)", Cannot("override index bound")),
        bad("classifier failure without a kind", text(json!({"op": "node", "policy": policy(), "steps": [{"call": {"messages": [], "classifierFails": {"message": 0}}}]})), "$.steps[0].call.classifierFails:", "missing member `kind`", Rejects),
        // ---- select / evaluate / analyze
        bad("select with neither entries nor transcript", text(json!({"op": "select", "policy": p})), "$:", "missing member `entries` (or `transcript`)", Rejects),
        bad("evaluate with entries and transcript", text(json!({"op": "evaluate", "policy": p, "entries": [], "transcript": {"format": "langchain", "messages": []}})), "$:", "mutually exclusive", Rejects),
        bad("analyze with neither", text(json!({"op": "analyze"})), "$:", "missing member `entries`", Rejects),
    ]
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str], stdin: &[u8]) -> Out {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary spawns");
    {
        let mut sin = child.stdin.take().expect("stdin");
        let _ = sin.write_all(stdin);
    }
    let o = child.wait_with_output().expect("binary runs");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The stderr line of every row (checked for exit code, stdout, one line, place and words).
fn refusals() -> Vec<(&'static str, String)> {
    let rows = table();
    assert!(rows.len() >= 100, "only {} bad inputs", rows.len());
    let mut problems = Vec::new();
    let mut lines = Vec::new();
    for row in &rows {
        let o = run(&["run", "--model", "-"], &row.input);
        let line = o.stderr.trim_end().to_owned();
        let ok = o.code == 2
            && o.stdout.is_empty()
            && line.lines().count() == 1
            && line.starts_with("hybrid-compaction: error: ")
            && line.contains(row.at)
            && line.contains(row.words);
        if !ok {
            problems.push(format!(
                "{}: exit {}, stdout {:?}, stderr {:?} (want {:?} and {:?})",
                row.what, o.code, o.stdout, line, row.at, row.words
            ));
        }
        lines.push((row.what, line));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    lines
}

#[test]
fn every_bad_input_exits_2_naming_where_and_what() {
    refusals();
}

/// Words of serde's and Rust's vocabulary that must never reach a user.
fn rust_words(message: &str) -> Vec<String> {
    let mut found: Vec<String> = message
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            ["enum", "struct", "variant", "serde", "untagged"]
                .contains(&w.to_ascii_lowercase().as_str())
        })
        .map(str::to_owned)
        .collect();
    if message.contains("::") {
        found.push("::".to_owned());
    }
    found
}

#[test]
fn no_error_message_names_a_rust_type() {
    let mut offenders = Vec::new();
    for (what, line) in refusals() {
        let words = rust_words(&line);
        if !words.is_empty() {
            offenders.push(format!("{what}: {words:?} in {line}"));
        }
    }
    // The vocabulary check itself catches what it must.
    assert_eq!(rust_words("expected struct EntryInput"), ["struct"]);
    assert_eq!(rust_words("unknown variant `x`"), ["variant"]);
    assert_eq!(rust_words("a::b"), ["::"]);
    assert!(rust_words("constructs an entry").is_empty());
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

/// The parser's verdict on a JSON text: `Err` when it is invalid wire input.
fn parser_refuses(text: &str) -> bool {
    match strict::read::<Case>(text) {
        Err(_) => true,
        Ok(case) => {
            hybrid_compaction_oracle::run_case(&case, &hybrid_compaction_oracle::Model).is_err()
        }
    }
}

#[test]
fn the_case_schema_refuses_what_the_parser_refuses() {
    let schema = schema_support::Validator::new(&schema::case_schema());
    let mut problems = Vec::new();
    for row in table() {
        let text = String::from_utf8_lossy(&row.input).into_owned();
        let parsed: Result<Json, String> = std::str::from_utf8(&row.input)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(t).map_err(|e| e.to_string()));
        match (row.schema, parsed) {
            (NotJson, Ok(_)) => {
                problems.push(format!("{}: marked not JSON, but it parses", row.what))
            }
            (NotJson, Err(_)) => {}
            (_, Err(e)) => problems.push(format!("{}: not JSON ({e}); mark it NotJson", row.what)),
            (Rejects, Ok(v)) => {
                if schema.accepts(&v) {
                    problems.push(format!("{}: the schema accepts it", row.what));
                }
                if !parser_refuses(&text) {
                    problems.push(format!("{}: the parser accepts it", row.what));
                }
            }
            (Cannot(rule), Ok(v)) => {
                if !schema.accepts(&v) {
                    problems.push(format!(
                        "{}: listed as a rule the schema cannot express ({rule}), but the schema refuses it: drop the exception",
                        row.what
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_listed_exceptions_are_documented() {
    let wire = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/WIRE.md"))
        .expect("docs/WIRE.md");
    let section = wire
        .split("### Rules the schema cannot express")
        .nth(1)
        .expect("WIRE.md has the section");
    for row in table() {
        if let Cannot(rule) = row.schema {
            assert!(
                section.contains(&format!("**{rule}**")),
                "WIRE.md does not list `{rule}`"
            );
        }
    }
}

#[test]
fn every_shipped_vector_case_is_accepted_by_the_schema_and_the_parser() {
    let schema = schema_support::Validator::new(&schema::case_schema());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    let mut count = 0;
    for f in std::fs::read_dir(dir).expect("vectors/") {
        let path = f.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let file: Json =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        for g in file["testGroups"].as_array().expect("groups") {
            for t in g["tests"].as_array().expect("tests") {
                let case = &t["case"];
                assert!(
                    schema.accepts(case),
                    "{} tcId {}: {:?}",
                    path.display(),
                    t["tcId"],
                    schema.errors(case)
                );
                strict::read::<Case>(&case.to_string())
                    .unwrap_or_else(|e| panic!("{} tcId {}: {e}", path.display(), t["tcId"]));
                count += 1;
            }
        }
    }
    assert!(count > 500, "only {count} vector cases");
}

/// A host holding a parsed value (the Python binding) gets the same path and words.
#[test]
fn a_parsed_value_is_read_with_the_same_paths_and_words() {
    for (v, at, words) in [
        (
            json!({"op": "analyze", "entries": {}}),
            "$.entries",
            "expected an array, got an object",
        ),
        (
            json!({"op": "entry", "entries": [{"id": "a", "kind": "Summary", "parts": ["hi"]}]}),
            "$.entries[0].parts[0]",
            "unknown message part `hi`",
        ),
        (
            json!({"op": "policy", "policy": [1, 2]}),
            "$.policy",
            "expected an object, got an array",
        ),
    ] {
        let e = strict::read_value::<Case>(v).expect_err("refused");
        assert_eq!((e.path.as_str(), e.position), (at, None));
        assert!(e.message.contains(words), "{}", e.message);
    }
}

#[test]
fn the_output_schema_requires_exactly_one_answer() {
    let schema = schema_support::Validator::new(&schema::output_schema());
    let error = json!({"kind": "OutOfRange", "message": "m"});
    assert!(schema.accepts(&json!({"error": error})));
    for bad in [
        json!({}),
        json!({"error": error, "entries": []}),
        json!({"assembly": {}}),
        json!({"finalTranscript": []}),
        json!({"error": {}}),
        json!({"policy": {"hardLimit": 1}}),
    ] {
        assert!(!schema.accepts(&bad), "the output schema accepts {bad}");
    }
}

/// Every name the schema derives for a tagged union (the `op` of each `Case` variant, each
/// estimator and reducer `kind`) is one the reader dispatches: a variant added to the enum
/// without its line in `TaggedUnion::read_as` fails here, not in a user's hands.
#[test]
fn every_tagged_name_of_the_schema_is_readable() {
    let s = schema::case_schema();
    let names = |alternatives: &Json, tag: &str| -> Vec<String> {
        alternatives
            .as_array()
            .expect("oneOf")
            .iter()
            .map(|a| {
                a["properties"][tag]["const"]
                    .as_str()
                    .expect("a const tag")
                    .to_owned()
            })
            .collect()
    };
    let mut probes = Vec::new();
    for op in names(&s["oneOf"], "op") {
        probes.push(json!({"op": op}));
    }
    for kind in names(&s["$defs"]["EstimatorInput"]["oneOf"], "kind") {
        probes.push(json!({"op": "policy", "policy": {"estimator": {"kind": kind}}}));
    }
    for kind in names(&s["$defs"]["ReducerInput"]["oneOf"], "kind") {
        probes.push(json!({"op": "assemble", "reducer": {"kind": kind}}));
    }
    assert!(probes.len() >= 16, "{probes:?}");
    for p in probes {
        // Often incomplete: the reader must get past the name before it complains.
        if let Err(e) = strict::read::<Case>(&p.to_string()) {
            assert!(
                !e.message.contains("unknown") && !e.message.contains("bug of this reader"),
                "{p}: {e}"
            );
        }
    }
}

/// The committed fuzz seeds of the wire parser (`fuzz/seeds/wire_case/`): whatever the CLI
/// refuses among them is refused in one line without Rust's vocabulary.
#[test]
fn the_wire_fuzz_seeds_are_refused_in_the_format_words() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/wire_case");
    let mut refused = 0;
    for f in std::fs::read_dir(dir).expect("fuzz/seeds/wire_case") {
        let path = f.expect("entry").path();
        let bytes = std::fs::read(&path).expect("read");
        let o = run(&["run", "--model", "-"], &bytes);
        assert!(
            [0, 2].contains(&o.code),
            "{}: exit {} {}",
            path.display(),
            o.code,
            o.stderr
        );
        if o.code == 2 {
            refused += 1;
            let line = o.stderr.trim_end();
            assert_eq!(line.lines().count(), 1, "{}: {line}", path.display());
            assert!(o.stdout.is_empty(), "{}", path.display());
            assert!(rust_words(line).is_empty(), "{}: {line}", path.display());
        }
    }
    assert!(refused >= 2, "only {refused} seeds refused");
}

/// Every serde error constructor a `Deserialize` impl can call (`invalid_type`, `invalid_value`,
/// `invalid_length`, `unknown_variant`, `unknown_field`, `missing_field`, a repeated key, an
/// enum's shapes), through the reader on small types of the test's own: each refusal names the
/// JSON path and says, in the format's words, what the adapter was asked to read (never the
/// Rust type: `u8`, `tuple`, `enum Shape`). The same rows read from a parsed value give the
/// same path and words.
#[test]
fn the_reader_words_every_serde_error_without_rust_names() {
    use std::collections::BTreeMap;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code, reason = "read, never used")]
    struct S {
        a: u8,
        #[serde(default)]
        b: Option<i16>,
        #[serde(default)]
        t: Option<(u8, u8)>,
        #[serde(default)]
        c: Option<char>,
        #[serde(default)]
        e: Option<Shape>,
        #[serde(default)]
        w: Option<Worded>,
        #[serde(default)]
        m: Option<BTreeMap<u8, bool>>,
        #[serde(default)]
        f: Option<f64>,
        #[serde(default)]
        u: Option<()>,
        #[serde(default)]
        l: Option<Vec<i64>>,
    }
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code, reason = "read, never used")]
    enum Shape {
        Unit,
        Pair(u8, u8),
        Named { x: u16 },
    }
    /// An enum whose serde name is the format's word for its names.
    #[derive(Debug, serde::Deserialize)]
    #[serde(rename = "colour", rename_all = "lowercase")]
    #[allow(dead_code, reason = "read, never used")]
    enum Worded {
        Red,
        Green,
    }

    let rows: &[(&str, &str, &str)] = &[
        (r#"{"a": 256}"#, "$.a", "expected an unsigned 8-bit integer (0 to 255), got the number 256"),
        (r#"{"a": "1"}"#, "$.a", "expected an unsigned 8-bit integer (0 to 255), got the string \"1\""),
        (r#"{"a": -0}"#, "$.a", "got -0 (a negative zero is not an integer: write 0)"),
        (r#"{"a": 1.5}"#, "$.a", "expected an unsigned 8-bit integer (0 to 255), got the number 1.5"),
        (r#"{"a": 1, "b": -40000}"#, "$.b", "expected a signed 16-bit integer (-32768 to 32767), got the number -40000"),
        (r#"{"a": 1, "t": [1, 2, 3]}"#, "$.t", "expected an array of 2 elements, got 3 elements"),
        (r#"{"a": 1, "t": [1]}"#, "$.t", "expected an array of 2 elements, got 1 element"),
        (r#"{"a": 1, "t": {}}"#, "$.t", "expected an array of 2 elements, got an object"),
        (r#"{"a": 1, "t": [1, "x"]}"#, "$.t[1]", "expected an unsigned 8-bit integer (0 to 255), got the string \"x\""),
        (r#"{"a": 1, "c": "ab"}"#, "$.c", "expected a string of one character, got the string \"ab\""),
        (r#"{"a": 1, "e": "Other"}"#, "$.e", "unknown name `Other`, expected one of `Unit`, `Pair`, `Named`"),
        (r#"{"a": 1, "e": {"Other": 1}}"#, "$.e", "unknown name `Other`, expected one of `Unit`, `Pair`, `Named`"),
        (r#"{"a": 1, "e": {"Pair": [1]}}"#, "$.e.Pair", "expected an array of 2 elements, got 1 element"),
        (r#"{"a": 1, "e": {"Named": [1]}}"#, "$.e.Named", "expected an object, got an array"),
        (r#"{"a": 1, "e": {"Named": {"x": -1}}}"#, "$.e.Named.x", "expected an unsigned 16-bit integer (0 to 65535), got the number -1"),
        (r#"{"a": 1, "e": {"Named": {}}}"#, "$.e.Named", "missing member `x`"),
        (r#"{"a": 1, "e": {"Unit": null, "Pair": [1, 2]}}"#, "$.e.Unit", "expected an object with exactly one key, got another key \"Pair\""),
        (r#"{"a": 1, "e": {}}"#, "$.e", "expected an object with exactly one key, got an empty object"),
        (r#"{"a": 1, "e": "Pair"}"#, "$.e", "`Pair` takes a value: write {\"Pair\": ...}"),
        (r#"{"a": 1, "e": 3}"#, "$.e", "expected `Unit`, `Pair` or `Named`, as a name or as the one key of an object, got the number 3"),
        (r#"{"a": 1, "w": "blue"}"#, "$.w", "unknown colour `blue`, expected `red` or `green`"),
        (r#"{"a": 1, "w": true}"#, "$.w", "expected a colour: `red` or `green`, as a name or as the one key of an object, got true"),
        (r#"{"a": 1, "m": {"x": true}}"#, "$.m.x", "expected an unsigned 8-bit integer (0 to 255), got the string \"x\""),
        (r#"{"a": 1, "m": {"300": true}}"#, "$.m[\"300\"]", "expected an unsigned 8-bit integer (0 to 255), got the number 300"),
        (r#"{"a": 1, "m": {"1": 0}}"#, "$.m[\"1\"]", "expected true or false, got the number 0"),
        (r#"{"a": 1, "f": "x"}"#, "$.f", "expected a number, got the string \"x\""),
        (r#"{"a": 1, "u": 0}"#, "$.u", "expected null, got the number 0"),
        (r#"{"a": 1, "l": [1, 2, 9223372036854775808]}"#, "$.l[2]", "expected a signed 64-bit integer (-9223372036854775808 to 9223372036854775807), got the number 9223372036854775808"),
        (r#"{"a": 1, "l": [[]]}"#, "$.l[0]", "expected a signed 64-bit integer (-9223372036854775808 to 9223372036854775807), got an array"),
        (r#"{"a": 1, "z": 0}"#, "$.z", "unknown member `z`, expected one of `a`, `b`, `t`, `c`, `e`, `w`, `m`, `f`, `u`, `l`"),
        (r#"{}"#, "$", "missing member `a`"),
        (r#"{"b": 1}"#, "$", "missing member `a`"),
        (r#"[1]"#, "$", "expected an object, got an array"),
        (r#""s""#, "$", "expected an object, got the string \"s\""),
        (r#"{"a": 1, "a": 2}"#, "$.a", "duplicate key \"a\": an object may name each member once"),
        (r#"{"a": 1, "m": {"1": true, "1": false}}"#, "$.m[\"1\"]", "duplicate key \"1\""),
    ];
    let mut problems = Vec::new();
    for (text, path, words) in rows {
        match strict::read::<S>(text) {
            Ok(v) => problems.push(format!("{text}: accepted as {v:?}")),
            Err(e) => {
                let ok = e.path == *path
                    && e.message.contains(words)
                    && !e.syntax
                    && e.position.is_some()
                    && rust_words(&e.message).is_empty();
                if !ok {
                    problems.push(format!("{text}: got {e:?}, want {path} {words:?}"));
                }
                // A parsed value (no repeated keys left in it, its keys sorted) reads the same.
                let same_value = !text.contains(r#""a": 1, "a""#)
                    && !text.contains(r#""1": true, "1""#)
                    && !text.contains(r#""Unit": null, "#);
                if same_value {
                    let value: Json = serde_json::from_str(text).expect("JSON");
                    match strict::read_value::<S>(value) {
                        Ok(_) => problems.push(format!("{text}: accepted as a value")),
                        Err(v)
                            if (v.path.as_str(), v.message.as_str(), v.position)
                                != (e.path.as_str(), e.message.as_str(), None) =>
                        {
                            problems.push(format!("{text}: as a value {v:?}, as text {e:?}"));
                        }
                        Err(_) => {}
                    }
                }
            }
        }
    }
    assert!(rows.len() >= 30, "{} rows", rows.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
