//! Drives the node over generated runs and records their traces (shared by the trace tests and
//! the `check` bench).
//!
//! A run is built from a seed: a policy (UTF-8 or constant estimator), an upstream reducer that
//! varies its behaviour per invocation (keep the last N, echo, summarise, fail, return null,
//! fabricate tool content), and 1-4 calls over a growing conversation (system, user, tool call
//! and result pairs, artifact references). Per call the snapshot integration may append a
//! recovered body (durable or reference-less), may mutate the history between captures
//! (version bumps), may cancel during a capture, may hold the body twice under two ids (one
//! digest); the reducer may cancel during an invocation;
//! the token may be cancelled before the call; the provider may fail.

#![allow(
    clippy::cast_possible_truncation,
    reason = "test data: small generated numbers"
)]
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use hybrid_compaction::engine::estimate::Utf8ContextEstimator;
use hybrid_compaction::lease::RunScope;
use hybrid_compaction::node::{
    select, ChatClient, CompactionEvent, NodeOptions, NodeSelection, ProgressSink, ProviderError,
    Reporter, ReporterIdentity, StreamingChatClient,
};
use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, RecoverableSegment};
use hybrid_compaction_model::estimator::{ConstantEstimator, Estimator};
use hybrid_compaction_model::message::{Message, Part};
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::{UpstreamError, UpstreamReducer};
use hybrid_compaction_model::snapshot::{ScriptedProvider, SnapshotProvider};
use hybrid_compaction_model::value::Value;
use hybrid_compaction_trace::format::Record;
use hybrid_compaction_trace::write::{header, Collector, Writer};

/// SplitMix64: a tiny deterministic generator.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..hi` (`hi > lo`).
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.range(0, 100) < percent
    }
}

const BODIES: [&str; 2] = [
    "the first recovered body, a long listing of a file that was read earlier",
    "the second recovered body",
];

fn text(rng: &mut Rng, n: u64) -> String {
    let len = rng.range(0, n);
    (0..len)
        .map(|i| (b'a' + ((i * 7 + len) % 26) as u8) as char)
        .collect()
}

/// (invocations so far in this node call, cancel during this one): reset per node call.
type Control = Arc<Mutex<(usize, Option<(usize, CancellationToken)>)>>;

/// A reducer whose behaviour varies per invocation; it may cancel a token during one.
#[derive(Debug)]
pub(crate) struct Mixed {
    rng: Rng,
    ctl: Control,
}

impl UpstreamReducer for Mixed {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        {
            let mut ctl = self.ctl.lock().unwrap();
            let k = ctl.0;
            ctl.0 += 1;
            if let Some((at, t)) = &ctl.1 {
                if *at == k {
                    t.cancel();
                }
            }
        }
        let keep_last = |n: usize| -> Vec<Message> {
            let others = messages.iter().filter(|m| m.role != "system").count();
            let mut skip = others.saturating_sub(n);
            let mut out = Vec::new();
            for m in messages {
                if m.role == "system" {
                    out.push(m.clone());
                } else if skip > 0 {
                    skip -= 1;
                } else {
                    out.push(m.clone());
                }
            }
            out
        };
        Ok(Some(match self.rng.range(0, 100) {
            0..=49 => keep_last(self.rng.range(0, 5) as usize),
            50..=64 => messages.to_vec(),
            65..=79 => {
                let mut out = vec![Message::text(
                    "assistant",
                    format!("summary {}", self.rng.range(0, 9)),
                )];
                out.extend(keep_last(1));
                out
            }
            80..=87 => return Err(UpstreamError::msg("upstream down")),
            88..=94 => return Ok(None),
            _ => vec![Message::new("assistant", vec![Part::call("forged", "f")])],
        }))
    }
}

/// A provider that may fail; streaming, it yields `updates` updates, then (with
/// `fail_stream`) an error update.
#[derive(Debug, Default)]
pub(crate) struct Client {
    pub(crate) fail_next: bool,
    pub(crate) updates: usize,
    pub(crate) fail_stream: bool,
}

impl StreamingChatClient for Client {
    type Update = usize;
    type Stream = std::vec::IntoIter<Result<usize, ProviderError>>;
    fn stream(
        &mut self,
        _m: &[Message],
        _c: &CancellationToken,
    ) -> Result<Self::Stream, ProviderError> {
        if std::mem::take(&mut self.fail_next) {
            return Err(ProviderError::msg("down"));
        }
        let mut items: Vec<Result<usize, ProviderError>> = (0..self.updates).map(Ok).collect();
        if std::mem::take(&mut self.fail_stream) {
            items.push(Err(ProviderError::msg("stream broke")));
        }
        Ok(items.into_iter())
    }
}

