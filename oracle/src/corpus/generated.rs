//! The `generated` topic: seeded, reproducible random cases (expectations from the model).
//!
//! The one topic that stays code, because it is combinatorial: a splitmix64 stream drives small
//! random histories: conversational, system, optional, summary and artifact-reference entries,
//! recoverable bodies (durable or not), tool exchanges (complete, orphaned, reordered,
//! duplicated), table-estimator sizes, policies near their limits, scripted reducers (valid and
//! invalid proposals, echo, nothing, failures), snapshot schedules with version changes and
//! occasional cancellation points. The same seed and count always yield the same cases.
//!
//! Its tests come out as [`SourceGroup`]s, like a hand-written topic's, with an empty partial
//! expectation and tcIds `10001, 10002, ...` in output order ([`BASE`] + position). Only the
//! published parameters ([`super::DEFAULT_SEED`], [`super::DEFAULT_COUNT`]) give the published
//! vectors; any other seed or count is a scratch set, never pinned.

#![allow(
    clippy::cast_possible_truncation,
    reason = "generated numbers are drawn from small ranges"
)]

use hybrid_compaction_model::artifact::ArtifactReference;
use serde_json::{json, Value as Json};

use super::source::{SourceGroup, SourceTest};
use super::GENERATED_TOPIC;
use crate::ops::Case;
use crate::wire::strict;

/// The generated tcIds are `BASE + 1`, `BASE + 2`, ... in output order.
pub(crate) const BASE: u32 = 10_000;

/// splitmix64: tiny, fast, and fully specified, so other languages can reproduce it.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    /// A stream from `seed`.
    pub(crate) fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// True with probability `num/den`.
    pub(crate) fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

struct History {
    entries: Vec<Json>,
    ids: Vec<String>,
    sizes: Vec<(String, i32)>,
    /// Entries a plausible reducer may drop (conversation, optional context, summaries).
    droppable: Vec<bool>,
}

fn history(r: &mut SplitMix64, max_len: u64) -> History {
    let n = 1 + r.below(max_len);
    let mut h = History {
        entries: Vec::new(),
        ids: Vec::new(),
        sizes: Vec::new(),
        droppable: Vec::new(),
    };
    let mut call_no = 0;
    let mut i = 0;
    while (h.entries.len() as u64) < n {
        let id = format!("e{i}");
        i += 1;
        let pick = r.below(100);
        let push = |h: &mut History, e: Json, id: String, r: &mut SplitMix64| {
            let kind = e["kind"].as_str().unwrap_or_default();
            h.droppable.push(matches!(
                kind,
                "ConversationalMessage" | "OptionalContext" | "Summary"
            ));
            h.sizes.push((id.clone(), r.range(0, 40) as i32));
            h.ids.push(id);
            h.entries.push(e);
        };
        match pick {
            0..=34 => push(&mut h, conv(&id, &format!("message {i}")), id, r),
            35..=42 => push(&mut h, sys(&id, "instructions"), id, r),
            43..=50 => push(&mut h, opt(&id, &format!("optional {i}")), id, r),
            51..=55 => push(&mut h, summary(&id, "earlier summary"), id, r),
            56..=62 => push(&mut h, artref(&id, &format!("doc{}", r.below(3))), id, r),
            63..=70 => push(&mut h, body(&id, &format!("doc{}", r.below(4))), id, r),
            71..=73 => push(&mut h, auth(&id, "state"), id, r),
            _ => {
                // A tool exchange, usually complete, sometimes defective.
                call_no += 1;
                let k = format!("k{call_no}");
                let cid = id.clone();
                let rid = format!("e{i}r");
                let reference_bearing = r.chance(1, 4);
                let result_entry = if reference_bearing {
                    result_ref(&rid, &k, &format!("doc{}", r.below(4)))
                } else {
                    result(&rid, &[&k])
                };
                match r.below(20) {
                    0 => push(&mut h, call(&cid, &[&k]), cid, r), // orphaned call
                    1 => push(&mut h, result(&rid, &[&k]), rid, r), // orphan result
                    2 => {
                        // reordered
                        push(&mut h, result_entry, rid, r);
                        push(&mut h, call(&cid, &[&k]), cid, r);
                    }
                    _ => {
                        push(&mut h, call(&cid, &[&k]), cid, r);
                        push(&mut h, result_entry, rid, r);
                    }
                }
            }
        }
    }
    h
}

