//! Composition and trust in the seam (SPEC CMP-1 .. CMP-4, TRU-1 .. TRU-3): the inputs of one
//! composition and of one guarded provider call, and what they report, as plain values; and the
//! default-strategies hybrid profile as behaviour ([`ProfileParts`]), since its classifier and
//! integration are each implementation's own types.

use std::sync::{Arc, Mutex};

use super::node::{CallEnd, CallPlan, CallRecord, ReporterFields, StreamPlan};
use super::{BoxedUpstream, Implementation};
use crate::capability::CapabilityProfile;
use crate::classifier::Classifier;
use crate::composition::{
    ClientChain, CompositionStatus, ProviderCompositionStatus, RunCoordination,
};
use crate::configuration::{
    EffectiveDefault, FeatureDisposition, HistoryPlacement, PublicOptions, UpstreamCompaction,
};
use crate::diagnostics::Diagnostics;
use crate::entry::Entry;
use crate::error::ErrorKind;
use crate::estimator::Estimator;
use crate::message::Message;
use crate::policy::{Policy, PolicySpec};
use crate::reducers::{MessageCountingReducer, ScriptedUpstreamReducer, UpstreamStep};
use crate::snapshot::SnapshotProvider;
use crate::trust::{
    AttemptEnd, AttemptEvent, BindingAccessor, Owners, PartialTrustConfiguration, TrustBinding,
    TrustContext, TrustError, TrustStatus, WorkspaceId,
};

/// The inputs of one composition (SPEC CMP-3).
#[derive(Debug)]
pub struct ComposeInput {
    /// The client chain; `None`: no client.
    pub client: Option<ClientChain>,
    /// The capability profile; `None`: none.
    pub profile: Option<CapabilityProfile>,
    /// Whether an execution binding is supplied (the default binding).
    pub binding: bool,
    /// Whether an accessor is supplied (one that always answers the binding's context).
    pub accessor: bool,
    /// The session id.
    pub session_id: String,
    /// Whether a hybrid profile is supplied ([`fixed_policy`] with room, a message-counting
    /// reducer keeping 2).
    pub hybrid_profile: bool,
}

/// What a composition built: its status, the nodes installed and their run coordination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Composition {
    /// The status (SPEC CMP-2).
    pub status: CompositionStatus,
    /// Nodes installed (0 or 1, SPEC CMP-4).
    pub nodes: u32,
    /// Who owns the runs of the installed node.
    pub runs: Option<RunCoordination>,
}

/// What the provider composer built (SPEC CMP-5): its status, the reason of an invalid
/// binding, whether the agent exists, the nodes installed and their run coordination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderReport {
    /// The status.
    pub status: ProviderCompositionStatus,
    /// `ExecutionBindingInvalid`'s reason (SPEC TRU-2).
    pub binding: Option<TrustStatus>,
    /// Whether the agent was built (exactly on `Success`).
    pub agent: bool,
    /// Nodes installed (0 or 1).
    pub nodes: u32,
    /// Who owns the runs of the installed node.
    pub runs: Option<RunCoordination>,
}

/// A snapshot integration as behaviour (SPEC SNAP-4): the provider it builds over one call's
/// adapted baseline (`None`: no provider).
pub type Integration = Box<dyn FnMut(Vec<Entry>) -> Option<Box<dyn SnapshotProvider>> + Send>;

/// The four parts of a hybrid profile (SPEC CMP-1), as the default-strategies constructor built
/// them: the caller's policy and reducer, the implementation's classifier and integration.
pub struct ProfileParts {
    /// The policy (SPEC POL-1), as supplied.
    pub policy: Policy,
    /// The upstream reducer (SPEC BRG-1), as supplied.
    pub reducer: BoxedUpstream<'static>,
    /// The classifier the constructor supplied (SPEC CLS-1).
    pub classifier: Box<dyn Classifier + Send>,
    /// The snapshot integration the constructor supplied (SPEC SNAP-4).
    pub integration: Integration,
}

impl std::fmt::Debug for ProfileParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileParts")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// How the assembly of a `trust` call ends (between the two revalidations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssemblyScript {
    /// Within the limit.
    Success,
    /// An irreducible history (SPEC NODE-4).
    Terminated,
    /// The reducer fails (an error after `Started`).
    Failed,
}

/// The inputs of one guarded provider call (SPEC TRU-1 .. TRU-3).
pub struct TrustInput {
    /// The binding.
    pub binding: Option<TrustBinding>,
    /// The accessor.
    pub accessor: Option<Arc<dyn BindingAccessor>>,
    /// The session id.
    pub session_id: Option<String>,
    /// The assembly's end, when neither `policy` nor `reducer` is chosen: the fixed policy
    /// (tight unless `Success`) and the reducer (echoing, or failing for `Failed`).
    pub assembly: AssemblyScript,
    /// The chosen history; `None`: the fixed one (one user message of 20 bytes, or of 200 when
    /// `assembly` is not `Success`).
    pub messages: Option<Vec<Message>>,
    /// The chosen policy; `None`: [`fixed_policy`] by `assembly`.
    pub policy: Option<Policy>,
    /// The chosen upstream reducer; `None`: by `assembly`.
    pub reducer: Option<BoxedUpstream<'static>>,
    /// A streaming call (SPEC NODE-2); `None`: a plain one.
    pub stream: Option<StreamPlan>,
}

