//! Hand-written vectors: tool-exchange analysis (EXC-1 .. EXC-3) and required preservation
//! (PRE-1 .. PRE-4). Expectations follow S20 .. S26 and the decisions recorded in SPEC.md
//! (owners included in `DuplicateCallEntryIds`; result owners counted for call ids without a
//! call owner; `DuplicateResultCallIds` by first result occurrence).

use serde_json::{json, Value as Json};

use super::dsl::*;
use super::{group, t, HandGroup};

fn an(entries: Vec<Json>) -> Json {
    json!({"op": "analyze", "entries": entries})
}

fn grp(
    call: &str,
    call_ids: &[&str],
    results: &[&str],
    matched: bool,
    in_order: bool,
    complete: bool,
) -> Json {
    let mut all = vec![call.to_owned()];
    all.extend(results.iter().map(|s| (*s).to_owned()));
    json!({"callEntryId": call, "callIds": call_ids, "resultEntryIds": results, "allEntryIds": all,
        "allMatched": matched, "allInOrder": in_order, "complete": complete})
}

/// Analysis lists in the order of the output record.
#[allow(clippy::too_many_arguments)]
fn analysis(
    groups: Vec<Json>,
    orphaned: &[&str],
    orphan_results: &[&str],
    dup_calls: &[&str],
    dup_result_ids: &[&str],
    dup_result_entries: &[&str],
    reordered: &[&str],
    cross: &[&str],
) -> Json {
    let valid = orphaned.is_empty()
        && orphan_results.is_empty()
        && dup_calls.is_empty()
        && dup_result_ids.is_empty()
        && reordered.is_empty()
        && cross.is_empty();
    json!({"analysis": {"groups": groups, "orphanedCallEntryIds": orphaned, "orphanResultEntryIds": orphan_results,
        "duplicateCallEntryIds": dup_calls, "duplicateResultCallIds": dup_result_ids, "duplicateResultEntryIds": dup_result_entries,
        "reorderedCallEntryIds": reordered, "crossGroupResultEntryIds": cross, "sequenceValid": valid}})
}

const E: &[&str] = &[];

