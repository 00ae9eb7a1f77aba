//! The library's node world ([`NodeWorld`]): a real [`CompactionNode`] on one [`RunScope`],
//! with a scripted provider client and a recording progress sink.
//!
//! The plan of each call reaches the node's snapshot integration through a shared slot, so the
//! node builds its provider exactly as a host integration would (SPEC NODE-3 step 4). The client
//! counts the events already reported when it is called (NODE-3 step 14), and a guarded world is
//! the same node configured through [`CompactionNode::with_trust`] (SPEC TRU-1).

use std::sync::{Arc, Mutex};

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::classifier::{Classifier, ClassifierError};
use hybrid_compaction_model::diagnostics::Diagnostics;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::error::TypedError;
use hybrid_compaction_model::lease::{LeaseError, LeaseId, Revision};
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::seam::node::STREAM_ITEM_FAILURE;
use hybrid_compaction_model::seam::{
    BoxedUpstream, CallEnd, CallPlan, CallRecord, EventRecord, FailingClassifier, NodeWorld,
    ReporterFields, RunView, StartedFields, StreamPlan, Termination,
};
use hybrid_compaction_model::snapshot::SnapshotProvider;
use hybrid_compaction_model::trust::{
    AttemptEvent, BindingAccessor, PartialTrustConfiguration, TrustBinding,
};

use crate::engine::classify::ContentHashClassifier;
use crate::lease::{CallSlot, Run, RunScope};
use crate::node::{
    select, ChatClient, CompactionEvent, CompactionNode, NodeError, NodeOptions, NodeSelection,
    ProgressSink, ProviderError, Reporter, ReporterId, ReporterIdentity, StreamingChatClient,
};

/// The real provider of the node: records what it was sent and how many events the sink held
/// then, fails or streams as planned.
#[derive(Debug, Default)]
pub struct ScriptedClient {
    fails: Option<String>,
    sent: Option<Vec<Message>>,
    stream: Option<StreamPlan>,
    sink: Arc<RecordingSink>,
    events_at_send: Option<usize>,
}

impl ScriptedClient {
    fn record(&mut self, messages: &[Message]) {
        self.sent = Some(messages.to_vec());
        self.events_at_send = Some(self.sink.len());
    }
}

impl ChatClient for ScriptedClient {
    type Reply = ();
    fn send(&mut self, messages: &[Message], _: &CancellationToken) -> Result<(), ProviderError> {
        self.record(messages);
        match &self.fails {
            Some(m) => Err(ProviderError::msg(m.clone())),
            None => Ok(()),
        }
    }
}

impl StreamingChatClient for ScriptedClient {
    type Update = ();
    type Stream = std::vec::IntoIter<Result<(), ProviderError>>;
    fn stream(
        &mut self,
        messages: &[Message],
        _: &CancellationToken,
    ) -> Result<Self::Stream, ProviderError> {
        self.record(messages);
        if let Some(m) = &self.fails {
            return Err(ProviderError::msg(m.clone()));
        }
        let sp = self.stream.unwrap_or(StreamPlan {
            updates: 0,
            error_at: None,
            reads: None,
        });
        let items: Vec<Result<(), ProviderError>> = (0..sp.updates)
            .map(|i| match sp.error_at == Some(i) {
                true => Err(ProviderError::msg(STREAM_ITEM_FAILURE)),
                false => Ok(()),
            })
            .collect();
        Ok(items.into_iter())
    }
}

/// A progress sink that keeps every event.
#[derive(Debug, Default)]
pub struct RecordingSink(Mutex<Vec<CompactionEvent>>);

impl RecordingSink {
    /// The events reported so far, taken.
    pub fn take(&self) -> Vec<CompactionEvent> {
        self.0
            .lock()
            .map(|mut es| es.drain(..).collect())
            .unwrap_or_default()
    }

    /// How many events are held.
    pub fn len(&self) -> usize {
        self.0.lock().map_or(0, |es| es.len())
    }

    /// Whether no event is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl ProgressSink for RecordingSink {
    fn report(&self, event: CompactionEvent) {
        if let Ok(mut events) = self.0.lock() {
            events.push(event);
        }
    }
}

type Plan = Arc<Mutex<Option<(CallPlan, CancellationToken)>>>;

