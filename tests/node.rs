//! The per-provider-call compaction node (`hybrid_compaction::node`), clause by clause
//! (`docs/SPEC.md` section 15: NODE-1 .. NODE-6, EVT-1 .. EVT-6; LSE-10 for the lease steps).
//!
//! Expected values are derived by hand from the SPEC: histories are measured with the
//! host-defined `ConstantEstimator(10)` (every entry is 10 units), so sizes, thresholds and
//! termination sizes can be computed on paper.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, SystemTime};

use hybrid_compaction::engine::classify::{adapt, ContentHashClassifier};
use hybrid_compaction::lease::{Run, RunScope};
use hybrid_compaction::node::{
    select, AssemblyId, ChatClient, Clock, CompactionEvent, CompactionNode, CompactionTerminated,
    ConfigError, CounterSequence, EventKind, IdSource, NodeError, NodeOptions, NodeSelection,
    ProgressSink, ProviderError, Reporter, ReporterId, ReporterIdentity, SequenceSource,
};
use hybrid_compaction_model::artifact::{ArtifactReference, Digest};
use hybrid_compaction_model::assembly::{AssemblyError, Outcome};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::classifier::Classifier;
use hybrid_compaction_model::diagnostics::{Category, CompactionOutcome, Contribution};
use hybrid_compaction_model::entry::{Entry, EntryKind, RecoverableSegment};
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::estimator::{ConstantEstimator, MeasurementUnit};
use hybrid_compaction_model::lease::LeaseError;
use hybrid_compaction_model::message::{Message, Part};
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::{
    MessageCountingReducer, ScriptedUpstreamReducer, UpstreamReducer, UpstreamStep,
};
use hybrid_compaction_model::snapshot::{SnapshotProvider, StaticProvider};
use hybrid_compaction_model::value::Value;

// ---------------------------------------------------------------------------------------------
// Fixtures

/// Hard limit 100, margin 10 (threshold 90), retention 2, 2 attempts, 10 units per entry.
fn policy() -> Policy {
    Policy::new(PolicySpec {
        hard_limit: 100,
        trigger_margin: 10,
        recent_message_retention_count: 2,
        maximum_compaction_attempts: 2,
        preservation_label: Some("node-tests".into()),
        preservation_version: 1,
        estimator: Some(Arc::new(ConstantEstimator(10))),
    })
    .unwrap()
}

#[derive(Default)]
struct RecordingSink(Mutex<Vec<CompactionEvent>>);

impl ProgressSink for RecordingSink {
    fn report(&self, event: CompactionEvent) {
        self.0.lock().unwrap().push(event);
    }
}

impl RecordingSink {
    fn events(&self) -> Vec<CompactionEvent> {
        self.0.lock().unwrap().clone()
    }
    fn kinds(&self) -> Vec<EventKind> {
        self.events().iter().map(CompactionEvent::kind).collect()
    }
}

/// A provider recording every request and how many events existed when it was called.
#[derive(Default)]
struct Client {
    sent: Vec<Vec<Message>>,
    events_at_send: Vec<usize>,
    sink: Option<Arc<RecordingSink>>,
    /// Fail the call with this (0-based) index.
    fail_call: Option<usize>,
}

impl ChatClient for Client {
    type Reply = usize;
    fn send(
        &mut self,
        messages: &[Message],
        _cancel: &CancellationToken,
    ) -> Result<usize, ProviderError> {
        let k = self.sent.len();
        self.sent.push(messages.to_vec());
        self.events_at_send
            .push(self.sink.as_ref().map_or(0, |s| s.events().len()));
        if self.fail_call == Some(k) {
            return Err(ProviderError("provider down MARKER-PROVIDER-ERR".into()));
        }
        Ok(messages.len())
    }
}

fn reporter(sink: &Arc<RecordingSink>) -> Reporter {
    Reporter::new(
        Arc::clone(sink) as Arc<dyn ProgressSink>,
        ReporterIdentity {
            workflow_id: ReporterId::new("wf-1"),
            agent_id: Some(ReporterId::new("agent-1")),
            parent_agent_id: None,
            depth: 1,
        },
    )
}

fn node<U: UpstreamReducer>(
    reducer: U,
    sink: Option<&Arc<RecordingSink>>,
) -> CompactionNode<Client, U> {
    let client = Client {
        sink: sink.cloned(),
        ..Client::default()
    };
    match select(
        true,
        Some(NodeOptions {
            policy: policy(),
            reducer,
        }),
        client,
        sink.map(reporter),
    )
    .unwrap()
    {
        NodeSelection::Installed(n) => *n,
        NodeSelection::Disabled(_) => panic!("switch and options install a node"),
    }
}

fn user(text: &str) -> Message {
    Message::text("user", text)
}

fn system(text: &str) -> Message {
    Message::text("system", text)
}

/// 3 messages = 30 units < threshold 90: `WithinLimit`, dispatched unchanged.
fn small_history() -> Vec<Message> {
    vec![
        system("be brief"),
        user("hello"),
        Message::text("assistant", "hi"),
    ]
}

/// 1 system + 11 user messages = 120 units >= 90: the counting reducer (target 3) keeps the
/// system message and u8, u9, u10 = 40 units; required (system + last 2 units) is kept: Reduced.
fn long_history() -> Vec<Message> {
    let mut m = vec![system("sys")];
    for i in 0..11 {
        m.push(user(&format!("u{i}")));
    }
    m
}

/// 12 system messages = 120 units, all required: the fallback keeps 120 > 100: Irreducible with
/// final size 120 (ASM-9, ASM-12).
fn irreducible_history() -> Vec<Message> {
    (0..12).map(|i| system(&format!("s{i}"))).collect()
}

