//! The `node` scenario's two worlds: the library's [`CompactionNode`] (`hybrid_compaction::node`)
//! and a sequential node written from the specification's parts, step by step as SPEC NODE-2 and
//! NODE-3 list them: the specification's run scopes, gate and lease filter (through
//! [`SpecLeases`]), its classifier (CLS-2), bridge (BRG-1), assembler (ASM-7) and diagnostics
//! (DIA-5).
//!
//! Both return plain [`CallRecord`]s; the driver renders them, writing `AssemblyId`s as `A1`,
//! `A2`, ... in order of first appearance, so the library's random ids and the model's counter
//! ids compare equal exactly when they pair up the same way (SPEC EVT-5).

use std::sync::{Arc, Mutex};

use hybrid_compaction::lease::{Run, RunScope};
use hybrid_compaction::node::{
    select, ChatClient, CompactionEvent, CompactionNode, NodeError, NodeOptions, NodeSelection,
    ProgressSink, ProviderError, Reporter, ReporterId, ReporterIdentity, StreamingChatClient,
};
use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::diagnostics::Diagnostics;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::estimator::MeasurementUnit;
use hybrid_compaction_model::lease::{LeaseError, LeaseId, Revision};
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::snapshot::{
    ScriptedProvider, Snapshot, SnapshotError, SnapshotProvider, StaticProvider,
};

use super::case::ReporterInput;
use super::leases::{Entered, LeaseWorld, RunView, SpecLeases};
use crate::wire::convert::{self, answer};
use crate::wire::exec::WireUpstream;
use crate::wire::output::ErrorOutput;

/// One provider call of a scenario, converted.
#[derive(Debug, Clone)]
pub struct CallPlan {
    /// The call's messages.
    pub messages: Vec<Message>,
    /// The integration's schedule (`None` entries: previous step's, the first the baseline).
    pub schedule: Option<Vec<(i64, Option<Vec<Entry>>)>>,
    /// The integration returns no provider.
    pub no_provider: bool,
    /// The token is cancelled before the call.
    pub cancel_before: bool,
    /// The token is cancelled during this capture (0-based).
    pub cancel_capture: Option<usize>,
    /// The real provider fails with this message.
    pub provider_fails: Option<String>,
    /// A streaming call: updates, error item position, reads before dropping.
    pub stream: Option<StreamPlan>,
}

/// A streaming call's script (SPEC NODE-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamPlan {
    /// Updates the provider streams.
    pub updates: usize,
    /// The position of the error item, if any.
    pub error_at: Option<usize>,
    /// Asks for the next item before the caller drops the stream (`None`: to the end).
    pub reads: Option<usize>,
}

/// The text of a streamed error item.
pub const STREAM_ITEM_FAILURE: &str = "stream item failed";

/// How a streamed response ended for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StreamEnd {
    /// Read to its end: commit.
    End,
    /// An error item: release.
    ErrorItem,
    /// Dropped early: release.
    Dropped,
}

impl CallPlan {
    /// The integration's provider for `baseline` (SPEC NODE-3 step 4), cancelling `token` at
    /// the planned capture.
    fn provider(
        &self,
        baseline: Vec<Entry>,
        token: &CancellationToken,
    ) -> Option<Box<dyn SnapshotProvider + Send>> {
        if self.no_provider {
            return None;
        }
        let Some(schedule) = &self.schedule else {
            return Some(Box::new(StaticProvider::new(baseline)));
        };
        let mut previous = baseline;
        let mut steps = Vec::with_capacity(schedule.len());
        for (version, entries) in schedule {
            if let Some(es) = entries {
                previous = es.clone();
            }
            steps.push((*version, previous.clone()));
        }
        let mut provider = ScriptedProvider::new(steps);
        if let Some(k) = self.cancel_capture {
            provider = provider.cancel_at_capture(k, token.clone());
        }
        Some(Box::new(provider))
    }
}

/// One event, before rendering.
#[derive(Debug, Clone)]
pub struct EventRecord {
    /// `Started`, `Completed`, `Terminated`, `Composed`.
    pub kind: &'static str,
    /// The attempt's id, as the implementation renders it (opaque).
    pub id: String,
    /// The sequence number.
    pub sequence: u64,
    /// Workflow id, agent id, parent agent id, depth.
    pub identity: (String, Option<String>, Option<String>, u32),
    /// `Started`: unit, hard limit, threshold.
    pub started: Option<(MeasurementUnit, i32, i32)>,
    /// The diagnostics of the other events.
    pub diagnostics: Option<Diagnostics>,
}

