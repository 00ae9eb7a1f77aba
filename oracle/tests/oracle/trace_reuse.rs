//! Reusing a run's work changes nothing (SPEC TRC-1 .. TRC-12, `docs/TRACE.md`): the checker
//! carries a compact run's recorded sizes from one call to the next and answers a call whose
//! replay inputs equal an earlier call's with that call's answer (`trace::answer`); with that
//! reuse on and off (`Options::reuse`), and on one or two threads, every report is the same
//! (violations, their order, counterexamples, `calls`, `runs`, `replayed`).
//!
//! The traces are the node's generated runs (`trace_support`), written in the compact profile,
//! with retried calls added (the same inputs again, or with one input changed: the cancellation
//! point, a reducer answer, the policy, a snapshot, a snapshot's version, a table entry with an
//! id already used) and
//! faults seeded into recorded answers, so that equal and unequal inputs, clean and violating
//! calls, carried and per-call sizes all occur.

use crate::trace_support;

use hybrid_compaction_oracle::trace::{self, Options, Report};
use hybrid_compaction_oracle::{Engine, Implementation, Model};
use hybrid_compaction_trace::write::{header, Writer};
use proptest::prelude::*;
use serde_json::{json, Value as Json};

/// The compact record lines (as JSON) of the generated runs `seeds`.
fn compact_lines(seeds: std::ops::Range<u64>, content: bool, initial: usize) -> Vec<Json> {
    let mut w = if content {
        Writer::with_content()
    } else {
        Writer::new()
    };
    let mut out = Vec::new();
    for seed in seeds {
        for (l, _) in trace_support::run_records_sized(seed, &mut w, initial) {
            out.push(serde_json::from_str(&l).unwrap());
        }
    }
    out
}

fn to_text(lines: &[Json]) -> String {
    let mut s = serde_json::to_string(&header("reuse")).unwrap();
    for l in lines {
        s.push('\n');
        s.push_str(&l.to_string());
    }
    s + "\n"
}

fn check(text: &str, imp: &dyn Implementation, reuse: bool, jobs: usize) -> Report {
    let opts = Options {
        jobs,
        counterexamples: true,
        reuse,
        ..Options::default()
    };
    trace::check(text.as_bytes(), imp, &opts).expect("readable trace")
}

/// The index of the `n`-th call record (modulo the number of calls).
fn nth_call(lines: &[Json], n: usize) -> Option<usize> {
    let calls: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i]["type"] == "call")
        .collect();
    (!calls.is_empty()).then(|| calls[n % calls.len()])
}

/// Appends a retry of call `i` at the end of its run (before its `runEnd`): the same record as
/// another call (a new call id, its own AssemblyId, no lease, no admission number, defining
/// nothing: its references name the original's entries), then `edit`ed. Its index.
fn retry(lines: &mut Vec<Json>, i: usize, tag: usize, edit: impl Fn(&mut Json)) -> usize {
    let mut copy = lines[i].clone();
    let o = copy.as_object_mut().unwrap();
    o.insert(
        "call".into(),
        json!(format!(
            "{}-retry-{tag}",
            lines[i]["call"].as_str().unwrap()
        )),
    );
    for member in ["lease", "admitted", "defs"] {
        o.remove(member);
    }
    if let Some(evs) = copy["events"].as_array_mut() {
        for e in evs {
            e["assemblyId"] = json!(format!("retry-{tag}"));
        }
    }
    edit(&mut copy);
    let run = lines[i]["run"].clone();
    let at = (i + 1..lines.len())
        .find(|&k| lines[k]["type"] == "runEnd" && lines[k]["run"] == run)
        .unwrap_or(lines.len());
    lines.insert(at, copy);
    at
}

/// The recorded result member of a compact (`resultRefs`) or plain (`result`) record.
fn result_key(c: &Json) -> &'static str {
    if c["result"].is_object() {
        "result"
    } else {
        "resultRefs"
    }
}