fn counting() -> MessageCountingReducer {
    MessageCountingReducer { target_count: 3 }
}

fn ids(events: &[CompactionEvent]) -> Vec<AssemblyId> {
    events.iter().map(|e| e.envelope().assembly_id).collect()
}

fn seqs(events: &[CompactionEvent]) -> Vec<u64> {
    events
        .iter()
        .map(|e| e.envelope().sequence_number)
        .collect()
}

fn assert_gate_free_and_nothing_reserved(run: &Run) {
    assert!(!run.gate_occupied(), "the gate is left (LSE-10)");
    assert!(run.state().1.is_empty(), "every reservation is released");
}

// Recovered bodies: a baseline artifact reference plus an integration appending the body.

const BODY: &str = "the recovered body MARKER-BODY-7";

fn reference() -> ArtifactReference {
    ArtifactReference::to_content(BODY)
}

fn digest() -> Digest {
    reference().digest()
}

fn with_body_history() -> Vec<Message> {
    vec![
        system("be brief"),
        user(&reference().to_string()),
        user("please use the artifact"),
    ]
}

type Integration = Box<dyn FnMut(Vec<Entry>) -> Option<Box<dyn SnapshotProvider>> + Send>;

fn body_integration() -> Integration {
    Box::new(|mut baseline: Vec<Entry>| {
        baseline.push(
            Entry::recoverable(
                "seg-MARKER-ID-9",
                RecoverableSegment {
                    reference: reference(),
                    body: BODY.into(),
                },
            )
            .unwrap(),
        );
        Some(Box::new(StaticProvider::new(baseline)) as Box<dyn SnapshotProvider>)
    })
}

fn body_node(sink: Option<&Arc<RecordingSink>>) -> CompactionNode<Client, MessageCountingReducer> {
    node(counting(), sink).with_snapshot_integration(body_integration())
}

fn carries_body(messages: &[Message]) -> bool {
    messages.iter().any(|m| m.text_content() == BODY)
}

// ---------------------------------------------------------------------------------------------
// NODE-1: fail-closed opt-in

/// SPEC NODE-1 (C# S54, S84).
#[test]
fn node_1_switch_and_options_must_agree() {
    let options = || {
        Some(NodeOptions {
            policy: policy(),
            reducer: counting(),
        })
    };
    let e = select(
        true,
        None::<NodeOptions<MessageCountingReducer>>,
        Client::default(),
        None,
    )
    .unwrap_err();
    assert_eq!(e, ConfigError::EnabledWithoutOptions);
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = select(false, options(), Client::default(), None).unwrap_err();
    assert_eq!(e, ConfigError::OptionsWithoutEnabled);
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // Neither: the client comes back unchanged, no node (C# S54).
    let client = Client {
        fail_call: Some(7),
        ..Client::default()
    };
    match select(
        false,
        None::<NodeOptions<MessageCountingReducer>>,
        client,
        None,
    )
    .unwrap()
    {
        NodeSelection::Disabled(c) => assert_eq!(c.fail_call, Some(7)),
        NodeSelection::Installed(_) => panic!("no node without the switch"),
    }
    assert!(matches!(
        select(true, options(), Client::default(), None).unwrap(),
        NodeSelection::Installed(_)
    ));
}

// ---------------------------------------------------------------------------------------------
// NODE-2 / EVT-2 / EVT-4: success

/// SPEC NODE-2, NODE-3 (Composed before dispatch), EVT-2, EVT-3, EVT-4, EVT-5.
#[test]
fn node_2_evt_2_evt_4_success_emits_started_completed_composed_then_dispatches() {
    let sink = Arc::new(RecordingSink::default());
    let mut n = node(counting(), Some(&sink));
    let mut scope = RunScope::new();
    let out = n
        .call(&mut scope, &small_history(), &CancellationToken::new())
        .unwrap();
    assert_eq!(out.reply, 3);
    // WithinLimit: the bounded messages are the input, in order.
    assert_eq!(n.client().sent, vec![small_history()]);
    assert_eq!(
        sink.kinds(),
        vec![
            EventKind::Started,
            EventKind::Completed,
            EventKind::Composed
        ]
    );
    // NODE-3 (C# S52 step 14): Composed is emitted before dispatch.
    assert_eq!(n.client().events_at_send, vec![3]);
    // The call-local run was left with the scope (LSE-6).
    assert!(scope.current().is_none());

    let events = sink.events();
    // EVT-4: Started carries the policy's unit, hard limit and threshold.
    match &events[0] {
        CompactionEvent::Started(s) => {
            assert_eq!(s.measurement_unit, MeasurementUnit::HostDefinedUnits);
            assert_eq!(s.hard_limit, 100);
            assert_eq!(s.trigger_threshold, 90);
        }
        other => panic!("expected Started, got {other:?}"),
    }
    // EVT-4: Completed and Composed carry the identical value, also on the dispatch result.
    let completed = events[1].diagnostics().unwrap();
    let composed = events[2].diagnostics().unwrap();
    assert!(Arc::ptr_eq(completed, composed));
    assert!(Arc::ptr_eq(completed, &out.diagnostics));
    let d = &**completed;
    assert_eq!(d.outcome, CompactionOutcome::WithinLimit);
    assert_eq!((d.original_size, d.final_size), (30, 30));
    assert_eq!((d.trigger_threshold, d.hard_limit), (90, 100));
    assert_eq!(d.final_sequence_valid, Some(true));
    assert_eq!(
        d.category_contributions,
        vec![
            Contribution {
                category: Category::SystemInstruction,
                size: 10,
                entry_count: 1
            },
            Contribution {
                category: Category::ConversationalMessage,
                size: 20,
                entry_count: 2
            },
        ]
    );
    // EVT-5: one id on every event, equal to the dispatch result's.
    assert!(ids(&events).iter().all(|id| *id == out.assembly_id));
    // EVT-3: sequence numbers increase; envelope from the reporter.
    assert_eq!(seqs(&events), vec![1, 2, 3]);
    for e in &events {
        let env = e.envelope();
        assert_eq!(env.workflow_id.as_str(), "wf-1");
        assert_eq!(
            env.agent_id.as_ref().map(ReporterId::as_str),
            Some("agent-1")
        );
        assert_eq!(env.parent_agent_id, None);
        assert_eq!(env.depth, 1);
        assert_eq!(env.timestamp, None, "no clock injected, no timestamp");
    }
}

