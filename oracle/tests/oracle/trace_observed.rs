//! Observed calls (SPEC TRC-13): a system that does not implement the assembler is judged by
//! what it sent against the history it held, per call and across the calls of a run. The
//! records here are what a framework recorder writes: a growing agent conversation (a user
//! question, an assistant message with two parallel tool calls, their results, an answer), and
//! each kind of compaction a framework applies.

use serde_json::{json, Value as Json};

use crate::trace::{bin, check_text, clauses};
use hybrid_compaction_oracle::trace::{self, Options};
use hybrid_compaction_oracle::{Engine, Model};

fn policy(hard_limit: i64) -> Json {
    json!({"hardLimit": hard_limit, "recentMessageRetentionCount": 2, "estimator": {"kind": "utf8"}})
}

/// Turn `t` of the conversation: a question, two parallel tool calls, their results, an answer.
fn turn(t: usize) -> Vec<Json> {
    let q = format!("q{t}");
    let a = format!("a{t}");
    vec![
        json!({"id": format!("u{t}"), "kind": "ConversationalMessage", "role": "user", "text": format!("question {t}: über café ✓")}),
        json!({"id": format!("c{t}"), "kind": "ToolExchange", "role": "assistant", "parts": [
            {"call": {"callId": q, "name": "search", "arguments": {"q": "x"}}},
            {"call": {"callId": a, "name": "fetch", "arguments": {"url": "y"}}}]}),
        json!({"id": format!("r{t}q"), "kind": "ToolExchange", "role": "tool", "parts": [
            {"result": {"callId": q, "value": "r".repeat(60)}}]}),
        json!({"id": format!("r{t}a"), "kind": "ToolExchange", "role": "tool", "parts": [
            {"result": {"callId": a, "value": "s".repeat(60)}}]}),
        json!({"id": format!("m{t}"), "kind": "ConversationalMessage", "role": "assistant", "text": format!("answer {t}")}),
    ]
}

/// The history at the model call after the tools of turn `t` answered (the answer of turn `t`
/// not yet written), the system prompt first.
fn history(t: usize) -> Vec<Json> {
    let mut h = vec![json!({"id": "sys", "kind": "SystemInstruction", "text": "you are helpful"})];
    for k in 0..t {
        h.extend(turn(k));
    }
    let mut last = turn(t);
    last.pop();
    h.extend(last);
    h
}

fn observed(call: &str, hard_limit: i64, history: &[Json], sent: Option<&[Json]>) -> Json {
    let mut r = json!({"type": "observed", "run": "agent-1", "call": call,
        "policy": policy(hard_limit), "history": {"entries": history}});
    if let Some(s) = sent {
        r["sent"] = json!({ "entries": s });
    }
    r
}

fn trace(records: &[Json]) -> String {
    let mut s = String::from("{\"trace\": 3, \"producer\": \"observed tests\"}\n");
    for r in records {
        s.push_str(&r.to_string());
        s.push('\n');
    }
    s
}

fn both(text: &str) -> Vec<&'static str> {
    let m = check_text(text, &Model, 1);
    let e = check_text(text, &Engine, 1);
    assert_eq!(
        format!("{:?}", m.violations),
        format!("{:?}", e.violations),
        "the model and the engine judge alike"
    );
    assert_eq!(m.observed, m.calls, "every record is observed");
    clauses(&m).into_iter().collect()
}

fn ids(es: &[Json]) -> Vec<&str> {
    es.iter().map(|e| e["id"].as_str().unwrap()).collect()
}

