//! Clause tests for capability resolution, composition and trust (SPEC CAP-1, CAP-3, CAP-4,
//! CMP-1, CMP-3, CMP-4, TRU-1 .. TRU-3; departures DEP-14, DEP-15, DEP-17), through the seam:
//! `imp().effective_state` / `is_requested` / `is_executable`, `imp().default_profile`,
//! `imp().compose` (status, nodes installed, run coordination), `imp().trust` (one guarded
//! provider call: where it ends, its events, whether it dispatched, its failure) and
//! `imp().guarded_node_world` (a guarded node whose leases a test can watch).
//!
//! Expectations come from the SPEC text. The property tests at the end state each clause's rows
//! as predicates written from the SPEC (CAP-3's first match, CMP-3's check order, TRU-1's
//! all-or-nothing, TRU-2's order) and check them on generated inputs; that the library answers
//! exactly as the specification on the wire is the oracle's property (`oracle/tests/
//! adr_vectors.rs`). The declaration orders of CAP-2 and CMP-2 are vocabulary, tested in
//! `model/tests/vocabulary.rs`.

use std::sync::Arc;

use hybrid_compaction_model::capability::{
    Acceptance, AotStatus, BundleLane, CapabilityEntry, CapabilityMetadata, CapabilityName,
    CapabilityProfile, CapabilityState, DeliveryPhase, DiagnosticsStatus, Stability, TrustBoundary,
    COMPACTION,
};
use hybrid_compaction_model::composition::{
    ClientChain, ClientComponent, CompositionError, CompositionInput, CompositionStatus,
    RunCoordination,
};
use hybrid_compaction_model::reducers::MessageCountingReducer;
use hybrid_compaction_model::seam::{
    AssemblyScript, ComposeInput, Composition, ConfigureInput, ProviderReport, ScriptedAccessor,
    StreamPlan, TrustInput, TrustReport,
};
use hybrid_compaction_model::trust::{
    AttemptEnd, AttemptEvent, BindingAccessor, Owners, PartialTrustConfiguration, TrustBinding,
    TrustContext, TrustError, TrustGuard, TrustStatus, WorkspaceId,
};
use hybrid_compaction_model::*;
use proptest::prelude::*;

use super::common::*;
use super::node::{
    assert_gate_free_and_nothing_reserved, body_plan, counting, digest, failed, kinds,
    long_history, policy, reference, reporter, sent,
};
use crate::imp;

use AttemptEvent::{Completed, Composed, Started, Terminated};

// ------------------------------------------------------------------------------- fixtures ----

fn owners() -> Owners {
    Owners {
        user_id: "user-1".into(),
        orchestration_id: "orch-1".into(),
        session_id: "session-1".into(),
    }
}

fn binding() -> TrustBinding {
    TrustBinding {
        owners: owners(),
        workspace: WorkspaceId(7),
    }
}

fn ctx(user: &str, orch: &str, workspace: Option<u64>) -> Option<TrustContext> {
    Some(TrustContext {
        user_id: user.into(),
        orchestration_id: orch.into(),
        workspace: workspace.map(WorkspaceId),
    })
}

/// The context matching [`binding`].
fn good() -> Option<TrustContext> {
    ctx("user-1", "orch-1", Some(7))
}

/// An accessor answering `script[k]` at the k-th revalidation (the last one repeated).
fn accessor(script: Vec<Option<TrustContext>>) -> Arc<dyn BindingAccessor> {
    Arc::new(ScriptedAccessor::new(script))
}

/// One provider call through a node configured with `binding`, `accessor` and `session`, whose
/// assembly ends as `assembly`.
fn attempt(
    binding: Option<TrustBinding>,
    accessor: Option<Arc<dyn BindingAccessor>>,
    session: Option<&str>,
    assembly: AssemblyScript,
) -> Result<TrustReport, PartialTrustConfiguration> {
    imp().trust(TrustInput::fixed(
        binding,
        accessor,
        session.map(str::to_owned),
        assembly,
    ))
}

/// A fully guarded call with the accessor's `script`.
fn guarded(script: Vec<Option<TrustContext>>, assembly: AssemblyScript) -> TrustReport {
    attempt(
        Some(binding()),
        Some(accessor(script)),
        Some("session-1"),
        assembly,
    )
    .unwrap()
}

fn compaction(requested: bool, evidence: Option<DeliveryPhase>) -> CapabilityEntry {
    CapabilityEntry {
        metadata: COMPACTION,
        requested,
        evidence,
    }
}

fn profile(
    lane: BundleLane,
    coherent: bool,
    capabilities: Vec<CapabilityEntry>,
) -> CapabilityProfile {
    CapabilityProfile {
        lane,
        acceptance: Acceptance::StableAndExperimental,
        history_coherent: coherent,
        capabilities,
    }
}

fn enabled_compaction() -> Option<CapabilityEntry> {
    Some(compaction(true, Some(DeliveryPhase::G5)))
}

/// A composition's inputs: one client chain, one capability profile, the default binding,
/// accessor and session.
struct Setup {
    chain: ClientChain,
    capabilities: CapabilityProfile,
}

impl Setup {
    fn new(capability: Option<CapabilityEntry>) -> Setup {
        Setup {
            chain: ClientChain {
                components: vec![ClientComponent::Other],
            },
            capabilities: profile(
                BundleLane::SelectedProviders,
                true,
                capability.into_iter().collect(),
            ),
        }
    }

    fn input(&self, hybrid: bool) -> ComposeInput {
        ComposeInput {
            client: Some(self.chain.clone()),
            profile: Some(self.capabilities.clone()),
            binding: true,
            accessor: true,
            session_id: "session-1".into(),
            hybrid_profile: hybrid,
        }
    }

    /// The status and how many nodes were installed.
    fn compose(&self, hybrid: bool) -> (CompositionStatus, u32) {
        let c = imp().compose(self.input(hybrid)).unwrap();
        (c.status, c.nodes)
    }
}

// -------------------------------------------------------------------------------- CAP ----

