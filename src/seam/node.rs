//! The library's node world ([`NodeWorld`]): a real [`CompactionNode`] on one [`RunScope`],
//! with a scripted provider client and a recording progress sink.
//!
//! The plan of each call reaches the node's snapshot integration through a shared slot, so the
//! node builds its provider exactly as a host integration would (SPEC NODE-3 step 4).

use std::sync::{Arc, Mutex};

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::error::TypedError;
use hybrid_compaction_model::lease::{LeaseError, LeaseId, Revision};
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::seam::node::STREAM_ITEM_FAILURE;
use hybrid_compaction_model::seam::{
    BoxedUpstream, CallEnd, CallPlan, CallRecord, EventRecord, NodeWorld, ReporterFields, RunView,
    StartedFields, StreamPlan, Termination,
};
use hybrid_compaction_model::snapshot::SnapshotProvider;
use hybrid_compaction_model::trust::AttemptEvent;

use crate::lease::{Run, RunScope};
use crate::node::{
    select, ChatClient, CompactionEvent, CompactionNode, NodeError, NodeOptions, NodeSelection,
    ProgressSink, ProviderError, Reporter, ReporterId, ReporterIdentity, StreamingChatClient,
};

/// The real provider of the node: records what it was sent, fails or streams as planned.
#[derive(Debug, Default)]
pub struct ScriptedClient {
    fails: Option<String>,
    sent: Option<Vec<Message>>,
    stream: Option<StreamPlan>,
}

impl ChatClient for ScriptedClient {
    type Reply = ();
    fn send(&mut self, messages: &[Message], _: &CancellationToken) -> Result<(), ProviderError> {
        self.sent = Some(messages.to_vec());
        match &self.fails {
            Some(m) => Err(ProviderError(m.clone())),
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
        self.sent = Some(messages.to_vec());
        if let Some(m) = &self.fails {
            return Err(ProviderError(m.clone()));
        }
        let sp = self.stream.unwrap_or(StreamPlan {
            updates: 0,
            error_at: None,
            reads: None,
        });
        let items: Vec<Result<(), ProviderError>> = (0..sp.updates)
            .map(|i| match sp.error_at == Some(i) {
                true => Err(ProviderError(STREAM_ITEM_FAILURE.to_owned())),
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
}

impl ProgressSink for RecordingSink {
    fn report(&self, event: CompactionEvent) {
        if let Ok(mut events) = self.0.lock() {
            events.push(event);
        }
    }
}

type Plan = Arc<Mutex<Option<(CallPlan, CancellationToken)>>>;

/// The library's node on one [`RunScope`], with a run table for the views.
pub struct Node {
    node: Box<CompactionNode<ScriptedClient, BoxedUpstream<'static>>>,
    scope: RunScope,
    began: Vec<Option<Run>>,
    runs: Vec<Run>,
    sink: Arc<RecordingSink>,
    plan: Plan,
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
        let reporter = reporter.map(|r| {
            Reporter::new(
                Arc::clone(&sink) as Arc<dyn ProgressSink>,
                reporter_identity(r),
            )
        });
        let options = options.map(|(policy, reducer)| NodeOptions { policy, reducer });
        match select(enabled, options, ScriptedClient::default(), reporter) {
            Err(e) => Err(TypedError::new(e.kind(), e.to_string())),
            Ok(NodeSelection::Disabled(_)) => Ok(None),
            Ok(NodeSelection::Installed(node)) => {
                let plan: Plan = Arc::default();
                let for_integration = Arc::clone(&plan);
                let node = Box::new(node.with_snapshot_integration(move |baseline: Vec<Entry>| {
                    let guard = for_integration.lock().ok()?;
                    let (plan, token) = guard.as_ref()?;
                    plan.provider(baseline, token)
                        .map(|p| p as Box<dyn SnapshotProvider>)
                }));
                Ok(Some(Node {
                    node,
                    scope: RunScope::new(),
                    began: Vec::new(),
                    runs: Vec::new(),
                    sink,
                    plan,
                }))
            }
        }
    }

    /// A streaming call read as `sp` says: the updates read (`None`: no stream was returned),
    /// and `Ok(Some(forwarded))` when read to its end (committed), `Ok(None)` when dropped
    /// early, or the error.
    fn read_stream(
        &mut self,
        plan: &CallPlan,
        sp: StreamPlan,
        token: &CancellationToken,
    ) -> (Option<usize>, Result<Option<Vec<Digest>>, NodeError>) {
        let mut stream = match self
            .node
            .call_streaming(&mut self.scope, &plan.messages, token)
        {
            Ok(s) => s,
            Err(e) => return (None, Err(e)),
        };
        let forwarded = stream.forwarded().to_vec();
        let mut read = 0;
        for ask in 0.. {
            if sp.reads == Some(ask) {
                // Dropping the unfinished stream releases (SPEC NODE-2).
                return (Some(read), Ok(None));
            }
            match stream.next() {
                Some(Ok(())) => read += 1,
                Some(Err(e)) => return (Some(read), Err(e)),
                None => break,
            }
        }
        (Some(read), Ok(Some(forwarded)))
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
        client.stream = plan.stream;
        let mut streamed = None;
        let result = match plan.stream {
            None => self
                .node
                .call(&mut self.scope, &plan.messages, &token)
                .map(|d| Some(d.forwarded)),
            Some(sp) => {
                let (read, result) = self.read_stream(plan, sp, &token);
                streamed = read;
                result
            }
        };
        let sent = self.node.client_mut().sent.take();
        let end = match result {
            Ok(Some(forwarded)) => CallEnd::Sent {
                messages: sent.unwrap_or_default(),
                forwarded,
            },
            Ok(None) => CallEnd::Abandoned {
                messages: sent.unwrap_or_default(),
            },
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
}
