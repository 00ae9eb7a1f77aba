//! Running the ADR-0007 operations.
//!
//! [`AdrImplementation`] is the part of these operations that the library implements on its
//! own: capability resolution (CAP-3, CAP-4), composition (CMP-3, CMP-4) and the trust
//! revalidations of a provider call (TRU-1 .. TRU-3). The model answers with
//! `hybrid_compaction_spec`; the engine answers with `hybrid_compaction::compose` and, for
//! `trust`, a real `hybrid_compaction::node::CompactionNode` call observed through its events.
//! The artifact operations (`record`, `rehydrate`, `offload`) and the public switch
//! (`configure`) have no separate library implementation: both answer them with the
//! executable specification (docs/WIRE.md says so).

use std::sync::{Arc, Mutex};

use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::artifact_diagnostics::ArtifactEvent;
use hybrid_compaction_model::artifact_record::{RecordError, RecordFields, SCHEMA_VERSION};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::capability::{
    Acceptance, BundleLane, CapabilityEntry, CapabilityProfile, CapabilityState,
};
use hybrid_compaction_model::composition::{
    ClientChain, CompositionError, CompositionStatus, NodeFactory, RunCoordination,
};
use hybrid_compaction_model::configuration::{ConfigurationError, PublicOptions};
use hybrid_compaction_model::entry::RecoverableSegment;
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::offload::{OffloadError, OffloadInput, OffloadRequest};
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::{
    MessageCountingReducer, ScriptedUpstreamReducer, UpstreamStep,
};
use hybrid_compaction_model::rehydration::{
    RehydrationError, RehydrationRequest, RehydrationSource, ResolutionStatus,
};
use hybrid_compaction_model::trust::{
    AttemptEnd, AttemptEvent, BindingAccessor, PartialTrustConfiguration, TrustBinding, TrustGuard,
    TrustStatus,
};
use hybrid_compaction_model::workspace::{ScriptedWorkspace, Workspace};
use hybrid_compaction_spec as spec;

use super::case::{
    ComposeCase, ConfigureCase, OffloadCase, RecordCase, RehydrateCase, ResolveCase, TrustCase,
};
use super::convert::{
    binding, chain, compaction_metadata, default_binding, default_owners, diagnostics_output,
    fixed_now, named, owners, profile, record_output, ScriptedAccessor,
};
use super::output::{
    AttemptFailureOutput, BundleCompactionOutput, CapabilityStateOutput, CompositionOutput,
    ConfigurationOutput, EffectiveDefaultOutput, OffloadOutput, RehydrationOutput,
    ResolutionOutput, ResolvedSegmentOutput, TrustOutput,
};
use crate::wire::convert::{answer, CaseError};
use crate::wire::{Output, WireError};

/// The inputs of one composition (SPEC CMP-3), already converted.
#[derive(Debug)]
pub struct ComposeInput {
    /// The client chain; `None`: no client.
    pub client: Option<ClientChain>,
    /// The capability profile; `None`: none.
    pub profile: Option<CapabilityProfile>,
    /// Whether an execution binding is supplied.
    pub binding: bool,
    /// Whether an accessor is supplied.
    pub accessor: bool,
    /// The session id.
    pub session_id: String,
    /// Whether a hybrid profile is supplied.
    pub hybrid_profile: bool,
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

/// The inputs of one `trust` call, already converted.
pub struct TrustInput {
    /// The binding.
    pub binding: Option<TrustBinding>,
    /// The accessor.
    pub accessor: Option<Arc<dyn BindingAccessor>>,
    /// The session id.
    pub session_id: Option<String>,
    /// The assembly's end.
    pub assembly: AssemblyScript,
}

impl std::fmt::Debug for TrustInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustInput")
            .field("assembly", &self.assembly)
            .finish_non_exhaustive()
    }
}

/// What a composition built: its status, the nodes installed and their run coordination.
pub type Composition = (CompositionStatus, u32, Option<RunCoordination>);

