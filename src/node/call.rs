//! The compaction node and its per-call protocol (SPEC NODE-1 .. NODE-6, EVT-2).

use std::error::Error;
use std::fmt;
use std::sync::Arc;

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::assembly::{AssemblyError, Outcome};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::classifier::Classifier;
use hybrid_compaction_model::composition::HybridProfile;
use hybrid_compaction_model::diagnostics::Diagnostics;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::lease::LeaseError;
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::reducers::UpstreamReducer;
use hybrid_compaction_model::snapshot::{SnapshotProvider, StaticProvider};
use hybrid_compaction_model::trust::{
    BindingAccessor, PartialTrustConfiguration, TrustBinding, TrustError, TrustGuard,
};

use super::events::{
    CompactionEvent, CompletedEvent, ComposedEvent, EventEnvelope, Reporter, StartedEvent,
    TerminatedEvent,
};
use super::ids::{AssemblyId, IdSource, RandomIdSource};
use super::trace::{Recorder, StreamEnd, TraceObserver};
use super::trust::{configure, revalidate};
use crate::engine::assemble::Assembler;
use crate::engine::bridge::Bridge;
use crate::engine::classify::{adapt, AdaptError, ContentHashClassifier};
use crate::engine::diagnostics;
use crate::lease::{CallSlot, RunScope, ScopeGuard};

/// What a call assembles from: the host's messages (adapted by the node's classifier) or the
/// entries the host adapted itself ([`CompactionNode::call_adapted`]).
enum Baseline<'a> {
    Messages(&'a [Message]),
    Entries(Vec<Entry>),
}

/// The real provider's own failure (SPEC NODE-2, NODE-5): the host's error, kept whole as this
/// error's [`source`](Error::source), or a plain message. [`NodeError::Provider`] is
/// transparent, so the node's error has the host's error as its source: a host gets its own
/// error back with `err.source()` and a downcast. Its text never reaches an event or
/// diagnostics (SPEC EVT-6).
///
/// Cloning shares the host's error (an [`Arc`]). Equality compares the rendered text (what the
/// SPEC observes of a provider failure, ERR-1), not the host's values, which need not be
/// comparable. The text is rendered after `provider call failed: `, as before, so a reporter
/// that prints the chain shows the host's text twice: the first line keeps the messages hosts
/// already see.
#[derive(Clone)]
pub struct ProviderError {
    cause: Cause,
}

/// What a [`ProviderError`] holds.
#[derive(Clone)]
enum Cause {
    /// A plain message ([`ProviderError::msg`]): there is no source.
    Message(Arc<str>),
    /// The host's own error ([`ProviderError::new`], [`ProviderError::from_boxed`]).
    Host(Arc<dyn Error + Send + Sync + 'static>),
}

impl ProviderError {
    /// The provider failed with the host's own `error`, kept as the [`source`](Error::source)
    /// (downcast it to `E` to get it back).
    pub fn new<E: Error + Send + Sync + 'static>(error: E) -> ProviderError {
        ProviderError {
            cause: Cause::Host(Arc::new(error)),
        }
    }

    /// The provider failed with an already boxed error (a `Box<dyn Error>` is not itself an
    /// [`Error`]), kept as the [`source`](Error::source) without boxing it again.
    pub fn from_boxed(error: Box<dyn Error + Send + Sync + 'static>) -> ProviderError {
        ProviderError {
            cause: Cause::Host(Arc::from(error)),
        }
    }

    /// The provider failed with a plain `message` and no error of its own
    /// ([`source`](Error::source) is `None`).
    pub fn msg(message: impl Into<String>) -> ProviderError {
        ProviderError {
            cause: Cause::Message(Arc::from(message.into())),
        }
    }

    /// The failure's own text: the host's error rendered, or the message.
    fn detail(&self) -> &dyn fmt::Display {
        match &self.cause {
            Cause::Message(m) => m,
            Cause::Host(e) => e,
        }
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "provider call failed: {}", self.detail())
    }
}

impl fmt::Debug for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cause {
            Cause::Message(m) => f.debug_tuple("ProviderError").field(m).finish(),
            Cause::Host(e) => f.debug_tuple("ProviderError").field(e).finish(),
        }
    }
}