impl TrustInput {
    /// The fixed call of `assembly` under this configuration (no chosen history, policy,
    /// reducer or stream).
    pub fn fixed(
        binding: Option<TrustBinding>,
        accessor: Option<Arc<dyn BindingAccessor>>,
        session_id: Option<String>,
        assembly: AssemblyScript,
    ) -> TrustInput {
        TrustInput {
            binding,
            accessor,
            session_id,
            assembly,
            messages: None,
            policy: None,
            reducer: None,
            stream: None,
        }
    }
}

impl std::fmt::Debug for TrustInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustInput")
            .field("assembly", &self.assembly)
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

/// Why a guarded call failed: the error's kind, and the trust status when a revalidation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptFailure {
    /// The kind.
    pub kind: ErrorKind,
    /// The failed revalidation's status.
    pub status: Option<TrustStatus>,
}

/// What one guarded provider call did (SPEC TRU-3, EVT-2).
#[derive(Debug, Clone, PartialEq)]
pub struct TrustReport {
    /// Whether the node was configured with a guard.
    pub guarded: bool,
    /// Where the attempt ended.
    pub end: AttemptEnd,
    /// Its events, in order.
    pub events: Vec<AttemptEvent>,
    /// Whether the real provider was called.
    pub dispatched: bool,
    /// The failure, if any.
    pub failure: Option<AttemptFailure>,
    /// The attempt's diagnostics (SPEC EVT-4): those of its last event that carries them
    /// (`Completed`, `Terminated`, `Composed`); `None` when it ended before or during assembly.
    pub diagnostics: Option<Diagnostics>,
    /// The messages the real provider received, when it was called.
    pub sent: Option<Vec<Message>>,
    /// A streaming call: the updates the caller read.
    pub streamed: Option<usize>,
}

/// The reporter of a `trust` call: workflow `wire`, no agent.
pub fn trust_reporter() -> ReporterFields {
    ReporterFields {
        workflow_id: "wire".to_owned(),
        agent_id: None,
        parent_agent_id: None,
        depth: 0,
    }
}

/// One guarded provider call (SPEC TRU-1 .. TRU-3) through `imp`'s own guarded node (SPEC
/// NODE-2, NODE-3): the node is configured with `input`'s trust (a partial configuration is
/// refused, TRU-1), given the chosen or fixed policy and reducer, and called once with the
/// chosen or fixed history, streaming when `input` says so. Both implementations answer
/// `trust` with this: what differs is their node.
pub fn guarded_call<I: Implementation + ?Sized>(
    imp: &I,
    input: TrustInput,
) -> Result<TrustReport, PartialTrustConfiguration> {
    let tight = input.assembly != AssemblyScript::Success;
    let policy = input
        .policy
        .unwrap_or_else(|| fixed_policy(tight, imp.context_estimator()));
    let reducer = input.reducer.unwrap_or_else(|| {
        let step = match input.assembly {
            AssemblyScript::Failed => UpstreamStep::Fail("reducer failed".to_owned()),
            _ => UpstreamStep::Echo,
        };
        Box::new(ScriptedUpstreamReducer::new(vec![step]))
    });
    let guarded = input.binding.is_some();
    let mut world = imp.guarded_node_world(
        (policy, reducer),
        Some(&trust_reporter()),
        input.binding,
        input.accessor,
        input.session_id.as_deref(),
    )?;
    let messages = input.messages.unwrap_or_else(|| {
        let text = "x".repeat(if tight { 200 } else { 20 });
        vec![Message::text("user", text)]
    });
    let plan = CallPlan {
        stream: input.stream,
        ..CallPlan::new(messages)
    };
    Ok(trust_report(guarded, world.call(&plan)))
}

/// What a guarded call did, read off its record: where it ended by its events (SPEC TRU-3),
/// the status of a failed revalidation (the error names it, TRU-2), its diagnostics.
fn trust_report(guarded: bool, record: CallRecord) -> TrustReport {
    let events: Vec<AttemptEvent> = record.events.iter().map(|e| e.kind).collect();
    let diagnostics = record
        .events
        .iter()
        .rev()
        .find_map(|e| e.diagnostics.clone());
    let (failure, sent) = match record.end {
        CallEnd::Sent { messages, .. } | CallEnd::Abandoned { messages } => (None, Some(messages)),
        CallEnd::Failed {
            error, dispatched, ..
        } => {
            let status = TrustStatus::ALL
                .into_iter()
                .find(|&status| error.message == TrustError { status }.to_string());
            let failure = AttemptFailure {
                kind: error.kind,
                status,
            };
            (Some(failure), dispatched)
        }
    };
    TrustReport {
        guarded,
        end: end_of(&events),
        dispatched: record.events_before_dispatch.is_some(),
        events,
        failure,
        diagnostics,
        sent,
        streamed: record.streamed,
    }
}

