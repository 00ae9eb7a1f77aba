//! Criterion benchmark of `check` (SPEC TRC-1 .. TRC-11) on traces recorded by the node: generated
//! runs whose conversations start at about 100 messages (so calls carry about 100 entries per
//! snapshot), redacted, written self-contained (version 1, `expanded`) and in the compact
//! profile (version 2, `compact`), replayed through the executable specification and through
//! the engine, on one thread (`--jobs 1`) and, compact on the engine, on two.
//!
//! Throughput is reported in calls per second (`Throughput::Elements`). Measurement is kept
//! short (10 samples) so the run stays within a minute or two; `docs/PERFORMANCE.md` records
//! one run.
//!
//! Two groups: `check` measures wall time (criterion's default), `check-cpu` the CPU time of
//! the benchmark's thread (`/proc/thread-self/schedstat`, nanoseconds on a CPU), which on a
//! shared, loaded machine is what "calls per second on one core" means: the time the checker
//! actually ran, not the time it waited for a core. `check-cpu` runs the `--jobs 1` cases only
//! (with more jobs the work is on other threads), the compact traces also with the reuse of a
//! run's work off (`Options::reuse`, the reference mode), so the two compare in one run.
//! `check-parse` measures reading alone: the strict reader the checker uses beside plain
//! `serde_json` and beside validating the JSON only (the format's floor), next to the whole
//! check of the same traces.

#[path = "../tests/support/trace.rs"]
mod trace_support;

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hybrid_compaction_oracle::trace::{self, Options};
use hybrid_compaction_oracle::{Engine, Implementation, Model};

/// The command's allocator (`src/main.rs`), so the bench measures what `check` runs.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A trace of `runs` generated runs of about `initial` messages (`per_run` calls each, default
/// 1 to 4), and its number of calls.
fn recorded(runs: u64, initial: usize, per_run: Option<usize>, compact: bool) -> (String, usize) {
    trace_support::bench_trace(runs, initial, per_run, compact)
}

/// CPU time of the calling thread, in nanoseconds (Linux: `/proc/thread-self/schedstat`).
struct ThreadCpu;

fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .expect("/proc/thread-self/schedstat is readable (Linux)")
}

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

/// Nanoseconds of CPU time, shown as criterion shows wall time.
struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, ns: f64, values: &mut [f64]) -> &'static str {
        let (d, unit) = if ns < 1e3 {
            (1.0, "ns cpu")
        } else if ns < 1e6 {
            (1e3, "µs cpu")
        } else if ns < 1e9 {
            (1e6, "ms cpu")
        } else {
            (1e9, "s cpu")
        };
        values.iter_mut().for_each(|v| *v /= d);
        unit
    }
    fn scale_throughputs(&self, ns: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let n = match t {
            Throughput::Elements(n) | Throughput::Bytes(n) | Throughput::BytesDecimal(n) => {
                *n as f64
            }
        };
        let per_s = n * 1e9 / ns;
        let (d, unit) = if per_s < 1e3 {
            (1.0, "elem/s cpu")
        } else {
            (1e3, "Kelem/s cpu")
        };
        values.iter_mut().for_each(|v| *v = n * 1e9 / *v / d);
        unit
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

fn bench_cpu(c: &mut Criterion<ThreadCpu>) {
    let mut g = c.benchmark_group("check-cpu");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    // (form, implementation, runs of 20, reuse of a run's work: off is the reference mode)
    let configs: [(&str, &str, &dyn Implementation, bool, bool); 7] = [
        ("expanded", "model", &Model, false, true),
        ("expanded", "engine", &Engine, false, true),
        ("compact", "engine", &Engine, false, true),
        ("compact", "engine", &Engine, false, false),
        ("expanded", "engine", &Engine, true, true),
        ("compact", "engine", &Engine, true, true),
        ("compact", "engine", &Engine, true, false),
    ];
    for (form, name, imp, long, reuse) in configs {
        let (runs, per_run) = if long { (12, Some(20)) } else { (100, None) };
        let (text, calls) = recorded(runs, 100, per_run, form == "compact");
        let form = if long {
            format!("{form}-runs-of-20")
        } else {
            form.to_owned()
        };
        g.throughput(Throughput::Elements(calls as u64));
        let opts = Options {
            jobs: 1,
            counterexamples: false,
            reuse,
            ..Options::default()
        };
        let off = if reuse { "" } else { "/reuse-off" };
        g.bench_with_input(
            BenchmarkId::new(format!("{form}/{name}/jobs1{off}"), calls),
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

/// Reading alone (`check-parse`): every record line read as the checker reads it
/// (`quick::parse_record`: the quick call-record reader, else the strict reader), by the strict
/// reader alone (a repeated key refused anywhere, paths in refusals), by plain `serde_json`
/// into the same types (no duplicate check inside values), and
/// only validated as JSON (`serde::de::IgnoredAny`: nothing built, the floor any reader of the
/// format pays), in CPU time of the thread, beside the whole check of the same trace (engine,
/// counterexamples on, as `check --json`). On the traces of 100 runs of 1-4 calls, and on the
/// compact runs of 20 and of 6 calls `write_bench_traces` writes (`docs/PERFORMANCE.md`, "Trace
/// checking"): the share of a call's budget reading takes, measured in one run.
fn bench_parse(c: &mut Criterion<ThreadCpu>) {
    let mut g = c.benchmark_group("check-parse");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    // (name, runs, calls per run, compact)
    let traces: [(&str, u64, Option<usize>, bool); 4] = [
        ("expanded", 100, None, false),
        ("compact", 100, None, true),
        ("compact-runs-of-20", 12, Some(20), true),
        ("compact-runs-of-6", 40, Some(6), true),
    ];
    for (form, runs, per_run, compact) in traces {
        let (text, calls) = recorded(runs, 100, per_run, compact);
        let lines: Vec<&str> = text.lines().skip(1).collect();
        g.throughput(Throughput::Elements(calls as u64));
        let read = |name: &str, f: fn(&str) -> bool| {
            (format!("{form}/{name}"), move |ls: &[&str]| {
                ls.iter().map(|l| f(black_box(l)) as usize).sum::<usize>()
            })
        };
        let readers = [
            read("checker", |l| trace::read_record(l).is_ok()),
            read("strict", |l| {
                hybrid_compaction_trace::parse_record(l).is_ok()
            }),
            read("plain-serde", |l| {
                serde_json::from_str::<hybrid_compaction_trace::Record>(l).is_ok()
            }),
            read("validate-only", |l| {
                serde_json::from_str::<serde::de::IgnoredAny>(l).is_ok()
            }),
        ];
        for (id, f) in readers {
            g.bench_with_input(BenchmarkId::new(id, calls), &lines, |b, ls| {
                b.iter(|| f(ls))
            });
        }
        if per_run.is_some() {
            let opts = Options {
                jobs: 1,
                counterexamples: true,
                ..Options::default()
            };
            g.bench_with_input(
                BenchmarkId::new(format!("{form}/whole-check"), calls),
                &text,
                |b, t| {
                    b.iter(|| {
                        let r = trace::check(black_box(t.as_bytes()), &Engine, &opts).unwrap();
                        assert!(r.violations.is_empty());
                        r.calls
                    })
                },
            );
        }
    }
    g.finish();
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
            ..Options::default()
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

/// The criterion groups (in a private module: `criterion_group!` declares public functions).
mod group {
    use super::*;
    criterion_group!(benches, bench);
    criterion_group! {
        name = cpu;
        config = Criterion::default().with_measurement(ThreadCpu);
        targets = bench_cpu, bench_parse
    }
}
criterion_main!(group::benches, group::cpu);
