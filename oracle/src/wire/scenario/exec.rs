//! Running the scenario operations: converting their inputs (with path-precise wire errors),
//! driving an implementation's worlds, and rendering the answers with placeholders for runs
//! (`R1`, ...) and `AssemblyId`s (`A1`, ...) in order of first appearance.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::assembly::{CompactionOutcome, ReductionRequest, StageCategory};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::diagnostics::{ContributionFields, RecordFields};
use hybrid_compaction_model::entry::Category;
use hybrid_compaction_model::estimator::{ConstantEstimator, MeasurementUnit};
use hybrid_compaction_model::lease::LeaseId;
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::{
    CancelAtCall, MessageCountingReducer, ScriptedUpstreamReducer, UpstreamStep,
};
use hybrid_compaction_model::snapshot::Snapshot;

use super::case::{
    BridgeCase, BridgeStepInput, DiagnosticsCase, EnumValueInput, LeaseStepInput, LeasesCase,
    NodeCase, NodeStepInput,
};
use super::leases::{Entered, LeaseWorld, RunView};
use super::node::{CallEnd, CallPlan, CallRecord, EventRecord};
use super::output::{
    BridgeOutput, CaptureOutput, EventOutput, LeaseStepOutput, NodeOutput, NodeStepOutput,
    RunOutput, SentOutput, TerminatedOutput,
};
use crate::wire::case::{ReducerInput, UpstreamStepInput};
use crate::wire::convert::{self, CaseError, WireError};
use crate::wire::exec::WireUpstream;
use crate::wire::output::{ContributionOutput, DiagnosticsOutput, ErrorOutput, Output};

fn wire<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, CaseError> {
    Err(CaseError::Wire(WireError::new(path, message)))
}

// ---------------------------------------------------------------------------------------------
// diagnostics

/// A categorical value: `Ok(Some)` defined, `Ok(None)` undefined; the echo text.
fn enum_value<T: Copy>(
    v: &EnumValueInput,
    all: &[T],
    names: &[&str],
    from_name: fn(&str) -> Option<T>,
) -> (Option<T>, String) {
    match v {
        EnumValueInput::Name(n) => (from_name(n), n.clone()),
        EnumValueInput::Ordinal(i) => {
            let value = usize::try_from(*i).ok().and_then(|i| all.get(i).copied());
            let text = usize::try_from(*i)
                .ok()
                .and_then(|i| names.get(i))
                .map_or_else(|| i.to_string(), |n| (*n).to_owned());
            (value, text)
        }
    }
}

/// The `diagnostics` operation (SPEC DIA-1 .. DIA-4): the record's checks, then its echo.
pub fn diagnostics(
    c: &DiagnosticsCase,
    imp: &dyn crate::wire::exec::Implementation,
) -> Result<Output, CaseError> {
    let (outcome, outcome_text) = enum_value(
        &c.outcome,
        &CompactionOutcome::ALL,
        &CompactionOutcome::NAMES,
        CompactionOutcome::from_name,
    );
    let (unit, unit_text) = enum_value(
        &c.measurement_unit,
        &MeasurementUnit::ALL,
        &MeasurementUnit::NAMES,
        MeasurementUnit::from_name,
    );
    let mut contributions = Vec::with_capacity(c.category_contributions.len());
    let mut echoed = Vec::with_capacity(c.category_contributions.len());
    for x in &c.category_contributions {
        let (category, text) = enum_value(
            &x.category,
            &Category::ALL,
            &Category::NAMES,
            Category::from_name,
        );
        contributions.push(ContributionFields {
            category,
            size: x.size,
            entry_count: x.entry_count,
        });
        echoed.push(ContributionOutput {
            category: text,
            size: x.size,
            entry_count: x.entry_count,
        });
    }
    let fields = RecordFields {
        outcome,
        measurement_unit: unit,
        original_size: c.original_size,
        final_size: c.final_size,
        trigger_threshold: c.trigger_threshold,
        hard_limit: c.hard_limit,
        attempt_count: c.attempt_count,
        category_contributions: contributions,
        final_sequence_valid: c.final_sequence_valid,
    };
    imp.validate_record(&fields)
        .map_err(|e| CaseError::Answer(convert::assembly_error(&e)))?;
    let stages = c
        .stages
        .iter()
        .map(|s| {
            enum_value(
                s,
                &StageCategory::ALL,
                &StageCategory::NAMES,
                StageCategory::from_name,
            )
            .1
        })
        .collect();
    Ok(Output {
        diagnostics: Some(DiagnosticsOutput {
            outcome: outcome_text,
            measurement_unit: unit_text,
            original_size: c.original_size,
            final_size: c.final_size,
            trigger_threshold: c.trigger_threshold,
            hard_limit: c.hard_limit,
            attempt_count: c.attempt_count,
            stages,
            category_contributions: echoed,
            final_sequence_valid: c.final_sequence_valid,
        }),
        ..Output::default()
    })
}