/// How a call ended.
#[derive(Debug, Clone)]
pub enum CallEnd {
    /// Dispatched; the provider succeeded and the lease was committed with these digests.
    Sent(Vec<Message>, Vec<Digest>),
    /// A streaming call dropped before its end: the lease was released, no error.
    Abandoned(Vec<Message>),
    /// A typed error; `Some` termination content for a termination (SPEC NODE-4); the messages
    /// if they were dispatched before the provider failed.
    Failed(
        ErrorOutput,
        Option<(String, i32, i32)>,
        Option<Vec<Message>>,
    ),
}

/// A failed assembly: the typed error, and the termination's content for a termination.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The typed error.
    pub error: ErrorOutput,
    /// Outcome, final estimated size, hard limit (SPEC NODE-4).
    pub terminated: Option<(String, i32, i32)>,
}

/// One call's answer, before rendering.
#[derive(Debug, Clone)]
pub struct CallRecord {
    /// How it ended.
    pub end: CallEnd,
    /// A streaming call: the updates read.
    pub streamed: Option<usize>,
    /// The events it emitted.
    pub events: Vec<EventRecord>,
}

/// The operations of a `node` scenario on one node and one logical flow.
pub trait NodeWorld {
    /// One provider call (SPEC NODE-2).
    fn call(&mut self, plan: &CallPlan) -> CallRecord;
    /// `BeginRun` on the flow (SPEC LSE-6).
    fn begin_run(&mut self);
    /// Ends the latest run begun.
    fn end_run(&mut self);
    /// Another lease reserves `d` in the active run (SPEC LSE-2).
    fn reserve(&mut self, d: Digest, lease: LeaseId) -> Result<bool, LeaseError>;
    /// That lease is released (SPEC LSE-4).
    fn release(&mut self, lease: LeaseId) -> Result<(), LeaseError>;
    /// The flow's run.
    fn view(&self) -> Option<RunView>;
    /// A digest's counter in the flow's run (0 without one).
    fn peek_revision(&self, d: Digest) -> Revision;
}

fn identity_of(r: &ReporterInput) -> (String, Option<String>, Option<String>, u32) {
    (
        r.workflow_id.clone(),
        r.agent_id.clone(),
        r.parent_agent_id.clone(),
        r.depth,
    )
}

fn forwarded_of(entries: &[Entry]) -> Vec<Digest> {
    entries
        .iter()
        .filter(|e| e.kind() == EntryKind::RecoverableContextSegment)
        .filter_map(|e| e.recoverable_segment().map(|s| s.reference.digest()))
        .collect()
}

fn cancelled() -> ErrorOutput {
    answer(
        ErrorKind::Cancelled,
        None,
        None,
        "provider call was cancelled",
    )
}

fn no_provider() -> ErrorOutput {
    answer(
        ErrorKind::InvalidOperation,
        None,
        None,
        "snapshot integration returned no snapshot provider",
    )
}

fn lease_error(e: &LeaseError) -> ErrorOutput {
    answer(e.kind(), None, None, e.to_string())
}

fn provider_error(message: &str) -> ErrorOutput {
    answer(
        ErrorKind::InvalidOperation,
        None,
        None,
        format!("provider call failed: {message}"),
    )
}

// ---------------------------------------------------------------------------------------------
// The specification's node

/// A capture of the call's inner provider through the specification's lease filter.
struct Filtered<'a> {
    world: &'a mut SpecLeases,
    call: usize,
    inner: Box<dyn SnapshotProvider + Send>,
}

impl SnapshotProvider for Filtered<'_> {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        let inner = self.inner.capture()?;
        self.world.capture(self.call, inner)
    }
}

/// The sequential node built from the specification (SPEC NODE-2, NODE-3).
#[derive(Debug)]
pub struct SpecNode {
    policy: Policy,
    reducer: WireUpstream,
    reporter: Option<ReporterInput>,
    world: SpecLeases,
    sequence: u64,
    attempts: u64,
}

impl SpecNode {
    /// A node with these options and reporter.
    pub fn new(policy: Policy, reducer: WireUpstream, reporter: Option<ReporterInput>) -> SpecNode {
        SpecNode {
            policy,
            reducer,
            reporter,
            world: SpecLeases::default(),
            sequence: 0,
            attempts: 0,
        }
    }