/// SPEC TRC-13: a run that sends its whole history at every call, within the limit, checks
/// clean; the same run on a smaller limit breaks TRC-2 at the first call over it.
#[test]
fn trc_13_trc_2_a_system_that_sends_everything_is_judged_by_the_hard_limit() {
    let calls: Vec<Json> = (0..4)
        .map(|t| {
            let h = history(t);
            observed(&format!("call-{t}"), 100_000, &h, Some(&h))
        })
        .collect();
    let r = check_text(&trace(&calls), &Model, 1);
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    assert_eq!((r.calls, r.observed, r.replayed, r.runs), (4, 4, 0, 1));
    let tight: Vec<Json> = (0..4)
        .map(|t| {
            let h = history(t);
            observed(&format!("call-{t}"), 500, &h, Some(&h))
        })
        .collect();
    let text = trace(&tight);
    let r = check_text(&text, &Model, 1);
    assert_eq!(clauses(&r), ["TRC-2", "TRC-2"], "{:?}", r.violations);
    assert_eq!(r.violations[0].call, "call-2");
    assert!(
        r.violations[0].message.starts_with("sent size "),
        "{}",
        r.violations[0].message
    );
    assert_eq!(both(&text), ["TRC-2", "TRC-2"]);
}

/// SPEC TRC-13, TRC-3, TRC-4, TRC-5: a compaction that drops the assistant message whose tool
/// calls the latest results answer (what `check` must flag for a framework's trimming) breaks
/// the sequence, the required entries and atomicity, at that call.
#[test]
fn trc_13_trc_3_trc_4_trc_5_dropping_the_latest_tool_calls_is_flagged() {
    let h = history(2);
    let sent: Vec<Json> = h
        .iter()
        .filter(|e| e["id"] != "c1" && e["id"] != "c2")
        .cloned()
        .collect();
    let text = trace(&[
        observed("call-1", 100_000, &history(1), Some(&history(1))),
        observed("call-2", 100_000, &h, Some(&sent)),
    ]);
    let got = both(&text);
    assert_eq!(got, ["TRC-3", "TRC-4", "TRC-5"]);
    let r = check_text(&text, &Model, 1);
    assert!(r
        .violations
        .iter()
        .all(|v| v.call == "call-2" && v.line == 3));
    let m = &r.violations[0].message;
    assert!(
        m.contains("against the history") && m.contains("OrphanedToolResult"),
        "{m}"
    );
    // Through the binary: exit 1, the clause and the call named.
    let (code, out, _) = bin(&["check", "-"], &text);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("TRC-5") && out.contains("call-2") && out.contains("2 observed"),
        "{out}"
    );
    // A shrunk `verify` case reproduces the rejection: fewer entries than the history, the
    // first reason the call was rejected for, and `run` answers it as the report says.
    let r = trace::check(text.as_bytes(), &Model, &Options::default()).expect("readable");
    assert_eq!(r.counterexamples.len(), 1);
    let c = &r.counterexamples[0];
    assert_eq!(
        (c.call.as_str(), c.line, c.field.as_str()),
        ("call-2", 3, "/verification/outcome")
    );
    let case = serde_json::to_value(&c.case).unwrap();
    let n = case["original"].as_array().unwrap().len();
    assert!(
        n < h.len() && n >= 1,
        "shrunk from {} to {n}: {case}",
        h.len()
    );
    let (code, out, err) = bin(&["run", "-"], &case.to_string());
    assert_eq!(code, 0, "{err}");
    let answer: Json = serde_json::from_str(&out).unwrap();
    assert_eq!(answer, serde_json::to_value(&c.expected).unwrap());
    assert_eq!(answer["verification"]["outcome"], "Rejected");
    let first = answer["verification"]["rejectionReasons"][0]
        .as_str()
        .unwrap();
    let trc3 = r.violations.iter().find(|v| v.clause == "TRC-3").unwrap();
    assert!(
        trc3.message
            .contains(&format!("against the history: {first}")),
        "{first} vs {}",
        trc3.message
    );
}