/// The ADR-0007 operations the library implements on its own (see the module docs).
pub trait AdrImplementation: Sync {
    /// Effective state (SPEC CAP-3).
    fn effective_state(
        &self,
        entry: &CapabilityEntry,
        lane: BundleLane,
        acceptance: Acceptance,
    ) -> CapabilityState;
    /// Whether the capability is requested (SPEC CAP-3).
    fn is_requested(&self, entry: &CapabilityEntry, lane: BundleLane) -> bool;
    /// Executability (SPEC CAP-4).
    fn is_executable(&self, profile: &CapabilityProfile) -> bool;
    /// One composition (SPEC CMP-3, CMP-4).
    fn compose(&self, input: ComposeInput) -> Result<Composition, CompositionError>;
    /// One guarded provider call (SPEC TRU-1 .. TRU-3).
    fn trust(&self, input: TrustInput) -> Result<TrustOutput, PartialTrustConfiguration>;
}

/// The executable specification's answers.
#[derive(Debug, Clone, Copy, Default)]
pub struct ModelAdr;

/// The library's answers (`hybrid_compaction::compose`, `hybrid_compaction::node`).
#[derive(Debug, Clone, Copy, Default)]
pub struct EngineAdr;

/// The fixed policy of a composed profile and of a `trust` call, measuring UTF-8 bytes with
/// `estimator` (each implementation's own EST-2 estimator).
fn wire_policy(tight: bool, estimator: Arc<dyn Estimator>) -> Policy {
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
    Policy::new(spec).unwrap_or_else(|e| unreachable!("fixed wire policy is valid: {e}"))
}

/// Counts the nodes the specification's composition installs.
#[derive(Debug, Default)]
struct CountingFactory {
    installs: u32,
    runs: Option<RunCoordination>,
}

impl<P> NodeFactory<P> for CountingFactory {
    fn install(&mut self, _profile: P, _chain: &ClientChain, runs: RunCoordination) {
        self.installs += 1;
        self.runs = Some(runs);
    }
}

/// The events of an attempt by where it ends, with the trust failure if that is why.
fn model_attempt(input: TrustInput) -> Result<TrustOutput, PartialTrustConfiguration> {
    let guard = spec::trust::configure(input.binding, input.accessor, input.session_id.as_deref())?;
    let trust_failure = |status: TrustStatus| AttemptFailureOutput {
        kind: ErrorKind::InvalidOperation.name().to_owned(),
        status: Some(status.name().to_owned()),
    };
    let revalidate = |g: &Option<TrustGuard>| match g {
        Some(g) => spec::trust::revalidate(g).map_err(|e| trust_failure(e.status)),
        None => Ok(()),
    };
    let (end, failure) = if let Err(f) = revalidate(&guard) {
        (AttemptEnd::BeforeStarted, Some(f))
    } else {
        match input.assembly {
            AssemblyScript::Terminated => (
                AttemptEnd::Terminated,
                Some(AttemptFailureOutput {
                    kind: ErrorKind::InvalidOperation.name().to_owned(),
                    status: None,
                }),
            ),
            AssemblyScript::Failed => (
                AttemptEnd::DuringAssembly,
                Some(AttemptFailureOutput {
                    kind: ErrorKind::ReducerFailed.name().to_owned(),
                    status: None,
                }),
            ),
            AssemblyScript::Success => match revalidate(&guard) {
                Err(f) => (AttemptEnd::RevalidationAfterAssembly, Some(f)),
                Ok(()) => (AttemptEnd::Success, None),
            },
        }
    };
    Ok(TrustOutput {
        guarded: guard.is_some(),
        end: end.name().to_owned(),
        events: spec::trust::attempt_events(end)
            .into_iter()
            .map(|e| e.name().to_owned())
            .collect(),
        dispatched: end == AttemptEnd::Success,
        failure,
    })
}

