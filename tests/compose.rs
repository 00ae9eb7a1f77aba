//! The library's composition, capability resolution and trust revalidation
//! (`hybrid_compaction::compose`, SPEC CMP-1 .. CMP-4, CAP-3, CAP-4, TRU-1 .. TRU-3) and the
//! node's revalidation hooks (NODE-3 steps 1 and 12).
//!
//! The library implements these on its own (it cannot call the executable specification), so
//! proptests prove each function equal to `hybrid_compaction_spec`'s over generated inputs; the
//! clause tests check the library's own observable guarantees: a failure status leaves no node
//! and hands the client back, `Success` builds exactly one guarded node, and a failed
//! revalidation at either site emits exactly the events TRU-3 prescribes and dispatches nothing.

use std::sync::{Arc, Mutex};

use hybrid_compaction::compose::composition::default_profile;
use hybrid_compaction::compose::{self, Composed, Composition};
use hybrid_compaction::lease::{Run, RunScope};
use hybrid_compaction::node::{
    select, ChatClient, CompactionEvent, EventKind, NodeError, NodeOptions, NodeSelection,
    ProgressSink, ProviderError, Reporter, ReporterIdentity,
};
use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::capability::{
    Acceptance, BundleLane, CapabilityEntry, CapabilityMetadata, CapabilityName, CapabilityProfile,
    DeliveryPhase, Stability, COMPACTION,
};
use hybrid_compaction_model::composition::{
    ClientChain, ClientComponent, CompositionError, CompositionInput, CompositionStatus,
    NodeFactory, RunCoordination,
};
use hybrid_compaction_model::entry::{Entry, RecoverableSegment};
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::estimator::ConstantEstimator;
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::MessageCountingReducer;
use hybrid_compaction_model::snapshot::{SnapshotProvider, StaticProvider};
use hybrid_compaction_model::trust::{
    BindingAccessor, Owners, TrustBinding, TrustContext, TrustGuard, TrustStatus, WorkspaceId,
};
use hybrid_compaction_spec as spec;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Fixtures

fn policy() -> Policy {
    Policy::new(PolicySpec {
        hard_limit: 1000,
        trigger_margin: 10,
        recent_message_retention_count: 2,
        maximum_compaction_attempts: 2,
        preservation_label: Some("compose-tests".into()),
        preservation_version: 1,
        estimator: Some(Arc::new(ConstantEstimator(10))),
    })
    .unwrap()
}

fn binding() -> TrustBinding {
    TrustBinding {
        owners: Owners {
            user_id: "user-1".into(),
            orchestration_id: "orch-1".into(),
            session_id: "session-1".into(),
        },
        workspace: WorkspaceId(7),
    }
}

fn good() -> Option<TrustContext> {
    Some(TrustContext {
        user_id: "user-1".into(),
        orchestration_id: "orch-1".into(),
        workspace: Some(WorkspaceId(7)),
    })
}

/// Answers `script[k]` at the k-th call (the last one repeated).
struct Scripted {
    script: Vec<Option<TrustContext>>,
    calls: Mutex<usize>,
}

impl Scripted {
    fn new(script: Vec<Option<TrustContext>>) -> Arc<Scripted> {
        Arc::new(Scripted {
            script,
            calls: Mutex::new(0),
        })
    }
}

impl BindingAccessor for Scripted {
    fn current(&self) -> Option<TrustContext> {
        let mut calls = self.calls.lock().unwrap();
        let k = (*calls).min(self.script.len() - 1);
        *calls += 1;
        self.script[k].clone()
    }
}

#[derive(Debug, Default)]
struct Client {
    sent: usize,
}

impl ChatClient for Client {
    type Reply = ();
    fn send(&mut self, _: &[Message], _: &CancellationToken) -> Result<(), ProviderError> {
        self.sent += 1;
        Ok(())
    }
}

#[derive(Default)]
struct Sink(Mutex<Vec<CompactionEvent>>);

impl ProgressSink for Sink {
    fn report(&self, event: CompactionEvent) {
        self.0.lock().unwrap().push(event);
    }
}

impl Sink {
    fn kinds(&self) -> Vec<EventKind> {
        self.0.lock().unwrap().iter().map(|e| e.kind()).collect()
    }
}

