//! The scenario operations (`diagnostics`, `bridge`, `leases`, `node`; `docs/WIRE.md`) and the
//! stateful ADR-0007 operations both implementations answer (`trust`, `bundle`):
//!
//! * seeded loops generate scenarios and require the model (the specification's worlds) and the
//!   engine (the library's lease and node) to answer identically, with enough steps succeeding
//!   that the comparison means something;
//! * malformed scenario inputs are refused with a wire error naming the JSON path and what was
//!   expected;
//! * the JSON Schema accepts every generated scenario.
//!
//! The generators use a splitmix64 stream (reproducible, no RNG dependency); `SCENARIO_CASES`
//! raises the number of scenarios per loop (default 150).

#![allow(clippy::cast_possible_truncation, reason = "test data: small counts")]

use hybrid_compaction_oracle::WireError;
use hybrid_compaction_oracle::{run_case, Engine, Implementation, Model};
use hybrid_compaction_oracle::{schema, Case};
use serde_json::{json, Value as Json};

use crate::schema_support;

/// The case schema, compiled once for the whole file.
fn case_validator() -> &'static schema_support::Validator {
    static VALIDATOR: std::sync::OnceLock<schema_support::Validator> = std::sync::OnceLock::new();
    VALIDATOR.get_or_init(|| schema_support::Validator::new(&schema::case_schema()))
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

