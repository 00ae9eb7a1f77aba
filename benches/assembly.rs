//! Criterion benchmarks: the model vs the engine on the three success paths of assembly, plus a
//! floor (one pass estimating and summing the same entries), for n = 100 .. 100k entries.
//!
//! * `WithinLimit`: the history is below the trigger; assembly verifies it against itself and
//!   recaptures.
//! * `Reduced`: above the trigger, eviction does not restore the margin, and the reducer needs
//!   three attempts: two valid, strictly smaller but still over-limit proposals, then one that
//!   fits (each drops conversational entries outside the retained units).
//! * `PreservationFallback`: the reducer returns its request unchanged (non-progressing), so the
//!   required + optional entries are kept by the deterministic fallback.
//!
//! The history is a realistic mix: a system message, user/assistant turns, tool exchanges with
//! two calls per assistant message and results spread over two tool messages, artifact
//! references, recovered bodies with a durable reference (evictable) and optional context. The
//! snapshot provider is a host that keeps its history as one validated, shared entry list
//! (`SharedEntries`) and hands out O(1) snapshots over it, the same for both sides. The engine keeps one `Assembler` across iterations (reused buffers).
//! The model is skipped at n = 100k (its verifier searches linearly: O(n²)).
//!
//! `Reduced/host_reducer` and `PreservationFallback/host_reducer` measure the bench reducer alone
//! (the host's code, counted inside the path's `engine` time): the same reducer answering the
//! reduction requests the engine made on that path (recorded at setup), results dropped. The
//! engine's own share of a path is its `engine` time minus `host_reducer`. The bench reducer is
//! written as a host would write one for speed (a merge walk over the required ids, which come
//! by position, instead of a hash set; buffers kept across calls, as the engine keeps its
//! `Assembler`); setup asserts it answers every recorded request as a plainly written reference
//! does.
//!
//! `<path>/floor` is the floor again, over the path's snapshot, measured right before
//! `<path>/engine` at the same n: under a changing load the ratio of two neighbouring
//! measurements is steadier than one against `Floor`, measured minutes earlier.
//!
//! `Floor/two_captures_cloning` measures what a host that *copies* its history per capture
//! (`Snapshot::new` over a cloned `Vec<Entry>`, as `StaticProvider`) would add to every run: two
//! such captures and their drops (id validation excluded). Not part of any path above.
//!
//! Measurement is kept short (10 samples, 2 s) so the whole run stays within a few minutes.

#![allow(clippy::cast_possible_truncation, reason = "bench sizes are small")]

use std::collections::{BTreeMap, HashSet};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hybrid_compaction::engine;
use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::assembly::{Outcome, Reducer, ReducerError, ReductionRequest};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind, RecoverableSegment};
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::message::{FunctionCall, Message, Part};
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::snapshot::{SharedEntries, Snapshot, SnapshotError, SnapshotProvider};
use hybrid_compaction_model::value::Value;
use hybrid_compaction_spec as spec;

const SIZES: [usize; 4] = [100, 1_000, 10_000, 100_000];
const MODEL_MAX: usize = 10_000;

