//! Running a `node` scenario: each call converted into a [`CallPlan`] (path-precise wire
//! errors), the steps run on the implementation's [`NodeWorld`](hybrid_compaction_model::seam::NodeWorld), and the records rendered with
//! placeholders for runs and `AssemblyId`s.

use std::collections::{BTreeMap, BTreeSet};

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::lease::LeaseId;
use hybrid_compaction_model::seam::park::{call_parked, ParkSlot, ParkingReducer};
use hybrid_compaction_model::seam::{
    BoxedUpstream, CallEnd, CallPlan, CallRecord, ClassifierFailure, EventRecord, Implementation,
    ReporterFields,
};

use super::{
    EventOutput, NodeCallInput, NodeCase, NodeOutput, NodeStepInput, NodeStepOutput, ReporterInput,
    TerminatedOutput,
};
use crate::wire::convert::{self, CancelPoint};
use crate::wire::dispatch::{sent, stream_plan};
use crate::wire::error::{answer, error_output, wire, CaseError};
use crate::wire::names::Name;
use crate::wire::output::diagnostics_output;
use crate::wire::runs::{run_output, Placeholders, RAW_LEASE_BASE};

/// The plans of a call's `whileParked` calls (SPEC EVT-5); none of them parks itself.
fn inner_plans(c: &NodeCallInput, path: &str) -> Result<Vec<CallPlan>, CaseError> {
    let Some(wp) = &c.while_parked else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(wp.calls.len());
    for (j, x) in wp.calls.iter().enumerate() {
        let at = format!("{path}.whileParked.calls[{j}]");
        if x.while_parked.is_some() {
            return wire(
                format!("{at}.whileParked"),
                "a call made while another is parked does not park itself",
            );
        }
        out.push(plan(x, &at)?);
    }
    Ok(out)
}

fn plan(c: &NodeCallInput, path: &str) -> Result<CallPlan, CaseError> {
    let mut messages = Vec::with_capacity(c.messages.len());
    for (i, m) in c.messages.iter().enumerate() {
        messages.push(convert::message(m, &format!("{path}.messages[{i}]"))?);
    }
    let schedule = match &c.snapshots {
        None => None,
        Some(s) if s.is_empty() => {
            return wire(
                format!("{path}.snapshots"),
                "the schedule needs at least one snapshot",
            )
        }
        Some(s) => {
            let mut out = Vec::with_capacity(s.len());
            for (i, step) in s.iter().enumerate() {
                let entries = match &step.entries {
                    Some(es) => Some(convert::entries(
                        es,
                        &format!("{path}.snapshots[{i}].entries"),
                    )?),
                    None => None,
                };
                out.push((step.version, entries));
            }
            Some(out)
        }
    };
    let (cancel_before, cancel_capture) =
        match convert::cancel_point(c.cancel.as_ref(), &format!("{path}.cancel"))? {
            None => (false, None),
            Some(CancelPoint::Before) => (true, None),
            Some(CancelPoint::Capture(k)) => (false, Some(k)),
            Some(CancelPoint::Reducer(_)) => {
                return wire(
                    format!("{path}.cancel"),
                    "a node call takes `before` or `capture:K`",
                )
            }
        };
    let stream = match &c.stream {
        None => None,
        Some(x) => Some(stream_plan(x, &format!("{path}.stream"))?),
    };
    let classifier_fails = match &c.classifier_fails {
        None => None,
        Some(f) if f.message as usize >= c.messages.len() => {
            return wire(
                format!("{path}.classifierFails.message"),
                format!(
                    "expected the index of a message of the call (below {})",
                    c.messages.len()
                ),
            )
        }
        Some(f) => Some(ClassifierFailure {
            message: f.message as usize,
            kind: f.kind.0,
        }),
    };
    Ok(CallPlan {
        messages,
        schedule,
        no_provider: c.no_provider,
        cancel_before,
        cancel_capture,
        provider_fails: c.provider_fails.clone(),
        stream,
        classifier_fails,
    })
}