fn cases() -> u64 {
    std::env::var("SCENARIO_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150)
}

fn answer(case: &Json, imp: &dyn Implementation) -> Result<Json, WireError> {
    let case: Case = serde_json::from_value(case.clone()).expect("generated cases parse");
    run_case(&case, imp).map(|o| serde_json::to_value(o).expect("outputs are JSON"))
}

/// Runs `case` on both implementations; on a wire error at `$.steps[i]`, retries the prefix
/// before step `i` (a generated step that names a call in the wrong state). Returns the
/// answer and the number of steps answered.
fn agree(mut case: Json) -> (Json, usize) {
    loop {
        let (m, e) = (answer(&case, &Model), answer(&case, &Engine));
        assert_eq!(
            m,
            e,
            "model and engine disagree on\n{}",
            serde_json::to_string(&case).unwrap()
        );
        match m {
            Ok(out) => {
                let n = case["steps"].as_array().map_or(0, Vec::len);
                let errs = case_validator().errors(&case);
                assert!(errs.is_empty(), "schema refuses a valid case: {errs:?}");
                return (out, n);
            }
            Err(w) => {
                let i: usize = w
                    .path
                    .strip_prefix("$.steps[")
                    .and_then(|r| r.split(']').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("unexpected wire error {w} on {case}"));
                case["steps"].as_array_mut().unwrap().truncate(i);
            }
        }
    }
}

fn seg(id: &str, body: &str) -> Json {
    json!({"id": id, "kind": "RecoverableContextSegment", "segment": {"body": body}})
}

fn lease_step(r: &mut Rng, calls: &mut Vec<String>, flows: &mut Vec<String>) -> Json {
    let flow = r
        .pick(&flows.iter().map(String::as_str).collect::<Vec<_>>())
        .to_owned();
    let body = r.pick(&["A", "B", "C"]);
    let lease = if !calls.is_empty() && r.chance(40) {
        calls[r.below(calls.len())].clone()
    } else {
        r.pick(&["L", "M"]).to_owned()
    };
    // Mostly the latest call, which is the likeliest to hold the gate.
    let call = calls.last().map(|last| {
        if r.chance(70) {
            last.clone()
        } else {
            calls[r.below(calls.len())].clone()
        }
    });
    match r.below(20) {
        0 => json!({"beginRun": {"flow": flow}}),
        1 => json!({"ensureRun": {"flow": flow}}),
        2 => json!({"endScope": {"flow": flow}}),
        3 if flows.len() < 3 => {
            let into = format!("f{}", flows.len());
            flows.push(into.clone());
            json!({"fork": {"flow": flow, "into": into}})
        }
        8 | 9 => json!({"complete": {"flow": flow, "lease": lease, "forwarded": ["A", "B", body]}}),
        10 => json!({"release": {"flow": flow, "lease": lease}}),
        11 => json!({"revision": {"flow": flow, "body": body}}),
        12 | 13 => {
            let name = format!("c{}", calls.len());
            calls.push(name.clone());
            json!({"enter": {"flow": flow, "call": name, "cancelled": r.chance(15)}})
        }
        14 | 15 if call.is_some() => json!({"commit": {"call": call, "forwarded": ["A", body]}}),
        16 if call.is_some() => {
            let op = r.pick(&["releaseCall", "abandon", "cancelWaiter"]);
            json!({op: {"call": call}})
        }
        17..=19 if call.is_some() => {
            let mut entries =
                vec![json!({"id": "u", "kind": "ConversationalMessage", "text": "q"})];
            for (i, b) in ["A", "B", "C"].iter().enumerate() {
                if r.chance(50) {
                    entries.push(seg(&format!("s{i}"), b));
                }
            }
            json!({"capture": {"call": call, "version": r.below(3), "entries": entries}})
        }
        _ => json!({"reserve": {"flow": flow, "body": body, "lease": lease}}),
    }
}

#[test]
fn lse_2_lse_7_lse_8_seeded_lease_scenarios_answer_alike_on_model_and_library() {
    let mut r = Rng(20_261_130);
    let (mut steps, mut reserved, mut admitted, mut delivered) = (0, 0, 0, 0);
    for _ in 0..cases() {
        let (mut calls, mut flows) = (Vec::new(), vec!["main".to_owned()]);
        let n = 4 + r.below(30);
        let mut list = vec![json!({"beginRun": {}})];
        list.extend((0..n).map(|_| lease_step(&mut r, &mut calls, &mut flows)));
        let (out, answered) = agree(json!({"op": "leases", "steps": list}));
        steps += answered;
        for s in out["leases"].as_array().into_iter().flatten() {
            reserved += usize::from(s["reserved"] == json!(true));
            admitted += usize::from(s["gate"] == json!("admitted") || s["admitted"].is_string());
            delivered += s["run"]["delivered"].as_array().map_or(0, Vec::len);
        }
    }
    // The comparison means something: many steps ran; reservations, admissions and deliveries
    // happened.
    assert!(steps as u64 >= cases() * 4, "only {steps} steps answered");
    assert!(
        reserved > 20 && admitted > 20 && delivered > 50,
        "{reserved} reservations, {admitted} admissions, {delivered} delivered digests seen"
    );
}

fn message(r: &mut Rng, i: usize) -> Json {
    let role = if r.chance(20) { "system" } else { "user" };
    json!({"role": role, "text": format!("m{i}")})
}

fn node_call(r: &mut Rng) -> Json {
    let n = 1 + r.below(12);
    let messages: Vec<Json> = (0..n).map(|i| message(r, i)).collect();
    let mut call = json!({"messages": messages});
    if r.chance(60) {
        let mut entries = vec![json!({"id": "u", "kind": "ConversationalMessage", "text": "q"})];
        for (i, b) in ["A", "B"].iter().enumerate() {
            if r.chance(60) {
                entries.push(seg(&format!("s{i}"), b));
            }
        }
        let versions = 1 + r.below(4);
        let schedule: Vec<Json> = (0..versions)
            .map(|v| {
                if v == 0 && r.chance(50) {
                    json!({"version": 0})
                } else {
                    json!({"version": if r.chance(50) { 0 } else { v }, "entries": entries})
                }
            })
            .collect();
        call["snapshots"] = json!(schedule);
    }
    match r.below(10) {
        0 => call["cancel"] = json!("before"),
        1 => call["cancel"] = json!(format!("capture:{}", r.below(3))),
        2 => call["providerFails"] = json!("down"),
        3 if r.chance(30) => call["noProvider"] = json!(true),
        4 | 5 => {
            let updates = r.below(4);
            let mut stream = json!({"updates": updates});
            if updates > 0 && r.chance(30) {
                stream["errorAt"] = json!(r.below(updates));
            }
            if r.chance(40) {
                stream["reads"] = json!(r.below(updates + 2));
            }
            call["stream"] = stream;
        }
        6 if r.chance(50) => {
            let n = call["messages"].as_array().map_or(1, Vec::len);
            let kind = r.pick(&["InvalidOperation", "NotSupported", "Cancelled"]);
            call["classifierFails"] = json!({"message": r.below(n), "kind": kind});
        }
        _ => {}
    }
    json!({"call": call})
}

/// A call that parks in its reducer while a companion node makes one or two calls (SPEC EVT-5).
fn parked_call(r: &mut Rng) -> Json {
    let mut step = node_call(r);
    let inner: Vec<Json> = (0..1 + r.below(2))
        .map(|_| node_call(r)["call"].clone())
        .collect();
    let mut while_parked = json!({"calls": inner});
    if r.chance(50) {
        while_parked["reporter"] = json!({"workflowId": "wf", "agentId": "other", "depth": 1});
    }
    if r.chance(30) {
        while_parked["reducer"] = json!({"kind": "messageCounting", "targetCount": 1});
    }
    step["call"]["whileParked"] = while_parked;
    step
}

#[test]
fn node_2_node_5_evt_5_cls_3_seeded_node_scenarios_answer_alike_on_model_and_library() {
    let mut r = Rng(7);
    let (mut sent, mut terminated, mut started, mut parked) = (0, 0, 0, 0);
    for _ in 0..cases() {
        let reducer = match r.below(3) {
            0 => json!({"kind": "messageCounting", "targetCount": 1 + r.below(3)}),
            1 => json!({"kind": "upstream", "steps": ["echo", {"fail": "x"}]}),
            _ => {
                json!({"kind": "upstream", "steps": [{"return": [{"role": "user", "text": "m0"}]}]})
            }
        };
        let mut steps = Vec::new();
        for _ in 0..1 + r.below(6) {
            steps.push(match r.below(10) {
                0 => json!({"beginRun": {}}),
                1 => json!({"endRun": {}}),
                2 => json!({"reserve": {"body": r.pick(&["A", "B"]), "lease": "other"}}),
                3 => json!({"release": {"lease": "other"}}),
                4 => json!({"reporter": {"workflowId": "wf", "agentId": "a2", "depth": 2}}),
                5 => parked_call(&mut r),
                _ => node_call(&mut r),
            });
        }
        let mut case = json!({"op": "node", "reducer": reducer, "steps": steps,
            "policy": {"hardLimit": 100, "triggerMargin": 10, "recentMessageRetentionCount": 1 + r.below(3),
                "maximumCompactionAttempts": 1 + r.below(3), "preservationLabel": "p", "preservationVersion": 1,
                "estimator": {"kind": "constant", "size": 10}}});
        if r.chance(80) {
            case["reporter"] = json!({"workflowId": "wf", "depth": r.below(3)});
        }
        let (out, _) = agree(case);
        for s in out["node"]["steps"].as_array().into_iter().flatten() {
            sent += usize::from(s["forwarded"].is_array());
            terminated += usize::from(s["terminated"].is_object());
            parked += usize::from(s["parked"] == json!(true));
            started += s["events"].as_array().map_or(0, |e| {
                e.iter().filter(|e| e["kind"] == json!("Started")).count()
            });
        }
    }
    assert!(
        sent > 20 && terminated > 5 && started > 20 && parked > 5,
        "{sent} dispatched, {terminated} terminated, {started} started, {parked} parked"
    );
}

#[test]
fn dia_3_dia_4_seeded_records_answer_alike() {
    let mut r = Rng(3);
    let mut accepted = 0;
    for _ in 0..cases() * 4 {
        let outcome = if r.chance(20) {
            json!(r.below(7))
        } else {
            json!(r.pick(&[
                "Reduced",
                "WithinLimit",
                "Irreducible",
                "ConcurrentMutationLimit",
                "Nope"
            ]))
        };
        let contributions: Vec<Json> = (0..r.below(3))
            .map(|_| json!({"category": r.below(10), "size": r.below(40) as i64 - 5, "entryCount": r.below(3)}))
            .collect();
        let total: i64 = contributions
            .iter()
            .map(|c| c["size"].as_i64().unwrap())
            .sum();
        let case = json!({"op": "diagnostics", "outcome": outcome, "measurementUnit": r.below(4),
            "originalSize": r.below(200), "finalSize": if r.chance(50) { total } else { r.below(120) as i64 },
            "triggerThreshold": 90, "hardLimit": 100, "attemptCount": r.below(3),
            "categoryContributions": contributions,
            "finalSequenceValid": if r.chance(70) { json!(true) } else { json!(null) }});
        let (m, e) = (answer(&case, &Model), answer(&case, &Engine));
        assert_eq!(m, e);
        accepted += usize::from(m.expect("valid wire input")["diagnostics"].is_object());
    }
    assert!(accepted > 20, "only {accepted} records accepted");
}

#[test]
fn brg_2_brg_3_seeded_bridge_calls_answer_alike() {
    let mut r = Rng(11);
    let mut ok = 0;
    for _ in 0..cases() * 2 {
        let entries: Vec<Json> = (0..1 + r.below(5))
            .map(|i| json!({"id": format!("e{i}"), "kind": "ConversationalMessage", "text": r.pick(&["a", "b"])}))
            .collect();
        let steps: Vec<Json> = (0..1 + r.below(3))
            .map(|_| match r.below(6) {
                0 => json!("echo"),
                1 => json!("null"),
                2 => json!("cancel"),
                _ => json!({"return": (0..r.below(4)).map(|_| json!({"role": r.pick(&["user", "assistant"]), "text": r.pick(&["a", "b", "c"])})).collect::<Vec<_>>()}),
            })
            .collect();
        let case = json!({"op": "bridge", "entries": entries, "steps": steps});
        let (m, e) = (answer(&case, &Model), answer(&case, &Engine));
        assert_eq!(m, e);
        ok += usize::from(m.expect("valid wire input")["bridge"].is_object());
    }
    assert!(ok > 20, "only {ok} bridge runs succeeded");
}

/// Malformed scenarios: `(case, path, a fragment of the message)`.
fn malformed() -> Vec<(Json, &'static str, &'static str)> {
    let enter = |c: &str| json!({"enter": {"call": c}});
    vec![
        (
            json!({"op": "leases", "steps": [{"reserve": {"flow": "nope", "body": "B", "lease": "L"}}]}),
            "$.steps[0].reserve.flow",
            "no flow named \"nope\"",
        ),
        (
            json!({"op": "leases", "steps": [{"commit": {"call": "c9"}}]}),
            "$.steps[0].commit.call",
            "no call named \"c9\"",
        ),
        (
            json!({"op": "leases", "steps": [{"beginRun": {}}, enter("c1"), enter("c2"), {"commit": {"call": "c2"}}]}),
            "$.steps[3].commit.call",
            "does not hold the gate",
        ),
        (
            json!({"op": "leases", "steps": [{"beginRun": {}}, enter("c1"), enter("c2"), enter("c3")]}),
            "$.steps[3].enter.call",
            "one waiter per run",
        ),
        (
            json!({"op": "leases", "steps": [{"beginRun": {}}, enter("c1"), enter("c1")]}),
            "$.steps[2].enter.call",
            "exists already",
        ),
        (
            json!({"op": "leases", "steps": [{"fork": {"into": "main"}}]}),
            "$.steps[0].fork.into",
            "exists already",
        ),
        (
            json!({"op": "leases", "steps": [{"beginRun": {}}, enter("c1"), enter("c2"), {"reserve": {"body": "B", "lease": "c2"}}]}),
            "$.steps[3].reserve.lease",
            "has no lease",
        ),
        (
            json!({"op": "leases", "steps": [{"beginRun": {}}, enter("c1"), {"cancelWaiter": {"call": "c1"}}]}),
            "$.steps[2].cancelWaiter.call",
            "is not waiting",
        ),
        (
            json!({"op": "leases", "steps": [{"beginRun": {}}, enter("c1"), {"capture": {"call": "c1", "version": 0, "entries": [{"id": "s", "kind": "ConversationalMessage", "segment": {"body": "B"}}]}}]}),
            "$.steps[2].capture.entries[0]",
            "segment",
        ),
        (
            json!({"op": "bridge", "entries": [], "steps": []}),
            "$.steps",
            "at least one step",
        ),
        (
            json!({"op": "bridge", "entries": [], "steps": [{"return": [{"role": "user", "parts": [{"call": {"callId": "k", "name": "f", "arguments": {"x": {"i16": 99999}}}}]}]}]}),
            "$.steps[0].return[0]",
            "",
        ),
        (
            json!({"op": "node", "reducer": {"kind": "scripted", "steps": []}, "steps": []}),
            "$.reducer.kind",
            "upstream",
        ),
        (
            json!({"op": "node", "steps": [{"call": {"messages": [], "cancel": "reducer:0"}}]}),
            "$.steps[0].call.cancel",
            "`before` or `capture:K`",
        ),
        (
            json!({"op": "node", "steps": [{"call": {"messages": [], "cancel": "soon"}}]}),
            "$.steps[0].call.cancel",
            "expected `before`",
        ),
        (
            json!({"op": "node", "steps": [{"call": {"messages": [], "snapshots": []}}]}),
            "$.steps[0].call.snapshots",
            "at least one snapshot",
        ),
        (
            json!({"op": "node", "steps": [{"reserve": {"lease": "x"}}]}),
            "$.steps[0].reserve",
            "needs `body`",
        ),
        (
            json!({"op": "node", "steps": [{"call": {"messages": [{"role": "user", "parts": [{"result": {"callId": "k", "value": {"u8": 300}}}]}]}}]}),
            "$.steps[0].call.messages[0]",
            "",
        ),
        (
            json!({"op": "node", "steps": [{"call": {"messages": [], "snapshots": [{"version": 0, "entries": [{"id": "x", "kind": "Summary", "text": "t", "segment": {"body": "b"}}]}]}}]}),
            "$.steps[0].call.snapshots[0].entries[0]",
            "segment",
        ),
    ]
}

fn policy() -> Json {
    json!({"hardLimit": 100, "triggerMargin": 10, "recentMessageRetentionCount": 1, "maximumCompactionAttempts": 1,
        "preservationLabel": "p", "preservationVersion": 1, "estimator": {"kind": "constant", "size": 10}})
}

#[test]
fn malformed_scenarios_are_refused_with_their_json_path() {
    for (mut case, path, fragment) in malformed() {
        if case["op"] == json!("node") {
            case["policy"] = policy();
        }
        for imp in [&Model as &dyn Implementation, &Engine] {
            match answer(&case, imp) {
                Err(w) => {
                    assert!(
                        w.path.starts_with(path),
                        "{}: path {} is not under {path} ({})",
                        imp.name(),
                        w.path,
                        w.message
                    );
                    assert!(w.message.contains(fragment), "{}: {w}", imp.name());
                    for word in ["enum", "struct", "variant"] {
                        assert!(!w.message.contains(word), "{w}");
                    }
                }
                Ok(o) => panic!("{}: accepted {case}: {o}", imp.name()),
            }
        }
    }
}

#[test]
fn dia_2_categorical_values_are_names_or_ordinals_and_nothing_else() {
    let case = json!({"op": "diagnostics", "outcome": 1.5, "measurementUnit": "Utf8Bytes", "originalSize": 1,
        "finalSize": 1, "triggerThreshold": 1, "hardLimit": 2, "attemptCount": 0});
    let e = serde_json::from_value::<Case>(case)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("expected a name (string) or an ordinal (integer)"),
        "{e}"
    );
    for word in ["enum", "struct", "variant"] {
        assert!(!e.contains(word), "{e}");
    }
}

