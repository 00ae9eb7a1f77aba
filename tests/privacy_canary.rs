//! Privacy canary proptest (SPEC EVT-6, ATR-4; C# S72; ADR "reflection-based privacy tests
//! asserting that no diagnostics or progress event's string properties or default string
//! representation ever carries raw message text, an artifact body, a workspace path, an owner
//! identity, tool arguments/results, exception text, or classifier output text").
//!
//! Every user-controlled string of a generated scenario carries its own unique canary: message
//! texts, tool call ids, function names, argument keys and values, tool results, recovered
//! bodies and their entry ids, classifier output (entry ids), upstream-reducer output and error
//! text, provider error text, artifact bodies, tool names, call ids and descriptions, owner
//! identities and the workspace root path. The scenario drives
//! * the ENGINE node (`hybrid_compaction::node`) with a canary classifier, a canary snapshot
//!   integration, a scripted upstream reducer and a recording progress sink, across success,
//!   termination, reducer failure, null reducer output, cancellation and provider failure; and
//! * the artifact decisions of the executable specification (every offload row and every
//!   rehydration status, plus the raising paths).
//!
//! Then no canary may appear in any progress event, compaction diagnostics, artifact
//! diagnostics, attribution or artifact event — in their `Debug` (`{:?}` and `{:#?}`) — nor in
//! the termination error's and the artifact errors' `Debug` and `Display`. (The library has no
//! serde, so there is no JSON rendering of these values to check here; the oracle's JSON
//! rendering of compaction diagnostics maps the same record field by field to enum names and
//! numbers.) A self-check proves the canaries really are in the inputs.
//!
//! Case count: `PRIVACY_CASES` (default 256, CI-sized); the deep run is
//! `PRIVACY_CASES=10000 cargo test --release -p hybrid-compaction --test privacy_canary`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use hybrid_compaction::engine::estimate::Utf8ContextEstimator;
use hybrid_compaction::lease::RunScope;
use hybrid_compaction::node::{
    select, ChatClient, CompactionEvent, NodeError, NodeOptions, NodeSelection, ProgressSink,
    ProviderError, Reporter, ReporterIdentity,
};
use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::artifact_diagnostics::ArtifactEvent;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::classifier::Classifier;
use hybrid_compaction_model::entry::{Entry, EntryKind, RecoverableSegment};
use hybrid_compaction_model::message::{FunctionCall, Message, Part};
use hybrid_compaction_model::offload::{OffloadInput, OffloadRequest};
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::{UpstreamError, UpstreamReducer};
use hybrid_compaction_model::rehydration::{RehydrationRequest, RehydrationSource};
use hybrid_compaction_model::snapshot::{SnapshotProvider, StaticProvider};
use hybrid_compaction_model::trust::{
    BindingAccessor, Owners, TrustBinding, TrustContext, TrustGuard, WorkspaceId,
};
use hybrid_compaction_model::value::Value;
use hybrid_compaction_model::workspace::{Workspace, WorkspaceFailure};
use hybrid_compaction_spec as spec;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Canaries

/// Hands out unique canaries for one scenario: `QZ<salt>K<n>Z` (the closing `Z` keeps `K1Z` from
/// matching inside `K12Z`).
struct Canaries {
    salt: u32,
    issued: Vec<String>,
}

impl Canaries {
    fn new(salt: u32) -> Canaries {
        Canaries {
            salt,
            issued: Vec::new(),
        }
    }

    /// A fresh canary embedded in `filler` (multibyte filler included).
    fn next(&mut self, filler: &str) -> String {
        let c = format!("QZ{:08x}K{}Z", self.salt, self.issued.len());
        self.issued.push(c.clone());
        format!("{filler}{c}{filler}")
    }