/// One way to change a trace.
#[derive(Debug, Clone)]
enum Edit {
    /// A retry with the very same inputs.
    Retry(usize),
    /// A retry cancelled elsewhere (`before`, `capture:0`, `capture:1`, `reducer:0`,
    /// `unknown`, or not cancelled).
    RetryCancel(usize, usize),
    /// A retry whose first reducer step answers otherwise.
    RetryAnswer(usize, usize),
    /// A retry under another hard limit.
    RetryPolicy(usize),
    /// A retry whose first snapshot lacks its last reference.
    RetrySnapshot(usize),
    /// A retry whose snapshots hold the same entries under other versions: every version one
    /// higher (`0`), only the last capture's (`1`: the history changed while the assembler
    /// worked: a restart, SPEC ASM-5) or only the first capture's (`2`).
    RetryVersion(usize, usize),
    /// A retry whose first snapshot names, instead of its first entry, a new table entry with
    /// that entry's id (and its size plus `delta`), or both (`both`: two entries, one id).
    RetrySharedId(usize, i32, bool),
    /// A retry whose first snapshot names a table entry twice (its first, again at the end:
    /// two entries with one id, SPEC SNAP-1), or (`false`) its first two entries swapped.
    RetryRepeatRef(usize, bool),
    /// A recorded answer altered (outcome, attempt count, stages, final size, an event).
    Fault(usize, usize),
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => any::<usize>().prop_map(Edit::Retry),
        3 => (any::<usize>(), 0..6usize).prop_map(|(c, k)| Edit::RetryCancel(c, k)),
        2 => (any::<usize>(), 0..4usize).prop_map(|(c, k)| Edit::RetryAnswer(c, k)),
        1 => any::<usize>().prop_map(Edit::RetryPolicy),
        1 => any::<usize>().prop_map(Edit::RetrySnapshot),
        2 => (any::<usize>(), 0..3usize).prop_map(|(c, k)| Edit::RetryVersion(c, k)),
        2 => (any::<usize>(), 0..2i32, any::<bool>()).prop_map(|(c, d, b)| Edit::RetrySharedId(c, d, b)),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(c, d)| Edit::RetryRepeatRef(c, d)),
        3 => (any::<usize>(), 0..5usize).prop_map(|(c, k)| Edit::Fault(c, k)),
    ]
}

/// Raises snapshot versions of call record `c` by one: every snapshot's (`0`), the last's (`1`)
/// or the first's (`2`).
fn bump_versions(c: &mut Json, k: usize) {
    let Some(snaps) = c["snapshots"].as_array_mut() else {
        return;
    };
    let n = snaps.len();
    let which = match k {
        0 => 0..n,
        1 => n.saturating_sub(1)..n,
        _ => 0..n.min(1),
    };
    for s in &mut snaps[which] {
        s["version"] = json!(s["version"].as_i64().unwrap_or(0) + 1);
    }
}

/// The first reference of a snapshot's `refs` as a single index, the list made explicit.
fn first_ref(refs: &mut Vec<Json>) -> Option<u64> {
    let first = refs.first()?.clone();
    match first {
        Json::Number(n) => n.as_u64(),
        Json::Array(r) => {
            let (a, b) = (r[0].as_u64()?, r[1].as_u64()?);
            refs.remove(0);
            for k in (a..=b).rev() {
                refs.insert(0, json!(k));
            }
            Some(a)
        }
        _ => None,
    }
}

/// The table entry `at` of the run of call `i`: the `at`-th `defs` entry of the run's records
/// up to `i`.
fn table_entry(lines: &[Json], i: usize, at: u64) -> Option<Json> {
    let run = &lines[i]["run"];
    let mut n = 0u64;
    for l in &lines[..=i] {
        if l["run"] != *run {
            continue;
        }
        if l["type"] == "runEnd" {
            n = 0;
            continue;
        }
        for d in l["defs"].as_array().into_iter().flatten() {
            if n == at {
                return Some(d.clone());
            }
            n += 1;
        }
    }
    None
}

/// The size of the run's table after call `i`'s run has defined everything up to its end.
fn table_len(lines: &[Json], i: usize) -> u64 {
    let run = &lines[i]["run"];
    let mut n = 0u64;
    for l in lines {
        if l["run"] != *run {
            continue;
        }
        if l["type"] == "runEnd" {
            break;
        }
        n += l["defs"].as_array().map_or(0, |d| d.len() as u64);
    }
    n
}