#[test]
fn scenario_ops_are_in_the_published_schema() {
    let s = schema::case_schema().to_string();
    for op in ["diagnostics", "bridge", "leases", "node"] {
        assert!(s.contains(&format!("\"{op}\"")), "schema lacks op {op}");
    }
    let bad = json!({"op": "leases", "steps": [{"reserve": {"body": "B"}}]});
    assert!(
        !case_validator().accepts(&bad),
        "a reserve without lease must not validate"
    );
}

#[test]
fn lse_7_the_cli_answers_a_scenario_and_refuses_a_bad_step_in_one_line() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let run = |case: &Json| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hybrid-compaction"))
            .args(["run", "--model", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(case.to_string().as_bytes())
            .expect("write");
        child.wait_with_output().expect("output")
    };
    let good = json!({"op": "leases", "steps": [{"beginRun": {}}, {"enter": {"call": "c1"}}, {"enter": {"call": "c2"}}]});
    let out = run(&good);
    assert_eq!(out.status.code(), Some(0));
    let answer: Json = serde_json::from_slice(&out.stdout).expect("JSON output");
    assert_eq!(answer["leases"][2]["gate"], json!("waiting"));
    let bad = json!({"op": "leases", "steps": [{"beginRun": {}}, {"commit": {"call": "c1"}}]});
    let out = run(&bad);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).expect("UTF-8");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("$.steps[1].commit.call") && err.contains("no call named \"c1\""),
        "{err}"
    );
}

