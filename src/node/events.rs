//! The privacy-safe progress events of one assembly attempt (SPEC EVT-1 .. EVT-6;
//! C# S53, S70-S72).
//!
//! Four events exist: [`StartedEvent`], [`CompletedEvent`], [`TerminatedEvent`] and
//! [`ComposedEvent`]. Each carries an [`EventEnvelope`] (timestamp, reporter identifiers, depth,
//! sequence number, [`AssemblyId`]) and a categorical payload. The only strings anywhere in an
//! event are the reporter's own identifiers ([`ReporterId`]), which the host supplies; no message
//! text, body, entry id, tool argument or result, or error text can reach an event, because no
//! field has a type that could hold one (SPEC EVT-6).
//!
//! Events go to a [`ProgressSink`] owned by a [`Reporter`]; the node takes an
//! `Option<Reporter>` as a required constructor argument (no default, no global): `None` means no
//! event is ever produced and the node behaves identically otherwise (SPEC EVT-1).

use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use hybrid_compaction_model::diagnostics::Diagnostics;
use hybrid_compaction_model::estimator::MeasurementUnit;

use super::ids::{AssemblyId, Clock, CounterSequence, SequenceSource};

/// An opaque identifier of the reporter (workflow or agent id), supplied by the host. The only
/// string an event carries (SPEC EVT-6).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ReporterId(Arc<str>);

impl ReporterId {
    /// Wraps a host identifier.
    pub fn new(id: impl AsRef<str>) -> ReporterId {
        ReporterId(Arc::from(id.as_ref()))
    }

    /// The identifier.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ReporterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for ReporterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Who reports (SPEC EVT-3): the reporter's workflow id, optional agent id, optional parent agent
/// id (only if the reporter exposes one) and nesting depth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReporterIdentity {
    /// The workflow id.
    pub workflow_id: ReporterId,
    /// The agent id, if the reporter has one.
    pub agent_id: Option<ReporterId>,
    /// The parent agent id, if the reporter exposes one.
    pub parent_agent_id: Option<ReporterId>,
    /// The nesting depth of the reporting agent.
    pub depth: u32,
}

impl ReporterIdentity {
    /// A top-level (depth 0) workflow reporter with no agent ids.
    pub fn workflow(workflow_id: impl AsRef<str>) -> ReporterIdentity {
        ReporterIdentity {
            workflow_id: ReporterId::new(workflow_id),
            agent_id: None,
            parent_agent_id: None,
            depth: 0,
        }
    }
}

/// The common envelope of every event (SPEC EVT-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventEnvelope {
    /// UTC time at emission, from the reporter's [`Clock`]; `None` when the reporter has no clock
    /// (the node reads no ambient time by itself).
    pub timestamp: Option<SystemTime>,
    /// The reporter's workflow id.
    pub workflow_id: ReporterId,
    /// The reporter's agent id.
    pub agent_id: Option<ReporterId>,
    /// The reporter's parent agent id.
    pub parent_agent_id: Option<ReporterId>,
    /// The reporter's depth.
    pub depth: u32,
    /// Taken from the reporter's sequence source at emission (SPEC EVT-3).
    pub sequence_number: u64,
    /// The attempt's id, identical on all its events (SPEC EVT-5).
    pub assembly_id: AssemblyId,
}

/// Emitted once per attempt that reaches the assembler, before it runs (SPEC EVT-2, EVT-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartedEvent {
    /// The envelope.
    pub envelope: EventEnvelope,
    /// The policy estimator's unit.
    pub measurement_unit: MeasurementUnit,
    /// The policy's hard limit.
    pub hard_limit: i32,
    /// The policy's trigger threshold.
    pub trigger_threshold: i32,
}

/// Emitted on a success outcome (SPEC EVT-2, EVT-4); shares its diagnostics value with the
/// attempt's [`ComposedEvent`] and the dispatch result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletedEvent {
    /// The envelope.
    pub envelope: EventEnvelope,
    /// The success diagnostics (SPEC DIA-3).
    pub diagnostics: Arc<Diagnostics>,
}

/// Emitted on a termination outcome (SPEC EVT-2, EVT-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminatedEvent {
    /// The envelope.
    pub envelope: EventEnvelope,
    /// The termination diagnostics (SPEC DIA-4).
    pub diagnostics: Arc<Diagnostics>,
}

/// Emitted on success after [`CompletedEvent`], when the bounded messages are ready for dispatch
/// (SPEC EVT-2, EVT-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComposedEvent {
    /// The envelope.
    pub envelope: EventEnvelope,
    /// The identical diagnostics value the completed event carries.
    pub diagnostics: Arc<Diagnostics>,
}

