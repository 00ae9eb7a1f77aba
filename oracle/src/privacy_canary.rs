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
//! * a *guarded* node (trust binding with canary owners and session, SPEC TRU-1) whose
//!   revalidation fails before assembly, after assembly, or passes (TRU-3), and the library's
//!   composition (`hybrid_compaction::compose`) over the same canary binding (CMP-3).
//!
//! Then no canary may appear in any progress event, compaction diagnostics, artifact
//! diagnostics, attribution or artifact event — in their `Debug` (`{:?}` and `{:#?}`), their
//! `Display` where they have one, and their JSON (the oracle's wire and trace renderings:
//! `hybrid_compaction_trace::write::event`, `wire::convert::diagnostics_output`,
//! `wire::adr::convert::diagnostics_output`) — nor in the termination, trust, composition and
//! artifact errors' `Debug` and `Display`. A self-check proves the canaries really are in the
//! inputs.
//!
//! Case count: `PRIVACY_CASES` (default 256, CI-sized); the deep run is
//! `PRIVACY_CASES=10000 cargo test --release -p hybrid-compaction-oracle --lib privacy_canary`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use crate as oracle;
use hybrid_compaction::compose::{self, Composed, Composition};
use hybrid_compaction::engine::estimate::Utf8ContextEstimator;
use hybrid_compaction::lease::RunScope;
use hybrid_compaction::node::{
    select, ChatClient, CompactionEvent, NodeError, NodeOptions, NodeSelection, ProgressSink,
    ProviderError, Reporter, ReporterIdentity,
};
use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::artifact_diagnostics::{ArtifactDiagnostics, ArtifactEvent};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::capability::{
    Acceptance, BundleLane, CapabilityEntry, CapabilityProfile, DeliveryPhase, COMPACTION,
};
use hybrid_compaction_model::classifier::{Classifier, ClassifierError};
use hybrid_compaction_model::composition::ClientChain;
use hybrid_compaction_model::diagnostics::Diagnostics;
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
    fn entry_id(&mut self, _messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        Ok(self.0[index].clone())
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
            ReducerMode::Fail => Err(UpstreamError::msg(self.error.clone())),
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
            Some(text) => Err(ProviderError::msg(text.clone())),
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

/// Pushes the value's JSON text.
macro_rules! json {
    ($out:expr, $value:expr) => {
        $out.push(serde_json::to_string($value).expect("serializable"))
    };
}

/// A compaction event's `Debug` renderings and its JSON image.
fn event_all(out: &mut Vec<String>, event: &CompactionEvent) {
    debug_both(out, event);
    json!(out, &hybrid_compaction_trace::write::event(event));
}

/// A compaction diagnostics value's `Debug` renderings and its JSON image.
fn diagnostics_all(out: &mut Vec<String>, d: &Diagnostics) {
    debug_both(out, d);
    json!(out, &hybrid_compaction_trace::shapes::diagnostics_output(d));
}

/// An artifact diagnostics value's `Debug` renderings (its attribution's too) and JSON image.
fn artifact_all(out: &mut Vec<String>, d: &ArtifactDiagnostics) {
    debug_both(out, d);
    debug_both(out, d.attribution());
    json!(out, &oracle::ops::artifacts::artifact_diagnostics_output(d));
}

/// An error's `Debug` and `Display`.
fn error_all<E: std::fmt::Debug + std::fmt::Display>(out: &mut Vec<String>, e: &E) {
    debug_both(out, e);
    out.push(e.to_string());
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
            Ok(d) => diagnostics_all(&mut out.outputs, &d.diagnostics),
            Err(NodeError::Terminated(t)) => error_all(&mut out.outputs, &t),
            // Other errors go to the host, not to events; their kinds are categorical.
            Err(e) => out.outputs.push(e.kind().to_string()),
        }
    }
    for event in sink.0.lock().unwrap().iter() {
        event_all(&mut out.outputs, event);
    }
}