/// The node's classifier: the library's content-hash classifier, failing where the current
/// call's plan says (SPEC CLS-3).
struct PlanClassifier {
    plan: Plan,
    inner: ContentHashClassifier,
}

impl Classifier for PlanClassifier {
    fn entry_id(&mut self, messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        let failure = self
            .plan
            .lock()
            .ok()
            .and_then(|p| p.as_ref().and_then(|(plan, _)| plan.classifier_fails));
        FailingClassifier {
            inner: &mut self.inner,
            failure,
        }
        .entry_id(messages, index)
    }
    fn override_kind(&mut self, messages: &[Message], index: usize) -> Option<EntryKind> {
        self.inner.override_kind(messages, index)
    }
}

/// How a dispatched call ended: `Some(forwarded)` committed, `None` abandoned, with the dispatch
/// result's diagnostics; or the node's error.
type Dispatch = Result<(Option<Vec<Digest>>, Diagnostics), NodeError>;

/// The client of a world: it counts the events `sink` holds when it is called.
fn client(sink: &Arc<RecordingSink>) -> ScriptedClient {
    ScriptedClient {
        sink: Arc::clone(sink),
        ..ScriptedClient::default()
    }
}

/// The library reporter of the seam's fields, reporting into `sink`.
fn reporter(sink: &Arc<RecordingSink>, fields: Option<&ReporterFields>) -> Option<Reporter> {
    fields.map(|r| {
        Reporter::new(
            Arc::clone(sink) as Arc<dyn ProgressSink>,
            reporter_identity(r),
        )
    })
}

/// The library's node on one [`RunScope`], with a run table for the views.
pub struct Node {
    node: Box<CompactionNode<ScriptedClient, BoxedUpstream<'static>>>,
    scope: RunScope,
    began: Vec<Option<Run>>,
    runs: Vec<Run>,
    sink: Arc<RecordingSink>,
    plan: Plan,
    /// The other call holding the gate ([`NodeWorld::hold_gate`]).
    holder: Option<CallSlot>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node").finish_non_exhaustive()
    }
}

/// The library's reporter identity of the seam's fields.
pub fn reporter_identity(r: &ReporterFields) -> ReporterIdentity {
    ReporterIdentity {
        workflow_id: ReporterId::new(&r.workflow_id),
        agent_id: r.agent_id.as_ref().map(ReporterId::new),
        parent_agent_id: r.parent_agent_id.as_ref().map(ReporterId::new),
        depth: r.depth,
    }
}

/// The seam's record of one library event.
pub fn event_record(event: &CompactionEvent) -> EventRecord {
    let e = event.envelope();
    let (kind, started) = match event {
        CompactionEvent::Started(s) => (
            AttemptEvent::Started,
            Some(StartedFields {
                measurement_unit: s.measurement_unit,
                hard_limit: s.hard_limit,
                trigger_threshold: s.trigger_threshold,
            }),
        ),
        CompactionEvent::Completed(_) => (AttemptEvent::Completed, None),
        CompactionEvent::Terminated(_) => (AttemptEvent::Terminated, None),
        CompactionEvent::Composed(_) => (AttemptEvent::Composed, None),
    };
    EventRecord {
        kind,
        id: e.assembly_id.to_string(),
        sequence: e.sequence_number,
        identity: ReporterFields {
            workflow_id: e.workflow_id.as_str().to_owned(),
            agent_id: e.agent_id.as_ref().map(|a| a.as_str().to_owned()),
            parent_agent_id: e.parent_agent_id.as_ref().map(|a| a.as_str().to_owned()),
            depth: e.depth,
        },
        started,
        diagnostics: event.diagnostics().map(|d| (**d).clone()),
    }
}

/// The typed error of a node error (SPEC ERR-1).
pub fn node_error(e: &NodeError) -> TypedError {
    match e {
        NodeError::Assembly(a) => TypedError::from(a),
        other => TypedError::new(other.kind(), other.to_string()),
    }
}