/// SPEC NODE-2, NODE-3 step 5 (bridge over the upstream reducer), EVT-2.
#[test]
fn node_2_bridge_reduces_through_the_upstream_reducer() {
    let sink = Arc::new(RecordingSink::default());
    let mut n = node(counting(), Some(&sink));
    let out = n
        .call(
            &mut RunScope::new(),
            &long_history(),
            &CancellationToken::new(),
        )
        .unwrap();
    let h = long_history();
    assert_eq!(
        n.client().sent,
        vec![vec![
            h[0].clone(),
            h[9].clone(),
            h[10].clone(),
            h[11].clone()
        ]]
    );
    assert_eq!(out.diagnostics.outcome, CompactionOutcome::Reduced);
    assert_eq!(
        (out.diagnostics.original_size, out.diagnostics.final_size),
        (120, 40)
    );
    assert_eq!(out.diagnostics.attempt_count, 1);
    assert_eq!(
        sink.kinds(),
        vec![
            EventKind::Started,
            EventKind::Completed,
            EventKind::Composed
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// NODE-4 / EVT-2: termination

/// SPEC NODE-4, NODE-5 (release on termination), EVT-2, EVT-4, EVT-5.
#[test]
fn node_4_evt_2_termination_emits_started_terminated_and_a_typed_error() {
    let sink = Arc::new(RecordingSink::default());
    let mut n = node(counting(), Some(&sink));
    let run = Run::new();
    let mut scope = RunScope::with_run(run.clone());
    let err = n
        .call(
            &mut scope,
            &irreducible_history(),
            &CancellationToken::new(),
        )
        .unwrap_err();
    assert_eq!(
        err,
        NodeError::Terminated(CompactionTerminated {
            outcome: Outcome::Irreducible,
            final_estimated_size: 120,
            hard_limit: 100,
        })
    );
    assert_eq!(err.kind(), ErrorKind::InvalidOperation);
    assert!(n.client().sent.is_empty(), "nothing is dispatched");
    assert_eq!(
        sink.kinds(),
        vec![EventKind::Started, EventKind::Terminated]
    );
    let events = sink.events();
    let d = events[1].diagnostics().unwrap();
    assert_eq!(d.outcome, CompactionOutcome::Irreducible);
    assert_eq!((d.final_size, d.hard_limit), (120, 100));
    assert!(d.category_contributions.is_empty());
    assert_eq!(d.final_sequence_valid, None);
    assert_eq!(ids(&events)[0], ids(&events)[1]);
    assert!(seqs(&events)[0] < seqs(&events)[1]);
    assert_gate_free_and_nothing_reserved(&run);
}

// ---------------------------------------------------------------------------------------------
// NODE-3 / EVT-2: errors during and before assembly

/// SPEC NODE-3 step 7, NODE-5, EVT-2.
#[test]
fn node_3_evt_2_reducer_error_during_assembly_emits_started_only() {
    let sink = Arc::new(RecordingSink::default());
    let reducer = ScriptedUpstreamReducer::new(vec![UpstreamStep::Fail("MARKER-ERR-8".into())]);
    let mut n = node(reducer, Some(&sink));
    let run = Run::new();
    let err = n
        .call(
            &mut RunScope::with_run(run.clone()),
            &long_history(),
            &CancellationToken::new(),
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ReducerFailed);
    assert_eq!(sink.kinds(), vec![EventKind::Started]);
    assert!(n.client().sent.is_empty());
    assert_gate_free_and_nothing_reserved(&run);
}

/// A reducer that cancels the call's token while reducing: the assembler observes it at its
/// next check point (ASM-16), an error during assembly.
struct CancellingReducer(CancellationToken);

impl UpstreamReducer for CancellingReducer {
    fn reduce(
        &mut self,
        messages: &[Message],
    ) -> Result<Option<Vec<Message>>, hybrid_compaction_model::reducers::UpstreamError> {
        self.0.cancel();
        Ok(Some(messages.to_vec()))
    }
}

/// SPEC NODE-3 steps 7-8, NODE-5, EVT-2.
#[test]
fn node_3_evt_2_cancellation_during_assembly_emits_started_only() {
    let sink = Arc::new(RecordingSink::default());
    let cancel = CancellationToken::new();
    let mut n = node(CancellingReducer(cancel.clone()), Some(&sink))
        .with_snapshot_integration(body_integration());
    let run = Run::new();
    let mut history = long_history();
    history.insert(1, user(&reference().to_string()));
    let err = n
        .call(&mut RunScope::with_run(run.clone()), &history, &cancel)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    assert_eq!(sink.kinds(), vec![EventKind::Started]);
    assert!(n.client().sent.is_empty());
    // The body reserved during assembly is given back (NODE-5).
    assert_gate_free_and_nothing_reserved(&run);
    assert!(!run.is_delivered(digest()));
    assert_eq!(run.reserved_by(digest()), None);
}

/// A classifier whose override names a forbidden kind (CLS-1: InvalidOperation).
struct ForbiddenOverride;

impl Classifier for ForbiddenOverride {
    fn entry_id(&mut self, _messages: &[Message], index: usize) -> String {
        format!("m{index}")
    }
    fn override_kind(&mut self, _messages: &[Message], _index: usize) -> Option<EntryKind> {
        Some(EntryKind::RecoverableContextSegment)
    }
}

/// SPEC NODE-2 (gate), NODE-3 steps 1-4, NODE-5, EVT-2.
#[test]
fn node_3_evt_2_errors_before_started_emit_nothing_and_release() {
    let token = CancellationToken::new();
    // Classifier failure (step 3).
    let sink = Arc::new(RecordingSink::default());
    let mut n = node(counting(), Some(&sink)).with_classifier(Box::new(ForbiddenOverride));
    let run = Run::new();
    let err = n
        .call(
            &mut RunScope::with_run(run.clone()),
            &small_history(),
            &token,
        )
        .unwrap_err();
    assert!(matches!(err, NodeError::Adapt(_)));
    assert_eq!(err.kind(), ErrorKind::InvalidOperation);
    assert!(sink.events().is_empty());
    assert_gate_free_and_nothing_reserved(&run);

    // No snapshot provider (step 4).
    let sink = Arc::new(RecordingSink::default());
    let mut n = node(counting(), Some(&sink))
        .with_snapshot_integration(|_: Vec<Entry>| None::<Box<dyn SnapshotProvider>>);
    let err = n
        .call(
            &mut RunScope::with_run(run.clone()),
            &small_history(),
            &token,
        )
        .unwrap_err();
    assert_eq!(err, NodeError::NoSnapshotProvider);
    assert_eq!(err.kind(), ErrorKind::InvalidOperation);
    assert!(sink.events().is_empty());
    assert_gate_free_and_nothing_reserved(&run);

    // Already cancelled (gate entry / step 1): no trace.
    let sink = Arc::new(RecordingSink::default());
    let mut n = node(counting(), Some(&sink));
    let err = n
        .call(
            &mut RunScope::with_run(run.clone()),
            &small_history(),
            &CancellationToken::cancelled(),
        )
        .unwrap_err();
    assert_eq!(err, NodeError::Lease(LeaseError::Cancelled));
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    assert!(sink.events().is_empty());
    assert!(n.client().sent.is_empty());
    assert_gate_free_and_nothing_reserved(&run);
}

/// SPEC NODE-2 (gate, LSE-7), EVT-2.
#[test]
fn node_2_waits_at_the_gate_and_a_cancelled_waiter_leaves_no_trace() {
    // LSE-7 through the node: another call of the same run holds the slot; this call waits and
    // is cancelled while waiting: the lease error, no events, nothing sent.
    let run = Run::new();
    let holder = run.enter(&CancellationToken::new()).unwrap();
    let cancel = CancellationToken::new();
    let sink = Arc::new(RecordingSink::default());
    let (waiter_run, waiter_cancel, waiter_sink) = (run.clone(), cancel.clone(), sink.clone());
    let waiter = thread::spawn(move || {
        let mut n = node(counting(), Some(&waiter_sink));
        let r = n.call(
            &mut RunScope::with_run(waiter_run),
            &small_history(),
            &waiter_cancel,
        );
        (r.map(|d| d.reply), n.client().sent.len())
    });
    thread::sleep(Duration::from_millis(50));
    run.cancel_and_wake(&cancel);
    let (result, sent) = waiter.join().unwrap();
    assert_eq!(result, Err(NodeError::Lease(LeaseError::Cancelled)));
    assert_eq!(sent, 0);
    assert!(sink.events().is_empty());
    assert!(run.gate_occupied(), "the holder still holds the slot");
    holder.release().unwrap();
    assert_gate_free_and_nothing_reserved(&run);
}

// ---------------------------------------------------------------------------------------------
// NODE-5: leases (at-most-once delivery per run, release on failure)

/// SPEC NODE-5 (commit with forwarded digests; LSE-8, LSE-9).
#[test]
fn node_5_a_recovered_body_is_delivered_at_most_once_per_run() {
    let sink = Arc::new(RecordingSink::default());
    let mut n = body_node(Some(&sink));
    let mut scope = RunScope::new();
    let run;
    {
        let outer = scope.begin_run();
        run = outer.current().unwrap().clone();
        drop(outer);
    }
    let mut scope = RunScope::with_run(run.clone());
    let token = CancellationToken::new();
    let first = n.call(&mut scope, &with_body_history(), &token).unwrap();
    assert_eq!(first.forwarded, vec![digest()]);
    assert!(
        carries_body(&n.client().sent[0]),
        "first call delivers the body"
    );
    assert!(run.is_delivered(digest()));
    // The second call of the same run: its snapshot has the body filtered out (LSE-8).
    let second = n.call(&mut scope, &with_body_history(), &token).unwrap();
    assert!(second.forwarded.is_empty());
    assert!(!carries_body(&n.client().sent[1]), "never twice in one run");
    assert_eq!(n.client().sent[1], with_body_history());
    assert_gate_free_and_nothing_reserved(&run);
    // A new outer run starts empty: the body may be delivered once more (LSE-9).
    let mut fresh = RunScope::new();
    let third = n.call(&mut fresh, &with_body_history(), &token).unwrap();
    assert_eq!(third.forwarded, vec![digest()]);
    assert!(carries_body(&n.client().sent[2]));
}

/// SPEC NODE-5 (release on provider failure), EVT-2 (nothing retracted).
#[test]
fn node_5_provider_failure_releases_so_a_later_call_delivers() {
    let sink = Arc::new(RecordingSink::default());
    let mut n = body_node(Some(&sink));
    n.client_mut().fail_call = Some(0);
    let run = Run::new();
    let mut scope = RunScope::with_run(run.clone());
    let token = CancellationToken::new();
    let err = n
        .call(&mut scope, &with_body_history(), &token)
        .unwrap_err();
    assert!(matches!(err, NodeError::Provider(_)));
    assert!(
        carries_body(&n.client().sent[0]),
        "the failed request carried the body"
    );
    // C# S53: a provider failure after Composed retracts nothing.
    assert_eq!(
        sink.kinds(),
        vec![
            EventKind::Started,
            EventKind::Completed,
            EventKind::Composed
        ]
    );
    assert!(!run.is_delivered(digest()));
    assert_gate_free_and_nothing_reserved(&run);
    let out = n.call(&mut scope, &with_body_history(), &token).unwrap();
    assert_eq!(out.forwarded, vec![digest()]);
    assert!(
        carries_body(&n.client().sent[1]),
        "the retry delivers the body"
    );
    assert!(run.is_delivered(digest()));
}

/// SPEC NODE-5 (a body reserved by another call is filtered out).
#[test]
fn node_5_a_body_reserved_by_a_concurrent_call_is_filtered_out() {
    // Another call of the same run reserved the body (LSE-2): this call's snapshot filters it;
    // when that call releases, the next call picks the body up.
    let run = Run::new();
    let other = run.new_lease();
    assert!(run.try_reserve(digest(), other).unwrap());
    let mut n = body_node(None);
    let mut scope = RunScope::with_run(run.clone());
    let token = CancellationToken::new();
    let out = n.call(&mut scope, &with_body_history(), &token).unwrap();
    assert!(out.forwarded.is_empty());
    assert!(!carries_body(&n.client().sent[0]));
    run.release(other).unwrap();
    let out = n.call(&mut scope, &with_body_history(), &token).unwrap();
    assert_eq!(out.forwarded, vec![digest()]);
    assert!(carries_body(&n.client().sent[1]));
}

// ---------------------------------------------------------------------------------------------
// EVT-1: no reporter, no events, identical behaviour

/// SPEC EVT-1.
#[test]
fn evt_1_without_a_reporter_behaviour_is_identical() {
    let histories = [
        small_history(),
        long_history(),
        irreducible_history(),
        with_body_history(),
    ];
    let sink = Arc::new(RecordingSink::default());
    let mut with = body_node(Some(&sink));
    let mut without = body_node(None);
    let (mut s1, mut s2) = (RunScope::new(), RunScope::new());
    let (_g1, _g2) = (s1.begin_run(), s2.begin_run());
    let (r1, r2) = (
        _g1.current().unwrap().clone(),
        _g2.current().unwrap().clone(),
    );
    drop((_g1, _g2));
    let (mut s1, mut s2) = (
        RunScope::with_run(r1.clone()),
        RunScope::with_run(r2.clone()),
    );
    let token = CancellationToken::new();
    for h in &histories {
        let a = with.call(&mut s1, h, &token);
        let b = without.call(&mut s2, h, &token);
        match (a, b) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.reply, b.reply);
                assert_eq!(*a.diagnostics, *b.diagnostics);
                assert_eq!(a.forwarded, b.forwarded);
            }
            (Err(a), Err(b)) => assert_eq!(a, b),
            (a, b) => panic!("diverged: {:?} vs {:?}", a.is_ok(), b.is_ok()),
        }
    }
    assert_eq!(with.client().sent, without.client().sent);
    assert_eq!(r1.state(), r2.state());
    // 3 successes x 3 events + 1 termination x 2 events, all from the reporting node.
    assert_eq!(sink.events().len(), 11);
}

