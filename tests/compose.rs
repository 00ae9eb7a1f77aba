//! The library's own composition API (`hybrid_compaction::compose`): what its types promise
//! beyond the clauses both implementations answer.
//!
//! Composition, capability resolution and trust (SPEC CMP-1 .. CMP-4, CAP-3, CAP-4, TRU-1 ..
//! TRU-3) are tested once for both implementations in the clause suite
//! (`tests/clauses/composition.rs`, through the seam: statuses, nodes installed, run
//! coordination, revalidation ends, events and leases); that the library answers every wire case
//! as the specification does is the oracle's property (`oracle/tests/oracle/adr_vectors.rs`). The tests
//! here are library-only because the seam reports plain values where the library hands back
//! objects: a failure status returns the caller's client untouched (`Composed::NotInstalled`),
//! `Success` returns the one installed `CompactionNode`, guarded by the composition's binding and
//! ready to dispatch (`Composed::Installed`), and a failed revalidation is a `NodeError::Trust`
//! whose rendering names only the status.

use std::sync::{Arc, Mutex};

use hybrid_compaction::compose::composition::default_profile;
use hybrid_compaction::compose::{self, Composed, Composition};
use hybrid_compaction::lease::RunScope;
use hybrid_compaction::node::{
    select, ChatClient, CompactionEvent, EventKind, NodeError, NodeOptions, NodeSelection,
    ProgressSink, ProviderError, Reporter, ReporterIdentity,
};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::capability::{
    Acceptance, BundleLane, CapabilityEntry, CapabilityProfile, DeliveryPhase, COMPACTION,
};
use hybrid_compaction_model::composition::{
    ClientChain, ClientComponent, CompositionStatus, RunCoordination,
};
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::estimator::ConstantEstimator;
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::MessageCountingReducer;
use hybrid_compaction_model::trust::{
    BindingAccessor, Owners, TrustBinding, TrustContext, TrustStatus, WorkspaceId,
};

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

/// SPEC TRU-2, TRU-3 as the library types them: a failed revalidation is `NodeError::Trust`
/// naming only its status. (The events, the dispatch and the lease of each revalidation site are
/// the clause suite's, through the seam.)
#[test]
fn tru_2_tru_3_a_failed_revalidation_is_a_trust_node_error_naming_only_its_status() {
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
    // At step 12 too.
    let other = Some(TrustContext {
        workspace: Some(WorkspaceId(8)),
        ..good().unwrap()
    });
    let (mut node, sink) = guarded_node(vec![good(), other], "session-1");
    let e = call(&mut node).unwrap_err();
    assert!(matches!(&e, NodeError::Trust(t) if t.status == TrustStatus::WorkspaceMismatch));
    assert_eq!(sink.kinds(), vec![EventKind::Started, EventKind::Completed]);
    assert_eq!(
        e.to_string(),
        "trust binding revalidation failed: WorkspaceMismatch"
    );
}
