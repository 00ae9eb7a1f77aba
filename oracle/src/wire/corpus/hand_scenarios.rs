//! Hand-written vectors of the scenario operations: diagnostics records from fields (DIA-1 ..
//! DIA-4, DIA-6), the bridge on its own (BRG-1 .. BRG-3), lease scenarios (LSE-1 .. LSE-10) and
//! node scenarios (NODE-1 .. NODE-6, EVT-1 .. EVT-6), with the departures they exhibit.

use serde_json::{json, Value as Json};

use super::dsl::*;
use super::{group, t, HandGroup};

// ---------------------------------------------------------------------------------------------
// diagnostics

fn rec(outcome: Json, fields: Json) -> Json {
    let mut c = json!({"op": "diagnostics", "outcome": outcome, "measurementUnit": "HostDefinedUnits",
        "originalSize": 50, "finalSize": 30, "triggerThreshold": 80, "hardLimit": 100, "attemptCount": 1,
        "stages": ["SnapshotCaptured", "ReducerAttempt", "SnapshotCaptured"],
        "categoryContributions": [{"category": "SystemInstruction", "size": 10, "entryCount": 1},
                                  {"category": "ConversationalMessage", "size": 20, "entryCount": 2}],
        "finalSequenceValid": true});
    for (k, v) in fields.as_object().into_iter().flatten() {
        c[k] = v.clone();
    }
    c
}

fn term(fields: Json) -> Json {
    let mut c = rec(
        json!("Irreducible"),
        json!({"finalSize": 120, "categoryContributions": [], "finalSequenceValid": null}),
    );
    for (k, v) in fields.as_object().into_iter().flatten() {
        c[k] = v.clone();
    }
    c
}

fn contrib(category: Json, size: i32, count: i32) -> Json {
    json!({"category": category, "size": size, "entryCount": count})
}

/// The `diagnostics` groups.
pub fn records() -> Vec<HandGroup> {
    let io = || err("InvalidOperation");
    vec![group(
        "diagnostics records from their fields (SPEC DIA-1 .. DIA-4, DIA-6)",
        None,
        vec![
            t(
                "a valid success record is echoed field by field",
                &["DIA-1", "DIA-3"],
                rec(json!("Reduced"), json!({})),
                json!({"diagnostics": {"outcome": "Reduced", "measurementUnit": "HostDefinedUnits", "finalSize": 30, "finalSequenceValid": true,
                    "categoryContributions": [contrib(json!("SystemInstruction"), 10, 1), contrib(json!("ConversationalMessage"), 20, 2)]}}),
            ),
            t(
                "ordinals name the mirrored values in declaration order",
                &["DIA-2"],
                rec(
                    json!(1),
                    json!({"measurementUnit": 0, "stages": [0, 2, 4], "categoryContributions": [contrib(json!(0), 10, 1), contrib(json!(5), 20, 2)]}),
                ),
                json!({"diagnostics": {"outcome": "Reduced", "measurementUnit": "Utf8Bytes", "stages": ["SnapshotCaptured", "ReducerAttempt", "DeterministicFallback"],
                    "categoryContributions": [contrib(json!("SystemInstruction"), 10, 1), contrib(json!("ConversationalMessage"), 20, 2)]}}),
            ),
            t(
                "an undefined outcome ordinal is rejected",
                &["DIA-2", "DIA-3"],
                rec(json!(5), json!({})),
                io(),
            ),
            t(
                "an outcome name outside the enum is rejected, never parsed loosely",
                &["DIA-2"],
                rec(json!("reduced"), json!({})),
                io(),
            ),
            t(
                "an undefined unit is rejected",
                &["DIA-3"],
                rec(json!("Reduced"), json!({"measurementUnit": 7})),
                io(),
            ),
            t(
                "a negative number is rejected",
                &["DIA-3"],
                rec(json!("Reduced"), json!({"attemptCount": -1})),
                io(),
            ),
            t(
                "a negative threshold is rejected too",
                &["DIA-3", "DIA-4"],
                term(json!({"triggerThreshold": -1})),
                io(),
            ),
            t(
                "a success above the hard limit is rejected",
                &["DIA-3"],
                rec(
                    json!("WithinLimit"),
                    json!({"finalSize": 130, "categoryContributions": [contrib(json!("Summary"), 130, 1)]}),
                ),
                io(),
            ),
            t(
                "a repeated category is rejected",
                &["DIA-3", "DIA-6"],
                rec(
                    json!("Reduced"),
                    json!({"categoryContributions": [contrib(json!("Summary"), 10, 1), contrib(json!("Summary"), 20, 1)]}),
                ),
                io(),
            ),
            t(
                "an undefined category ordinal is rejected",
                &["DIA-3", "DIA-6"],
                rec(
                    json!("Reduced"),
                    json!({"categoryContributions": [contrib(json!(9), 30, 1)]}),
                ),
                io(),
            ),
            t(
                "a negative contribution size is rejected",
                &["DIA-3"],
                rec(
                    json!("Reduced"),
                    json!({"categoryContributions": [contrib(json!("Summary"), -10, 1), contrib(json!("SystemInstruction"), 40, 1)]}),
                ),
                io(),
            ),
            t(
                "a contribution without entries is rejected",
                &["DIA-3", "DIA-6"],
                rec(
                    json!("Reduced"),
                    json!({"categoryContributions": [contrib(json!("Summary"), 30, 0)]}),
                ),
                io(),
            ),
            t(
                "contributions must sum to the final size",
                &["DIA-3", "DIA-6"],
                rec(
                    json!("Reduced"),
                    json!({"categoryContributions": [contrib(json!("Summary"), 29, 1)]}),
                ),
                io(),
            ),
            t(
                "the checked sum of contributions overflows",
                &["DIA-3"],
                rec(
                    json!("Reduced"),
                    json!({"categoryContributions": [contrib(json!("Summary"), i32::MAX, 1), contrib(json!("SystemInstruction"), 1, 1)]}),
                ),
                err("Overflow"),
            ),
            t(
                "a success needs a valid final sequence",
                &["DIA-3"],
                rec(json!("Reduced"), json!({"finalSequenceValid": false})),
                io(),
            ),
            t(
                "a success without final sequence validity is rejected",
                &["DIA-3"],
                rec(
                    json!("PreservationFallback"),
                    json!({"finalSequenceValid": null}),
                ),
                io(),
            ),
            t(
                "a valid termination record: no contributions, validity absent",
                &["DIA-4", "DIA-1"],
                term(json!({})),
                json!({"diagnostics": {"outcome": "Irreducible", "finalSize": 120, "categoryContributions": [], "finalSequenceValid": null}}),
            ),
            t(
                "a churn termination by ordinal",
                &["DIA-4", "DIA-2"],
                term(json!({"outcome": 4})),
                json!({"diagnostics": {"outcome": "ConcurrentMutationLimit"}}),
            ),
            t(
                "a termination with contributions is rejected",
                &["DIA-4"],
                term(json!({"categoryContributions": [contrib(json!("Summary"), 120, 1)]})),
                io(),
            ),
            t(
                "a termination with final sequence validity is rejected",
                &["DIA-4"],
                term(json!({"finalSequenceValid": true})),
                io(),
            ),
        ],
    )]
}