/// A realistic history of about `n` entries.
fn history(n: usize) -> Vec<Entry> {
    let mut out = Vec::with_capacity(n + 8);
    out.push(
        Entry::new(
            "sys",
            EntryKind::SystemInstruction,
            Message::text("system", "You are a careful coding agent. ".repeat(4)),
        )
        .expect("entry"),
    );
    let mut i = 0usize;
    let mut last_reference: Option<ArtifactReference> = None;
    while out.len() < n {
        let id = |k: &str| format!("{k}{i}");
        match i % 10 {
            0 | 2 | 4 => out.push(
                Entry::new(
                    id("u"),
                    EntryKind::ConversationalMessage,
                    Message::text("user", format!("Please look at item {i}. ").repeat(6)),
                )
                .expect("entry"),
            ),
            1 | 3 => out.push(
                Entry::new(
                    id("a"),
                    EntryKind::ConversationalMessage,
                    Message::text("assistant", format!("Done with step {i}; next. ").repeat(6)),
                )
                .expect("entry"),
            ),
            5 => {
                let call = |k: usize| {
                    Part::Call(FunctionCall {
                        call_id: format!("c{i}-{k}"),
                        name: "read_file".to_owned(),
                        arguments: Some(BTreeMap::from([
                            ("path".to_owned(), Value::String(format!("src/file{i}.rs"))),
                            ("limit".to_owned(), Value::I32(400)),
                            ("ratio".to_owned(), Value::F64(0.25 + i as f64)),
                        ])),
                        informational_only: false,
                    })
                };
                out.push(
                    Entry::new(
                        id("call"),
                        EntryKind::ToolExchange,
                        Message::new("assistant", vec![call(0), call(1)]),
                    )
                    .expect("entry"),
                );
                for k in 0..2 {
                    let value = if i % 50 == 5 && k == 0 {
                        // A result carrying a canonical reference: a durable reference.
                        let r = ArtifactReference::to_content(&format!("artifact {i}"));
                        last_reference = Some(r);
                        Value::String(r.to_string())
                    } else {
                        Value::String(format!("fn f{i}() {{ /* body */ }}\n").repeat(3))
                    };
                    out.push(
                        Entry::new(
                            format!("res{i}-{k}"),
                            EntryKind::ToolExchange,
                            Message::new("tool", vec![Part::result(format!("c{i}-{k}"), value)]),
                        )
                        .expect("entry"),
                    );
                }
            }
            6 => {
                if i % 20 == 6 {
                    out.push(
                        Entry::new(
                            id("opt"),
                            EntryKind::OptionalContext,
                            Message::text("user", "Optional: repository overview. ".repeat(3)),
                        )
                        .expect("entry"),
                    );
                }
            }
            7 => {
                if i % 50 == 7 {
                    if let Some(r) = last_reference {
                        out.push(
                            Entry::new(
                                id("ref"),
                                EntryKind::ArtifactReference,
                                Message::text("user", r.to_string()),
                            )
                            .expect("entry"),
                        );
                        out.push(
                            Entry::recoverable(
                                id("body"),
                                RecoverableSegment {
                                    reference: r,
                                    body: format!("artifact {i} body ").repeat(20),
                                },
                            )
                            .expect("entry"),
                        );
                    }
                }
            }
            _ => out.push(
                Entry::new(
                    id("s"),
                    EntryKind::Summary,
                    Message::text("assistant", "Summary of earlier work. ".repeat(2)),
                )
                .expect("entry"),
            ),
        }
        i += 1;
    }
    out
}

/// A host provider over one shared, validated history (an O(1) snapshot per capture).
struct CachedProvider(SharedEntries);

impl SnapshotProvider for CachedProvider {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        Snapshot::from_shared(0, self.0.clone())
    }
}

/// A host provider that copies its cached snapshot per capture (O(n) handle copies).
struct CloningProvider(Snapshot);

impl SnapshotProvider for CloningProvider {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        Ok(self.0.clone())
    }
}

/// Drops conversational entries outside the request's required set, keeping a shrinking
/// fraction of them per attempt (`keep[a-1]` per mille of the originally droppable count), or
/// echoes the request.
///
/// A host's reducer written for speed: the request's required ids come by position (SPEC PRE-4)
/// and are entries of the request, so one merge walk over the entries finds them (no hashing),
/// the droppable positions go into a buffer reused across attempts, and the proposal is copied
/// from the request in runs between the dropped positions. [`ReferenceReducer`] (a hash set of
/// the required ids, filtering twice) is the same rule written plainly; setup asserts that both
/// answer every request of every path alike.
struct BenchReducer {
    droppable: usize,
    keep_per_mille: [usize; 3],
    echo: bool,
    /// Scratch: the request's droppable positions (reused across attempts and iterations).
    drop_at: Vec<usize>,
}