    fn emit(
        &mut self,
        events: &mut Vec<EventRecord>,
        kind: &'static str,
        id: u64,
        diagnostics: Option<&Diagnostics>,
    ) {
        let Some(r) = &self.reporter else { return };
        self.sequence += 1;
        let started = (kind == "Started").then(|| {
            (
                self.policy.estimator().unit(),
                self.policy.hard_limit(),
                self.policy.trigger_threshold(),
            )
        });
        events.push(EventRecord {
            kind,
            id: format!("model-{id}"),
            sequence: self.sequence,
            identity: identity_of(r),
            started,
            diagnostics: diagnostics.cloned(),
        });
    }

    /// NODE-3 steps 1-14 for admitted call `call`: the composed messages and digests, or the
    /// error (with the termination's content for a termination).
    fn assemble(
        &mut self,
        call: usize,
        plan: &CallPlan,
        token: &CancellationToken,
        events: &mut Vec<EventRecord>,
    ) -> Result<(Vec<Message>, Vec<Digest>), Box<Failure>> {
        use hybrid_compaction_spec::{assemble, bridge, classify, diagnostics};
        let fail = |error: ErrorOutput| {
            Box::new(Failure {
                error,
                terminated: None,
            })
        };
        // 1. cancellation.
        if token.is_cancelled() {
            return Err(fail(cancelled()));
        }
        // 3. adapt with the content-hash classifier (SPEC CLS-2).
        let baseline = classify::adapt(&plan.messages, &mut classify::ContentHashClassifier)
            .map_err(|e| fail(convert::adapt_error(e.kind(), &e.to_string())))?;
        // 4. the integration's provider.
        let inner = plan
            .provider(baseline, token)
            .ok_or_else(|| fail(no_provider()))?;
        // 6. a fresh id, Started.
        self.attempts += 1;
        let id = self.attempts;
        self.emit(events, "Started", id, None);
        // 5. filter and bridge; 7. assemble.
        let mut filtered = Filtered {
            world: &mut self.world,
            call,
            inner,
        };
        let mut bridge = bridge::Bridge::new(&mut self.reducer);
        let result = assemble::assemble(&self.policy, &mut filtered, &mut bridge, token)
            .map_err(|e| fail(convert::assembly_error(&e)))?;
        // 8. cancellation.
        if token.is_cancelled() {
            return Err(fail(cancelled()));
        }
        // 9. diagnostics.
        let d = diagnostics::build(&result, &self.policy)
            .map_err(|e| fail(convert::assembly_error(&e)))?;
        // 10. termination.
        if !result.outcome.is_success() {
            self.emit(events, "Terminated", id, Some(&d));
            let (outcome, size, limit) = (
                result.outcome.name().to_owned(),
                result.final_estimated_size,
                result.hard_limit,
            );
            let message = format!(
                "context compaction terminated ({outcome}): final estimated size {size} exceeds what can be sent within hard limit {limit}"
            );
            return Err(Box::new(Failure {
                error: answer(ErrorKind::InvalidOperation, None, None, message),
                terminated: Some((outcome, size, limit)),
            }));
        }
        // 11. Completed; 13. messages and digests; 14. Composed.
        self.emit(events, "Completed", id, Some(&d));
        let finals = result.final_entries.unwrap_or_default();
        let forwarded = forwarded_of(&finals);
        let messages = finals.iter().map(|e| e.message().clone()).collect();
        self.emit(events, "Composed", id, Some(&d));
        Ok((messages, forwarded))
    }
}

/// A stream read per SPEC NODE-2: the updates read and how it ended.
fn spec_stream(sp: StreamPlan) -> (usize, StreamEnd) {
    let mut read = 0;
    for ask in 0.. {
        if sp.reads == Some(ask) {
            return (read, StreamEnd::Dropped);
        }
        if ask == sp.updates {
            return (read, StreamEnd::End);
        }
        if sp.error_at == Some(ask) {
            return (read, StreamEnd::ErrorItem);
        }
        read += 1;
    }
    (read, StreamEnd::End)
}

impl SpecNode {
    /// Commits the lease with the forwarded digests and leaves the gate (SPEC NODE-5).
    fn commit(&mut self, call: usize, messages: Vec<Message>, forwarded: Vec<Digest>) -> CallEnd {
        match self.world.finish(call, Some(&forwarded)).0 {
            Ok(()) => CallEnd::Sent(messages, forwarded),
            Err(e) => CallEnd::Failed(lease_error(&e), None, Some(messages)),
        }
    }