fn apply(lines: &mut Vec<Json>, e: &Edit, tag: usize) {
    let Some(i) = nth_call(
        lines,
        match e {
            Edit::Retry(c)
            | Edit::RetryCancel(c, _)
            | Edit::RetryAnswer(c, _)
            | Edit::RetryPolicy(c)
            | Edit::RetrySnapshot(c)
            | Edit::RetryVersion(c, _)
            | Edit::RetrySharedId(c, _, _)
            | Edit::RetryRepeatRef(c, _)
            | Edit::Fault(c, _) => *c,
        },
    ) else {
        return;
    };
    match e {
        Edit::Retry(_) => {
            retry(lines, i, tag, |_| {});
        }
        Edit::RetryCancel(_, k) => {
            let cancel = [
                json!("before"),
                json!("capture:0"),
                json!("capture:1"),
                json!("reducer:0"),
                json!("unknown"),
                Json::Null,
            ][*k]
                .clone();
            retry(lines, i, tag, |c| match &cancel {
                Json::Null => {
                    c.as_object_mut().unwrap().remove("cancel");
                }
                v => c["cancel"] = v.clone(),
            });
        }
        Edit::RetryAnswer(_, k) => {
            let k = *k;
            retry(lines, i, tag, |c| {
                let Some(step) = c["reducer"].get_mut(0) else {
                    return;
                };
                step["answer"] = match k {
                    0 => json!("nothing"),
                    1 => json!({"error": "ReducerFailed"}),
                    2 => json!({"error": "ReducerContract"}),
                    _ => match step["answer"]["propose"].as_array() {
                        Some(items) => {
                            json!({"propose": items.iter().rev().cloned().collect::<Vec<_>>()})
                        }
                        None => json!({"propose": []}),
                    },
                };
            });
        }
        Edit::RetryPolicy(_) => {
            retry(lines, i, tag, |c| {
                let h = c["policy"]["hardLimit"].as_i64().unwrap_or(100);
                c["policy"]["hardLimit"] = json!(h + 1);
            });
        }
        Edit::RetrySnapshot(_) => {
            retry(lines, i, tag, |c| {
                if let Some(refs) = c
                    .pointer_mut("/snapshots/0/refs")
                    .and_then(Json::as_array_mut)
                {
                    refs.pop();
                }
            });
        }
        Edit::RetryVersion(_, k) => {
            let k = *k;
            retry(lines, i, tag, |c| bump_versions(c, k));
        }
        Edit::RetrySharedId(_, delta, both) => {
            let mut original = lines[i].clone();
            let Some(refs) = original
                .pointer_mut("/snapshots/0/refs")
                .and_then(Json::as_array_mut)
            else {
                return;
            };
            let Some(at) = first_ref(refs) else { return };
            let Some(mut def) = table_entry(lines, i, at) else {
                return;
            };
            if let Some(s) = def["size"].as_i64() {
                def["size"] = json!(s + i64::from(*delta));
            }
            let new = table_len(lines, i);
            let refs = refs.clone();
            let both = *both;
            retry(lines, i, tag, |c| {
                let mut refs = refs.clone();
                if both {
                    refs.push(json!(new));
                } else {
                    refs[0] = json!(new);
                }
                c["snapshots"][0]["refs"] = json!(refs);
                c["defs"] = json!([def.clone()]);
            });
        }
        Edit::RetryRepeatRef(_, dup) => {
            let dup = *dup;
            retry(lines, i, tag, |c| {
                let Some(refs) = c
                    .pointer_mut("/snapshots/0/refs")
                    .and_then(Json::as_array_mut)
                else {
                    return;
                };
                let Some(at) = first_ref(refs) else { return };
                if dup {
                    refs.push(json!(at));
                } else if refs.len() > 1 && refs[1].is_u64() {
                    refs.swap(0, 1);
                }
            });
        }
        Edit::Fault(_, k) => {
            let c = &mut lines[i];
            let r = result_key(c);
            match k {
                0 if c[r].is_object() => {
                    let o = if c[r]["outcome"] == "Reduced" {
                        "WithinLimit"
                    } else {
                        "Reduced"
                    };
                    c[r]["outcome"] = json!(o);
                }
                1 if c[r].is_object() => {
                    c[r]["attemptCount"] = json!(c[r]["attemptCount"].as_i64().unwrap_or(0) + 9)
                }
                2 if c[r].is_object() => {
                    if let Some(st) = c[r]["stages"].as_array_mut() {
                        st.push(json!("SnapshotCaptured"));
                    }
                }
                3 if c["diagnostics"].is_object() => {
                    c["diagnostics"]["finalSize"] =
                        json!(c["diagnostics"]["finalSize"].as_i64().unwrap_or(0) + 1)
                }
                _ => {
                    if let Some(evs) = c["events"].as_array_mut() {
                        evs.pop();
                    }
                }
            }
        }
    }
}