impl Node {
    /// `select(enabled, options, client, reporter)` of the library (SPEC NODE-1): `None` is
    /// `Disabled`.
    pub fn select(
        enabled: bool,
        options: Option<(Policy, BoxedUpstream<'static>)>,
        reporter: Option<&ReporterFields>,
    ) -> Result<Option<Node>, TypedError> {
        let sink = Arc::new(RecordingSink::default());
        let options = options.map(|(policy, reducer)| NodeOptions { policy, reducer });
        match select(
            enabled,
            options,
            client(&sink),
            self::reporter(&sink, reporter),
        ) {
            Err(e) => Err(TypedError::new(e.kind(), e.to_string())),
            Ok(NodeSelection::Disabled(_)) => Ok(None),
            Ok(NodeSelection::Installed(node)) => Ok(Some(Node::around(*node, sink))),
        }
    }

    /// A node selected with `options`, then configured through `with_trust` (SPEC TRU-1).
    pub fn guarded(
        options: (Policy, BoxedUpstream<'static>),
        reporter: Option<&ReporterFields>,
        binding: Option<TrustBinding>,
        accessor: Option<Arc<dyn BindingAccessor>>,
        session_id: Option<&str>,
    ) -> Result<Node, PartialTrustConfiguration> {
        let sink = Arc::new(RecordingSink::default());
        let (policy, reducer) = options;
        let options = NodeOptions { policy, reducer };
        let selection = select(
            true,
            Some(options),
            client(&sink),
            self::reporter(&sink, reporter),
        );
        let Ok(NodeSelection::Installed(node)) = selection else {
            unreachable!("switch and options together always install a node (SPEC NODE-1)")
        };
        let node = node.with_trust(binding, accessor, session_id)?;
        Ok(Node::around(node, sink))
    }

    /// The world around an installed node: its integration reads the current call's plan.
    fn around(
        node: CompactionNode<ScriptedClient, BoxedUpstream<'static>>,
        sink: Arc<RecordingSink>,
    ) -> Node {
        let plan: Plan = Arc::default();
        let for_integration = Arc::clone(&plan);
        let classifier = PlanClassifier {
            plan: Arc::clone(&plan),
            inner: ContentHashClassifier::new(),
        };
        let node = node
            .with_classifier(Box::new(classifier))
            .with_snapshot_integration(move |baseline: Vec<Entry>| {
                let guard = for_integration.lock().ok()?;
                let (plan, token) = guard.as_ref()?;
                plan.provider(baseline, token)
                    .map(|p| p as Box<dyn SnapshotProvider>)
            });
        let node = Box::new(node);
        Node {
            node,
            scope: RunScope::new(),
            began: Vec::new(),
            runs: Vec::new(),
            sink,
            plan,
            holder: None,
        }
    }

    /// A streaming call read as `sp` says: the updates read (`None`: no stream was returned),
    /// and `Ok(Some(forwarded))` when read to its end (committed), `Ok(None)` when dropped
    /// early, or the error; with the stream's diagnostics.
    fn read_stream(
        &mut self,
        plan: &CallPlan,
        sp: StreamPlan,
        token: &CancellationToken,
    ) -> (Option<usize>, Dispatch) {
        let mut stream = match self
            .node
            .call_streaming(&mut self.scope, &plan.messages, token)
        {
            Ok(s) => s,
            Err(e) => return (None, Err(e)),
        };
        let forwarded = stream.forwarded().to_vec();
        let diagnostics = (**stream.diagnostics()).clone();
        let mut read = 0;
        for ask in 0.. {
            if sp.reads == Some(ask) {
                // Dropping the unfinished stream releases (SPEC NODE-2).
                return (Some(read), Ok((None, diagnostics)));
            }
            match stream.next() {
                Some(Ok(())) => read += 1,
                Some(Err(e)) => return (Some(read), Err(e)),
                None => break,
            }
        }
        (Some(read), Ok((Some(forwarded), diagnostics)))
    }
}

impl NodeWorld for Node {
    fn call(&mut self, plan: &CallPlan) -> CallRecord {
        let token = plan.token();
        if let Ok(mut p) = self.plan.lock() {
            *p = Some((plan.clone(), token.clone()));
        }
        let client = self.node.client_mut();
        client.fails = plan.provider_fails.clone();
        client.sent = None;
        client.events_at_send = None;
        client.stream = plan.stream;
        let mut streamed = None;
        // While another call holds the gate this call waits; nothing but its cancellation ends
        // the wait, delivered from a second thread (the answer is the same if it arrives before
        // the call reaches the gate).
        let canceller = self.holder.as_ref().map(|slot| {
            let (run, token) = (slot.run().clone(), token.clone());
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                run.cancel_and_wake(&token);
            })
        });
        let result: Dispatch = match plan.stream {
            None => self
                .node
                .call(&mut self.scope, &plan.messages, &token)
                .map(|d| (Some(d.forwarded), (*d.diagnostics).clone())),
            Some(sp) => {
                let (read, result) = self.read_stream(plan, sp, &token);
                streamed = read;
                result
            }
        };
        if let Some(c) = canceller {
            let _ = c.join();
        }
        let client = self.node.client_mut();
        let sent = client.sent.take();
        let events_before_dispatch = client.events_at_send.take();
        let mut diagnostics = None;
        let end = match result {
            Ok((Some(forwarded), d)) => {
                diagnostics = Some(d);
                CallEnd::Sent {
                    messages: sent.unwrap_or_default(),
                    forwarded,
                }
            }
            Ok((None, d)) => {
                diagnostics = Some(d);
                CallEnd::Abandoned {
                    messages: sent.unwrap_or_default(),
                }
            }
            Err(e) => CallEnd::Failed {
                error: node_error(&e),
                termination: match &e {
                    NodeError::Terminated(t) => Some(Termination {
                        outcome: t.outcome,
                        final_estimated_size: t.final_estimated_size,
                        hard_limit: t.hard_limit,
                    }),
                    _ => None,
                },
                dispatched: match e {
                    NodeError::Terminated(_) => None,
                    _ => sent,
                },
            },
        };
        CallRecord {
            end,
            events: self.sink.take().iter().map(event_record).collect(),
            streamed,
            events_before_dispatch,
            diagnostics,
        }
    }

