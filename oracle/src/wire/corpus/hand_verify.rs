//! Hand-written vectors: the verifier (VER-1 .. VER-4), including structural equality.
//!
//! Base list: `s` (system), `u1`, `c`/`r` (a complete tool pair), `u2`; retention 1, so the
//! required ids are `[s, u2]` (units: u1, {c, r}, u2).

use serde_json::{json, Value as Json};

use super::dsl::*;
use super::{group, t, HandGroup};

fn base() -> Vec<Json> {
    vec![
        sys("s", "rules"),
        conv("u1", "one"),
        call("c", &["k"]),
        result("r", &["k"]),
        conv("u2", "two"),
    ]
}

fn vf(original: Vec<Json>, proposed: Vec<Json>) -> Json {
    json!({"op": "verify", "original": original, "proposed": proposed})
}

fn same(ids: &[&str]) -> Vec<Json> {
    ids.iter().map(|i| json!(i)).collect()
}

fn accepted(fallback: &[&str]) -> Json {
    json!({"verification": {"outcome": "Accepted", "rejectionReasons": [], "missingRequiredEntryIds": [],
        "invalidEntryIds": [], "preservationOnlyFallbackEntryIds": fallback}})
}

fn rejected(reasons: &[&str], missing: &[&str], invalid: &[&str]) -> Json {
    json!({"verification": {"outcome": "Rejected", "rejectionReasons": reasons, "missingRequiredEntryIds": missing,
        "invalidEntryIds": invalid}})
}

/// A result entry `r` answering `k` with `value`, used to probe value equality.
fn rv(value: Json) -> Json {
    result_value("r", "k", value)
}

fn eq_case(comment: &str, a: Json, b: Json, equal: bool) -> super::HandTest {
    let original = vec![call("c", &["k"]), rv(a), conv("u", "last")];
    let proposed = vec![json!("c"), rv(b), json!("u")];
    let expect = if equal {
        accepted(&["u"])
    } else {
        rejected(&["RetainedOriginalEntryMutated"], &[], &["r"])
    };
    t(comment, &["VER-2", "VER-1"], vf(original, proposed), expect)
}

fn msg_case(comment: &str, a: Json, b: Json, equal: bool) -> super::HandTest {
    // A call message gets its result, so that the tool structure stays valid.
    let tool = a["kind"] == "ToolExchange";
    let mut original = vec![a];
    let mut proposed = vec![b];
    if tool {
        original.push(result("r", &["k"]));
        proposed.push(json!("r"));
    }
    original.push(conv("u", "last"));
    proposed.push(json!("u"));
    let expect = if equal {
        accepted(&["u"])
    } else {
        rejected(&["RetainedOriginalEntryMutated"], &[], &["m"])
    };
    t(comment, &["VER-2", "VER-1"], vf(original, proposed), expect)
}