/// The whole report, as the JSON the checker prints.
fn output(r: &Report) -> Json {
    serde_json::to_value(r).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// SPEC TRC-1 .. TRC-12: reuse on and off, one thread or two, give the same report on
    /// generated compact runs with retried calls and seeded faults (violations and
    /// counterexamples included).
    #[test]
    fn trc_1_reuse_on_and_off_give_the_same_report(
        seed in any::<u64>(),
        runs in 1..4u64,
        content in any::<bool>(),
        initial in prop_oneof![Just(0usize), Just(24usize)],
        engine in any::<bool>(),
        edits in proptest::collection::vec(edit_strategy(), 0..8),
    ) {
        let imp: &dyn Implementation = if engine { &Engine } else { &Model };
        let mut lines = compact_lines(seed..seed + runs, content, initial);
        for (tag, e) in edits.iter().enumerate() {
            apply(&mut lines, e, tag);
        }
        let text = to_text(&lines);
        let off = check(&text, imp, false, 1);
        let on = check(&text, imp, true, 1);
        prop_assert_eq!(off.reused, 0);
        prop_assert_eq!(output(&on), output(&off), "reuse on (left) and off (right)\n{}", text);
        let two = check(&text, imp, true, 2);
        prop_assert_eq!(output(&two), output(&off), "two jobs (left), reuse off (right)\n{}", text);
    }
}

/// The first generated run with a replayed, successful call; its lines and that call's index.
fn run_with_success(content: bool) -> (Vec<Json>, usize) {
    for seed in 0..200 {
        let lines = compact_lines(seed..seed + 1, content, 24);
        let text = to_text(&lines);
        let r = check(&text, &Engine, false, 1);
        if r.replayed == 0 || !r.violations.is_empty() {
            continue;
        }
        if let Some(i) = lines.iter().position(|c| {
            c["type"] == "call"
                && c["error"].is_null()
                && c[result_key(c)]["outcome"]
                    .as_str()
                    .is_some_and(|o| ["WithinLimit", "Reduced"].contains(&o))
        }) {
            return (lines, i);
        }
    }
    panic!("no generated run has a replayed success");
}