#[test]
fn cap_1_compaction_metadata_is_fixed() {
    // SPEC CAP-1 (C# S75; ADR "exact trust-boundary, AOT, and diagnostics-status field values").
    let m: CapabilityMetadata = COMPACTION;
    assert_eq!(m.name, CapabilityName::Compaction);
    assert_eq!(m.stability, Stability::Experimental);
    assert_eq!(m.source, "Microsoft.Agents.AI");
    assert!(!m.bundle_default);
    assert!(!m.provider_requirement);
    assert_eq!(m.trust_boundary, TrustBoundary::ExternalContent);
    assert_eq!(m.aot, AotStatus::Unverified);
    assert_eq!(m.diagnostics, DiagnosticsStatus::Available);
    assert_eq!(m.delivery_phase, DeliveryPhase::G5);
    // The implementation resolves by these values: delivered at G5, Experimental, not a bundle
    // default (CAP-3).
    use Acceptance::*;
    use BundleLane::*;
    let state = |requested, evidence, lane, acceptance| {
        imp().effective_state(&compaction(requested, evidence), lane, acceptance)
    };
    use CapabilityState::{Deferred, Disabled, Enabled};
    use DeliveryPhase::{G4, G5, G6};
    assert_eq!(
        state(true, Some(G4), SelectedProviders, StableAndExperimental),
        Deferred
    );
    assert_eq!(
        state(true, Some(G5), SelectedProviders, StableAndExperimental),
        Enabled
    );
    assert_eq!(
        state(true, Some(G5), SelectedProviders, StableOnly),
        Disabled
    );
    assert!(!imp().is_requested(&compaction(false, Some(G6)), CompleteBundle));
    assert_eq!(
        state(false, Some(G6), CompleteBundle, StableAndExperimental),
        Disabled
    );
}

#[test]
fn cap_3_dep_17_effective_state_is_the_first_matching_row() {
    // SPEC CAP-3 (C# S75; ADR "Enabled only when both requested and accepted at its delivery
    // phase, Deferred when … not yet reached, Disabled when not requested"), DEP-17.
    use Acceptance::*;
    use BundleLane::*;
    use CapabilityState::*;
    use DeliveryPhase::*;
    let s = |requested, evidence, lane, acceptance| {
        imp().effective_state(&compaction(requested, evidence), lane, acceptance)
    };
    // Row 1: not requested, whatever else holds.
    assert_eq!(
        s(false, Some(G7), SelectedProviders, StableAndExperimental),
        Disabled
    );
    assert_eq!(
        s(false, Some(G7), CompleteBundle, StableAndExperimental),
        Disabled
    );
    // Row 2: the bundle lane needs G6, before acceptance is looked at (DEP-17).
    assert_eq!(
        s(true, Some(G5), CompleteBundle, StableAndExperimental),
        Deferred
    );
    assert_eq!(s(true, Some(G5), CompleteBundle, StableOnly), Deferred);
    assert_eq!(
        s(true, Some(G6), CompleteBundle, StableAndExperimental),
        Enabled
    );
    // Row 3: the declared phase G5.
    assert_eq!(
        s(true, Some(G4), SelectedProviders, StableAndExperimental),
        Deferred
    );
    assert_eq!(
        s(true, None, SelectedProviders, StableAndExperimental),
        Deferred
    );
    assert_eq!(s(true, Some(G4), SelectedProviders, StableOnly), Deferred);
    // Row 4: no experimental acceptance -> Disabled (DEP-17).
    assert_eq!(s(true, Some(G5), SelectedProviders, StableOnly), Disabled);
    // Row 5.
    assert_eq!(
        s(true, Some(G5), SelectedProviders, StableAndExperimental),
        Enabled
    );
    // A bundle default is requested on the bundle lane only.
    let default = CapabilityEntry {
        metadata: CapabilityMetadata {
            name: CapabilityName::Other(1),
            stability: Stability::Stable,
            bundle_default: true,
            delivery_phase: G2,
            ..COMPACTION
        },
        requested: false,
        evidence: Some(G6),
    };
    assert!(imp().is_requested(&default, CompleteBundle));
    assert!(!imp().is_requested(&default, SelectedProviders));
    assert_eq!(
        imp().effective_state(&default, CompleteBundle, StableOnly),
        Enabled
    );
    assert_eq!(
        imp().effective_state(&default, SelectedProviders, StableOnly),
        Disabled
    );
}

#[test]
fn cap_4_a_profile_is_executable_iff_active_capabilities_are_all_enabled_and_coherent() {
    // SPEC CAP-4 (C# S76).
    use BundleLane::SelectedProviders as Sel;
    let enabled = compaction(true, Some(DeliveryPhase::G5));
    let deferred_other = CapabilityEntry {
        metadata: CapabilityMetadata {
            name: CapabilityName::Other(2),
            ..COMPACTION
        },
        requested: true,
        evidence: Some(DeliveryPhase::G3),
    };
    let inactive_other = CapabilityEntry {
        requested: false,
        ..deferred_other
    };
    let executable = |coherent, caps| imp().is_executable(&profile(Sel, coherent, caps));
    assert!(executable(true, vec![enabled]));
    assert!(executable(true, vec![enabled, inactive_other]));
    assert!(!executable(false, vec![enabled]), "coherence");
    assert!(!executable(true, vec![enabled, deferred_other]));
    assert!(!executable(true, vec![]), "no active capability");
    assert!(!executable(true, vec![inactive_other]));
}

// -------------------------------------------------------------------------------- CMP ----

#[test]
fn cmp_1_the_default_strategies_profile_supplies_cls_2_and_snap_3() {
    // SPEC CMP-1 (C# S73): the constructor takes the policy and the reducer as given and
    // supplies the content-hash classifier (CLS-2) and the static integration (SNAP-3).
    let policy = text_policy(100, 10, 2, 3);
    let reducer = Box::new(MessageCountingReducer { target_count: 3 });
    let mut p = imp().default_profile(policy.clone(), reducer);
    assert_eq!(
        (p.policy.hard_limit(), p.policy.trigger_threshold()),
        (100, 90)
    );
    assert_eq!(
        (
            p.policy.preservation_label(),
            p.policy.preservation_version()
        ),
        (policy.preservation_label(), 1)
    );
    // The reducer as supplied: the system message and the last 3 others.
    let mut history = vec![Message::text("system", "s")];
    history.extend((0..5).map(|i| Message::text("user", format!("u{i}"))));
    let kept = p.reducer.reduce(&history).unwrap().unwrap();
    assert_eq!(
        kept,
        [
            history[0].clone(),
            history[3].clone(),
            history[4].clone(),
            history[5].clone()
        ]
    );
    // CLS-2: "{hex}:{n}" of the rendering "user U+001F text:hi U+001E", n counting earlier
    // identical renderings; never an override.
    let two = [Message::text("user", "hi"), Message::text("user", "hi")];
    let hex = sha_hex("user\u{1F}text:hi\u{1E}");
    assert_eq!(p.classifier.entry_id(&two, 0), Ok(format!("{hex}:0")));
    assert_eq!(p.classifier.entry_id(&two, 1), Ok(format!("{hex}:1")));
    assert_eq!(p.classifier.override_kind(&two, 0), None);
    // SNAP-3: a static provider over the baseline, always version 0.
    let baseline = vec![sys("s", "x"), conv("a", "x")];
    let mut provider = (p.integration)(baseline).expect("the static integration has a provider");
    for _ in 0..2 {
        let snapshot = provider.capture().unwrap();
        assert_eq!(snapshot.version(), 0);
        assert_eq!(ids(snapshot.entries()), s(&["s", "a"]));
    }
}