impl BenchReducer {
    /// How many droppable entries attempt `attempt` drops, of `present`.
    fn skip(&self, attempt: i32, present: usize) -> usize {
        let a = (attempt as usize).clamp(1, 3);
        let target = self.droppable * self.keep_per_mille[a - 1] / 1000;
        present.saturating_sub(target)
    }
}

impl Reducer for BenchReducer {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        let entries = request.entries;
        if self.echo {
            return Ok(Some(entries.to_vec()));
        }
        let mut required = request.required_entry_ids.iter().peekable();
        self.drop_at.clear();
        for (i, e) in entries.iter().enumerate() {
            let is_required = required.next_if(|r| *r == e.id()).is_some();
            if !is_required && e.kind() == EntryKind::ConversationalMessage {
                self.drop_at.push(i);
            }
        }
        assert!(
            required.peek().is_none(),
            "required ids are entries of the request, by position"
        );
        let skip = self.skip(request.attempt_number, self.drop_at.len());
        let mut out = Vec::with_capacity(entries.len() - skip);
        let mut from = 0;
        for &p in &self.drop_at[..skip] {
            out.extend_from_slice(&entries[from..p]);
            from = p + 1;
        }
        out.extend_from_slice(&entries[from..]);
        Ok(Some(out))
    }
}

/// [`BenchReducer`]'s rule written plainly (std's SipHash set of the required ids, two filter
/// passes): the reference its answers are checked against at setup. Not timed.
struct ReferenceReducer(BenchReducer);

impl Reducer for ReferenceReducer {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        if self.0.echo {
            return Ok(Some(request.entries.to_vec()));
        }
        let required: HashSet<&str> = request
            .required_entry_ids
            .iter()
            .map(|id| id.as_str())
            .collect();
        let droppable = |e: &Entry| {
            e.kind() == EntryKind::ConversationalMessage && !required.contains(e.id().as_str())
        };
        let present = request.entries.iter().filter(|e| droppable(e)).count();
        let mut skip = self.0.skip(request.attempt_number, present);
        Ok(Some(
            request
                .entries
                .iter()
                .filter(|e| {
                    if skip > 0 && droppable(e) {
                        skip -= 1;
                        false
                    } else {
                        true
                    }
                })
                .cloned()
                .collect(),
        ))
    }
}

/// One recorded reduction request: its entries, required ids and attempt number.
type Recorded = (Vec<Entry>, Vec<EntryId>, i32);

/// A reducer that records every request it answers (owned copies), answering with `inner`.
struct Recording {
    inner: BenchReducer,
    requests: Vec<Recorded>,
}

impl Reducer for Recording {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        self.requests.push((
            request.entries.to_vec(),
            request.required_entry_ids.to_vec(),
            request.attempt_number,
        ));
        self.inner.reduce(request)
    }
}

/// The reduction requests one engine assembly of `s` makes, in order.
fn recorded_requests(s: &Setup) -> Vec<Recorded> {
    let mut provider = CachedProvider(s.snapshot.clone());
    let mut r = Recording {
        inner: reducer(s),
        requests: Vec::new(),
    };
    let token = CancellationToken::new();
    engine::assemble::Assembler::new()
        .assemble(&s.engine_policy, &mut provider, &mut r, &token)
        .expect("engine assembly");
    r.requests
}

/// Setup check: [`BenchReducer`] answers every recorded request as [`ReferenceReducer`] does
/// (the same entries, same allocations, same order).
fn assert_reducer_matches_reference(s: &Setup, requests: &[Recorded]) {
    let (mut fast, mut reference) = (reducer(s), ReferenceReducer(reducer(s)));
    for (k, (entries, required, attempt)) in requests.iter().enumerate() {
        let request = ReductionRequest {
            entries,
            required_entry_ids: required,
            policy: &s.engine_policy,
            attempt_number: *attempt,
        };
        let a = fast.reduce(&request).expect("reducer").expect("proposal");
        let b = reference
            .reduce(&request)
            .expect("reducer")
            .expect("proposal");
        assert!(
            a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.ptr_eq(y)),
            "bench reducer differs from the reference on request {k}"
        );
    }
}