fn event_output(e: &EventRecord, ids: &mut Placeholders) -> EventOutput {
    EventOutput {
        kind: Name(e.kind),
        assembly_id: ids.name(&e.id),
        sequence_number: e.sequence,
        workflow_id: e.identity.workflow_id.clone(),
        agent_id: e.identity.agent_id.clone(),
        parent_agent_id: e.identity.parent_agent_id.clone(),
        depth: e.identity.depth,
        measurement_unit: e.started.map(|s| Name(s.measurement_unit)),
        hard_limit: e.started.map(|s| s.hard_limit),
        trigger_threshold: e.started.map(|s| s.trigger_threshold),
        diagnostics: e.diagnostics.as_ref().map(diagnostics_output),
    }
}

fn call_output(r: &CallRecord, ids: &mut Placeholders) -> NodeStepOutput {
    let events = r.events.iter().map(|e| event_output(e, ids)).collect();
    let streamed = r.streamed.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let out = match &r.end {
        CallEnd::Sent {
            messages,
            forwarded,
        } => NodeStepOutput {
            sent: Some(sent(messages)),
            forwarded: Some(forwarded.iter().map(Digest::to_hex).collect()),
            events,
            ..NodeStepOutput::default()
        },
        CallEnd::Abandoned { messages } => NodeStepOutput {
            sent: Some(sent(messages)),
            events,
            ..NodeStepOutput::default()
        },
        CallEnd::Failed {
            error,
            termination,
            dispatched,
        } => NodeStepOutput {
            error: Some(error.clone().into()),
            terminated: termination.map(|t| TerminatedOutput {
                outcome: Name(t.outcome),
                final_estimated_size: t.final_estimated_size,
                hard_limit: t.hard_limit,
            }),
            sent: dispatched.as_deref().map(sent),
            events,
            ..NodeStepOutput::default()
        },
    };
    NodeStepOutput { streamed, ..out }
}

/// A `Disabled` selection (SPEC NODE-1): every call goes to the provider unchanged; no node, no
/// event, no run.
fn disabled(steps: &[NodeStepInput], plans: &[Option<CallPlan>]) -> NodeOutput {
    let steps = steps
        .iter()
        .zip(plans)
        .map(|(s, p)| match (s, p) {
            (NodeStepInput::Call(_), Some(p)) => NodeStepOutput {
                sent: Some(sent(&p.messages)),
                error: p.provider_fails.as_ref().map(|m| {
                    answer(
                        ErrorKind::InvalidOperation,
                        None,
                        None,
                        format!("provider call failed: {m}"),
                    )
                }),
                ..NodeStepOutput::default()
            },
            _ => NodeStepOutput::default(),
        })
        .collect();
    NodeOutput {
        selection: "Disabled".to_owned(),
        steps,
    }
}

/// The reporter's fields (SPEC EVT-3).
fn reporter(r: &ReporterInput) -> ReporterFields {
    ReporterFields {
        workflow_id: r.workflow_id.clone(),
        agent_id: r.agent_id.clone(),
        parent_agent_id: r.parent_agent_id.clone(),
        depth: r.depth,
    }
}