// ---------------------------------------------------------------------------------------------
// bridge

/// The policy handed to the bridge in its requests (the bridge reads none of it, SPEC BRG-1).
fn bridge_policy() -> Result<Policy, CaseError> {
    Policy::new(PolicySpec {
        hard_limit: 100,
        trigger_margin: 1,
        recent_message_retention_count: 1,
        maximum_compaction_attempts: 1,
        preservation_label: Some("bridge".to_owned()),
        preservation_version: 1,
        estimator: Some(Arc::new(ConstantEstimator(1))),
    })
    .map_err(|e| CaseError::Wire(WireError::new("$", e.to_string())))
}

/// The `bridge` operation (SPEC BRG-1 .. BRG-3).
pub fn bridge(
    c: &BridgeCase,
    imp: &dyn crate::wire::exec::Implementation,
) -> Result<Output, CaseError> {
    let mut current = convert::entries(&c.entries, "$.entries")?;
    if c.steps.is_empty() {
        return wire("$.steps", "the bridge needs at least one step");
    }
    let mut steps = Vec::with_capacity(c.steps.len());
    let mut cancel_at = None;
    for (i, s) in c.steps.iter().enumerate() {
        let path = format!("$.steps[{i}]");
        steps.push(match s {
            BridgeStepInput::Echo => UpstreamStep::Echo,
            BridgeStepInput::Null => UpstreamStep::Null,
            BridgeStepInput::Fail(m) => UpstreamStep::Fail(m.clone()),
            BridgeStepInput::Cancel => {
                cancel_at.get_or_insert(i);
                UpstreamStep::Fail("the upstream reducer observed cancellation".to_owned())
            }
            BridgeStepInput::Return(ms) => {
                let mut out = Vec::with_capacity(ms.len());
                for (j, m) in ms.iter().enumerate() {
                    out.push(convert::message(m, &format!("{path}.return[{j}]"))?);
                }
                UpstreamStep::Return(out)
            }
        });
    }
    let token = CancellationToken::new();
    let inner = imp.bridge(WireUpstream::Scripted(ScriptedUpstreamReducer::new(steps)));
    // The upstream's cancellation: the token is set during its call, which then throws.
    let mut reducer = match cancel_at {
        Some(k) => CancelAtCall::at(inner, k, token.clone()),
        None => CancelAtCall::never(inner),
    };
    let policy = bridge_policy()?;
    let mut calls = Vec::with_capacity(c.steps.len());
    for k in 0..c.steps.len() {
        let request = ReductionRequest {
            entries: &current,
            required_entry_ids: &[],
            policy: &policy,
            attempt_number: i32::try_from(k + 1).unwrap_or(i32::MAX),
        };
        let result = hybrid_compaction_model::assembly::Reducer::reduce(&mut reducer, &request);
        if token.is_cancelled() {
            return Err(CaseError::Answer(convert::assembly_error(
                &hybrid_compaction_model::assembly::AssemblyError::Cancelled,
            )));
        }
        let entries = match result {
            Ok(Some(es)) => es,
            Ok(None) => {
                return Err(CaseError::Answer(convert::assembly_error(
                    &hybrid_compaction_model::assembly::AssemblyError::ReducerReturnedNothing,
                )))
            }
            Err(e) => {
                return Err(CaseError::Answer(convert::assembly_error(&e.into())));
            }
        };
        calls.push(convert::entry_outputs(&entries));
        current = entries;
    }
    Ok(Output {
        bridge: Some(BridgeOutput { calls }),
        ..Output::default()
    })
}

// ---------------------------------------------------------------------------------------------
// placeholders and run views

/// Placeholder names in order of first appearance.
#[derive(Debug, Default)]
struct Placeholders {
    prefix: &'static str,
    seen: HashMap<String, String>,
}