impl AdrImplementation for ModelAdr {
    fn effective_state(
        &self,
        entry: &CapabilityEntry,
        lane: BundleLane,
        acceptance: Acceptance,
    ) -> CapabilityState {
        spec::capability::effective_state(entry, lane, acceptance)
    }
    fn is_requested(&self, entry: &CapabilityEntry, lane: BundleLane) -> bool {
        spec::capability::is_requested(entry, lane)
    }
    fn is_executable(&self, profile: &CapabilityProfile) -> bool {
        spec::capability::is_executable(profile)
    }
    fn compose(&self, input: ComposeInput) -> Result<Composition, CompositionError> {
        let binding = default_binding();
        let accessor = ScriptedAccessor::always(super::convert::context_of(&binding));
        let mut factory = CountingFactory::default();
        let request = spec::composition::CompositionRequest {
            client: input.client.as_ref(),
            capabilities: input.profile.as_ref(),
            execution_binding: input.binding.then_some(&binding),
            accessor: input.accessor.then_some(&accessor as &dyn BindingAccessor),
            session_id: &input.session_id,
            hybrid_profile: input.hybrid_profile.then(|| {
                spec::composition::default_profile(
                    wire_policy(false, Arc::new(spec::estimate::Utf8ContextEstimator)),
                    MessageCountingReducer { target_count: 2 },
                )
            }),
        };
        let status = spec::composition::compose(request, &mut factory)?;
        Ok((status, factory.installs, factory.runs))
    }
    fn trust(&self, input: TrustInput) -> Result<TrustOutput, PartialTrustConfiguration> {
        model_attempt(input)
    }
}

mod engine {
    //! The library side: a real node call.

    use super::*;
    use hybrid_compaction::engine::estimate::Utf8ContextEstimator;
    use hybrid_compaction::lease::RunScope;
    use hybrid_compaction::node::{
        select, ChatClient, CompactionEvent, EventKind, NodeError, NodeOptions, NodeSelection,
        ProgressSink, ProviderError, Reporter, ReporterIdentity,
    };

    /// A provider that accepts everything and counts calls.
    #[derive(Debug, Default)]
    pub struct CountingClient {
        pub calls: usize,
    }

    impl ChatClient for CountingClient {
        type Reply = ();
        fn send(&mut self, _m: &[Message], _c: &CancellationToken) -> Result<(), ProviderError> {
            self.calls += 1;
            Ok(())
        }
    }

    #[derive(Default)]
    struct Sink(Mutex<Vec<EventKind>>);

    impl ProgressSink for Sink {
        fn report(&self, event: CompactionEvent) {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(event.kind());
        }
    }

    fn event_name(k: EventKind) -> AttemptEvent {
        match k {
            EventKind::Started => AttemptEvent::Started,
            EventKind::Completed => AttemptEvent::Completed,
            EventKind::Terminated => AttemptEvent::Terminated,
            EventKind::Composed => AttemptEvent::Composed,
        }
    }

    /// Where the attempt ended, read off its events (SPEC TRU-3, EVT-2).
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

    /// One call through a library node configured with `input`'s trust.
    pub fn attempt(input: TrustInput) -> Result<TrustOutput, PartialTrustConfiguration> {
        let tight = input.assembly != AssemblyScript::Success;
        let step = match input.assembly {
            AssemblyScript::Failed => UpstreamStep::Fail("reducer failed".to_owned()),
            _ => UpstreamStep::Echo,
        };
        let options = NodeOptions {
            policy: wire_policy(tight, Arc::new(Utf8ContextEstimator)),
            reducer: ScriptedUpstreamReducer::new(vec![step]),
        };
        let sink = Arc::new(Sink::default());
        let reporter = Reporter::new(
            Arc::clone(&sink) as Arc<dyn ProgressSink>,
            ReporterIdentity::workflow("wire"),
        );
        let selection = select(
            true,
            Some(options),
            CountingClient::default(),
            Some(reporter),
        );
        let Ok(NodeSelection::Installed(node)) = selection else {
            unreachable!("switch and options together always install a node (SPEC NODE-1)")
        };
        let mut node =
            node.with_trust(input.binding, input.accessor, input.session_id.as_deref())?;
        let text = "x".repeat(if tight { 200 } else { 20 });
        let messages = vec![Message::text("user", text)];
        let result = node.call(&mut RunScope::new(), &messages, &CancellationToken::new());
        let events: Vec<AttemptEvent> = sink
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|k| event_name(*k))
            .collect();
        let failure = result.err().map(|e| AttemptFailureOutput {
            kind: e.kind().name().to_owned(),
            status: match e {
                NodeError::Trust(t) => Some(t.status.name().to_owned()),
                _ => None,
            },
        });
        Ok(TrustOutput {
            guarded: node.is_guarded(),
            end: end_of(&events).name().to_owned(),
            events: events.iter().map(|e| e.name().to_owned()).collect(),
            dispatched: node.client().calls > 0,
            failure,
        })
    }
}