/// SPEC TRC-13: a summary in place of old turns, the recent units and the system prompt kept,
/// verifies (VER-1 check 2 admits a new conversational message or summary); the same summary
/// over a required unit does not; a kept entry whose content changed under its id does not.
#[test]
fn trc_13_a_summary_of_old_turns_verifies_and_a_changed_entry_does_not() {
    let h = history(3);
    let keep_from = h.iter().position(|e| e["id"] == "u2").unwrap();
    let mut sent = vec![
        h[0].clone(),
        json!({"id": "summary-1", "kind": "Summary", "role": "user", "text": "earlier: two searches"}),
    ];
    sent.extend(h[keep_from..].iter().cloned());
    assert!(both(&trace(&[observed("c", 100_000, &h, Some(&sent))])).is_empty());
    // A human message in its place is a new conversational message: admitted too.
    let mut human = sent.clone();
    human[1]["kind"] = json!("ConversationalMessage");
    assert!(both(&trace(&[observed("c", 100_000, &h, Some(&human))])).is_empty());
    // Summarising the last two units away breaks required preservation.
    let keep_late = h.iter().position(|e| e["id"] == "u3").unwrap();
    let mut short = vec![h[0].clone(), sent[1].clone()];
    short.extend(h[keep_late + 1..].iter().cloned());
    assert_eq!(
        both(&trace(&[observed("c", 100_000, &h, Some(&short))])),
        ["TRC-3", "TRC-4"]
    );
    // A tool result cleared in place (same id, other content) is a mutated retained entry.
    let mut cleared = h.clone();
    let at = cleared.iter().position(|e| e["id"] == "r0q").unwrap();
    cleared[at]["parts"][0]["result"]["value"] = json!("[cleared]");
    let text = trace(&[observed("c", 100_000, &h, Some(&cleared))]);
    assert_eq!(both(&text), ["TRC-3"]);
    let r = check_text(&text, &Model, 1);
    assert!(
        r.violations[0]
            .message
            .contains("RetainedOriginalEntryMutated"),
        "{:?}",
        r.violations
    );
    // A forged structural entry (a new tool exchange) is refused too.
    let mut forged = h.clone();
    forged.push(json!({"id": "ghost", "kind": "SystemInstruction", "text": "obey"}));
    assert_eq!(
        both(&trace(&[observed("c", 100_000, &h, Some(&forged))])),
        ["TRC-3"]
    );
}

/// SPEC TRC-13, TRC-8, TRC-12: across the calls of a run, call ids are distinct among observed
/// and call records alike, and a recovered body is delivered at most once: by calls that sent
/// it and whose provider answered (a failed dispatch delivers nothing; a refused call sends
/// nothing).
#[test]
fn trc_13_trc_8_trc_12_bodies_and_call_ids_across_calls() {
    let body =
        json!({"id": "body", "kind": "RecoverableContextSegment", "segment": {"body": "hello"}});
    let mut h = history(0);
    h.insert(1, body);
    let failed = {
        let mut r = observed("call-1", 100_000, &h, Some(&h));
        r["dispatch"] = json!("failed");
        r
    };
    let refused = {
        let mut r = observed("call-2", 100, &h, None);
        r["note"] = json!("Irreducible: over the hard limit");
        r
    };
    let answered = observed("call-3", 100_000, &h, Some(&h));
    let again = observed("call-4", 100_000, &h, Some(&h));
    let text = trace(&[failed.clone(), refused.clone(), answered.clone()]);
    assert!(
        both(&text).is_empty(),
        "a failed dispatch and a refusal deliver nothing"
    );
    let text = trace(&[failed, refused, answered.clone(), again]);
    let r = check_text(&text, &Model, 1);
    assert_eq!(clauses(&r), ["TRC-8"]);
    assert_eq!(r.violations[0].call, "call-4");
    // A call id used twice in a run, by an observed record and then by another one.
    let dup = trace(&[
        answered,
        observed("call-3", 100_000, &history(0), Some(&history(0))),
    ]);
    assert_eq!(both(&dup), ["TRC-12"]);
}

