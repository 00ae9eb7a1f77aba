//! Hand-written vectors: capability resolution (CAP), composition (CMP), trust revalidation
//! (TRU) and the public switch (CFG) — SPEC sections 16 and 18. Every expectation is read off
//! the SPEC's tables and orders by hand.

use serde_json::{json, Value as Json};

use super::dsl::err_field;
use super::{group, t, HandGroup};

/// A `Compaction` capability (fixed metadata, CAP-1).
fn compaction(requested: bool, evidence: Option<&str>) -> Json {
    match evidence {
        Some(e) => json!({"name": "Compaction", "requested": requested, "evidence": e}),
        None => json!({"name": "Compaction", "requested": requested}),
    }
}

/// Another capability with its metadata.
fn other(name: &str, requested: bool, evidence: &str, stability: &str, phase: &str) -> Json {
    json!({"name": name, "requested": requested, "evidence": evidence,
        "stability": stability, "deliveryPhase": phase})
}

fn profile(lane: &str, acceptance: &str, caps: Vec<Json>) -> Json {
    json!({"lane": lane, "acceptance": acceptance, "capabilities": caps})
}

/// The selected-providers lane accepting experimental capabilities.
fn selected(caps: Vec<Json>) -> Json {
    profile("SelectedProviders", "StableAndExperimental", caps)
}

fn resolve(p: Json) -> Json {
    json!({"op": "resolve", "profile": p})
}

/// Expected states (name, requested, state) and executability.
fn states(rows: &[(&str, bool, &str)], executable: bool) -> Json {
    let caps: Vec<Json> = rows
        .iter()
        .map(|(n, r, s)| json!({"name": n, "requested": r, "state": s}))
        .collect();
    json!({"resolution": {"capabilities": caps, "executable": executable}})
}

