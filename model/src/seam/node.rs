//! The node world of the seam: one node on one logical flow, driven through provider calls and
//! run steps (SPEC NODE-1 .. NODE-6, EVT-1 .. EVT-6).
//!
//! A driver converts each call into a [`CallPlan`] (messages, the snapshot integration's
//! schedule, cancellation, how the real provider answers) and gets back a [`CallRecord`]: how the
//! call ended and the events it emitted, as plain values. The world is synchronous: another call
//! of the run holding the gate is a step of its own ([`NodeWorld::hold_gate`]), and a call
//! parked in its reducer while a companion node runs is driven by a handshake, never by time
//! ([`super::park`]). `AssemblyId`s
//! stay opaque strings (the library's are random, the specification's are counters): a driver
//! compares how they pair up, not their text (SPEC EVT-5).

use crate::artifact::Digest;
use crate::assembly::Outcome;
use crate::cancel::CancellationToken;
use crate::classifier::{Classifier, ClassifierError};
use crate::diagnostics::Diagnostics;
use crate::entry::{Entry, EntryKind};
use crate::error::{ErrorKind, TypedError};
use crate::estimator::MeasurementUnit;
use crate::lease::{LeaseError, LeaseId, Revision};
use crate::message::Message;
use crate::snapshot::{ScriptedProvider, SnapshotProvider, StaticProvider};
use crate::trust::AttemptEvent;

use super::leases::RunView;
use super::BoxedUpstream;
use crate::policy::Policy;

/// One provider call of a scenario.
#[derive(Debug, Clone)]
pub struct CallPlan {
    /// The call's messages.
    pub messages: Vec<Message>,
    /// The integration's schedule (`None` entries: previous step's, the first the baseline);
    /// `None`: the static integration over the baseline (SPEC SNAP-3).
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
    /// The classifier fails when asked for this message's id (SPEC CLS-3).
    pub classifier_fails: Option<ClassifierFailure>,
}

/// A classifier failure a plan schedules (SPEC CLS-3): at which message, with which kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassifierFailure {
    /// The 0-based index of the message whose id the classifier is asked for.
    pub message: usize,
    /// The kind it raises.
    pub kind: ErrorKind,
}

/// A classifier that fails as `failure` says and otherwise answers as `inner` (SPEC CLS-3): the
/// host classifier of a plan, around each implementation's content-hash classifier.
#[derive(Debug, Clone)]
pub struct FailingClassifier<C> {
    /// The classifier asked otherwise.
    pub inner: C,
    /// The scheduled failure, if any.
    pub failure: Option<ClassifierFailure>,
}

impl<C: Classifier> Classifier for FailingClassifier<C> {
    fn entry_id(&mut self, messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        match self.failure {
            Some(f) if f.message == index => Err(ClassifierError { kind: f.kind }),
            _ => self.inner.entry_id(messages, index),
        }
    }
    fn override_kind(&mut self, messages: &[Message], index: usize) -> Option<EntryKind> {
        self.inner.override_kind(messages, index)
    }
}

impl CallPlan {
    /// A plain call of `messages`: static integration, no cancellation, the provider succeeds.
    pub fn new(messages: Vec<Message>) -> CallPlan {
        CallPlan {
            messages,
            schedule: None,
            no_provider: false,
            cancel_before: false,
            cancel_capture: None,
            provider_fails: None,
            stream: None,
            classifier_fails: None,
        }
    }

    /// The call's token: already cancelled when the plan says so.
    pub fn token(&self) -> CancellationToken {
        if self.cancel_before {
            CancellationToken::cancelled()
        } else {
            CancellationToken::new()
        }
    }

    /// The integration's provider for `baseline` (SPEC NODE-3 step 4), cancelling `token` at
    /// the planned capture; `None` when the plan says the integration has none.
    pub fn provider(
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

/// How a streamed response ended for the caller (SPEC NODE-2, NODE-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// Read to its end: commit.
    End,
    /// An error item: release.
    ErrorItem,
    /// Dropped early: release.
    Dropped,
}

impl StreamPlan {
    /// The stream read as planned, one ask at a time: the updates read and how it ended.
    pub fn read(self) -> (usize, StreamEnd) {
        let mut read = 0;
        for ask in 0..=self.updates {
            if self.reads == Some(ask) {
                return (read, StreamEnd::Dropped);
            }
            if ask == self.updates {
                break;
            }
            if self.error_at == Some(ask) {
                return (read, StreamEnd::ErrorItem);
            }
            read += 1;
        }
        (read, StreamEnd::End)
    }
}

/// The text of a streamed error item.
pub const STREAM_ITEM_FAILURE: &str = "stream item failed";

/// A reporter's identity (SPEC EVT-3); its sequence source counts from 1 and it has no clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReporterFields {
    /// The workflow id.
    pub workflow_id: String,
    /// The agent id.
    pub agent_id: Option<String>,
    /// The parent agent id.
    pub parent_agent_id: Option<String>,
    /// The depth.
    pub depth: u32,
}

