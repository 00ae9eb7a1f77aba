//! Criterion benchmark of `check` (SPEC TRC-1 .. TRC-11) on traces recorded by the node: generated
//! runs whose conversations start at about 100 messages (so calls carry about 100 entries per
//! snapshot), redacted, replayed through the executable specification and through the engine,
//! on one thread (`--jobs 1`) and on two.
//!
//! Throughput is reported in calls per second (`Throughput::Elements`). Measurement is kept
//! short (10 samples) so the run stays within a minute or two; `docs/PERFORMANCE.md` records
//! one run.

#[path = "../tests/trace_support/mod.rs"]
mod trace_support;

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hybrid_compaction_oracle::trace::record::{header, Writer};
use hybrid_compaction_oracle::trace::{self, Options};
use hybrid_compaction_oracle::wire::exec::{Engine, Implementation, Model};

/// A trace of `runs` generated runs of about `initial` messages, and its number of calls.
fn recorded(runs: u64, initial: usize) -> (String, usize) {
    let mut text = serde_json::to_string(&header("bench")).unwrap();
    let mut calls = 0;
    let mut w = Writer::new();
    for seed in 0..runs {
        for (line, rec) in trace_support::run_records_sized(seed, &mut w, initial) {
            calls += matches!(rec, trace::format::Record::Call(_)) as usize;
            text.push('\n');
            text.push_str(&line);
        }
    }
    text.push('\n');
    (text, calls)
}

fn bench(c: &mut Criterion) {
    let (text, calls) = recorded(100, 100);
    let mut g = c.benchmark_group("check");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    g.throughput(Throughput::Elements(calls as u64));
    let imps: [(&str, &dyn Implementation); 2] = [("model", &Model), ("engine", &Engine)];
    for (name, imp) in imps {
        for jobs in [1usize, 2] {
            let opts = Options {
                jobs,
                counterexamples: false,
            };
            g.bench_with_input(
                BenchmarkId::new(format!("{name}/jobs{jobs}"), calls),
                &text,
                |b, t| {
                    b.iter(|| {
                        let r = trace::check(black_box(t.as_bytes()), imp, &opts).unwrap();
                        assert!(r.violations.is_empty());
                        r.calls
                    })
                },
            );
        }
    }
    g.finish();
}

/// The criterion group (in a private module: `criterion_group!` declares a public function).
mod group {
    use super::*;
    criterion_group!(benches, bench);
}
criterion_main!(group::benches);