#[test]
fn cmp_3_missing_inputs_and_a_blank_session_are_argument_errors_in_order() {
    // SPEC CMP-3 steps 1-2 (C# S74): missing inputs in order, then the blank session; an error
    // answers no composition, so nothing is installed (CMP-4).
    let s = Setup::new(enabled_compaction());
    let run = |mutate: &dyn Fn(&mut ComposeInput)| {
        let mut input = s.input(true);
        mutate(&mut input);
        imp().compose(input).unwrap_err()
    };
    let missing = CompositionError::Missing;
    let e = run(&|r| {
        r.client = None;
        r.profile = None;
    });
    assert_eq!(
        (e, e.kind()),
        (missing(CompositionInput::Client), ErrorKind::NullArgument)
    );
    assert_eq!(
        run(&|r| {
            r.profile = None;
            r.accessor = false;
        }),
        missing(CompositionInput::CapabilityProfile)
    );
    assert_eq!(
        run(&|r| {
            r.binding = false;
            r.session_id = " ".into();
        }),
        missing(CompositionInput::ExecutionBinding)
    );
    let e = run(&|r| r.accessor = false);
    assert_eq!(
        (e, e.kind()),
        (
            missing(CompositionInput::BindingAccessor),
            ErrorKind::NullArgument
        )
    );
    for blank in ["", " \t", "\u{3000}", "\u{3000}\t"] {
        let e = run(&|r| r.session_id = blank.into());
        assert_eq!(
            (e, e.kind()),
            (CompositionError::BlankSession, ErrorKind::InvalidArgument)
        );
    }
}

#[test]
fn cmp_4_cmp_3_dep_17_fail_closed_statuses_are_decided_before_any_node_exists() {
    // SPEC CMP-3 steps 3-9 and CMP-4 (ADR "either one without the other fails closed before any
    // agent is constructed"; "Exactly one hybrid compaction component"), DEP-17: the four
    // fail-closed statuses, each before any node exists.
    use CompositionStatus::*;
    // A profile without the capability enabled (not requested; or requested but deferred).
    let not_requested = Setup::new(Some(compaction(false, Some(DeliveryPhase::G5))));
    assert_eq!(
        not_requested.compose(true),
        (ProfileSuppliedWithoutCapabilityEnabled, 0)
    );
    let deferred = Setup::new(Some(compaction(true, Some(DeliveryPhase::G4))));
    assert_eq!(
        deferred.compose(true),
        (ProfileSuppliedWithoutCapabilityEnabled, 0)
    );
    // The capability enabled without a profile.
    let enabled = Setup::new(enabled_compaction());
    assert_eq!(enabled.compose(false), (CapabilityEnabledWithoutProfile, 0));
    // A non-executable capability profile: incoherent history, or another active capability
    // deferred; no evidence at all for Compaction (DEP-17), or no Compaction capability.
    let mut incoherent = Setup::new(enabled_compaction());
    incoherent.capabilities.history_coherent = false;
    assert_eq!(incoherent.compose(true), (ProfileNotExecutable, 0));
    let mut other_deferred = Setup::new(enabled_compaction());
    other_deferred
        .capabilities
        .capabilities
        .push(CapabilityEntry {
            metadata: CapabilityMetadata {
                name: CapabilityName::Other(3),
                ..COMPACTION
            },
            requested: true,
            evidence: Some(DeliveryPhase::G2),
        });
    assert_eq!(other_deferred.compose(true), (ProfileNotExecutable, 0));
    let no_evidence = Setup::new(Some(compaction(true, None)));
    assert_eq!(no_evidence.compose(true), (ProfileNotExecutable, 0));
    assert_eq!(
        no_evidence.compose(false),
        (ProfileNotExecutable, 0),
        "step 3 precedes 6"
    );
    assert_eq!(Setup::new(None).compose(true), (ProfileNotExecutable, 0));
    // A second compaction component, wherever it sits in the chain.
    let mut second = Setup::new(enabled_compaction());
    second.chain.components.push(ClientComponent::Compaction);
    assert_eq!(second.compose(true), (ExistingCompactionComponent, 0));
    // Neither: Disabled, nothing built; an empty chain changes nothing.
    assert_eq!(not_requested.compose(false), (Disabled, 0));
    let mut bare = Setup::new(Some(compaction(true, Some(DeliveryPhase::G4))));
    bare.chain = ClientChain::default();
    assert_eq!(bare.compose(false), (Disabled, 0));
    // No failure status has a run coordinator.
    for s in [&not_requested, &deferred, &incoherent, &second] {
        assert_eq!(imp().compose(s.input(true)).unwrap().runs, None);
    }
    assert_eq!(imp().compose(enabled.input(false)).unwrap().runs, None);
    // Both: exactly one node, with a run coordinator shared with the agent.
    assert_eq!(
        imp().compose(enabled.input(true)),
        Ok(Composition {
            status: Success,
            nodes: 1,
            runs: Some(RunCoordination::SharedWithAgent),
        })
    );
}

#[test]
fn cmp_3_mismatches_are_decided_before_executability_and_the_chain() {
    // SPEC CMP-3 step order: the capability/profile mismatch is decided before executability
    // and before the existing-component check.
    let mut s = Setup::new(Some(compaction(false, Some(DeliveryPhase::G5))));
    s.capabilities.history_coherent = false;
    s.chain.components.push(ClientComponent::Compaction);
    assert_eq!(
        s.compose(true).0,
        CompositionStatus::ProfileSuppliedWithoutCapabilityEnabled
    );
    assert_eq!(s.compose(false).0, CompositionStatus::Disabled);
    let mut e = Setup::new(enabled_compaction());
    e.capabilities.history_coherent = false;
    e.chain.components.push(ClientComponent::Compaction);
    assert_eq!(e.compose(true).0, CompositionStatus::ProfileNotExecutable);
}

// -------------------------------------------------------------------------------- TRU ----

/// The context of the binding the seam composes with (its default binding).
fn composed_context() -> Option<TrustContext> {
    Some(hybrid_compaction_model::seam::composition::context_of(
        &hybrid_compaction_model::seam::composition::default_binding(),
    ))
}

/// The provider composer's report of `input` with the accessor answering `context`.
fn provide(input: ComposeInput, context: Option<TrustContext>) -> ProviderReport {
    imp().compose_provider(input, context).unwrap()
}