/// The bench reducer alone, answering `requests` (what it costs inside an engine run).
fn run_host_reducer(s: &Setup, r: &mut BenchReducer, requests: &[Recorded]) -> usize {
    let mut kept = 0;
    for (entries, required, attempt) in requests {
        let request = ReductionRequest {
            entries,
            required_entry_ids: required,
            policy: &s.engine_policy,
            attempt_number: *attempt,
        };
        kept += r.reduce(&request).expect("reducer").map_or(0, |p| p.len());
    }
    kept
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Path {
    WithinLimit,
    Reduced,
    PreservationFallback,
}

/// Everything one benchmark needs: the snapshot, both policies, the reducer plan.
struct Setup {
    snapshot: SharedEntries,
    model_policy: Policy,
    engine_policy: Policy,
    droppable: usize,
    echo: bool,
    /// The reduction requests of one engine assembly, in order (recorded at setup).
    requests: Vec<Recorded>,
}

fn policy(hard_limit: i32, threshold: i32, est: Arc<dyn Estimator>) -> Policy {
    Policy::new(PolicySpec {
        hard_limit,
        trigger_margin: hard_limit - threshold,
        recent_message_retention_count: 4,
        maximum_compaction_attempts: 3,
        preservation_label: Some("bench".to_owned()),
        preservation_version: 1,
        estimator: Some(est),
    })
    .expect("policy")
}

fn setup(n: usize, path: Path) -> Setup {
    let entries = history(n);
    let est = engine::estimate::Utf8ContextEstimator;
    let size = |l: &[Entry]| engine::estimate::size(l, &est).expect("size") as i64;
    let total = size(&entries);
    let required = engine::preserve::required_ids(&entries, 4).expect("unique");
    let req: HashSet<&str> = required.iter().map(|id| id.as_str()).collect();
    let droppable: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.kind() == EntryKind::ConversationalMessage && !req.contains(e.id().as_str()))
        .collect();
    let drop_size: i64 = droppable.iter().map(|e| i64::from(est.estimate(e))).sum();
    let with_optional: i64 = entries
        .iter()
        .filter(|e| req.contains(e.id().as_str()) || e.kind() == EntryKind::OptionalContext)
        .map(|e| i64::from(est.estimate(e)))
        .sum();
    let (h, t, echo) = match path {
        Path::WithinLimit => (total * 2, total + 1, false),
        // Attempts keep 75%, 50%, 25% of the droppable entries: only the third fits.
        Path::Reduced => {
            let h = total - drop_size + drop_size * 35 / 100;
            (h, h - 1, false)
        }
        Path::PreservationFallback => (with_optional + 1, with_optional, true),
    };
    let model_policy = policy(
        h as i32,
        t as i32,
        Arc::new(spec::estimate::Utf8ContextEstimator),
    );
    let engine_policy =
        model_policy.with_estimator(Arc::new(engine::estimate::Utf8ContextEstimator));
    let droppable = droppable.len();
    let s = Setup {
        snapshot: SharedEntries::new(entries).expect("snapshot"),
        model_policy,
        engine_policy,
        droppable,
        echo,
        requests: Vec::new(),
    };
    // Sanity: the path is the intended one, and model == engine on it (small n only).
    let expected = match path {
        Path::WithinLimit => Outcome::WithinLimit,
        Path::Reduced => Outcome::Reduced,
        Path::PreservationFallback => Outcome::PreservationFallback,
    };
    let r = run_engine(
        &s,
        &mut reducer(&s),
        &mut engine::assemble::Assembler::new(),
    );
    assert_eq!(r, expected, "engine path at n={n}");
    if n <= 1_000 {
        assert_eq!(run_model(&s), expected, "model path at n={n}");
    }
    let mut s = s;
    s.requests = recorded_requests(&s);
    assert_reducer_matches_reference(&s, &s.requests);
    s
}

