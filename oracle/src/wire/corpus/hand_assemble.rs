//! Hand-written vectors: assembly outcomes without churn (ASM-1 .. ASM-4, ASM-7 .. ASM-9,
//! ASM-11 .. ASM-15). Every expectation was traced by hand through the pseudo-code of S37 / S39
//! with table-estimator sizes (threshold T = H - M; "fits" means size <= H).

use serde_json::{json, Value as Json};

use super::dsl::*;
use super::{group, t, HandGroup};

/// Expected assembly summary: outcome, final ids (None for terminations), original size, final
/// size, attempts, stage code (see [`stages`]), required ids.
pub fn asm(
    outcome: &str,
    final_ids: Option<&[&str]>,
    original: i32,
    final_size: i32,
    attempts: i32,
    stage_code: &str,
    required: &[&str],
) -> Json {
    let accepted = final_ids.map(|_| json!({"outcome": "Accepted", "rejectionReasons": []}));
    json!({"assembly": {"outcome": outcome, "finalEntryIds": final_ids, "originalEstimatedSize": original,
        "finalEstimatedSize": final_size, "attemptCount": attempts, "stages": stages(stage_code),
        "requiredEntryIds": required, "finalVerification": accepted}})
}

/// An assemble case over static entries with a scripted reducer.
pub fn run(policy: Json, entries: Vec<Json>, steps: Vec<Json>) -> Json {
    json!({"op": "assemble", "policy": policy, "entries": entries, "reducer": {"kind": "scripted", "steps": steps}})
}

/// A `propose` step keeping ids and adding new entries.
pub fn keep(ids: &[&str]) -> Json {
    json!({"propose": ids})
}

/// H = 100, M = 20 (T = 80), retention 1, `attempts`, table sizes, default 10.
pub fn p(attempts: i32, sizes: &[(&str, i32)]) -> Json {
    policy_table(100, 20, 1, attempts, sizes, 10)
}