/// The capability groups (CAP-1 .. CAP-4).
pub fn capability() -> Vec<HandGroup> {
    vec![group(
        "capability resolution: fixed metadata, effective state by first match, executability (SPEC CAP-1 .. CAP-4)",
        None,
        vec![
            t("Compaction's metadata is fixed: Experimental, Microsoft.Agents.AI, ExternalContent, Unverified, Available, G5",
                &["CAP-1", "CAP-2"],
                resolve(selected(vec![compaction(true, Some("G5"))])),
                json!({"resolution": {"compaction": {"stability": "Experimental", "source": "Microsoft.Agents.AI",
                    "bundleDefault": false, "providerRequirement": false, "trustBoundary": "ExternalContent",
                    "aot": "Unverified", "diagnostics": "Available", "deliveryPhase": "G5", "deliveryPhaseValue": 5}}})),
            t("requested and accepted at its delivery phase: Enabled; the profile is executable", &["CAP-3", "CAP-4"],
                resolve(selected(vec![compaction(true, Some("G5"))])),
                states(&[("Compaction", true, "Enabled")], true)),
            t("not requested: Disabled (row 1); no active capability: not executable", &["CAP-3", "CAP-4"],
                resolve(selected(vec![compaction(false, Some("G7"))])),
                states(&[("Compaction", false, "Disabled")], false)),
            t("evidence G4 is below the declared G5: Deferred (row 3; phases compare by value)", &["CAP-3", "CAP-2"],
                resolve(selected(vec![compaction(true, Some("G4"))])),
                states(&[("Compaction", true, "Deferred")], false)).flags(&["Boundary"]),
            t("evidence G7 is above G5: Enabled", &["CAP-3", "CAP-2"],
                resolve(selected(vec![compaction(true, Some("G7"))])),
                states(&[("Compaction", true, "Enabled")], true)),
            t("absent evidence counts as below every phase: Deferred", &["CAP-3"],
                resolve(selected(vec![compaction(true, None)])),
                states(&[("Compaction", true, "Deferred")], false)),
            t("the complete-bundle lane needs evidence G6: G5 is Deferred (row 2)", &["CAP-3", "DEP-17"],
                resolve(profile("CompleteBundle", "StableAndExperimental", vec![compaction(true, Some("G5"))])),
                states(&[("Compaction", true, "Deferred")], false)).flags(&["Boundary", "Deviation"]),
            t("the complete-bundle lane with evidence G6: Enabled", &["CAP-3"],
                resolve(profile("CompleteBundle", "StableAndExperimental", vec![compaction(true, Some("G6"))])),
                states(&[("Compaction", true, "Enabled")], true)).flags(&["Boundary"]),
            t("StableOnly does not accept Experimental: Disabled (row 4)", &["CAP-3", "DEP-17"],
                resolve(profile("SelectedProviders", "StableOnly", vec![compaction(true, Some("G5"))])),
                states(&[("Compaction", true, "Disabled")], false)),
            t("first match: the bundle lane's G6 row (Deferred) comes before acceptance (Disabled)", &["CAP-3"],
                resolve(profile("CompleteBundle", "StableOnly", vec![compaction(true, Some("G5"))])),
                states(&[("Compaction", true, "Deferred")], false)),
            t("a bundle default is requested on the complete-bundle lane without being named", &["CAP-3", "CAP-4"],
                resolve(profile("CompleteBundle", "StableOnly", vec![
                    json!({"name": "Tools", "evidence": "G6", "stability": "Stable", "deliveryPhase": "G3", "bundleDefault": true}),
                    compaction(false, Some("G6"))])),
                states(&[("Tools", true, "Enabled"), ("Compaction", false, "Disabled")], true)),
            t("a bundle default on the selected-providers lane is not requested", &["CAP-3"],
                resolve(selected(vec![
                    json!({"name": "Tools", "evidence": "G6", "stability": "Stable", "deliveryPhase": "G3", "bundleDefault": true})])),
                states(&[("Tools", false, "Disabled")], false)),
            t("ProviderDependent is accepted by StableAndExperimental (ours)", &["CAP-3", "CAP-2"],
                resolve(selected(vec![other("Speech", true, "G4", "ProviderDependent", "G4")])),
                states(&[("Speech", true, "Enabled")], true)),
            t("every active capability must be Enabled: one Deferred makes the profile not executable", &["CAP-4"],
                resolve(selected(vec![compaction(true, Some("G5")), other("Memory", true, "G2", "Stable", "G3")])),
                states(&[("Compaction", true, "Enabled"), ("Memory", true, "Deferred")], false)),
            t("inactive capabilities do not count against executability", &["CAP-4"],
                resolve(selected(vec![compaction(true, Some("G5")), other("Memory", false, "G2", "Stable", "G3")])),
                states(&[("Compaction", true, "Enabled"), ("Memory", false, "Disabled")], true)),
            t("history incoherence makes an all-Enabled profile not executable", &["CAP-4"],
                resolve(json!({"lane": "SelectedProviders", "acceptance": "StableAndExperimental",
                    "historyCoherent": false, "capabilities": [compaction(true, Some("G5"))]})),
                states(&[("Compaction", true, "Enabled")], false)),
        ],
    )]
}

/// A compose case: client chain, profile, hybrid profile supplied or not.
fn compose(client: &[&str], p: Json, hybrid: bool) -> Json {
    json!({"op": "compose", "client": client, "profile": p, "hybridProfile": hybrid})
}

fn status(s: &str, nodes: u32) -> Json {
    json!({"composition": {"status": s, "nodesInstalled": nodes}})
}

fn enabled() -> Json {
    selected(vec![compaction(true, Some("G5"))])
}