    fn begin_run(&mut self) {
        let run = Run::new();
        self.runs.push(run.clone());
        let previous = self.scope.replace(Some(run));
        self.began.push(previous);
    }

    fn end_run(&mut self) {
        if let Some(previous) = self.began.pop() {
            self.scope.replace(previous);
        }
    }

    fn hold_gate(&mut self) {
        if self.holder.is_some() {
            return;
        }
        if let Some(run) = self.scope.current() {
            self.holder = run.enter(&CancellationToken::new()).ok();
        }
    }

    fn leave_gate(&mut self) {
        if let Some(slot) = self.holder.take() {
            let _ = slot.release();
        }
    }

    fn reserve(&mut self, d: Digest, lease: LeaseId) -> Result<bool, LeaseError> {
        self.scope.try_reserve(d, lease)
    }

    fn release(&mut self, lease: LeaseId) -> Result<(), LeaseError> {
        self.scope.release(lease)
    }

    fn view(&self) -> Option<RunView> {
        let run = self.scope.current()?;
        let (delivered, reserved) = run.state();
        Some(RunView {
            run: self
                .runs
                .iter()
                .position(|r| r.same_run(run))
                .unwrap_or(usize::MAX),
            delivered,
            reserved,
            gate_occupied: run.gate_occupied(),
        })
    }

    fn peek_revision(&self, d: Digest) -> Revision {
        self.scope.current().map_or(0, |r| r.revision(d))
    }
    fn companion(
        &self,
        options: (Policy, BoxedUpstream<'static>),
        reporter: Option<&ReporterFields>,
    ) -> Box<dyn NodeWorld> {
        // SPEC EVT-3: the companion's reporter numbers its events from this one's source, into
        // its own sink (each call's events are its own); its own scope is another flow.
        let sink = Arc::new(RecordingSink::default());
        let shared = self.node.reporter().map(Reporter::sequence);
        let reporter = self::reporter(&sink, reporter).map(|r| match shared {
            Some(s) => r.with_sequence(s),
            None => r,
        });
        let (policy, reducer) = options;
        let selection = select(
            true,
            Some(NodeOptions { policy, reducer }),
            client(&sink),
            reporter,
        );
        let Ok(NodeSelection::Installed(node)) = selection else {
            unreachable!("switch and options together always install a node (SPEC NODE-1)")
        };
        Box::new(Node::around(*node, sink))
    }
    fn switch_reporter(&mut self, fields: &ReporterFields) {
        let next = self
            .node
            .reporter()
            .map(|r| r.sibling(reporter_identity(fields)));
        if next.is_some() {
            self.node.set_reporter(next);
        }
    }
}