impl Error for ProviderError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match &self.cause {
            Cause::Message(_) => None,
            Cause::Host(e) => Some(&**e),
        }
    }
}

/// By the rendered text (see the type's docs).
impl PartialEq for ProviderError {
    fn eq(&self, other: &ProviderError) -> bool {
        self.detail().to_string() == other.detail().to_string()
    }
}

impl Eq for ProviderError {}

/// The real chat provider the node wraps (SPEC NODE-2). Synchronous; the node hands it the
/// bounded messages of one call and the call's cancellation token.
pub trait ChatClient {
    /// What a successful call returns.
    type Reply;
    /// Sends `messages` to the provider. `Ok` means the provider accepted the whole request (the
    /// lease is then committed); `Err` releases the lease (SPEC NODE-5).
    fn send(
        &mut self,
        messages: &[Message],
        cancel: &CancellationToken,
    ) -> Result<Self::Reply, ProviderError>;

    /// Sends the messages of the bounded `entries`, in order: what the node dispatches (SPEC
    /// NODE-2 step 4). The default copies each entry's message and calls
    /// [`ChatClient::send`]; a client that reads the messages in place (or not at all) overrides
    /// it, so that a call costs no copy of the bounded context.
    fn send_entries(
        &mut self,
        entries: &[Entry],
        cancel: &CancellationToken,
    ) -> Result<Self::Reply, ProviderError> {
        let messages: Vec<Message> = entries.iter().map(|e| e.message().clone()).collect();
        self.send(&messages, cancel)
    }
}

impl<C: ChatClient + ?Sized> ChatClient for &mut C {
    type Reply = C::Reply;
    fn send(
        &mut self,
        messages: &[Message],
        cancel: &CancellationToken,
    ) -> Result<C::Reply, ProviderError> {
        (**self).send(messages, cancel)
    }
    fn send_entries(
        &mut self,
        entries: &[Entry],
        cancel: &CancellationToken,
    ) -> Result<C::Reply, ProviderError> {
        (**self).send_entries(entries, cancel)
    }
}

/// The host's snapshot integration (SPEC NODE-6; C# S11, S52 step 4): maps the adapted baseline
/// entries of one call to the snapshot provider assembly captures from. `None` means "no
/// provider", an `InvalidOperation` error raised before any event.
pub trait SnapshotIntegration {
    /// The snapshot provider for this call's `baseline`.
    fn provider(&mut self, baseline: Vec<Entry>) -> Option<Box<dyn SnapshotProvider>>;
}

impl<F> SnapshotIntegration for F
where
    F: FnMut(Vec<Entry>) -> Option<Box<dyn SnapshotProvider>>,
{
    fn provider(&mut self, baseline: Vec<Entry>) -> Option<Box<dyn SnapshotProvider>> {
        self(baseline)
    }
}

/// The default integration: a static provider over the baseline (SPEC SNAP-3; C# S85), so no
/// recovered body ever appears.
#[derive(Debug, Clone, Copy, Default)]
pub struct StaticIntegration;

impl SnapshotIntegration for StaticIntegration {
    fn provider(&mut self, baseline: Vec<Entry>) -> Option<Box<dyn SnapshotProvider>> {
        Some(Box::new(StaticProvider::new(baseline)))
    }
}

/// The options that make a node executable (SPEC NODE-1): the policy and the upstream reducer,
/// both required (no default reducer exists).
#[derive(Debug, Clone)]
pub struct NodeOptions<U> {
    /// The validated compaction policy (SPEC POL-1).
    pub policy: Policy,
    /// The upstream chat reducer, bridged to entries (SPEC BRG-1).
    pub reducer: U,
}

/// Why a node could not be selected (SPEC NODE-1). Both are argument errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The switch is on but no options were supplied.
    #[error("hybrid compaction is enabled but no compaction options were supplied")]
    EnabledWithoutOptions,
    /// Options were supplied but the switch is off.
    #[error("compaction options were supplied but hybrid compaction is not enabled")]
    OptionsWithoutEnabled,
}

impl ConfigError {
    /// The language-neutral category (SPEC ERR-1): an argument error.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidArgument
    }
}