fn compaction(requested: bool, evidence: Option<DeliveryPhase>) -> CapabilityEntry {
    CapabilityEntry {
        metadata: COMPACTION,
        requested,
        evidence,
    }
}

fn profile(entries: Vec<CapabilityEntry>, coherent: bool) -> CapabilityProfile {
    CapabilityProfile {
        lane: BundleLane::SelectedProviders,
        acceptance: Acceptance::StableAndExperimental,
        history_coherent: coherent,
        capabilities: entries,
    }
}

fn enabled() -> CapabilityProfile {
    profile(vec![compaction(true, Some(DeliveryPhase::G5))], true)
}

type Profile = hybrid_compaction_model::composition::HybridProfile<
    MessageCountingReducer,
    hybrid_compaction::engine::classify::ContentHashClassifier,
    hybrid_compaction::node::StaticIntegration,
>;

/// A composition request over `client` with the default binding, accessor and session.
fn request<'a>(
    chain: &'a ClientChain,
    caps: Option<&'a CapabilityProfile>,
    hybrid: bool,
) -> Composition<'a, Client, Profile> {
    Composition {
        client: Some(Client::default()),
        chain,
        capabilities: caps,
        execution_binding: Some(binding()),
        accessor: Some(Scripted::new(vec![good()])),
        session_id: "session-1",
        hybrid_profile: hybrid
            .then(|| default_profile(policy(), MessageCountingReducer { target_count: 1 })),
        reporter: None,
    }
}

// ---------------------------------------------------------------------------------------------
// Clause tests: composition fails closed (CMP-3, CMP-4)

#[test]
fn cmp_4_every_failure_status_leaves_no_node_and_hands_the_client_back() {
    let chain = ClientChain::default();
    let second = ClientChain {
        components: vec![ClientComponent::Other, ClientComponent::Compaction],
    };
    let deferred = profile(vec![compaction(true, Some(DeliveryPhase::G4))], true);
    let incoherent = profile(vec![compaction(true, Some(DeliveryPhase::G5))], false);
    let no_capability = profile(vec![], true);
    let en = enabled();
    let cases: Vec<(&ClientChain, &CapabilityProfile, bool, CompositionStatus)> = vec![
        (
            &chain,
            &en,
            false,
            CompositionStatus::CapabilityEnabledWithoutProfile,
        ),
        (
            &chain,
            &deferred,
            true,
            CompositionStatus::ProfileSuppliedWithoutCapabilityEnabled,
        ),
        (
            &chain,
            &incoherent,
            true,
            CompositionStatus::ProfileNotExecutable,
        ),
        (
            &chain,
            &no_capability,
            true,
            CompositionStatus::ProfileNotExecutable,
        ),
        (
            &second,
            &en,
            true,
            CompositionStatus::ExistingCompactionComponent,
        ),
        (&chain, &deferred, false, CompositionStatus::Disabled),
    ];
    for (chain, caps, hybrid, want) in cases {
        // The profiles must outlive the request: bind them first.
        let caps = caps.clone();
        match compose::compose(request(chain, Some(&caps), hybrid)).unwrap() {
            Composed::NotInstalled { status, client } => {
                assert_eq!(status, want);
                assert_eq!(client.sent, 0, "the client is handed back untouched");
            }
            Composed::Installed(_) => panic!("{want:?} installed a node"),
        }
    }
}

#[test]
fn cmp_3_cmp_1_success_builds_exactly_one_guarded_node_sharing_the_agents_runs() {
    let chain = ClientChain {
        components: vec![ClientComponent::Other],
    };
    let caps = enabled();
    let composed = compose::compose(request(&chain, Some(&caps), true)).unwrap();
    assert_eq!(composed.status(), CompositionStatus::Success);
    assert_eq!(composed.runs(), Some(RunCoordination::SharedWithAgent));
    let Composed::Installed(mut node) = composed else {
        panic!("Success installs a node")
    };
    assert!(
        node.is_guarded(),
        "the composition's binding guards the node (TRU-1)"
    );
    node.call(
        &mut RunScope::new(),
        &[Message::text("user", "hi")],
        &CancellationToken::new(),
    )
    .unwrap();
    assert_eq!(node.client().sent, 1);
}

