//! The per-provider-call compaction node (SPEC NODE-1 .. NODE-6, EVT-1 .. EVT-6;
//! C# S51-S54, S70-S72; ADR-0007 "Decision" and "Consequences" on
//! observability).
//!
//! A [`CompactionNode`] sits innermost around the real provider ([`ChatClient`]). At every call
//! it assembles bounded context with the engine, takes and settles a non-retransmission lease,
//! and reports privacy-safe progress events that share one [`AssemblyId`] per attempt.
//!
//! ```text
//! call(scope, messages, cancel)
//!   scope.ensure_run()                      S51 (1)   SPEC LSE-6
//!   run.enter(cancel) -> CallSlot{lease}    S51 (2)   SPEC LSE-7          (no events on error)
//!   assemble:                               S52
//!     1 cancel? revalidate  3 adapt  4 integration(baseline) -> provider  (no events on error)
//!     5 FilteringProvider(lease) + Bridge(upstream reducer) + engine Assembler
//!     6 AssemblyId; Started
//!     7 assemble  8 cancel?  9 diagnostics                    (errors: Started only)
//!    10 termination -> Terminated, Err(CompactionTerminated)
//!    11 Completed   12 revalidate   13 bounded messages + forwarded digests   14 Composed
//!   client.send(bounded)                    S51 (4)
//!   ok  -> slot.complete(forwarded)         S51 (5)   SPEC LSE-3
//!   err -> slot.release()                             SPEC LSE-4 (every failure path)
//!   leave gate (same critical section), then the scope  S51 (6)
//! ```
//!
//! Design points:
//! * **I/O-free and injected.** The node reads no clock, no randomness and no globals by itself
//!   beyond the default id source: the provider, classifier, snapshot integration, id source,
//!   sequence source, clock and sink are all small traits ([`ChatClient`],
//!   `model::classifier::Classifier`, [`SnapshotIntegration`], [`IdSource`], [`SequenceSource`],
//!   [`Clock`], [`ProgressSink`]).
//! * **Optional reporting without an optional parameter.** [`select`] takes
//!   `reporter: Option<Reporter>` as a required argument; `None` emits nothing and changes
//!   nothing else (SPEC EVT-1).
//! * **Fail-closed opt-in.** [`select`] requires the enabled switch and the options together
//!   (SPEC NODE-1); with neither, no node exists.
//! * **Privacy by type.** Events and diagnostics have no field that could hold content; the only
//!   strings are the host's reporter identifiers (SPEC EVT-6).
//! * **Streaming.** [`CompactionNode::call_streaming`] returns a [`NodeStream`] that holds the
//!   gate, the lease and the run scope; reading it to its end commits, an error item releases,
//!   and dropping it early releases (the unfinished `CallSlot`'s drop), as S51 requires.
//! * **Trace seam.** [`CompactionNode::with_trace_observer`] hands one [`CallTrace`] per call
//!   (streaming calls included, when their stream settles) to a [`TraceObserver`] (plain
//!   values; the oracle writes them as `docs/TRACE.md` traces). No observer, no recording and
//!   no other change.
//! * **Trust revalidation.** A node built by `crate::compose::compose` (or given
//!   [`CompactionNode::with_trust`]) revalidates its trust binding at S52 steps 1 and 12 (SPEC
//!   TRU-3); a failure is [`NodeError::Trust`], naming only the status. The guard's
//!   configuration and revalidation are in [`trust`], here because they run per provider call.
//!
//! The node depends on the engine and the leases only; composition (`crate::compose`) builds
//! nodes and re-exports [`trust`], never the other way round.

mod call;
mod events;
mod ids;
mod trace;
pub mod trust;

pub use call::{
    select, ChatClient, CompactionNode, CompactionTerminated, ConfigError, Dispatched, NodeError,
    NodeOptions, NodeSelection, NodeStream, ProviderError, SnapshotIntegration, StaticIntegration,
    StreamingChatClient,
};
pub use events::{
    CompactionEvent, CompletedEvent, ComposedEvent, EventEnvelope, EventKind, ProgressSink,
    Reporter, ReporterId, ReporterIdentity, StartedEvent, TerminatedEvent,
};
pub use ids::{
    AssemblyId, Clock, CounterSequence, IdSource, RandomIdSource, SequenceSource, SystemClock,
};
pub use trace::{CallTrace, CancelPoint, Phase, ReducerCall, Settlement, StreamEnd, TraceObserver};
