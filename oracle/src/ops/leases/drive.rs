//! Running a `leases` scenario: the names of flows, calls and leases (checked with
//! path-precise wire errors: one waiter per run keeps a scenario deterministic), each step on
//! the implementation's [`LeaseWorld`], and the run views rendered with placeholders.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::assembly::AssemblyError;
use hybrid_compaction_model::lease::{LeaseError, LeaseId};
use hybrid_compaction_model::seam::{Admission, Entered, Implementation, LeaseWorld, RunView};
use hybrid_compaction_model::snapshot::Snapshot;

use super::{CaptureOutput, LeaseStepInput, LeaseStepOutput, LeasesCase};
use crate::wire::convert;
use crate::wire::error::{error_output, wire, CaseError};
use crate::wire::runs::{run_output, Placeholders, RAW_LEASE_BASE};

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

/// Steps `c` through `imp`'s lease world (SPEC LSE-1 .. LSE-10): one answer per step.
pub(crate) fn run(
    c: &LeasesCase,
    imp: &dyn Implementation,
) -> Result<Vec<LeaseStepOutput>, CaseError> {
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
    Ok(out)
}

fn admitted_name(names: &mut Names, admitted: Admission) -> Option<String> {
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
    let err = |e: &LeaseError| Some(error_output(e));
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
                    o.error = Some(error_output(&AssemblyError::from(e)));
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
                Err(e) => o.error = Some(error_output(&AssemblyError::from(e))),
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
        o.error = Some(error_output(&e));
    }
    o.admitted = admitted_name(names, admitted);
}