/// The result of [`select`] (SPEC NODE-1).
pub enum NodeSelection<C, U> {
    /// Neither switch nor options: the client is returned unchanged, no node exists and no event
    /// is ever emitted (C# S54).
    Disabled(C),
    /// Switch and options: the client wrapped in a node.
    Installed(Box<CompactionNode<C, U>>),
}

impl<C, U> fmt::Debug for NodeSelection<C, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeSelection::Disabled(_) => f.write_str("Disabled"),
            NodeSelection::Installed(_) => f.write_str("Installed"),
        }
    }
}

/// Fail-closed opt-in (SPEC NODE-1; a simplified C# S84): `enabled` and `options` must agree.
/// Both present installs a node around `client` (with the default classifier, integration and
/// id source); neither returns the client unchanged; one without the other is a [`ConfigError`].
/// `reporter` is a required argument that may be `None` (SPEC EVT-1).
pub fn select<C, U: UpstreamReducer>(
    enabled: bool,
    options: Option<NodeOptions<U>>,
    client: C,
    reporter: Option<Reporter>,
) -> Result<NodeSelection<C, U>, ConfigError> {
    match (enabled, options) {
        (true, Some(options)) => Ok(NodeSelection::Installed(Box::new(CompactionNode {
            client,
            policy: options.policy,
            reducer: options.reducer,
            classifier: Box::new(ContentHashClassifier::new()),
            integration: Box::new(StaticIntegration),
            ids: Arc::new(RandomIdSource),
            reporter,
            assembler: Assembler::new(),
            observer: None,
            trust: None,
        }))),
        (true, None) => Err(ConfigError::EnabledWithoutOptions),
        (false, Some(_)) => Err(ConfigError::OptionsWithoutEnabled),
        (false, None) => Ok(NodeSelection::Disabled(client)),
    }
}

/// The typed termination error (SPEC NODE-4; C# S52 step 10): only the outcome, the final
/// estimated size and the hard limit, never the diagnostics or any content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("context compaction terminated ({outcome}): final estimated size {final_estimated_size} exceeds what can be sent within hard limit {hard_limit}")]
pub struct CompactionTerminated {
    /// The termination outcome (`Irreducible` or `ConcurrentMutationLimit`).
    pub outcome: Outcome,
    /// The result's final estimated size.
    pub final_estimated_size: i32,
    /// The hard limit.
    pub hard_limit: i32,
}

/// Why a node call failed (SPEC NODE-2 .. NODE-5). Every variant releases the call's lease.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NodeError {
    /// Entering the gate failed (cancelled while waiting, SPEC LSE-7) or committing the lease
    /// failed (revision overflow, SPEC LSE-5).
    #[error(transparent)]
    Lease(LeaseError),
    /// Cancellation observed by the node's own checks (C# S52 steps 1 and 8).
    #[error("provider call was cancelled")]
    Cancelled,
    /// Message adaptation failed (SPEC CLS-1); before `Started`.
    #[error(transparent)]
    Adapt(AdaptError),
    /// The snapshot integration returned no provider (an `InvalidOperation` error); before
    /// `Started`.
    #[error("snapshot integration returned no snapshot provider")]
    NoSnapshotProvider,
    /// Assembly or diagnostics failed (SPEC ASM-*, DIA-3); after `Started`, no terminal event.
    #[error(transparent)]
    Assembly(AssemblyError),
    /// Assembly ended in a termination outcome (SPEC NODE-4); `Started`, `Terminated`.
    #[error(transparent)]
    Terminated(CompactionTerminated),
    /// The real provider failed after `Composed`; the lease was released (SPEC NODE-5).
    /// Transparent: the node's error renders as the [`ProviderError`] and its source is the
    /// host's own error.
    #[error(transparent)]
    Provider(ProviderError),
    /// A trust revalidation failed (SPEC TRU-2, TRU-3): at step 1 before any event, at step 12
    /// after `Completed` (no `Composed`, nothing dispatched). Names only the status.
    #[error(transparent)]
    Trust(TrustError),
}