/// A guarded node (canary owners, session and accessor contexts) whose revalidations fail at
/// step 1, at step 12, or pass (SPEC TRU-3), and the library's composition over the same
/// binding (SPEC CMP-3): the trust errors, events and composition outcomes carry no canary.
fn run_trust(s: &Scenario, c: &mut Canaries, out: &mut Rendered) {
    let f = s.filler.clone();
    let owners = Owners {
        user_id: c.next(&f),
        orchestration_id: c.next(&f),
        session_id: c.next(&f),
    };
    let binding = TrustBinding {
        owners: owners.clone(),
        workspace: WorkspaceId(u64::from(s.salt)),
    };
    let good = TrustContext {
        user_id: owners.user_id.clone(),
        orchestration_id: owners.orchestration_id.clone(),
        workspace: Some(binding.workspace),
    };
    let stranger = TrustContext {
        user_id: c.next(&f),
        ..good.clone()
    };
    let text = c.next(&f);
    out.inputs.push_str(&format!(
        "{:?}{:?}{}{text}",
        owners.user_id, stranger.user_id, owners.session_id
    ));
    let scripts = [
        vec![None],
        vec![Some(stranger.clone())],
        vec![Some(good.clone()), Some(stranger)],
        vec![Some(good.clone()), None],
        vec![Some(good)],
    ];
    for script in scripts {
        let sink = Arc::new(Sink::default());
        let reporter = Reporter::new(
            Arc::clone(&sink) as Arc<dyn ProgressSink>,
            ReporterIdentity::workflow("wf"),
        );
        let options = NodeOptions {
            policy: Policy::new(PolicySpec {
                hard_limit: 1_000_000,
                trigger_margin: 10,
                recent_message_retention_count: 1,
                maximum_compaction_attempts: 1,
                preservation_label: Some("privacy".into()),
                preservation_version: 1,
                estimator: Some(Arc::new(Utf8ContextEstimator)),
            })
            .unwrap(),
            reducer: CanaryReducer {
                mode: ReducerMode::Keep(1),
                summary: String::new(),
                error: String::new(),
            },
        };
        let Ok(NodeSelection::Installed(node)) =
            select(true, Some(options), Client { fail: None }, Some(reporter))
        else {
            panic!("switch and options install a node")
        };
        let accessor: Arc<dyn BindingAccessor> = Arc::new(Script::new(script));
        let mut node = node
            .with_trust(
                Some(binding.clone()),
                Some(accessor),
                Some(&owners.session_id),
            )
            .unwrap();
        debug_both(&mut out.outputs, &node);
        let messages = [Message::text("user", text.clone())];
        match node.call(&mut RunScope::new(), &messages, &CancellationToken::new()) {
            Ok(d) => diagnostics_all(&mut out.outputs, &d.diagnostics),
            Err(e) => error_all(&mut out.outputs, &e),
        }
        for event in sink.0.lock().unwrap().iter() {
            event_all(&mut out.outputs, event);
        }
    }
    // The library's composition over the canary binding: every outcome and error rendering.
    let caps = CapabilityProfile {
        lane: BundleLane::SelectedProviders,
        acceptance: Acceptance::StableAndExperimental,
        history_coherent: true,
        capabilities: vec![CapabilityEntry {
            metadata: COMPACTION,
            requested: true,
            evidence: Some(DeliveryPhase::G5),
        }],
    };
    let chain = ClientChain::default();
    for (hybrid, session) in [(true, owners.session_id.as_str()), (false, ""), (true, " ")] {
        let accessor: Arc<dyn BindingAccessor> = Arc::new(Accessor(None));
        let request = Composition {
            client: Some(Client { fail: None }),
            chain: &chain,
            capabilities: Some(&caps),
            execution_binding: Some(binding.clone()),
            accessor: Some(accessor),
            session_id: session,
            hybrid_profile: hybrid.then(|| {
                compose::composition::default_profile(
                    Policy::new(PolicySpec {
                        hard_limit: 100,
                        trigger_margin: 10,
                        recent_message_retention_count: 1,
                        maximum_compaction_attempts: 1,
                        preservation_label: Some("privacy".into()),
                        preservation_version: 1,
                        estimator: Some(Arc::new(Utf8ContextEstimator)),
                    })
                    .unwrap(),
                    CanaryReducer {
                        mode: ReducerMode::Keep(1),
                        summary: String::new(),
                        error: String::new(),
                    },
                )
            }),
            reporter: None,
        };
        match compose::compose(request) {
            Ok(Composed::Installed(node)) => debug_both(&mut out.outputs, &node),
            Ok(other) => debug_both(&mut out.outputs, &other),
            Err(e) => error_all(&mut out.outputs, &e),
        }
    }
}

/// An accessor answering `script[k]` at the k-th call, the last one repeating.
struct Script {
    script: Vec<Option<TrustContext>>,
    calls: Mutex<usize>,
}

impl Script {
    fn new(script: Vec<Option<TrustContext>>) -> Script {
        Script {
            script,
            calls: Mutex::new(0),
        }
    }
}

impl BindingAccessor for Script {
    fn current(&self) -> Option<TrustContext> {
        let mut calls = self.calls.lock().unwrap();
        let k = (*calls).min(self.script.len() - 1);
        *calls += 1;
        self.script[k].clone()
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
                artifact_all(&mut out.outputs, &r.diagnostics);
                if let Some(record) = &r.record {
                    // The record replaces the body in the conversation; its Debug is redacted.
                    debug_both(&mut out.outputs, record);
                }
            }
            Err(e) => error_all(&mut out.outputs, &e),
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
                artifact_all(&mut out.outputs, &r.diagnostics);
                out.outputs.push(r.status.to_string());
            }
            Err(e) => error_all(&mut out.outputs, &e),
        }
    }
    for e in &events {
        debug_both(&mut out.outputs, e);
        artifact_all(&mut out.outputs, &e.diagnostics);
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
        run_trust(&s, &mut c, &mut out);
        // Self-check: the inputs do carry the canaries (so absence below means something).
        prop_assert!(c.leaks(&out.inputs).len() >= c.issued.len() / 2);
        for text in &out.outputs {
            let leaks = c.leaks(text);
            prop_assert!(leaks.is_empty(), "{:?} leaked into {}", leaks, text);
        }
    }
}