// ---------------------------------------------------------------------------------------------
// EVT-3 / EVT-5: envelope, sequence numbers, AssemblyId

struct FixedClock(SystemTime);

impl Clock for FixedClock {
    fn now(&self) -> SystemTime {
        self.0
    }
}

/// SPEC EVT-3, NODE-6 (injected clock and sequence source).
#[test]
fn evt_3_envelope_takes_clock_and_shared_sequence_source() {
    let sink = Arc::new(RecordingSink::default());
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let seq: Arc<dyn SequenceSource> = Arc::new(CounterSequence::new());
    // Another reporter of the workflow took numbers 1 and 2 first.
    assert_eq!((seq.next_sequence(), seq.next_sequence()), (1, 2));
    let rep = Reporter::new(
        Arc::clone(&sink) as Arc<dyn ProgressSink>,
        ReporterIdentity {
            workflow_id: ReporterId::new("wf-9"),
            agent_id: Some(ReporterId::new("child")),
            parent_agent_id: Some(ReporterId::new("parent")),
            depth: 2,
        },
    )
    .with_clock(Arc::new(FixedClock(at)))
    .with_sequence(Arc::clone(&seq));
    let mut n = match select(
        true,
        Some(NodeOptions {
            policy: policy(),
            reducer: counting(),
        }),
        Client::default(),
        Some(rep),
    )
    .unwrap()
    {
        NodeSelection::Installed(n) => n,
        NodeSelection::Disabled(_) => unreachable!(),
    };
    n.call(
        &mut RunScope::new(),
        &small_history(),
        &CancellationToken::new(),
    )
    .unwrap();
    let events = sink.events();
    assert_eq!(seqs(&events), vec![3, 4, 5]);
    for e in &events {
        let env = e.envelope();
        assert_eq!(env.timestamp, Some(at));
        assert_eq!(env.workflow_id.as_str(), "wf-9");
        assert_eq!(
            env.parent_agent_id.as_ref().map(ReporterId::as_str),
            Some("parent")
        );
        assert_eq!(env.depth, 2);
    }
}

