//! Hand-written vectors: snapshots, version checks, restarts and churn (SNAP-1 .. SNAP-5,
//! ASM-5, ASM-6, ASM-10, ASM-11, ASM-13). One vector per check-site row of S40, for both the
//! restart and the churn column, each traced by hand through S35 .. S41.

use serde_json::{json, Value as Json};

use super::dsl::*;
use super::hand_assemble::{asm, keep, p};
use super::{group, t, HandGroup};

fn sched(policy: Json, steps: Vec<Json>, reducer: Vec<Json>) -> Json {
    json!({"op": "assemble", "policy": policy, "snapshots": steps, "reducer": {"kind": "scripted", "steps": reducer}})
}

fn v(version: i64, entries: Vec<Json>) -> Json {
    json!({"version": version, "entries": entries})
}

/// A step repeating the previous entries with a new version.
fn vs(version: i64) -> Json {
    json!({"version": version})
}

/// Below the trigger: s, u1, u2 at 10 each.
fn a() -> Vec<Json> {
    vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")]
}

/// Margin restorable by eviction: x 10, b 60, u1 10, u2 10.
fn e() -> Vec<Json> {
    vec![
        artref("x", "doc"),
        body("b", "doc"),
        conv("u1", "a"),
        conv("u2", "b"),
    ]
}

/// Triggered (90), proposal [s, u2] fits (40): s 10, u1 50, u2 30.
fn f_sizes(m: i32) -> Json {
    p(m, &[("u1", 50), ("u2", 30), ("b", 60)])
}

/// Invalid proposals preserve (s 10, u1 40, u2 40 = 90 <= H).
fn f2_sizes(m: i32) -> Json {
    p(m, &[("u1", 40), ("u2", 40)])
}

/// Over the limit (s 10, u1 50, u2 50 = 110): invalid proposals go to the fallback.
fn g_sizes(m: i32) -> Json {
    p(m, &[("u1", 50), ("u2", 50), ("o", 20)])
}

fn with_extra(mut es: Vec<Json>, extra: Json) -> Vec<Json> {
    es.push(extra);
    es
}