/// Both implementations answer `case` alike (no wire error expected); returns the answer.
fn alike(case: &Json) -> Json {
    let (m, e) = (answer(case, &Model), answer(case, &Engine));
    assert_eq!(m, e, "model and engine disagree on\n{case}");
    let errs = case_validator().errors(case);
    assert!(errs.is_empty(), "schema refuses a valid case: {errs:?}");
    m.unwrap_or_else(|w| panic!("unexpected wire error {w} on {case}"))
}

#[test]
fn tru_4_seeded_chosen_trust_calls_answer_alike_on_model_and_library() {
    // SPEC TRU-3, TRU-4: chosen histories, policies, reducers and streams under accessor scripts
    // that fail at either revalidation or not at all.
    let mut r = Rng(11);
    let good = json!({"userId": "user-1", "orchestrationId": "orch-1", "workspace": 1});
    let bad = json!({"userId": "user-2", "orchestrationId": "orch-1", "workspace": 1});
    let (mut success, mut second, mut diagnostics) = (0, 0, 0);
    for _ in 0..cases() {
        let n = 1 + r.below(12);
        let messages: Vec<Json> = (0..n).map(|i| message(&mut r, i)).collect();
        let script: Vec<Json> = (0..1 + r.below(3))
            .map(|_| {
                if r.chance(70) {
                    good.clone()
                } else if r.chance(50) {
                    bad.clone()
                } else {
                    Json::Null
                }
            })
            .collect();
        let mut case = json!({"op": "trust", "messages": messages,
            "policy": {"hardLimit": 100, "triggerMargin": 10, "recentMessageRetentionCount": 1 + r.below(3),
                "maximumCompactionAttempts": 1 + r.below(3), "preservationLabel": "p", "preservationVersion": 1,
                "estimator": {"kind": "constant", "size": 10}}});
        if r.chance(85) {
            case["binding"] = json!({"owners": {"userId": "user-1", "orchestrationId": "orch-1", "sessionId": "session-1"}, "workspace": 1});
            case["accessor"] = json!(script);
            case["sessionId"] = json!(if r.chance(90) {
                "session-1"
            } else {
                "session-2"
            });
        }
        if r.chance(70) {
            case["reducer"] = match r.below(2) {
                0 => json!({"kind": "messageCounting", "targetCount": 1 + r.below(3)}),
                _ => json!({"kind": "upstream", "steps": ["echo", {"fail": "x"}]}),
            };
        }
        if r.chance(40) {
            let updates = r.below(4);
            let mut stream = json!({"updates": updates});
            if updates > 0 && r.chance(30) {
                stream["errorAt"] = json!(r.below(updates));
            }
            if r.chance(30) {
                stream["reads"] = json!(r.below(updates + 2));
            }
            case["stream"] = stream;
        }
        let out = alike(&case);
        let t = &out["trust"];
        success += usize::from(t["end"] == json!("Success"));
        second += usize::from(t["end"] == json!("RevalidationAfterAssembly"));
        diagnostics += usize::from(t["diagnostics"].is_object());
    }
    assert!(
        success > 20 && second > 5 && diagnostics > 20,
        "{success} succeeded, {second} failed the second revalidation, {diagnostics} with diagnostics"
    );
}