impl Placeholders {
    fn new(prefix: &'static str) -> Placeholders {
        Placeholders {
            prefix,
            seen: HashMap::new(),
        }
    }

    fn name(&mut self, key: &str) -> String {
        let next = self.seen.len() + 1;
        self.seen
            .entry(key.to_owned())
            .or_insert_with(|| format!("{}{next}", self.prefix))
            .clone()
    }
}

/// Base of the lease ids of leases a scenario names without a call.
const RAW_LEASE_BASE: u64 = 1 << 40;

fn run_output(
    view: Option<RunView>,
    runs: &mut Placeholders,
    lease_name: impl Fn(usize, LeaseId) -> String,
    revision: impl Fn(Digest) -> u64,
    named: &BTreeSet<Digest>,
) -> Option<RunOutput> {
    let v = view?;
    Some(RunOutput {
        run: runs.name(&v.run.to_string()),
        delivered: v.delivered.iter().map(Digest::to_hex).collect(),
        reserved: v
            .reserved
            .iter()
            .map(|(d, l)| (d.to_hex(), lease_name(v.run, *l)))
            .collect(),
        revisions: named
            .iter()
            .map(|d| (d.to_hex(), revision(*d)))
            .filter(|(_, r)| *r != 0)
            .collect(),
        gate_occupied: v.gate_occupied,
    })
}

fn lease_error(e: &hybrid_compaction_model::lease::LeaseError) -> ErrorOutput {
    convert::answer(e.kind(), None, None, e.to_string())
}

// ---------------------------------------------------------------------------------------------
// leases

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CallState {
    Waiting(usize),
    Admitted(usize, LeaseId),
    Done(usize, Option<LeaseId>),
}

/// The names of a `leases` scenario: flows, calls, raw leases.
#[derive(Debug, Default)]
struct Names {
    flows: HashMap<String, usize>,
    calls: Vec<(String, CallState)>,
    raw: BTreeMap<String, LeaseId>,
}

impl Names {
    fn flow(&self, f: Option<&String>, path: &str) -> Result<usize, CaseError> {
        let name = f.map_or("main", String::as_str);
        match self.flows.get(name) {
            Some(i) => Ok(*i),
            None => wire(
                format!("{path}.flow"),
                format!("no flow named {name:?} (flows are `main` and those `fork` created)"),
            ),
        }
    }

    fn call(&self, name: &str, path: &str) -> Result<usize, CaseError> {
        match self.calls.iter().position(|(n, _)| n == name) {
            Some(i) => Ok(i),
            None => wire(
                format!("{path}.call"),
                format!("no call named {name:?} entered before"),
            ),
        }
    }

    fn admitted(&self, name: &str, path: &str) -> Result<usize, CaseError> {
        let i = self.call(name, path)?;
        match self.calls[i].1 {
            CallState::Admitted(..) => Ok(i),
            _ => wire(
                format!("{path}.call"),
                format!("call {name:?} does not hold the gate"),
            ),
        }
    }

    fn lease(&mut self, name: &str, path: &str) -> Result<LeaseId, CaseError> {
        if let Some((_, state)) = self.calls.iter().find(|(n, _)| n == name) {
            return match state {
                CallState::Admitted(_, l) | CallState::Done(_, Some(l)) => Ok(*l),
                _ => wire(
                    format!("{path}.lease"),
                    format!("call {name:?} has no lease (it never entered the gate)"),
                ),
            };
        }
        let next = LeaseId(RAW_LEASE_BASE + self.raw.len() as u64);
        Ok(*self.raw.entry(name.to_owned()).or_insert(next))
    }

    fn lease_name(&self, run: usize, lease: LeaseId) -> String {
        if let Some((n, _)) = self.raw.iter().find(|(_, l)| **l == lease) {
            return n.clone();
        }
        self.calls
            .iter()
            .find(|(_, s)| matches!(s, CallState::Admitted(r, l) | CallState::Done(r, Some(l)) if *r == run && *l == lease))
            .map_or_else(|| format!("lease-{}", lease.0), |(n, _)| n.clone())
    }
}

