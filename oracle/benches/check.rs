//! Criterion benchmark of `check` (SPEC TRC-1 .. TRC-11) on traces recorded by the node: generated
//! runs whose conversations start at about 100 messages (so calls carry about 100 entries per
//! snapshot), redacted, written self-contained (version 1, `expanded`) and in the compact
//! profile (version 2, `compact`), replayed through the executable specification and through
//! the engine, on one thread (`--jobs 1`) and, compact on the engine, on two.
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

/// A trace of `runs` generated runs of about `initial` messages (`per_run` calls each, default
/// 1 to 4), and its number of calls.
fn recorded(runs: u64, initial: usize, per_run: Option<usize>, compact: bool) -> (String, usize) {
    let mut text = serde_json::to_string(&header("bench")).unwrap();
    let mut calls = 0;
    let mut w = if compact {
        Writer::new()
    } else {
        Writer::new().expanded()
    };
    for seed in 0..runs {
        for (line, rec) in trace_support::run_records_shaped(seed, &mut w, initial, per_run) {
            calls += matches!(rec, trace::format::Record::Call(_)) as usize;
            text.push('\n');
            text.push_str(&line);
        }
    }
    text.push('\n');
    (text, calls)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("check");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    // (form, implementation, jobs, runs of 1-4 calls or of 20)
    let configs: [(&str, &str, &dyn Implementation, usize, bool); 7] = [
        ("expanded", "model", &Model, 1, false),
        ("expanded", "engine", &Engine, 1, false),
        ("compact", "model", &Model, 1, false),
        ("compact", "engine", &Engine, 1, false),
        ("compact", "engine", &Engine, 2, false),
        ("expanded", "engine", &Engine, 1, true),
        ("compact", "engine", &Engine, 1, true),
    ];
    for (form, name, imp, jobs, long) in configs {
        let (runs, calls) = if long { (12, Some(20)) } else { (100, None) };
        let (text, calls) = recorded(runs, 100, calls, form == "compact");
        let form = if long {
            format!("{form}-runs-of-20")
        } else {
            form.to_owned()
        };
        g.throughput(Throughput::Elements(calls as u64));
        let opts = Options {
            jobs,
            counterexamples: false,
        };
        g.bench_with_input(
            BenchmarkId::new(format!("{form}/{name}/jobs{jobs}"), calls),
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
    g.finish();
}

/// The criterion group (in a private module: `criterion_group!` declares a public function).
mod group {
    use super::*;
    criterion_group!(benches, bench);
}
criterion_main!(group::benches);