impl NodeError {
    /// The language-neutral category (SPEC ERR-1). A termination is an `InvalidOperation` (the
    /// C# irreducible exception derives from it); a provider failure is reported as
    /// `InvalidOperation` too (the provider's own exception type is opaque here).
    pub fn kind(&self) -> ErrorKind {
        match self {
            NodeError::Lease(e) => e.kind(),
            NodeError::Cancelled => ErrorKind::Cancelled,
            NodeError::Adapt(e) => e.kind(),
            NodeError::NoSnapshotProvider => ErrorKind::InvalidOperation,
            NodeError::Assembly(e) => e.kind(),
            NodeError::Terminated(_) => ErrorKind::InvalidOperation,
            NodeError::Provider(_) => ErrorKind::InvalidOperation,
            NodeError::Trust(e) => e.kind(),
        }
    }
}

/// A successful call (SPEC NODE-2): the provider's reply plus the internal dispatch result.
#[derive(Debug, Clone)]
pub struct Dispatched<R> {
    /// The provider's reply.
    pub reply: R,
    /// The diagnostics value, identical (same allocation) to the one the completed and composed
    /// events carry (SPEC EVT-4).
    pub diagnostics: Arc<Diagnostics>,
    /// The attempt's id (SPEC EVT-5).
    pub assembly_id: AssemblyId,
    /// The digests committed as delivered (SPEC NODE-5).
    pub forwarded: Vec<Digest>,
}

/// What a successful assembly hands to dispatch (C# S52 step 13): the bounded entries, whose
/// messages are dispatched (shared handles, no message copied here).
struct Composed {
    entries: Vec<Entry>,
    forwarded: Vec<Digest>,
    diagnostics: Arc<Diagnostics>,
    assembly_id: AssemblyId,
}

/// The per-provider-call compaction node (SPEC NODE-2): wraps a [`ChatClient`] and assembles
/// bounded context at every call. Build it with [`select`].
pub struct CompactionNode<C, U> {
    client: C,
    policy: Policy,
    reducer: U,
    classifier: Box<dyn Classifier + Send>,
    integration: Box<dyn SnapshotIntegration + Send>,
    ids: Arc<dyn IdSource>,
    reporter: Option<Reporter>,
    assembler: Assembler,
    observer: Option<Arc<dyn TraceObserver>>,
    /// The trust guard revalidated at NODE-3 steps 1 and 12 (SPEC TRU-1: all or nothing).
    trust: Option<TrustGuard>,
}

impl<C, U> fmt::Debug for CompactionNode<C, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompactionNode")
            .field("policy", &self.policy)
            .field("reporter", &self.reporter)
            .field("trusted", &self.trust.is_some())
            .finish_non_exhaustive()
    }
}

/// Emits one event if a reporter is present; the envelope (sequence number, timestamp) is taken
/// at emission (SPEC EVT-1, EVT-3).
fn emit(
    reporter: Option<&Reporter>,
    trace: &mut Option<Recorder>,
    assembly_id: AssemblyId,
    make: impl FnOnce(EventEnvelope) -> CompactionEvent,
) {
    if let Some(r) = reporter {
        let event = make(r.envelope(assembly_id));
        if let Some(t) = trace.as_mut() {
            t.event(&event);
        }
        r.report(event);
    }
}

impl<C, U: UpstreamReducer> CompactionNode<C, U> {
    /// The node of a hybrid profile (SPEC CMP-1), built only by a `Success` composition
    /// (`crate::compose::compose`, SPEC CMP-4).
    pub(crate) fn from_profile<K, I>(
        client: C,
        profile: HybridProfile<U, K, I>,
        reporter: Option<Reporter>,
    ) -> Self
    where
        K: Classifier + Send + 'static,
        I: SnapshotIntegration + Send + 'static,
    {
        CompactionNode {
            client,
            policy: profile.policy,
            reducer: profile.reducer,
            classifier: Box::new(profile.classifier),
            integration: Box::new(profile.integration),
            ids: Arc::new(RandomIdSource),
            reporter,
            assembler: Assembler::new(),
            observer: None,
            trust: None,
        }
    }

    /// Installs an already-configured guard (SPEC TRU-1).
    pub(crate) fn guarded(mut self, guard: TrustGuard) -> Self {
        self.trust = Some(guard);
        self
    }