// ---------------------------------------------------------------------------------------------
// bridge

fn m(role: &str, text: &str) -> Json {
    json!({"role": role, "text": text})
}

fn br(steps: Vec<Json>) -> Json {
    json!({"op": "bridge", "entries": [sys("s", "rules"), conv("u1", "first"), conv("u2", "second")], "steps": steps})
}

fn ids(calls: &[&[&str]]) -> Json {
    let calls: Vec<Json> = calls
        .iter()
        .map(|c| Json::Array(c.iter().map(|id| json!({"id": id})).collect()))
        .collect();
    json!({"bridge": {"calls": calls}})
}

const MINTED: &str =
    "upstream-summary-0-d906b746cb1c8ee090bf7872e4527cb7d08f32fb1ec622f2da0c9624e8d3f1a8";

/// The `bridge` groups.
pub fn bridge_op() -> Vec<HandGroup> {
    vec![group(
        "the upstream-reducer bridge on its own (SPEC BRG-1 .. BRG-3)",
        None,
        vec![
            t("matched messages reuse the request entries verbatim; unmatched entries are dropped", &["BRG-1", "BRG-2"],
                br(vec![json!({"return": [m("system", "rules"), m("user", "second")]})]),
                json!({"bridge": {"calls": [[{"id": "s", "kind": "SystemInstruction", "role": "system", "text": "rules"},
                    {"id": "u2", "kind": "ConversationalMessage", "role": "user", "text": "second"}]]}})).flags(&["Bridge"]),
            t("an unmatched text message becomes a Summary with a minted id", &["BRG-3", "DEP-10"],
                br(vec![json!({"return": [m("system", "rules"), m("assistant", "summary")]})]),
                json!({"bridge": {"calls": [[{"id": "s"}, {"id": MINTED, "kind": "Summary", "role": "assistant", "text": "summary"}]]}})).flags(&["Bridge"]),
            t("an echo returns the request unchanged", &["BRG-1", "BRG-2"], br(vec![json!("echo")]), ids(&[&["s", "u1", "u2"]])).flags(&["Bridge"]),
            t("identical messages match the first unmatched entries in order", &["BRG-2"],
                json!({"op": "bridge", "entries": [conv("a", "same"), conv("b", "same"), conv("c", "x")],
                    "steps": [{"return": [m("user", "same"), m("user", "same")]}]}), ids(&[&["a", "b"]])).flags(&["Bridge"]),
            t("the second call receives the first result, minted summary included", &["BRG-1", "BRG-3"],
                br(vec![json!({"return": [m("system", "rules"), m("assistant", "summary"), m("user", "second")]}),
                    json!({"return": [m("assistant", "summary")]})]),
                ids(&[&["s", MINTED, "u2"], &[MINTED]])).flags(&["Bridge"]),
            t("a null result is a contract error", &["BRG-1", "DEP-10"], br(vec![json!("null")]), err("ReducerContract")).flags(&["Bridge"]),
            t("the upstream's failure propagates", &["BRG-1"], br(vec![json!({"fail": "down"})]), err("ReducerFailed")).flags(&["Bridge"]),
            t("an upstream that throws cancellation: the call is cancelled", &["BRG-1", "ERR-1"], br(vec![json!("cancel")]), err("Cancelled")).flags(&["Bridge", "Cancellation"]),
            t("cancellation thrown by a later call wins over the earlier results", &["BRG-1"],
                br(vec![json!("echo"), json!("cancel")]), err("Cancelled")).flags(&["Bridge", "Cancellation"]),
            t("fabricated tool content is a contract error", &["BRG-3"],
                br(vec![json!({"return": [json!({"role": "assistant", "parts": [{"call": {"callId": "k", "name": "f"}}]})]})]),
                err("ReducerContract")).flags(&["Bridge"]),
        ],
    )]
}