fn policy(r: &mut SplitMix64, sizes: &[(String, i32)]) -> Json {
    let total: i32 = sizes.iter().map(|(_, s)| *s).sum();
    // Hard limits around the total, so every outcome is reachable.
    let hard = ((total as i64 * r.range(45, 110) / 100) as i32).max(2);
    let margin = r.range(1, (hard - 1).max(1) as i64) as i32;
    let refs: Vec<(&str, i32)> = sizes.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    policy_table(
        hard,
        margin,
        r.range(1, 3) as i32,
        r.range(1, 3) as i32,
        &refs,
        r.range(0, 15) as i32,
    )
}

fn subsequence(r: &mut SplitMix64, ids: &[String], keep_num: u64) -> Vec<Json> {
    ids.iter()
        .filter(|_| r.chance(keep_num, 4))
        .map(|i| json!(i))
        .collect()
}

/// A plausible proposal: drop some droppable entries, keep the rest in order.
fn plausible(r: &mut SplitMix64, h: &History) -> Vec<Json> {
    // The last droppable entry is usually the most recent recency unit: keep it.
    let last = h.droppable.iter().rposition(|d| *d);
    h.ids
        .iter()
        .zip(&h.droppable)
        .enumerate()
        .filter(|(i, (_, d))| !**d || Some(*i) == last || r.chance(1, 2))
        .map(|(_, (id, _))| json!(id))
        .collect()
}

fn reducer_steps(r: &mut SplitMix64, h: &History, attempt: &mut u32) -> Vec<Json> {
    let ids = &h.ids;
    let n = r.below(4);
    let mut steps = Vec::new();
    for _ in 0..n {
        *attempt += 1;
        steps.push(match r.below(10) {
            0 => json!("echo"),
            1 if r.chance(1, 3) => json!("nothing"),
            2 if r.chance(1, 3) => json!({"fail": "generated failure"}),
            3 => {
                let mut items = subsequence(r, ids, 2);
                items.insert(
                    r.below(items.len() as u64 + 1) as usize,
                    json!({"new": summary(&format!("sum{attempt}"), "generated summary")}),
                );
                json!({"propose": items})
            }
            4 | 5 => json!({"propose": subsequence(r, ids, 3)}),
            _ => json!({"propose": plausible(r, h)}),
        });
    }
    steps
}

/// The message an entry of the history carries (roles as the wire defaults them).
fn as_message(e: &Json) -> Json {
    if let Some(body) = e["segment"]["body"].as_str() {
        return json!({"role": "user", "text": body});
    }
    let parts = e.get("parts").cloned();
    let role = match &parts {
        Some(Json::Array(ps)) if ps.iter().any(|p| p.get("call").is_some()) => "assistant",
        Some(Json::Array(ps)) if ps.iter().any(|p| p.get("result").is_some()) => "tool",
        _ if e["kind"] == "SystemInstruction" => "system",
        _ => "user",
    };
    match parts {
        Some(ps) => json!({"role": role, "parts": ps}),
        None => json!({"role": role, "text": e["text"].clone()}),
    }
}

/// Upstream (message-level) steps: plausible subsets of the history's messages, sometimes
/// with a new summary message, sometimes echo / null / failure.
fn upstream_steps(r: &mut SplitMix64, h: &History) -> Vec<Json> {
    let mut steps = Vec::new();
    for _ in 0..r.below(3) {
        steps.push(match r.below(8) {
            0 => json!("echo"),
            1 if r.chance(1, 2) => json!("null"),
            2 if r.chance(1, 2) => json!({"fail": "generated upstream failure"}),
            _ => {
                let last = h.droppable.iter().rposition(|d| *d);
                let mut msgs: Vec<Json> = h
                    .entries
                    .iter()
                    .zip(&h.droppable)
                    .enumerate()
                    .filter(|(i, (_, d))| !**d || Some(*i) == last || r.chance(1, 2))
                    .map(|(_, (e, _))| as_message(e))
                    .collect();
                if r.chance(1, 2) {
                    let at = r.below(msgs.len() as u64 + 1) as usize;
                    msgs.insert(
                        at,
                        json!({"role": "assistant", "text": "generated summary"}),
                    );
                }
                json!({"return": msgs})
            }
        });
    }
    steps
}

