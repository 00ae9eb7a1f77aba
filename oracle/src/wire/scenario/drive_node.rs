//! The `node` operation (SPEC NODE-1 .. NODE-6, EVT-1 .. EVT-6): plans, steps, rendering.

use std::collections::{BTreeMap, BTreeSet};

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::lease::LeaseId;
use hybrid_compaction_model::reducers::{MessageCountingReducer, ScriptedUpstreamReducer};

use super::case::{NodeCase, NodeStepInput};
use super::exec::{lease_error, run_output, wire, Placeholders, RAW_LEASE_BASE};
use super::node::{CallEnd, CallPlan, CallRecord, EventRecord, StreamPlan};
use super::output::{EventOutput, NodeOutput, NodeStepOutput, SentOutput, TerminatedOutput};
use crate::wire::case::ReducerInput;
use crate::wire::convert::{self, CaseError};
use crate::wire::exec::{upstream_steps, WireUpstream};
use crate::wire::output::Output;

fn upstream(r: Option<&ReducerInput>) -> Result<WireUpstream, CaseError> {
    Ok(match r {
        None => WireUpstream::Scripted(ScriptedUpstreamReducer::new(Vec::new())),
        Some(ReducerInput::MessageCounting(m)) => WireUpstream::Counting(MessageCountingReducer {
            target_count: m.target_count as usize,
        }),
        Some(ReducerInput::Upstream(u)) => {
            WireUpstream::Scripted(ScriptedUpstreamReducer::new(upstream_steps(u)?))
        }
        Some(ReducerInput::Scripted(_)) => return wire(
            "$.reducer.kind",
            "the node takes an upstream (message-level) reducer: `upstream` or `messageCounting`",
        ),
    })
}

fn plan(c: &super::case::NodeCallInput, path: &str) -> Result<CallPlan, CaseError> {
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
            Some(convert::CancelPoint::Before) => (true, None),
            Some(convert::CancelPoint::Capture(k)) => (false, Some(k)),
            Some(convert::CancelPoint::Reducer(_)) => {
                return wire(
                    format!("{path}.cancel"),
                    "a node call takes `before` or `capture:K`",
                )
            }
        };
    let stream = match &c.stream {
        None => None,
        Some(x) if x.error_at.is_some_and(|e| e >= x.updates) => {
            return wire(
                format!("{path}.stream.errorAt"),
                format!("expected a position below `updates` ({})", x.updates),
            )
        }
        Some(x) => Some(StreamPlan {
            updates: x.updates as usize,
            error_at: x.error_at.map(|e| e as usize),
            reads: x.reads.map(|r| r as usize),
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
    })
}

fn event_output(e: &EventRecord, ids: &mut Placeholders) -> EventOutput {
    EventOutput {
        kind: e.kind.to_owned(),
        assembly_id: ids.name(&e.id),
        sequence_number: e.sequence,
        workflow_id: e.identity.0.clone(),
        agent_id: e.identity.1.clone(),
        parent_agent_id: e.identity.2.clone(),
        depth: e.identity.3,
        measurement_unit: e.started.map(|s| s.0.name().to_owned()),
        hard_limit: e.started.map(|s| s.1),
        trigger_threshold: e.started.map(|s| s.2),
        diagnostics: e.diagnostics.as_ref().map(convert::diagnostics_output),
    }
}

fn sent(ms: &[hybrid_compaction_model::message::Message]) -> Vec<SentOutput> {
    ms.iter()
        .map(|m| SentOutput {
            role: m.role.clone(),
            text: m.text_content(),
        })
        .collect()
}