    /// Configures trust revalidation (SPEC TRU-1): binding, accessor and a non-blank session id
    /// together make every call revalidate before and after assembly (TRU-3); all three absent
    /// leaves the node unguarded; any other combination is an `InvalidArgument` error.
    pub fn with_trust(
        mut self,
        binding: Option<TrustBinding>,
        accessor: Option<Arc<dyn BindingAccessor>>,
        session_id: Option<&str>,
    ) -> Result<Self, PartialTrustConfiguration> {
        self.trust = configure(binding, accessor, session_id)?;
        Ok(self)
    }

    /// Whether calls revalidate a trust binding (SPEC TRU-1).
    pub fn is_guarded(&self) -> bool {
        self.trust.is_some()
    }

    /// Revalidates the guard, if any (SPEC TRU-2).
    fn revalidate(&self) -> Result<(), NodeError> {
        self.trust
            .as_ref()
            .map_or(Ok(()), |g| revalidate(g).map_err(NodeError::Trust))
    }

    /// Replaces the classifier (default: the content-hash classifier, SPEC CLS-2).
    pub fn with_classifier(mut self, classifier: Box<dyn Classifier + Send>) -> Self {
        self.classifier = classifier;
        self
    }

    /// Replaces the snapshot integration (default: [`StaticIntegration`]).
    pub fn with_snapshot_integration(
        mut self,
        integration: impl SnapshotIntegration + Send + 'static,
    ) -> Self {
        self.integration = Box::new(integration);
        self
    }

    /// Replaces the [`AssemblyId`] source (default: [`RandomIdSource`]).
    pub fn with_id_source(mut self, ids: Arc<dyn IdSource>) -> Self {
        self.ids = ids;
        self
    }