/// What a `Started` event carries besides its envelope (SPEC EVT-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartedFields {
    /// The policy's unit.
    pub measurement_unit: MeasurementUnit,
    /// The hard limit.
    pub hard_limit: i32,
    /// The trigger threshold.
    pub trigger_threshold: i32,
}

/// One event, as plain values.
#[derive(Debug, Clone)]
pub struct EventRecord {
    /// Which event.
    pub kind: AttemptEvent,
    /// The attempt's `AssemblyId`, as the implementation renders it (opaque).
    pub id: String,
    /// The sequence number.
    pub sequence: u64,
    /// The reporter's identity.
    pub identity: ReporterFields,
    /// `Started` only.
    pub started: Option<StartedFields>,
    /// The diagnostics of the other events.
    pub diagnostics: Option<Diagnostics>,
}

/// A termination's content (SPEC NODE-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Termination {
    /// `Irreducible` or `ConcurrentMutationLimit`.
    pub outcome: Outcome,
    /// The final estimated size.
    pub final_estimated_size: i32,
    /// The hard limit.
    pub hard_limit: i32,
}

/// How a call ended.
#[derive(Debug, Clone)]
pub enum CallEnd {
    /// Dispatched; the provider succeeded and the lease was committed with these digests.
    Sent {
        /// The messages the provider received.
        messages: Vec<Message>,
        /// The forwarded digests.
        forwarded: Vec<Digest>,
    },
    /// A streaming call dropped before its end: the lease was released, no error.
    Abandoned {
        /// The messages the provider received.
        messages: Vec<Message>,
    },
    /// A typed error.
    Failed {
        /// The error.
        error: TypedError,
        /// A termination's content (SPEC NODE-4).
        termination: Option<Termination>,
        /// The messages, if they were dispatched before the provider failed.
        dispatched: Option<Vec<Message>>,
    },
}

/// One call's answer.
#[derive(Debug, Clone)]
pub struct CallRecord {
    /// How it ended.
    pub end: CallEnd,
    /// A streaming call: the updates read.
    pub streamed: Option<usize>,
    /// The events it emitted.
    pub events: Vec<EventRecord>,
    /// How many of those events had been emitted when the real provider was called (SPEC
    /// NODE-3 step 14: `Composed` precedes dispatch); `None`: the provider was not called.
    pub events_before_dispatch: Option<usize>,
    /// The dispatch result's diagnostics (SPEC EVT-4), with or without a reporter (EVT-1):
    /// `Some` exactly when the call ended [`CallEnd::Sent`] or [`CallEnd::Abandoned`].
    pub diagnostics: Option<Diagnostics>,
}

/// The operations of a node scenario on one node and one logical flow. A world is `Send`: a
/// call can be driven on a second thread while it is parked in its reducer ([`super::park`]).
pub trait NodeWorld: Send {
    /// One provider call (SPEC NODE-2).
    fn call(&mut self, plan: &CallPlan) -> CallRecord;
    /// `BeginRun` on the flow (SPEC LSE-6).
    fn begin_run(&mut self);
    /// Another call of the active run enters the gate and holds it until
    /// [`NodeWorld::leave_gate`] (SPEC NODE-2, LSE-7). A call made meanwhile waits at the gate;
    /// this world runs one call at a time, so nothing but its cancellation can end the wait, and
    /// it is cancelled while waiting. Without an active run (or with the gate held), nothing.
    fn hold_gate(&mut self);
    /// The holder of [`NodeWorld::hold_gate`] releases its lease and leaves the gate (LSE-10).
    fn leave_gate(&mut self);
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
    /// Later calls report through a reporter of `fields` that shares the current reporter's
    /// sequence source (SPEC EVT-3: several reporters, one source). Without a reporter there is
    /// no source to share, and nothing changes (EVT-1).
    fn switch_reporter(&mut self, fields: &ReporterFields);
    /// Another node of `options` on another logical flow (its own runs), reporting through a
    /// reporter of `reporter` that shares this world's sequence source (SPEC EVT-3) and draws
    /// `AssemblyId`s distinct from this world's (EVT-5). Without a reporter here the companion's
    /// has a source of its own.
    fn companion(
        &self,
        options: (Policy, BoxedUpstream<'static>),
        reporter: Option<&ReporterFields>,
    ) -> Box<dyn NodeWorld>;
}

/// The digests of the recovered bodies among `entries`, in order (SPEC NODE-5).
pub fn forwarded_digests(entries: &[Entry]) -> Vec<Digest> {
    entries
        .iter()
        .filter(|e| e.kind() == EntryKind::RecoverableContextSegment)
        .filter_map(|e| e.recoverable_segment().map(|s| s.reference.digest()))
        .collect()
}
