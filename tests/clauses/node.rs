//! Clause tests for the per-provider-call node and its progress events (SPEC NODE-1 .. NODE-5,
//! EVT-1 .. EVT-6; CFG-4 for the node's history; LSE-6 .. LSE-10 as the node drives them),
//! through the seam's node world (`imp().node_world`): one node on one logical flow, each call a
//! `CallPlan`, each answer a `CallRecord` of plain values.
//!
//! Histories are measured with the host-defined `ConstantEstimator(10)` (every entry is 10
//! units), so sizes, thresholds and termination sizes are computed on paper. A recovered body
//! reaches a call the way a host integration adds one: the call's schedule is the adapted
//! baseline plus a `RecoverableContextSegment` for the body (SPEC NODE-3 step 4).
//!
//! What the node world cannot show stays with the library (`tests/node.rs`): the builder that
//! injects a classifier, an integration or an id source (NODE-6), the reporter's clock and shared
//! sequence source (EVT-3), the same-allocation diagnostics (EVT-4), the streaming and selection
//! types, the `Debug` renderings of the library's events, and concurrent calls on two threads.
//! The world is synchronous: a call waiting at a gate another call holds (`hold_gate`) can only
//! be cancelled while it waits.

#[path = "../support/markers.rs"]
mod markers;

use std::collections::BTreeMap;
use std::sync::Arc;

use hybrid_compaction_model::lease::{LeaseError, LeaseId};
use hybrid_compaction_model::reducers::{
    MessageCountingReducer, ScriptedUpstreamReducer, UpstreamReducer, UpstreamStep,
};
use hybrid_compaction_model::seam::park::{call_parked, ParkSlot, ParkingReducer};
use hybrid_compaction_model::seam::{
    BoxedUpstream, CallEnd, CallPlan, CallRecord, ClassifierFailure, EventRecord, NodeWorld,
    ReporterFields, RunView, StreamPlan, Termination,
};
use hybrid_compaction_model::trust::AttemptEvent;
use hybrid_compaction_model::*;

use crate::imp;

use AttemptEvent::{Completed, Composed, Started, Terminated};

// ------------------------------------------------------------------------------- fixtures ----

/// Hard limit 100, margin 10 (threshold 90), retention 2, 2 attempts, 10 units per entry.
pub fn policy() -> Policy {
    Policy::new(PolicySpec {
        hard_limit: 100,
        trigger_margin: 10,
        recent_message_retention_count: 2,
        maximum_compaction_attempts: 2,
        preservation_label: Some("node-tests".into()),
        preservation_version: 1,
        estimator: Some(Arc::new(ConstantEstimator(10))),
    })
    .unwrap()
}

/// The reporter of these tests: workflow `wf-1`, agent `agent-1`, no parent, depth 1.
pub fn reporter() -> ReporterFields {
    ReporterFields {
        workflow_id: "wf-1".into(),
        agent_id: Some("agent-1".into()),
        parent_agent_id: None,
        depth: 1,
    }
}

/// A node selected with `policy` and `reducer` (SPEC NODE-1), reporting when `reporting`.
pub fn world_with(
    policy: Policy,
    reducer: impl UpstreamReducer + Send + 'static,
    reporting: bool,
) -> Box<dyn NodeWorld> {
    let reducer: BoxedUpstream<'static> = Box::new(reducer);
    let r = reporting.then(reporter);
    match imp().node_world(true, Some((policy, reducer)), r.as_ref()) {
        Ok(Some(w)) => w,
        Ok(None) => panic!("switch and options install a node"),
        Err(e) => panic!("switch and options install a node: {e:?}"),
    }
}

/// A node over [`policy`].
pub fn world(
    reducer: impl UpstreamReducer + Send + 'static,
    reporting: bool,
) -> Box<dyn NodeWorld> {
    world_with(policy(), reducer, reporting)
}

/// Keeps the system messages and the last 3 others.
pub fn counting() -> MessageCountingReducer {
    MessageCountingReducer { target_count: 3 }
}

pub fn user(text: &str) -> Message {
    Message::text("user", text)
}

pub fn system(text: &str) -> Message {
    Message::text("system", text)
}

/// 3 messages = 30 units < threshold 90: `WithinLimit`, dispatched unchanged.
pub fn small_history() -> Vec<Message> {
    vec![
        system("be brief"),
        user("hello"),
        Message::text("assistant", "hi"),
    ]
}