/// The verifier.
pub fn verify() -> Vec<HandGroup> {
    let p = Some(policy_utf8(1000, 10, 1, 1));
    let checks = group(
        "checks in order, result and reason order (SPEC VER-1, VER-3, VER-4)",
        p.clone(),
        vec![
            t(
                "Verify(x, x) accepts a well-formed list",
                &["VER-1", "VER-3", "VER-4", "ENT-7"],
                vf(base(), same(&["s", "u1", "c", "r", "u2"])),
                accepted(&["s", "u2"]),
            ),
            t(
                "a required-only subset is accepted",
                &["VER-4"],
                vf(base(), same(&["s", "u2"])),
                accepted(&["s", "u2"]),
            ),
            t(
                "dropping a complete group and a message is accepted",
                &["VER-1"],
                vf(base(), same(&["s", "u1", "u2"])),
                accepted(&["s", "u2"]),
            ),
            t(
                "new conversational and summary entries are allowed anywhere",
                &["VER-1"],
                vf(
                    base(),
                    vec![
                        json!("s"),
                        summary("sum", "short"),
                        json!("u2"),
                        conv("new", "n"),
                    ],
                ),
                accepted(&["s", "u2"]),
            ),
            t(
                "the empty proposal of an empty original",
                &["VER-1"],
                vf(vec![], vec![]),
                accepted(&[]),
            ),
            t(
                "a missing required entry",
                &["VER-1", "VER-3"],
                vf(base(), same(&["u1", "u2"])),
                rejected(&["MissingRequiredEntry"], &["s"], &[]),
            ),
            t(
                "all required entries missing: one reason, ids in required order",
                &["VER-3"],
                vf(base(), same(&["u1"])),
                json!({"verification": {"outcome": "Rejected", "rejectionReasons": ["MissingRequiredEntry"], "missingRequiredEntryIds": ["s", "u2"],
                    "invalidEntryIds": [], "preservationOnlyFallbackEntryIds": ["s", "u2"]}}),
            ),
            t(
                "required entries out of order (ids not invalid)",
                &["VER-1"],
                vf(base(), same(&["u2", "s"])),
                rejected(&["RequiredEntryOutOfOrder"], &[], &[]),
            ),
            t(
                "a changed required entry is a content mismatch",
                &["VER-1"],
                vf(base(), vec![sys("s", "other rules"), json!("u2")]),
                rejected(&["RequiredEntryContentMismatch"], &[], &["s"]),
            ),
            t(
                "mismatch is recorded during the walk, missing after it",
                &["VER-1", "VER-3"],
                vf(base(), vec![sys("s", "other rules")]),
                rejected(
                    &["RequiredEntryContentMismatch", "MissingRequiredEntry"],
                    &["u2"],
                    &["s"],
                ),
            ),
            t(
                "a changed required entry is not also reported as mutated",
                &["VER-1"],
                vf(base(), vec![json!("u1"), sys("s", "x"), json!("u2")]),
                rejected(&["RequiredEntryContentMismatch"], &[], &["s"]),
            ),
            t(
                "a new ArtifactReference is forged",
                &["VER-1", "DEP-9"],
                vf(base(), vec![json!("s"), artref("z", "doc"), json!("u2")]),
                rejected(&["ForgedStructuralEntry"], &[], &["z"]),
            ),
            t(
                "a new SystemInstruction is forged",
                &["VER-1"],
                vf(base(), vec![json!("s"), sys("s2", "more"), json!("u2")]),
                rejected(&["ForgedStructuralEntry"], &[], &["s2"]),
            ),
            t(
                "a new OptionalContext is forged",
                &["VER-1"],
                vf(base(), vec![json!("s"), opt("o", "x"), json!("u2")]),
                rejected(&["ForgedStructuralEntry"], &[], &["o"]),
            ),
            t(
                "a new complete tool pair is forged (both ids)",
                &["VER-1"],
                vf(
                    base(),
                    vec![
                        json!("s"),
                        call("c9", &["k9"]),
                        result("r9", &["k9"]),
                        json!("u2"),
                    ],
                ),
                rejected(&["ForgedStructuralEntry"], &[], &["c9", "r9"]),
            ),
            t(
                "a retained non-required entry with changed text is mutated",
                &["VER-1", "DEP-9"],
                vf(base(), vec![json!("s"), conv("u1", "ONE"), json!("u2")]),
                rejected(&["RetainedOriginalEntryMutated"], &[], &["u1"]),
            ),
            t(
                "a retained entry whose kind changed is mutated",
                &["VER-1"],
                vf(base(), vec![json!("s"), summary("u1", "one"), json!("u2")]),
                rejected(&["RetainedOriginalEntryMutated"], &[], &["u1"]),
            ),
            t(
                "a required entry whose kind changed (same message) is mutated",
                &["VER-1"],
                vf(
                    base(),
                    vec![
                        json!({"id": "s", "kind": "AuthoritativeSessionState", "role": "system", "text": "rules"}),
                        json!("u2"),
                    ],
                ),
                rejected(&["RetainedOriginalEntryMutated"], &[], &["s"]),
            ),
            t(
                "dropping a result orphans the call",
                &["VER-1"],
                vf(base(), same(&["s", "c", "u2"])),
                rejected(&["OrphanedToolCall"], &[], &["c"]),
            ),
            t(
                "dropping a call orphans the result",
                &["VER-1"],
                vf(base(), same(&["s", "r", "u2"])),
                rejected(&["OrphanedToolResult"], &[], &["r"]),
            ),
            t(
                "moving a result before its call reorders the group",
                &["VER-1"],
                vf(base(), same(&["s", "r", "c", "u2"])),
                rejected(&["ReorderedToolGroup"], &[], &["c"]),
            ),
            t(
                "reasons in check order: missing, forged, mutated, tool (not declaration order)",
                &["VER-1", "VER-3"],
                vf(
                    base(),
                    vec![
                        opt("o", "x"),
                        conv("u1", "changed"),
                        json!("c"),
                        json!("u2"),
                    ],
                ),
                json!({"verification": {"outcome": "Rejected",
                    "rejectionReasons": ["MissingRequiredEntry", "ForgedStructuralEntry", "RetainedOriginalEntryMutated", "OrphanedToolCall"],
                    "missingRequiredEntryIds": ["s"], "invalidEntryIds": ["c", "o", "u1"], "preservationOnlyFallbackEntryIds": ["s", "u2"]}}),
            ),
            t(
                "invalid ids are a set in ordinal order",
                &["VER-3"],
                vf(
                    base(),
                    vec![
                        json!("s"),
                        sys("zz", "a"),
                        sys("Z", "b"),
                        sys("a", "c"),
                        json!("u2"),
                    ],
                ),
                rejected(&["ForgedStructuralEntry"], &[], &["Z", "a", "zz"]),
            ),
            t(
                "duplicate ids in the original are an argument error, not a rejection",
                &["VER-1", "ERR-1"],
                vf(vec![conv("u", "1"), conv("u", "2")], same(&["u"])),
                err_entry("InvalidArgument", "u"),
            ),
            t(
                "duplicate ids in the proposal are an argument error",
                &["VER-1"],
                vf(base(), vec![json!("s"), json!("u2"), conv("u2", "two")]),
                err_entry("InvalidArgument", "u2"),
            ),
            t(
                "no size check: an enormous proposal is accepted",
                &["VER-1"],
                vf(
                    base(),
                    vec![json!("s"), conv("big", &"x".repeat(5000)), json!("u2")],
                ),
                accepted(&["s", "u2"]),
            ),
            t(
                "fallback ids are the original's required ids even when accepted",
                &["VER-3"],
                json!({"op": "verify", "policy": policy_utf8(1000, 10, 2, 1), "original": base(), "proposed": same(&["s", "c", "r", "u2"])}),
                accepted(&["s", "c", "r", "u2"]),
            ),
        ],
    );
    let defects = group(
        "structure defects of the original cannot be repaired (SPEC VER-4)",
        p.clone(),
        vec![
            t(
                "a duplicate call in x rejects Verify(x, x)",
                &["VER-4", "VER-1"],
                vf(
                    vec![
                        call("c1", &["k"]),
                        call("c2", &["k"]),
                        result("r", &["k"]),
                        conv("u", "x"),
                    ],
                    same(&["c1", "c2", "r", "u"]),
                ),
                rejected(&["DuplicateToolCall"], &[], &["c1", "c2"]),
            ),
            t(
                "a duplicate result in x rejects Verify(x, x)",
                &["VER-4"],
                vf(
                    vec![
                        call("c", &["k"]),
                        result("r1", &["k"]),
                        result("r2", &["k"]),
                        conv("u", "x"),
                    ],
                    same(&["c", "r1", "r2", "u"]),
                ),
                rejected(&["DuplicateToolResult"], &[], &["r1", "r2"]),
            ),
            t(
                "a cross-group result in x rejects Verify(x, x)",
                &["VER-4", "DEP-9"],
                vf(
                    vec![
                        call("c1", &["a"]),
                        call("c2", &["b"]),
                        result("r", &["a", "b"]),
                        conv("u", "x"),
                    ],
                    same(&["c1", "c2", "r", "u"]),
                ),
                rejected(&["CrossGroupToolResult"], &[], &["r"]),
            ),
            t(
                "an orphaned call in x also rejects its required-only subset",
                &["VER-4"],
                vf(vec![call("c", &["k"]), conv("u", "x")], same(&["c", "u"])),
                rejected(&["OrphanedToolCall"], &[], &["c"]),
            ),
            t(
                "an orphan result in x rejects Verify(x, x)",
                &["VER-4"],
                vf(vec![result("r", &["k"]), conv("u", "x")], same(&["r", "u"])),
                rejected(&["OrphanedToolResult"], &[], &["r"]),
            ),
            t(
                "a reordered group in x rejects Verify(x, x)",
                &["VER-4"],
                vf(
                    vec![result("r", &["k"]), call("c", &["k"]), conv("u", "x")],
                    same(&["r", "c", "u"]),
                ),
                rejected(&["ReorderedToolGroup"], &[], &["c"]),
            ),
            t(
                "several tool defects: reasons in VER-1 step 4 order",
                &["VER-1", "VER-3"],
                vf(
                    vec![
                        result("r0", &["z"]),
                        call("c", &["k"]),
                        call("d", &["m", "m"]),
                        result("rm", &["m"]),
                        conv("u", "x"),
                    ],
                    same(&["r0", "c", "d", "rm", "u"]),
                ),
                rejected(
                    &[
                        "OrphanedToolCall",
                        "OrphanedToolResult",
                        "DuplicateToolCall",
                    ],
                    &[],
                    &["c", "d", "r0"],
                ),
            ),
        ],
    );
    let eq = group(
        "structural equality (SPEC VER-2)",
        p,
        vec![
            eq_case(
                "identical string values are equal",
                json!("v"),
                json!("v"),
                true,
            ),
            eq_case(
                "i32 1 and i64 1 differ (distinct variants)",
                json!({"i32": 1}),
                json!({"i64": 1}),
                false,
            ),
            eq_case(
                "i32 1 and f64 1 differ",
                json!(1),
                json!({"f64": 1.0}),
                false,
            ),
            eq_case(
                "decimals compare by value: 1.5 equals 1.50",
                json!({"decimal": "1.5"}),
                json!({"decimal": "1.50"}),
                true,
            ),
            eq_case(
                "NaN differs from NaN",
                json!({"f64": "NaN"}),
                json!({"f64": "NaN"}),
                false,
            ),
            eq_case(
                "0.0 equals -0.0",
                json!({"f64": 0.0}),
                json!({"f64": "-0"}),
                true,
            ),
            eq_case(
                "raw JSON compares by exact text",
                json!({"raw": "{\"a\":1}"}),
                json!({"raw": "{\"a\": 1}"}),
                false,
            ),
            eq_case(
                "raw JSON with the same text is equal",
                json!({"raw": "[1,2]"}),
                json!({"raw": "[1,2]"}),
                true,
            ),
            eq_case(
                "raw JSON string differs from the plain string",
                json!({"raw": "\"v\""}),
                json!("v"),
                false,
            ),
            eq_case(
                "lists compare element-wise (order matters)",
                json!(["a", "b"]),
                json!(["b", "a"]),
                false,
            ),
            eq_case(
                "lists of different length differ",
                json!(["a"]),
                json!(["a", null]),
                false,
            ),
            eq_case(
                "maps compare per key",
                json!({"map": {"a": 1, "b": [true]}}),
                json!({"map": {"b": [true], "a": 1}}),
                true,
            ),
            eq_case(
                "maps of different size differ",
                json!({"map": {"a": 1}}),
                json!({"map": {"a": 1, "b": null}}),
                false,
            ),
            eq_case("null equals null", Json::Null, Json::Null, true),
            eq_case(
                "null differs from the empty string",
                Json::Null,
                json!(""),
                false,
            ),
            eq_case(
                "f32 and f64 of the same number differ",
                json!({"f32": 0.5}),
                json!({"f64": 0.5}),
                false,
            ),
            msg_case(
                "author differs",
                json!({"id": "m", "kind": "ConversationalMessage", "author": "a", "text": "x"}),
                json!({"id": "m", "kind": "ConversationalMessage", "author": "b", "text": "x"}),
                false,
            ),
            msg_case(
                "absent author differs from an empty author",
                json!({"id": "m", "kind": "ConversationalMessage", "text": "x"}),
                json!({"id": "m", "kind": "ConversationalMessage", "author": "", "text": "x"}),
                false,
            ),
            msg_case(
                "role differs",
                json!({"id": "m", "kind": "ConversationalMessage", "role": "user", "text": "x"}),
                json!({"id": "m", "kind": "ConversationalMessage", "role": "assistant", "text": "x"}),
                false,
            ),
            msg_case(
                "same text, different part count",
                json!({"id": "m", "kind": "ConversationalMessage", "text": "ab"}),
                json!({"id": "m", "kind": "ConversationalMessage", "parts": [{"text": "a"}, {"text": "b"}]}),
                false,
            ),
            msg_case(
                "call arguments absent vs empty map differ",
                json!({"id": "m", "kind": "ToolExchange", "parts": [{"call": {"callId": "k", "name": "f"}}]}),
                json!({"id": "m", "kind": "ToolExchange", "parts": [{"call": {"callId": "k", "name": "f", "arguments": {}}}]}),
                false,
            ),
            msg_case(
                "informational flag differs",
                json!({"id": "m", "kind": "ToolExchange", "parts": [{"call": {"callId": "k", "name": "f"}}]}),
                json!({"id": "m", "kind": "ToolExchange", "parts": [{"call": {"callId": "k", "name": "f", "informationalOnly": true}}]}),
                false,
            ),
            msg_case(
                "call name differs",
                json!({"id": "m", "kind": "ToolExchange", "parts": [{"call": {"callId": "k", "name": "f"}}]}),
                json!({"id": "m", "kind": "ToolExchange", "parts": [{"call": {"callId": "k", "name": "g"}}]}),
                false,
            ),
            msg_case(
                "equal argument maps",
                json!({"id": "m", "kind": "ToolExchange", "parts": [{"call": {"callId": "k", "name": "f", "arguments": {"x": 1, "y": "z"}}}]}),
                json!({"id": "m", "kind": "ToolExchange", "parts": [{"call": {"callId": "k", "name": "f", "arguments": {"y": "z", "x": 1}}}]}),
                true,
            ),
        ],
    );
    // Appended after the first release of the corpus (tcIds stay stable).
    let order = group(
        "required-order walk details (SPEC VER-1)",
        Some(policy_utf8(1000, 10, 3, 1)),
        vec![
            t(
                "a missing required id does not reset the order walk",
                &["VER-1"],
                vf(
                    vec![conv("a", "1"), conv("b", "2"), conv("c", "3")],
                    same(&["c", "a"]),
                ),
                rejected(
                    &["MissingRequiredEntry", "RequiredEntryOutOfOrder"],
                    &["b"],
                    &[],
                ),
            ),
            t(
                "non-required entries between required ones do not matter",
                &["VER-1"],
                vf(
                    vec![conv("a", "1"), conv("b", "2"), conv("c", "3")],
                    vec![json!("a"), summary("x", "note"), json!("b"), json!("c")],
                ),
                accepted(&["a", "b", "c"]),
            ),
            t(
                "a required entry moved to the end is out of order once",
                &["VER-1", "VER-3"],
                vf(
                    vec![conv("a", "1"), conv("b", "2"), conv("c", "3")],
                    same(&["b", "c", "a"]),
                ),
                rejected(&["RequiredEntryOutOfOrder"], &[], &[]),
            ),
        ],
    );
    vec![checks, defects, eq, order]
}