#[test]
fn cmp_5_the_provider_composer_validates_the_binding_and_maps_the_statuses() {
    // SPEC CMP-5 (C# S74 "validates the execution binding first, maps failures to Compaction…
    // statuses before any agent is built"): the mapping of every narrow status, an agent exactly
    // on Success (with a node only when compaction succeeded), no agent and no node otherwise.
    use composition::ProviderCompositionStatus as P;
    let report = |s: &Setup, hybrid: bool| provide(s.input(hybrid), composed_context());
    let enabled = Setup::new(enabled_compaction());
    assert_eq!(
        report(&enabled, true),
        ProviderReport {
            status: P::Success,
            binding: None,
            agent: true,
            nodes: 1,
            runs: Some(RunCoordination::SharedWithAgent),
        }
    );
    let r = report(&enabled, false);
    assert_eq!(
        (r.status, r.agent, r.nodes),
        (P::CompactionCapabilityEnabledWithoutProfile, false, 0)
    );
    let not_requested = Setup::new(Some(compaction(false, Some(DeliveryPhase::G5))));
    let r = report(&not_requested, true);
    assert_eq!(
        (r.status, r.agent, r.nodes),
        (
            P::CompactionProfileSuppliedWithoutCapabilityEnabled,
            false,
            0
        )
    );
    // Compaction Disabled: the agent is built without a node.
    assert_eq!(
        report(&not_requested, false),
        ProviderReport {
            status: P::Success,
            binding: None,
            agent: true,
            nodes: 0,
            runs: None,
        }
    );
    let mut incoherent = Setup::new(enabled_compaction());
    incoherent.capabilities.history_coherent = false;
    let r = report(&incoherent, true);
    assert_eq!(
        (r.status, r.agent),
        (P::CompactionProfileNotExecutable, false)
    );
    assert_eq!(
        report(&Setup::new(None), true).status,
        P::CompactionProfileNotExecutable
    );
    let mut second = Setup::new(enabled_compaction());
    second.chain.components.push(ClientComponent::Compaction);
    let r = report(&second, true);
    assert_eq!(
        (r.status, r.agent, r.nodes),
        (P::CompactionExistingComponent, false, 0)
    );
    // The fixed mapping, status by status.
    for s in CompositionStatus::ALL {
        let mapped = P::of(s);
        let expected = match s {
            CompositionStatus::Disabled | CompositionStatus::Success => P::Success,
            other => P::from_name(&format!("Compaction{}", other.name()))
                .or_else(|| P::from_name("CompactionExistingComponent"))
                .unwrap(),
        };
        assert_eq!(mapped, expected, "{s}");
    }
}

#[test]
fn cmp_5_tru_2_the_execution_binding_is_validated_first() {
    // SPEC CMP-5 step 2: TRU-2's checks against the accessor's current context, before the
    // compaction statuses: a failure is ExecutionBindingInvalid with its reason, no agent.
    use composition::ProviderCompositionStatus as P;
    let mut second = Setup::new(enabled_compaction());
    second.chain.components.push(ClientComponent::Compaction);
    let invalid = |input: ComposeInput, context, status| {
        let r = provide(input, context);
        assert_eq!(
            (r.status, r.binding, r.agent, r.nodes),
            (P::ExecutionBindingInvalid, Some(status), false, 0)
        );
    };
    invalid(second.input(true), None, TrustStatus::MissingContext);
    invalid(
        second.input(true),
        ctx("user-2", "orch-1", Some(1)),
        TrustStatus::IdentityMismatch,
    );
    invalid(
        second.input(false),
        ctx("user-1", "orch-1", None),
        TrustStatus::MissingWorkspace,
    );
    invalid(
        second.input(true),
        ctx("user-1", "orch-1", Some(2)),
        TrustStatus::WorkspaceMismatch,
    );
    for session in ["session-2", " "] {
        let mut input = second.input(true);
        input.session_id = session.into();
        invalid(input, composed_context(), TrustStatus::SessionMismatch);
    }
    // The missing inputs of CMP-3 step 1 are errors before the binding is validated.
    let mut no_binding = second.input(true);
    no_binding.binding = false;
    assert_eq!(
        imp().compose_provider(no_binding, None),
        Err(CompositionError::Missing(
            CompositionInput::ExecutionBinding
        ))
    );
    let mut no_accessor = second.input(true);
    no_accessor.accessor = false;
    assert_eq!(
        imp().compose_provider(no_accessor, None),
        Err(CompositionError::Missing(CompositionInput::BindingAccessor))
    );
    let mut no_client = second.input(true);
    no_client.client = None;
    assert_eq!(
        imp().compose_provider(no_client, None),
        Err(CompositionError::Missing(CompositionInput::Client))
    );
}