fn named_digests(c: &LeasesCase) -> BTreeSet<Digest> {
    let mut out = BTreeSet::new();
    for s in &c.steps {
        match s {
            LeaseStepInput::BeginRun(b) => {
                out.extend(b.revisions.iter().flatten().map(|(b, _)| Digest::of(b)))
            }
            LeaseStepInput::Reserve(r) => {
                out.insert(Digest::of(&r.body));
            }
            LeaseStepInput::Revision(r) => {
                out.insert(Digest::of(&r.body));
            }
            LeaseStepInput::Complete(x) => out.extend(x.forwarded.iter().map(|b| Digest::of(b))),
            LeaseStepInput::Commit(x) => out.extend(x.forwarded.iter().map(|b| Digest::of(b))),
            LeaseStepInput::Capture(x) => out.extend(
                x.entries
                    .iter()
                    .filter_map(|e| e.segment.as_ref())
                    .map(|s| Digest::of(&s.body)),
            ),
            _ => {}
        }
    }
    out
}

/// Which run a step's state is read from.
enum Subject {
    Flow(usize),
    Call(usize),
}

/// The `leases` operation (SPEC LSE-1 .. LSE-10).
pub fn leases(
    c: &LeasesCase,
    imp: &dyn crate::wire::exec::Implementation,
) -> Result<Output, CaseError> {
    let mut world = imp.lease_world();
    let mut names = Names::default();
    names.flows.insert("main".to_owned(), 0);
    let named = named_digests(c);
    let mut runs = Placeholders::new("R");
    let mut out = Vec::with_capacity(c.steps.len());
    for (i, step) in c.steps.iter().enumerate() {
        let path = format!("$.steps[{i}]");
        let mut o = LeaseStepOutput::default();
        let subject = lease_step(&mut *world, &mut names, step, &path, &mut o)?;
        let w: &dyn LeaseWorld = &*world;
        let (view, revision): (Option<RunView>, Box<dyn Fn(Digest) -> u64>) = match subject {
            Subject::Flow(f) => (w.view(f), Box::new(move |d| w.peek_revision(f, d))),
            Subject::Call(k) => (w.call_run(k), Box::new(move |d| w.peek_call_revision(k, d))),
        };
        o.run = run_output(
            view,
            &mut runs,
            |r, l| names.lease_name(r, l),
            revision,
            &named,
        );
        out.push(o);
    }
    Ok(Output {
        leases: Some(out),
        ..Output::default()
    })
}

fn admitted_name(names: &mut Names, admitted: Option<(usize, LeaseId)>) -> Option<String> {
    let (k, lease) = admitted?;
    let run = match names.calls[k].1 {
        CallState::Waiting(r) | CallState::Admitted(r, _) | CallState::Done(r, _) => r,
    };
    names.calls[k].1 = CallState::Admitted(run, lease);
    Some(names.calls[k].0.clone())
}