/// Where an attempt ended, read off its events (SPEC TRU-3, EVT-2).
fn end_of(events: &[AttemptEvent]) -> AttemptEnd {
    use AttemptEvent as E;
    match events {
        [] => AttemptEnd::BeforeStarted,
        [E::Started] => AttemptEnd::DuringAssembly,
        [E::Started, E::Terminated] => AttemptEnd::Terminated,
        [E::Started, E::Completed] => AttemptEnd::RevalidationAfterAssembly,
        _ => AttemptEnd::Success,
    }
}

/// The fixed policy of a composed profile and of a `trust` call, measuring with `estimator`
/// (each implementation's own EST-2 estimator): a roomy one, or a `tight` one a 200-byte message
/// cannot fit.
pub fn fixed_policy(tight: bool, estimator: Arc<dyn Estimator>) -> Policy {
    let (hard_limit, trigger_margin) = if tight { (40, 4) } else { (4096, 64) };
    let spec = PolicySpec {
        hard_limit,
        trigger_margin,
        recent_message_retention_count: 1,
        maximum_compaction_attempts: 1,
        preservation_label: Some("wire".to_owned()),
        preservation_version: 1,
        estimator: Some(estimator),
    };
    // Constant, valid numbers (SPEC POL-2).
    Policy::new(spec).unwrap_or_else(|e| unreachable!("fixed policy is valid: {e}"))
}

/// The default owners: `user-1`, `orch-1`, `session-1`.
pub fn default_owners() -> Owners {
    Owners {
        user_id: "user-1".to_owned(),
        orchestration_id: "orch-1".to_owned(),
        session_id: "session-1".to_owned(),
    }
}

/// The default binding: the default owners, workspace 1.
pub fn default_binding() -> TrustBinding {
    TrustBinding {
        owners: default_owners(),
        workspace: WorkspaceId(1),
    }
}

/// The context matching `binding` exactly.
pub fn context_of(binding: &TrustBinding) -> TrustContext {
    TrustContext {
        user_id: binding.owners.user_id.clone(),
        orchestration_id: binding.owners.orchestration_id.clone(),
        workspace: Some(binding.workspace),
    }
}

/// An accessor answering from a script: the k-th call gets the k-th answer, the last repeating.
#[derive(Debug)]
pub struct ScriptedAccessor {
    answers: Vec<Option<TrustContext>>,
    calls: Mutex<usize>,
}

impl ScriptedAccessor {
    /// The accessor of these answers (`None`: no current context); an empty script answers
    /// no context.
    pub fn new(answers: Vec<Option<TrustContext>>) -> ScriptedAccessor {
        ScriptedAccessor {
            answers,
            calls: Mutex::new(0),
        }
    }

    /// Always `context`.
    pub fn always(context: TrustContext) -> ScriptedAccessor {
        ScriptedAccessor::new(vec![Some(context)])
    }
}

impl BindingAccessor for ScriptedAccessor {
    fn current(&self) -> Option<TrustContext> {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        let k = (*calls).min(self.answers.len().saturating_sub(1));
        *calls += 1;
        self.answers.get(k).cloned().flatten()
    }
}

/// The inputs of one public configuration (SPEC CFG-2, CFG-5): the switch, the options (their
/// reducer, when supplied, a message-counting one), the upstream framework's compaction switch
/// and the client chain.
#[derive(Debug, Clone)]
pub struct ConfigureInput {
    /// `EnableHybridCompaction`.
    pub enabled: bool,
    /// `HybridCompactionOptions`.
    pub options: Option<PublicOptions<MessageCountingReducer>>,
    /// The upstream framework's compaction switch (SPEC CFG-5).
    pub upstream: UpstreamCompaction,
    /// The client chain.
    pub client: ClientChain,
}

/// What a public configuration reports (SPEC CFG-3, CFG-5), as plain values.
#[derive(Debug, Clone)]
pub struct ConfigureReport {
    /// The hybrid compaction row of the effective-defaults report (SPEC CFG-3).
    pub report: EffectiveDefault,
    /// The two compaction rows (SPEC CFG-5).
    pub dispositions: [FeatureDisposition; 2],
    /// The compaction installed, if any.
    pub compaction: Option<BundleFacts>,
}

/// The compaction the public path installs (SPEC CFG-3, CFG-4): its policy (with the public
/// defaults) and the facts of its installation. Its classifier and integration are always the
/// content-hash classifier (CLS-2) and the static integration (SNAP-3).
#[derive(Debug, Clone)]
pub struct BundleFacts {
    /// The policy, with the public path's defaults.
    pub policy: Policy,
    /// Always call-local runs.
    pub runs: RunCoordination,
    /// Always `false`: no trust binding.
    pub trust_binding: bool,
    /// Always `false`: the capability resolver is not consulted.
    pub capability_resolver_consulted: bool,
    /// Where the node sits (SPEC CFG-4).
    pub placement: HistoryPlacement,
}