#[test]
fn tru_1_dep_15_the_trust_configuration_is_all_or_nothing() {
    // SPEC TRU-1 (C# S77), DEP-15: all three present -> a guarded node; all absent -> an
    // unguarded one; anything else is refused at construction.
    let success = AssemblyScript::Success;
    let none = attempt(None, None, None, success).unwrap();
    assert!(!none.guarded);
    assert_eq!(none.end, AttemptEnd::Success, "no binding, no revalidation");
    let all = attempt(
        Some(binding()),
        Some(accessor(vec![good()])),
        Some("session-1"),
        success,
    )
    .unwrap();
    assert!(all.guarded);
    let a = || Some(accessor(vec![good()]));
    let partial = [
        attempt(Some(binding()), None, None, success),
        attempt(None, a(), None, success),
        attempt(None, None, Some("session-1"), success),
        attempt(Some(binding()), a(), None, success),
        attempt(Some(binding()), None, Some("session-1"), success),
        attempt(None, a(), Some("session-1"), success),
        attempt(Some(binding()), a(), Some("  "), success),
    ];
    for p in partial {
        assert_eq!(p.unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    // Refused before the node can be used: no node world is handed out.
    let options = || {
        (
            policy(),
            Box::new(counting()) as seam::BoxedUpstream<'static>,
        )
    };
    let refused = imp()
        .guarded_node_world(options(), None, Some(binding()), None, Some("session-1"))
        .err();
    assert_eq!(refused.map(|e| e.kind()), Some(ErrorKind::InvalidArgument));
    assert!(imp()
        .guarded_node_world(options(), None, None, None, None)
        .is_ok());
}

#[test]
fn tru_2_revalidation_fails_with_the_first_failing_status() {
    // SPEC TRU-2 (C# S77): each status, in check order; the error names only the status.
    let check = |session: &str, context: Option<TrustContext>| {
        let r = attempt(
            Some(binding()),
            Some(accessor(vec![context])),
            Some(session),
            AssemblyScript::Success,
        )
        .unwrap();
        if let Some(f) = r.failure {
            assert_eq!(f.kind, ErrorKind::InvalidOperation);
            assert_eq!(r.end, AttemptEnd::BeforeStarted, "the first revalidation");
        }
        r.failure.and_then(|f| f.status)
    };
    use TrustStatus::*;
    assert_eq!(check("session-1", good()), None);
    assert_eq!(check("session-2", None), Some(SessionMismatch));
    assert_eq!(check("session-1", None), Some(MissingContext));
    assert_eq!(
        check("session-1", ctx("user-2", "orch-1", None)),
        Some(IdentityMismatch)
    );
    assert_eq!(
        check("session-1", ctx("user-1", "orch-2", Some(7))),
        Some(IdentityMismatch)
    );
    assert_eq!(
        check("session-1", ctx("user-1", "orch-1", None)),
        Some(MissingWorkspace)
    );
    assert_eq!(
        check("session-1", ctx("user-1", "orch-1", Some(8))),
        Some(WorkspaceMismatch)
    );
    let names: Vec<&str> = TrustStatus::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        [
            "SessionMismatch",
            "MissingContext",
            "IdentityMismatch",
            "MissingWorkspace",
            "WorkspaceMismatch"
        ]
    );
    let e = TrustError {
        status: IdentityMismatch,
    };
    assert_eq!(e.kind(), ErrorKind::InvalidOperation);
    assert_eq!(
        e.to_string(),
        "trust binding revalidation failed: IdentityMismatch"
    );
    let guard = TrustGuard {
        binding: binding(),
        accessor: accessor(vec![good()]),
        session_id: "session-1".into(),
    };
    let rendered = format!("{guard:?} {:?} {:?}", binding(), good());
    for secret in ["user-1", "orch-1", "session-1"] {
        assert!(!rendered.contains(secret), "{secret} in {rendered}");
    }
}

#[test]
fn tru_3_dep_14_events_by_where_the_attempt_ends() {
    // SPEC TRU-3 (C# S52 steps 1 and 12, S53; ADR "a context-composed … event … only after the
    // same post-assembly trust revalidation"), DEP-14.
    let other = ctx("user-1", "orch-1", Some(8));
    let cases = [
        (
            guarded(vec![None], AssemblyScript::Success),
            AttemptEnd::BeforeStarted,
            vec![],
        ),
        (
            guarded(vec![good()], AssemblyScript::Failed),
            AttemptEnd::DuringAssembly,
            vec![Started],
        ),
        (
            guarded(vec![good()], AssemblyScript::Terminated),
            AttemptEnd::Terminated,
            vec![Started, Terminated],
        ),
        (
            guarded(vec![good(), other], AssemblyScript::Success),
            AttemptEnd::RevalidationAfterAssembly,
            vec![Started, Completed],
        ),
        (
            guarded(vec![good()], AssemblyScript::Success),
            AttemptEnd::Success,
            vec![Started, Completed, Composed],
        ),
    ];
    for (report, end, events) in cases {
        assert_eq!(report.end, end);
        assert_eq!(report.events, events, "{end:?}");
        // Composed only on success, and only success dispatches; never both Completed and
        // Terminated; every other end is an error.
        assert_eq!(
            report.events.contains(&Composed),
            end == AttemptEnd::Success
        );
        assert_eq!(report.dispatched, end == AttemptEnd::Success);
        assert_eq!(report.failure.is_none(), end == AttemptEnd::Success);
        assert!(!(report.events.contains(&Completed) && report.events.contains(&Terminated)));
    }
    // The errors of the two ends inside assembly keep their own kinds, not a trust status.
    let failed = guarded(vec![good()], AssemblyScript::Failed)
        .failure
        .unwrap();
    assert_eq!(
        (failed.kind, failed.status),
        (ErrorKind::ReducerFailed, None)
    );
    let terminated = guarded(vec![good()], AssemblyScript::Terminated)
        .failure
        .unwrap();
    assert_eq!(
        (terminated.kind, terminated.status),
        (ErrorKind::InvalidOperation, None)
    );
}

#[test]
fn tru_3_node_3_a_failed_first_revalidation_emits_nothing_and_dispatches_nothing() {
    // SPEC TRU-3, NODE-3 step 1.
    let r = guarded(vec![None], AssemblyScript::Success);
    let f = r.failure.unwrap();
    assert_eq!(f.kind, ErrorKind::InvalidOperation);
    assert_eq!(f.status, Some(TrustStatus::MissingContext));
    assert!(r.events.is_empty());
    assert!(!r.dispatched);
}

#[test]
fn tru_3_dep_14_a_failed_second_revalidation_leaves_started_completed_and_no_dispatch() {
    // SPEC TRU-3, NODE-3 step 12, DEP-14.
    let other = ctx("user-1", "orch-1", Some(8));
    let r = guarded(vec![good(), other], AssemblyScript::Success);
    assert_eq!(
        r.failure.unwrap().status,
        Some(TrustStatus::WorkspaceMismatch)
    );
    assert_eq!(r.events, [Started, Completed]);
    assert!(!r.dispatched);
}

#[test]
fn tru_3_both_revalidations_pass_and_the_call_completes() {
    let r = guarded(vec![good()], AssemblyScript::Success);
    assert!(r.guarded && r.failure.is_none());
    assert_eq!(r.events, [Started, Completed, Composed]);
    assert!(r.dispatched);
}

#[test]
fn tru_3_node_5_a_failed_second_revalidation_releases_the_lease_for_a_later_call() {
    // One run: the first call fails at step 12, so its reservation of the recovered body is
    // released and the second call of the same run delivers the body (SPEC NODE-5, LSE-4).
    let bad = ctx("user-2", "orch-1", Some(7));
    let mut w = imp()
        .guarded_node_world(
            (policy(), Box::new(counting())),
            Some(&reporter()),
            Some(binding()),
            Some(accessor(vec![good(), bad, good()])),
            Some("session-1"),
        )
        .unwrap();
    w.begin_run();
    let plan = body_plan(vec![Message::text("user", reference().to_string())]);
    let first = w.call(&plan);
    let (error, termination, dispatched) = failed(&first);
    assert_eq!(error.kind, ErrorKind::InvalidOperation);
    assert!(termination.is_none());
    assert!(dispatched.is_none() && first.events_before_dispatch.is_none());
    // TRU-2: the error names the status, and no owner.
    assert!(
        error.message.contains("IdentityMismatch"),
        "{}",
        error.message
    );
    for secret in ["user-1", "user-2", "orch-1", "session-1"] {
        assert!(!error.message.contains(secret), "{}", error.message);
    }
    assert_eq!(kinds(&first.events), [Started, Completed]);
    assert_gate_free_and_nothing_reserved(w.view());
    let second = w.call(&plan);
    assert_eq!(sent(&second).1, [digest()]);
    assert_eq!(kinds(&second.events), [Started, Completed, Composed]);
    assert!(w.view().unwrap().delivered.contains(&digest()));
}

#[test]
fn tru_4_a_chosen_history_plain_or_streaming_keeps_tru_3_and_reports_its_diagnostics() {
    // SPEC TRU-4 (C# S51 "plain or streaming", S52 steps 1 and 12): 120 units over the
    // threshold, the counting reducer keeps 40 (Reduced); both revalidations happen before any
    // stream exists; `Completed` carries the assembly's diagnostics even when step 12 fails.
    let chosen = |script: Vec<Option<TrustContext>>, stream: Option<StreamPlan>| TrustInput {
        messages: Some(long_history()),
        policy: Some(policy()),
        reducer: Some(Box::new(counting())),
        stream,
        ..TrustInput::fixed(
            Some(binding()),
            Some(accessor(script)),
            Some("session-1".into()),
            AssemblyScript::Success,
        )
    };
    let plan = |updates, reads| StreamPlan {
        updates,
        error_at: None,
        reads,
    };
    for stream in [None, Some(plan(2, None))] {
        let r = imp().trust(chosen(vec![good()], stream)).unwrap();
        assert_eq!(r.events, [Started, Completed, Composed]);
        assert!(r.dispatched && r.failure.is_none());
        assert_eq!(r.streamed, stream.map(|_| 2));
        assert_eq!(r.sent.as_ref().map(Vec::len), Some(4));
        let d = r.diagnostics.as_ref().expect("a success has diagnostics");
        assert_eq!(
            (d.outcome, d.original_size, d.final_size),
            (CompactionOutcome::Reduced, 120, 40)
        );
        let bad = ctx("user-2", "orch-1", Some(7));
        let refused = imp().trust(chosen(vec![good(), bad], stream)).unwrap();
        assert_eq!(refused.end, AttemptEnd::RevalidationAfterAssembly);
        assert_eq!(refused.events, [Started, Completed]);
        assert!(!refused.dispatched && refused.sent.is_none() && refused.streamed.is_none());
        assert_eq!(
            refused.failure.and_then(|f| f.status),
            Some(TrustStatus::IdentityMismatch)
        );
        assert_eq!(refused.diagnostics, r.diagnostics);
    }
    // No revalidation while the stream is read: the accessor's third answer is never asked.
    let r = imp()
        .trust(chosen(vec![good(), good(), None], Some(plan(3, Some(1)))))
        .unwrap();
    assert!(r.failure.is_none() && r.dispatched);
    assert_eq!(r.streamed, Some(1));
    // A failed first revalidation: no event, no diagnostics, no stream.
    let r = imp()
        .trust(chosen(vec![None], Some(plan(1, None))))
        .unwrap();
    assert_eq!(r.end, AttemptEnd::BeforeStarted);
    assert!(r.events.is_empty() && r.diagnostics.is_none() && !r.dispatched);
    assert!(r.streamed.is_none());
}

// -------------------------------------------------------- properties stated from the SPEC ----

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

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

/// SPEC CAP-3, written as its rows: requested, then the first matching row.
fn cap_3_rows(e: &CapabilityEntry, lane: BundleLane, acceptance: Acceptance) -> CapabilityState {
    let requested =
        e.requested || (e.metadata.bundle_default && lane == BundleLane::CompleteBundle);
    let reached = |p: DeliveryPhase| e.evidence.is_some_and(|x| x.value() >= p.value());
    let accepted = acceptance == Acceptance::StableAndExperimental
        || e.metadata.stability == Stability::Stable;
    // Rows 1-4 in order; the first that matches decides, else row 5.
    let rows = [
        (!requested, CapabilityState::Disabled),
        (
            lane == BundleLane::CompleteBundle && !reached(DeliveryPhase::G6),
            CapabilityState::Deferred,
        ),
        (
            !reached(e.metadata.delivery_phase),
            CapabilityState::Deferred,
        ),
        (!accepted, CapabilityState::Disabled),
    ];
    rows.iter()
        .find(|(matches, _)| *matches)
        .map_or(CapabilityState::Enabled, |(_, state)| *state)
}

/// SPEC CAP-4: at least one active capability, all active ones Enabled, coherence.
fn cap_4_executable(p: &CapabilityProfile) -> bool {
    let requested = |e: &CapabilityEntry| {
        e.requested || (e.metadata.bundle_default && p.lane == BundleLane::CompleteBundle)
    };
    let active: Vec<&CapabilityEntry> = p.capabilities.iter().filter(|e| requested(e)).collect();
    !active.is_empty()
        && active
            .iter()
            .all(|e| cap_3_rows(e, p.lane, p.acceptance) == CapabilityState::Enabled)
        && p.history_coherent
}

/// SPEC CMP-3 steps 3-9 on complete inputs, in order.
fn cmp_3_status(p: &CapabilityProfile, chain: &ClientChain, hybrid: bool) -> CompositionStatus {
    use CompositionStatus::*;
    let Some(c) = p
        .capabilities
        .iter()
        .find(|c| c.metadata.name == CapabilityName::Compaction && c.evidence.is_some())
    else {
        return ProfileNotExecutable;
    };
    let enabled = cap_3_rows(c, p.lane, p.acceptance) == CapabilityState::Enabled;
    match (enabled, hybrid) {
        (true, false) => CapabilityEnabledWithoutProfile,
        (false, true) => ProfileSuppliedWithoutCapabilityEnabled,
        (false, false) => Disabled,
        _ if !cap_4_executable(p) => ProfileNotExecutable,
        _ if chain.components.contains(&ClientComponent::Compaction) => ExistingCompactionComponent,
        _ => Success,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// SPEC CAP-3, CAP-4 on generated profiles.
    #[test]
    fn cap_3_cap_4_resolution_follows_the_rows_for_any_profile(p in capability_profile()) {
        for e in &p.capabilities {
            let requested =
                e.requested || (e.metadata.bundle_default && p.lane == BundleLane::CompleteBundle);
            prop_assert_eq!(imp().is_requested(e, p.lane), requested);
            prop_assert_eq!(
                imp().effective_state(e, p.lane, p.acceptance),
                cap_3_rows(e, p.lane, p.acceptance)
            );
        }
        prop_assert_eq!(imp().is_executable(&p), cap_4_executable(&p));
    }

    /// SPEC CMP-3, CMP-4 on generated inputs: the first failing check decides; a node exists
    /// exactly for `Success`.
    #[test]
    fn cmp_3_cmp_4_composition_follows_the_check_order_for_any_input(
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
        // Steps 1 and 2, in order.
        let want = if !client {
            Err(CompositionError::Missing(CompositionInput::Client))
        } else if p.is_none() {
            Err(CompositionError::Missing(CompositionInput::CapabilityProfile))
        } else if !has_binding {
            Err(CompositionError::Missing(CompositionInput::ExecutionBinding))
        } else if !has_accessor {
            Err(CompositionError::Missing(CompositionInput::BindingAccessor))
        } else if session.trim().is_empty() {
            Err(CompositionError::BlankSession)
        } else {
            Ok(p.as_ref().map(|p| cmp_3_status(p, &chain, hybrid)))
        };
        let got = imp().compose(ComposeInput {
            client: client.then_some(chain.clone()),
            profile: p.clone(),
            binding: has_binding,
            accessor: has_accessor,
            session_id: session.into(),
            hybrid_profile: hybrid,
        });
        match (want, got) {
            (Ok(Some(status)), Ok(c)) => {
                prop_assert_eq!(c.status, status);
                let success = status == CompositionStatus::Success;
                prop_assert_eq!(c.nodes, u32::from(success));
                prop_assert_eq!(c.runs, success.then_some(RunCoordination::SharedWithAgent));
            }
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            (w, g) => prop_assert!(false, "SPEC {:?}, {} {:?}", w, imp().name(), g),
        }
    }

    /// SPEC TRU-1, TRU-2 on generated configurations and contexts: all or nothing, then the
    /// first failing check of the first revalidation.
    #[test]
    fn tru_1_tru_2_configuration_and_revalidation_follow_the_order_for_any_input(
        context in context(),
        session in prop::sample::select(vec!["session-1", "session-2", "", "\u{3000}"]),
        parts in (any::<bool>(), any::<bool>(), any::<bool>()),
    ) {
        let got = attempt(
            parts.0.then(binding),
            parts.1.then(|| accessor(vec![context.clone()])),
            parts.2.then_some(session),
            AssemblyScript::Success,
        );
        let blank = session.chars().all(char::is_whitespace);
        match parts {
            (false, false, false) => {
                let r = got.unwrap();
                prop_assert!(!r.guarded);
                prop_assert_eq!(r.end, AttemptEnd::Success);
            }
            (true, true, true) if !blank => {
                let r = got.unwrap();
                prop_assert!(r.guarded);
                use TrustStatus::*;
                let want = if session != "session-1" {
                    Some(SessionMismatch)
                } else {
                    match &context {
                        None => Some(MissingContext),
                        Some(c) if c.user_id != "user-1" || c.orchestration_id != "orch-1" => {
                            Some(IdentityMismatch)
                        }
                        Some(c) => match c.workspace {
                            None => Some(MissingWorkspace),
                            Some(w) if w != WorkspaceId(7) => Some(WorkspaceMismatch),
                            Some(_) => None,
                        },
                    }
                };
                prop_assert_eq!(r.failure.and_then(|f| f.status), want);
                let end = if want.is_some() { AttemptEnd::BeforeStarted } else { AttemptEnd::Success };
                prop_assert_eq!(r.end, end);
            }
            _ => prop_assert_eq!(got.unwrap_err().kind(), ErrorKind::InvalidArgument),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// CFG: the public configuration path, on both implementations

fn public_input(
    enabled: bool,
    options: bool,
    upstream: configuration::UpstreamCompaction,
) -> ConfigureInput {
    ConfigureInput {
        enabled,
        options: options.then_some(configuration::PublicOptions {
            hard_limit_bytes: 1000,
            trigger_margin_bytes: 10,
            recent_message_retention_count: 1,
            maximum_compaction_attempts: 3,
            upstream_reducer: Some(MessageCountingReducer { target_count: 2 }),
        }),
        upstream,
        client: ClientChain::default(),
    }
}

fn upstream(
    enabled: bool,
    strategy: bool,
    budgets: (Option<i32>, Option<i32>),
) -> configuration::UpstreamCompaction {
    configuration::UpstreamCompaction {
        enabled,
        strategy,
        max_context_window_tokens: budgets.0,
        max_output_tokens: budgets.1,
    }
}

/// SPEC CFG-5 (C# S84, S85; the reference's report tests): the upstream framework's switch is
/// checked first (budgets positive, output below the window, a backing when on), and the report's
/// two compaction rows carry their fixed limitation texts and backings; the switches are
/// independent.
#[test]
fn cfg_5_the_upstream_compaction_switch_is_checked_and_reported() {
    use configuration::{BundleFeature, ConfigurationError as E, DefaultSource, TokenBudget};
    let err = |i: ConfigureInput| {
        let e = imp().configure(i).unwrap_err();
        (e.clone(), e.kind())
    };
    // Checks in order, before CFG-2's (the hybrid switch without options would fail too).
    assert_eq!(
        err(public_input(
            true,
            false,
            upstream(true, false, (Some(0), Some(-1)))
        )),
        (
            E::TokenBudget(TokenBudget::MaxContextWindowTokens),
            ErrorKind::OutOfRange
        )
    );
    assert_eq!(
        err(public_input(
            true,
            false,
            upstream(false, false, (None, Some(0)))
        )),
        (
            E::TokenBudget(TokenBudget::MaxOutputTokens),
            ErrorKind::OutOfRange
        )
    );
    assert_eq!(
        err(public_input(
            true,
            false,
            upstream(true, true, (Some(8), Some(8)))
        )),
        (
            E::OutputBudgetNotBelowContextWindow,
            ErrorKind::InvalidArgument
        )
    );
    assert_eq!(
        err(public_input(
            true,
            false,
            upstream(true, false, (Some(8), None))
        )),
        (
            E::UpstreamCompactionWithoutBacking,
            ErrorKind::InvalidArgument
        )
    );
    assert_eq!(
        err(public_input(
            true,
            false,
            upstream(false, false, (None, None))
        )),
        (E::EnabledWithoutOptions, ErrorKind::InvalidArgument)
    );
    // The rows: the upstream compaction's per-turn limitation, backed by the budgets.
    let on = imp()
        .configure(public_input(
            false,
            false,
            upstream(true, false, (Some(16000), Some(1024))),
        ))
        .unwrap();
    let [u, h] = on.dispositions;
    assert_eq!(u.feature, BundleFeature::Compaction);
    assert_eq!(
        (u.requested, u.effective, u.backing),
        (
            configuration::RequestedState::RequestedEnabled,
            configuration::EffectiveState::Enabled,
            DefaultSource::UpstreamDefault
        )
    );
    assert!(u.limitation.unwrap().contains("once per agent turn"));
    assert!(u.backing_description.unwrap().contains("token budgets"));
    assert_eq!(
        h,
        configuration::FeatureDisposition::disabled(BundleFeature::HybridCompaction)
    );
    assert!(on.compaction.is_none());
    // A strategy backs it without budgets; hybrid compaction on alone, and both on.
    let strategy = imp()
        .configure(public_input(true, true, upstream(true, true, (None, None))))
        .unwrap();
    let [u, h] = strategy.dispositions;
    assert_eq!(u.backing, DefaultSource::CallerSupplied);
    assert!(u
        .backing_description
        .unwrap()
        .contains("CompactionStrategy"));
    assert_eq!(h.effective, configuration::EffectiveState::Enabled);
    assert!(h.limitation.unwrap().contains("UTF-8 bytes"));
    assert_eq!(h.backing, DefaultSource::CallerSupplied);
    assert!(h.backing_description.unwrap().contains("innermost"));
    assert!(strategy.compaction.is_some());
    let hybrid_alone = imp()
        .configure(public_input(
            true,
            true,
            upstream(false, false, (None, None)),
        ))
        .unwrap();
    assert_eq!(
        hybrid_alone.dispositions[0],
        configuration::FeatureDisposition::disabled(BundleFeature::Compaction)
    );
    assert_eq!(hybrid_alone.dispositions[1], h);
    // Budgets without the switch are checked but report nothing.
    let off = imp()
        .configure(public_input(
            false,
            false,
            upstream(false, false, (Some(9), Some(2))),
        ))
        .unwrap();
    assert_eq!(
        off.dispositions,
        [
            configuration::FeatureDisposition::disabled(BundleFeature::Compaction),
            configuration::FeatureDisposition::disabled(BundleFeature::HybridCompaction)
        ]
    );
}

/// SPEC CFG-2, CFG-3 on both implementations: the checks and the public defaults.
#[test]
fn cfg_2_cfg_3_the_public_path_on_both_implementations() {
    use configuration::ConfigurationError as E;
    let none = upstream(false, false, (None, None));
    let mut existing = public_input(true, true, none);
    existing.client = ClientChain {
        components: vec![ClientComponent::Compaction],
    };
    assert_eq!(
        imp().configure(existing).unwrap_err(),
        E::ExistingCompactionComponent
    );
    assert_eq!(
        imp()
            .configure(public_input(false, true, none))
            .unwrap_err(),
        E::OptionsWithoutEnabled
    );
    let mut no_reducer = public_input(true, true, none);
    no_reducer.options.as_mut().unwrap().upstream_reducer = None;
    assert_eq!(imp().configure(no_reducer).unwrap_err(), E::MissingReducer);
    let c = imp()
        .configure(public_input(true, true, none))
        .unwrap()
        .compaction
        .unwrap();
    assert_eq!(c.policy.preservation_label(), "foundry-harness-bundle");
    assert_eq!(c.policy.preservation_version(), 1);
    assert_eq!(c.policy.estimator().unit(), MeasurementUnit::Utf8Bytes);
    assert_eq!(c.policy.trigger_threshold(), 990);
    assert_eq!(c.runs, RunCoordination::CallLocal);
    assert!(!c.trust_binding && !c.capability_resolver_consulted);
}

/// SPEC CFG-6 (ADR: every intermediate tool round is bounded; the framework's seam evaluates
/// once per agent turn): three tool rounds of 120-byte results under a 1000-byte limit with a
/// 10-byte margin; the strategy runs once per turn, the node's reducer on each call over the
/// trigger, and the stored history keeps every message.
#[test]
fn cfg_6_the_tool_loop_bounds_every_round_while_the_strategy_runs_once_per_turn() {
    use hybrid_compaction_model::seam::bundle::{
        tool_loop, BundleInput, RoundScript, ToolCallScript, TurnScript,
    };
    let tools = |k: usize| {
        let mut rounds: Vec<RoundScript> = (0..k)
            .map(|i| {
                RoundScript::ToolCalls(vec![ToolCallScript {
                    call_id: format!("c{i}"),
                    name: "read".into(),
                    result: "é".repeat(200),
                }])
            })
            .collect();
        rounds.push(RoundScript::Answer("done".into()));
        rounds
    };
    let run = |hybrid: bool, strategy: Option<usize>| {
        let input = BundleInput {
            configure: public_input(hybrid, hybrid, upstream(false, false, (None, None))),
            strategy_keep_last: strategy,
            history: vec![Message::text("system", "s")],
            turns: vec![
                TurnScript {
                    user: "q".into(),
                    rounds: tools(3),
                },
                TurnScript {
                    user: "again".into(),
                    rounds: tools(1),
                },
            ],
        };
        tool_loop(imp(), input).unwrap()
    };
    // The strategy alone: once per turn; the rounds grow unbounded (4 + 2 provider calls).
    let alone = run(false, Some(50));
    assert_eq!((alone.strategy.len(), alone.reducer.len()), (2, 0));
    assert_eq!(alone.rounds.len(), 6);
    let sizes: Vec<usize> = alone
        .rounds
        .iter()
        .map(|r| r.received.as_ref().unwrap().len())
        .collect();
    assert_eq!(sizes, [2, 4, 6, 8, 10, 12]);
    // The node: every round is assembled; a call whose context reaches the trigger calls the
    // reducer, and no call sends more than the limit: it is bounded, or it fails (a termination)
    // and its turn ends there (CFG-3's L2: never forwarded over budget).
    let bounded = run(true, None);
    assert!(bounded.strategy.is_empty());
    assert!(!bounded.reducer.is_empty());
    for (k, r) in bounded.rounds.iter().enumerate() {
        match (&r.received, &r.error) {
            (Some(sent), None) => {
                let bytes: usize = sent.iter().map(|m| m.text_content().len()).sum();
                assert!(bytes < 1000, "{sent:?}");
            }
            (None, Some(e)) => {
                assert_eq!(e.kind, ErrorKind::InvalidOperation);
                let next = bounded.rounds.get(k + 1);
                assert!(next.is_none_or(|n| n.turn == r.turn + 1), "the turn ends");
            }
            other => panic!("{other:?}"),
        }
    }
    for inv in &bounded.reducer {
        let out = inv.output.as_ref().unwrap();
        assert!(
            out.len() < inv.input.len(),
            "the reducer kept system and the last 2"
        );
    }
    // The stored history is never reduced: it keeps every message any call received.
    for r in &bounded.rounds {
        for m in r.received.iter().flatten() {
            assert!(bounded.history.contains(m));
        }
    }
    assert_eq!(alone.history.len(), 1 + 1 + 3 * 2 + 1 + 1 + 2 + 1);
}