/// The outcome groups.
pub fn outcomes() -> Vec<HandGroup> {
    let below = group(
        "below the trigger (SPEC ASM-7, POL-4)",
        None,
        vec![
            t(
                "stable below the trigger: WithinLimit, [Snap, Snap], 0 attempts",
                &["ASM-7", "ASM-14", "ASM-1", "ASM-3", "SNAP-3", "ASM-2"],
                run(
                    p(3, &[]),
                    vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")],
                    vec![],
                ),
                asm(
                    "WithinLimit",
                    Some(&["s", "u1", "u2"]),
                    30,
                    30,
                    0,
                    "SS",
                    &["s", "u2"],
                ),
            )
            .flags(&["WorkedExample"]),
            t(
                "one below the threshold does not trigger",
                &["ASM-7", "POL-4"],
                run(
                    p(3, &[("u1", 59)]),
                    vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")],
                    vec![json!("nothing")],
                ),
                asm(
                    "WithinLimit",
                    Some(&["s", "u1", "u2"]),
                    79,
                    79,
                    0,
                    "SS",
                    &["s", "u2"],
                ),
            )
            .flags(&["Boundary"]),
            t(
                "the reducer is never called below the trigger (a failing script is not reached)",
                &["ASM-7", "ASM-4"],
                run(
                    p(3, &[]),
                    vec![conv("u1", "a")],
                    vec![json!({"fail": "must not be called"})],
                ),
                asm("WithinLimit", Some(&["u1"]), 10, 10, 0, "SS", &["u1"]),
            ),
            t(
                "the empty history",
                &["ASM-7"],
                run(p(1, &[]), vec![], vec![]),
                asm("WithinLimit", Some(&[]), 0, 0, 0, "SS", &[]),
            ),
            t(
                "an invalid tool structure below the trigger is Irreducible (no capture after)",
                &["ASM-12", "ASM-7", "ASM-1", "DEP-4"],
                run(p(3, &[]), vec![call("c", &["k"]), conv("u", "a")], vec![]),
                asm("Irreducible", None, 20, 20, 0, "S", &["c", "u"]),
            )
            .flags(&["Deviation"]),
            t(
                "below-trigger Irreducible reports version and required ids of the judged list",
                &["ASM-12", "ASM-13"],
                run(
                    p(3, &[]),
                    vec![
                        sys("s", "x"),
                        result("r", &["k"]),
                        conv("u1", "a"),
                        conv("u2", "b"),
                    ],
                    vec![],
                ),
                json!({"assembly": {"outcome": "Irreducible", "requiredEntryIds": ["s", "r", "u2"], "latestSnapshotVersion": 0, "finalEntryIds": null}}),
            ),
        ],
    );
    let eviction = group(
        "recoverable-body eviction and the margin-restored rule (SPEC ASM-8, DEP-3)",
        None,
        vec![
            t("margin restored by eviction: Reduced, [Snap, Eviction, Snap], 0 attempts", &["ASM-8", "ASM-14", "ASM-7", "DEP-3", "ASM-2"],
                run(p(3, &[("b", 60)]), vec![artref("x", "doc"), body("b", "doc"), conv("u1", "a"), conv("u2", "b")], vec![]),
                asm("Reduced", Some(&["x", "u1", "u2"]), 90, 30, 0, "SES", &["x", "u2"])).flags(&["WorkedExample"]),
            t("eviction landing exactly at the threshold does not restore the margin (strict)", &["ASM-8", "ASM-7", "DEP-3"],
                run(p(3, &[("b", 20), ("u1", 35), ("u2", 35)]), vec![artref("x", "doc"), body("b", "doc"), conv("u1", "a"), conv("u2", "b")], vec![]),
                asm("Reduced", Some(&["x", "u1", "u2"]), 100, 80, 1, "SERSS", &["x", "u2"])).flags(&["Boundary", "Deviation"]),
            t("eviction then a fitting proposal: [Snap, Eviction, Attempt, Snap, Snap]", &["ASM-8", "ASM-7", "ASM-4"],
                run(p(3, &[("u1", 40), ("u2", 40)]), vec![artref("x", "doc"), body("b", "doc"), conv("u1", "a"), conv("u2", "b")], vec![keep(&["x", "u2"])]),
                asm("Reduced", Some(&["x", "u2"]), 100, 50, 1, "SERSS", &["x", "u2"])),
            t("only bodies with a durable digest are evicted; reference-less bodies stay (required)", &["ASM-8", "PRE-1"],
                run(p(3, &[("b1", 30), ("b2", 40)]), vec![artref("x", "doc"), body("b1", "doc"), body("b2", "other"), conv("u1", "a")], vec![]),
                asm("Reduced", Some(&["x", "b2", "u1"]), 90, 60, 0, "SES", &["x", "b2", "u1"])),
            t("a body made durable by a reference-bearing tool result is evicted", &["ASM-8", "PRE-2", "DEP-8"],
                run(p(3, &[("b", 70)]), vec![call("c", &["k"]), result_ref("r", "k", "doc"), body("b", "doc"), conv("u", "a")], vec![]),
                asm("Reduced", Some(&["c", "r", "u"]), 100, 30, 0, "SES", &["c", "r", "u"])),
            t("eviction restoring the margin but verifying rejected falls through to the reducer and the fallback", &["ASM-8", "ASM-7", "ASM-9", "ASM-12"],
                run(p(3, &[("b", 70)]), vec![artref("x", "doc"), call("c", &["k"]), body("b", "doc"), conv("u", "a")], vec![]),
                asm("Irreducible", None, 100, 30, 1, "SERSF", &["x", "c", "u"])),
            t("no eviction stage when nothing is durable", &["ASM-8"],
                run(p(3, &[("b", 70)]), vec![body("b", "doc"), conv("u", "a")], vec![keep(&["b", "u"])]),
                asm("WithinLimit", Some(&["b", "u"]), 80, 80, 1, "SRSS", &["b", "u"])),
        ],
    );
    let reducer = group(
        "reducer attempts: accepted, invalid, non-progressing (SPEC ASM-4, ASM-7, ASM-11)",
        None,
        vec![
            t("first proposal fits: [Snap, Attempt, Snap, Snap], 1 attempt", &["ASM-7", "ASM-14", "ASM-11", "ASM-2"],
                run(p(3, &[("u1", 50), ("u2", 30)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")], vec![keep(&["s", "u2"])]),
                asm("Reduced", Some(&["s", "u2"]), 90, 40, 1, "SRSS", &["s", "u2"])).flags(&["WorkedExample"]),
            t("at the threshold an echoing reducer yields WithinLimit with 1 attempt", &["ASM-7", "POL-4", "ASM-11", "DEP-2"],
                run(p(3, &[("s", 20), ("u1", 30), ("u2", 30)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")], vec![json!("echo")]),
                asm("WithinLimit", Some(&["s", "u1", "u2"]), 80, 80, 1, "SRSS", &["s", "u2"])).flags(&["Boundary", "Deviation"]),
            t("the default reducer (no reducer given) echoes", &["ASM-4", "DEP-2"],
                json!({"op": "assemble", "policy": p(3, &[("u1", 75)]), "entries": [sys("s", "x"), conv("u1", "a")]}),
                asm("WithinLimit", Some(&["s", "u1"]), 85, 85, 1, "SRSS", &["s", "u1"])),
            t("a valid, smaller proposal still over the limit earns another attempt", &["ASM-7", "ASM-11"],
                run(p(3, &[("u1", 50), ("u2", 45), ("u3", 50)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b"), conv("u3", "c")],
                    vec![keep(&["s", "u2", "u3"]), keep(&["s", "u3"])]),
                asm("Reduced", Some(&["s", "u3"]), 155, 60, 2, "SRSRSS", &["s", "u3"])),
            t("the second request is the previous proposal (keep ids refer to it)", &["ASM-4"],
                run(p(3, &[("u1", 50), ("u2", 45), ("u3", 50)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b"), conv("u3", "c")],
                    vec![keep(&["s", "u2", "u3"]), keep(&["s", "u1", "u3"])]),
                err("ReducerFailed")),
            t("an invalid proposal when the current list is over the limit goes to the fallback, attempts unused", &["ASM-7", "ASM-9", "ASM-11", "DEP-1"],
                run(p(3, &[("u1", 50), ("u2", 50)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")], vec![keep(&["u2"]), keep(&["s", "u2"])]),
                asm("PreservationFallback", Some(&["s", "u2"]), 110, 60, 1, "SRSFS", &["s", "u2"])).flags(&["Deviation"]),
            t("an invalid proposal when the current list fits preserves it: WithinLimit", &["ASM-7", "DEP-1"],
                run(p(3, &[("u1", 40), ("u2", 40)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")], vec![keep(&["u2"])]),
                asm("WithinLimit", Some(&["s", "u1", "u2"]), 90, 90, 1, "SRSS", &["s", "u2"])).flags(&["Deviation"]),
            t("a forged proposal is invalid: the current list is preserved", &["ASM-7", "VER-1"],
                run(p(3, &[("u1", 40), ("u2", 40)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")],
                    vec![json!({"propose": ["s", {"new": opt("o", "tiny")}, "u2"]})]),
                asm("WithinLimit", Some(&["s", "u1", "u2"]), 90, 90, 1, "SRSS", &["s", "u2"])),
            t("a non-progressing proposal after eviction preserves the evicted list: Reduced", &["ASM-7", "ASM-8"],
                run(p(3, &[("u1", 40), ("u2", 40)]), vec![artref("x", "doc"), body("b", "doc"), conv("u1", "a"), conv("u2", "b")], vec![json!("echo")]),
                asm("Reduced", Some(&["x", "u1", "u2"]), 100, 90, 1, "SERSS", &["x", "u2"])),
            t("a proposal equal in size is non-progressing", &["ASM-7"],
                run(p(3, &[("u1", 40), ("u2", 40), ("sum", 40)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")],
                    vec![json!({"propose": ["s", {"new": summary("sum", "same size")}, "u2"]})]),
                asm("WithinLimit", Some(&["s", "u1", "u2"]), 90, 90, 1, "SRSS", &["s", "u2"])),
            t("a new summary entry is accepted", &["ASM-7", "VER-1"],
                run(p(3, &[("u1", 60), ("u2", 20)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")],
                    vec![json!({"propose": ["s", {"new": summary("sum", "short")}, "u2"]})]),
                asm("Reduced", Some(&["s", "sum", "u2"]), 90, 40, 1, "SRSS", &["s", "u2"])),
            t("a proposal dropping the required reference is rejected; the evicted list is preserved", &["ASM-7", "VER-1"],
                run(p(3, &[("u1", 40), ("u2", 40)]), vec![artref("x", "doc"), body("b", "doc"), conv("u1", "a"), conv("u2", "b")], vec![keep(&["u2"])]),
                asm("Reduced", Some(&["x", "u1", "u2"]), 100, 90, 1, "SERSS", &["x", "u2"])),
            t("all attempts valid and shrinking but still over the limit: fallback, Irreducible", &["ASM-7", "ASM-9", "ASM-11", "ASM-12"],
                run(p(2, &[("u1", 50), ("u2", 50), ("u3", 95)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b"), conv("u3", "c")],
                    vec![keep(&["s", "u2", "u3"]), keep(&["s", "u3"])]),
                asm("Irreducible", None, 205, 105, 2, "SRSRSF", &["s", "u3"])),
            t("a single permitted attempt, valid but over the limit, then the fallback succeeds", &["ASM-9", "ASM-11"],
                run(p(1, &[("u1", 50), ("u2", 70), ("u3", 30)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b"), conv("u3", "c")],
                    vec![keep(&["s", "u2", "u3"])]),
                asm("PreservationFallback", Some(&["s", "u3"]), 160, 40, 1, "SRSFS", &["s", "u3"])),
        ],
    );
    let fallback = group(
        "deterministic fallback (SPEC ASM-9, ASM-12, DEP-6)",
        None,
        vec![
            t("the fallback keeps optional context when everything fits", &["ASM-9"],
                run(p(3, &[("o", 20), ("u1", 50), ("u2", 30)]), vec![sys("s", "x"), opt("o", "o"), conv("u1", "a"), conv("u2", "b")], vec![keep(&["u2"])]),
                asm("PreservationFallback", Some(&["s", "o", "u2"]), 110, 60, 1, "SRSFS", &["s", "u2"])),
            t("optional context is all-or-nothing", &["ASM-9", "DEP-6"],
                run(p(3, &[("o1", 30), ("o2", 30), ("u1", 50), ("u2", 40)]),
                    vec![sys("s", "x"), opt("o1", "o"), opt("o2", "p"), conv("u1", "a"), conv("u2", "b")], vec![keep(&["u2"])]),
                asm("PreservationFallback", Some(&["s", "u2"]), 160, 50, 1, "SRSFS", &["s", "u2"])).flags(&["Deviation"]),
            t("required content over the limit: Irreducible with the required-only size, no capture after the fallback", &["ASM-9", "ASM-12", "ASM-14", "ASM-2"],
                run(p(3, &[("s", 90), ("u2", 20)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")], vec![keep(&["s", "u2"]), json!("echo")]),
                asm("Irreducible", None, 120, 110, 2, "SRSRSF", &["s", "u2"])).flags(&["WorkedExample"]),
            t("Irreducible may report a size within the hard limit (required-only list fails verification)", &["ASM-9", "ASM-12", "ASM-3", "DEP-6"],
                run(p(3, &[("u1", 60), ("u2", 40)]), vec![call("c", &["k"]), conv("u1", "a"), conv("u2", "b")], vec![json!("echo")]),
                asm("Irreducible", None, 110, 50, 1, "SRSF", &["c", "u2"])).flags(&["Deviation"]),
            t("the fallback keeps reference-bearing tool exchanges and reference-less bodies", &["ASM-9", "PRE-1"],
                run(p(3, &[("u1", 60), ("b", 20)]), vec![call("c", &["k"]), result_ref("r", "k", "doc"), body("b", "other"), conv("u1", "a"), conv("u2", "b")],
                    vec![keep(&["u2"])]),
                asm("PreservationFallback", Some(&["c", "r", "b", "u2"]), 110, 50, 1, "SRSFS", &["c", "r", "b", "u2"])),
            t("the fallback runs on the full snapshot, keeping the durable body's reference but not the body", &["ASM-9", "ASM-8"],
                run(p(3, &[("b", 20), ("o", 30), ("u1", 70)]), vec![artref("x", "doc"), body("b", "doc"), opt("o", "o"), conv("u1", "a"), conv("u2", "b")],
                    vec![keep(&["u2"])]),
                asm("PreservationFallback", Some(&["x", "o", "u2"]), 140, 50, 1, "SERSFS", &["x", "u2"])),
        ],
    );
    let purity = group(
        "result record invariants and purity (SPEC ASM-3, ASM-15)",
        None,
        vec![
            t("success carries final entries and an accepted verification with the required ids", &["ASM-3", "ASM-13"],
                run(p(3, &[]), vec![sys("s", "x"), conv("u", "a")], vec![]),
                json!({"assembly": {"finalVerification": {"outcome": "Accepted", "rejectionReasons": [], "missingRequiredEntryIds": [],
                    "invalidEntryIds": [], "preservationOnlyFallbackEntryIds": ["s", "u"]}, "hardLimit": 100, "latestSnapshotVersion": 0}})),
            t("the initial size is computed once more for the below-trigger check: a pure estimator gives one answer", &["ASM-15"],
                run(policy_utf8(100, 20, 1, 1), vec![conv("u", "hello")], vec![]),
                asm("WithinLimit", Some(&["u"]), 5, 5, 0, "SS", &["u"])),
            t("UTF-8 sizes end to end", &["ASM-7", "EST-2"],
                run(policy_utf8(100, 20, 1, 3), vec![sys("s", "be brief"), conv("u1", &"a".repeat(60)), conv("u2", &"b".repeat(30))], vec![keep(&["s", "u2"])]),
                asm("Reduced", Some(&["s", "u2"]), 98, 38, 1, "SRSS", &["s", "u2"])),
        ],
    );
    vec![below, eviction, reducer, fallback, purity]
}
