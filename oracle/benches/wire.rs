//! Criterion benchmarks of the oracle's input paths at sizes a user can hand it: time per entry
//! must stay flat as inputs grow (linear time everywhere a user's input can be large).
//!
//! * `verify_ids/engine`: a `verify` case whose proposal lists every original entry by id, from
//!   JSON text to the answer (parse, id resolution, verification, output), n = 10^4 .. 10^6.
//! * `verify_ids/parse`: the same text read into a case only (the CLI's one-pass strict reader,
//!   with paths and duplicate-key checks), n = 10^4 .. 10^6.
//! * `assemble_scripted/engine`: an `assemble` case over n entries whose scripted reducer
//!   proposes the last tenth by id (the id lookup of the scripted reducer), n = 10^3 .. 10^5.
//!
//! `Throughput::Elements(n)` makes criterion report entries per second, so a flat line across
//! sizes is the claim. Measurement is short (10 samples) so the run takes a few minutes.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hybrid_compaction_oracle::{run_case, Case, Engine};
use hybrid_compaction_trace::strict;
use serde_json::{json, Value as Json};

fn policy(hard_limit: i64) -> Json {
    json!({"hardLimit": hard_limit, "triggerMargin": 10, "recentMessageRetentionCount": 1,
           "maximumCompactionAttempts": 3, "preservationLabel": "bench",
           "preservationVersion": 1, "estimator": {"kind": "utf8"}})
}

fn entries(n: usize) -> Vec<Json> {
    (0..n)
        .map(|i| json!({"id": format!("e{i}"), "kind": "ConversationalMessage", "text": "hello"}))
        .collect()
}

fn verify_case(n: usize) -> String {
    let ids: Vec<String> = (0..n).map(|i| format!("e{i}")).collect();
    json!({"op": "verify", "policy": policy(i64::from(i32::MAX)), "original": entries(n),
           "proposed": ids})
    .to_string()
}

fn assemble_case(n: usize) -> String {
    let keep: Vec<String> = (n - n / 10..n).map(|i| format!("e{i}")).collect();
    // Every entry measures 5 bytes: the history is over the limit, the last tenth fits.
    let limit = i64::try_from(n).expect("small");
    json!({"op": "assemble", "policy": policy(limit), "entries": entries(n),
           "reducer": {"kind": "scripted", "steps": [{"propose": keep}]}})
    .to_string()
}

fn answer(text: &str) -> String {
    let case: Case = strict::read(text).expect("a valid case");
    let output = run_case(&case, &Engine).expect("an answer");
    serde_json::to_string(&output).expect("serializable")
}

fn bench(c: &mut Criterion, name: &str, sizes: &[usize], make: fn(usize) -> String) {
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for &n in sizes {
        let text = make(n);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("engine", n), &text, |b, text| {
            b.iter(|| black_box(answer(text)))
        });
        group.bench_with_input(BenchmarkId::new("parse", n), &text, |b, text| {
            b.iter(|| black_box(strict::read::<Case>(text).expect("a valid case")))
        });
    }
    group.finish();
}

fn oracle_paths(c: &mut Criterion) {
    bench(c, "verify_ids", &[10_000, 100_000, 1_000_000], verify_case);
    bench(
        c,
        "assemble_scripted",
        &[1_000, 10_000, 100_000],
        assemble_case,
    );
}

/// The criterion group (in a private module: `criterion_group!` declares a public function).
mod group {
    use super::*;
    criterion_group!(benches, oracle_paths);
}
criterion_main!(group::benches);