    /// The canaries found in `text`.
    fn leaks(&self, text: &str) -> Vec<String> {
        self.issued
            .iter()
            .filter(|c| text.contains(c.as_str()))
            .cloned()
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Scenario

/// How the upstream reducer answers.
#[derive(Debug, Clone, Copy)]
enum ReducerMode {
    /// Keep system messages and the last `n` others.
    Keep(usize),
    /// Return system messages, one new canary summary, and the last message.
    Summarize,
    /// Fail with canary text.
    Fail,
    /// Return null (a contract error).
    Null,
}

#[derive(Debug, Clone)]
struct Scenario {
    salt: u32,
    messages: usize,
    with_tool: bool,
    with_body: bool,
    hard_limit: i32,
    reducer: ReducerMode,
    cancel: bool,
    provider_fails: bool,
    filler: String,
    threshold: i64,
    budget: i64,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    let reducer = prop_oneof![
        (0usize..4).prop_map(ReducerMode::Keep),
        Just(ReducerMode::Summarize),
        Just(ReducerMode::Fail),
        Just(ReducerMode::Null),
    ];
    (
        any::<u32>(),
        1usize..10,
        any::<bool>(),
        any::<bool>(),
        prop_oneof![3 => 40i32..400, 1 => 1_000i32..100_000],
        reducer,
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.2),
        prop::sample::select(vec!["", "é", "€", "😀", "a b", "\u{3000}"]),
        1i64..48,
        1i64..48,
    )
        .prop_map(
            |(
                salt,
                messages,
                with_tool,
                with_body,
                hard_limit,
                reducer,
                cancel,
                provider_fails,
                filler,
                threshold,
                budget,
            )| Scenario {
                salt,
                messages,
                with_tool,
                with_body,
                hard_limit,
                reducer,
                cancel,
                provider_fails,
                filler: filler.to_owned(),
                threshold,
                budget,
            },
        )
}

// ---------------------------------------------------------------------------------------------
// Node seams

/// Entry ids carry canaries (classifier output, SPEC CLS-1).
struct CanaryClassifier(Vec<String>);

impl Classifier for CanaryClassifier {
    fn entry_id(&mut self, _messages: &[Message], index: usize) -> String {
        self.0[index].clone()
    }
    fn override_kind(&mut self, _messages: &[Message], index: usize) -> Option<EntryKind> {
        (index % 3 == 2).then_some(EntryKind::OptionalContext)
    }
}

struct CanaryReducer {
    mode: ReducerMode,
    summary: String,
    error: String,
}

impl UpstreamReducer for CanaryReducer {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        let system = messages.iter().filter(|m| m.role == "system").cloned();
        match self.mode {
            ReducerMode::Keep(n) => {
                let others: Vec<Message> = messages
                    .iter()
                    .filter(|m| m.role != "system")
                    .cloned()
                    .collect();
                let tail = others[others.len().saturating_sub(n)..].to_vec();
                Ok(Some(system.chain(tail).collect()))
            }
            ReducerMode::Summarize => {
                let summary = Message::text("assistant", self.summary.clone());
                let last = messages.last().cloned();
                Ok(Some(system.chain([summary]).chain(last).collect()))
            }
            ReducerMode::Fail => Err(UpstreamError(self.error.clone())),
            ReducerMode::Null => Ok(None),
        }
    }
}

struct Client {
    fail: Option<String>,
}

impl ChatClient for Client {
    type Reply = usize;
    fn send(&mut self, m: &[Message], _c: &CancellationToken) -> Result<usize, ProviderError> {
        match &self.fail {
            Some(text) => Err(ProviderError(text.clone())),
            None => Ok(m.len()),
        }
    }
}

#[derive(Default)]
struct Sink(Mutex<Vec<CompactionEvent>>);

impl ProgressSink for Sink {
    fn report(&self, event: CompactionEvent) {
        self.0.lock().unwrap().push(event);
    }
}

/// A workspace rooted at a canary path: every host path is `{root}/{path}`.
#[derive(Default)]
struct RootedWorkspace {
    root: String,
    files: BTreeMap<String, String>,
    fail_read: bool,
    fail_write: bool,
    fail_checkpoint: bool,
}