// ---------------------------------------------------------------------------------------------
// leases

fn ls(steps: Vec<Json>) -> Json {
    json!({"op": "leases", "steps": steps})
}

fn seg(id: &str, b: &str) -> Json {
    json!({"id": id, "kind": "RecoverableContextSegment", "segment": {"body": b}})
}

fn cap(call: &str, version: i64, entries: Vec<Json>) -> Json {
    json!({"capture": {"call": call, "version": version, "entries": entries}})
}

fn run(name: &str, delivered: &[&str], reserved: &[(&str, &str)], gate: bool) -> Json {
    let reserved: serde_json::Map<String, Json> = reserved
        .iter()
        .map(|(b, l)| (digest(b), json!(l)))
        .collect();
    json!({"run": {"run": name, "delivered": delivered.iter().map(|b| digest(b)).collect::<Vec<_>>(), "reserved": reserved, "gateOccupied": gate}})
}

fn with(mut a: Json, b: Json) -> Json {
    for (k, v) in b.as_object().into_iter().flatten() {
        a[k] = v.clone();
    }
    a
}

fn steps(xs: Vec<Json>) -> Json {
    json!({"leases": xs})
}

/// The `leases` groups.
pub fn leases() -> Vec<HandGroup> {
    let no_run = || json!({"error": {"kind": "InvalidOperation"}, "run": null});
    vec![
        group("the coordinator of one run (SPEC LSE-1 .. LSE-5)", None, vec![
            t("without a run: reserve, complete and revision fail, release is a no-op", &["LSE-2", "LSE-3", "LSE-4", "LSE-5"],
                ls(vec![json!({"reserve": {"body": "B", "lease": "L"}}), json!({"complete": {"lease": "L"}}),
                    json!({"revision": {"body": "B"}}), json!({"release": {"lease": "L"}})]),
                steps(vec![no_run(), no_run(), no_run(), json!({"run": null})])),
            t("TryReserve: unclaimed, same lease again, another lease, then delivered", &["LSE-1", "LSE-2", "LSE-3", "LSE-5"],
                ls(vec![json!({"beginRun": {}}), json!({"reserve": {"body": "B", "lease": "L"}}), json!({"reserve": {"body": "B", "lease": "L"}}),
                    json!({"revision": {"body": "B"}}), json!({"reserve": {"body": "B", "lease": "M"}}), json!({"complete": {"lease": "L", "forwarded": ["B"]}}),
                    json!({"reserve": {"body": "B", "lease": "M"}}), json!({"revision": {"body": "B"}})]),
                steps(vec![run("R1", &[], &[], false), with(run("R1", &[], &[("B", "L")], false), json!({"reserved": true})),
                    json!({"reserved": true}), json!({"revision": 1}), json!({"reserved": false}), run("R1", &["B"], &[], false),
                    json!({"reserved": false}), json!({"revision": 2})])),
            t("Complete ignores forwarded digests it does not hold and leaves other leases alone", &["LSE-3", "DEP-12"],
                ls(vec![json!({"beginRun": {}}), json!({"reserve": {"body": "A", "lease": "L"}}), json!({"reserve": {"body": "B", "lease": "L"}}),
                    json!({"reserve": {"body": "C", "lease": "M"}}), json!({"complete": {"lease": "L", "forwarded": ["A", "C"]}}),
                    json!({"revision": {"body": "B"}}), json!({"reserve": {"body": "B", "lease": "M"}})]),
                steps(vec![json!({}), json!({}), json!({}), json!({}), run("R1", &["A"], &[("C", "M")], false),
                    json!({"revision": 2}), json!({"reserved": true})])),
            t("Release unreserves and bumps, never delivers; an empty lease changes nothing", &["LSE-4", "LSE-5"],
                ls(vec![json!({"beginRun": {}}), json!({"reserve": {"body": "B", "lease": "L"}}), json!({"release": {"lease": "L"}}),
                    json!({"revision": {"body": "B"}}), json!({"release": {"lease": "L"}}), json!({"revision": {"body": "B"}}),
                    json!({"reserve": {"body": "B", "lease": "M"}})]),
                steps(vec![json!({}), json!({}), run("R1", &[], &[], false), json!({"revision": 2}), json!({}), json!({"revision": 2}), json!({"reserved": true})])),
            t("a counter at its maximum: the reservation overflows and changes nothing", &["LSE-5"],
                ls(vec![json!({"beginRun": {"revisions": {"B": u64::MAX}}}), json!({"reserve": {"body": "B", "lease": "L"}}), json!({"revision": {"body": "B"}})]),
                steps(vec![json!({}), with(run("R1", &[], &[], false), json!({"error": {"kind": "Overflow"}})), json!({"revision": u64::MAX})])),
            t("a commit that would overflow a counter changes nothing", &["LSE-5", "LSE-3"],
                ls(vec![json!({"beginRun": {"revisions": {"B": u64::MAX - 1}}}), json!({"reserve": {"body": "B", "lease": "L"}}),
                    json!({"complete": {"lease": "L", "forwarded": ["B"]}})]),
                steps(vec![json!({}), json!({"reserved": true}), with(run("R1", &[], &[("B", "L")], false), json!({"error": {"kind": "Overflow"}}))])),
        ]),
        group("run scopes (SPEC LSE-6)", None, vec![
            t("BeginRun nests a fresh run and its end restores the previous one", &["LSE-6"],
                ls(vec![json!({"beginRun": {}}), json!({"reserve": {"body": "B", "lease": "L"}}), json!({"beginRun": {}}),
                    json!({"reserve": {"body": "B", "lease": "M"}}), json!({"endScope": {}}), json!({"endScope": {}})]),
                steps(vec![run("R1", &[], &[], false), json!({}), run("R2", &[], &[], false), with(run("R2", &[], &[("B", "M")], false), json!({"reserved": true})),
                    run("R1", &[], &[("B", "L")], false), json!({"run": null})])),
            t("EnsureRunScope reuses the active run; with none it begins a call-local run", &["LSE-6", "DEP-16"],
                ls(vec![json!({"ensureRun": {}}), json!({"reserve": {"body": "B", "lease": "L"}}), json!({"ensureRun": {}}), json!({"endScope": {}}),
                    json!({"endScope": {}}), json!({"ensureRun": {}})]),
                steps(vec![run("R1", &[], &[], false), json!({}), run("R1", &[], &[("B", "L")], false), run("R1", &[], &[("B", "L")], false),
                    json!({"run": null}), run("R2", &[], &[], false)])),
            t("a forked flow shares the active run; separate runs share nothing", &["LSE-6", "LSE-1"],
                ls(vec![json!({"beginRun": {}}), json!({"fork": {"into": "child"}}), json!({"reserve": {"flow": "child", "body": "B", "lease": "L"}}),
                    json!({"revision": {"body": "B"}}), json!({"beginRun": {"flow": "child"}}), json!({"reserve": {"flow": "child", "body": "B", "lease": "M"}})]),
                steps(vec![json!({}), run("R1", &[], &[], false), json!({"reserved": true}), json!({"revision": 1}), run("R2", &[], &[], false), json!({"reserved": true})])),
        ]),
        group("the gate and the per-call protocol (SPEC LSE-7, LSE-10)", None, vec![
            t("a second call of the run waits and is admitted when the first leaves", &["LSE-7", "LSE-10", "DEP-11"],
                ls(vec![json!({"beginRun": {}}), json!({"enter": {"call": "c1"}}), json!({"enter": {"call": "c2"}}), json!({"commit": {"call": "c1"}}),
                    json!({"releaseCall": {"call": "c2"}})]),
                steps(vec![json!({}), with(run("R1", &[], &[], true), json!({"gate": "admitted"})), json!({"gate": "waiting"}),
                    with(run("R1", &[], &[], true), json!({"admitted": "c2"})), run("R1", &[], &[], false)])),
            t("a call cancelled on arrival leaves no trace", &["LSE-7"],
                ls(vec![json!({"beginRun": {}}), json!({"enter": {"call": "c1", "cancelled": true}}), json!({"enter": {"call": "c2"}})]),
                steps(vec![json!({}), with(run("R1", &[], &[], false), json!({"error": {"kind": "Cancelled"}})), json!({"gate": "admitted"})])),
            t("a waiter cancelled while waiting leaves no trace; the holder keeps the gate", &["LSE-7", "DEP-11"],
                ls(vec![json!({"beginRun": {}}), json!({"enter": {"call": "c1"}}), json!({"enter": {"call": "c2"}}), json!({"cancelWaiter": {"call": "c2"}}),
                    json!({"commit": {"call": "c1"}})]),
                steps(vec![json!({}), json!({}), json!({"gate": "waiting"}), with(run("R1", &[], &[], true), json!({"error": {"kind": "Cancelled"}})),
                    run("R1", &[], &[], false)])),
            t("entering without a run is an invalid operation", &["LSE-7"], ls(vec![json!({"enter": {"call": "c1"}})]), steps(vec![no_run()])),
            t("calls of different runs never wait for each other", &["LSE-7", "LSE-6"],
                ls(vec![json!({"beginRun": {}}), json!({"fork": {"into": "other"}}), json!({"beginRun": {"flow": "other"}}), json!({"enter": {"call": "c1"}}),
                    json!({"enter": {"flow": "other", "call": "c2"}})]),
                steps(vec![json!({}), json!({}), json!({}), json!({"gate": "admitted"}), with(run("R2", &[], &[], true), json!({"gate": "admitted"}))])),
        ]),
        group("the lease-filtering provider and the guarantees (SPEC LSE-8 .. LSE-10)", None, vec![
            t("a capture reserves bodies for the call; its own reservations never change the version", &["LSE-8", "DEP-13"],
                ls(vec![json!({"beginRun": {}}), json!({"enter": {"call": "c1"}}), cap("c1", 0, vec![conv("u", "a"), seg("s", "B")]), cap("c1", 0, vec![conv("u", "a"), seg("s", "B")])]),
                steps(vec![json!({}), json!({}), with(run("R1", &[], &[("B", "c1")], true), json!({"snapshot": {"version": 0, "entryIds": ["u", "s"]}})),
                    json!({"snapshot": {"version": 0, "entryIds": ["u", "s"]}})])),
            t("a body held by another lease is filtered out; its release bumps the version and the body is picked up", &["LSE-8", "DEP-13", "DEP-12"],
                ls(vec![json!({"beginRun": {}}), json!({"reserve": {"body": "B", "lease": "other"}}), json!({"enter": {"call": "c1"}}),
                    cap("c1", 0, vec![conv("u", "a"), seg("s", "B")]), json!({"release": {"lease": "other"}}), cap("c1", 0, vec![conv("u", "a"), seg("s", "B")])]),
                steps(vec![json!({}), json!({}), json!({}), json!({"snapshot": {"version": 0, "entryIds": ["u"]}}), json!({}),
                    with(run("R1", &[], &[("B", "c1")], true), json!({"snapshot": {"version": 1, "entryIds": ["u", "s"]}}))])),
            t("a changed inner version changes the effective version", &["LSE-8"],
                ls(vec![json!({"beginRun": {}}), json!({"enter": {"call": "c1"}}), cap("c1", 5, vec![conv("u", "a")]), cap("c1", 9, vec![conv("u", "a")]), cap("c1", 9, vec![conv("u", "a")])]),
                steps(vec![json!({}), json!({}), json!({"snapshot": {"version": 0}}), json!({"snapshot": {"version": 1}}), json!({"snapshot": {"version": 1}})])),
            t("a committed body is never reserved again in the run; a new run starts empty", &["LSE-9", "LSE-10", "LSE-3"],
                ls(vec![json!({"beginRun": {}}), json!({"enter": {"call": "c1"}}), cap("c1", 0, vec![seg("s", "B")]), json!({"commit": {"call": "c1", "forwarded": ["B"]}}),
                    json!({"enter": {"call": "c2"}}), cap("c2", 0, vec![seg("s", "B")]), json!({"commit": {"call": "c2"}}), json!({"beginRun": {}}),
                    json!({"enter": {"call": "c3"}}), cap("c3", 0, vec![seg("s", "B")])]),
                steps(vec![json!({}), json!({}), json!({}), run("R1", &["B"], &[], false), json!({}), json!({"snapshot": {"entryIds": []}}), json!({}),
                    run("R2", &[], &[], false), json!({}), with(run("R2", &[], &[("B", "c3")], true), json!({"snapshot": {"entryIds": ["s"]}}))])),
            t("an abandoned call releases: a later call of the run can deliver the body", &["LSE-9", "LSE-10", "LSE-4"],
                ls(vec![json!({"beginRun": {}}), json!({"enter": {"call": "c1"}}), cap("c1", 0, vec![seg("s", "B")]), json!({"abandon": {"call": "c1"}}),
                    json!({"enter": {"call": "c2"}}), cap("c2", 0, vec![seg("s", "B")])]),
                steps(vec![json!({}), json!({}), json!({}), run("R1", &[], &[], false), json!({}), json!({"snapshot": {"entryIds": ["s"]}})])),
            t("a reserved body that was not forwarded is released at commit, not delivered", &["LSE-9", "LSE-3", "DEP-12"],
                ls(vec![json!({"beginRun": {}}), json!({"enter": {"call": "c1"}}), cap("c1", 0, vec![seg("a", "A"), seg("b", "B")]),
                    json!({"commit": {"call": "c1", "forwarded": ["A"]}}), json!({"revision": {"body": "B"}})]),
                steps(vec![json!({}), json!({}), json!({}), run("R1", &["A"], &[], false), json!({"revision": 2})])),
        ]),
    ]
}