fn lease_step(
    world: &mut dyn LeaseWorld,
    names: &mut Names,
    step: &LeaseStepInput,
    path: &str,
    o: &mut LeaseStepOutput,
) -> Result<Subject, CaseError> {
    let err = |e: &hybrid_compaction_model::lease::LeaseError| Some(lease_error(e));
    Ok(match step {
        LeaseStepInput::BeginRun(b) => {
            let f = names.flow(b.flow.as_ref(), &format!("{path}.beginRun"))?;
            let revisions: Vec<_> = b
                .revisions
                .iter()
                .flatten()
                .map(|(b, r)| (Digest::of(b), *r))
                .collect();
            world.begin(f, &revisions);
            Subject::Flow(f)
        }
        LeaseStepInput::EnsureRun(x) => {
            let f = names.flow(x.flow.as_ref(), &format!("{path}.ensureRun"))?;
            world.ensure(f);
            Subject::Flow(f)
        }
        LeaseStepInput::EndScope(x) => {
            let f = names.flow(x.flow.as_ref(), &format!("{path}.endScope"))?;
            world.end(f);
            Subject::Flow(f)
        }
        LeaseStepInput::Fork(x) => {
            let p = format!("{path}.fork");
            let f = names.flow(x.flow.as_ref(), &p)?;
            if names.flows.contains_key(&x.into) {
                return wire(
                    format!("{p}.into"),
                    format!("flow {:?} exists already", x.into),
                );
            }
            world.fork(f);
            let child = names.flows.len();
            names.flows.insert(x.into.clone(), child);
            Subject::Flow(child)
        }
        LeaseStepInput::Reserve(x) => {
            let p = format!("{path}.reserve");
            let f = names.flow(x.flow.as_ref(), &p)?;
            let lease = names.lease(&x.lease, &p)?;
            match world.reserve(f, Digest::of(&x.body), lease) {
                Ok(b) => o.reserved = Some(b),
                Err(e) => o.error = err(&e),
            }
            Subject::Flow(f)
        }
        LeaseStepInput::Complete(x) => {
            let p = format!("{path}.complete");
            let f = names.flow(x.flow.as_ref(), &p)?;
            let lease = names.lease(&x.lease, &p)?;
            let fwd: Vec<Digest> = x.forwarded.iter().map(|b| Digest::of(b)).collect();
            if let Err(e) = world.complete(f, lease, &fwd) {
                o.error = err(&e);
            }
            Subject::Flow(f)
        }
        LeaseStepInput::Release(x) => {
            let p = format!("{path}.release");
            let f = names.flow(x.flow.as_ref(), &p)?;
            let lease = names.lease(&x.lease, &p)?;
            if let Err(e) = world.release(f, lease) {
                o.error = err(&e);
            }
            Subject::Flow(f)
        }
        LeaseStepInput::Revision(x) => {
            let f = names.flow(x.flow.as_ref(), &format!("{path}.revision"))?;
            match world.revision(f, Digest::of(&x.body)) {
                Ok(r) => o.revision = Some(r),
                Err(e) => o.error = err(&e),
            }
            Subject::Flow(f)
        }
        LeaseStepInput::Enter(x) => {
            let p = format!("{path}.enter");
            let f = names.flow(x.flow.as_ref(), &p)?;
            if names.calls.iter().any(|(n, _)| *n == x.call) {
                return wire(
                    format!("{p}.call"),
                    format!("call {:?} exists already", x.call),
                );
            }
            if let Some(v) = world.view(f) {
                let waiter = names
                    .calls
                    .iter()
                    .any(|(_, s)| *s == CallState::Waiting(v.run));
                if waiter && v.gate_occupied && !x.cancelled {
                    return wire(format!("{p}.call"), "a call of this run is waiting already: one waiter per run keeps the scenario deterministic");
                }
            }
            let k = names.calls.len();
            let run = world.view(f).map(|v| v.run);
            match world.enter(f, k, x.cancelled) {
                Ok(Entered::Admitted(lease)) => {
                    names
                        .calls
                        .push((x.call.clone(), CallState::Admitted(run.unwrap_or(0), lease)));
                    o.gate = Some("admitted".to_owned());
                }
                Ok(Entered::Waiting) => {
                    names
                        .calls
                        .push((x.call.clone(), CallState::Waiting(run.unwrap_or(0))));
                    o.gate = Some("waiting".to_owned());
                }
                Err(e) => o.error = err(&e),
            }
            Subject::Flow(f)
        }
        LeaseStepInput::CancelWaiter(x) => {
            let p = format!("{path}.cancelWaiter");
            let k = names.call(&x.call, &p)?;
            let CallState::Waiting(run) = names.calls[k].1 else {
                return wire(
                    format!("{p}.call"),
                    format!("call {:?} is not waiting", x.call),
                );
            };
            names.calls[k].1 = CallState::Done(run, None);
            match world.cancel_waiter(k) {
                Ok(Entered::Admitted(lease)) => {
                    names.calls[k].1 = CallState::Admitted(run, lease);
                    o.gate = Some("admitted".to_owned());
                }
                Ok(Entered::Waiting) => o.gate = Some("waiting".to_owned()),
                Err(e) => o.error = err(&e),
            }
            Subject::Call(k)
        }
        LeaseStepInput::Commit(x) => {
            let k = names.admitted(&x.call, &format!("{path}.commit"))?;
            let fwd: Vec<Digest> = x.forwarded.iter().map(|b| Digest::of(b)).collect();
            finish(world, names, k, Some(&fwd), o);
            Subject::Call(k)
        }
        LeaseStepInput::ReleaseCall(x) => {
            let k = names.admitted(&x.call, &format!("{path}.releaseCall"))?;
            finish(world, names, k, None, o);
            Subject::Call(k)
        }
        LeaseStepInput::Abandon(x) => {
            let k = names.admitted(&x.call, &format!("{path}.abandon"))?;
            if let CallState::Admitted(r, l) = names.calls[k].1 {
                names.calls[k].1 = CallState::Done(r, Some(l));
            }
            let admitted = world.abandon(k);
            o.admitted = admitted_name(names, admitted);
            Subject::Call(k)
        }
        LeaseStepInput::Capture(x) => {
            let p = format!("{path}.capture");
            let k = names.admitted(&x.call, &p)?;
            let entries = convert::entries(&x.entries, &format!("{p}.entries"))?;
            let inner = match Snapshot::new(x.version, entries) {
                Ok(s) => s,
                Err(e) => {
                    o.error = Some(convert::assembly_error(&e.into()));
                    return Ok(Subject::Call(k));
                }
            };
            match world.capture(k, inner) {
                Ok(s) => {
                    o.snapshot = Some(CaptureOutput {
                        version: s.version(),
                        entry_ids: s
                            .entries()
                            .iter()
                            .map(|e| e.id().as_str().to_owned())
                            .collect(),
                    });
                }
                Err(e) => o.error = Some(convert::assembly_error(&e.into())),
            }
            Subject::Call(k)
        }
    })
}

