//! The library's own node API (`hybrid_compaction::node`): what its types and builders promise
//! beyond the clauses both implementations answer.
//!
//! The node's clauses (SPEC NODE-1 .. NODE-5, EVT-1 .. EVT-6) are tested once for both
//! implementations in the clause suite (`tests/clauses/node.rs`, through the seam's node world).
//! The tests here are library-only because they check what that synchronous, plain-valued world
//! deliberately does not show: the library's selection and error types (`NodeSelection`,
//! `ConfigError`, the `NodeError` variants, `CompactionTerminated`'s rendering), the dispatch
//! result sharing the events' diagnostics allocation (EVT-4's "same allocation"), the builders
//! that inject a classifier, an integration or an id source (NODE-6), the reporter's clock and
//! shared sequence source (EVT-3), two nodes running on two threads (EVT-5), a reducer that
//! holds the call's own token, the `NodeStream` type while it is open, the `Debug` renderings of
//! the library's events and errors (EVT-6), and a scan of `src/node` for ambient time (NODE-6).
//!
//! Expected values are derived by hand from the SPEC: histories are measured with the
//! host-defined `ConstantEstimator(10)` (every entry is 10 units), so sizes, thresholds and
//! termination sizes can be computed on paper.

#[path = "support/markers.rs"]
mod markers;

use std::collections::{BTreeMap, HashSet};
use std::error::Error;
use std::fmt;
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
use hybrid_compaction_model::classifier::{Classifier, ClassifierError};
use hybrid_compaction_model::diagnostics::Category;
use hybrid_compaction_model::entry::{Entry, EntryKind, RecoverableSegment};
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::estimator::ConstantEstimator;
use hybrid_compaction_model::lease::LeaseError;
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::{
    MessageCountingReducer, ScriptedUpstreamReducer, UpstreamError, UpstreamReducer, UpstreamStep,
};
use hybrid_compaction_model::snapshot::{SnapshotProvider, StaticProvider};

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
            return Err(ProviderError::msg("provider down MARKER-PROVIDER-ERR"));
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
// NODE-1: the library's selection types

/// SPEC NODE-1 (C# S54, S84) as the library types it: the two argument errors are
/// `ConfigError` variants, and `Disabled` hands the caller's client back unchanged. (That switch
/// and options must agree is the clause suite's `node_1_switch_and_options_must_agree`.)
#[test]
fn node_1_select_returns_config_errors_and_hands_the_client_back() {
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
// EVT-4 / EVT-5: the dispatch result

/// SPEC EVT-4, EVT-5, EVT-3, EVT-1 as the library types them: `Dispatched` carries the
/// provider's reply, the attempt's `AssemblyId` and the very diagnostics allocation of the
/// `Completed` and `Composed` events; without a clock the envelope has no timestamp; a node
/// without a reporter replies the same.
#[test]
fn evt_4_evt_5_the_dispatch_result_shares_the_events_diagnostics_and_id() {
    let sink = Arc::new(RecordingSink::default());
    let mut n = node(counting(), Some(&sink));
    let token = CancellationToken::new();
    let out = n
        .call(&mut RunScope::new(), &small_history(), &token)
        .unwrap();
    assert_eq!(out.reply, 3);
    // NODE-3 (C# S52 step 14): Composed is emitted before dispatch.
    assert_eq!(n.client().events_at_send, vec![3]);
    let events = sink.events();
    // EVT-4: Completed and Composed carry the identical value, also on the dispatch result.
    let completed = events[1].diagnostics().unwrap();
    let composed = events[2].diagnostics().unwrap();
    assert!(Arc::ptr_eq(completed, composed));
    assert!(Arc::ptr_eq(completed, &out.diagnostics));
    // EVT-5: one id on every event, equal to the dispatch result's.
    assert!(ids(&events).iter().all(|id| *id == out.assembly_id));
    for e in &events {
        assert_eq!(
            e.envelope().timestamp,
            None,
            "no clock injected, no timestamp"
        );
    }
    // EVT-1: without a reporter, the same reply and diagnostics.
    let mut quiet = node(counting(), None);
    let q = quiet
        .call(&mut RunScope::new(), &small_history(), &token)
        .unwrap();
    assert_eq!(q.reply, out.reply);
    assert_eq!(*q.diagnostics, *out.diagnostics);
}

/// SPEC NODE-3 step 3: a host that adapted its messages itself (the node's classifier, CLS-1)
/// and hands the entries to `call_adapted` gets the call `call` makes of the messages: the same
/// outcome or error, dispatched messages, events and diagnostics, on every path (within limit,
/// reduced, irreducible, a recovered body forwarded).
#[test]
fn node_3_a_host_adapted_baseline_calls_as_its_messages_do() {
    let histories = [
        small_history(),
        long_history(),
        irreducible_history(),
        with_body_history(),
    ];
    for (k, history) in histories.iter().enumerate() {
        let entries = adapt(history, &mut ContentHashClassifier::new()).unwrap();
        let run = |adapted: bool| {
            let sink = Arc::new(RecordingSink::default());
            let mut n = body_node(Some(&sink));
            let mut scope = RunScope::new();
            let token = CancellationToken::new();
            let out = if adapted {
                n.call_adapted(&mut scope, entries.clone(), &token)
            } else {
                n.call(&mut scope, history, &token)
            };
            let out = out.map(|d| (d.reply, (*d.diagnostics).clone(), d.forwarded));
            (format!("{out:?}"), n.client().sent.clone(), sink.kinds())
        };
        let (by_messages, by_entries) = (run(false), run(true));
        assert_eq!(by_entries, by_messages, "history {k}");
    }
}

/// A client that sends the bounded entries itself (NODE-2 step 4), counting plain sends.
#[derive(Default)]
struct EntriesClient {
    sent: Vec<Vec<Message>>,
    plain_sends: usize,
}

impl ChatClient for EntriesClient {
    type Reply = usize;
    fn send(
        &mut self,
        messages: &[Message],
        _: &CancellationToken,
    ) -> Result<usize, ProviderError> {
        self.plain_sends += 1;
        Ok(messages.len())
    }
    fn send_entries(
        &mut self,
        entries: &[Entry],
        _: &CancellationToken,
    ) -> Result<usize, ProviderError> {
        self.sent
            .push(entries.iter().map(|e| e.message().clone()).collect());
        Ok(entries.len())
    }
}

/// SPEC NODE-2 step 4: the node dispatches through `send_entries` (a client, or a `&mut` of
/// one, that overrides it is never sent copied messages), and the bounded messages it hands
/// over are the ones the default (`send` of the copied messages) dispatches.
#[test]
fn node_2_dispatch_goes_through_send_entries_of_the_client_or_its_borrow() {
    for history in [small_history(), long_history()] {
        let mut reference = node(counting(), None);
        reference
            .call(&mut RunScope::new(), &history, &CancellationToken::new())
            .unwrap();
        let mut client = EntriesClient::default();
        {
            let options = NodeOptions {
                policy: policy(),
                reducer: counting(),
            };
            let NodeSelection::Installed(mut n) =
                select(true, Some(options), &mut client, None).unwrap()
            else {
                panic!("switch and options install a node")
            };
            let out = n
                .call(&mut RunScope::new(), &history, &CancellationToken::new())
                .unwrap();
            assert_eq!(out.reply, reference.client().sent[0].len());
        }
        assert_eq!(client.plain_sends, 0, "no copied messages sent");
        assert_eq!(client.sent, reference.client().sent);
    }
}

// ---------------------------------------------------------------------------------------------
// NODE-3 / EVT-2: errors during and before assembly

/// A reducer that cancels the call's token while reducing: the assembler observes it at its
/// next check point (ASM-16), an error during assembly. Library-only: the seam's node world makes
/// each call's token from its plan, so a reducer cannot hold it (the clause suite cancels during
/// a capture instead).
struct CancellingReducer(CancellationToken);

impl UpstreamReducer for CancellingReducer {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        self.0.cancel();
        Ok(Some(messages.to_vec()))
    }
}