/// SPEC TRC-13: the compact profile (entries defined once per run, referred to by index) checks
/// as the written-out form does, and a provider-token estimator and recorded sizes both measure.
#[test]
fn trc_13_compact_records_token_estimators_and_recorded_sizes() {
    // Compact: call k defines the entries new since call k-1.
    let mut compact = Vec::new();
    let mut expanded = Vec::new();
    let mut defined = 0usize;
    for t in 0..3 {
        let h = history(t);
        let limit = 400;
        expanded.push(observed(&format!("call-{t}"), limit, &h, Some(&h)));
        let defs: Vec<Json> = h[defined..].to_vec();
        let n = h.len() - 1;
        let mut r = json!({"type": "observed", "run": "agent-1", "call": format!("call-{t}"),
            "policy": policy(limit), "defs": defs,
            "history": {"refs": [[0, n]]}, "sent": {"refs": [[0, n]]}});
        if defined == 0 {
            r["defs"] = json!(h);
        }
        compact.push(r);
        defined = h.len();
    }
    let a = check_text(&trace(&expanded), &Model, 1);
    let b = check_text(&trace(&compact), &Model, 1);
    assert_eq!(format!("{:?}", a.violations), format!("{:?}", b.violations));
    assert_eq!(
        clauses(&a),
        ["TRC-2"],
        "call-2 measures 547 bytes, over 400"
    );
    // Tokens: the same history measures fewer tokens than bytes.
    let mut tok = observed("c", 200, &history(1), Some(&history(1)));
    tok["policy"]["estimator"] = json!({"kind": "tokens", "encoding": "o200k_base"});
    assert!(both(&trace(&[tok.clone()])).is_empty());
    tok["policy"]["hardLimit"] = json!(20);
    assert_eq!(both(&trace(&[tok])), ["TRC-2"]);
    // Recorded sizes: redacted entries with the host's counts.
    let redacted: Vec<Json> = ids(&history(0))
        .into_iter()
        .map(|id| {
            let kind = if id.starts_with('c') || id.starts_with('r') {
                "ToolExchange"
            } else if id == "sys" {
                "SystemInstruction"
            } else {
                "ConversationalMessage"
            };
            let mut e = json!({"id": id, "kind": kind, "digest": format!("d-{id}"), "size": 10});
            match id {
                "c0" => e["calls"] = json!([{"callId": "q0", "name": "search"}, {"callId": "a0", "name": "fetch"}]),
                "r0q" => e["results"] = json!([{"callId": "q0"}]),
                "r0a" => e["results"] = json!([{"callId": "a0"}]),
                _ => {}
            }
            e
        })
        .collect();
    let mut rec = observed("c", 50, &redacted, Some(&redacted));
    rec["policy"]["estimator"] = json!({"kind": "recorded", "unit": "EstimatedTokens"});
    assert!(
        both(&trace(&[rec.clone()])).is_empty(),
        "5 entries of 10 within 50"
    );
    rec["policy"]["hardLimit"] = json!(49);
    assert_eq!(both(&trace(&[rec])), ["TRC-2"]);
}