/// Churn, restarts and snapshots.
pub fn churn() -> Vec<HandGroup> {
    let sites = group(
        "check sites: restart (consumes?) and churn (SPEC ASM-5, ASM-10, ASM-11)",
        None,
        vec![
            t("below-trigger site: a version change restarts and consumes an attempt", &["ASM-5", "ASM-10", "ASM-11", "SNAP-5", "DEP-5"],
                sched(p(3, &[]), vec![v(0, a()), vs(1)], vec![]),
                json!({"assembly": {"outcome": "WithinLimit", "attemptCount": 1, "stages": stages("SSMS"), "latestSnapshotVersion": 1,
                    "finalEntryIds": ["s", "u1", "u2"], "originalEstimatedSize": 30}})).flags(&["Churn"]),
            t("below-trigger site with the budget used: ConcurrentMutationLimit, judged on the observed snapshot", &["ASM-5", "ASM-6", "ASM-10", "ASM-13"],
                sched(p(1, &[]), vec![v(0, a()), vs(1), v(2, with_extra(a(), conv("u3", "c")))], vec![]),
                json!({"assembly": {"outcome": "ConcurrentMutationLimit", "finalEntryIds": null, "originalEstimatedSize": 30, "finalEstimatedSize": 40,
                    "attemptCount": 1, "stages": stages("SSMS"), "requiredEntryIds": ["s", "u3"], "latestSnapshotVersion": 2, "finalVerification": null}})).flags(&["Churn"]),
            t("a restart picks up the new entries; the original size stays the anchor", &["ASM-5", "ASM-7", "ASM-13"],
                sched(p(3, &[]), vec![v(0, a()), v(1, with_extra(a(), conv("u3", "c")))], vec![]),
                json!({"assembly": {"outcome": "WithinLimit", "finalEntryIds": ["s", "u1", "u2", "u3"], "originalEstimatedSize": 30,
                    "finalEstimatedSize": 40, "attemptCount": 1, "stages": stages("SSMS"), "requiredEntryIds": ["s", "u3"], "latestSnapshotVersion": 1}})).flags(&["Churn"]),
            t("margin-restored site: restart consumes an attempt and re-runs the eviction", &["ASM-10", "ASM-11", "ASM-8", "DEP-5"],
                sched(p(3, &[("b", 60)]), vec![v(0, e()), vs(1)], vec![]),
                json!({"assembly": {"outcome": "Reduced", "attemptCount": 1, "stages": stages("SESMES"), "latestSnapshotVersion": 1, "finalEntryIds": ["x", "u1", "u2"]}})).flags(&["Churn"]),
            t("margin-restored site with the budget used: churn", &["ASM-10", "ASM-6"],
                sched(p(1, &[("b", 60)]), vec![v(0, e()), vs(1), vs(2)], vec![]),
                asm("ConcurrentMutationLimit", None, 90, 90, 1, "SESMES", &["x", "u2"])).flags(&["Churn"]),
            t("post-reducer site: restart does not consume an attempt", &["ASM-10", "ASM-11"],
                sched(f_sizes(3), vec![v(0, a()), vs(1)], vec![keep(&["s", "u2"]), keep(&["s", "u2"])]),
                json!({"assembly": {"outcome": "Reduced", "attemptCount": 2, "stages": stages("SRSMRSS"), "latestSnapshotVersion": 1, "finalEntryIds": ["s", "u2"]}})).flags(&["Churn"]),
            t("post-reducer site right after the last permitted reducer call: churn", &["ASM-10", "ASM-11", "ASM-6"],
                sched(f_sizes(1), vec![v(0, a()), vs(1)], vec![keep(&["s", "u2"])]),
                json!({"assembly": {"outcome": "ConcurrentMutationLimit", "finalEstimatedSize": 90, "attemptCount": 1, "stages": stages("SRS"),
                    "requiredEntryIds": ["s", "u2"], "latestSnapshotVersion": 1}})).flags(&["Churn", "Boundary"]),
            t("reduced-proposal site: restart does not consume an attempt", &["ASM-10", "ASM-11"],
                sched(f_sizes(3), vec![v(0, a()), vs(0), vs(1)], vec![keep(&["s", "u2"]), keep(&["s", "u2"])]),
                json!({"assembly": {"outcome": "Reduced", "attemptCount": 2, "stages": stages("SRSSMRSS"), "latestSnapshotVersion": 1}})).flags(&["Churn"]),
            t("reduced-proposal site with the budget used: churn", &["ASM-10", "ASM-6"],
                sched(f_sizes(1), vec![v(0, a()), vs(0), vs(1)], vec![keep(&["s", "u2"])]),
                asm("ConcurrentMutationLimit", None, 90, 90, 1, "SRSS", &["s", "u2"])).flags(&["Churn"]),
            t("preserve-current site: restart does not consume an attempt", &["ASM-10", "ASM-11"],
                sched(f2_sizes(3), vec![v(0, a()), vs(0), vs(1)], vec![keep(&["u2"])]),
                json!({"assembly": {"outcome": "WithinLimit", "attemptCount": 2, "stages": stages("SRSSMRSS"), "latestSnapshotVersion": 1}})).flags(&["Churn"]),
            t("preserve-current site with the budget used: churn", &["ASM-10", "ASM-6"],
                sched(f2_sizes(1), vec![v(0, a()), vs(0), vs(1)], vec![keep(&["u2"])]),
                asm("ConcurrentMutationLimit", None, 90, 90, 1, "SRSS", &["s", "u2"])).flags(&["Churn"]),
            t("fallback required-only site: restart consumes an attempt and stays in the fallback", &["ASM-10", "ASM-11", "ASM-9", "DEP-5", "DEP-6"],
                sched(g_sizes(3), vec![v(0, a()), vs(0), vs(1)], vec![keep(&["u2"])]),
                json!({"assembly": {"outcome": "PreservationFallback", "finalEntryIds": ["s", "u2"], "attemptCount": 2, "stages": stages("SRSFSMS"),
                    "latestSnapshotVersion": 1}})).flags(&["Churn", "Deviation"]),
            t("fallback extended site: restart consumes an attempt and stays in the fallback", &["ASM-10", "ASM-9"],
                sched(g_sizes(3), vec![v(0, vec![sys("s", "x"), opt("o", "o"), conv("u1", "a"), conv("u2", "b")]), vs(0), vs(4)], vec![keep(&["u2"])]),
                json!({"assembly": {"outcome": "PreservationFallback", "finalEntryIds": ["s", "o", "u2"], "attemptCount": 2, "stages": stages("SRSFSMS"),
                    "latestSnapshotVersion": 4}})).flags(&["Churn"]),
            t("fallback site with the budget used: churn (no fallback rerun)", &["ASM-10", "ASM-6"],
                sched(g_sizes(1), vec![v(0, a()), vs(0), vs(1)], vec![keep(&["u2"])]),
                asm("ConcurrentMutationLimit", None, 110, 110, 1, "SRSFS", &["s", "u2"])).flags(&["Churn"]),
        ],
    );
    let budget = group(
        "attempt accounting across restarts (SPEC ASM-11, ASM-12)",
        None,
        vec![
            t("restarts that used up the budget skip the reducer; the fallback runs", &["ASM-11", "ASM-9", "DEP-5"],
                sched(g_sizes(1), vec![v(0, vec![sys("s", "x"), conv("u1", "a")]), v(1, a())], vec![json!({"fail": "must not be called"})]),
                asm("PreservationFallback", Some(&["s", "u2"]), 60, 60, 1, "SSMFS", &["s", "u2"])).flags(&["Churn", "Deviation"]),
            t("Irreducible after an earlier restart", &["ASM-12", "ASM-11"],
                sched(p(2, &[("s", 90), ("u2", 20)]), vec![v(0, vec![conv("u1", "a")]), v(1, a())], vec![json!("echo")]),
                asm("Irreducible", None, 10, 110, 2, "SSMRSF", &["s", "u2"])).flags(&["Churn"]),
            t("two restarts then success; attempt count equals the budget", &["ASM-11"],
                sched(p(2, &[]), vec![v(0, a()), vs(1), vs(2), vs(2)], vec![]),
                json!({"assembly": {"outcome": "WithinLimit", "attemptCount": 2, "stages": stages("SSMSMS"), "latestSnapshotVersion": 2}})).flags(&["Churn", "Boundary"]),
            t("three consecutive changes with a budget of two: churn at the third", &["ASM-6", "ASM-11"],
                sched(p(2, &[]), vec![v(0, a()), vs(1), vs(2), vs(3)], vec![]),
                json!({"assembly": {"outcome": "ConcurrentMutationLimit", "attemptCount": 2, "stages": stages("SSMSMS"), "latestSnapshotVersion": 3}})).flags(&["Churn"]),
        ],
    );
    let snaps = group(
        "snapshots and providers (SPEC SNAP-1, SNAP-2, SNAP-3, SNAP-5)",
        None,
        vec![
            t(
                "the assembler compares versions only: same version, different entries, no restart",
                &["SNAP-2", "ASM-5"],
                sched(
                    p(3, &[]),
                    vec![v(0, a()), v(0, with_extra(a(), conv("u3", "c")))],
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
            ),
            t(
                "versions need not be consecutive",
                &["SNAP-2", "ASM-5"],
                sched(p(3, &[]), vec![v(5, a()), vs(9)], vec![]),
                json!({"assembly": {"latestSnapshotVersion": 9, "attemptCount": 1}}),
            )
            .flags(&["Churn"]),
            t(
                "the static provider always captures version 0",
                &["SNAP-3"],
                json!({"op": "assemble", "policy": p(3, &[]), "entries": a()}),
                json!({"assembly": {"latestSnapshotVersion": 0}}),
            ),
            t(
                "past the end of the schedule the last snapshot repeats",
                &["SNAP-5"],
                sched(p(3, &[]), vec![v(3, a())], vec![]),
                json!({"assembly": {"latestSnapshotVersion": 3, "stages": stages("SS")}}),
            ),
            t(
                "a negative version at the first capture is an out-of-range error",
                &["SNAP-1", "ERR-1"],
                sched(p(3, &[]), vec![v(-1, a())], vec![]),
                err_field("OutOfRange", "Version"),
            ),
            t(
                "a negative version at a later capture is an out-of-range error",
                &["SNAP-1"],
                sched(p(3, &[]), vec![v(0, a()), vs(-5)], vec![]),
                err_field("OutOfRange", "Version"),
            ),
            t(
                "duplicate entry ids in a snapshot are an argument error",
                &["SNAP-1"],
                json!({"op": "assemble", "policy": p(3, &[]), "entries": [conv("u", "a"), conv("u", "b")]}),
                err_entry("InvalidArgument", "u"),
            ),
            t(
                "duplicate ids appearing only in a later snapshot",
                &["SNAP-1"],
                sched(
                    p(3, &[]),
                    vec![v(0, a()), v(1, vec![conv("u", "a"), conv("u", "b")])],
                    vec![],
                ),
                err_entry("InvalidArgument", "u"),
            ),
            t(
                "a version i64::MAX is fine",
                &["SNAP-1"],
                sched(p(3, &[]), vec![v(i64::MAX, a())], vec![]),
                json!({"assembly": {"latestSnapshotVersion": i64::MAX}}),
            )
            .flags(&["Boundary"]),
            // Appended later: tcIds of the vectors above stay stable.
            t(
                "a decreasing version (a provider contract violation) is still just a change",
                &["SNAP-2", "ASM-5"],
                sched(p(3, &[]), vec![v(5, a()), vs(3)], vec![]),
                json!({"assembly": {"outcome": "WithinLimit", "latestSnapshotVersion": 3, "attemptCount": 1, "stages": stages("SSMS")}}),
            )
            .flags(&["Churn"]),
            t(
                "a version returning to an earlier value is another change",
                &["SNAP-2", "ASM-5", "ASM-11"],
                sched(p(3, &[]), vec![v(0, a()), vs(1), vs(0), vs(0)], vec![]),
                json!({"assembly": {"outcome": "WithinLimit", "latestSnapshotVersion": 0, "attemptCount": 2, "stages": stages("SSMSMS")}}),
            )
            .flags(&["Churn"]),
        ],
    );
    vec![sites, budget, snaps, adopted_sizes()]
}

/// The sizes of a snapshot adopted on a restart are checked like the first capture's (SPEC
/// POL-3): an overflow there is an error, not a size that merely exceeds the limit. Two new
/// system entries of 2^30 each arrive with the version change.
fn adopted_sizes() -> HandGroup {
    let huge = 1_073_741_824;
    let grown = || {
        let mut es = a();
        es.extend([sys("h1", "x"), sys("h2", "y")]);
        es
    };
    group(
        "sizes of snapshots adopted on a restart (SPEC POL-3, ASM-5, ASM-9)",
        None,
        vec![
            t("below-trigger restart adopts a snapshot whose size overflows: Overflow", &["POL-3", "ASM-5", "ASM-10"],
                sched(p(3, &[("h1", huge), ("h2", huge)]), vec![v(0, a()), v(1, grown())], vec![]),
                err("Overflow")).flags(&["Churn", "Boundary"]),
            t("fallback restart adopts a snapshot whose required-only candidate overflows: Overflow, not Irreducible",
                &["POL-3", "ASM-9", "ASM-10"],
                sched(p(3, &[("u1", 50), ("u2", 50), ("h1", huge), ("h2", huge)]), vec![v(0, a()), vs(0), v(1, grown())], vec![keep(&["u2"])]),
                err("Overflow")).flags(&["Churn", "Boundary"]),
        ],
    )
}