/// SPEC NODE-3 steps 7-8, NODE-5, EVT-2.
#[test]
fn node_3_evt_2_a_reducer_cancelling_the_calls_token_is_an_error_during_assembly() {
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
    fn entry_id(&mut self, _messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        Ok(format!("m{index}"))
    }
    fn override_kind(&mut self, _messages: &[Message], _index: usize) -> Option<EntryKind> {
        Some(EntryKind::RecoverableContextSegment)
    }
}

/// SPEC NODE-3 steps 1-4, NODE-4, NODE-5, EVT-2 as the library types them: each failure is its
/// own `NodeError` variant, and the failures of an injected classifier and integration (NODE-6)
/// are errors before `Started` that leave the gate free. (The kinds, events and leases of every
/// failure are the clause suite's, through the seam.)
#[test]
fn node_3_node_4_node_5_each_failure_is_its_own_node_error() {
    let token = CancellationToken::new();
    // Classifier failure (step 3), through an injected classifier.
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

    // No snapshot provider (step 4), through an injected integration.
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

    // Termination (NODE-4): the typed termination, with only the outcome and the two sizes.
    let mut n = node(counting(), None);
    let err = n
        .call(&mut RunScope::new(), &irreducible_history(), &token)
        .unwrap_err();
    assert_eq!(
        err,
        NodeError::Terminated(CompactionTerminated {
            outcome: Outcome::Irreducible,
            final_estimated_size: 120,
            hard_limit: 100,
        })
    );
    // A provider failure after Composed (NODE-5).
    let mut n = body_node(None);
    n.client_mut().fail_call = Some(0);
    let err = n
        .call(&mut RunScope::new(), &with_body_history(), &token)
        .unwrap_err();
    assert!(matches!(err, NodeError::Provider(_)));
}

// ---------------------------------------------------------------------------------------------
// NODE-5 / BRG-1: the host's own errors stay the node error's sources

/// A host's own error type, with a field only the host reads.
#[derive(Debug)]
struct HostFailure {
    code: u16,
}

impl fmt::Display for HostFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "host failure {}", self.code)
    }
}

impl Error for HostFailure {}

/// A provider failing with the host's own error.
struct HostFailingClient;