    /// Records every call for trace checking (`docs/TRACE.md`); default: nothing is recorded.
    pub fn with_trace_observer(mut self, observer: Arc<dyn TraceObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The reporter later calls report through (SPEC EVT-1, EVT-3).
    pub fn reporter(&self) -> Option<&Reporter> {
        self.reporter.as_ref()
    }

    /// Replaces the reporter for later calls: the host's progress accessor now answers another
    /// reporter (SPEC EVT-3; `None` reports nothing, EVT-1).
    pub fn set_reporter(&mut self, reporter: Option<Reporter>) {
        self.reporter = reporter;
    }

    /// The wrapped client.
    pub fn client(&self) -> &C {
        &self.client
    }

    /// The wrapped client, mutably.
    pub fn client_mut(&mut self) -> &mut C {
        &mut self.client
    }

    /// The assembly steps of C# S52 (SPEC NODE-3), with the trust revalidations of steps 1 and
    /// 12 when a guard is configured (SPEC TRU-3).
    fn assemble(
        &mut self,
        slot: &CallSlot,
        messages: Baseline<'_>,
        cancel: &CancellationToken,
        trace: &mut Option<Recorder>,
    ) -> Result<Composed, NodeError> {
        // The lease the gate handed out: its run's admission order (SPEC LSE-7), recorded.
        if let Some(t) = trace.as_mut() {
            t.admitted(slot.lease());
        }
        // 1. check cancellation, then revalidate (SPEC TRU-3; a failure: no event).
        if cancel.is_cancelled() {
            return Err(NodeError::Cancelled);
        }
        self.revalidate()?;
        // 2. the lease was taken when entering the gate (`slot.lease()`).
        // 3. adapt messages (SPEC CLS-1), unless the host did.
        let baseline = match messages {
            Baseline::Messages(m) => adapt(m, &mut *self.classifier).map_err(NodeError::Adapt)?,
            Baseline::Entries(e) => e,
        };
        // 4. snapshot integration; no provider -> InvalidOperation.
        let provider = self
            .integration
            .provider(baseline)
            .ok_or(NodeError::NoSnapshotProvider)?;
        // 5. the lease-filtering provider (SPEC LSE-8), the bridge and the assembler.
        let mut filtering = slot.filtering_provider(provider);
        let mut bridge = Bridge::new(&mut self.reducer);
        // 6. a new AssemblyId, then Started (SPEC EVT-2, EVT-5).
        let assembly_id = self.ids.next_id();
        if let Some(t) = trace.as_mut() {
            t.began();
        }
        let reporter = self.reporter.as_ref();
        let policy = &self.policy;
        emit(reporter, trace, assembly_id, |envelope| {
            CompactionEvent::Started(StartedEvent {
                envelope,
                measurement_unit: policy.estimator().unit(),
                hard_limit: policy.hard_limit(),
                trigger_threshold: policy.trigger_threshold(),
            })
        });
        // 7. run the assembler (errors: Started only).
        let result = match trace.as_mut() {
            Some(t) => t.assemble(&mut self.assembler, policy, &mut filtering, &mut bridge),
            None => self
                .assembler
                .assemble(policy, &mut filtering, &mut bridge, cancel),
        }
        .map_err(NodeError::Assembly)?;
        // 8. check cancellation.
        if cancel.is_cancelled() {
            return Err(NodeError::Cancelled);
        }
        // 9. diagnostics (SPEC DIA-5), one shared value.
        let diagnostics =
            Arc::new(diagnostics::build(&result, policy).map_err(NodeError::Assembly)?);
        if let Some(t) = trace.as_mut() {
            t.diagnostics(&diagnostics);
        }
        // 10. termination -> Terminated and the typed error.
        if !result.outcome.is_success() {
            let d = Arc::clone(&diagnostics);
            emit(reporter, trace, assembly_id, |envelope| {
                CompactionEvent::Terminated(TerminatedEvent {
                    envelope,
                    diagnostics: d,
                })
            });
            return Err(NodeError::Terminated(CompactionTerminated {
                outcome: result.outcome,
                final_estimated_size: result.final_estimated_size,
                hard_limit: result.hard_limit,
            }));
        }
        // 11. Completed.
        let d = Arc::clone(&diagnostics);
        emit(reporter, trace, assembly_id, |envelope| {
            CompactionEvent::Completed(CompletedEvent {
                envelope,
                diagnostics: d,
            })
        });
        // 12. revalidate after Completed (SPEC TRU-3): a failure emits no Composed and
        // dispatches nothing; the caller releases the lease (SPEC NODE-5).
        self.revalidate()?;
        // 13. forwarded digests and bounded messages, in final order. `build` already refused a
        // success without final entries (SPEC DIA-3), so the fallback is unreachable.
        let final_entries = result.final_entries.unwrap_or_default();
        let forwarded: Vec<Digest> = final_entries
            .iter()
            .filter(|e| e.kind() == EntryKind::RecoverableContextSegment)
            .filter_map(|e| e.recoverable_segment().map(|s| s.reference.digest()))
            .collect();
        // 14. Composed with the identical diagnostics value, before dispatch (C# order).
        let d = Arc::clone(&diagnostics);
        emit(reporter, trace, assembly_id, |envelope| {
            CompactionEvent::Composed(ComposedEvent {
                envelope,
                diagnostics: d,
            })
        });
        Ok(Composed {
            entries: final_entries,
            forwarded,
            diagnostics,
            assembly_id,
        })
    }
}

impl<C: ChatClient, U: UpstreamReducer> CompactionNode<C, U> {
    /// One provider call (SPEC NODE-2; C# S51): ensure a run scope, enter the run's gate (taking
    /// a lease), assemble (SPEC NODE-3), dispatch the bounded messages, commit the lease with the
    /// forwarded digests on provider success or release it on any failure (SPEC NODE-5), leave
    /// the gate, then the scope.
    pub fn call(
        &mut self,
        scope: &mut RunScope,
        messages: &[Message],
        cancel: &CancellationToken,
    ) -> Result<Dispatched<C::Reply>, NodeError> {
        self.call_baseline(scope, Baseline::Messages(messages), cancel)
    }

    /// [`CompactionNode::call`] on `entries` the host adapted itself: what adapting its messages
    /// with the node's classifier (SPEC CLS-1, NODE-3 step 3) gives, for a host that keeps its
    /// messages' entries across calls (`hybrid_compaction::transcript::reuse`), so that a repeat
    /// call adapts, and the memo (EST-7) digests, only its new messages.
    pub fn call_adapted(
        &mut self,
        scope: &mut RunScope,
        entries: Vec<Entry>,
        cancel: &CancellationToken,
    ) -> Result<Dispatched<C::Reply>, NodeError> {
        self.call_baseline(scope, Baseline::Entries(entries), cancel)
    }