#[test]
fn cmp_3_missing_inputs_are_null_arguments_in_order_and_a_blank_session_is_invalid() {
    let chain = ClientChain::default();
    let caps = enabled();
    let mut r = request(&chain, Some(&caps), true);
    r.client = None;
    r.capabilities = None;
    let e = compose::compose(r).unwrap_err();
    assert_eq!(e, CompositionError::Missing(CompositionInput::Client));
    assert_eq!(e.kind(), ErrorKind::NullArgument);
    let mut r = request(&chain, Some(&caps), true);
    r.accessor = None;
    assert_eq!(
        compose::compose(r).unwrap_err(),
        CompositionError::Missing(CompositionInput::BindingAccessor)
    );
    let mut r = request(&chain, Some(&caps), true);
    r.session_id = "\u{3000}\t";
    let e = compose::compose(r).unwrap_err();
    assert_eq!(e, CompositionError::BlankSession);
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Clause tests: the node's revalidation sites (TRU-1, TRU-3, NODE-3)

/// A node with a reporter and `script` as the accessor's answers.
fn guarded_node(
    script: Vec<Option<TrustContext>>,
    session: &str,
) -> (
    hybrid_compaction::node::CompactionNode<Client, MessageCountingReducer>,
    Arc<Sink>,
) {
    let sink = Arc::new(Sink::default());
    let reporter = Reporter::new(
        Arc::clone(&sink) as Arc<dyn ProgressSink>,
        ReporterIdentity::workflow("wf"),
    );
    let options = NodeOptions {
        policy: policy(),
        reducer: MessageCountingReducer { target_count: 1 },
    };
    let Ok(NodeSelection::Installed(node)) =
        select(true, Some(options), Client::default(), Some(reporter))
    else {
        panic!("switch and options install a node")
    };
    let accessor: Arc<dyn BindingAccessor> = Scripted::new(script);
    let node = node
        .with_trust(Some(binding()), Some(accessor), Some(session))
        .unwrap();
    (node, sink)
}

fn call(
    node: &mut hybrid_compaction::node::CompactionNode<Client, MessageCountingReducer>,
) -> Result<(), NodeError> {
    node.call(
        &mut RunScope::new(),
        &[Message::text("user", "hello")],
        &CancellationToken::new(),
    )
    .map(|_| ())
}

#[test]
fn tru_3_node_3_a_failed_first_revalidation_emits_nothing_and_dispatches_nothing() {
    let (mut node, sink) = guarded_node(vec![None], "session-1");
    let e = call(&mut node).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidOperation);
    assert!(matches!(&e, NodeError::Trust(t) if t.status == TrustStatus::MissingContext));
    assert!(sink.kinds().is_empty());
    assert_eq!(node.client().sent, 0);
    // Privacy (TRU-2): the error names only the status.
    assert_eq!(
        e.to_string(),
        "trust binding revalidation failed: MissingContext"
    );
}

#[test]
fn tru_3_dep_14_a_failed_second_revalidation_leaves_started_completed_and_no_dispatch() {
    let other = Some(TrustContext {
        workspace: Some(WorkspaceId(8)),
        ..good().unwrap()
    });
    let (mut node, sink) = guarded_node(vec![good(), other], "session-1");
    let e = call(&mut node).unwrap_err();
    assert!(matches!(&e, NodeError::Trust(t) if t.status == TrustStatus::WorkspaceMismatch));
    assert_eq!(sink.kinds(), vec![EventKind::Started, EventKind::Completed]);
    assert_eq!(node.client().sent, 0);
}