fn assemble_case(r: &mut SplitMix64) -> Json {
    let h = history(r, 8);
    let mut sizes = h.sizes.clone();
    let mut attempt = 0;
    let steps = reducer_steps(r, &h, &mut attempt);
    for k in 1..=attempt {
        sizes.push((format!("sum{k}"), r.range(0, 20) as i32));
    }
    let pol = policy(r, &sizes);
    let reducer = match r.below(10) {
        0 | 1 => json!({"kind": "messageCounting", "targetCount": r.below(5)}),
        2 | 3 => json!({"kind": "upstream", "steps": upstream_steps(r, &h)}),
        _ => json!({"kind": "scripted", "steps": steps}),
    };
    let mut case = json!({"op": "assemble", "policy": pol, "reducer": reducer});
    if r.chance(1, 3) {
        // A schedule with version changes; later steps may drop or add an entry.
        let mut snaps = vec![json!({"version": 0, "entries": h.entries})];
        let mut version = 0;
        for _ in 0..r.range(1, 3) {
            if r.chance(2, 3) {
                version += r.range(1, 2);
            }
            if r.chance(1, 2) {
                let mut es: Vec<Json> = h.entries.clone();
                if es.len() > 1 && r.chance(1, 2) {
                    es.remove(r.below(es.len() as u64) as usize);
                } else {
                    es.push(conv(&format!("late{version}"), "arrived later"));
                }
                snaps.push(json!({"version": version, "entries": es}));
            } else {
                snaps.push(json!({"version": version}));
            }
        }
        case["snapshots"] = Json::Array(snaps);
    } else {
        case["entries"] = Json::Array(h.entries);
    }
    if r.chance(1, 12) {
        let point = match r.below(3) {
            0 => "before".to_owned(),
            1 => format!("capture:{}", r.below(4)),
            _ => format!("reducer:{}", r.below(2)),
        };
        case["cancel"] = json!(point);
    }
    case
}

fn verify_case(r: &mut SplitMix64) -> Json {
    let h = history(r, 8);
    let mut proposed: Vec<Json> = if r.chance(1, 2) {
        plausible(r, &h)
    } else {
        subsequence(r, &h.ids, 3)
    };
    if r.chance(1, 3) && proposed.len() > 1 {
        let a = r.below(proposed.len() as u64) as usize;
        let b = r.below(proposed.len() as u64) as usize;
        proposed.swap(a, b);
    }
    if r.chance(1, 3) {
        let at = r.below(proposed.len() as u64 + 1) as usize;
        let e = match r.below(4) {
            0 => summary("new", "new summary"),
            1 => conv("new", "new message"),
            2 => opt("new", "forged optional"),
            _ => conv(&h.ids[0], "mutated text"),
        };
        // A mutated copy replaces the original id if present.
        if let Some(id) = e["id"].as_str() {
            proposed.retain(|p| p.as_str() != Some(id));
        }
        let at = at.min(proposed.len());
        proposed.insert(at, e);
    }
    json!({"op": "verify", "policy": policy_table(1000, 10, r.range(1, 3) as i32, 1, &[], 1),
        "original": h.entries, "proposed": proposed})
}

fn value(r: &mut SplitMix64, depth: u32) -> Json {
    match r.below(if depth > 1 { 12 } else { 14 }) {
        0 => Json::Null,
        1 => json!(format!("s{}", r.below(1000))),
        2 => json!(r.chance(1, 2)),
        3 => json!({"i32": r.range(-100000, 100000)}),
        4 => json!({"i64": (r.next_u64() as i64) >> r.below(60)}),
        5 => json!({"u64": r.next_u64() >> r.below(64)}),
        6 => {
            json!({"f64": portable((r.range(-1_000_000, 1_000_000) as f64) / 10f64.powi(r.range(0, 9) as i32))})
        }
        7 => json!({"f64": portable(10f64.powi(r.range(-12, 25) as i32))}),
        8 => {
            // The f64 nearest to the f32's shortest decimal text, so that the JSON number
            // reads back as exactly this f32.
            let x = (r.range(-10000, 10000) as f32) / 100.0;
            json!({"f32": portable(x.to_string().parse::<f64>().unwrap_or(0.0))})
        }
        9 => json!({"decimal": format!("{}.{:0>2}", r.range(-999, 999), r.below(100))}),
        10 => json!({"raw": format!("{{\"n\":{}}}", r.below(100))}),
        11 => json!({"u8": r.below(256)}),
        12 => json!({"map": {"a": value(r, depth + 1), "bb": value(r, depth + 1)}}),
        _ => json!([value(r, depth + 1), value(r, depth + 1)]),
    }
}