/// SPEC TRC-13: what makes an observed record unreadable (exit 2, the line and the path named):
/// an older header, a dispatch that contradicts `sent`, a list with both forms or neither, an id
/// twice in the history, a recorded estimator without sizes, a policy POL-2 refuses.
#[test]
fn trc_13_unreadable_observed_records_name_the_line_and_path() {
    let h = history(0);
    let good = observed("c", 1000, &h, Some(&h));
    let v2 = format!("{{\"trace\": 2}}\n{good}\n");
    let (code, out, err) = bin(&["check", "-"], &v2);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("<stdin>:2")
            && err.contains("$.type: observed records need the header {\"trace\": 3}"),
        "{err}"
    );
    let cases: Vec<(Json, &str)> = vec![
        (
            {
                let mut r = good.clone();
                r["dispatch"] = json!("refused");
                r
            },
            "$.dispatch: `refused` means nothing was sent",
        ),
        (
            {
                let mut r = observed("c", 1000, &h, None);
                r["dispatch"] = json!("answered");
                r
            },
            "$.dispatch: `answered` means the entries were sent",
        ),
        (
            {
                let mut r = good.clone();
                r["dispatch"] = json!("lost");
                r
            },
            "$.dispatch: unknown dispatch `lost`",
        ),
        (
            {
                let mut r = good.clone();
                r["history"]["refs"] = json!([0]);
                r
            },
            "$.history: a list has `entries` or `refs`, not both",
        ),
        (
            {
                let mut r = good.clone();
                r["history"] = json!({});
                r
            },
            "$.history: expected `entries` or `refs`",
        ),
        (
            {
                let mut r = good.clone();
                r["history"]["entries"][2] = h[1].clone();
                r
            },
            "$.history: the entry id \"u0\" is recorded twice",
        ),
        (
            {
                let mut r = good.clone();
                r["policy"]["estimator"] = json!({"kind": "recorded"});
                r
            },
            "$.sent: entry 0 has no `size`",
        ),
        (
            {
                let mut r = good.clone();
                r["policy"]["hardLimit"] = json!(0);
                r
            },
            "$.policy.hardLimit: must be positive",
        ),
        (
            {
                let mut r = good.clone();
                r["policy"]["recentMessageRetentionCount"] = json!(0);
                r
            },
            "$.policy: ",
        ),
        (
            {
                let mut r = good.clone();
                r["policy"]["triggerMargin"] = json!(1);
                r
            },
            "$.policy.triggerMargin: unknown member",
        ),
        (
            {
                let mut r = good.clone();
                r["sent"]["refs"] = json!([[0, 99]]);
                r.as_object_mut()
                    .unwrap()
                    .get_mut("sent")
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .remove("entries");
                r
            },
            "$.sent.refs: table index 99 is not defined yet",
        ),
        (
            {
                let mut r = good.clone();
                r["history"]["entries"][1]["text"] = json!(7);
                r
            },
            "$.history.entries[1].text",
        ),
    ];
    for (rec, want) in cases {
        let (code, out, err) = bin(&["check", "-"], &trace(&[rec]));
        assert_eq!((code, out.as_str()), (2, ""), "{want}: {err}");
        assert!(
            err.contains("<stdin>:2") && err.contains(want),
            "want {want:?}, got {err}"
        );
        assert!(
            !err.contains("panicked") && !err.contains("Option<"),
            "{err}"
        );
    }
}

/// SPEC TRC-13: every observed record above validates against the published trace schema.
#[test]
fn trc_13_observed_records_match_the_schema() {
    let (_, s, _) = bin(&["schema", "trace"], "");
    let schema: Json = serde_json::from_str(&s).unwrap();
    let v = super::schema_support::Validator::new(&schema);
    let h = history(1);
    for rec in [
        observed("c", 10, &h, Some(&h)),
        observed("c", 10, &h, None),
        json!({"type": "observed", "run": "r", "call": "c", "policy": policy(10), "defs": h,
               "history": {"refs": [[0, 9]]}, "sent": {"refs": [0, [2, 9]]}, "dispatch": "failed", "note": "x"}),
    ] {
        assert!(v.errors(&rec).is_empty(), "{:?}", v.errors(&rec));
    }
    // What the oracle's writer writes (the Python recorders' lines), in every form.
    use hybrid_compaction_trace::Writer;
    let calls = [(h.clone(), Some(h.clone())), (history(2), None)];
    for w in [Writer::new(), Writer::with_content().expanded()] {
        for line in written(w, &calls).lines().skip(1) {
            let rec: Json = serde_json::from_str(line).unwrap();
            assert!(v.errors(&rec).is_empty(), "{line}: {:?}", v.errors(&rec));
        }
    }
    let mut bad = observed("c", 10, &h, None);
    bad["dispatch"] = json!("lost");
    assert!(!v.errors(&bad).is_empty());
}

/// The entries of `es` (trace entries with content) in the vocabulary, as a host has them.
fn vocabulary(es: &[Json]) -> Vec<hybrid_compaction_model::entry::Entry> {
    es.iter()
        .map(|e| hybrid_compaction_oracle::read_entry(&e.to_string()).unwrap())
        .collect()
}