fn call_output(r: &CallRecord, ids: &mut Placeholders) -> NodeStepOutput {
    let events = r.events.iter().map(|e| event_output(e, ids)).collect();
    let streamed = r.streamed.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let out = match &r.end {
        CallEnd::Sent(ms, fwd) => NodeStepOutput {
            sent: Some(sent(ms)),
            forwarded: Some(fwd.iter().map(Digest::to_hex).collect()),
            events,
            ..NodeStepOutput::default()
        },
        CallEnd::Abandoned(ms) => NodeStepOutput {
            sent: Some(sent(ms)),
            events,
            ..NodeStepOutput::default()
        },
        CallEnd::Failed(e, t, ms) => NodeStepOutput {
            error: Some(e.clone()),
            terminated: t.as_ref().map(|(o, s, h)| TerminatedOutput {
                outcome: o.clone(),
                final_estimated_size: *s,
                hard_limit: *h,
            }),
            sent: ms.as_deref().map(sent),
            events,
            ..NodeStepOutput::default()
        },
    };
    NodeStepOutput { streamed, ..out }
}

/// A `Disabled` selection (SPEC NODE-1): every call goes to the provider unchanged; no node, no
/// event, no run.
fn disabled(steps: &[NodeStepInput], plans: &[Option<CallPlan>]) -> Output {
    let steps = steps
        .iter()
        .zip(plans)
        .map(|(s, p)| match (s, p) {
            (NodeStepInput::Call(_), Some(p)) => NodeStepOutput {
                sent: Some(sent(&p.messages)),
                error: p.provider_fails.as_ref().map(|m| {
                    convert::answer(
                        hybrid_compaction_model::error::ErrorKind::InvalidOperation,
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
    Output {
        node: Some(NodeOutput {
            selection: "Disabled".to_owned(),
            steps,
        }),
        ..Output::default()
    }
}

/// The `node` operation (SPEC NODE-1 .. NODE-6, EVT-1 .. EVT-6).
pub fn node(
    c: &NodeCase,
    imp: &dyn crate::wire::exec::Implementation,
) -> Result<Output, CaseError> {
    let enabled = c.enabled.unwrap_or(true);
    let options = if c.options.unwrap_or(true) {
        let p = convert::policy(c.policy.as_ref(), imp, "$.policy")?;
        Some((p, upstream(c.reducer.as_ref())?))
    } else {
        None
    };
    let mut plans = Vec::with_capacity(c.steps.len());
    let mut names: BTreeMap<String, LeaseId> = BTreeMap::new();
    let mut named = BTreeSet::new();
    for (i, s) in c.steps.iter().enumerate() {
        let path = format!("$.steps[{i}]");
        match s {
            NodeStepInput::Call(x) => {
                let p = plan(x, &format!("{path}.call"))?;
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
            _ => plans.push(None),
        }
    }
    let world = imp
        .node_world(enabled, options, c.reporter.as_ref())
        .map_err(CaseError::Answer)?;
    let mut runs = Placeholders::new("R");
    let mut ids = Placeholders::new("A");
    let mut steps = Vec::with_capacity(c.steps.len());
    let Some(mut world) = world else {
        return Ok(disabled(&c.steps, &plans));
    };
    for (s, p) in c.steps.iter().zip(&plans) {
        let mut o = match (s, p) {
            (NodeStepInput::Call(_), Some(p)) => call_output(&world.call(p), &mut ids),
            (NodeStepInput::BeginRun(_), _) => {
                world.begin_run();
                NodeStepOutput::default()
            }
            (NodeStepInput::EndRun(_), _) => {
                world.end_run();
                NodeStepOutput::default()
            }
            (NodeStepInput::Reserve(x), _) => {
                let d = Digest::of(x.body.as_deref().unwrap_or_default());
                let mut o = NodeStepOutput::default();
                if let Err(e) = world.reserve(d, names[&x.lease]) {
                    o.error = Some(lease_error(&e));
                }
                o
            }
            (NodeStepInput::Release(x), _) => {
                let mut o = NodeStepOutput::default();
                if let Err(e) = world.release(names[&x.lease]) {
                    o.error = Some(lease_error(&e));
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
    Ok(Output {
        node: Some(NodeOutput {
            selection: "Installed".to_owned(),
            steps,
        }),
        ..Output::default()
    })
}