fn finish(
    world: &mut dyn LeaseWorld,
    names: &mut Names,
    k: usize,
    forwarded: Option<&[Digest]>,
    o: &mut LeaseStepOutput,
) {
    if let CallState::Admitted(r, l) = names.calls[k].1 {
        names.calls[k].1 = CallState::Done(r, Some(l));
    }
    let (result, admitted) = world.finish(k, forwarded);
    if let Err(e) = result {
        o.error = Some(lease_error(&e));
    }
    o.admitted = admitted_name(names, admitted);
}

// ---------------------------------------------------------------------------------------------
// node

/// The `node` operation's inputs, converted.
#[derive(Debug, Clone)]
pub struct NodeSetup {
    /// The switch.
    pub enabled: bool,
    /// The options, if supplied.
    pub options: Option<(Policy, WireUpstream)>,
}

fn upstream(r: Option<&ReducerInput>) -> Result<WireUpstream, CaseError> {
    Ok(match r {
        None => WireUpstream::Scripted(ScriptedUpstreamReducer::new(Vec::new())),
        Some(ReducerInput::MessageCounting(m)) => WireUpstream::Counting(MessageCountingReducer {
            target_count: m.target_count as usize,
        }),
        Some(ReducerInput::Upstream(u)) => {
            let mut steps = Vec::with_capacity(u.steps.len());
            for (i, st) in u.steps.iter().enumerate() {
                let path = format!("$.reducer.steps[{i}]");
                steps.push(match st {
                    UpstreamStepInput::Echo => UpstreamStep::Echo,
                    UpstreamStepInput::Null => UpstreamStep::Null,
                    UpstreamStepInput::Fail(m) => UpstreamStep::Fail(m.clone()),
                    UpstreamStepInput::Return(ms) => {
                        let mut out = Vec::with_capacity(ms.len());
                        for (j, m) in ms.iter().enumerate() {
                            out.push(convert::message(m, &format!("{path}.return[{j}]"))?);
                        }
                        UpstreamStep::Return(out)
                    }
                });
            }
            WireUpstream::Scripted(ScriptedUpstreamReducer::new(steps))
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
    Ok(CallPlan {
        messages,
        schedule,
        no_provider: c.no_provider,
        cancel_before,
        cancel_capture,
        provider_fails: c.provider_fails.clone(),
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
    match &r.end {
        CallEnd::Sent(ms, fwd) => NodeStepOutput {
            sent: Some(sent(ms)),
            forwarded: Some(fwd.iter().map(Digest::to_hex).collect()),
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
        // Disabled (SPEC NODE-1): every call goes to the provider unchanged, nothing else.
        for (s, p) in c.steps.iter().zip(&plans) {
            let mut o = NodeStepOutput::default();
            if let (NodeStepInput::Call(_), Some(p)) = (s, p) {
                o.sent = Some(sent(&p.messages));
                if let Some(m) = &p.provider_fails {
                    o.sent = None;
                    o.error = Some(convert::answer(
                        hybrid_compaction_model::error::ErrorKind::InvalidOperation,
                        None,
                        None,
                        format!("provider call failed: {m}"),
                    ));
                }
            }
            steps.push(o);
        }
        return Ok(Output {
            node: Some(NodeOutput {
                selection: "Disabled".to_owned(),
                steps,
            }),
            ..Output::default()
        });
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