impl AdrImplementation for EngineAdr {
    fn effective_state(
        &self,
        entry: &CapabilityEntry,
        lane: BundleLane,
        acceptance: Acceptance,
    ) -> CapabilityState {
        hybrid_compaction::compose::effective_state(entry, lane, acceptance)
    }
    fn is_requested(&self, entry: &CapabilityEntry, lane: BundleLane) -> bool {
        hybrid_compaction::compose::is_requested(entry, lane)
    }
    fn is_executable(&self, profile: &CapabilityProfile) -> bool {
        hybrid_compaction::compose::is_executable(profile)
    }
    fn compose(&self, input: ComposeInput) -> Result<Composition, CompositionError> {
        use hybrid_compaction::compose::composition::{compose, default_profile};
        use hybrid_compaction::compose::Composition as Request;
        use hybrid_compaction::engine::estimate::Utf8ContextEstimator;
        let binding = default_binding();
        let accessor = ScriptedAccessor::always(super::convert::context_of(&binding));
        let chain = input.client.clone().unwrap_or_default();
        let composed = compose(Request {
            client: input.client.map(|_| engine::CountingClient::default()),
            chain: &chain,
            capabilities: input.profile.as_ref(),
            execution_binding: input.binding.then_some(binding),
            accessor: input
                .accessor
                .then(|| Arc::new(accessor) as Arc<dyn BindingAccessor>),
            session_id: &input.session_id,
            hybrid_profile: input.hybrid_profile.then(|| {
                default_profile(
                    wire_policy(false, Arc::new(Utf8ContextEstimator)),
                    MessageCountingReducer { target_count: 2 },
                )
            }),
            reporter: None,
        })?;
        let nodes = u32::from(composed.status() == CompositionStatus::Success);
        Ok((composed.status(), nodes, composed.runs()))
    }
    fn trust(&self, input: TrustInput) -> Result<TrustOutput, PartialTrustConfiguration> {
        engine::attempt(input)
    }
}

fn wire_err<T>(path: &str, message: &str) -> Result<T, CaseError> {
    Err(CaseError::Wire(WireError::new(path, message)))
}

/// `resolve` (SPEC CAP-1 .. CAP-4).
pub fn resolve(c: &ResolveCase, imp: &dyn AdrImplementation) -> Result<Output, CaseError> {
    let (p, names) = profile(&c.profile, "$.profile")?;
    let capabilities = p
        .capabilities
        .iter()
        .zip(names)
        .map(|(entry, name)| CapabilityStateOutput {
            name,
            requested: imp.is_requested(entry, p.lane),
            state: imp
                .effective_state(entry, p.lane, p.acceptance)
                .name()
                .to_owned(),
        })
        .collect();
    Ok(Output {
        resolution: Some(ResolutionOutput {
            capabilities,
            executable: imp.is_executable(&p),
            compaction: compaction_metadata(),
        }),
        ..Output::default()
    })
}

/// `compose` (SPEC CMP-1 .. CMP-4).
pub fn compose(c: &ComposeCase, imp: &dyn AdrImplementation) -> Result<Output, CaseError> {
    let client = match &c.client {
        None => None,
        Some(names) => Some(chain(names, "$.client")?),
    };
    let profile = match &c.profile {
        None => None,
        Some(p) => Some(profile(p, "$.profile")?.0),
    };
    let input = ComposeInput {
        client,
        profile,
        binding: c.execution_binding,
        accessor: c.accessor,
        session_id: c
            .session_id
            .clone()
            .unwrap_or_else(|| "session-1".to_owned()),
        hybrid_profile: c.hybrid_profile,
    };
    let (status, nodes, runs) = imp.compose(input).map_err(|e| {
        let field = match e {
            CompositionError::Missing(input) => input.name(),
            CompositionError::BlankSession => "SessionId",
        };
        CaseError::Answer(answer(e.kind(), Some(field), None, e.to_string()))
    })?;
    let installed = nodes > 0;
    Ok(Output {
        composition: Some(CompositionOutput {
            status: status.name().to_owned(),
            nodes_installed: nodes,
            runs: runs.map(|r| r.name().to_owned()),
            // SPEC CMP-1: the default strategies (CLS-2, SNAP-3).
            strategies: installed.then(|| vec!["ContentHash".to_owned(), "Static".to_owned()]),
        }),
        ..Output::default()
    })
}

