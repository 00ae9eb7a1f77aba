//! Hand-written vectors: typed errors of an assembly (ERR-1, ASM-4) and cancellation points
//! (ASM-16, VER-5). `size` is `Evaluate`, `req` and `Verify` check on entry, so a token set
//! during any capture that returns a snapshot is observed before the assembly can return: the
//! answer is `Cancelled`, and an error is never an outcome.

use serde_json::{json, Value as Json};

use super::dsl::*;
use super::hand_assemble::{asm, keep, p, run};
use super::{group, t, HandGroup};

fn a() -> Vec<Json> {
    vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")]
}

fn with_cancel(mut case: Json, point: &str) -> Json {
    case["cancel"] = json!(point);
    case
}

fn sched(policy: Json, steps: Vec<Json>, reducer: Vec<Json>) -> Json {
    json!({"op": "assemble", "policy": policy, "snapshots": steps, "reducer": {"kind": "scripted", "steps": reducer}})
}

/// s 10, u1 50, u2 30 = 90: triggered, [s, u2] fits.
fn f() -> Json {
    p(3, &[("u1", 50), ("u2", 30)])
}

/// The error groups.
pub fn errors() -> Vec<HandGroup> {
    let errs = group(
        "typed errors during assembly (SPEC ERR-1, ASM-4, POL-3)",
        None,
        vec![
            t(
                "a reducer returning nothing is an invalid operation",
                &["ASM-4", "ERR-1"],
                run(f(), a(), vec![json!("nothing")]),
                err("InvalidOperation"),
            ),
            t(
                "a failing reducer's error propagates unchanged",
                &["ASM-4", "ERR-1"],
                run(f(), a(), vec![json!({"fail": "boom"})]),
                err("ReducerFailed"),
            ),
            t(
                "a reducer failing at the second attempt: no outcome, the error propagates",
                &["ASM-4"],
                run(
                    p(3, &[("u1", 50), ("u2", 45), ("u3", 50)]),
                    vec![
                        sys("s", "x"),
                        conv("u1", "a"),
                        conv("u2", "b"),
                        conv("u3", "c"),
                    ],
                    vec![keep(&["s", "u2", "u3"]), json!({"fail": "late"})],
                ),
                err("ReducerFailed"),
            ),
            t(
                "a scripted reducer keeping an id absent from the request fails",
                &["ASM-4"],
                run(f(), a(), vec![keep(&["s", "nope"])]),
                err("ReducerFailed"),
            ),
            t(
                "a negative estimate in the initial snapshot",
                &["POL-3", "ERR-1"],
                run(p(3, &[("u1", -1)]), a(), vec![]),
                err_entry("InvalidOperation", "u1"),
            ),
            t(
                "a negative estimate only in a proposal's new entry",
                &["POL-3", "ASM-4"],
                run(
                    p(3, &[("u1", 50), ("u2", 30), ("neg", -5)]),
                    a(),
                    vec![json!({"propose": ["s", {"new": summary("neg", "n")}, "u2"]})],
                ),
                err_entry("InvalidOperation", "neg"),
            ),
            t(
                "the initial size overflowing 32 bits",
                &["POL-3", "ERR-1"],
                run(p(3, &[("u1", 2147483647)]), a(), vec![]),
                err("Overflow"),
            )
            .flags(&["Boundary"]),
            t(
                "a proposal whose size overflows 32 bits",
                &["POL-3"],
                run(
                    p(3, &[("u1", 50), ("u2", 30), ("big", 2147483647)]),
                    a(),
                    vec![json!({"propose": ["s", {"new": summary("big", "b")}, "u2"]})],
                ),
                err("Overflow"),
            )
            .flags(&["Boundary"]),
            t(
                "an invalid policy is answered before anything runs",
                &["POL-2", "ERR-1"],
                json!({"op": "assemble", "policy": {"hardLimit": 10, "triggerMargin": 10, "recentMessageRetentionCount": 1, "maximumCompactionAttempts": 1,
                    "preservationLabel": "l", "preservationVersion": 1, "estimator": {"kind": "utf8"}}, "entries": a()}),
                err_field("OutOfRange", "TriggerMargin"),
            ),
            t(
                "an invalid entry is answered before anything runs",
                &["ENT-5", "ERR-1"],
                run(f(), vec![entry("t", "ToolExchange", "x")], vec![]),
                err_entry("InvalidArgument", "t"),
            ),
            t(
                "an unsupported part inside a reducer's new entry",
                &["ENT-3", "ERR-1"],
                run(
                    f(),
                    a(),
                    vec![
                        json!({"propose": ["s", {"new": {"id": "n", "kind": "Summary", "parts": [{"unsupported": "AudioContent"}]}}]}),
                    ],
                ),
                err_entry("NotSupported", "n"),
            ),
        ],
    );
    let cancel = group(
        "cancellation points (SPEC ASM-16)",
        None,
        vec![
            t("cancelled before the assembly starts", &["ASM-16", "ERR-1"], with_cancel(run(p(3, &[]), a(), vec![]), "before"), err("Cancelled")).flags(&["Cancellation"]),
            t("cancelled during the initial capture: observed by the anchor's Evaluate", &["ASM-16", "POL-3"],
                with_cancel(run(p(3, &[]), a(), vec![]), "capture:0"), err("Cancelled")).flags(&["Cancellation"]),
            t("cancelled during the final capture of a below-trigger success: observed by req(cur) of the success", &["ASM-16", "ASM-13"],
                with_cancel(run(p(3, &[]), a(), vec![]), "capture:1"), err("Cancelled")).flags(&["Cancellation"]),
            t("the smallest example: constant size 1, H 10, margin 5, one user entry, cancelled at capture 1", &["ASM-16"],
                with_cancel(json!({"op": "assemble", "policy": policy_const(10, 5, 1, 3, 1), "entries": [conv("u", "hi")]}), "capture:1"),
                err("Cancelled")).flags(&["Cancellation"]),
            t("cancelled during the initial capture of a snapshot with a negative estimate: Evaluate checks before summing", &["ASM-16", "POL-3"],
                with_cancel(run(p(3, &[("u1", -1)]), a(), vec![]), "capture:0"), err("Cancelled")).flags(&["Cancellation"]),
            t("cancelled during a restarting capture: observed at the top of the outer loop", &["ASM-16", "ASM-5"],
                with_cancel(sched(p(3, &[]), vec![json!({"version": 0, "entries": a()}), json!({"version": 1})], vec![]), "capture:1"),
                err("Cancelled")).flags(&["Cancellation", "Churn"]),
            t("cancelled during the reducer call: observed right after it", &["ASM-16", "ASM-4"],
                with_cancel(run(f(), a(), vec![keep(&["s", "u2"])]), "reducer:0"), err("Cancelled")).flags(&["Cancellation"]),
            t("cancelled during the post-reducer capture: observed before verification", &["ASM-16"],
                with_cancel(run(f(), a(), vec![keep(&["s", "u2"])]), "capture:1"), err("Cancelled")).flags(&["Cancellation"]),
            t("cancelled during the final capture of a reduced proposal: observed by req(cur) of the success", &["ASM-16", "ASM-13"],
                with_cancel(run(f(), a(), vec![keep(&["s", "u2"])]), "capture:2"),
                err("Cancelled")).flags(&["Cancellation"]),
            t("cancelled during the final capture of a margin-restored eviction: observed by req(cur) of the success", &["ASM-16", "ASM-8"],
                with_cancel(run(p(3, &[("b", 60)]), vec![artref("x", "doc"), body("b", "doc"), conv("u1", "a"), conv("u2", "b")], vec![]), "capture:1"),
                err("Cancelled")).flags(&["Cancellation"]),
            t("cancelled during the final capture after a non-progressing proposal: observed by req(cur) of the success", &["ASM-16", "ASM-7"],
                with_cancel(run(f(), a(), vec![json!("echo")]), "capture:2"),
                err("Cancelled")).flags(&["Cancellation"]),
            t("cancelled during a fallback restart capture: observed at the top of the fallback loop", &["ASM-16", "ASM-9"],
                with_cancel(sched(p(3, &[("u1", 50), ("u2", 50)]), vec![json!({"version": 0, "entries": a()}), json!({"version": 0}), json!({"version": 1})], vec![keep(&["u2"])]), "capture:2"),
                err("Cancelled")).flags(&["Cancellation", "Churn"]),
            t("cancelled during the final capture of the fallback: observed by req(cur) of the success", &["ASM-16", "ASM-9"],
                with_cancel(run(p(3, &[("u1", 50), ("u2", 50)]), a(), vec![keep(&["u2"])]), "capture:2"),
                err("Cancelled")).flags(&["Cancellation"]),
            t("cancelled during a churning capture: observed by the size of the observed snapshot", &["ASM-16", "ASM-6"],
                with_cancel(sched(p(1, &[]), vec![json!({"version": 0, "entries": a()}), json!({"version": 1}), json!({"version": 2})], vec![]), "capture:2"),
                err("Cancelled")).flags(&["Cancellation", "Churn"]),
            t("verify with a cancelled token: Cancelled, checked before duplicate ids", &["VER-5", "VER-1"],
                json!({"op": "verify", "policy": f(), "original": a(), "proposed": ["s", "s"], "cancel": "before"}),
                err("Cancelled")).flags(&["Cancellation"]),
            t("a cancellation point that is never reached has no effect", &["ASM-16"],
                with_cancel(run(f(), a(), vec![keep(&["s", "u2"])]), "reducer:1"),
                asm("Reduced", Some(&["s", "u2"]), 90, 40, 1, "SRSS", &["s", "u2"])).flags(&["Cancellation"]),
            t("cancelled during the second reducer call", &["ASM-16"],
                with_cancel(run(p(3, &[("u1", 50), ("u2", 45), ("u3", 50)]), vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b"), conv("u3", "c")],
                    vec![keep(&["s", "u2", "u3"]), keep(&["s", "u3"])]), "reducer:1"),
                err("Cancelled")).flags(&["Cancellation"]),
        ],
    );
    vec![errs, cancel]
}