/// One progress event of the compaction node (SPEC EVT-2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompactionEvent {
    /// `HarnessContextCompactionStartedEvent`.
    Started(StartedEvent),
    /// `HarnessContextCompactionCompletedEvent`.
    Completed(CompletedEvent),
    /// `HarnessContextCompactionTerminatedEvent`.
    Terminated(TerminatedEvent),
    /// `HarnessContextComposedEvent`.
    Composed(ComposedEvent),
}

impl CompactionEvent {
    /// The envelope of any event.
    pub fn envelope(&self) -> &EventEnvelope {
        match self {
            CompactionEvent::Started(e) => &e.envelope,
            CompactionEvent::Completed(e) => &e.envelope,
            CompactionEvent::Terminated(e) => &e.envelope,
            CompactionEvent::Composed(e) => &e.envelope,
        }
    }

    /// The event's kind.
    pub fn kind(&self) -> EventKind {
        match self {
            CompactionEvent::Started(_) => EventKind::Started,
            CompactionEvent::Completed(_) => EventKind::Completed,
            CompactionEvent::Terminated(_) => EventKind::Terminated,
            CompactionEvent::Composed(_) => EventKind::Composed,
        }
    }

    /// The diagnostics carried by a completed, terminated or composed event.
    pub fn diagnostics(&self) -> Option<&Arc<Diagnostics>> {
        match self {
            CompactionEvent::Started(_) => None,
            CompactionEvent::Completed(e) => Some(&e.diagnostics),
            CompactionEvent::Terminated(e) => Some(&e.diagnostics),
            CompactionEvent::Composed(e) => Some(&e.diagnostics),
        }
    }
}

/// The four event kinds, in the order an attempt can emit them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// [`StartedEvent`].
    Started,
    /// [`CompletedEvent`].
    Completed,
    /// [`TerminatedEvent`].
    Terminated,
    /// [`ComposedEvent`].
    Composed,
}

/// Receives the node's events (SPEC EVT-1). Called synchronously, in emission order, on the
/// calling thread; a sink must not block for long.
pub trait ProgressSink: Send + Sync {
    /// Receives one event.
    fn report(&self, event: CompactionEvent);
}

/// The progress accessor of one node (SPEC EVT-1, EVT-3): where events go, who reports them, the
/// sequence source and the optional clock.
#[derive(Clone)]
pub struct Reporter {
    sink: Arc<dyn ProgressSink>,
    identity: ReporterIdentity,
    sequence: Arc<dyn SequenceSource>,
    clock: Option<Arc<dyn Clock>>,
}

impl fmt::Debug for Reporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reporter")
            .field("identity", &self.identity)
            .field("clock", &self.clock.is_some())
            .finish_non_exhaustive()
    }
}

impl Reporter {
    /// A reporter with its own counter sequence (first number 1) and no clock.
    pub fn new(sink: Arc<dyn ProgressSink>, identity: ReporterIdentity) -> Reporter {
        Reporter {
            sink,
            identity,
            sequence: Arc::new(CounterSequence::new()),
            clock: None,
        }
    }

    /// Uses `sequence` (e.g. shared by every reporter of a workflow).
    pub fn with_sequence(mut self, sequence: Arc<dyn SequenceSource>) -> Reporter {
        self.sequence = sequence;
        self
    }

    /// Stamps events with `clock`.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Reporter {
        self.clock = Some(clock);
        self
    }

    /// The reporter's identity.
    pub fn identity(&self) -> &ReporterIdentity {
        &self.identity
    }

    /// The sequence source (SPEC EVT-3), to give another reporter with [`Reporter::with_sequence`].
    pub fn sequence(&self) -> Arc<dyn SequenceSource> {
        Arc::clone(&self.sequence)
    }

    /// A reporter for `identity` sharing this one's sink, sequence source and clock (SPEC
    /// EVT-3: several reporters numbered by one source), e.g. another agent's of one workflow.
    pub fn sibling(&self, identity: ReporterIdentity) -> Reporter {
        Reporter {
            identity,
            ..self.clone()
        }
    }

    /// A fresh envelope: the timestamp and sequence number are taken now (SPEC EVT-3).
    pub(super) fn envelope(&self, assembly_id: AssemblyId) -> EventEnvelope {
        EventEnvelope {
            timestamp: self.clock.as_ref().map(|c| c.now()),
            workflow_id: self.identity.workflow_id.clone(),
            agent_id: self.identity.agent_id.clone(),
            parent_agent_id: self.identity.parent_agent_id.clone(),
            depth: self.identity.depth,
            sequence_number: self.sequence.next_sequence(),
            assembly_id,
        }
    }

    pub(super) fn report(&self, event: CompactionEvent) {
        self.sink.report(event);
    }
}