/// `trust` (SPEC TRU-1 .. TRU-3).
pub fn trust(c: &TrustCase, imp: &dyn AdrImplementation) -> Result<Output, CaseError> {
    let accessor = match &c.accessor {
        None => None,
        Some(a) => {
            Some(Arc::new(ScriptedAccessor::from_wire(a, "$.accessor")?) as Arc<dyn BindingAccessor>)
        }
    };
    let assembly = match c.assembly.as_deref() {
        None | Some("Success") => AssemblyScript::Success,
        Some("Terminated") => AssemblyScript::Terminated,
        Some("Failed") => AssemblyScript::Failed,
        Some(other) => {
            return wire_err(
                "$.assembly",
                &format!("unknown assembly end {other:?}; expected Success, Terminated or Failed"),
            )
        }
    };
    let input = TrustInput {
        binding: c.binding.as_ref().map(binding),
        accessor,
        session_id: c.session_id.clone(),
        assembly,
    };
    let out = imp
        .trust(input)
        .map_err(|e| CaseError::Answer(answer(e.kind(), None, None, e.to_string())))?;
    Ok(Output {
        trust: Some(out),
        ..Output::default()
    })
}

/// The field a record error names (SPEC ARF-2).
fn record_error(e: &RecordError) -> CaseError {
    let field = match e {
        RecordError::UnsupportedSchema => "Schema",
        RecordError::Invalid(f) | RecordError::OutOfRange(f) => f.name(),
        _ => "Record",
    };
    CaseError::Answer(answer(e.kind(), Some(field), None, e.to_string()))
}

/// `record` (SPEC ARF-1 .. ARF-3), answered by the specification.
pub fn record(c: &RecordCase) -> Result<Output, CaseError> {
    let made = match (&c.create, &c.reconstruct) {
        (Some(cr), None) => {
            let binding = c.binding.as_ref().map_or_else(default_binding, binding);
            let creation = spec::record::Creation {
                body: &cr.body,
                description: &cr.description,
                tool_name: &cr.tool_name,
                call_id: &cr.call_id,
            };
            spec::record::create(creation, &binding, fixed_now())
        }
        (None, Some(r)) => {
            if c.binding.is_some() {
                return wire_err("$.binding", "a reconstruction takes no binding");
            }
            let reference = ArtifactReference::to_content(&r.body);
            spec::record::reconstruct(RecordFields {
                schema: r.schema.unwrap_or(SCHEMA_VERSION),
                reference_id: r.reference_id.clone().unwrap_or(reference.to_string()),
                path: r.path.clone().unwrap_or_else(|| reference.path()),
                digest: r
                    .digest
                    .clone()
                    .unwrap_or_else(|| reference.digest().to_hex()),
                byte_size: r.byte_size.unwrap_or(r.body.len() as i64),
                description: r.description.clone().unwrap_or_default(),
                owners: r.owners.as_ref().map_or_else(default_owners, owners),
                tool_name: r.tool_name.clone().unwrap_or_else(|| "tool".to_owned()),
                call_id: r.call_id.clone().unwrap_or_else(|| "call-1".to_owned()),
                created_at: fixed_now(),
            })
        }
        _ => {
            return wire_err(
                "$",
                "a record case needs exactly one of `create` and `reconstruct`",
            )
        }
    }
    .map_err(|e| record_error(&e))?;
    Ok(Output {
        record: Some(record_output(&made)),
        ..Output::default()
    })
}

/// The guard of the default binding with `c`'s accessor.
fn default_guard(
    accessor: Option<&[Option<super::case::ContextInput>]>,
) -> Result<TrustGuard, CaseError> {
    let binding = default_binding();
    let accessor = ScriptedAccessor::for_case(accessor, &binding, "$.accessor")?;
    let session_id = binding.owners.session_id.clone();
    Ok(TrustGuard {
        binding,
        accessor,
        session_id,
    })
}