/// Steps `c` through `imp`'s node world (SPEC NODE-1 .. NODE-6, EVT-1 .. EVT-6).
pub(crate) fn run(c: &NodeCase, imp: &dyn Implementation) -> Result<NodeOutput, CaseError> {
    let enabled = c.enabled.unwrap_or(true);
    // The node's reducer parks when a `whileParked` call arms it (SPEC EVT-5).
    let slot = ParkSlot::default();
    let options = if c.options.unwrap_or(true) {
        let p = convert::policy(c.policy.as_ref(), imp, "$.policy")?;
        let parking = ParkingReducer {
            inner: convert::upstream(c.reducer.as_ref())?,
            slot: slot.clone(),
        };
        Some((p, Box::new(parking) as BoxedUpstream<'static>))
    } else {
        None
    };
    let mut plans = Vec::with_capacity(c.steps.len());
    let mut names: BTreeMap<String, LeaseId> = BTreeMap::new();
    let mut named = BTreeSet::new();
    let mut parked: BTreeMap<usize, Vec<CallPlan>> = BTreeMap::new();
    for (i, s) in c.steps.iter().enumerate() {
        let path = format!("$.steps[{i}]");
        match s {
            NodeStepInput::Call(x) => {
                let p = plan(x, &format!("{path}.call"))?;
                parked.insert(i, inner_plans(x, &format!("{path}.call"))?);
                for (_, es) in p.schedule.iter().flatten() {
                    for e in es.iter().flatten() {
                        if let Some(s) = e.recoverable_segment() {
                            named.insert(s.reference.digest());
                        }
                    }
                }
                plans.push(Some(p));
            }
            NodeStepInput::Reserve(x) | NodeStepInput::Release(x) => {
                if matches!(s, NodeStepInput::Reserve(_)) && x.body.is_none() {
                    return wire(format!("{path}.reserve"), "`reserve` needs `body`");
                }
                if let Some(b) = &x.body {
                    named.insert(Digest::of(b));
                }
                let next = LeaseId(RAW_LEASE_BASE + names.len() as u64);
                names.entry(x.lease.clone()).or_insert(next);
                plans.push(None);
            }
            NodeStepInput::Reporter(_) if c.reporter.is_none() => {
                return wire(
                    format!("{path}.reporter"),
                    "a `reporter` step shares the sequence source of the case's `reporter`, \
                     which is absent",
                );
            }
            _ => plans.push(None),
        }
    }
    let world = imp.node_world(enabled, options, c.reporter.as_ref().map(reporter).as_ref())?;
    let mut runs = Placeholders::new("R");
    let mut ids = Placeholders::new("A");
    let mut steps = Vec::with_capacity(c.steps.len());
    let Some(mut world) = world else {
        return Ok(disabled(&c.steps, &plans));
    };
    for (i, (s, p)) in c.steps.iter().zip(&plans).enumerate() {
        let mut o = match (s, p) {
            (NodeStepInput::Call(x), Some(p)) => match (&x.while_parked, parked.get(&i)) {
                (Some(wp), Some(inner)) => {
                    let policy = convert::policy(c.policy.as_ref(), imp, "$.policy")?;
                    let reducer = convert::upstream(wp.reducer.as_ref().or(c.reducer.as_ref()))?;
                    let fields = wp.reporter.as_ref().or(c.reporter.as_ref()).map(reporter);
                    let mut other = world.companion((policy, reducer), fields.as_ref());
                    let (record, was_parked, during) = call_parked(&mut *world, p, &slot, || {
                        inner.iter().map(|q| other.call(q)).collect::<Vec<_>>()
                    });
                    let mut o = call_output(&record, &mut ids);
                    o.parked = Some(was_parked);
                    o.while_parked =
                        Some(during.iter().map(|r| call_output(r, &mut ids)).collect());
                    o
                }
                _ => call_output(&world.call(p), &mut ids),
            },
            (NodeStepInput::BeginRun(_), _) => {
                world.begin_run();
                NodeStepOutput::default()
            }
            (NodeStepInput::EndRun(_), _) => {
                world.end_run();
                NodeStepOutput::default()
            }
            (NodeStepInput::Reporter(r), _) => {
                world.switch_reporter(&reporter(r));
                NodeStepOutput::default()
            }
            (NodeStepInput::Reserve(x), _) => {
                let d = Digest::of(x.body.as_deref().unwrap_or_default());
                let mut o = NodeStepOutput::default();
                if let Err(e) = world.reserve(d, names[&x.lease]) {
                    o.error = Some(error_output(&e));
                }
                o
            }
            (NodeStepInput::Release(x), _) => {
                let mut o = NodeStepOutput::default();
                if let Err(e) = world.release(names[&x.lease]) {
                    o.error = Some(error_output(&e));
                }
                o
            }
            _ => NodeStepOutput::default(),
        };
        let lease_name = |_: usize, l: LeaseId| {
            names
                .iter()
                .find(|(_, x)| **x == l)
                .map_or_else(|| format!("lease-{}", l.0), |(n, _)| n.clone())
        };
        let view = world.view();
        o.run = run_output(
            view,
            &mut runs,
            lease_name,
            |d| world.peek_revision(d),
            &named,
        );
        steps.push(o);
    }
    Ok(NodeOutput {
        selection: "Installed".to_owned(),
        steps,
    })
}