/// Checks the per-attempt grouping of a recorded event stream: each AssemblyId's events form one
/// of the allowed sequences with increasing sequence numbers; returns the number of attempts.
fn check_attempts(events: &[CompactionEvent]) -> usize {
    let mut by_id: BTreeMap<AssemblyId, Vec<(u64, EventKind)>> = BTreeMap::new();
    for e in events {
        by_id
            .entry(e.envelope().assembly_id)
            .or_default()
            .push((e.envelope().sequence_number, e.kind()));
    }
    for attempt in by_id.values() {
        let kinds: Vec<EventKind> = attempt.iter().map(|(_, k)| *k).collect();
        assert!(
            kinds
                == [
                    EventKind::Started,
                    EventKind::Completed,
                    EventKind::Composed
                ]
                || kinds == [EventKind::Started, EventKind::Terminated],
            "an attempt emitted {kinds:?}"
        );
        assert!(attempt.windows(2).all(|w| w[0].0 < w[1].0));
    }
    by_id.len()
}

/// SPEC EVT-5, EVT-3 (increasing sequence numbers), EVT-2.
#[test]
fn evt_5_assembly_id_is_shared_within_and_distinct_across_attempts() {
    let sink = Arc::new(RecordingSink::default());
    let mut n = node(counting(), Some(&sink));
    let token = CancellationToken::new();
    for h in [small_history(), irreducible_history(), long_history()] {
        let _ = n.call(&mut RunScope::new(), &h, &token);
    }
    let events = sink.events();
    assert_eq!(events.len(), 3 + 2 + 3);
    assert_eq!(check_attempts(&events), 3, "three distinct ids");
    assert!(seqs(&events).windows(2).all(|w| w[0] < w[1]));
}