// ---------------------------------------------------------------------------------------------
// node

fn pol() -> Json {
    json!({"hardLimit": 100, "triggerMargin": 10, "recentMessageRetentionCount": 2, "maximumCompactionAttempts": 2,
        "preservationLabel": "node", "preservationVersion": 1, "estimator": {"kind": "constant", "size": 10}})
}

fn reporter() -> Json {
    json!({"workflowId": "wf-1", "agentId": "agent-1", "depth": 1})
}

fn nd(steps: Vec<Json>) -> Json {
    json!({"op": "node", "reducer": {"kind": "messageCounting", "targetCount": 2}, "reporter": reporter(), "steps": steps})
}

fn call(messages: Vec<Json>) -> Json {
    json!({"call": {"messages": messages}})
}

fn call_with(messages: Vec<Json>, extra: Json) -> Json {
    let mut c = json!({"messages": messages});
    for (k, v) in extra.as_object().into_iter().flatten() {
        c[k] = v.clone();
    }
    json!({"call": c})
}

/// A call whose integration adds the recovered body `b` after the adapted baseline.
fn body_call(b: &str, extra: Json) -> Json {
    call_with(
        vec![m("user", "q")],
        with(
            json!({"snapshots": [{"version": 0, "entries": [conv("u", "q"), seg("s", b)]}]}),
            extra,
        ),
    )
}