/// The composition groups (CMP-1 .. CMP-4).
pub fn composition() -> Vec<HandGroup> {
    vec![
        group(
            "composition statuses, in CMP-3's order; only Success builds a node (SPEC CMP-1 .. CMP-4)",
            None,
            vec![
                t("capability Enabled and a profile: Success, exactly one node, runs shared with the agent, default strategies",
                    &["CMP-1", "CMP-2", "CMP-3", "CMP-4"],
                    compose(&["Other"], enabled(), true),
                    json!({"composition": {"status": "Success", "nodesInstalled": 1, "runs": "SharedWithAgent",
                        "strategies": ["ContentHash", "Static"]}})),
                t("a capability without a profile fails closed before any node exists", &["CMP-2", "CMP-3", "CMP-4"],
                    compose(&[], enabled(), false),
                    status("CapabilityEnabledWithoutProfile", 0)).flags(&["FailClosed"]),
                t("a profile without the capability fails closed before any node exists", &["CMP-2", "CMP-3", "CMP-4"],
                    compose(&[], selected(vec![compaction(false, Some("G5"))]), true),
                    status("ProfileSuppliedWithoutCapabilityEnabled", 0)).flags(&["FailClosed"]),
                t("a profile with the capability Deferred (evidence G4) is a profile without the capability", &["CMP-3", "CAP-3"],
                    compose(&[], selected(vec![compaction(true, Some("G4"))]), true),
                    status("ProfileSuppliedWithoutCapabilityEnabled", 0)).flags(&["FailClosed"]),
                t("neither capability nor profile: Disabled, the client unchanged, no node", &["CMP-2", "CMP-3", "CMP-4"],
                    compose(&["Other"], selected(vec![compaction(false, Some("G5"))]), false),
                    status("Disabled", 0)),
                t("no Compaction capability in the profile: ProfileNotExecutable (step 3)", &["CMP-3", "CMP-4"],
                    compose(&[], selected(vec![other("Memory", true, "G3", "Stable", "G3")]), true),
                    status("ProfileNotExecutable", 0)).flags(&["FailClosed"]),
                t("Compaction without evidence: ProfileNotExecutable even with neither side requested (step 3 before 6)",
                    &["CMP-3", "DEP-17"],
                    compose(&[], selected(vec![compaction(false, None)]), false),
                    status("ProfileNotExecutable", 0)).flags(&["FailClosed", "Deviation"]),
                t("a non-executable capability profile (another active capability Deferred) fails closed", &["CMP-3", "CMP-4", "CAP-4"],
                    compose(&[], selected(vec![compaction(true, Some("G5")), other("Memory", true, "G2", "Stable", "G3")]), true),
                    status("ProfileNotExecutable", 0)).flags(&["FailClosed"]),
                t("a non-executable capability profile (history incoherent) fails closed", &["CMP-3", "CAP-4"],
                    compose(&[], json!({"lane": "SelectedProviders", "acceptance": "StableAndExperimental",
                        "historyCoherent": false, "capabilities": [compaction(true, Some("G5"))]}), true),
                    status("ProfileNotExecutable", 0)).flags(&["FailClosed"]),
                t("a second compaction component is refused", &["CMP-2", "CMP-3", "CMP-4"],
                    compose(&["Other", "Compaction"], enabled(), true),
                    status("ExistingCompactionComponent", 0)).flags(&["FailClosed"]),
                t("an existing component does not matter when compaction is Disabled (step 6 before 8)", &["CMP-3"],
                    compose(&["Compaction"], selected(vec![compaction(false, Some("G5"))]), false),
                    status("Disabled", 0)),
                t("executability is checked before the existing component (step 7 before 8)", &["CMP-3"],
                    compose(&["Compaction"], json!({"lane": "SelectedProviders", "acceptance": "StableAndExperimental",
                        "historyCoherent": false, "capabilities": [compaction(true, Some("G5"))]}), true),
                    status("ProfileNotExecutable", 0)),
            ],
        ),
        group(
            "composition argument errors, in order (SPEC CMP-3 steps 1-2)",
            None,
            vec![
                t("no client: NullArgument naming it", &["CMP-3", "CMP-4"],
                    json!({"op": "compose", "profile": enabled(), "hybridProfile": true}),
                    err_field("NullArgument", "Client")),
                t("no capability profile: NullArgument naming it", &["CMP-3"],
                    json!({"op": "compose", "client": [], "hybridProfile": true}),
                    err_field("NullArgument", "CapabilityProfile")),
                t("no execution binding: NullArgument naming it", &["CMP-3"],
                    json!({"op": "compose", "client": [], "profile": enabled(), "executionBinding": false, "hybridProfile": true}),
                    err_field("NullArgument", "ExecutionBinding")),
                t("no binding accessor: NullArgument naming it", &["CMP-3"],
                    json!({"op": "compose", "client": [], "profile": enabled(), "accessor": false, "hybridProfile": true}),
                    err_field("NullArgument", "BindingAccessor")),
                t("missing client and profile: the client is named first", &["CMP-3"],
                    json!({"op": "compose", "executionBinding": false}),
                    err_field("NullArgument", "Client")),
                t("a whitespace session id is blank: InvalidArgument", &["CMP-3"],
                    json!({"op": "compose", "client": [], "profile": enabled(), "sessionId": " \t\n", "hybridProfile": true}),
                    err_field("InvalidArgument", "SessionId")),
                t("an ideographic-space session id is blank (Unicode White_Space)", &["CMP-3"],
                    json!({"op": "compose", "client": [], "profile": enabled(), "sessionId": "\u{3000}", "hybridProfile": true}),
                    err_field("InvalidArgument", "SessionId")).flags(&["Multibyte"]),
                t("a missing accessor is reported before a blank session", &["CMP-3"],
                    json!({"op": "compose", "client": [], "profile": enabled(), "accessor": false, "sessionId": ""}),
                    err_field("NullArgument", "BindingAccessor")),
            ],
        ),
    ]
}