    /// Settles a streamed call: the end commits, an error item or an early drop releases.
    fn settle_stream(
        &mut self,
        call: usize,
        how: StreamEnd,
        messages: Vec<Message>,
        forwarded: Vec<Digest>,
    ) -> CallEnd {
        match how {
            StreamEnd::End => self.commit(call, messages, forwarded),
            StreamEnd::ErrorItem => {
                let _ = self.world.finish(call, None);
                CallEnd::Failed(provider_error(STREAM_ITEM_FAILURE), None, Some(messages))
            }
            StreamEnd::Dropped => {
                let _ = self.world.finish(call, None);
                CallEnd::Abandoned(messages)
            }
        }
    }
}

impl NodeWorld for SpecNode {
    fn call(&mut self, plan: &CallPlan) -> CallRecord {
        let mut events = Vec::new();
        let token = if plan.cancel_before {
            CancellationToken::cancelled()
        } else {
            CancellationToken::new()
        };
        let mut streamed = None;
        // (1) ensure a run scope; (2) the gate and a fresh lease.
        self.world.ensure(0);
        let call = self.world.next_call();
        let end = match self.world.enter(0, call, token.is_cancelled()) {
            Err(e) => CallEnd::Failed(lease_error(&e), None, None),
            Ok(Entered::Waiting) => {
                CallEnd::Failed(lease_error(&LeaseError::Cancelled), None, None)
            }
            Ok(Entered::Admitted(_)) => match self.assemble(call, plan, &token, &mut events) {
                Err(f) => {
                    let _ = self.world.finish(call, None);
                    CallEnd::Failed(f.error, f.terminated, None)
                }
                Ok((messages, forwarded)) => match (&plan.provider_fails, plan.stream) {
                    // (4) dispatch; (5) release on failure, commit on success.
                    (Some(m), _) => {
                        let _ = self.world.finish(call, None);
                        CallEnd::Failed(provider_error(m), None, Some(messages))
                    }
                    (None, Some(sp)) => {
                        let (read, how) = spec_stream(sp);
                        streamed = Some(read);
                        self.settle_stream(call, how, messages, forwarded)
                    }
                    (None, None) => self.commit(call, messages, forwarded),
                },
            },
        };
        // (6) leave the scope.
        self.world.end(0);
        CallRecord {
            end,
            events,
            streamed,
        }
    }

    fn begin_run(&mut self) {
        self.world.begin(0, &[]);
    }

    fn end_run(&mut self) {
        self.world.end(0);
    }

    fn reserve(&mut self, d: Digest, lease: LeaseId) -> Result<bool, LeaseError> {
        self.world.reserve(0, d, lease)
    }

    fn release(&mut self, lease: LeaseId) -> Result<(), LeaseError> {
        self.world.release(0, lease)
    }

    fn view(&self) -> Option<RunView> {
        self.world.view(0)
    }

    fn peek_revision(&self, d: Digest) -> Revision {
        self.world.peek_revision(0, d)
    }
}

// ---------------------------------------------------------------------------------------------
// The library's node

/// The real provider of the library's node: records what it was sent, fails as planned.
#[derive(Debug, Default)]
pub struct WireClient {
    fails: Option<String>,
    sent: Option<Vec<Message>>,
    stream: Option<StreamPlan>,
}

impl ChatClient for WireClient {
    type Reply = ();
    fn send(&mut self, messages: &[Message], _: &CancellationToken) -> Result<(), ProviderError> {
        self.sent = Some(messages.to_vec());
        match &self.fails {
            Some(m) => Err(ProviderError(m.clone())),
            None => Ok(()),
        }
    }
}

impl StreamingChatClient for WireClient {
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

#[derive(Default)]
struct Sink(Mutex<Vec<CompactionEvent>>);

impl ProgressSink for Sink {
    fn report(&self, event: CompactionEvent) {
        if let Ok(mut events) = self.0.lock() {
            events.push(event);
        }
    }
}

type Plan = Arc<Mutex<Option<(CallPlan, CancellationToken)>>>;

/// The library's node on one [`RunScope`], with a run table for the views.
pub struct LibraryNode {
    node: Box<CompactionNode<WireClient, WireUpstream>>,
    scope: RunScope,
    began: Vec<Option<Run>>,
    runs: Vec<Run>,
    sink: Arc<Sink>,
    plan: Plan,
}

impl std::fmt::Debug for LibraryNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LibraryNode").finish_non_exhaustive()
    }
}