/// `x` rounded to the nearest value whose JSON text reads back exactly, also with serde_json's
/// fast (not always correctly rounded) float parser: vector files must mean one number.
fn portable(x: f64) -> f64 {
    let mut digits = 17;
    loop {
        let candidate: f64 = format!("{x:.prec$e}", prec = digits - 1)
            .parse()
            .unwrap_or(0.0);
        let text = serde_json::to_string(&candidate).unwrap_or_default();
        if serde_json::from_str::<f64>(&text).ok() == Some(candidate) || digits <= 1 {
            return candidate;
        }
        digits -= 1;
    }
}

fn evaluate_case(r: &mut SplitMix64) -> Json {
    let n = 1 + r.below(4);
    let mut entries = Vec::new();
    for i in 0..n {
        entries.push(match r.below(3) {
            0 => conv(&format!("e{i}"), &"é".repeat(r.below(5) as usize)),
            1 => json!({"id": format!("e{i}"), "kind": "ToolExchange", "parts": [{"call": {"callId": format!("c{i}"), "name": "tool",
                "arguments": {"x": value(r, 0)}}}]}),
            _ => result_value(&format!("e{i}"), &format!("c{i}"), value(r, 0)),
        });
    }
    let hard = r.range(2, 300) as i32;
    json!({"op": "evaluate", "policy": policy_utf8(hard, r.range(1, (hard - 1) as i64) as i32, 1, 1), "entries": entries})
}

/// The generated groups: `count` cases, seeded, with tcIds [`BASE`] + position. A case the
/// wire format does not read (a bug of this generator) is reported by its position.
pub(crate) fn groups(seed: u64, count: usize) -> Result<Vec<SourceGroup>, Vec<String>> {
    let mut r = SplitMix64::new(seed);
    let mut assemble = Vec::new();
    let mut verify = Vec::new();
    let mut select = Vec::new();
    let mut analyze = Vec::new();
    let mut evaluate = Vec::new();
    for i in 0..count {
        let gen = |comment: String, clauses: &[&'static str], case: Json| {
            (comment, clauses.to_vec(), case)
        };
        match i % 10 {
            0..=3 => assemble.push(gen(
                format!("generated assembly #{i}"),
                &["ASM-7"],
                assemble_case(&mut r),
            )),
            4 | 5 => verify.push(gen(
                format!("generated verification #{i}"),
                &["VER-1"],
                verify_case(&mut r),
            )),
            6 | 7 => {
                let h = history(&mut r, 10);
                if i % 10 == 6 {
                    select.push(gen(format!("generated selection #{i}"), &["PRE-1"],
                        json!({"op": "select", "policy": policy_utf8(100, 10, r.range(1, 4) as i32, 1), "entries": h.entries})));
                } else {
                    analyze.push(gen(
                        format!("generated analysis #{i}"),
                        &["EXC-3"],
                        json!({"op": "analyze", "entries": h.entries}),
                    ));
                }
            }
            _ => evaluate.push(gen(
                format!("generated evaluation #{i}"),
                &["EST-2", "POL-3"],
                evaluate_case(&mut r),
            )),
        }
    }
    let mut tc_id = BASE;
    let mut problems = Vec::new();
    let mut group = |description: &str, tests: Vec<(String, Vec<&'static str>, Json)>| {
        SourceGroup {
        description: description.to_owned(),
        policy: None,
        tests: tests
            .into_iter()
            .filter_map(|(comment, clauses, case)| {
                tc_id += 1;
                match strict::read_value::<Case>(case) {
                    Ok(case) => Some(SourceTest {
                        tc_id,
                        comment,
                        clauses: clauses.iter().map(|c| (*c).to_owned()).collect(),
                        flags: Vec::new(),
                        case,
                        expect: json!({}),
                    }),
                    Err(e) => {
                        problems.push(format!("{GENERATED_TOPIC}: tcId {tc_id} ({comment}): the generated case does not read: {e}"));
                        None
                    }
                }
            })
            .collect(),
    }
    };
    let groups = vec![
        group(
            "generated assemblies (table estimator, scripted reducers, schedules)",
            assemble,
        ),
        group("generated verifications", verify),
        group("generated selections", select),
        group("generated analyses", analyze),
        group(
            "generated evaluations (UTF-8 estimator, random values)",
            evaluate,
        ),
    ];
    if problems.is_empty() {
        Ok(groups)
    } else {
        Err(problems)
    }
}