#[test]
fn cfg_6_seeded_tool_loops_answer_alike_on_model_and_library() {
    // SPEC CFG-6: turns of tool rounds with results of varying sizes, with or without hybrid
    // compaction and the upstream per-turn strategy.
    let mut r = Rng(13);
    let (mut reduced, mut failed, mut strategy) = (0, 0, 0);
    for _ in 0..cases() {
        let turns: Vec<Json> = (0..1 + r.below(3))
            .map(|t| {
                let mut rounds: Vec<Json> = (0..r.below(4))
                    .map(|k| {
                        let calls: Vec<Json> = (0..1 + r.below(2))
                            .map(|c| {
                                json!({"callId": format!("c{t}-{k}-{c}"), "name": "read",
                                "result": "é".repeat(10 + r.below(80))})
                            })
                            .collect();
                        json!({"toolCalls": calls})
                    })
                    .collect();
                if r.chance(80) {
                    rounds.push(json!({"answer": "done"}));
                }
                json!({"user": format!("q{t}"), "rounds": rounds})
            })
            .collect();
        let hybrid = r.chance(75);
        let mut case = json!({"op": "bundle", "enabled": hybrid, "turns": turns,
            "history": [{"role": "system", "text": "s"}]});
        if hybrid {
            case["options"] = json!({"hardLimitBytes": 200 + r.below(400), "triggerMarginBytes": 20,
                "recentMessageRetentionCount": 1 + r.below(2), "maximumCompactionAttempts": 1 + r.below(2),
                "upstreamReducer": true});
        }
        if r.chance(40) {
            case["upstreamStrategy"] = json!({"keepLast": 2 + r.below(6)});
        }
        let out = alike(&case);
        let b = &out["bundle"];
        reduced += usize::from(b["reducerCalls"].as_u64().unwrap_or(0) > 0);
        strategy += usize::from(b["strategyCalls"].as_u64().unwrap_or(0) > 0);
        failed += b["calls"]
            .as_array()
            .map_or(0, |cs| cs.iter().filter(|c| c["error"].is_object()).count());
    }
    assert!(
        reduced > 10 && failed > 3 && strategy > 20,
        "{reduced} reduced, {failed} failed calls, {strategy} with the strategy"
    );
}