fn binding() -> Json {
    json!({"owners": {"userId": "user-1", "orchestrationId": "orch-1", "sessionId": "session-1"}, "workspace": 1})
}

fn ctx(user: &str, orch: &str, workspace: Option<u64>) -> Json {
    match workspace {
        Some(w) => json!({"userId": user, "orchestrationId": orch, "workspace": w}),
        None => json!({"userId": user, "orchestrationId": orch}),
    }
}

fn ok_ctx() -> Json {
    ctx("user-1", "orch-1", Some(1))
}

/// A guarded call: the default binding, `session`, the accessor's answers, the assembly end.
fn guarded(session: &str, answers: Vec<Json>, assembly: &str) -> Json {
    json!({"op": "trust", "binding": binding(), "accessor": answers, "sessionId": session, "assembly": assembly})
}

fn ended(guarded: bool, end: &str, events: &[&str], failure: Option<(&str, Option<&str>)>) -> Json {
    let mut out =
        json!({"guarded": guarded, "end": end, "events": events, "dispatched": end == "Success"});
    if let Some((kind, status)) = failure {
        let mut f = json!({"kind": kind});
        if let Some(s) = status {
            f["status"] = json!(s);
        }
        out["failure"] = f;
    }
    json!({"trust": out})
}

const ALL: &[&str] = &["Started", "Completed", "Composed"];

fn before(status: &str) -> Json {
    ended(
        true,
        "BeforeStarted",
        &[],
        Some(("InvalidOperation", Some(status))),
    )
}