/// How a streaming call's stream is read: to its end, or dropped after `n` updates.
#[derive(Debug, Clone, Copy)]
enum Read {
    ToEnd,
    DropAfter(usize),
}

impl ChatClient for Client {
    type Reply = ();
    fn send(&mut self, _m: &[Message], _c: &CancellationToken) -> Result<(), ProviderError> {
        if std::mem::take(&mut self.fail_next) {
            return Err(ProviderError::msg("down"));
        }
        Ok(())
    }
}

struct NullSink;
impl ProgressSink for NullSink {
    fn report(&self, _event: CompactionEvent) {}
}

/// What the integration does at the next call.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    /// Append `BODIES[i]`, durable (its reference is in the history) or not.
    pub(crate) body: Option<(usize, bool)>,
    /// Append the same body a second time under another id (identical content, one digest:
    /// one delivery, SPEC LSE-9, TRC-8).
    pub(crate) twin: bool,
    /// Version bumps: the capture index at which each new version appears.
    pub(crate) bumps: Vec<usize>,
    /// Cancel during this capture.
    pub(crate) cancel_capture: Option<usize>,
    pub(crate) token: Option<CancellationToken>,
}

fn schedule(baseline: Vec<Entry>, plan: &Plan) -> Box<dyn SnapshotProvider> {
    let mut base = baseline;
    if let Some((i, _)) = plan.body {
        let reference = ArtifactReference::to_content(BODIES[i]);
        if let Ok(e) = Entry::recoverable(
            format!("body-{i}"),
            RecoverableSegment {
                reference,
                body: BODIES[i].into(),
            },
        ) {
            if !base.iter().any(|x| x.id() == e.id()) {
                base.push(e.clone());
            }
            if plan.twin {
                let twin = Entry::recoverable(
                    format!("body-{i}-twin"),
                    e.recoverable_segment().cloned().expect("a segment"),
                )
                .expect("valid entry");
                if !base.iter().any(|x| x.id() == twin.id()) {
                    base.push(twin);
                }
            }
        }
    }
    let mut steps = Vec::new();
    let last = plan.bumps.iter().copied().max().unwrap_or(0);
    let (mut version, mut cur) = (0i64, base);
    for k in 0..=last {
        if plan.bumps.contains(&k) && k > 0 {
            version += 1;
            let extra = Entry::new(
                format!("mutation-{version}"),
                hybrid_compaction_model::entry::EntryKind::ConversationalMessage,
                Message::text("user", format!("edited concurrently {version}")),
            )
            .expect("valid entry");
            cur.push(extra);
        }
        steps.push((version, cur.clone()));
    }
    let mut p = ScriptedProvider::new(steps);
    if let (Some(k), Some(t)) = (plan.cancel_capture, &plan.token) {
        p = p.cancel_at_capture(k, t.clone());
    }
    Box::new(p)
}

fn policy(rng: &mut Rng) -> Policy {
    let hard = rng.range(30, 400) as i32;
    let margin = rng.range(1, (hard as u64 / 2).max(2)) as i32;
    let estimator: Arc<dyn Estimator> = if rng.chance(60) {
        Arc::new(Utf8ContextEstimator)
    } else {
        Arc::new(ConstantEstimator(rng.range(1, 30) as i32))
    };
    Policy::new(PolicySpec {
        hard_limit: hard,
        trigger_margin: margin,
        recent_message_retention_count: rng.range(1, 4) as i32,
        maximum_compaction_attempts: rng.range(1, 4) as i32,
        preservation_label: Some("generated".into()),
        preservation_version: 1,
        estimator: Some(estimator),
    })
    .expect("valid policy")
}

fn grow(rng: &mut Rng, history: &mut Vec<Message>, turn: usize) {
    for j in 0..rng.range(1, 5) {
        match rng.range(0, 10) {
            0..=4 => history.push(Message::text("user", text(rng, 80))),
            5 | 6 => history.push(Message::text("assistant", text(rng, 60))),
            7 | 8 => {
                let id = format!("call-{turn}-{j}");
                history.push(Message::new(
                    "assistant",
                    vec![Part::call(id.as_str(), "read")],
                ));
                let value = if rng.chance(40) {
                    Value::String(ArtifactReference::to_content(BODIES[0]).to_string())
                } else {
                    Value::String(text(rng, 40))
                };
                history.push(Message::new("tool", vec![Part::result(id.as_str(), value)]));
            }
            _ => history.push(Message::text(
                "user",
                ArtifactReference::to_content(BODIES[rng.range(0, 2) as usize]).to_string(),
            )),
        }
    }
}