/// SPEC TRC-1: a retried call (the same inputs recorded again) is answered from the cache, and
/// still reports its own violations: a retry recording another attempt count is flagged, the
/// original is not; a retry cancelled elsewhere is replayed, not answered from the cache.
#[test]
fn trc_1_a_retried_call_is_answered_from_the_cache_and_reports_its_own_violations() {
    for content in [false, true] {
        let (mut lines, i) = run_with_success(content);
        let call = lines[i]["call"].as_str().unwrap().to_owned();
        let clean = check(&to_text(&lines), &Engine, true, 1);
        let base = clean.reused;
        retry(&mut lines, i, 0, |_| {});
        retry(&mut lines, i, 1, |c| {
            let r = result_key(c);
            c[r]["attemptCount"] = json!(c[r]["attemptCount"].as_i64().unwrap() + 9);
        });
        let text = to_text(&lines);
        for imp in [&Engine as &dyn Implementation, &Model] {
            let on = check(&text, imp, true, 1);
            let off = check(&text, imp, false, 1);
            assert_eq!(output(&on), output(&off));
            assert_eq!(on.reused, base + 2, "both retries answered from the cache");
            assert_eq!(off.reused, 0);
            let flagged: Vec<&str> = on.violations.iter().map(|v| v.call.as_str()).collect();
            assert_eq!(flagged, [format!("{call}-retry-1")], "{:?}", on.violations);
            assert!(
                on.violations[0].message.contains("attemptCount"),
                "{:?}",
                on.violations
            );
        }
        // A retry cancelled before assembly has other inputs: replayed, and flagged (it
        // records the uncancelled answer).
        retry(&mut lines, i, 2, |c| c["cancel"] = json!("before"));
        let text = to_text(&lines);
        let on = check(&text, &Engine, true, 1);
        assert_eq!(
            on.reused,
            base + 2,
            "the cancelled retry is not a cache hit"
        );
        assert_eq!(output(&on), output(&check(&text, &Engine, false, 1)));
        assert!(
            on.violations
                .iter()
                .any(|v| v.call == format!("{call}-retry-2") && v.clause == "TRC-1"),
            "{:?}",
            on.violations
        );
    }
}

/// SPEC TRC-1: a retried call whose inputs differ from the original's only in its snapshot
/// versions is not answered from the cache: it is replayed, and the original's recorded answer
/// (its `latestSnapshotVersion`, and with a version changed between captures its stages) is a
/// violation of the retry. Reuse on and off report the same.
#[test]
fn trc_1_a_retry_differing_only_in_snapshot_versions_is_replayed_and_flagged() {
    for content in [false, true] {
        let (mut lines, i) = run_with_success(content);
        let call = lines[i]["call"].as_str().unwrap().to_owned();
        let base = check(&to_text(&lines), &Engine, true, 1).reused;
        for k in 0..3 {
            retry(&mut lines, i, k, |c| bump_versions(c, k));
        }
        let text = to_text(&lines);
        for imp in [&Engine as &dyn Implementation, &Model] {
            let on = check(&text, imp, true, 1);
            assert_eq!(output(&on), output(&check(&text, imp, false, 1)));
            assert_eq!(
                on.reused, base,
                "no retry is a cache hit: {:?}",
                on.violations
            );
            for k in 0..3 {
                let retried = format!("{call}-retry-{k}");
                assert!(
                    on.violations
                        .iter()
                        .any(|v| v.call == retried && v.clause == "TRC-1"),
                    "{retried}: {:?}",
                    on.violations
                );
            }
        }
    }
}

/// The verdicts of a report: each violation's clause, line and call, and the counts (the
/// messages name the implementation, so they are left out).
fn verdicts(r: &Report) -> (Vec<(&'static str, usize, String)>, usize, usize) {
    let v = r
        .violations
        .iter()
        .map(|v| (v.clause, v.line, v.call.clone()))
        .collect();
    (v, r.calls, r.replayed)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// SPEC TRC-1: the engine's seam reuses one assembler per thread across calls
    /// (`hybrid_compaction::seam::Engine::assemble`); after hundreds of calls of different runs,
    /// sizes and policies on one thread (and on two), its verdicts are the specification's,
    /// which builds everything afresh, on generated runs with retried calls and seeded faults.
    #[test]
    fn trc_1_the_engines_reused_assembler_judges_as_the_specification(
        seed in any::<u64>(),
        content in any::<bool>(),
        edits in proptest::collection::vec(edit_strategy(), 0..8),
    ) {
        let mut lines = compact_lines(seed..seed + 6, content, 24);
        for (tag, e) in edits.iter().enumerate() {
            apply(&mut lines, e, tag);
        }
        let text = to_text(&lines);
        let model = check(&text, &Model, false, 1);
        for jobs in [1, 2] {
            let engine = check(&text, &Engine, true, jobs);
            prop_assert_eq!(verdicts(&engine), verdicts(&model), "engine, {} jobs (left), specification (right)\n{}", jobs, text);
        }
    }
}