/// Tool-exchange analysis.
pub fn exchange() -> Vec<HandGroup> {
    vec![
        group(
            "calls, results, groups and completeness (SPEC EXC-1 .. EXC-3)",
            None,
            vec![
                t("a complete call/result pair", &["EXC-1", "EXC-2", "EXC-3"],
                    an(vec![call("c", &["k1"]), result("r", &["k1"])]),
                    analysis(vec![grp("c", &["k1"], &["r"], true, true, true)], E, E, E, E, E, E, E)),
                t("the empty list", &["EXC-3"], an(vec![]), analysis(vec![], E, E, E, E, E, E, E)),
                t("only ToolExchange entries participate", &["EXC-1"],
                    an(vec![conv("u", "x"), call("c", &["k1"]), sys("s", "y"), result("r", &["k1"]), summary("m", "z")]),
                    analysis(vec![grp("c", &["k1"], &["r"], true, true, true)], E, E, E, E, E, E, E)),
                t("several calls in one message form one group; results span tool messages", &["EXC-3"],
                    an(vec![call("c", &["k1", "k2"]), result("r1", &["k1"]), result("r2", &["k2"])]),
                    analysis(vec![grp("c", &["k1", "k2"], &["r1", "r2"], true, true, true)], E, E, E, E, E, E, E)),
                t("one result message answering both calls appears once", &["EXC-3"],
                    an(vec![call("c", &["k1", "k2"]), result("r", &["k2", "k1"])]),
                    analysis(vec![grp("c", &["k1", "k2"], &["r"], true, true, true)], E, E, E, E, E, E, E)),
                t("result entries sorted by position, not by call-id order", &["EXC-3"],
                    an(vec![call("c", &["k1", "k2"]), result("r2", &["k2"]), result("r1", &["k1"])]),
                    analysis(vec![grp("c", &["k1", "k2"], &["r2", "r1"], true, true, true)], E, E, E, E, E, E, E)),
                t("an unanswered call is orphaned", &["EXC-3"],
                    an(vec![call("c", &["k1"])]),
                    analysis(vec![grp("c", &["k1"], &[], false, true, false)], &["c"], E, E, E, E, E, E)),
                t("a partially answered call is orphaned", &["EXC-3"],
                    an(vec![call("c", &["k1", "k2"]), result("r", &["k1"])]),
                    analysis(vec![grp("c", &["k1", "k2"], &["r"], false, true, false)], &["c"], E, E, E, E, E, E)),
                t("a result without a call is an orphan result", &["EXC-2"],
                    an(vec![result("r", &["kx"])]),
                    analysis(vec![], E, &["r"], E, E, E, E, E)),
                t("an orphan result entry even if its other results match; the group stays complete", &["EXC-2", "EXC-3"],
                    an(vec![call("c", &["k1"]), result("r", &["k1", "kx"])]),
                    analysis(vec![grp("c", &["k1"], &["r"], true, true, true)], E, &["r"], E, E, E, E, E)),
                t("a result before its call: reordered, not orphan", &["EXC-3"],
                    an(vec![result("r", &["k1"]), call("c", &["k1"])]),
                    analysis(vec![grp("c", &["k1"], &["r"], true, false, false)], E, E, E, E, E, &["c"], E)),
                t("a reordered group that is not all-matched counts as orphaned only", &["EXC-3"],
                    an(vec![result("r", &["k1"]), call("c", &["k1", "k2"])]),
                    analysis(vec![grp("c", &["k1", "k2"], &["r"], false, false, false)], &["c"], E, E, E, E, E, E)),
                t("a call id declared by two entries: both listed (owner included), both groups incomplete", &["EXC-1", "EXC-3"],
                    an(vec![call("c1", &["k1"]), call("c2", &["k1"]), result("r", &["k1"])]),
                    analysis(vec![grp("c1", &["k1"], &["r"], true, true, false), grp("c2", &["k1"], &["r"], true, true, false)],
                        E, E, &["c1", "c2"], E, E, E, E)),
                t("a call id repeated inside one message is a duplicate", &["EXC-1"],
                    an(vec![call("c", &["k1", "k1"]), result("r", &["k1"])]),
                    analysis(vec![grp("c", &["k1", "k1"], &["r"], true, true, false)], E, E, &["c"], E, E, E, E)),
                t("two result entries for one call id", &["EXC-2", "EXC-3"],
                    an(vec![call("c", &["k1"]), result("r1", &["k1"]), result("r2", &["k1"])]),
                    analysis(vec![grp("c", &["k1"], &["r1"], true, true, false)], E, E, E, &["k1"], &["r1", "r2"], E, E)),
                t("two result parts in one message count twice", &["EXC-2"],
                    an(vec![call("c", &["k1"]), result("r", &["k1", "k1"])]),
                    analysis(vec![grp("c", &["k1"], &["r"], true, true, false)], E, E, E, &["k1"], &["r"], E, E)),
                t("duplicate result call ids ordered by first result occurrence", &["EXC-2"],
                    an(vec![call("c", &["k1", "k2"]), result("r1", &["k2"]), result("r2", &["k1"]), result("r3", &["k2", "k1"])]),
                    analysis(vec![grp("c", &["k1", "k2"], &["r1", "r2"], true, true, false)], E, E, E, &["k2", "k1"], &["r1", "r2", "r3"], E, E)),
                t("a doubly answered orphan is also a duplicate result", &["EXC-2"],
                    an(vec![result("r1", &["kx"]), result("r2", &["kx"])]),
                    analysis(vec![], E, &["r1", "r2"], E, &["kx"], &["r1", "r2"], E, E)),
                t("one result entry answering two call entries is cross-group", &["EXC-2", "EXC-3"],
                    an(vec![call("c1", &["k1"]), call("c2", &["k2"]), result("r", &["k1", "k2"])]),
                    analysis(vec![grp("c1", &["k1"], &["r"], true, true, false), grp("c2", &["k2"], &["r"], true, true, false)],
                        E, E, E, E, E, E, &["r"])),
                t("a result before and one after the call: reordered and duplicate", &["EXC-2", "EXC-3"],
                    an(vec![result("r0", &["k1"]), call("c", &["k1"]), result("r1", &["k1"])]),
                    analysis(vec![grp("c", &["k1"], &["r0"], true, false, false)], E, E, E, &["k1"], &["r0", "r1"], &["c"], E)),
                t("an informational-only call is still a call", &["EXC-1"],
                    an(vec![json!({"id": "c", "kind": "ToolExchange", "parts": [{"call": {"callId": "k1", "name": "f", "informationalOnly": true}}]})]),
                    analysis(vec![grp("c", &["k1"], &[], false, true, false)], &["c"], E, E, E, E, E, E)),
                t("two independent complete groups", &["EXC-3"],
                    an(vec![call("c1", &["a"]), result("r1", &["a"]), conv("u", "x"), call("c2", &["b"]), result("r2", &["b"])]),
                    analysis(vec![grp("c1", &["a"], &["r1"], true, true, true), grp("c2", &["b"], &["r2"], true, true, true)], E, E, E, E, E, E, E)),
            ],
        ),
    ]
}