/// What the library's `select` decided (SPEC NODE-1).
pub enum LibrarySelection {
    /// A node.
    Installed(LibraryNode),
    /// No node: calls go to the provider unchanged.
    Disabled,
}

impl LibraryNode {
    /// `select(enabled, options, client, reporter)` of the library.
    pub fn select(
        enabled: bool,
        options: Option<(Policy, WireUpstream)>,
        reporter: Option<&ReporterInput>,
    ) -> Result<LibrarySelection, ErrorOutput> {
        let sink = Arc::new(Sink::default());
        let reporter = reporter.map(|r| {
            Reporter::new(
                Arc::clone(&sink) as Arc<dyn ProgressSink>,
                ReporterIdentity {
                    workflow_id: ReporterId::new(&r.workflow_id),
                    agent_id: r.agent_id.as_ref().map(ReporterId::new),
                    parent_agent_id: r.parent_agent_id.as_ref().map(ReporterId::new),
                    depth: r.depth,
                },
            )
        });
        let options = options.map(|(policy, reducer)| NodeOptions { policy, reducer });
        match select(enabled, options, WireClient::default(), reporter) {
            Err(e) => Err(answer(e.kind(), None, None, e.to_string())),
            Ok(NodeSelection::Disabled(_)) => Ok(LibrarySelection::Disabled),
            Ok(NodeSelection::Installed(node)) => {
                let plan: Plan = Arc::default();
                let for_integration = Arc::clone(&plan);
                let node = Box::new(node.with_snapshot_integration(move |baseline: Vec<Entry>| {
                    let guard = for_integration.lock().ok()?;
                    let (plan, token) = guard.as_ref()?;
                    plan.provider(baseline, token)
                        .map(|p| p as Box<dyn SnapshotProvider>)
                }));
                Ok(LibrarySelection::Installed(LibraryNode {
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

    fn record(event: &CompactionEvent) -> EventRecord {
        let e = event.envelope();
        let (kind, started) = match event {
            CompactionEvent::Started(s) => (
                "Started",
                Some((s.measurement_unit, s.hard_limit, s.trigger_threshold)),
            ),
            CompactionEvent::Completed(_) => ("Completed", None),
            CompactionEvent::Terminated(_) => ("Terminated", None),
            CompactionEvent::Composed(_) => ("Composed", None),
        };
        EventRecord {
            kind,
            id: e.assembly_id.to_string(),
            sequence: e.sequence_number,
            identity: (
                e.workflow_id.as_str().to_owned(),
                e.agent_id.as_ref().map(|a| a.as_str().to_owned()),
                e.parent_agent_id.as_ref().map(|a| a.as_str().to_owned()),
                e.depth,
            ),
            started,
            diagnostics: event.diagnostics().map(|d| (**d).clone()),
        }
    }
}

fn node_error(e: &NodeError) -> ErrorOutput {
    match e {
        NodeError::Assembly(a) => convert::assembly_error(a),
        other => answer(other.kind(), None, None, other.to_string()),
    }
}

impl LibraryNode {
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

impl NodeWorld for LibraryNode {
    fn call(&mut self, plan: &CallPlan) -> CallRecord {
        let token = if plan.cancel_before {
            CancellationToken::cancelled()
        } else {
            CancellationToken::new()
        };
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
            Ok(Some(forwarded)) => CallEnd::Sent(sent.unwrap_or_default(), forwarded),
            Ok(None) => CallEnd::Abandoned(sent.unwrap_or_default()),
            Err(NodeError::Terminated(t)) => CallEnd::Failed(
                node_error(&NodeError::Terminated(t)),
                Some((
                    t.outcome.name().to_owned(),
                    t.final_estimated_size,
                    t.hard_limit,
                )),
                None,
            ),
            Err(e) => CallEnd::Failed(node_error(&e), None, sent),
        };
        let events = self
            .sink
            .0
            .lock()
            .map(|mut es| es.drain(..).collect::<Vec<_>>())
            .unwrap_or_default();
        CallRecord {
            end,
            events: events.iter().map(LibraryNode::record).collect(),
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