    fn call_baseline(
        &mut self,
        scope: &mut RunScope,
        messages: Baseline<'_>,
        cancel: &CancellationToken,
    ) -> Result<Dispatched<C::Reply>, NodeError> {
        let reporting = self.reporter.is_some();
        let mut trace = Recorder::start(self.observer.as_ref(), &self.policy, cancel, reporting);
        let outcome = self.call_inner(scope, messages, cancel, &mut trace);
        if let Some(t) = trace {
            let settled = outcome.as_ref().map(|d| d.forwarded.as_slice());
            t.finish(self.observer.as_ref(), settled);
        }
        outcome
    }

    /// [`CompactionNode::call`], recording into `trace` when an observer is installed.
    fn call_inner(
        &mut self,
        scope: &mut RunScope,
        messages: Baseline<'_>,
        cancel: &CancellationToken,
        trace: &mut Option<Recorder>,
    ) -> Result<Dispatched<C::Reply>, NodeError> {
        // (1) ensure a run scope (SPEC LSE-6); the guard leaves it when this function returns,
        // after the slot below has been finished.
        let guard = scope.ensure_run();
        if let Some(t) = trace.as_mut() {
            t.run(guard.current());
        }
        // (2) enter the run's provider-call slot (SPEC LSE-7); the slot's lease is step 2 of
        // C# S52. A cancellation observed here leaves no trace and emits nothing.
        let slot = guard.enter(cancel).map_err(NodeError::Lease)?;
        // (3) assemble.
        let composed = match self.assemble(&slot, messages, cancel, trace) {
            Ok(c) => c,
            Err(e) => {
                // SPEC NODE-5: release on every failure path. A release overflow cannot hide
                // the original error; the gate is left regardless.
                let _ = slot.release();
                return Err(e);
            }
        };
        // (4) dispatch; (5) commit on success, release on failure; leaving the gate happens in
        // the same critical section (SPEC LSE-10).
        match self.client.send_entries(&composed.entries, cancel) {
            Ok(reply) => {
                slot.complete(&composed.forwarded)
                    .map_err(NodeError::Lease)?;
                Ok(Dispatched {
                    reply,
                    diagnostics: composed.diagnostics,
                    assembly_id: composed.assembly_id,
                    forwarded: composed.forwarded,
                })
            }
            Err(e) => {
                // A provider failure after Composed retracts no event (C# S53).
                let _ = slot.release();
                Err(NodeError::Provider(e))
            }
        }
        // (6) `guard` drops here: the scope is left after the gate.
    }
}

/// A streaming provider (SPEC NODE-2; C# S51): the call yields a stream of updates. The lease is
/// committed only when the stream is read to its end (zero updates count); an error item or an
/// abandoned stream releases it.
pub trait StreamingChatClient {
    /// One streamed update.
    type Update;
    /// The update stream.
    type Stream: Iterator<Item = Result<Self::Update, ProviderError>>;
    /// Starts streaming a response to `messages`.
    fn stream(
        &mut self,
        messages: &[Message],
        cancel: &CancellationToken,
    ) -> Result<Self::Stream, ProviderError>;
}

/// An in-flight streaming call (SPEC NODE-2): yields the provider's updates; holds the run's gate
/// and the run scope until it is read to its end (commit) or fails or is dropped (release).
pub struct NodeStream<'a, S> {
    // Field order is drop order: the slot (gate + lease) is finished before the scope is left
    // (an unfinished slot is released by `Drop` below, which runs first).
    slot: Option<CallSlot>,
    inner: S,
    forwarded: Vec<Digest>,
    diagnostics: Arc<Diagnostics>,
    assembly_id: AssemblyId,
    /// The call's record and its observer, until the stream settles (SPEC TRC).
    trace: Option<(Recorder, Arc<dyn TraceObserver>)>,
    _scope: ScopeGuard<'a>,
}

impl<S> NodeStream<'_, S> {
    /// Hands the record over: the stream ended this way, the lease settled with `outcome`.
    fn settled(&mut self, end: StreamEnd, outcome: Result<&[Digest], &NodeError>) {
        if let Some((mut t, observer)) = self.trace.take() {
            t.streamed(end);
            t.finish(Some(&observer), outcome);
        }
    }
}

impl<S> Drop for NodeStream<'_, S> {
    /// Dropped before its end: the lease is released (SPEC NODE-5) and the record says so.
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            let _ = slot.release();
            self.settled(StreamEnd::Abandoned, Err(&NodeError::Cancelled));
        }
    }
}

