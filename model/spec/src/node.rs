//! The per-provider-call node, step by step as SPEC NODE-2 and NODE-3 list them (C# S52): the
//! specification's [`NodeWorld`].
//!
//! A call ensures a run scope and enters the run's gate with a fresh lease ([`crate::flows`],
//! LSE-6, LSE-7), adapts the messages with the content-hash classifier (CLS-2), asks the
//! integration for a provider and filters it through the lease (LSE-8), emits `Started` with a
//! fresh `AssemblyId`, assembles through the bridge (BRG-1, ASM-7), builds diagnostics (DIA-5),
//! raises a termination (NODE-4) or emits `Completed` and `Composed`, dispatches, and settles
//! the lease: commit with the forwarded digests on success, release on any failure (NODE-5).
//! A node given a trust guard ([`Node::with_trust`], TRU-1) revalidates it at step 1, after the
//! cancellation check, and at step 12, after `Completed` (TRU-2, TRU-3); a failure is an error
//! like any other, so the lease is released.
//! `AssemblyId`s are counters (`model-1`, ...), shared with the node's companions: only how they
//! pair up is observable (EVT-5).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::diagnostics::Diagnostics;
use hybrid_compaction_model::error::{ErrorKind, TypedError};
use hybrid_compaction_model::lease::{LeaseError, LeaseId, Revision};
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::seam::node::{forwarded_digests, STREAM_ITEM_FAILURE};
use hybrid_compaction_model::seam::{
    BoxedUpstream, CallEnd, CallPlan, CallRecord, Entered, EventRecord, FailingClassifier,
    LeaseWorld, NodeWorld, ReporterFields, RunView, StartedFields, StreamEnd, Termination,
};
use hybrid_compaction_model::snapshot::{Snapshot, SnapshotError, SnapshotProvider};
use hybrid_compaction_model::trust::{AttemptEvent, TrustGuard};

use crate::flows::Flows;
use crate::{assemble, bridge, classify, diagnostics, trust};

/// A capture of the call's inner provider through the lease filter (SPEC LSE-8).
struct Filtered<'a> {
    flows: &'a mut Flows,
    call: usize,
    inner: Box<dyn SnapshotProvider + Send>,
}

impl SnapshotProvider for Filtered<'_> {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        let inner = self.inner.capture()?;
        self.flows.capture(self.call, inner)
    }
}

/// A failed assembly: the typed error, and the termination's content for a termination.
struct Failure {
    error: TypedError,
    termination: Option<Termination>,
}

impl From<TypedError> for Failure {
    fn from(error: TypedError) -> Failure {
        Failure {
            error,
            termination: None,
        }
    }
}

/// The node (SPEC NODE-2, NODE-3) on one flow of its own lease world.
pub struct Node {
    policy: Policy,
    reducer: BoxedUpstream<'static>,
    reporter: Option<ReporterFields>,
    guard: Option<TrustGuard>,
    flows: Flows,
    /// The other call holding the gate ([`NodeWorld::hold_gate`]).
    holder: Option<usize>,
    /// The reporter's sequence source: the last number handed out (SPEC EVT-3), shared with
    /// the node's companions when it reports.
    sequence: Arc<AtomicU64>,
    /// The attempt counter behind `AssemblyId`s, always shared with the node's companions, so
    /// ids stay distinct across attempts (SPEC EVT-5).
    attempts: Arc<AtomicU64>,
}

/// The next number of `counter` (first number 1).
fn next(counter: &AtomicU64) -> u64 {
    counter.fetch_add(1, Ordering::SeqCst) + 1
}

/// What a successful assembly hands to dispatch (NODE-3 step 13): the bounded messages, the
/// forwarded digests and the diagnostics value.
type Composed = (Vec<Message>, Vec<Digest>, Diagnostics);

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("policy", &self.policy)
            .field("reporter", &self.reporter)
            .finish_non_exhaustive()
    }
}

fn cancelled() -> TypedError {
    TypedError::new(ErrorKind::Cancelled, "provider call was cancelled")
}

fn provider_failed(message: &str) -> TypedError {
    TypedError::new(
        ErrorKind::InvalidOperation,
        format!("provider call failed: {message}"),
    )
}

impl Node {
    /// A node with these options and reporter (selected per SPEC NODE-1).
    pub fn new(
        policy: Policy,
        reducer: BoxedUpstream<'static>,
        reporter: Option<ReporterFields>,
    ) -> Node {
        Node {
            policy,
            reducer,
            reporter,
            guard: None,
            flows: Flows::default(),
            holder: None,
            sequence: Arc::default(),
            attempts: Arc::default(),
        }
    }

    /// The node guarded by `guard` (SPEC TRU-1: a complete configuration; `None`, none).
    pub fn with_trust(mut self, guard: Option<TrustGuard>) -> Node {
        self.guard = guard;
        self
    }