fn reducer(s: &Setup) -> BenchReducer {
    BenchReducer {
        droppable: s.droppable,
        keep_per_mille: [750, 500, 250],
        echo: s.echo,
        drop_at: Vec::new(),
    }
}

/// One engine assembly; the host keeps its reducer (and its buffer) across calls, as the engine
/// keeps its `Assembler`.
fn run_engine(
    s: &Setup,
    r: &mut BenchReducer,
    assembler: &mut engine::assemble::Assembler,
) -> Outcome {
    let mut provider = CachedProvider(s.snapshot.clone());
    let token = CancellationToken::new();
    assembler
        .assemble(&s.engine_policy, &mut provider, r, &token)
        .expect("engine assembly")
        .outcome
}

fn run_model(s: &Setup) -> Outcome {
    let mut provider = CachedProvider(s.snapshot.clone());
    let mut r = reducer(s);
    let token = CancellationToken::new();
    spec::assemble::assemble(&s.model_policy, &mut provider, &mut r, &token)
        .expect("model assembly")
        .outcome
}

fn bench_path(c: &mut Criterion, path: Path) {
    let mut group = c.benchmark_group(format!("{path:?}"));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for n in SIZES {
        let s = setup(n, path);
        group.throughput(Throughput::Elements(n as u64));
        if n <= MODEL_MAX {
            group.bench_with_input(BenchmarkId::new("model", n), &s, |b, s| {
                b.iter(|| black_box(run_model(s)))
            });
        }
        // The floor again, right before the path at the same n: under a changing load a ratio
        // of two neighbouring measurements is steadier than one against `Floor` minutes earlier.
        let est = engine::estimate::Utf8ContextEstimator;
        group.bench_with_input(
            BenchmarkId::new("floor", n),
            s.snapshot.entries(),
            |b, e| b.iter(|| black_box(engine::estimate::size(e, &est))),
        );
        let mut assembler = engine::assemble::Assembler::new();
        let mut r = reducer(&s);
        group.bench_with_input(BenchmarkId::new("engine", n), &s, |b, s| {
            b.iter(|| black_box(run_engine(s, &mut r, &mut assembler)))
        });
        if path != Path::WithinLimit {
            let mut r = reducer(&s);
            group.bench_with_input(BenchmarkId::new("host_reducer", n), &s, |b, s| {
                b.iter(|| black_box(run_host_reducer(s, &mut r, &s.requests)))
            });
        }
    }
    group.finish();
}

fn floor(c: &mut Criterion) {
    let mut group = c.benchmark_group("Floor");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for n in SIZES {
        let entries = history(n);
        let est = engine::estimate::Utf8ContextEstimator;
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("estimate_and_sum", n), &entries, |b, e| {
            b.iter(|| black_box(engine::estimate::size(e, &est)))
        });
        // Not the floor of the issue, and not part of the paths: what a host that copies its
        // snapshot per capture would add to every assembly (two captures and their drops).
        let mut provider = CloningProvider(Snapshot::new(0, entries.clone()).expect("snapshot"));
        group.bench_function(BenchmarkId::new("two_captures_cloning", n), |b| {
            b.iter(|| {
                let first = provider.capture().expect("capture");
                let second = provider.capture().expect("capture");
                black_box((first.version(), second.version()))
            })
        });
    }
    group.finish();
}

fn within_limit(c: &mut Criterion) {
    bench_path(c, Path::WithinLimit);
}

fn reduced(c: &mut Criterion) {
    bench_path(c, Path::Reduced);
}

fn preservation_fallback(c: &mut Criterion) {
    bench_path(c, Path::PreservationFallback);
}

/// The criterion group (in a private module: `criterion_group!` declares a public function).
mod group {
    use super::*;
    criterion_group!(benches, floor, within_limit, reduced, preservation_fallback);
}
criterion_main!(group::benches);