/// SPEC EVT-5 (concurrent attempts), EVT-2, EVT-3.
#[test]
fn evt_5_concurrent_attempts_on_two_threads_have_distinct_ids() {
    // Two nodes of one workflow share the sink and the sequence source and run concurrently
    // with the default id source; their events interleave but pair up by AssemblyId.
    let sink = Arc::new(RecordingSink::default());
    let seq: Arc<dyn SequenceSource> = Arc::new(CounterSequence::new());
    let per_thread = 20;
    let handles: Vec<_> = (0..2)
        .map(|t| {
            let rep = reporter(&sink).with_sequence(Arc::clone(&seq));
            thread::spawn(move || {
                let mut n = match select(
                    true,
                    Some(NodeOptions {
                        policy: policy(),
                        reducer: counting(),
                    }),
                    Client::default(),
                    Some(rep),
                )
                .unwrap()
                {
                    NodeSelection::Installed(n) => n,
                    NodeSelection::Disabled(_) => unreachable!(),
                };
                let token = CancellationToken::new();
                for i in 0..per_thread {
                    let h = if (i + t) % 3 == 0 {
                        irreducible_history()
                    } else {
                        small_history()
                    };
                    let _ = n.call(&mut RunScope::new(), &h, &token);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let events = sink.events();
    assert_eq!(check_attempts(&events), 2 * per_thread);
    let numbers: HashSet<u64> = seqs(&events).into_iter().collect();
    assert_eq!(numbers.len(), events.len(), "sequence numbers are unique");
}

struct FixedIds(Mutex<u128>);

impl IdSource for FixedIds {
    fn next_id(&self) -> AssemblyId {
        let mut n = self.0.lock().unwrap();
        *n += 1;
        AssemblyId::from_u128(*n)
    }
}

/// SPEC EVT-5, NODE-6 (injected id source).
#[test]
fn evt_5_the_id_is_drawn_once_per_attempt_that_reaches_the_assembler() {
    // Errors before Started draw no id; each attempt that starts draws exactly one.
    let sink = Arc::new(RecordingSink::default());
    let source = Arc::new(FixedIds(Mutex::new(0)));
    let mut n = node(counting(), Some(&sink)).with_id_source(source.clone());
    let token = CancellationToken::new();
    n.call(&mut RunScope::new(), &small_history(), &token)
        .unwrap();
    let _ = n.call(
        &mut RunScope::new(),
        &small_history(),
        &CancellationToken::cancelled(),
    );
    let _ = n.call(&mut RunScope::new(), &irreducible_history(), &token);
    assert_eq!(
        ids(&sink.events()),
        vec![
            AssemblyId::from_u128(1),
            AssemblyId::from_u128(1),
            AssemblyId::from_u128(1),
            AssemblyId::from_u128(2),
            AssemblyId::from_u128(2)
        ]
    );
    assert_eq!(*source.0.lock().unwrap(), 2);
    assert_eq!(
        AssemblyId::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677).to_string(),
        "01234567-89ab-cdef-0011-223344556677"
    );
}

// ---------------------------------------------------------------------------------------------
// EVT-6: privacy

fn marker_history() -> Vec<Message> {
    let mut args = BTreeMap::new();
    args.insert("q".to_string(), Value::String("MARKER-ARG-5".into()));
    vec![
        system("MARKER-SYS-1"),
        user("MARKER-USER-2"),
        user(&reference().to_string()),
        Message::new(
            "assistant",
            vec![Part::Call(hybrid_compaction_model::message::FunctionCall {
                call_id: "MARKER-CALLID-3".into(),
                name: "MARKER-FN-4".into(),
                arguments: Some(args),
                informational_only: false,
            })],
        ),
        Message::new(
            "tool",
            vec![Part::result(
                "MARKER-CALLID-3",
                Value::String("MARKER-RESULT-6".into()),
            )],
        ),
    ]
}

/// SPEC EVT-6 (C# S72), DIA-1, NODE-4.
#[test]
fn evt_6_events_and_diagnostics_never_render_content() {
    let markers = [
        "MARKER-SYS-1",
        "MARKER-USER-2",
        "MARKER-CALLID-3",
        "MARKER-FN-4",
        "MARKER-ARG-5",
        "MARKER-RESULT-6",
        "MARKER-BODY-7",
        "MARKER-ERR-8",
        "MARKER-ID-9",
        "MARKER-PROVIDER-ERR",
        "MARKER",
    ];
    // The classifier output (entry ids) must not appear either.
    let mut forbidden: Vec<String> = markers.iter().map(|s| s.to_string()).collect();
    for e in adapt(&marker_history(), &mut ContentHashClassifier::new()).unwrap() {
        forbidden.push(e.id().as_str().to_owned());
    }
    forbidden.push(digest().to_hex());

    let sink = Arc::new(RecordingSink::default());
    let token = CancellationToken::new();
    let mut rendered = Vec::new();
    // Success with a delivered body (big policy: WithinLimit).
    let big = Policy::new(PolicySpec {
        hard_limit: 1_000_000,
        trigger_margin: 10,
        recent_message_retention_count: 2,
        maximum_compaction_attempts: 2,
        preservation_label: Some("node-tests".into()),
        preservation_version: 1,
        estimator: Some(Arc::new(
            hybrid_compaction::engine::estimate::Utf8ContextEstimator,
        )),
    })
    .unwrap();
    let mut n = match select(
        true,
        Some(NodeOptions {
            policy: big,
            reducer: counting(),
        }),
        Client::default(),
        Some(reporter(&sink)),
    )
    .unwrap()
    {
        NodeSelection::Installed(n) => n.with_snapshot_integration(body_integration()),
        NodeSelection::Disabled(_) => unreachable!(),
    };
    let ok = n
        .call(&mut RunScope::new(), &marker_history(), &token)
        .unwrap();
    assert!(carries_body(&n.client().sent[0]));
    rendered.push(format!("{:?}", ok.diagnostics));
    // A provider failure with a marker in its error.
    n.client_mut().fail_call = Some(1);
    let _ = n.call(&mut RunScope::new(), &marker_history(), &token);
    // Termination: the marker history (5 entries = 50 units) plus 6 system markers; all
    // required, 110 > 100.
    let mut long = marker_history();
    for i in 0..6 {
        long.push(system(&format!("MARKER-SYS-1 {i}")));
    }
    let mut t = node(counting(), Some(&sink));
    let err = t.call(&mut RunScope::new(), &long, &token).unwrap_err();
    assert!(matches!(err, NodeError::Terminated(_)));
    rendered.push(format!("{err:?} {err}"));
    // A failing reducer whose error text holds a marker.
    let mut f = node(
        ScriptedUpstreamReducer::new(vec![UpstreamStep::Fail("MARKER-ERR-8".into())]),
        Some(&sink),
    );
    let mut long2 = marker_history();
    for i in 0..8 {
        long2.push(user(&format!("MARKER-USER-2 {i}")));
    }
    let err = f.call(&mut RunScope::new(), &long2, &token).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ReducerFailed);

    let events = sink.events();
    assert_eq!(
        events.iter().map(CompactionEvent::kind).collect::<Vec<_>>(),
        vec![
            EventKind::Started,
            EventKind::Completed,
            EventKind::Composed,
            EventKind::Started,
            EventKind::Completed,
            EventKind::Composed,
            EventKind::Started,
            EventKind::Terminated,
            EventKind::Started,
        ]
    );
    for e in &events {
        rendered.push(format!("{e:?}"));
        rendered.push(format!("{e:#?}"));
    }
    for text in &rendered {
        for f in &forbidden {
            assert!(!text.contains(f.as_str()), "`{f}` leaked into {text}");
        }
    }
    // The reporter identifiers are the only strings (EVT-6).
    assert!(rendered.iter().any(|t| t.contains("wf-1")));
}

/// SPEC NODE-4, EVT-2 (errors never masquerade as terminations).
#[test]
fn node_4_the_termination_error_carries_only_outcome_and_sizes() {
    let e = CompactionTerminated {
        outcome: Outcome::ConcurrentMutationLimit,
        final_estimated_size: 7,
        hard_limit: 5,
    };
    assert_eq!(
        e.to_string(),
        "context compaction terminated (ConcurrentMutationLimit): final estimated size 7 \
         exceeds what can be sent within hard limit 5"
    );
    // Errors during assembly keep their own kinds and never masquerade as a termination.
    assert_eq!(
        NodeError::Assembly(AssemblyError::Cancelled).kind(),
        ErrorKind::Cancelled
    );
}

// ---------------------------------------------------------------------------------------------
// NODE-2 / NODE-5: streaming (C# S51: commit only when the stream is read to its end)

use hybrid_compaction::node::StreamingChatClient;

/// Streams `updates` items per call; item `fail_at` (if any) is an error.
struct StreamClient {
    updates: usize,
    fail_at: Option<usize>,
    sent: Vec<Vec<Message>>,
}

impl StreamingChatClient for StreamClient {
    type Update = usize;
    type Stream = std::vec::IntoIter<Result<usize, ProviderError>>;
    fn stream(
        &mut self,
        messages: &[Message],
        _cancel: &CancellationToken,
    ) -> Result<Self::Stream, ProviderError> {
        self.sent.push(messages.to_vec());
        let items: Vec<Result<usize, ProviderError>> = (0..self.updates)
            .map(|i| {
                if self.fail_at == Some(i) {
                    Err(ProviderError("stream broke".into()))
                } else {
                    Ok(i)
                }
            })
            .collect();
        Ok(items.into_iter())
    }
}

fn stream_node(
    updates: usize,
    fail_at: Option<usize>,
    sink: &Arc<RecordingSink>,
) -> CompactionNode<StreamClient, MessageCountingReducer> {
    let client = StreamClient {
        updates,
        fail_at,
        sent: Vec::new(),
    };
    match select(
        true,
        Some(NodeOptions {
            policy: policy(),
            reducer: counting(),
        }),
        client,
        Some(reporter(sink)),
    )
    .unwrap()
    {
        NodeSelection::Installed(n) => n.with_snapshot_integration(body_integration()),
        NodeSelection::Disabled(_) => unreachable!(),
    }
}

/// SPEC NODE-2 (streaming), NODE-5, EVT-2.
#[test]
fn node_2_node_5_streaming_commits_only_when_read_to_its_end() {
    let sink = Arc::new(RecordingSink::default());
    let token = CancellationToken::new();
    let run = Run::new();

    // Abandoned after one of three updates: released, the gate held meanwhile.
    let mut n = stream_node(3, None, &sink);
    let mut scope = RunScope::with_run(run.clone());
    let mut s = n
        .call_streaming(&mut scope, &with_body_history(), &token)
        .unwrap();
    assert_eq!(s.next(), Some(Ok(0)));
    assert!(run.gate_occupied(), "slot held while streaming");
    assert!(
        run.reserved_by(digest()).is_some(),
        "the body is reserved while streaming"
    );
    drop(s);
    assert!(!run.is_delivered(digest()));
    assert_gate_free_and_nothing_reserved(&run);

    // An error item releases.
    let mut n = stream_node(3, Some(1), &sink);
    let mut scope = RunScope::with_run(run.clone());
    let s = n
        .call_streaming(&mut scope, &with_body_history(), &token)
        .unwrap();
    let items: Vec<_> = s.collect();
    assert_eq!(items.len(), 2);
    assert!(matches!(items[1], Err(NodeError::Provider(_))));
    assert!(!run.is_delivered(digest()));
    assert_gate_free_and_nothing_reserved(&run);

    // Zero updates, read to the end: committed; the body is delivered once.
    let mut n = stream_node(0, None, &sink);
    let mut scope = RunScope::with_run(run.clone());
    let s = n
        .call_streaming(&mut scope, &with_body_history(), &token)
        .unwrap();
    assert_eq!(s.forwarded(), &[digest()]);
    let id = s.assembly_id();
    assert_eq!(s.count(), 0);
    assert!(run.is_delivered(digest()));
    assert_gate_free_and_nothing_reserved(&run);
    assert!(carries_body(&n.client().sent[0]));
    // Every streamed attempt emitted Started, Completed, Composed.
    assert_eq!(check_attempts(&sink.events()), 3);
    assert!(sink.events().iter().any(|e| e.envelope().assembly_id == id));

    // A later streaming call of the run no longer gets the body.
    let mut n = stream_node(2, None, &sink);
    let mut scope = RunScope::with_run(run.clone());
    let s = n
        .call_streaming(&mut scope, &with_body_history(), &token)
        .unwrap();
    assert!(s.forwarded().is_empty());
    assert_eq!(s.collect::<Vec<_>>(), vec![Ok(0), Ok(1)]);
    assert!(!carries_body(&n.client().sent[0]));
}

// ---------------------------------------------------------------------------------------------
// NODE-6: injected seams

/// Ids `m{i}`; the user message at index 1 is overridden to `OptionalContext`.
struct OptionalSecond;

impl Classifier for OptionalSecond {
    fn entry_id(&mut self, _messages: &[Message], index: usize) -> String {
        format!("m{index}")
    }
    fn override_kind(&mut self, _messages: &[Message], index: usize) -> Option<EntryKind> {
        (index == 1).then_some(EntryKind::OptionalContext)
    }
}

/// SPEC NODE-6, NODE-3 steps 3-4.
#[test]
fn node_6_classifier_and_integration_are_injected() {
    // The node can move to another thread when its client and reducer can.
    fn assert_send<T: Send>() {}
    assert_send::<CompactionNode<Client, MessageCountingReducer>>();
    let sink = Arc::new(RecordingSink::default());
    let baselines: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    let seen = Arc::clone(&baselines);
    let mut n = node(counting(), Some(&sink))
        .with_classifier(Box::new(OptionalSecond))
        .with_snapshot_integration(move |baseline: Vec<Entry>| {
            seen.lock().unwrap().push(
                baseline
                    .iter()
                    .map(|e| e.id().as_str().to_owned())
                    .collect(),
            );
            Some(Box::new(StaticProvider::new(baseline)) as Box<dyn SnapshotProvider>)
        });
    let out = n
        .call(
            &mut RunScope::new(),
            &small_history(),
            &CancellationToken::new(),
        )
        .unwrap();
    assert_eq!(*baselines.lock().unwrap(), vec![vec!["m0", "m1", "m2"]]);
    let categories: Vec<(Category, i32)> = out
        .diagnostics
        .category_contributions
        .iter()
        .map(|c| (c.category, c.entry_count))
        .collect();
    assert_eq!(
        categories,
        vec![
            (Category::SystemInstruction, 1),
            (Category::ConversationalMessage, 1),
            (Category::OptionalContext, 1),
        ]
    );
}

/// SPEC NODE-6.
#[test]
fn node_6_the_node_reads_no_ambient_time() {
    // The node cannot call the executable specification (the library does not depend on it:
    // tests/repository/independence.rs). Ambient time is read only by the injectable defaults in
    // ids.rs (the system clock).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/node");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        files += 1;
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            if !path.ends_with("ids.rs") {
                assert!(
                    !code.contains("SystemTime::now"),
                    "{}: {line}",
                    path.display()
                );
            }
        }
    }
    assert_eq!(files, 6);
}