impl<S> fmt::Debug for NodeStream<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeStream")
            .field("open", &self.slot.is_some())
            .field("assembly_id", &self.assembly_id)
            .finish_non_exhaustive()
    }
}

impl<S> NodeStream<'_, S> {
    /// The diagnostics value the completed and composed events carried (SPEC EVT-4).
    pub fn diagnostics(&self) -> &Arc<Diagnostics> {
        &self.diagnostics
    }

    /// The attempt's id (SPEC EVT-5).
    pub fn assembly_id(&self) -> AssemblyId {
        self.assembly_id
    }

    /// The digests that are committed as delivered when the stream is read to its end.
    pub fn forwarded(&self) -> &[Digest] {
        &self.forwarded
    }
}

impl<U, S: Iterator<Item = Result<U, ProviderError>>> Iterator for NodeStream<'_, S> {
    type Item = Result<U, NodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        // Finished (committed, released or failed): the stream is over.
        let slot = self.slot.take()?;
        match self.inner.next() {
            Some(Ok(update)) => {
                self.slot = Some(slot);
                Some(Ok(update))
            }
            Some(Err(e)) => {
                // SPEC NODE-5: an error item releases.
                let _ = slot.release();
                let e = NodeError::Provider(e);
                self.settled(StreamEnd::Failed, Err(&e));
                Some(Err(e))
            }
            // Read to its end: commit (SPEC NODE-5).
            None => match slot.complete(&self.forwarded) {
                Ok(()) => {
                    let forwarded = std::mem::take(&mut self.forwarded);
                    self.settled(StreamEnd::Completed, Ok(&forwarded));
                    self.forwarded = forwarded;
                    None
                }
                Err(e) => {
                    let e = NodeError::Lease(e);
                    self.settled(StreamEnd::Completed, Err(&e));
                    Some(Err(e))
                }
            },
        }
    }
}

impl<C: StreamingChatClient, U: UpstreamReducer> CompactionNode<C, U> {
    /// One streaming provider call (SPEC NODE-2; C# S51): as [`CompactionNode::call`], but the
    /// lease is settled by the returned stream — committed when it is read to its end, released
    /// on an error item or when it is dropped early. Gate and scope stay held meanwhile.
    pub fn call_streaming<'a>(
        &mut self,
        scope: &'a mut RunScope,
        messages: &[Message],
        cancel: &CancellationToken,
    ) -> Result<NodeStream<'a, C::Stream>, NodeError> {
        let reporting = self.reporter.is_some();
        let mut trace = Recorder::start(self.observer.as_ref(), &self.policy, cancel, reporting);
        let observer = self.observer.clone();
        // A failure before the stream exists settles the record at once.
        let fail = |trace: Option<Recorder>, e: NodeError| {
            if let Some(t) = trace {
                t.finish(observer.as_ref(), Err(&e));
            }
            e
        };
        let guard = scope.ensure_run();
        if let Some(t) = trace.as_mut() {
            t.run(guard.current());
        }
        let slot = match guard.enter(cancel) {
            Ok(s) => s,
            Err(e) => return Err(fail(trace, NodeError::Lease(e))),
        };
        let composed = match self.assemble(&slot, Baseline::Messages(messages), cancel, &mut trace)
        {
            Ok(c) => c,
            Err(e) => {
                let _ = slot.release();
                return Err(fail(trace, e));
            }
        };
        let messages: Vec<Message> = composed
            .entries
            .iter()
            .map(|e| e.message().clone())
            .collect();
        match self.client.stream(&messages, cancel) {
            Ok(inner) => Ok(NodeStream {
                slot: Some(slot),
                inner,
                forwarded: composed.forwarded,
                diagnostics: composed.diagnostics,
                assembly_id: composed.assembly_id,
                trace: trace.zip(self.observer.clone()),
                _scope: guard,
            }),
            Err(e) => {
                let _ = slot.release();
                let mut trace = trace;
                if let Some(t) = trace.as_mut() {
                    t.streamed(StreamEnd::Failed);
                }
                Err(fail(trace, NodeError::Provider(e)))
            }
        }
    }
}