    /// Revalidates the guard, if any (SPEC TRU-2): the error names only the status.
    fn revalidate(&self) -> Result<(), TypedError> {
        match &self.guard {
            Some(g) => trust::revalidate(g).map_err(|e| TypedError::new(e.kind(), e.to_string())),
            None => Ok(()),
        }
    }

    /// SPEC EVT-1 .. EVT-3: an event only with a reporter, numbered by its sequence source.
    fn emit(
        &mut self,
        events: &mut Vec<EventRecord>,
        kind: AttemptEvent,
        id: u64,
        diagnostics: Option<&Diagnostics>,
    ) {
        let Some(r) = &self.reporter else { return };
        let sequence = next(&self.sequence);
        let started = (kind == AttemptEvent::Started).then(|| StartedFields {
            measurement_unit: self.policy.estimator().unit(),
            hard_limit: self.policy.hard_limit(),
            trigger_threshold: self.policy.trigger_threshold(),
        });
        events.push(EventRecord {
            kind,
            id: format!("model-{id}"),
            sequence,
            identity: r.clone(),
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
    ) -> Result<Composed, Failure> {
        // 1. cancellation, then the first revalidation (SPEC TRU-3).
        if token.is_cancelled() {
            return Err(cancelled().into());
        }
        self.revalidate()?;
        // 3. adapt with the content-hash classifier (SPEC CLS-2), which fails where the plan
        // says (SPEC CLS-3): the failure propagates before any event.
        let mut classifier = FailingClassifier {
            inner: classify::ContentHashClassifier,
            failure: plan.classifier_fails,
        };
        let baseline =
            classify::adapt(&plan.messages, &mut classifier).map_err(|e| TypedError::from(&e))?;
        // 4. the integration's provider.
        let inner = plan.provider(baseline, token).ok_or_else(|| {
            TypedError::new(
                ErrorKind::InvalidOperation,
                "snapshot integration returned no snapshot provider",
            )
        })?;
        // 6. a fresh id, Started.
        let id = next(&self.attempts);
        self.emit(events, AttemptEvent::Started, id, None);
        // 5. filter and bridge; 7. assemble.
        let mut filtered = Filtered {
            flows: &mut self.flows,
            call,
            inner,
        };
        let mut bridge = bridge::Bridge::new(&mut self.reducer);
        let result = assemble::assemble(&self.policy, &mut filtered, &mut bridge, token)
            .map_err(|e| TypedError::from(&e))?;
        // 8. cancellation.
        if token.is_cancelled() {
            return Err(cancelled().into());
        }
        // 9. diagnostics.
        let d = diagnostics::build(&result, &self.policy).map_err(|e| TypedError::from(&e))?;
        // 10. termination (SPEC NODE-4).
        if !result.outcome.is_success() {
            self.emit(events, AttemptEvent::Terminated, id, Some(&d));
            let termination = Termination {
                outcome: result.outcome,
                final_estimated_size: result.final_estimated_size,
                hard_limit: result.hard_limit,
            };
            let message = format!(
                "context compaction terminated ({}): final estimated size {} exceeds what can be sent within hard limit {}",
                termination.outcome, termination.final_estimated_size, termination.hard_limit
            );
            return Err(Failure {
                error: TypedError::new(ErrorKind::InvalidOperation, message),
                termination: Some(termination),
            });
        }
        // 11. Completed; 12. the second revalidation (SPEC TRU-3); 13. messages and digests;
        // 14. Composed.
        self.emit(events, AttemptEvent::Completed, id, Some(&d));
        self.revalidate()?;
        let finals = result.final_entries.unwrap_or_default();
        let forwarded = forwarded_digests(&finals);
        let messages = finals.iter().map(|e| e.message().clone()).collect();
        self.emit(events, AttemptEvent::Composed, id, Some(&d));
        Ok((messages, forwarded, d))
    }

    /// Commits the lease with the forwarded digests and leaves the gate (SPEC NODE-5).
    fn commit(&mut self, call: usize, messages: Vec<Message>, forwarded: Vec<Digest>) -> CallEnd {
        match self.flows.finish(call, Some(&forwarded)).0 {
            Ok(()) => CallEnd::Sent {
                messages,
                forwarded,
            },
            Err(e) => CallEnd::Failed {
                error: TypedError::from(&e),
                termination: None,
                dispatched: Some(messages),
            },
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
        if how == StreamEnd::End {
            return self.commit(call, messages, forwarded);
        }
        let _ = self.flows.finish(call, None);
        match how {
            StreamEnd::ErrorItem => CallEnd::Failed {
                error: provider_failed(STREAM_ITEM_FAILURE),
                termination: None,
                dispatched: Some(messages),
            },
            _ => CallEnd::Abandoned { messages },
        }
    }

    /// NODE-2 (4)-(5) after a successful assembly: dispatch, then settle the lease.
    fn dispatch(
        &mut self,
        call: usize,
        plan: &CallPlan,
        messages: Vec<Message>,
        forwarded: Vec<Digest>,
        streamed: &mut Option<usize>,
    ) -> CallEnd {
        match (&plan.provider_fails, plan.stream) {
            (Some(m), _) => {
                let _ = self.flows.finish(call, None);
                CallEnd::Failed {
                    error: provider_failed(m),
                    termination: None,
                    dispatched: Some(messages),
                }
            }
            (None, Some(sp)) => {
                let (read, how) = sp.read();
                *streamed = Some(read);
                self.settle_stream(call, how, messages, forwarded)
            }
            (None, None) => self.commit(call, messages, forwarded),
        }
    }
}

impl NodeWorld for Node {
    fn call(&mut self, plan: &CallPlan) -> CallRecord {
        let mut events = Vec::new();
        let token = plan.token();
        let mut streamed = None;
        let mut events_before_dispatch = None;
        let mut built = None;
        // (1) ensure a run scope; (2) the gate and a fresh lease.
        self.flows.ensure(0);
        let call = self.flows.next_call();
        let failed = |error: TypedError| CallEnd::Failed {
            error,
            termination: None,
            dispatched: None,
        };
        let end = match self.flows.enter(0, call, token.is_cancelled()) {
            Err(e) => failed(TypedError::from(&e)),
            // One call at a time: a waiting call can only be cancelled while it waits (LSE-7);
            // it leaves no trace.
            Ok(Entered::Waiting) => {
                let answer = self.flows.cancel_waiter(call).err();
                failed(TypedError::from(&answer.unwrap_or(LeaseError::Cancelled)))
            }
            Ok(Entered::Admitted(_)) => match self.assemble(call, plan, &token, &mut events) {
                Err(f) => {
                    let _ = self.flows.finish(call, None);
                    CallEnd::Failed {
                        error: f.error,
                        termination: f.termination,
                        dispatched: None,
                    }
                }
                Ok((messages, forwarded, d)) => {
                    // (4) the provider is called now, after Composed (NODE-3 step 14).
                    events_before_dispatch = Some(events.len());
                    built = Some(d);
                    self.dispatch(call, plan, messages, forwarded, &mut streamed)
                }
            },
        };
        // (6) leave the scope.
        self.flows.end(0);
        // The dispatch result exists when the provider answered and the lease settled (EVT-4).
        let diagnostics =
            built.filter(|_| matches!(end, CallEnd::Sent { .. } | CallEnd::Abandoned { .. }));
        CallRecord {
            end,
            events,
            streamed,
            events_before_dispatch,
            diagnostics,
        }
    }

    fn begin_run(&mut self) {
        self.flows.begin(0, &[]);
    }

    fn end_run(&mut self) {
        self.flows.end(0);
    }

    fn hold_gate(&mut self) {
        if self.holder.is_some() || self.flows.view(0).is_none() {
            return;
        }
        let call = self.flows.next_call();
        if let Ok(Entered::Admitted(_)) = self.flows.enter(0, call, false) {
            self.holder = Some(call);
        }
    }

    fn leave_gate(&mut self) {
        if let Some(call) = self.holder.take() {
            let _ = self.flows.finish(call, None);
        }
    }

    fn reserve(&mut self, d: Digest, lease: LeaseId) -> Result<bool, LeaseError> {
        self.flows.reserve(0, d, lease)
    }

    fn release(&mut self, lease: LeaseId) -> Result<(), LeaseError> {
        self.flows.release(0, lease)
    }

    fn view(&self) -> Option<RunView> {
        self.flows.view(0)
    }

    fn peek_revision(&self, d: Digest) -> Revision {
        self.flows.peek_revision(0, d)
    }
    fn companion(
        &self,
        options: (Policy, BoxedUpstream<'static>),
        reporter: Option<&ReporterFields>,
    ) -> Box<dyn NodeWorld> {
        // SPEC EVT-3: one sequence source when this node reports (else the companion's own);
        // EVT-5: one attempt counter, so ids stay distinct; the companion's own flows.
        let (policy, reducer) = options;
        let mut node = Node::new(policy, reducer, reporter.cloned());
        if self.reporter.is_some() {
            node.sequence = Arc::clone(&self.sequence);
        }
        node.attempts = Arc::clone(&self.attempts);
        Box::new(node)
    }
    fn switch_reporter(&mut self, fields: &ReporterFields) {
        // SPEC EVT-3: the node's one counter is the shared source; only the identity changes.
        if self.reporter.is_some() {
            self.reporter = Some(fields.clone());
        }
    }
}