// The generator's entry and policy builders (wire-format JSON).

/// The canonical reference of `content` (SPEC ART-2).
fn reference(content: &str) -> String {
    ArtifactReference::to_content(content).to_string()
}

/// An entry of `kind` with one text part.
fn entry(id: &str, kind: &str, text: &str) -> Json {
    json!({"id": id, "kind": kind, "text": text})
}

fn conv(id: &str, text: &str) -> Json {
    entry(id, "ConversationalMessage", text)
}

fn sys(id: &str, text: &str) -> Json {
    entry(id, "SystemInstruction", text)
}

fn opt(id: &str, text: &str) -> Json {
    entry(id, "OptionalContext", text)
}

fn summary(id: &str, text: &str) -> Json {
    entry(id, "Summary", text)
}

fn auth(id: &str, text: &str) -> Json {
    entry(id, "AuthoritativeSessionState", text)
}

/// An `ArtifactReference` entry whose text is the reference of `content`.
fn artref(id: &str, content: &str) -> Json {
    entry(id, "ArtifactReference", &reference(content))
}

/// A `ToolExchange` call entry with call parts `call_ids`, function `f`.
fn call(id: &str, call_ids: &[&str]) -> Json {
    let parts: Vec<Json> = call_ids
        .iter()
        .map(|c| json!({"call": {"callId": c, "name": "f"}}))
        .collect();
    json!({"id": id, "kind": "ToolExchange", "parts": parts})
}

/// A `ToolExchange` result entry answering `call_ids` with value `"ok"`.
fn result(id: &str, call_ids: &[&str]) -> Json {
    let parts: Vec<Json> = call_ids
        .iter()
        .map(|c| json!({"result": {"callId": c, "value": "ok"}}))
        .collect();
    json!({"id": id, "kind": "ToolExchange", "parts": parts})
}

/// A `ToolExchange` result entry answering `call_id` with a value.
fn result_value(id: &str, call_id: &str, value: Json) -> Json {
    json!({"id": id, "kind": "ToolExchange", "parts": [{"result": {"callId": call_id, "value": value}}]})
}

/// A result entry whose value is the canonical reference of `content` (reference-bearing).
fn result_ref(id: &str, call_id: &str, content: &str) -> Json {
    result_value(id, call_id, Json::String(reference(content)))
}

/// A `RecoverableContextSegment` whose body is `content` (reference = its digest).
fn body(id: &str, content: &str) -> Json {
    json!({"id": id, "kind": "RecoverableContextSegment", "segment": {"body": content}})
}

/// A policy with a table estimator.
fn policy_table(
    hard: i32,
    margin: i32,
    retention: i32,
    attempts: i32,
    sizes: &[(&str, i32)],
    default: i32,
) -> Json {
    let mut m = serde_json::Map::new();
    for (k, v) in sizes {
        m.insert((*k).to_owned(), json!(v));
    }
    json!({
        "hardLimit": hard, "triggerMargin": margin,
        "recentMessageRetentionCount": retention, "maximumCompactionAttempts": attempts,
        "preservationLabel": "vectors", "preservationVersion": 1,
        "estimator": {"kind": "table", "sizes": Json::Object(m), "default": default}
    })
}

/// A policy with the UTF-8 context estimator.
fn policy_utf8(hard: i32, margin: i32, retention: i32, attempts: i32) -> Json {
    json!({
        "hardLimit": hard, "triggerMargin": margin,
        "recentMessageRetentionCount": retention, "maximumCompactionAttempts": attempts,
        "preservationLabel": "vectors", "preservationVersion": 1,
        "estimator": {"kind": "utf8"}
    })
}