#[test]
fn tru_3_node_5_a_failed_second_revalidation_releases_the_lease_for_a_later_call() {
    // One run: the first call fails at step 12, so its reservation of the recovered body is
    // released and the second call of the same run delivers the body (SPEC NODE-5, LSE-4).
    let bad = Some(TrustContext {
        user_id: "user-2".into(),
        ..good().unwrap()
    });
    let (node, sink) = guarded_node(vec![good(), bad, good()], "session-1");
    let body = "the recovered body";
    let reference = ArtifactReference::to_content(body);
    let mut node = node.with_snapshot_integration(move |mut baseline: Vec<Entry>| {
        let segment = RecoverableSegment {
            reference,
            body: body.into(),
        };
        baseline.push(Entry::recoverable("seg", segment).unwrap());
        Some(Box::new(StaticProvider::new(baseline)) as Box<dyn SnapshotProvider>)
    });
    let mut scope = RunScope::with_run(Run::new());
    let messages = [Message::text("user", reference.to_string())];
    let cancel = CancellationToken::new();
    let first = node.call(&mut scope, &messages, &cancel).unwrap_err();
    assert!(matches!(first, NodeError::Trust(t) if t.status == TrustStatus::IdentityMismatch));
    assert_eq!(node.client().sent, 0);
    let second = node.call(&mut scope, &messages, &cancel).unwrap();
    assert_eq!(second.forwarded, vec![reference.digest()]);
    assert_eq!(
        sink.kinds(),
        vec![
            EventKind::Started,
            EventKind::Completed,
            EventKind::Started,
            EventKind::Completed,
            EventKind::Composed
        ]
    );
}

#[test]
fn tru_3_both_revalidations_pass_and_the_call_completes() {
    let (mut node, sink) = guarded_node(vec![good()], "session-1");
    call(&mut node).unwrap();
    assert_eq!(
        sink.kinds(),
        vec![
            EventKind::Started,
            EventKind::Completed,
            EventKind::Composed
        ]
    );
    assert_eq!(node.client().sent, 1);
}