impl Workspace for RootedWorkspace {
    fn read(&mut self, path: &str) -> Result<Option<String>, WorkspaceFailure> {
        if self.fail_read {
            return Err(WorkspaceFailure);
        }
        Ok(self.files.get(&format!("{}/{path}", self.root)).cloned())
    }
    fn write(&mut self, path: &str, body: &str) -> Result<(), WorkspaceFailure> {
        if self.fail_write {
            return Err(WorkspaceFailure);
        }
        self.files
            .insert(format!("{}/{path}", self.root), body.to_owned());
        Ok(())
    }
    fn checkpoint(&mut self) -> Result<(), WorkspaceFailure> {
        if self.fail_checkpoint {
            return Err(WorkspaceFailure);
        }
        Ok(())
    }
}

struct Accessor(Option<TrustContext>);

impl BindingAccessor for Accessor {
    fn current(&self) -> Option<TrustContext> {
        self.0.clone()
    }
}

// ---------------------------------------------------------------------------------------------
// Running a scenario

/// Everything rendered from one scenario, and the inputs (for the self-check).
struct Rendered {
    outputs: Vec<String>,
    inputs: String,
}

fn debug_both<T: std::fmt::Debug>(out: &mut Vec<String>, value: &T) {
    out.push(format!("{value:?}"));
    out.push(format!("{value:#?}"));
}

fn history(s: &Scenario, c: &mut Canaries) -> (Vec<Message>, Option<RecoverableSegment>) {
    let f = s.filler.as_str();
    let mut m = vec![Message::text("system", c.next(f))];
    for _ in 0..s.messages {
        m.push(Message::text("user", c.next(f)));
    }
    if s.with_tool {
        let call_id = c.next(f);
        let mut args = BTreeMap::new();
        args.insert(c.next(f), Value::String(c.next(f)));
        m.push(Message::new(
            "assistant",
            vec![Part::Call(FunctionCall {
                call_id: call_id.clone(),
                name: c.next(f),
                arguments: Some(args),
                informational_only: false,
            })],
        ));
        m.push(Message::new(
            "tool",
            vec![Part::result(call_id, Value::String(c.next(f)))],
        ));
    }
    let segment = s.with_body.then(|| {
        let body = c.next(f);
        let reference = ArtifactReference::to_content(&body);
        m.push(Message::text("user", reference.to_string()));
        RecoverableSegment { reference, body }
    });
    m.push(Message::text("user", c.next(f)));
    (m, segment)
}

fn run_node(s: &Scenario, c: &mut Canaries, out: &mut Rendered) {
    let (messages, segment) = history(s, c);
    let f = s.filler.clone();
    let ids: Vec<String> = (0..messages.len()).map(|_| c.next(&f)).collect();
    let segment_id = c.next(&f);
    let reducer = CanaryReducer {
        mode: s.reducer,
        summary: c.next(&f),
        error: c.next(&f),
    };
    let client = Client {
        fail: s.provider_fails.then(|| c.next(&f)),
    };
    out.inputs.push_str(&format!(
        "{messages:?}{ids:?}{:?}{:?}",
        reducer.summary, segment
    ));
    let policy = Policy::new(PolicySpec {
        hard_limit: s.hard_limit,
        trigger_margin: 10,
        recent_message_retention_count: 1,
        maximum_compaction_attempts: 2,
        preservation_label: Some("privacy".into()),
        preservation_version: 1,
        estimator: Some(Arc::new(Utf8ContextEstimator)),
    })
    .unwrap();
    let sink = Arc::new(Sink::default());
    let reporter = Reporter::new(
        Arc::clone(&sink) as Arc<dyn ProgressSink>,
        ReporterIdentity::workflow("wf"),
    );
    let options = NodeOptions { policy, reducer };
    let Ok(NodeSelection::Installed(node)) = select(true, Some(options), client, Some(reporter))
    else {
        panic!("switch and options install a node")
    };
    let mut node = node
        .with_classifier(Box::new(CanaryClassifier(ids)))
        .with_snapshot_integration(move |mut baseline: Vec<Entry>| {
            if let Some(seg) = segment.clone() {
                baseline.push(Entry::recoverable(&segment_id, seg).unwrap());
            }
            Some(Box::new(StaticProvider::new(baseline)) as Box<dyn SnapshotProvider>)
        });
    let token = CancellationToken::new();
    if s.cancel {
        token.cancel();
    }
    let mut scope = RunScope::new();
    for _ in 0..2 {
        match node.call(&mut scope, &messages, &token) {
            Ok(d) => debug_both(&mut out.outputs, &d.diagnostics),
            Err(NodeError::Terminated(t)) => {
                debug_both(&mut out.outputs, &t);
                out.outputs.push(t.to_string());
            }
            // Other errors go to the host, not to events; their kinds are categorical.
            Err(e) => out.outputs.push(e.kind().to_string()),
        }
    }
    for event in sink.0.lock().unwrap().iter() {
        debug_both(&mut out.outputs, event);
    }
}