/// The trust groups (TRU-1 .. TRU-3).
pub fn trust() -> Vec<HandGroup> {
    vec![
        group(
            "trust configuration is all or nothing (SPEC TRU-1)",
            None,
            vec![
                t("no binding, accessor or session: the node never revalidates", &["TRU-1", "TRU-3", "DEP-15"],
                    json!({"op": "trust"}),
                    ended(false, "Success", ALL, None)).flags(&["Deviation"]),
                t("binding, accessor and session: guarded; both revalidations pass", &["TRU-1", "TRU-2", "TRU-3"],
                    guarded("session-1", vec![ok_ctx()], "Success"),
                    ended(true, "Success", ALL, None)),
                t("a binding alone is InvalidArgument before any node exists", &["TRU-1"],
                    json!({"op": "trust", "binding": binding()}),
                    json!({"error": {"kind": "InvalidArgument"}})).flags(&["FailClosed"]),
                t("binding and accessor without a session is InvalidArgument", &["TRU-1"],
                    json!({"op": "trust", "binding": binding(), "accessor": [ok_ctx()]}),
                    json!({"error": {"kind": "InvalidArgument"}})).flags(&["FailClosed"]),
                t("accessor and session without a binding is InvalidArgument", &["TRU-1"],
                    json!({"op": "trust", "accessor": [ok_ctx()], "sessionId": "session-1"}),
                    json!({"error": {"kind": "InvalidArgument"}})).flags(&["FailClosed"]),
                t("a blank session with binding and accessor is InvalidArgument", &["TRU-1"],
                    guarded("  ", vec![ok_ctx()], "Success"),
                    json!({"error": {"kind": "InvalidArgument"}})).flags(&["FailClosed"]),
            ],
        ),
        group(
            "revalidation statuses in declaration order; a failure names only its status (SPEC TRU-2)",
            None,
            vec![
                t("the configured session differs from the binding's: SessionMismatch, no event", &["TRU-2", "TRU-3"],
                    guarded("session-2", vec![ok_ctx()], "Success"),
                    before("SessionMismatch")),
                t("the accessor answers no context: MissingContext", &["TRU-2"],
                    guarded("session-1", vec![Json::Null], "Success"),
                    before("MissingContext")),
                t("another user: IdentityMismatch", &["TRU-2"],
                    guarded("session-1", vec![ctx("user-2", "orch-1", Some(1))], "Success"),
                    before("IdentityMismatch")),
                t("another orchestration: IdentityMismatch", &["TRU-2"],
                    guarded("session-1", vec![ctx("user-1", "orch-2", Some(1))], "Success"),
                    before("IdentityMismatch")),
                t("no workspace in the context: MissingWorkspace", &["TRU-2"],
                    guarded("session-1", vec![ctx("user-1", "orch-1", None)], "Success"),
                    before("MissingWorkspace")),
                t("another workspace instance: WorkspaceMismatch", &["TRU-2"],
                    guarded("session-1", vec![ctx("user-1", "orch-1", Some(2))], "Success"),
                    before("WorkspaceMismatch")),
                t("session mismatch is checked before the context", &["TRU-2"],
                    guarded("session-2", vec![Json::Null], "Success"),
                    before("SessionMismatch")),
                t("identity is checked before the workspace", &["TRU-2"],
                    guarded("session-1", vec![ctx("user-2", "orch-1", None)], "Success"),
                    before("IdentityMismatch")),
                t("multibyte identities compare exactly", &["TRU-2"],
                    json!({"op": "trust", "binding": {"owners": {"userId": "usér-é", "orchestrationId": "orch-😀", "sessionId": "sé"}, "workspace": 7},
                        "accessor": [ctx("usér-é", "orch-😀", Some(7))], "sessionId": "sé"}),
                    ended(true, "Success", ALL, None)).flags(&["Multibyte"]),
            ],
        ),
        group(
            "revalidation sites and the events of an attempt by where it ends (SPEC TRU-3)",
            None,
            vec![
                t("the second revalidation fails: Started, Completed, no Composed, nothing dispatched", &["TRU-3", "TRU-2", "DEP-14", "NODE-3", "EVT-2"],
                    guarded("session-1", vec![ok_ctx(), ctx("user-2", "orch-1", Some(1))], "Success"),
                    ended(true, "RevalidationAfterAssembly", &["Started", "Completed"],
                        Some(("InvalidOperation", Some("IdentityMismatch"))))).flags(&["Deviation"]),
                t("the context disappears after assembly: MissingContext at step 12", &["TRU-3", "TRU-2"],
                    guarded("session-1", vec![ok_ctx(), Json::Null], "Success"),
                    ended(true, "RevalidationAfterAssembly", &["Started", "Completed"],
                        Some(("InvalidOperation", Some("MissingContext"))))),
                t("a termination ends before the second revalidation: Started, Terminated", &["TRU-3", "NODE-4", "EVT-2"],
                    guarded("session-1", vec![ok_ctx(), Json::Null], "Terminated"),
                    ended(true, "Terminated", &["Started", "Terminated"], Some(("InvalidOperation", None)))),
                t("an assembly error ends with Started only", &["TRU-3", "EVT-2"],
                    guarded("session-1", vec![ok_ctx(), Json::Null], "Failed"),
                    ended(true, "DuringAssembly", &["Started"], Some(("ReducerFailed", None)))),
                t("unguarded: a termination still emits Started, Terminated", &["TRU-3", "TRU-1"],
                    json!({"op": "trust", "assembly": "Terminated"}),
                    ended(false, "Terminated", &["Started", "Terminated"], Some(("InvalidOperation", None)))),
            ],
        ),
    ]
}