/// One generated run's trace lines (header included) as JSONL.
pub(crate) fn run_trace(seed: u64, content: bool) -> String {
    let mut lines = vec![serde_json::to_string(&header("trace tests")).unwrap()];
    let mut writer = if content {
        Writer::with_content()
    } else {
        Writer::new()
    };
    for (line, _) in run_records(seed, &mut writer) {
        lines.push(line);
    }
    lines.join("\n") + "\n"
}

/// The record lines of one generated run (without the header), with their parsed records.
pub(crate) fn run_records(seed: u64, writer: &mut Writer) -> Vec<(String, Record)> {
    run_records_sized(seed, writer, 0)
}

/// As [`run_records`], the conversation starting with about `initial` generated messages.
pub(crate) fn run_records_sized(
    seed: u64,
    writer: &mut Writer,
    initial: usize,
) -> Vec<(String, Record)> {
    run_records_shaped(seed, writer, initial, None)
}

/// As [`run_records_sized`], with `calls` provider calls in the run (default: 1 to 4).
pub(crate) fn run_records_shaped(
    seed: u64,
    writer: &mut Writer,
    initial: usize,
    calls: Option<usize>,
) -> Vec<(String, Record)> {
    let mut rng = Rng::new(seed);
    let policy = policy(&mut rng);
    let plan = Arc::new(Mutex::new(Plan::default()));
    let collector = Arc::new(Collector::default());
    let ctl = Arc::new(Mutex::new((0usize, None)));
    let reducer = Mixed {
        rng: Rng::new(seed ^ 0x5555),
        ctl: Arc::clone(&ctl),
    };
    let reporter = rng.chance(90).then(|| {
        Reporter::new(
            Arc::new(NullSink) as Arc<dyn ProgressSink>,
            ReporterIdentity::workflow("wf"),
        )
    });
    let mut node = match select(
        true,
        Some(NodeOptions { policy, reducer }),
        Client::default(),
        reporter,
    ) {
        Ok(NodeSelection::Installed(n)) => *n,
        _ => unreachable!("switch and options install a node"),
    };
    let p2 = Arc::clone(&plan);
    node = node
        .with_snapshot_integration(move |baseline: Vec<Entry>| {
            let plan = p2.lock().unwrap().clone();
            Some(schedule(baseline, &plan))
        })
        .with_trace_observer(collector.clone());
    let mut history = vec![Message::text("system", "be brief")];
    while history.len() < initial {
        let turn = 1000 + history.len();
        grow(&mut rng, &mut history, turn);
    }
    let mut scope = RunScope::new();
    let mut guard = scope.begin_run();
    let run = guard.current().cloned().expect("a run");
    let mut out = Vec::new();
    let mut srng = Rng::new(seed ^ 0x00ab_cdef);
    // Twins draw from a generator of their own, so the other draws stay as they were.
    let mut trng = Rng::new(seed ^ 0x7777_0000);
    let drawn = rng.range(1, 5) as usize;
    for turn in 0..calls.unwrap_or(drawn) {
        grow(&mut rng, &mut history, turn);
        let token = if rng.chance(5) {
            CancellationToken::cancelled()
        } else {
            CancellationToken::new()
        };
        let mut p = Plan {
            body: rng
                .chance(50)
                .then(|| (rng.range(0, 2) as usize, rng.chance(50))),
            twin: trng.chance(20),
            ..Plan::default()
        };
        if rng.chance(30) {
            p.bumps = (0..rng.range(1, 3))
                .map(|_| rng.range(1, 6) as usize)
                .collect();
        }
        if rng.chance(8) {
            p.cancel_capture = Some(rng.range(0, 4) as usize);
            p.token = Some(token.clone());
        }
        *ctl.lock().unwrap() = (
            0,
            rng.chance(5)
                .then(|| (rng.range(0, 2) as usize, token.clone())),
        );
        node.client_mut().fail_next = rng.chance(10);
        *plan.lock().unwrap() = p;
        // Streaming calls draw from their own generator, so the other draws stay as they were.
        if srng.chance(30) {
            let c = node.client_mut();
            c.updates = srng.range(0, 4) as usize;
            c.fail_stream = srng.chance(25);
            let read = if srng.chance(30) {
                Read::DropAfter(srng.range(0, 3) as usize)
            } else {
                Read::ToEnd
            };
            if let Ok(stream) = node.call_streaming(&mut guard, &history, &token) {
                match read {
                    Read::ToEnd => stream.for_each(drop),
                    Read::DropAfter(n) => stream.take(n).for_each(drop),
                }
            }
        } else {
            let _ = node.call(&mut guard, &history, &token);
        }
        for t in collector.take() {
            let rec = Record::Call(Box::new(writer.record(&t)));
            out.push((serde_json::to_string(&rec).unwrap(), rec));
        }
    }
    drop(guard);
    if let Some(end) = writer.end_run(&run) {
        let rec = Record::RunEnd(end);
        out.push((serde_json::to_string(&rec).unwrap(), rec));
    }
    out
}