#[test]
fn tru_1_a_partial_trust_configuration_is_refused_before_the_node_is_usable() {
    let options = NodeOptions {
        policy: policy(),
        reducer: MessageCountingReducer { target_count: 1 },
    };
    let Ok(NodeSelection::Installed(node)) = select(true, Some(options), Client::default(), None)
    else {
        panic!("installed")
    };
    let e = node
        .with_trust(Some(binding()), None, Some("session-1"))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// The library equals the executable specification (proptest)

fn phase() -> impl Strategy<Value = DeliveryPhase> {
    prop::sample::select(DeliveryPhase::ALL.to_vec())
}

fn entry(name: u16) -> impl Strategy<Value = CapabilityEntry> {
    (
        any::<bool>(),
        prop::option::of(phase()),
        prop::sample::select(Stability::ALL.to_vec()),
        any::<bool>(),
        phase(),
        any::<bool>(),
    )
        .prop_map(
            move |(requested, evidence, stability, bundle_default, delivery, is_compaction)| {
                let metadata = if is_compaction && name == 0 {
                    COMPACTION
                } else {
                    CapabilityMetadata {
                        name: CapabilityName::Other(name),
                        stability,
                        bundle_default,
                        delivery_phase: delivery,
                        ..COMPACTION
                    }
                };
                CapabilityEntry {
                    metadata,
                    requested,
                    evidence,
                }
            },
        )
}

fn capability_profile() -> impl Strategy<Value = CapabilityProfile> {
    (
        prop::sample::select(BundleLane::ALL.to_vec()),
        prop::sample::select(Acceptance::ALL.to_vec()),
        any::<bool>(),
        (0u16..4).prop_flat_map(|n| (0..n).map(entry).collect::<Vec<_>>()),
        prop::bool::weighted(0.8),
        any::<bool>(),
    )
        .prop_map(
            |(lane, acceptance, coherent, mut capabilities, with_compaction, requested)| {
                // Mostly a Compaction with evidence first, so that the later CMP-3 steps
                // (executability, the existing component) are reached often.
                if with_compaction && !capabilities.iter().any(|c| c.metadata == COMPACTION) {
                    capabilities.insert(0, compaction(requested, Some(DeliveryPhase::G6)));
                }
                CapabilityProfile {
                    lane,
                    acceptance,
                    history_coherent: coherent,
                    capabilities,
                }
            },
        )
}

fn context() -> impl Strategy<Value = Option<TrustContext>> {
    prop::option::of(
        (
            prop::sample::select(vec!["user-1", "user-2"]),
            prop::sample::select(vec!["orch-1", "orch-2"]),
            prop::option::of(prop::sample::select(vec![7u64, 8])),
        )
            .prop_map(|(u, o, w)| TrustContext {
                user_id: u.into(),
                orchestration_id: o.into(),
                workspace: w.map(WorkspaceId),
            }),
    )
}

/// Counts the specification's installs.
#[derive(Default)]
struct Counting(u32);

impl<P> NodeFactory<P> for Counting {
    fn install(&mut self, _: P, _: &ClientChain, _: RunCoordination) {
        self.0 += 1;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// SPEC CAP-3, CAP-4: the library's resolution equals the specification's.
    #[test]
    fn cap_3_cap_4_library_resolution_equals_the_spec(p in capability_profile()) {
        for e in &p.capabilities {
            prop_assert_eq!(
                compose::effective_state(e, p.lane, p.acceptance),
                spec::capability::effective_state(e, p.lane, p.acceptance)
            );
            prop_assert_eq!(
                compose::is_requested(e, p.lane),
                spec::capability::is_requested(e, p.lane)
            );
        }
        prop_assert_eq!(compose::is_executable(&p), spec::capability::is_executable(&p));
    }

    /// SPEC CMP-3, CMP-4: the library's composition decides the specification's status (or
    /// error), and builds a node exactly when the specification's factory is called.
    #[test]
    fn cmp_3_cmp_4_library_composition_equals_the_spec(
        p in prop::option::weighted(0.95, capability_profile()),
        chain in prop::collection::vec(prop::bool::ANY, 0..3),
        client in prop::bool::weighted(0.95),
        has_binding in prop::bool::weighted(0.95),
        has_accessor in prop::bool::weighted(0.95),
        session in prop::sample::select(vec!["session-1", "session-1", "session-1", "", " ", "s"]),
        hybrid in prop::bool::weighted(0.7),
    ) {
        let chain = ClientChain {
            components: chain
                .into_iter()
                .map(|c| if c { ClientComponent::Compaction } else { ClientComponent::Other })
                .collect(),
        };
        let b = binding();
        let accessor = Scripted::new(vec![good()]);
        let mut factory = Counting::default();
        let want = spec::composition::compose(
            spec::composition::CompositionRequest {
                client: client.then_some(&chain),
                capabilities: p.as_ref(),
                execution_binding: has_binding.then_some(&b),
                accessor: has_accessor.then_some(&*accessor as &dyn BindingAccessor),
                session_id: session,
                hybrid_profile: hybrid.then_some(()),
            },
            &mut factory,
        );
        let mut r = request(&chain, p.as_ref(), hybrid);
        r.client = client.then(Client::default);
        r.execution_binding = has_binding.then(binding);
        r.accessor = has_accessor.then(|| accessor.clone() as Arc<dyn BindingAccessor>);
        r.session_id = session;
        let got = compose::compose(r);
        match (want, got) {
            (Ok(s), Ok(c)) => {
                prop_assert_eq!(s, c.status());
                prop_assert_eq!(factory.0, u32::from(matches!(c, Composed::Installed(_))));
            }
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            (w, g) => prop_assert!(false, "spec {:?}, library {:?}", w, g.map(|c| c.status())),
        }
    }

    /// SPEC TRU-1, TRU-2: configuration and revalidation equal the specification's.
    #[test]
    fn tru_1_tru_2_library_revalidation_equals_the_spec(
        ctx in context(),
        session in prop::sample::select(vec!["session-1", "session-2", "", "\u{3000}"]),
        parts in (any::<bool>(), any::<bool>(), any::<bool>()),
    ) {
        let accessor = || -> Arc<dyn BindingAccessor> { Scripted::new(vec![ctx.clone()]) };
        let lib = compose::configure(
            parts.0.then(binding), parts.1.then(accessor), parts.2.then_some(session));
        let model = spec::trust::configure(
            parts.0.then(binding), parts.1.then(accessor), parts.2.then_some(session));
        prop_assert_eq!(lib.is_ok(), model.is_ok());
        let guard = TrustGuard { binding: binding(), accessor: accessor(), session_id: session.into() };
        prop_assert_eq!(compose::revalidate(&guard), spec::trust::revalidate(&guard));
    }
}