impl ChatClient for HostFailingClient {
    type Reply = ();
    fn send(&mut self, _: &[Message], _: &CancellationToken) -> Result<(), ProviderError> {
        Err(ProviderError::new(HostFailure { code: 503 }))
    }
}

/// An upstream reducer failing with the host's own error.
struct HostFailingReducer;

impl UpstreamReducer for HostFailingReducer {
    fn reduce(&mut self, _: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        Err(UpstreamError::new(HostFailure { code: 429 }))
    }
}

/// `err` and its sources, in order.
fn chain<'e>(err: &'e (dyn Error + 'static)) -> impl Iterator<Item = &'e (dyn Error + 'static)> {
    std::iter::successors(Some(err), |&e| e.source())
}

/// The first error of `err`'s source chain (itself included) that is a [`HostFailure`].
fn host_failure<'e>(err: &'e (dyn Error + 'static)) -> Option<&'e HostFailure> {
    chain(err).find_map(|e| e.downcast_ref::<HostFailure>())
}

/// SPEC NODE-5, BRG-1, EVT-6: a provider's and an upstream reducer's own error types reach the
/// host again through the node's error, by `source()` and a downcast: the provider's directly
/// (`NodeError::Provider` is transparent), the reducer's through the bridge (`NodeError::Assembly`
/// -> `ReducerError::Failed` -> `UpstreamError` -> the host's error). The texts are the ones
/// hosts saw when the errors were strings, and no event renders them.
#[test]
fn node_5_brg_1_the_hosts_own_errors_are_the_node_errors_sources() {
    let token = CancellationToken::new();
    let sink = Arc::new(RecordingSink::default());
    let options = NodeOptions {
        policy: policy(),
        reducer: counting(),
    };
    let NodeSelection::Installed(mut n) = select(
        true,
        Some(options),
        HostFailingClient,
        Some(reporter(&sink)),
    )
    .unwrap() else {
        panic!("switch and options install a node")
    };
    let err = n
        .call(&mut RunScope::new(), &small_history(), &token)
        .unwrap_err();
    assert!(matches!(err, NodeError::Provider(_)));
    let source = err
        .source()
        .expect("the provider's own error is the source");
    assert_eq!(
        source.downcast_ref::<HostFailure>().map(|h| h.code),
        Some(503)
    );
    assert_eq!(err.to_string(), "provider call failed: host failure 503");
    assert_eq!(err.kind(), ErrorKind::InvalidOperation);

    let mut n = node(HostFailingReducer, Some(&sink));
    let err = n
        .call(&mut RunScope::new(), &long_history(), &token)
        .unwrap_err();
    assert!(matches!(err, NodeError::Assembly(_)));
    assert_eq!(err.kind(), ErrorKind::ReducerFailed);
    assert_eq!(host_failure(&err).map(|h| h.code), Some(429));
    let upstream = chain(&err)
        .find_map(|e| e.downcast_ref::<UpstreamError>())
        .expect("the bridge keeps the upstream reducer's error whole");
    assert_eq!(
        upstream.to_string(),
        "upstream reducer failed: host failure 429"
    );
    assert_eq!(err.to_string(), "reducer failed: host failure 429");

    // EVT-6: no event renders the host's text.
    let events = sink.events();
    assert!(!events.is_empty());
    for e in &events {
        assert!(!format!("{e:?}").contains("host failure"), "{e:?}");
    }

    // A plain message has no source; a boxed error is kept as it is; clones share the host's
    // error; equality is by text.
    assert!(ProviderError::msg("down").source().is_none());
    assert!(UpstreamError::msg("down").source().is_none());
    let boxed: Box<dyn Error + Send + Sync> = Box::new(HostFailure { code: 7 });
    let p = ProviderError::from_boxed(boxed);
    assert!(host_failure(&p.clone()).is_some_and(|h| h.code == 7));
    assert_eq!(p, ProviderError::msg("host failure 7"));
    assert_ne!(p, ProviderError::msg("host failure 8"));
    let boxed: Box<dyn Error + Send + Sync> = Box::new(HostFailure { code: 9 });
    assert!(host_failure(&UpstreamError::from_boxed(boxed)).is_some_and(|h| h.code == 9));
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
    markers::marker_history(&reference())
}

/// SPEC EVT-6 (C# S72), DIA-1, NODE-4, on the library's own types: the `Debug` renderings of
/// `CompactionEvent`, of the dispatch result's diagnostics and of `NodeError` (the clause suite
/// renders the seam's plain records).
#[test]
fn evt_6_the_library_events_and_errors_never_render_content() {
    let markers = markers::MARKERS;
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
                    Err(ProviderError::msg("stream broke"))
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

/// SPEC NODE-2 (streaming), NODE-5, EVT-2, on the library's `NodeStream`: while it is open it
/// holds the gate and the body's reservation, it yields the provider's items, and it names its
/// forwarded digests and its `AssemblyId` (how each stream ends is the clause suite's).
#[test]
fn node_2_node_5_the_node_stream_holds_the_gate_and_the_lease_until_it_ends() {
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
    fn entry_id(&mut self, _messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        Ok(format!("m{index}"))
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