/// The bench's trace (`oracle/benches/check.rs`, `docs/PERFORMANCE.md`): `runs` generated runs
/// (seeds `0..runs`) of about `initial` messages with `per_run` calls each (default 1 to 4),
/// written in the compact profile or self-contained (`compact == false`); with its call count.
pub(crate) fn bench_trace(
    runs: u64,
    initial: usize,
    per_run: Option<usize>,
    compact: bool,
) -> (String, usize) {
    let mut text = serde_json::to_string(&header("bench")).unwrap();
    let mut calls = 0;
    let mut w = if compact {
        Writer::new()
    } else {
        Writer::new().expanded()
    };
    for seed in 0..runs {
        for (line, rec) in run_records_shaped(seed, &mut w, initial, per_run) {
            calls += matches!(rec, Record::Call(_)) as usize;
            text.push('\n');
            text.push_str(&line);
        }
    }
    text.push('\n');
    (text, calls)
}

/// Two threads call one run concurrently (forked scopes, one node each, both appending the same
/// recovered body); returns the trace (header included) and how many calls forwarded the body.
pub(crate) fn concurrent_trace(seed: u64) -> (String, usize) {
    use hybrid_compaction_model::reducers::MessageCountingReducer;
    let collector = Arc::new(Collector::default());
    let mut scope = RunScope::new();
    let guard = scope.begin_run();
    let run = guard.current().cloned().expect("a run");
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let mut child = guard.fork();
            let collector = Arc::clone(&collector);
            s.spawn(move || {
                let mut rng = Rng::new(seed * 2 + t);
                let policy = policy(&mut rng);
                let reducer = MessageCountingReducer {
                    target_count: rng.range(1, 4) as usize,
                };
                let reporter = Reporter::new(
                    Arc::new(NullSink) as Arc<dyn ProgressSink>,
                    ReporterIdentity::workflow("wf"),
                );
                let mut node = match select(
                    true,
                    Some(NodeOptions { policy, reducer }),
                    Client::default(),
                    Some(reporter),
                ) {
                    Ok(NodeSelection::Installed(n)) => *n,
                    _ => unreachable!("switch and options install a node"),
                };
                node = node
                    .with_snapshot_integration(move |baseline: Vec<Entry>| {
                        let plan = Plan {
                            body: Some((1, false)),
                            ..Plan::default()
                        };
                        Some(schedule(baseline, &plan))
                    })
                    .with_trace_observer(collector);
                let mut history = vec![Message::text("system", "be brief")];
                for turn in 0..3 {
                    grow(&mut rng, &mut history, turn);
                    node.client_mut().fail_next = rng.chance(20);
                    let _ = node.call(&mut child, &history, &CancellationToken::new());
                }
            });
        }
    });
    drop(guard);
    let mut w = Writer::new();
    let mut lines = vec![serde_json::to_string(&header("concurrent")).unwrap()];
    let mut forwarding = 0;
    for t in collector.take() {
        forwarding += (!t.forwarded.is_empty()) as usize;
        lines.push(serde_json::to_string(&Record::Call(Box::new(w.record(&t)))).unwrap());
    }
    if let Some(end) = w.end_run(&run) {
        lines.push(serde_json::to_string(&Record::RunEnd(end)).unwrap());
    }
    (lines.join("\n") + "\n", forwarding)
}