fn trust_answer(status: TrustStatus, message: String) -> CaseError {
    CaseError::Answer(answer(
        ErrorKind::InvalidOperation,
        Some(status.name()),
        None,
        message,
    ))
}

/// `rehydrate` (SPEC RHY-1 .. RHY-4, ATR-1 .. ATR-3), answered by the specification.
pub fn rehydrate(c: &RehydrateCase) -> Result<Output, CaseError> {
    let guard = default_guard(c.accessor.as_deref())?;
    let source = named(
        c.source.as_deref().unwrap_or("ToolRequest"),
        "$.source",
        RehydrationSource::from_name,
        &RehydrationSource::NAMES,
    )?;
    let record_binding = TrustBinding {
        owners: c
            .record_owners
            .as_ref()
            .map_or_else(|| guard.binding.owners.clone(), owners),
        workspace: guard.binding.workspace,
    };
    let creation = spec::record::Creation {
        body: &c.body,
        description: "",
        tool_name: "tool",
        call_id: "call-1",
    };
    let record = spec::record::create(creation, &record_binding, fixed_now())
        .map_err(|e| record_error(&e))?;
    let mut workspace = ScriptedWorkspace {
        fail_read: c.fail_read,
        ..ScriptedWorkspace::default()
    };
    if let Some(stored) = &c.stored {
        workspace.files.insert(record.path(), stored.clone());
    }
    let request = RehydrationRequest::new(record, source, c.budget)
        .map_err(|e| CaseError::Answer(answer(e.kind(), Some("Budget"), None, e.to_string())))?;
    let mut events: Vec<ArtifactEvent> = Vec::new();
    let result =
        spec::rehydrate::rehydrate(&request, &guard, &mut workspace, fixed_now(), &mut events)
            .map_err(|e| match e {
                RehydrationError::Trust(t) => trust_answer(t.status, e.to_string()),
                RehydrationError::Diagnostics(d) => {
                    CaseError::Answer(answer(e.kind(), Some(d.rule.name()), None, e.to_string()))
                }
                _ => CaseError::Answer(answer(e.kind(), Some("Workspace"), None, e.to_string())),
            })?;
    let shared =
        matches!(events.as_slice(), [only] if Arc::ptr_eq(&only.diagnostics, &result.diagnostics));
    let segment = result.segment.as_ref().map(|s| ResolvedSegmentOutput {
        reference_id: s.segment.reference.to_string(),
        body: s.segment.body.clone(),
        skip_eager_reoffload: s.skip_eager_reoffload,
    });
    debug_assert!(result.status != ResolutionStatus::Resolved || segment.is_some());
    Ok(Output {
        rehydration: Some(RehydrationOutput {
            status: result.status.name().to_owned(),
            segment,
            diagnostics: diagnostics_output(&result.diagnostics),
            events: u32::try_from(events.len()).unwrap_or(u32::MAX),
            shared_with_event: shared,
            workspace_reads: u32::try_from(workspace.reads).unwrap_or(u32::MAX),
        }),
        ..Output::default()
    })
}

