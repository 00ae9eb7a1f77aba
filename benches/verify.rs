//! Criterion benchmarks of the verifier (SPEC VER-1): the engine and the executable spec against
//! a floor, for n = 100 .. 100k entries, on an accepted and a rejected proposal.
//!
//! * The history: a system message, then turns of a user question, an assistant message with two
//!   parallel tool calls, their results in two tool messages, and an assistant answer.
//! * `accepted`: the proposal drops every user question and answer but the last turn's (tool
//!   exchanges, which are required while incomplete or recent, are kept whole where required;
//!   here every exchange is kept, so the proposal verifies).
//! * `rejected`: the accepted proposal with one tool result removed in the middle (an orphaned
//!   call: `OrphanedToolCall`, plus the missing required result).
//! * `floor`: what any verifier must at least do: index the original's ids once and look every
//!   proposed id up (no checks). The claim of the issue is engine <= 2x floor at n = 10^4.
//!
//! The spec is skipped at n = 100k (its positional searches are O(n^2) by design). Measurement is
//! short (10 samples, 2 s) so the run takes a few minutes.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hybrid_compaction::engine;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::message::{FunctionCall, FunctionResult, Message, Part};
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::value::Value;
use hybrid_compaction_spec as spec;

const SIZES: [usize; 4] = [100, 1_000, 10_000, 100_000];
const SPEC_MAX: usize = 10_000;

fn entry(id: String, kind: EntryKind, message: Message) -> Entry {
    Entry::new(id, kind, message).expect("a valid entry")
}

fn call(id: &str) -> Part {
    Part::Call(FunctionCall {
        call_id: id.to_owned(),
        name: "read_file".to_owned(),
        arguments: None,
        informational_only: false,
    })
}

/// A history of about `n` entries (six per turn).
fn history(n: usize) -> Vec<Entry> {
    let mut out = vec![entry(
        "sys".into(),
        EntryKind::SystemInstruction,
        Message::text("system", "You are a careful agent."),
    )];
    let mut t = 0;
    while out.len() < n {
        let (a, b) = (format!("c{t}a"), format!("c{t}b"));
        let conv = |id: String, role: &str, text: &str| {
            entry(
                id,
                EntryKind::ConversationalMessage,
                Message::text(role, text),
            )
        };
        out.push(conv(format!("u{t}"), "user", "What is in the file?"));
        let calls = Message {
            role: "assistant".into(),
            author: None,
            parts: vec![call(&a), call(&b)],
        };
        out.push(entry(format!("k{t}"), EntryKind::ToolExchange, calls));
        for id in [&a, &b] {
            let result = Message {
                role: "tool".into(),
                author: None,
                parts: vec![Part::Result(FunctionResult {
                    call_id: id.clone(),
                    value: Value::String("contents of the file".into()),
                })],
            };
            out.push(entry(format!("r{id}"), EntryKind::ToolExchange, result));
        }
        out.push(conv(format!("a{t}"), "assistant", "It holds the answer."));
        t += 1;
    }
    out
}

/// The accepted proposal: conversational messages only of the last turn, everything else kept.
fn accepted(original: &[Entry]) -> Vec<Entry> {
    let last_turn = original.len().saturating_sub(5);
    original
        .iter()
        .enumerate()
        .filter(|(i, e)| *i >= last_turn || e.kind() != EntryKind::ConversationalMessage)
        .map(|(_, e)| e.clone())
        .collect()
}

/// The rejected proposal: the accepted one without one tool result in the middle.
fn rejected(original: &[Entry]) -> Vec<Entry> {
    let mut p = accepted(original);
    let mid = p
        .iter()
        .enumerate()
        .skip(p.len() / 2)
        .find(|(_, e)| e.id().as_str().starts_with('r'))
        .map(|(i, _)| i)
        .expect("a tool result");
    p.remove(mid);
    p
}

/// The floor: index the original's ids once, look every proposed id up.
fn floor(original: &[Entry], proposed: &[Entry]) -> usize {
    let index: HashMap<&str, usize> = original
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id().as_str(), i))
        .collect();
    proposed
        .iter()
        .filter_map(|e| index.get(e.id().as_str()))
        .count()
}

fn policy() -> Policy {
    Policy::new(PolicySpec {
        hard_limit: i32::MAX,
        trigger_margin: 1,
        recent_message_retention_count: 1,
        maximum_compaction_attempts: 1,
        preservation_label: Some("bench".into()),
        preservation_version: 1,
        estimator: Some(std::sync::Arc::new(engine::estimate::Utf8ContextEstimator)),
    })
    .expect("a valid policy")
}

fn verify(c: &mut Criterion) {
    let policy = policy();
    for (name, make) in [
        ("Verify/accepted", accepted as fn(&[Entry]) -> Vec<Entry>),
        ("Verify/rejected", rejected),
    ] {
        let mut group = c.benchmark_group(name);
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        for n in SIZES {
            let original = history(n);
            let proposed = make(&original);
            let accepted_here = engine::verify::verify(&original, &proposed, &policy)
                .expect("no duplicate ids")
                .is_accepted();
            assert_eq!(accepted_here, name.ends_with("accepted"), "{name} at {n}");
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new("engine", n), |b| {
                b.iter(|| black_box(engine::verify::verify(&original, &proposed, &policy)))
            });
            if n <= SPEC_MAX {
                group.bench_function(BenchmarkId::new("spec", n), |b| {
                    b.iter(|| black_box(spec::verify::verify(&original, &proposed, &policy)))
                });
            }
            group.bench_function(BenchmarkId::new("floor", n), |b| {
                b.iter(|| black_box(floor(&original, &proposed)))
            });
        }
        group.finish();
    }
}

/// The criterion group (in a private module: `criterion_group!` declares a public function).
mod group {
    use super::*;
    criterion_group!(benches, verify);
}
criterion_main!(group::benches);