fn run_artifacts(s: &Scenario, c: &mut Canaries, out: &mut Rendered) {
    let f = s.filler.clone();
    let owners = Owners {
        user_id: c.next(&f),
        orchestration_id: c.next(&f),
        session_id: c.next(&f),
    };
    let context = TrustContext {
        user_id: owners.user_id.clone(),
        orchestration_id: owners.orchestration_id.clone(),
        workspace: Some(WorkspaceId(1)),
    };
    let guard = TrustGuard {
        binding: TrustBinding {
            owners: owners.clone(),
            workspace: WorkspaceId(1),
        },
        accessor: Arc::new(Accessor(Some(context))),
        session_id: owners.session_id.clone(),
    };
    let bad_guard = TrustGuard {
        accessor: Arc::new(Accessor(None)),
        ..guard.clone()
    };
    let root = c.next(&f);
    let body = c.next(&f);
    let (tool_name, call_id, description) = (c.next(&f), c.next(&f), c.next(&f));
    out.inputs.push_str(&format!(
        "{owners:?}{root}{body}{tool_name}{call_id}{description}"
    ));
    let now = UNIX_EPOCH + Duration::from_secs(5);
    let input = |serialized: &str| OffloadInput::ToolResult {
        tool_name: tool_name.clone(),
        call_id: call_id.clone(),
        serialized: serialized.to_owned(),
        description: description.clone(),
    };
    let workspace = |prepare: &dyn Fn(&mut RootedWorkspace)| {
        let mut w = RootedWorkspace {
            root: root.clone(),
            ..RootedWorkspace::default()
        };
        prepare(&mut w);
        w
    };
    let record = spec::record::create(
        spec::record::Creation {
            body: &body,
            description: &description,
            tool_name: &tool_name,
            call_id: &call_id,
        },
        &guard.binding,
        now,
    )
    .unwrap();
    let stored = format!("{root}/{}", record.path());
    let mut events: Vec<ArtifactEvent> = Vec::new();
    // Offload: every row (threshold from the scenario, so Inline and above both occur).
    let seg = OffloadInput::RecoveredSegment(RecoverableSegment {
        reference: record.reference(),
        body: body.clone(),
    });
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let plain = CancellationToken::new();
    type Prep = Box<dyn Fn(&mut RootedWorkspace)>;
    let rows: Vec<(OffloadInput, Option<&TrustGuard>, Option<Prep>, bool)> = vec![
        (seg, None, None, false),
        (input(&body), None, Some(Box::new(|_| {})), false),
        (
            input(&body),
            Some(&guard),
            Some(Box::new(|w| w.fail_read = true)),
            false,
        ),
        (
            input(&body),
            Some(&guard),
            Some(Box::new({
                let (stored, body) = (stored.clone(), body.clone());
                move |w| {
                    w.files.insert(stored.clone(), body.clone());
                }
            })),
            false,
        ),
        (
            input(&body),
            Some(&guard),
            Some(Box::new({
                let stored = stored.clone();
                move |w| {
                    w.files.insert(stored.clone(), "other".into());
                }
            })),
            false,
        ),
        (
            input(&body),
            Some(&guard),
            Some(Box::new(|w| w.fail_write = true)),
            false,
        ),
        (input(&body), Some(&guard), Some(Box::new(|_| {})), true),
        (
            input(&body),
            Some(&guard),
            Some(Box::new(|w| w.fail_checkpoint = true)),
            false,
        ),
        (input(&body), Some(&guard), Some(Box::new(|_| {})), false),
        (
            input(&body),
            Some(&bad_guard),
            Some(Box::new(|_| {})),
            false,
        ),
    ];
    for (inp, g, prep, cancel) in rows {
        let request = OffloadRequest::new(inp, s.threshold).unwrap();
        let mut w = prep.map(|p| workspace(&*p));
        let host = spec::offload::OffloadHost {
            guard: g,
            workspace: w.as_mut().map(|w| w as &mut dyn Workspace),
            cancel: if cancel { &cancelled } else { &plain },
            now,
        };
        match spec::offload::offload(&request, host, &mut events) {
            Ok(r) => {
                debug_both(&mut out.outputs, &r.diagnostics);
                debug_both(&mut out.outputs, r.diagnostics.attribution());
            }
            Err(e) => {
                debug_both(&mut out.outputs, &e);
                out.outputs.push(e.to_string());
            }
        }
    }
    // Rehydration: every status and the raising paths.
    let foreign =
        spec::record::reconstruct(hybrid_compaction_model::artifact_record::RecordFields {
            owners: Owners {
                user_id: c.next(&f),
                ..owners.clone()
            },
            ..record.fields()
        })
        .unwrap();
    let with = |content: &str| {
        let (stored, content) = (stored.clone(), content.to_owned());
        workspace(&move |w| {
            w.files.insert(stored.clone(), content.clone());
        })
    };
    let cases: Vec<(&TrustGuard, &_, RootedWorkspace)> = vec![
        (&guard, &record, with(&body)),
        (&guard, &record, with(&format!("{body}{}", c.next(&f)))),
        (&guard, &record, workspace(&|_| {})),
        (&guard, &foreign, with(&body)),
        (&guard, &record, workspace(&|w| w.fail_read = true)),
        (&bad_guard, &record, with(&body)),
    ];
    for (g, rec, mut w) in cases {
        let request =
            RehydrationRequest::new((*rec).clone(), RehydrationSource::ToolRequest, s.budget)
                .unwrap();
        match spec::rehydrate::rehydrate(&request, g, &mut w, now, &mut events) {
            Ok(r) => {
                debug_both(&mut out.outputs, &r.diagnostics);
                debug_both(&mut out.outputs, r.diagnostics.attribution());
                out.outputs.push(r.status.to_string());
            }
            Err(e) => {
                debug_both(&mut out.outputs, &e);
                out.outputs.push(e.to_string());
            }
        }
    }
    for e in &events {
        debug_both(&mut out.outputs, e);
        out.outputs.push(e.diagnostics.outcome().to_string());
        out.outputs.push(e.diagnostics.reason().to_string());
    }
}

fn cases() -> u32 {
    std::env::var("PRIVACY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// SPEC EVT-6, ATR-4, ATR-1 (C# S72): no canary reaches an event, a diagnostics value, an
    /// attribution or an artifact event, nor the termination and artifact errors' renderings.
    #[test]
    fn evt_6_atr_4_atr_1_no_canary_reaches_events_diagnostics_or_attribution(s in scenario()) {
        let mut c = Canaries::new(s.salt);
        let mut out = Rendered { outputs: Vec::new(), inputs: String::new() };
        run_node(&s, &mut c, &mut out);
        run_artifacts(&s, &mut c, &mut out);
        // Self-check: the inputs do carry the canaries (so absence below means something).
        prop_assert!(c.leaks(&out.inputs).len() >= c.issued.len() / 2);
        for text in &out.outputs {
            let leaks = c.leaks(text);
            prop_assert!(leaks.is_empty(), "{:?} leaked into {}", leaks, text);
        }
    }
}