fn ev(kind: &str, id: &str, seq: u64) -> Json {
    json!({"kind": kind, "assemblyId": id, "sequenceNumber": seq})
}

fn node_steps(xs: Vec<Json>) -> Json {
    json!({"node": {"selection": "Installed", "steps": xs}})
}

fn many(n: usize) -> Vec<Json> {
    (0..n).map(|i| m("user", &format!("m{i}"))).collect()
}

/// `n` system messages: all required, so 10 units each cannot be reduced.
fn rules(n: usize) -> Vec<Json> {
    (0..n).map(|i| m("system", &format!("rule {i}"))).collect()
}

/// The `node` groups.
pub fn node() -> Vec<HandGroup> {
    let p = Some(pol());
    vec![
        group("selection and the events of one call (SPEC NODE-1 .. NODE-4, EVT-1 .. EVT-6)", p.clone(), vec![
            t("switch without options is an argument error", &["NODE-1"],
                json!({"op": "node", "options": false, "steps": [call(vec![m("user", "q")])]}), err("InvalidArgument")),
            t("options without the switch is an argument error", &["NODE-1"],
                json!({"op": "node", "enabled": false, "steps": [call(vec![m("user", "q")])]}), err("InvalidArgument")),
            t("neither: no node, the provider gets the messages unchanged and no event exists", &["NODE-1", "EVT-1"],
                json!({"op": "node", "enabled": false, "options": false, "reporter": reporter(), "steps": [call(vec![m("system", "s"), m("user", "q")])]}),
                json!({"node": {"selection": "Disabled", "steps": [{"sent": [{"role": "system", "text": "s"}, {"role": "user", "text": "q"}], "events": [], "run": null}]}})),
            t("success: Started, Completed, Composed with one id and increasing numbers, then dispatch", &["NODE-2", "NODE-3", "EVT-2", "EVT-3", "EVT-4", "EVT-5", "DEP-15"],
                nd(vec![call(vec![m("system", "s"), m("user", "q")])]),
                node_steps(vec![json!({"sent": [{"role": "system", "text": "s"}, {"role": "user", "text": "q"}], "forwarded": [],
                    "events": [with(ev("Started", "A1", 1), json!({"workflowId": "wf-1", "agentId": "agent-1", "parentAgentId": null, "depth": 1,
                        "measurementUnit": "HostDefinedUnits", "hardLimit": 100, "triggerThreshold": 90})),
                        with(ev("Completed", "A1", 2), json!({"diagnostics": {"outcome": "WithinLimit", "finalSize": 20}})),
                        with(ev("Composed", "A1", 3), json!({"diagnostics": {"outcome": "WithinLimit", "finalSize": 20}}))],
                    "run": null})])),
            t("the bridge reduces through the upstream reducer; diagnostics are shared by Completed and Composed", &["NODE-3", "EVT-4", "BRG-1"],
                nd(vec![call(many(10))]),
                node_steps(vec![json!({"sent": [{"text": "m8"}, {"text": "m9"}],
                    "events": [ev("Started", "A1", 1), with(ev("Completed", "A1", 2), json!({"diagnostics": {"outcome": "Reduced", "originalSize": 100, "finalSize": 20, "attemptCount": 1}})),
                        with(ev("Composed", "A1", 3), json!({"diagnostics": {"outcome": "Reduced", "finalSize": 20}}))]})])),
            t("termination: Started, Terminated and the typed error with outcome and sizes only; nothing sent", &["NODE-4", "EVT-2", "EVT-4"],
                json!({"op": "node", "reducer": {"kind": "upstream", "steps": []}, "reporter": reporter(), "steps": [call(rules(11))]}),
                node_steps(vec![json!({"error": {"kind": "InvalidOperation"}, "terminated": {"outcome": "Irreducible", "finalEstimatedSize": 110, "hardLimit": 100},
                    "events": [ev("Started", "A1", 1), with(ev("Terminated", "A1", 2), json!({"diagnostics": {"outcome": "Irreducible", "categoryContributions": [], "finalSequenceValid": null}}))]})])),
            t("a reducer failure during assembly: Started only, no terminal event", &["NODE-3", "EVT-2", "DEP-14"],
                json!({"op": "node", "reducer": {"kind": "upstream", "steps": [{"fail": "down"}]}, "reporter": reporter(), "steps": [call(many(10))]}),
                node_steps(vec![json!({"error": {"kind": "ReducerFailed"}, "events": [ev("Started", "A1", 1)]})])),
            t("cancellation before the call: the gate refuses, no event", &["NODE-2", "EVT-2"],
                nd(vec![call_with(vec![m("user", "q")], json!({"cancel": "before"}))]),
                node_steps(vec![json!({"error": {"kind": "Cancelled"}, "events": []})])).flags(&["Cancellation"]),
            t("cancellation during a capture: Started only", &["NODE-3", "EVT-2"],
                nd(vec![call_with(vec![m("user", "q")], json!({"snapshots": [{"version": 0}], "cancel": "capture:0"}))]),
                node_steps(vec![json!({"error": {"kind": "Cancelled"}, "events": [ev("Started", "A1", 1)]})])).flags(&["Cancellation"]),
            t("an integration without a provider: InvalidOperation before Started", &["NODE-3", "NODE-6", "EVT-2"],
                nd(vec![call_with(vec![m("user", "q")], json!({"noProvider": true}))]),
                node_steps(vec![json!({"error": {"kind": "InvalidOperation"}, "events": []})])),
            t("concurrent mutation on every capture ends in ConcurrentMutationLimit", &["NODE-4", "LSE-10"],
                nd(vec![call_with(vec![m("user", "q")], json!({"snapshots": [{"version": 0}, {"version": 1}, {"version": 2}, {"version": 3}, {"version": 4}]}))]),
                node_steps(vec![json!({"error": {"kind": "InvalidOperation"}, "terminated": {"outcome": "ConcurrentMutationLimit"},
                    "events": [ev("Started", "A1", 1), ev("Terminated", "A1", 2)]})])),
            t("without a reporter the calls behave identically and emit nothing", &["EVT-1"],
                json!({"op": "node", "reducer": {"kind": "messageCounting", "targetCount": 2}, "steps": [call(many(10))]}),
                node_steps(vec![json!({"sent": [{"text": "m8"}, {"text": "m9"}], "forwarded": [], "events": []})])),
            t("each attempt draws its own id; sequence numbers keep increasing across attempts", &["EVT-5", "EVT-3"],
                nd(vec![call(vec![m("user", "q")]), call_with(vec![m("user", "q")], json!({"cancel": "before"})), call(vec![m("user", "r")])]),
                node_steps(vec![json!({"events": [ev("Started", "A1", 1), ev("Completed", "A1", 2), ev("Composed", "A1", 3)]}), json!({"events": []}),
                    json!({"events": [ev("Started", "A2", 4), ev("Completed", "A2", 5), ev("Composed", "A2", 6)]})])),
            t("events carry the reporter's identifiers and no content", &["EVT-6", "EVT-3"],
                json!({"op": "node", "reducer": {"kind": "messageCounting", "targetCount": 1}, "reporter": {"workflowId": "wf", "parentAgentId": "parent", "depth": 3},
                    "steps": [call(vec![m("user", "SECRET-1"), m("user", "SECRET-2")])]}),
                node_steps(vec![json!({"events": [with(ev("Started", "A1", 1), json!({"workflowId": "wf", "agentId": null, "parentAgentId": "parent", "depth": 3})),
                    ev("Completed", "A1", 2), ev("Composed", "A1", 3)]})])),
        ]),
        group("leases across the calls of a run (SPEC NODE-5, LSE-9, LSE-10)", p, vec![
            t("a recovered body reaches the provider at most once per run", &["NODE-5", "LSE-9", "LSE-10", "NODE-6"],
                nd(vec![json!({"beginRun": {}}), body_call("B", json!({})), body_call("B", json!({}))]),
                node_steps(vec![json!({}), with(run("R1", &["B"], &[], false), json!({"sent": [{"text": "q"}, {"text": "B"}], "forwarded": [digest("B")]})),
                    with(run("R1", &["B"], &[], false), json!({"sent": [{"text": "q"}], "forwarded": []}))])),
            t("a provider failure releases the lease; the next call delivers the body", &["NODE-5", "EVT-2"],
                nd(vec![json!({"beginRun": {}}), body_call("B", json!({"providerFails": "down"})), body_call("B", json!({}))]),
                node_steps(vec![json!({}), with(run("R1", &[], &[], false), json!({"error": {"kind": "InvalidOperation"}, "sent": [{"text": "q"}, {"text": "B"}],
                    "events": [ev("Started", "A1", 1), ev("Completed", "A1", 2), ev("Composed", "A1", 3)]})),
                    with(run("R1", &["B"], &[], false), json!({"forwarded": [digest("B")]}))])),
            t("a body reserved by another call of the run is filtered out until released", &["NODE-5", "DEP-11", "DEP-13"],
                nd(vec![json!({"beginRun": {}}), json!({"reserve": {"body": "B", "lease": "other"}}), body_call("B", json!({})),
                    json!({"release": {"lease": "other"}}), body_call("B", json!({}))]),
                node_steps(vec![json!({}), run("R1", &[], &[("B", "other")], false), json!({"sent": [{"text": "q"}], "forwarded": []}), json!({}),
                    with(run("R1", &["B"], &[], false), json!({"forwarded": [digest("B")]}))])),
            t("without an outer run each call has a call-local run: the body is delivered again", &["DEP-16", "LSE-6", "NODE-2"],
                nd(vec![body_call("B", json!({})), body_call("B", json!({}))]),
                node_steps(vec![json!({"forwarded": [digest("B")], "run": null}), json!({"forwarded": [digest("B")], "run": null})])),
            t("a termination releases: the body stays reservable", &["NODE-5", "NODE-4"],
                json!({"op": "node", "reducer": {"kind": "upstream", "steps": []}, "reporter": reporter(), "steps": [json!({"beginRun": {}}),
                    call_with(rules(11), json!({"snapshots": [{"version": 0, "entries": (0..11).map(|i| sys(&format!("s{i}"), "x")).chain([seg("s", "B")]).collect::<Vec<_>>()}]}))]}),
                node_steps(vec![json!({}), with(run("R1", &[], &[], false), json!({"terminated": {"outcome": "Irreducible"}}))])),
        ]),
        group("streaming calls (SPEC NODE-2, NODE-5)", Some(pol()), vec![
            t("a stream read to its end commits: the body is delivered", &["NODE-2", "NODE-5"],
                nd(vec![json!({"beginRun": {}}), body_call("B", json!({"stream": {"updates": 2}}))]),
                node_steps(vec![json!({}), with(run("R1", &["B"], &[], false), json!({"streamed": 2, "forwarded": [digest("B")],
                    "events": [ev("Started", "A1", 1), ev("Completed", "A1", 2), ev("Composed", "A1", 3)]}))])),
            t("zero updates count: reading the end at once commits", &["NODE-2"],
                nd(vec![json!({"beginRun": {}}), body_call("B", json!({"stream": {"updates": 0}}))]),
                node_steps(vec![json!({}), with(run("R1", &["B"], &[], false), json!({"streamed": 0, "forwarded": [digest("B")]}))])),
            t("an error item releases: the body stays deliverable", &["NODE-5", "NODE-2"],
                nd(vec![json!({"beginRun": {}}), body_call("B", json!({"stream": {"updates": 3, "errorAt": 1}})), body_call("B", json!({}))]),
                node_steps(vec![json!({}), with(run("R1", &[], &[], false), json!({"streamed": 1, "error": {"kind": "InvalidOperation"}, "sent": [{"text": "q"}, {"text": "B"}]})),
                    with(run("R1", &["B"], &[], false), json!({"forwarded": [digest("B")]}))])),
            t("a stream dropped before its end releases, even after every update was read", &["NODE-2", "NODE-5", "LSE-10"],
                nd(vec![json!({"beginRun": {}}), body_call("B", json!({"stream": {"updates": 2, "reads": 2}})), body_call("B", json!({"stream": {"updates": 2, "reads": 3}}))]),
                node_steps(vec![json!({}), with(run("R1", &[], &[], false), json!({"streamed": 2, "sent": [{"text": "q"}, {"text": "B"}]})),
                    with(run("R1", &["B"], &[], false), json!({"streamed": 2, "forwarded": [digest("B")]}))])),
        ]),
    ]
}