/// `offload` (SPEC OFF-1 .. OFF-3, ATR-1 .. ATR-3), answered by the specification.
pub fn offload(c: &OffloadCase) -> Result<Output, CaseError> {
    let input = match (&c.tool_result, &c.segment) {
        (Some(t), None) => OffloadInput::ToolResult {
            tool_name: t.tool_name.clone(),
            call_id: t.call_id.clone(),
            serialized: t.serialized.clone(),
            description: t.description.clone(),
        },
        (None, Some(body)) => OffloadInput::RecoveredSegment(RecoverableSegment {
            reference: ArtifactReference::to_content(body),
            body: body.clone(),
        }),
        _ => {
            return wire_err(
                "$",
                "an offload case needs exactly one of `toolResult` and `segment`",
            )
        }
    };
    let request = OffloadRequest::new(input, c.threshold)
        .map_err(|e| CaseError::Answer(answer(e.kind(), Some("Threshold"), None, e.to_string())))?;
    let guard = default_guard(c.accessor.as_deref())?;
    let mut workspace = c.workspace.as_ref().map(|w| ScriptedWorkspace {
        files: w.files.clone(),
        fail_read: w.fail_read,
        fail_write: w.fail_write,
        fail_checkpoint: w.fail_checkpoint,
        ..ScriptedWorkspace::default()
    });
    let cancel = if c.cancelled {
        CancellationToken::cancelled()
    } else {
        CancellationToken::new()
    };
    let mut events: Vec<ArtifactEvent> = Vec::new();
    let host = spec::offload::OffloadHost {
        guard: c.binding.then_some(&guard),
        workspace: workspace.as_mut().map(|w| w as &mut dyn Workspace),
        cancel: &cancel,
        now: fixed_now(),
    };
    let result = spec::offload::offload(&request, host, &mut events).map_err(|e| match e {
        OffloadError::Trust(t) => trust_answer(t.status, e.to_string()),
        OffloadError::Record(r) => record_error(&r),
        OffloadError::Diagnostics(d) => {
            CaseError::Answer(answer(e.kind(), Some(d.rule.name()), None, e.to_string()))
        }
        _ => CaseError::Answer(answer(e.kind(), None, None, e.to_string())),
    })?;
    let shared =
        matches!(events.as_slice(), [only] if Arc::ptr_eq(&only.diagnostics, &result.diagnostics));
    Ok(Output {
        offload: Some(OffloadOutput {
            record: result.record.as_ref().map(record_output),
            diagnostics: diagnostics_output(&result.diagnostics),
            events: u32::try_from(events.len()).unwrap_or(u32::MAX),
            shared_with_event: shared,
            workspace_writes: workspace.map_or(0, |w| u32::try_from(w.writes).unwrap_or(u32::MAX)),
        }),
        ..Output::default()
    })
}

/// `configure` (SPEC CFG-1 .. CFG-4), answered by the specification.
pub fn configure(c: &ConfigureCase) -> Result<Output, CaseError> {
    let client = chain(&c.client, "$.client")?;
    let options = c.options.as_ref().map(|o| PublicOptions {
        hard_limit_bytes: o.hard_limit_bytes,
        trigger_margin_bytes: o.trigger_margin_bytes,
        recent_message_retention_count: o.recent_message_retention_count,
        maximum_compaction_attempts: o.maximum_compaction_attempts,
        upstream_reducer: o
            .upstream_reducer
            .then_some(MessageCountingReducer { target_count: 2 }),
    });
    let configured = spec::configuration::configure(c.enabled, options, &client).map_err(|e| {
        let field = match &e {
            ConfigurationError::EnabledWithoutOptions => "EnabledWithoutOptions".to_owned(),
            ConfigurationError::OptionsWithoutEnabled => "OptionsWithoutEnabled".to_owned(),
            ConfigurationError::MissingReducer => "UpstreamReducer".to_owned(),
            ConfigurationError::ExistingCompactionComponent => {
                "ExistingCompactionComponent".to_owned()
            }
            ConfigurationError::Policy(p) => p.field().name().to_owned(),
            _ => "Options".to_owned(),
        };
        CaseError::Answer(answer(e.kind(), Some(&field), None, e.to_string()))
    })?;
    let report = configured.report;
    let compaction = configured.compaction.map(|b| {
        let p = &b.profile.policy;
        BundleCompactionOutput {
            measurement_unit: p.estimator().unit().name().to_owned(),
            hard_limit: p.hard_limit(),
            trigger_threshold: p.trigger_threshold(),
            preservation_label: p.preservation_label().to_owned(),
            preservation_version: p.preservation_version(),
            strategies: vec!["ContentHash".to_owned(), "Static".to_owned()],
            runs: b.runs.name().to_owned(),
            trust_binding: b.trust_binding,
            capability_resolver_consulted: b.capability_resolver_consulted,
            placement: b.placement.name().to_owned(),
        }
    });
    Ok(Output {
        configuration: Some(ConfigurationOutput {
            report: EffectiveDefaultOutput {
                requested: report.requested.name().to_owned(),
                effective: report.effective.name().to_owned(),
                source: report.source.name().to_owned(),
            },
            compaction,
        }),
        ..Output::default()
    })
}