/// 1 system + 11 user messages = 120 units >= 90: the counting reducer (target 3) keeps the
/// system message and u8, u9, u10 = 40 units; required (system + last 2 units) is kept: Reduced.
pub fn long_history() -> Vec<Message> {
    let mut m = vec![system("sys")];
    for i in 0..11 {
        m.push(user(&format!("u{i}")));
    }
    m
}

/// 12 system messages = 120 units, all required: the fallback keeps 120 > 100: Irreducible with
/// final size 120 (ASM-9, ASM-12).
pub fn irreducible_history() -> Vec<Message> {
    (0..12).map(|i| system(&format!("s{i}"))).collect()
}

pub const BODY: &str = "the recovered body MARKER-BODY-7";

pub fn reference() -> ArtifactReference {
    ArtifactReference::to_content(BODY)
}

pub fn digest() -> Digest {
    reference().digest()
}

pub fn with_body_history() -> Vec<Message> {
    vec![
        system("be brief"),
        user(&reference().to_string()),
        user("please use the artifact"),
    ]
}

/// A call whose integration appends the recovered body to the adapted baseline (one capture
/// schedule: the baseline's entries, then the body's segment).
pub fn body_plan(messages: Vec<Message>) -> CallPlan {
    let mut entries = imp()
        .adapt(&messages, &mut *imp().content_hash_classifier())
        .unwrap();
    let segment = RecoverableSegment {
        reference: reference(),
        body: BODY.into(),
    };
    entries.push(Entry::recoverable("seg-MARKER-ID-9", segment).unwrap());
    CallPlan {
        schedule: Some(vec![(0, Some(entries))]),
        ..CallPlan::new(messages)
    }
}

pub fn carries_body(messages: &[Message]) -> bool {
    messages.iter().any(|m| m.text_content() == BODY)
}

pub fn kinds(events: &[EventRecord]) -> Vec<AttemptEvent> {
    events.iter().map(|e| e.kind).collect()
}

fn seqs(events: &[EventRecord]) -> Vec<u64> {
    events.iter().map(|e| e.sequence).collect()
}

/// The messages and digests of a dispatched, committed call.
pub fn sent(r: &CallRecord) -> (&[Message], &[Digest]) {
    match &r.end {
        CallEnd::Sent {
            messages,
            forwarded,
        } => (messages, forwarded),
        other => panic!("expected a committed dispatch, got {other:?}"),
    }
}

/// The error, termination and dispatched messages of a failed call.
pub fn failed(r: &CallRecord) -> (&TypedError, Option<Termination>, Option<&[Message]>) {
    match &r.end {
        CallEnd::Failed {
            error,
            termination,
            dispatched,
        } => (error, *termination, dispatched.as_deref()),
        other => panic!("expected a failed call, got {other:?}"),
    }
}

/// SPEC LSE-10: the call left the gate and gave back every reservation.
pub fn assert_gate_free_and_nothing_reserved(view: Option<RunView>) {
    let view = view.expect("the run begun by the test is active");
    assert!(!view.gate_occupied, "the gate is left (LSE-10)");
    assert!(view.reserved.is_empty(), "every reservation is released");
}

fn delivered(w: &dyn NodeWorld, d: Digest) -> bool {
    w.view().is_some_and(|v| v.delivered.contains(&d))
}

/// Checks the per-attempt grouping of an event stream: each AssemblyId's events form one of the
/// allowed sequences with increasing sequence numbers (SPEC EVT-2, EVT-5); the number of
/// attempts.
fn check_attempts(events: &[EventRecord]) -> usize {
    let mut by_id: BTreeMap<&str, Vec<(u64, AttemptEvent)>> = BTreeMap::new();
    for e in events {
        by_id.entry(&e.id).or_default().push((e.sequence, e.kind));
    }
    for attempt in by_id.values() {
        let kinds: Vec<AttemptEvent> = attempt.iter().map(|(_, k)| *k).collect();
        assert!(
            kinds == [Started, Completed, Composed] || kinds == [Started, Terminated],
            "an attempt emitted {kinds:?}"
        );
        assert!(attempt.windows(2).all(|w| w[0].0 < w[1].0));
    }
    by_id.len()
}

// ----------------------------------------------------------------------------- NODE-1 ----

