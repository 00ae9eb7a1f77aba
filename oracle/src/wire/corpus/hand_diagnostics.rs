//! Hand-written vectors: the diagnostics record (DIA-1 .. DIA-6), built from the result of the
//! same assembly with the same estimator.

use serde_json::{json, Value as Json};

use super::dsl::*;
use super::hand_assemble::{keep, p, run};
use super::{group, t, HandGroup};

fn contrib(category: &str, size: i32, count: i32) -> Json {
    json!({"category": category, "size": size, "entryCount": count})
}

/// The diagnostics groups.
pub fn diagnostics() -> Vec<HandGroup> {
    vec![group(
        "diagnostics record, mirrors, instances, sources, contributions (SPEC DIA-1 .. DIA-6)",
        None,
        vec![
            t(
                "success instance: every field",
                &["DIA-1", "DIA-2", "DIA-3", "DIA-5", "DIA-6"],
                run(
                    p(3, &[("u1", 20), ("u2", 15)]),
                    vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")],
                    vec![],
                ),
                json!({"diagnostics": {"outcome": "WithinLimit", "measurementUnit": "HostDefinedUnits", "originalSize": 45, "finalSize": 45,
                    "triggerThreshold": 80, "hardLimit": 100, "attemptCount": 0, "stages": stages("SS"),
                    "categoryContributions": [contrib("SystemInstruction", 10, 1), contrib("ConversationalMessage", 35, 2)],
                    "finalSequenceValid": true}}),
            ),
            t(
                "contributions follow category declaration order, not list order",
                &["DIA-6"],
                run(
                    p(3, &[]),
                    vec![
                        opt("o", "x"),
                        conv("u", "y"),
                        artref("x", "doc"),
                        sys("s", "z"),
                        summary("m", "w"),
                    ],
                    vec![],
                ),
                json!({"diagnostics": {"categoryContributions": [contrib("SystemInstruction", 10, 1), contrib("ArtifactReference", 10, 1),
                    contrib("ConversationalMessage", 10, 1), contrib("Summary", 10, 1), contrib("OptionalContext", 10, 1)]}}),
            ),
            t(
                "all nine categories, zero-size entries still counted",
                &["DIA-6", "DIA-2"],
                run(
                    p(3, &[("k4", 0), ("k5", 0)]),
                    vec![
                        sys("k1", "s"),
                        auth("k2", "a"),
                        approval("k3", "p"),
                        call("k4", &["c"]),
                        result("k5", &["c"]),
                        artref("k6", "x"),
                        conv("k7", "m"),
                        summary("k8", "sum"),
                        body("k9", "y"),
                        opt("k10", "o"),
                    ],
                    vec![],
                ),
                json!({"diagnostics": {"finalSize": 80, "categoryContributions": [contrib("SystemInstruction", 10, 1), contrib("AuthoritativeSessionState", 10, 1),
                    contrib("ApprovalSecurityState", 10, 1), contrib("ToolExchange", 0, 2), contrib("ArtifactReference", 10, 1),
                    contrib("ConversationalMessage", 10, 1), contrib("Summary", 10, 1), contrib("RecoverableContextSegment", 10, 1),
                    contrib("OptionalContext", 10, 1)]}}),
            ),
            t(
                "termination instance: no contributions, sequence validity null",
                &["DIA-4", "DIA-1"],
                run(
                    p(3, &[("s", 90), ("u2", 20)]),
                    vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")],
                    vec![keep(&["s", "u2"]), json!("echo")],
                ),
                json!({"diagnostics": {"outcome": "Irreducible", "originalSize": 120, "finalSize": 110, "attemptCount": 2,
                    "stages": stages("SRSRSF"), "categoryContributions": [], "finalSequenceValid": null}}),
            ),
            t(
                "churn termination doubles as its category",
                &["DIA-4", "DIA-2"],
                json!({"op": "assemble", "policy": p(1, &[]), "snapshots": [{"version": 0, "entries": [conv("u", "a")]}, {"version": 1}, {"version": 2}]}),
                json!({"diagnostics": {"outcome": "ConcurrentMutationLimit", "stages": stages("SSMS"), "categoryContributions": [], "finalSequenceValid": null}}),
            ),
            t(
                "a below-trigger Irreducible has one stage and no contributions",
                &["DIA-4"],
                run(p(3, &[]), vec![call("c", &["k"])], vec![]),
                json!({"diagnostics": {"outcome": "Irreducible", "stages": stages("S"), "finalSize": 10, "categoryContributions": []}}),
            ),
            t(
                "stages are mirrored with repeats and order kept; UTF-8 unit",
                &["DIA-2", "DIA-5"],
                run(
                    policy_utf8(100, 20, 1, 3),
                    vec![
                        artref("x", "doc"),
                        body("b", "doc"),
                        conv("u1", &"a".repeat(10)),
                        conv("u2", "b"),
                    ],
                    vec![json!("echo")],
                ),
                json!({"diagnostics": {"outcome": "Reduced", "measurementUnit": "Utf8Bytes", "originalSize": 96, "finalSize": 93,
                    "triggerThreshold": 80, "stages": stages("SERSS"),
                    "categoryContributions": [contrib("ArtifactReference", 82, 1), contrib("ConversationalMessage", 11, 2)]}}),
            ),
            t(
                "a reduced list's contributions cover only the final entries",
                &["DIA-6", "DIA-3"],
                run(
                    p(3, &[("u1", 50), ("u2", 30)]),
                    vec![sys("s", "x"), conv("u1", "a"), conv("u2", "b")],
                    vec![json!({"propose": ["s", {"new": summary("sum", "short")}, "u2"]})],
                ),
                json!({"diagnostics": {"outcome": "Reduced", "finalSize": 50, "attemptCount": 1,
                    "categoryContributions": [contrib("SystemInstruction", 10, 1), contrib("ConversationalMessage", 30, 1), contrib("Summary", 10, 1)]}}),
            ),
            t(
                "a preservation fallback: outcome, stages and contributions",
                &["DIA-3", "DIA-5"],
                run(
                    p(3, &[("o", 20), ("u1", 50), ("u2", 30)]),
                    vec![
                        sys("s", "x"),
                        opt("o", "o"),
                        conv("u1", "a"),
                        conv("u2", "b"),
                    ],
                    vec![keep(&["u2"])],
                ),
                json!({"diagnostics": {"outcome": "PreservationFallback", "finalSize": 60, "stages": stages("SRSFS"),
                    "categoryContributions": [contrib("SystemInstruction", 10, 1), contrib("ConversationalMessage", 30, 1), contrib("OptionalContext", 20, 1)],
                    "finalSequenceValid": true}}),
            ),
            t(
                "the threshold comes from the policy, the sizes from the result",
                &["DIA-5"],
                run(
                    policy_table(1000, 1, 1, 1, &[], 7),
                    vec![conv("u", "a")],
                    vec![],
                ),
                json!({"diagnostics": {"triggerThreshold": 999, "hardLimit": 1000, "originalSize": 7, "finalSize": 7}}),
            ),
        ],
    )]
}