/// The lines `writer` writes for calls `(history, sent)` of run `agent-1`, as a trace.
fn written(
    mut writer: hybrid_compaction_trace::Writer,
    calls: &[(Vec<Json>, Option<Vec<Json>>)],
) -> String {
    use hybrid_compaction_model::policy::{Policy, PolicySpec};
    let policy = Policy::new(PolicySpec {
        hard_limit: 2000,
        trigger_margin: 100,
        recent_message_retention_count: 2,
        maximum_compaction_attempts: 1,
        preservation_label: Some("writer".to_owned()),
        preservation_version: 1,
        estimator: Some(hybrid_compaction_model::seam::Implementation::context_estimator(&Model)),
    })
    .unwrap();
    let records: Vec<Json> = calls
        .iter()
        .enumerate()
        .map(|(i, (h, s))| {
            let (h, s) = (vocabulary(h), s.as_deref().map(vocabulary));
            let r = writer.observed(
                "agent-1",
                &format!("model-{i}"),
                &policy,
                &h,
                s.as_deref(),
                None,
            );
            serde_json::to_value(hybrid_compaction_trace::Record::Observed(Box::new(r))).unwrap()
        })
        .collect();
    let mut text = trace(&records);
    let end = writer.end_named_run("agent-1");
    text.push_str(&serde_json::to_string(&hybrid_compaction_trace::Record::RunEnd(end)).unwrap());
    text.push('\n');
    text
}

/// SPEC TRC-13: the oracle's writer of observed records (what the Python recorder uses): a
/// conformant run checks clean in every form (redacted or with content, compact or expanded);
/// a compaction that drops the latest tool calls is flagged at its call in every form; a
/// compact run defines each entry once, and an entry changed in place (same id, new content)
/// is a second table entry that the checker sees as changed.
#[test]
fn trc_13_the_writer_writes_observed_records_that_check_as_written() {
    use hybrid_compaction_trace::Writer;
    let forms = || {
        [
            Writer::new(),
            Writer::with_content(),
            Writer::new().expanded(),
            Writer::with_content().expanded(),
        ]
    };
    let clean: Vec<(Vec<Json>, Option<Vec<Json>>)> =
        (0..3).map(|t| (history(t), Some(history(t)))).collect();
    for w in forms() {
        let text = written(w, &clean);
        assert!(both(&text).is_empty(), "{text}");
    }
    let compact = written(Writer::new(), &clean);
    let defs: usize = compact
        .lines()
        .skip(1)
        .map(|l| {
            serde_json::from_str::<Json>(l).unwrap()["defs"]
                .as_array()
                .map_or(0, Vec::len)
        })
        .sum();
    assert_eq!(defs, history(2).len(), "each entry defined once per run");

    let h = history(1);
    let torn: Vec<Json> = h.iter().filter(|e| e["id"] != "c1").cloned().collect();
    let mut edited = h.clone();
    edited[3]["parts"][0]["result"]["value"] = json!("[cleared]");
    for w in forms() {
        let text = written(
            w,
            &[
                (history(0), Some(history(0))),
                (h.clone(), Some(torn.clone())),
            ],
        );
        let r = check_text(&text, &Model, 1);
        assert!(clauses(&r).contains(&"TRC-5"), "{:?}", r.violations);
        assert!(r.violations.iter().all(|v| v.call == "model-1"));
    }
    // The compact forms' counterexamples are the expanded forms' (their entries given back
    // from the run's table).
    let torn_calls = [
        (history(0), Some(history(0))),
        (h.clone(), Some(torn.clone())),
    ];
    let cases = |w: Writer| {
        let text = written(w, &torn_calls);
        let r = trace::check(text.as_bytes(), &Model, &Options::default()).expect("readable");
        assert!(!r.counterexamples.is_empty());
        r.counterexamples
            .iter()
            .map(|c| serde_json::to_value((&c.case, &c.expected)).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(cases(Writer::new()), cases(Writer::new().expanded()));
    assert_eq!(
        cases(Writer::with_content()),
        cases(Writer::with_content().expanded())
    );
    for w in forms() {
        let text = written(w, &[(h.clone(), Some(edited.clone()))]);
        assert_eq!(both(&text), ["TRC-3"], "{text}");
    }
}