#[test]
fn node_1_switch_and_options_must_agree() {
    // SPEC NODE-1: switch and options together install a node; neither returns the client
    // unchanged (no node); one without the other is an InvalidArgument error.
    let options = || Some((policy(), Box::new(counting()) as BoxedUpstream<'static>));
    let enabled_without = imp().node_world(true, None, None).err().expect("an error");
    assert_eq!(enabled_without.kind, ErrorKind::InvalidArgument);
    let options_without = imp()
        .node_world(false, options(), None)
        .err()
        .expect("an error");
    assert_eq!(options_without.kind, ErrorKind::InvalidArgument);
    assert_ne!(
        enabled_without.message, options_without.message,
        "EnabledWithoutOptions and OptionsWithoutEnabled are two errors"
    );
    assert!(
        imp().node_world(false, None, None).unwrap().is_none(),
        "no node without the switch"
    );
    assert!(imp().node_world(true, options(), None).unwrap().is_some());
}

// ------------------------------------------------------- NODE-2 / EVT-2 / EVT-4: success ----

#[test]
fn node_2_evt_2_evt_4_success_emits_started_completed_composed_then_dispatches() {
    // SPEC NODE-2, NODE-3 (Composed before dispatch), EVT-2, EVT-3, EVT-4, EVT-5.
    let mut w = world(counting(), true);
    let r = w.call(&CallPlan::new(small_history()));
    // WithinLimit: the bounded messages are the input, in order.
    let (messages, forwarded) = sent(&r);
    assert_eq!(messages, small_history());
    assert!(forwarded.is_empty());
    assert_eq!(kinds(&r.events), [Started, Completed, Composed]);
    // NODE-3 step 14: Composed is emitted before dispatch.
    assert_eq!(r.events_before_dispatch, Some(3));
    // The call-local run was left with the scope (LSE-6).
    assert!(w.view().is_none());

    let events = &r.events;
    // EVT-4: Started carries the policy's unit, hard limit and threshold.
    let s = events[0].started.expect("Started carries its fields");
    assert_eq!(s.measurement_unit, MeasurementUnit::HostDefinedUnits);
    assert_eq!((s.hard_limit, s.trigger_threshold), (100, 90));
    assert!(events[0].diagnostics.is_none());
    assert!(events[1..].iter().all(|e| e.started.is_none()));
    // EVT-4: Completed and Composed carry the same value, also on the dispatch result.
    let completed = events[1].diagnostics.as_ref().unwrap();
    assert_eq!(events[2].diagnostics.as_ref(), Some(completed));
    assert_eq!(r.diagnostics.as_ref(), Some(completed));
    let d = completed;
    assert_eq!(d.outcome, CompactionOutcome::WithinLimit);
    assert_eq!((d.original_size, d.final_size), (30, 30));
    assert_eq!((d.trigger_threshold, d.hard_limit), (90, 100));
    assert_eq!(d.final_sequence_valid, Some(true));
    assert_eq!(
        d.category_contributions,
        vec![
            Contribution {
                category: Category::SystemInstruction,
                size: 10,
                entry_count: 1
            },
            Contribution {
                category: Category::ConversationalMessage,
                size: 20,
                entry_count: 2
            },
        ]
    );
    // EVT-5: one id on every event.
    assert!(events.iter().all(|e| e.id == events[0].id));
    // EVT-3: sequence numbers increase (the reporter's source counts from 1); the envelope is
    // the reporter's.
    assert_eq!(seqs(events), [1, 2, 3]);
    for e in events {
        assert_eq!(e.identity, reporter());
    }
}

#[test]
fn node_2_bridge_reduces_through_the_upstream_reducer() {
    // SPEC NODE-2, NODE-3 step 5 (bridge over the upstream reducer), EVT-2.
    let mut w = world(counting(), true);
    let r = w.call(&CallPlan::new(long_history()));
    let h = long_history();
    assert_eq!(
        sent(&r).0,
        [h[0].clone(), h[9].clone(), h[10].clone(), h[11].clone()]
    );
    let d = r.diagnostics.as_ref().unwrap();
    assert_eq!(d.outcome, CompactionOutcome::Reduced);
    assert_eq!((d.original_size, d.final_size), (120, 40));
    assert_eq!(d.attempt_count, 1);
    assert_eq!(kinds(&r.events), [Started, Completed, Composed]);
}

// --------------------------------------------------------- NODE-4 / EVT-2: termination ----

#[test]
fn node_4_evt_2_termination_emits_started_terminated_and_a_typed_error() {
    // SPEC NODE-4, NODE-5 (release on termination), EVT-2, EVT-4, EVT-5.
    let mut w = world(counting(), true);
    w.begin_run();
    let r = w.call(&CallPlan::new(irreducible_history()));
    let (error, termination, dispatched) = failed(&r);
    assert_eq!(
        termination,
        Some(Termination {
            outcome: Outcome::Irreducible,
            final_estimated_size: 120,
            hard_limit: 100,
        })
    );
    assert_eq!(error.kind, ErrorKind::InvalidOperation);
    assert!(dispatched.is_none(), "nothing is dispatched");
    assert_eq!(r.events_before_dispatch, None);
    assert!(r.diagnostics.is_none(), "no dispatch result");
    assert_eq!(kinds(&r.events), [Started, Terminated]);
    let d = r.events[1].diagnostics.as_ref().unwrap();
    assert_eq!(d.outcome, CompactionOutcome::Irreducible);
    assert_eq!((d.final_size, d.hard_limit), (120, 100));
    assert!(d.category_contributions.is_empty());
    assert_eq!(d.final_sequence_valid, None);
    assert_eq!(r.events[0].id, r.events[1].id);
    assert!(r.events[0].sequence < r.events[1].sequence);
    assert_gate_free_and_nothing_reserved(w.view());
}

// ---------------------------------------------- NODE-3 / EVT-2: errors before and during ----

#[test]
fn node_3_evt_2_reducer_error_during_assembly_emits_started_only() {
    // SPEC NODE-3 step 7, NODE-5, EVT-2.
    let reducer = ScriptedUpstreamReducer::new(vec![UpstreamStep::Fail("MARKER-ERR-8".into())]);
    let mut w = world(reducer, true);
    w.begin_run();
    let r = w.call(&CallPlan::new(long_history()));
    let (error, termination, dispatched) = failed(&r);
    assert_eq!(error.kind, ErrorKind::ReducerFailed);
    assert!(termination.is_none() && dispatched.is_none());
    assert_eq!(r.events_before_dispatch, None);
    assert_eq!(kinds(&r.events), [Started]);
    assert_gate_free_and_nothing_reserved(w.view());
}

#[test]
fn node_3_evt_2_cancellation_during_assembly_emits_started_only() {
    // SPEC NODE-3 steps 7-8, NODE-5, EVT-2: the token is cancelled during the first capture,
    // after the lease filter reserved the body; the assembler observes it (ASM-16), an error
    // during assembly.
    let mut w = world(counting(), true);
    w.begin_run();
    let mut history = long_history();
    history.insert(1, user(&reference().to_string()));
    let plan = CallPlan {
        cancel_capture: Some(0),
        ..body_plan(history)
    };
    let r = w.call(&plan);
    let (error, termination, dispatched) = failed(&r);
    assert_eq!(error.kind, ErrorKind::Cancelled);
    assert!(termination.is_none());
    assert!(dispatched.is_none() && r.events_before_dispatch.is_none());
    assert_eq!(kinds(&r.events), [Started]);
    // The body reserved during assembly is given back (NODE-5).
    assert_gate_free_and_nothing_reserved(w.view());
    assert!(!delivered(&*w, digest()));
}

#[test]
fn evt_5_two_assemblies_in_flight_interleave_and_pair_by_id() {
    // SPEC EVT-5, EVT-3, NODE-2: a call waits in its reducer while another node sharing the
    // reporter's source makes two calls on another flow; the events interleave, numbers increase
    // strictly across both nodes, and each attempt's events carry its own id.
    let slot = ParkSlot::default();
    let parking = ParkingReducer {
        inner: Box::new(counting()),
        slot: slot.clone(),
    };
    let mut w = world_with(policy(), parking, true);
    w.begin_run();
    let other_fields = ReporterFields {
        agent_id: Some("agent-2".into()),
        ..reporter()
    };
    let mut other = w.companion((policy(), Box::new(counting())), Some(&other_fields));
    let (first, parked, during) =
        call_parked(&mut *w, &CallPlan::new(long_history()), &slot, || {
            [
                other.call(&CallPlan::new(small_history())),
                other.call(&CallPlan::new(small_history())),
            ]
        });
    assert!(parked);
    assert!(matches!(first.end, CallEnd::Sent { .. }));
    let numbers = |r: &CallRecord| r.events.iter().map(|e| e.sequence).collect::<Vec<u64>>();
    assert_eq!(numbers(&first), [1, 8, 9]);
    assert_eq!(numbers(&during[0]), [2, 3, 4]);
    assert_eq!(numbers(&during[1]), [5, 6, 7]);
    let mut ids = std::collections::BTreeSet::new();
    for r in std::iter::once(&first).chain(&during) {
        assert_eq!(kinds(&r.events), [Started, Completed, Composed]);
        assert!(r.events.iter().all(|e| e.id == r.events[0].id));
        ids.insert(r.events[0].id.clone());
    }
    assert_eq!(ids.len(), 3, "distinct AssemblyIds");
    assert!(during.iter().all(|r| r.events[0].identity == other_fields));
    // The parked call's run was not the other node's: its gate is free again, nothing waits.
    assert_gate_free_and_nothing_reserved(w.view());
    // A call that never reaches its reducer finishes first; the other call runs after it.
    let (alone, parked, late) =
        call_parked(&mut *w, &CallPlan::new(small_history()), &slot, || {
            other.call(&CallPlan::new(small_history()))
        });
    assert!(!parked);
    assert_eq!(
        (numbers(&alone), numbers(&late)),
        (vec![10, 11, 12], vec![13, 14, 15])
    );
}

#[test]
fn evt_3_evt_5_reporters_sharing_one_source_number_every_event_across_reporters() {
    // SPEC EVT-3 (several reporters, one source), EVT-5 (one AssemblyId per attempt): the
    // reporter is replaced between calls; the numbers go on strictly increasing across
    // reporters, each event carries its own reporter's identity and each attempt its own id.
    let mut w = world(counting(), true);
    let agent = |a: &str, depth| ReporterFields {
        workflow_id: "wf-1".into(),
        agent_id: Some(a.into()),
        parent_agent_id: Some("agent-1".into()),
        depth,
    };
    let mut all = Vec::new();
    let mut who = vec![reporter()];
    let first = w.call(&CallPlan::new(long_history()));
    all.extend(first.events);
    for fields in [agent("agent-2", 2), agent("agent-3", 3), reporter()] {
        w.switch_reporter(&fields);
        who.push(fields);
        all.extend(w.call(&CallPlan::new(small_history())).events);
    }
    let sequences: Vec<u64> = all.iter().map(|e| e.sequence).collect();
    assert_eq!(sequences, (1..=12).collect::<Vec<u64>>());
    for (k, chunk) in all.chunks(3).enumerate() {
        assert_eq!(kinds(chunk), [Started, Completed, Composed]);
        assert!(chunk
            .iter()
            .all(|e| e.identity == who[k] && e.id == chunk[0].id));
    }
    let ids: std::collections::BTreeSet<&str> = all.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids.len(), 4, "one AssemblyId per attempt");
    // Without a reporter there is no source to share: still nothing is reported (EVT-1).
    let mut silent = world(counting(), false);
    silent.switch_reporter(&agent("agent-2", 2));
    assert!(silent
        .call(&CallPlan::new(small_history()))
        .events
        .is_empty());
}

#[test]
fn cls_3_node_3_evt_2_a_failing_classifier_emits_nothing_and_propagates() {
    // SPEC CLS-3, NODE-3 step 3, EVT-2, NODE-5 (ADR "Exceptional failures before assembly begins
    // (classifier exception, ...) propagate directly without emitting any event"): with a
    // reporter, a recovered body in the schedule and a run, the call fails with the
    // classifier's own kind, reports no event, dispatches nothing and reserves nothing; the
    // next call of the run succeeds.
    let mut w = world(counting(), true);
    w.begin_run();
    for kind in [ErrorKind::InvalidOperation, ErrorKind::Cancelled] {
        let plan = CallPlan {
            classifier_fails: Some(ClassifierFailure { message: 2, kind }),
            ..body_plan(long_history())
        };
        let r = w.call(&plan);
        let (error, termination, dispatched) = failed(&r);
        assert_eq!(error.kind, kind);
        assert!(termination.is_none() && dispatched.is_none());
        assert!(r.events.is_empty(), "no event of any kind");
        assert_eq!(r.events_before_dispatch, None);
        assert!(r.diagnostics.is_none());
        assert_gate_free_and_nothing_reserved(w.view());
    }
    let r = w.call(&CallPlan::new(small_history()));
    assert!(matches!(r.end, CallEnd::Sent { .. }));
    assert_eq!(kinds(&r.events), [Started, Completed, Composed]);
}

#[test]
fn node_3_evt_2_errors_before_started_emit_nothing_and_release() {
    // SPEC NODE-2 (gate), NODE-3 steps 1-4, NODE-5, EVT-2.
    let mut w = world(counting(), true);
    w.begin_run();
    // Adaptation failure (step 3): a call part in a user message breaks ENT-5 (CLS-1).
    let bad = vec![Message::new("user", vec![Part::call("c", "f")])];
    let r = w.call(&CallPlan::new(bad));
    let (error, _, dispatched) = failed(&r);
    assert_eq!(error.kind, ErrorKind::InvalidArgument);
    assert!(dispatched.is_none());
    assert!(r.events.is_empty());
    assert_gate_free_and_nothing_reserved(w.view());

    // No snapshot provider (step 4): an InvalidOperation error.
    let plan = CallPlan {
        no_provider: true,
        ..CallPlan::new(small_history())
    };
    let r = w.call(&plan);
    let (error, _, dispatched) = failed(&r);
    assert_eq!(error.kind, ErrorKind::InvalidOperation);
    assert!(dispatched.is_none());
    assert!(r.events.is_empty());
    assert_gate_free_and_nothing_reserved(w.view());

    // Already cancelled (gate entry / step 1): the lease's Cancelled error, no trace.
    let plan = CallPlan {
        cancel_before: true,
        ..CallPlan::new(small_history())
    };
    let r = w.call(&plan);
    let (error, _, dispatched) = failed(&r);
    assert_eq!(error.kind, ErrorKind::Cancelled);
    assert_eq!(error, &TypedError::from(&LeaseError::Cancelled));
    assert!(dispatched.is_none() && r.events_before_dispatch.is_none());
    assert!(r.events.is_empty());
    assert_gate_free_and_nothing_reserved(w.view());
}

#[test]
fn node_2_waits_at_the_gate_and_a_cancelled_waiter_leaves_no_trace() {
    // SPEC NODE-2 (gate, LSE-7), EVT-2: another call of the same run holds the gate; this call
    // waits and is cancelled while waiting: the lease's Cancelled error, no events, nothing
    // sent, the holder undisturbed.
    let mut w = world(counting(), true);
    w.begin_run();
    w.hold_gate();
    assert!(w.view().unwrap().gate_occupied);
    let r = w.call(&CallPlan::new(small_history()));
    let (error, _, dispatched) = failed(&r);
    assert_eq!(error, &TypedError::from(&LeaseError::Cancelled));
    assert!(dispatched.is_none() && r.events_before_dispatch.is_none());
    assert!(r.events.is_empty());
    assert!(
        w.view().unwrap().gate_occupied,
        "the holder still holds the slot"
    );
    w.leave_gate();
    assert_gate_free_and_nothing_reserved(w.view());
    // The gate admits the next call.
    let r = w.call(&CallPlan::new(small_history()));
    assert_eq!(sent(&r).0, small_history());
}

// ----------------------------------------------------------------------------- NODE-5 ----

#[test]
fn node_5_a_recovered_body_is_delivered_at_most_once_per_run() {
    // SPEC NODE-5 (commit with forwarded digests; LSE-8, LSE-9).
    let mut w = world(counting(), true);
    w.begin_run();
    let first = w.call(&body_plan(with_body_history()));
    let (messages, forwarded) = sent(&first);
    assert_eq!(forwarded, [digest()]);
    assert!(carries_body(messages), "first call delivers the body");
    assert!(delivered(&*w, digest()));
    // The second call of the same run: its snapshot has the body filtered out (LSE-8).
    let second = w.call(&body_plan(with_body_history()));
    let (messages, forwarded) = sent(&second);
    assert!(forwarded.is_empty());
    assert!(!carries_body(messages), "never twice in one run");
    assert_eq!(messages, with_body_history());
    assert_gate_free_and_nothing_reserved(w.view());
    // A new run starts empty: the body may be delivered once more (LSE-9); here the call's own
    // call-local run.
    w.end_run();
    let third = w.call(&body_plan(with_body_history()));
    let (messages, forwarded) = sent(&third);
    assert_eq!(forwarded, [digest()]);
    assert!(carries_body(messages));
}

#[test]
fn node_5_provider_failure_releases_so_a_later_call_delivers() {
    // SPEC NODE-5 (release on provider failure), EVT-2 (nothing retracted).
    let mut w = world(counting(), true);
    w.begin_run();
    let plan = CallPlan {
        provider_fails: Some("provider down MARKER-PROVIDER-ERR".into()),
        ..body_plan(with_body_history())
    };
    let r = w.call(&plan);
    let (error, termination, dispatched) = failed(&r);
    assert_eq!(error.kind, ErrorKind::InvalidOperation);
    assert!(termination.is_none());
    assert!(
        carries_body(dispatched.expect("the request was sent")),
        "the failed request carried the body"
    );
    // C# S53: a provider failure after Composed retracts nothing.
    assert_eq!(kinds(&r.events), [Started, Completed, Composed]);
    assert_eq!(r.events_before_dispatch, Some(3));
    assert!(!delivered(&*w, digest()));
    assert_gate_free_and_nothing_reserved(w.view());
    let retry = w.call(&body_plan(with_body_history()));
    let (messages, forwarded) = sent(&retry);
    assert_eq!(forwarded, [digest()]);
    assert!(carries_body(messages), "the retry delivers the body");
    assert!(delivered(&*w, digest()));
}

#[test]
fn node_5_a_body_reserved_by_a_concurrent_call_is_filtered_out() {
    // Another call of the same run reserved the body (LSE-2): this call's snapshot filters it;
    // when that call releases, the next call picks the body up.
    let mut w = world(counting(), false);
    w.begin_run();
    let other = LeaseId(1 << 40);
    assert_eq!(w.reserve(digest(), other), Ok(true));
    let r = w.call(&body_plan(with_body_history()));
    let (messages, forwarded) = sent(&r);
    assert!(forwarded.is_empty());
    assert!(!carries_body(messages));
    w.release(other).unwrap();
    let r = w.call(&body_plan(with_body_history()));
    let (messages, forwarded) = sent(&r);
    assert_eq!(forwarded, [digest()]);
    assert!(carries_body(messages));
}

// ----------------------------------------------------------------------------- NODE-2 ----

#[test]
fn node_2_node_5_streaming_commits_only_when_read_to_its_end() {
    // SPEC NODE-2 (streaming), NODE-5, EVT-2; C# S51: commit only when read to its end.
    let mut w = world(counting(), true);
    w.begin_run();
    let stream = |updates, error_at, reads| CallPlan {
        stream: Some(StreamPlan {
            updates,
            error_at,
            reads,
        }),
        ..body_plan(with_body_history())
    };
    let mut events = Vec::new();

    // Abandoned after one of three updates: released.
    let r = w.call(&stream(3, None, Some(1)));
    assert_eq!(r.streamed, Some(1));
    let CallEnd::Abandoned { messages } = &r.end else {
        panic!("an early drop abandons the stream, got {:?}", r.end)
    };
    assert!(carries_body(messages));
    assert!(!delivered(&*w, digest()));
    assert_gate_free_and_nothing_reserved(w.view());
    events.extend(r.events);

    // An error item releases: one update, then the error.
    let r = w.call(&stream(3, Some(1), None));
    assert_eq!(r.streamed, Some(1));
    let (error, _, dispatched) = failed(&r);
    assert_eq!(error.kind, ErrorKind::InvalidOperation);
    assert!(dispatched.is_some());
    assert!(!delivered(&*w, digest()));
    assert_gate_free_and_nothing_reserved(w.view());
    events.extend(r.events);

    // Zero updates, read to the end: committed; the body is delivered once.
    let r = w.call(&stream(0, None, None));
    assert_eq!(r.streamed, Some(0));
    let (messages, forwarded) = sent(&r);
    assert_eq!(forwarded, [digest()]);
    assert!(carries_body(messages));
    assert!(delivered(&*w, digest()));
    assert_gate_free_and_nothing_reserved(w.view());
    events.extend(r.events);
    // Every streamed attempt emitted Started, Completed, Composed.
    assert_eq!(check_attempts(&events), 3);
    assert_eq!(events.len(), 9);

    // A later streaming call of the run no longer gets the body.
    let r = w.call(&stream(2, None, None));
    assert_eq!(r.streamed, Some(2));
    let (messages, forwarded) = sent(&r);
    assert!(forwarded.is_empty());
    assert!(!carries_body(messages));
}

// ------------------------------------------------------------------------------ EVT-1 ----

#[test]
fn evt_1_without_a_reporter_behaviour_is_identical() {
    // SPEC EVT-1: dispatched messages, diagnostics, errors and lease state are identical.
    let histories = [
        small_history(),
        long_history(),
        irreducible_history(),
        with_body_history(),
    ];
    let mut with = world(counting(), true);
    let mut without = world(counting(), false);
    with.begin_run();
    without.begin_run();
    let mut events = 0;
    for h in histories {
        let a = with.call(&body_plan(h.clone()));
        let b = without.call(&body_plan(h));
        assert_eq!(format!("{:?}", a.end), format!("{:?}", b.end), "diverged");
        assert_eq!(a.diagnostics, b.diagnostics);
        assert_eq!(a.streamed, b.streamed);
        assert!(b.events.is_empty(), "no reporter, no event");
        events += a.events.len();
    }
    assert_eq!(with.view(), without.view());
    // 3 successes x 3 events + 1 termination x 2 events, all from the reporting node.
    assert_eq!(events, 11);
}

// ------------------------------------------------------------------------------ EVT-5 ----

#[test]
fn evt_5_assembly_id_is_shared_within_and_distinct_across_attempts() {
    // SPEC EVT-5, EVT-3 (increasing sequence numbers), EVT-2.
    let mut w = world(counting(), true);
    let mut events = Vec::new();
    for h in [small_history(), irreducible_history(), long_history()] {
        events.extend(w.call(&CallPlan::new(h)).events);
    }
    assert_eq!(events.len(), 3 + 2 + 3);
    assert_eq!(check_attempts(&events), 3, "three distinct ids");
    assert!(seqs(&events).windows(2).all(|w| w[0] < w[1]));
}

// ------------------------------------------------------------------------------ EVT-6 ----

fn marker_history() -> Vec<Message> {
    markers::marker_history(&reference())
}

#[test]
fn evt_6_events_and_diagnostics_never_render_content() {
    // SPEC EVT-6 (C# S72), DIA-1, NODE-4.
    let markers = markers::MARKERS;
    // The classifier output (entry ids) must not appear either, nor the body's digest.
    let mut forbidden: Vec<String> = markers.iter().map(|s| s.to_string()).collect();
    let adapted = imp()
        .adapt(&marker_history(), &mut *imp().content_hash_classifier())
        .unwrap();
    forbidden.extend(adapted.iter().map(|e| e.id().as_str().to_owned()));
    forbidden.push(digest().to_hex());

    let mut rendered = Vec::new();
    let mut events = Vec::new();
    // Success with a delivered body (a big policy: WithinLimit).
    let big = Policy::new(PolicySpec {
        hard_limit: 1_000_000,
        trigger_margin: 10,
        recent_message_retention_count: 2,
        maximum_compaction_attempts: 2,
        preservation_label: Some("node-tests".into()),
        preservation_version: 1,
        estimator: Some(imp().context_estimator()),
    })
    .unwrap();
    let mut n = world_with(big, counting(), true);
    let ok = n.call(&body_plan(marker_history()));
    assert!(carries_body(sent(&ok).0));
    rendered.push(format!("{:?}", ok.diagnostics));
    events.extend(ok.events);
    // A provider failure with a marker in its error.
    let plan = CallPlan {
        provider_fails: Some("provider down MARKER-PROVIDER-ERR".into()),
        ..body_plan(marker_history())
    };
    events.extend(n.call(&plan).events);
    // Termination: the marker history (5 entries = 50 units) plus 6 system markers; all
    // required, 110 > 100.
    let mut long = marker_history();
    for i in 0..6 {
        long.push(system(&format!("MARKER-SYS-1 {i}")));
    }
    let mut t = world(counting(), true);
    let r = t.call(&CallPlan::new(long));
    let (error, termination, _) = failed(&r);
    assert!(termination.is_some());
    rendered.push(format!("{error:?} {}", error.message));
    events.extend(r.events);
    // A failing reducer whose error text holds a marker.
    let reducer = ScriptedUpstreamReducer::new(vec![UpstreamStep::Fail("MARKER-ERR-8".into())]);
    let mut f = world(reducer, true);
    let mut long2 = marker_history();
    for i in 0..8 {
        long2.push(user(&format!("MARKER-USER-2 {i}")));
    }
    let r = f.call(&CallPlan::new(long2));
    assert_eq!(failed(&r).0.kind, ErrorKind::ReducerFailed);
    events.extend(r.events);

    assert_eq!(
        kinds(&events),
        [
            Started, Completed, Composed, Started, Completed, Composed, Started, Terminated,
            Started
        ]
    );
    for e in &events {
        rendered.push(format!("{e:?}"));
        rendered.push(format!("{e:#?}"));
    }
    for text in &rendered {
        for f in &forbidden {
            assert!(!text.contains(f.as_str()), "`{f}` leaked into {text}");
        }
    }
    // The reporter identifiers are the only strings (EVT-6).
    assert!(rendered.iter().any(|t| t.contains("wf-1")));
}

// ------------------------------------------------------------------------------ CFG-4 ----

#[test]
fn cfg_4_every_call_reassembles_from_the_full_history() {
    // SPEC CFG-4 (C# S86): the node never reduces the stored history; every call assembles
    // again from the full record.
    let mut w = world(counting(), false);
    let mut history: Vec<Message> = vec![system("s")];
    history.extend((0..11).map(|i| user(&format!("u{i}"))));
    let before = history.clone();
    let first = w.call(&CallPlan::new(history.clone()));
    assert_eq!(history, before, "stored history is never reduced");
    history.push(user("next"));
    let second = w.call(&CallPlan::new(history));
    // Each call measured the full record (12, then 13 entries of 10 units).
    assert_eq!(first.diagnostics.as_ref().unwrap().original_size, 120);
    assert_eq!(second.diagnostics.as_ref().unwrap().original_size, 130);
    assert_eq!((sent(&first).0.len(), sent(&second).0.len()), (4, 4));
}