fn options(hard: i32, margin: i32, retention: i32, attempts: i32, reducer: bool) -> Json {
    json!({"hardLimitBytes": hard, "triggerMarginBytes": margin, "recentMessageRetentionCount": retention,
        "maximumCompactionAttempts": attempts, "upstreamReducer": reducer})
}

fn configure(enabled: bool, o: Option<Json>, client: &[&str]) -> Json {
    let mut c = json!({"op": "configure", "enabled": enabled, "client": client});
    if let Some(o) = o {
        c["options"] = o;
    }
    c
}

/// The public-switch groups (CFG-1 .. CFG-4).
pub fn configuration() -> Vec<HandGroup> {
    let good = || Some(options(1000, 100, 2, 3, true));
    vec![group(
        "the public switch of ADR-0011: checks in order, defaults (SPEC CFG-1 .. CFG-4)",
        None,
        vec![
            t("switch and the five options: the defaults of the public path", &["CFG-1", "CFG-3", "CFG-4", "DEP-15", "DEP-16"],
                configure(true, good(), &["Other"]),
                json!({"configuration": {
                    "report": {"requested": "RequestedEnabled", "effective": "Enabled", "source": "CallerSupplied"},
                    "compaction": {"measurementUnit": "Utf8Bytes", "hardLimit": 1000, "triggerThreshold": 900,
                        "preservationLabel": "foundry-harness-bundle", "preservationVersion": 1,
                        "strategies": ["ContentHash", "Static"], "runs": "CallLocal", "trustBinding": false,
                        "capabilityResolverConsulted": false, "placement": "InsidePerCallHistory"}}})).flags(&["Deviation"]),
            t("neither switch nor options: no compaction, RequestedDisabled / Disabled / NotApplicable", &["CFG-2", "CFG-3"],
                configure(false, None, &[]),
                json!({"configuration": {"report": {"requested": "RequestedDisabled", "effective": "Disabled",
                    "source": "NotApplicable"}, "compaction": null}})),
            t("switch without options: InvalidArgument", &["CFG-1", "CFG-2"],
                configure(true, None, &[]),
                err_field("InvalidArgument", "EnabledWithoutOptions")).flags(&["FailClosed"]),
            t("options without switch: InvalidArgument", &["CFG-1", "CFG-2"],
                configure(false, good(), &[]),
                err_field("InvalidArgument", "OptionsWithoutEnabled")).flags(&["FailClosed"]),
            t("options without switch are refused before the missing reducer", &["CFG-2"],
                configure(false, Some(options(1000, 100, 2, 3, false)), &[]),
                err_field("InvalidArgument", "OptionsWithoutEnabled")),
            t("no default reducer: a missing reducer is NullArgument", &["CFG-1", "CFG-2", "CFG-3"],
                configure(true, Some(options(1000, 100, 2, 3, false)), &[]),
                err_field("NullArgument", "UpstreamReducer")).flags(&["FailClosed"]),
            t("a chain that already has a compaction component: InvalidArgument", &["CFG-2"],
                configure(true, good(), &["Compaction"]),
                err_field("InvalidArgument", "ExistingCompactionComponent")).flags(&["FailClosed"]),
            t("the missing reducer is reported before the existing component", &["CFG-2"],
                configure(true, Some(options(1000, 100, 2, 3, false)), &["Compaction"]),
                err_field("NullArgument", "UpstreamReducer")),
            t("the existing component is reported before invalid numbers", &["CFG-2"],
                configure(true, Some(options(0, 100, 2, 3, true)), &["Compaction"]),
                err_field("InvalidArgument", "ExistingCompactionComponent")),
            t("numbers are validated as POL-2 prescribes: hard limit 0 is out of range", &["CFG-2"],
                configure(true, Some(options(0, 100, 2, 3, true)), &[]),
                err_field("OutOfRange", "HardLimit")),
            t("a margin equal to the hard limit is out of range", &["CFG-2"],
                configure(true, Some(options(100, 100, 2, 3, true)), &[]),
                err_field("OutOfRange", "TriggerMargin")).flags(&["Boundary"]),
            t("disabled with an existing component: no compaction, no error (neither comes first)", &["CFG-2"],
                configure(false, None, &["Compaction"]),
                json!({"configuration": {"compaction": null}})),
        ],
    )]
}