fn sel(retention: i32, entries: Vec<Json>) -> Json {
    json!({"op": "select", "policy": policy_utf8(1000, 10, retention, 1), "entries": entries})
}

fn req(ids: &[&str]) -> Json {
    json!({"selection": {"requiredEntryIds": ids, "preservationLabel": "vectors", "preservationVersion": 1}})
}

/// Required preservation.
pub fn preserve() -> Vec<HandGroup> {
    vec![
        group(
            "required ids, durable set, recency units, selection output (SPEC PRE-1 .. PRE-4)",
            None,
            vec![
                t("always-required kinds; summary and optional context never; retention 1 keeps the last unit", &["PRE-1", "PRE-4"],
                    sel(1, vec![sys("s", "x"), auth("a", "x"), approval("p", "x"), artref("x", "c"), conv("u1", "1"), conv("u2", "2"), opt("o", "o"), summary("m", "m")]),
                    req(&["s", "a", "p", "x", "u2"])),
                t("summary and optional context are not recency units", &["PRE-3", "PRE-4"],
                    sel(2, vec![conv("u1", "1"), summary("m", "m"), opt("o", "o"), conv("u2", "2")]), req(&["u1", "u2"])),
                t("retention counts the last N conversational units", &["PRE-3"],
                    sel(2, vec![conv("u1", "1"), conv("u2", "2"), conv("u3", "3")]), req(&["u2", "u3"])),
                t("retention larger than the number of units keeps them all", &["PRE-3"],
                    sel(10, vec![conv("u1", "1"), conv("u2", "2")]), req(&["u1", "u2"])),
                t("a tool group is one recency unit", &["PRE-3", "DEP-7", "DEP-20"],
                    sel(2, vec![conv("u1", "1"), call("c", &["k"]), result("r", &["k"]), conv("u2", "2")]), req(&["c", "r", "u2"])),
                t("a group's unit sits where the group is first met (its call entry)", &["PRE-3"],
                    sel(1, vec![call("c", &["k"]), conv("u1", "1"), result("r", &["k"])]), req(&["u1"])),
                t("units counted from the end: conversational then group", &["PRE-3"],
                    sel(2, vec![call("c1", &["k1"]), result("r1", &["k1"]), conv("u1", "1"), call("c2", &["k2"]), result("r2", &["k2"])]),
                    req(&["u1", "c2", "r2"])),
                t("a complete reference-bearing group is required regardless of recency", &["PRE-1", "DEP-7"],
                    sel(1, vec![call("c", &["k"]), result_ref("r", "k", "doc"), conv("u1", "1"), conv("u2", "2")]), req(&["c", "r", "u2"])),
                t("a complete group without references is not required when old", &["PRE-1", "PRE-3"],
                    sel(1, vec![call("c", &["k"]), result("r", &["k"]), conv("u1", "1"), conv("u2", "2")]), req(&["u2"])),
                t("an incomplete (orphaned) group is required regardless of recency", &["PRE-1", "DEP-7"],
                    sel(1, vec![call("c", &["k"]), conv("u1", "1"), conv("u2", "2")]), req(&["c", "u2"])),
                t("an orphan result is required regardless of recency", &["PRE-1"],
                    sel(1, vec![result("r", &["kx"]), conv("u1", "1"), conv("u2", "2")]), req(&["r", "u2"])),
                t("duplicate-result carriers are all required", &["PRE-1"],
                    sel(1, vec![call("c", &["k"]), result("r1", &["k"]), result("r2", &["k"]), conv("u1", "1"), conv("u2", "2")]),
                    req(&["c", "r1", "r2", "u2"])),
                t("a reordered group is required", &["PRE-1"],
                    sel(1, vec![result("r", &["k"]), call("c", &["k"]), conv("u1", "1"), conv("u2", "2")]), req(&["r", "c", "u2"])),
                t("a reference-less recoverable body is required", &["PRE-1", "PRE-2", "DEP-7"],
                    sel(1, vec![body("b", "doc"), conv("u1", "1"), conv("u2", "2")]), req(&["b", "u2"])),
                t("a body whose digest is durable (artifact reference) is not required and not a unit", &["PRE-1", "PRE-2", "PRE-3"],
                    sel(1, vec![artref("x", "doc"), conv("u1", "1"), body("b", "doc")]), req(&["x", "u1"])),
                t("a body made durable by a tool result reference is not required", &["PRE-2", "DEP-8"],
                    sel(1, vec![call("c", &["k"]), result_ref("r", "k", "doc"), body("b", "doc"), conv("u1", "1")]), req(&["c", "r", "u1"])),
                t("a body never makes itself durable: two bodies with one digest are both required", &["PRE-2"],
                    sel(1, vec![body("b1", "doc"), body("b2", "doc"), conv("u", "1")]), req(&["b1", "b2", "u"])),
                t("an artifact reference to other content does not make the body durable", &["PRE-2"],
                    sel(1, vec![artref("x", "other"), body("b", "doc"), conv("u", "1")]), req(&["x", "b", "u"])),
                t("a pure orphan result is a one-entry recency unit", &["PRE-3"],
                    sel(2, vec![conv("u1", "1"), result("r", &["kx"]), conv("u2", "2")]), req(&["r", "u2"])),
                t("only required ids when there are no units", &["PRE-1"],
                    sel(3, vec![sys("s", "x"), opt("o", "y")]), req(&["s"])),
                t("the empty list", &["PRE-4"], sel(1, vec![]), req(&[])),
                t("label and version come from the policy", &["PRE-4"],
                    json!({"op": "select", "policy": {"hardLimit": 10, "triggerMargin": 1, "recentMessageRetentionCount": 1,
                        "maximumCompactionAttempts": 1, "preservationLabel": "foundry-harness-bundle", "preservationVersion": 7,
                        "estimator": {"kind": "utf8"}}, "entries": [conv("u", "x")]}),
                    json!({"selection": {"requiredEntryIds": ["u"], "preservationLabel": "foundry-harness-bundle", "preservationVersion": 7}})),
                t("duplicate ids are an argument error naming the id", &["PRE-1", "ERR-1"],
                    sel(1, vec![conv("u", "1"), sys("s", "2"), conv("u", "3")]), err_entry("InvalidArgument", "u")),
                t("cancellation before selection", &["PRE-4", "ASM-16"],
                    json!({"op": "select", "policy": policy_utf8(10, 1, 1, 1), "entries": [conv("u", "1")], "cancel": "before"}),
                    err("Cancelled")).flags(&["Cancellation"]),
            ],
        ),
    ]
}
