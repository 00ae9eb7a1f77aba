//! Rebuilding a recorded call as vocabulary and replaying it through an implementation
//! (SPEC TRC-1).
//!
//! The recorded snapshots become a schedule (SPEC SNAP-5, as the vocabulary's
//! `ScriptedProvider` plays one): the k-th capture of the replay sees the k-th recorded
//! capture. Each distinct recorded list is validated once (SPEC SNAP-1) and shared by the
//! provider and the per-call checks, never copied. The recorded reducer answers become the
//! vocabulary's scripted reducer over a shared script (kept ids are looked up in the replay's
//! own request, exactly like the wire's scripted reducer). The assembler of the chosen
//! implementation (the spec by default, `--engine` for the engine) then answers, and its result
//! and diagnostics are compared with the recorded ones.
//!
//! Redacted entries (no content) are rebuilt by [`crate::trace::read::entries`] with the same structure and
//! the content digest as their only text, so the verifier's structural equality (SPEC VER-2)
//! compares digests. Their sizes come from the trace ([`crate::trace::read::sizes`]): a per-call table
//! keyed by (id, content key), or, for a compact call whose entries are all distinct table
//! entries of its run, the run's own table.

use std::collections::HashMap;
use std::sync::Arc;

use hybrid_compaction_model::assembly::{
    ContractViolation, Reducer, ReducerError, ReductionRequest,
};

use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::reducers::{CancelAtCall, ProposalItem, ScriptStep, ScriptedReducer};
use hybrid_compaction_model::snapshot::{ScriptedProvider, SharedEntries};

use crate::trace::format::{CallRecord, ReducerAnswer, ReducerStep, TraceEntry, TraceProposalItem};
pub(crate) use crate::trace::judge::answer::Answer;
pub(crate) use crate::trace::read::entries::PrepareError;
use crate::trace::read::entries::{entry_at, unreadable};
use crate::trace::read::sizes::CarriedSizes;
pub(crate) use crate::trace::read::sizes::RecordedSizes;
use crate::trace::read::tables::{Item, Resolved, Sized};
use crate::wire::convert::{self, CancelPoint};
use crate::wire::error::error_output;
use crate::wire::error::CaseError;
use crate::wire::input::{ConstantEstimatorInput, EstimatorInput};
use crate::wire::output::{assembly_output, diagnostics_output};
use hybrid_compaction_model::seam::Implementation;

/// A recorded call rebuilt as vocabulary.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The policy (with the recorded-sizes estimator for redacted traces).
    pub policy: Policy,
    /// The snapshot schedule, one step per recorded capture: its version and its entries (a
    /// repeated list is the same shared list).
    pub steps: Vec<(i64, Arc<[Entry]>)>,
    /// The same lists validated (SPEC SNAP-1), when every one is a valid snapshot: the replay
    /// plays them as they are. `None`: the replay's provider validates them itself, so an
    /// invalid list fails at its capture, as the SPEC's does.
    shared: Option<Vec<(i64, SharedEntries)>>,
    /// Every new entry of every proposal, in order.
    pub news: Vec<Entry>,
    reducer: Arc<[ScriptStep]>,
    /// The cancellation point; `Err(())` when it is unknown (no replay).
    pub cancel: Result<Option<CancelPoint>, ()>,
}

/// A policy the wire format or the SPEC refuses (SPEC POL-2): the trace is unreadable.
fn policy_unreadable(e: CaseError) -> PrepareError {
    match e {
        CaseError::Wire(w) => PrepareError::Unreadable(w.to_string()),
        CaseError::Answer(a) => PrepareError::Unreadable(format!("$.policy: {}", a.message)),
    }
}

/// Builds a call's version-1 entries, each distinct one once: an entry recorded again (in a
/// later snapshot or a proposal) with the same id and the same recorded form shares the first
/// build.
#[derive(Default)]
struct Builder<'r> {
    built: HashMap<&'r str, Vec<(&'r TraceEntry, Entry)>>,
}

impl<'r> Builder<'r> {
    fn build(
        &mut self,
        t: &'r TraceEntry,
        path: impl Fn() -> String,
    ) -> Result<Entry, PrepareError> {
        let slot = self.built.entry(t.id.as_str()).or_default();
        if let Some((_, e)) = slot.iter().find(|(s, _)| *s == t) {
            return Ok(e.clone());
        }
        let e = entry_at(t, path)?;
        slot.push((t, e.clone()));
        Ok(e)
    }
}

/// The recorded sizes of a call, as its entries are rebuilt: checked into a table of the call's
/// own, or (`carried`) only checked to be there, the run's table answering them.
struct Sizing {
    recorded: bool,
    carried: bool,
    table: RecordedSizes,
}

impl Sizing {
    fn size(
        &mut self,
        e: &Entry,
        size: Option<i32>,
        path: &dyn Fn() -> String,
    ) -> Result<(), PrepareError> {
        if !self.recorded {
            return Ok(());
        }
        match size {
            Some(_) if self.carried => Ok(()),
            Some(s) => self.table.insert(e, s),
            None => Err(PrepareError::Unreadable(format!(
                "{}: the `recorded` estimator needs a `size` on every entry",
                path()
            ))),
        }
    }
}

/// The list of one recorded capture: the previous capture's when it holds the very same
/// entries (a repeated snapshot), else its own.
fn listed(steps: &[(i64, Arc<[Entry]>)], es: Arc<[Entry]>) -> Arc<[Entry]> {
    match steps.last() {
        Some((_, prev))
            if prev.len() == es.len() && prev.iter().zip(es.iter()).all(|(a, b)| a.ptr_eq(b)) =>
        {
            Arc::clone(prev)
        }
        _ => es,
    }
}

/// Each distinct list validated once (SPEC SNAP-1), but for those `unique` says have distinct
/// ids by construction ([`Resolved::unique`]); `None` if any is not a valid snapshot.
fn validated(steps: &[(i64, Arc<[Entry]>)], unique: &[bool]) -> Option<Vec<(i64, SharedEntries)>> {
    let mut out: Vec<(i64, SharedEntries)> = Vec::with_capacity(steps.len());
    for (k, (version, list)) in steps.iter().enumerate() {
        let shared = match out.last() {
            Some((_, s)) if k > 0 && Arc::ptr_eq(&steps[k - 1].1, list) => s.clone(),
            _ if unique.get(k) == Some(&true) => SharedEntries::from_arc_unique(Arc::clone(list)),
            _ => SharedEntries::from_arc(Arc::clone(list)).ok()?,
        };
        out.push((*version, shared));
    }
    Some(out)
}

/// Rebuilds a call record (paths in messages are relative to the record, `$`); `resolved`
/// holds the entries of its version-2 table references ([`crate::trace::read::tables`]).
pub(crate) fn prepare(
    rec: &CallRecord,
    resolved: &mut Resolved,
    imp: &dyn Implementation,
) -> Result<Prepared, PrepareError> {
    let mut p = Preparing::new(rec, resolved);
    let steps = p.schedule(rec, resolved)?;
    let reducer = rec
        .reducer
        .iter()
        .enumerate()
        .map(|(i, st)| p.reducer_step(i, st, resolved.items.get_mut(i)))
        .collect::<Result<Vec<_>, _>>()?;
    let policy = p.policy(rec, imp)?;
    let cancel = match rec.cancel.as_deref() {
        Some("unknown") => Err(()),
        other => Ok(
            convert::cancel_point(other.map(str::to_owned).as_ref(), "$.cancel")
                .map_err(|e| unreadable("$.cancel", e))?,
        ),
    };
    Ok(Prepared {
        policy,
        shared: validated(&steps, &resolved.unique),
        steps,
        news: p.news,
        reducer: reducer.into(),
        cancel,
    })
}

/// A snapshot schedule: per capture, its version and its entries.
type Schedule = Vec<(i64, Arc<[Entry]>)>;

/// One call record being rebuilt: its entries (each distinct one built once), their recorded
/// sizes, and the new entries of its proposals.
struct Preparing<'r> {
    builder: Builder<'r>,
    sizing: Sizing,
    /// A carried call's distinct lists, each entry beside its recorded size.
    sized: Vec<Sized>,
    /// Every new entry of every proposal, in order.
    news: Vec<Entry>,
    /// The recorded sizes of the new entries that came from the run's table.
    news_sizes: Vec<Option<i32>>,
}

impl<'r> Preparing<'r> {
    fn new(rec: &CallRecord, resolved: &Resolved) -> Preparing<'r> {
        let recorded = matches!(rec.policy.estimator, Some(EstimatorInput::Recorded(_)));
        let carried = recorded && resolved.carried;
        let mut sizing = Sizing {
            recorded,
            carried,
            table: RecordedSizes::default(),
        };
        if recorded && !carried {
            // Most entries of a call are those of its largest snapshot: size the maps once.
            let n = resolved
                .snapshots
                .iter()
                .flatten()
                .map(|(es, _)| es.len())
                .chain(
                    rec.snapshots
                        .iter()
                        .filter_map(|s| s.entries.as_ref().map(Vec::len)),
                )
                .max()
                .unwrap_or(0);
            sizing.table = RecordedSizes::with_capacity(None, n);
        }
        Preparing {
            builder: Builder::default(),
            sizing,
            sized: Vec::new(),
            news: Vec::new(),
            news_sizes: Vec::new(),
        }
    }

    /// The snapshot schedule, one step per recorded capture.
    fn schedule(
        &mut self,
        rec: &'r CallRecord,
        resolved: &mut Resolved,
    ) -> Result<Schedule, PrepareError> {
        let mut steps: Schedule = Vec::with_capacity(rec.snapshots.len());
        for (i, s) in rec.snapshots.iter().enumerate() {
            let refs = resolved.snapshots.get_mut(i).and_then(Option::take);
            let list = match (&s.entries, refs) {
                (_, Some((es, sizes))) => self.referred(&steps, i, es, sizes)?,
                (Some(ts), None) => {
                    let mut es = Vec::with_capacity(ts.len());
                    for (j, t) in ts.iter().enumerate() {
                        let p = || format!("$.snapshots[{i}].entries[{j}]");
                        let e = self.builder.build(t, p)?;
                        self.sizing.size(&e, t.size, &p)?;
                        es.push(e);
                    }
                    listed(&steps, es.into())
                }
                (None, None) => match steps.last() {
                    Some((_, prev)) => Arc::clone(prev),
                    None => {
                        return Err(PrepareError::Unreadable(format!(
                            "$.snapshots[{i}]: the first snapshot needs `entries`"
                        )))
                    }
                },
            };
            steps.push((s.version, list));
        }
        Ok(steps)
    }

    /// The list of the `i`th capture, written as table references: its entries and their
    /// recorded sizes (kept beside them for a carried call).
    fn referred(
        &mut self,
        steps: &[(i64, Arc<[Entry]>)],
        i: usize,
        es: Arc<[Entry]>,
        sizes: Vec<Option<i32>>,
    ) -> Result<Arc<[Entry]>, PrepareError> {
        for (j, (e, size)) in es.iter().zip(&sizes).enumerate() {
            self.sizing
                .size(e, *size, &|| format!("$.snapshots[{i}].refs[{j}]"))?;
        }
        let list = listed(steps, es);
        let repeated = steps.last().is_some_and(|(_, l)| Arc::ptr_eq(l, &list));
        if self.sizing.carried && !repeated {
            self.sized.push((Arc::clone(&list), sizes));
        }
        Ok(list)
    }

    /// The `i`th reducer step as a script step; `refs` holds the table entries of its items,
    /// which are moved into its proposal.
    fn reducer_step(
        &mut self,
        i: usize,
        st: &'r ReducerStep,
        mut refs: Option<&mut Vec<Option<Item>>>,
    ) -> Result<ScriptStep, PrepareError> {
        let path = || format!("$.reducer[{i}].answer");
        Ok(match &st.answer {
            ReducerAnswer::Nothing => ScriptStep::Nothing,
            ReducerAnswer::Error(k) if k == "ReducerContract" => {
                ScriptStep::Contract(ContractViolation::NullResult)
            }
            ReducerAnswer::Error(k) if k == "ReducerFailed" => {
                ScriptStep::Fail("recorded failure".to_owned())
            }
            ReducerAnswer::Error(k) => {
                return Err(PrepareError::Unreadable(format!(
                    "{}.error: expected ReducerFailed or ReducerContract, got {k:?}",
                    path()
                )))
            }
            ReducerAnswer::Propose(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (j, item) in items.iter().enumerate() {
                    let def = refs
                        .as_mut()
                        .and_then(|r| r.get_mut(j))
                        .and_then(Option::take);
                    out.push(
                        self.proposal_item(item, def, &|| format!("{}.propose[{j}]", path()))?,
                    );
                }
                ScriptStep::Propose(out)
            }
        })
    }

    /// One proposal item at `path`, its table entry `def` when it was written as a reference.
    fn proposal_item(
        &mut self,
        item: &'r TraceProposalItem,
        def: Option<Item>,
        path: &dyn Fn() -> String,
    ) -> Result<ProposalItem, PrepareError> {
        let new_path = || format!("{}.new", path());
        Ok(match (item, def) {
            (TraceProposalItem::Keep(id), _) => ProposalItem::Keep(id.clone()),
            (TraceProposalItem::KeepRef(_), Some(d)) => ProposalItem::KeepIdOf(d.entry),
            (TraceProposalItem::New(n), _) => {
                let e = self.builder.build(&n.new, new_path)?;
                self.sizing.size(&e, n.new.size, &new_path)?;
                self.news.push(e.clone());
                ProposalItem::New(e)
            }
            (TraceProposalItem::NewRef(_), Some(d)) => {
                self.sizing.size(&d.entry, d.size, &new_path)?;
                self.news.push(d.entry.clone());
                self.news_sizes.push(d.size);
                ProposalItem::New(d.entry)
            }
            (TraceProposalItem::KeepRef(_) | TraceProposalItem::NewRef(_), None) => {
                return Err(PrepareError::Unreadable(format!(
                    "{}: a table index in a record that was not resolved against its run's table",
                    path()
                )))
            }
        })
    }

    /// The call's policy: the recorded one, its `recorded` estimator (if it has one) answering
    /// from the sizes gathered while the entries were rebuilt.
    fn policy(
        &mut self,
        rec: &CallRecord,
        imp: &dyn Implementation,
    ) -> Result<Policy, PrepareError> {
        let Some(EstimatorInput::Recorded(r)) = &rec.policy.estimator else {
            return convert::policy(Some(&rec.policy), imp, "$.policy").map_err(policy_unreadable);
        };
        let unit = r.unit.map(|u| u.0);
        let estimator: Arc<dyn Estimator> = if self.sizing.carried {
            let mut sized = std::mem::take(&mut self.sized);
            if !self.news.is_empty() {
                sized.push((
                    self.news.iter().cloned().collect(),
                    std::mem::take(&mut self.news_sizes),
                ));
            }
            Arc::new(CarriedSizes::new(unit, sized))
        } else {
            Arc::new(std::mem::take(&mut self.sizing.table).in_unit(unit))
        };
        let mut p = rec.policy.clone();
        p.estimator = Some(EstimatorInput::Constant(ConstantEstimatorInput { size: 0 }));
        Ok(convert::policy(Some(&p), imp, "$.policy")
            .map_err(policy_unreadable)?
            .with_estimator(estimator))
    }
}

/// A reducer that notes the attempt number of every request it forwards.
struct Noting<R> {
    inner: R,
    attempts: Vec<i32>,
}

impl<R: Reducer> Reducer for Noting<R> {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        self.attempts.push(request.attempt_number);
        self.inner.reduce(request)
    }
}

/// What the implementation answers for the recorded inputs: the assembly and diagnostics, or
/// the error (SPEC ERR-1). Diagnostics are built only after a successful assembly.
pub(crate) fn answer(prep: &Prepared, imp: &dyn Implementation) -> Answer {
    let point = prep.cancel.ok().flatten();
    let token = match point {
        Some(CancelPoint::Before) => CancellationToken::cancelled(),
        _ => CancellationToken::new(),
    };
    let mut provider = match &prep.shared {
        Some(lists) => ScriptedProvider::from_shared(lists.clone()),
        None => ScriptedProvider::new(prep.steps.iter().map(|(v, l)| (*v, l.to_vec())).collect()),
    };
    if let Some(CancelPoint::Capture(k)) = point {
        provider = provider.cancel_at_capture(k, token.clone());
    }
    let script = ScriptedReducer::shared(Arc::clone(&prep.reducer));
    let mut reducer = Noting {
        inner: match point {
            Some(CancelPoint::Reducer(k)) => CancelAtCall::at(script, k, token.clone()),
            _ => CancelAtCall::never(script),
        },
        attempts: Vec::new(),
    };
    let assembled = imp.assemble(&prep.policy, &mut provider, &mut reducer, &token);
    let mut out = Answer {
        captures: provider.captures(),
        attempts: reducer.attempts,
        cancelled_after: assembled.is_ok() && token.is_cancelled(),
        ..Answer::default()
    };
    let result = match assembled {
        Ok(r) => r,
        Err(e) => {
            out.error = Some(error_output(&e));
            return out;
        }
    };
    out.assembly = Some(assembly_output(&result));
    match imp.diagnostics(&result, &prep.policy) {
        Ok(d) => out.diagnostics = Some(diagnostics_output(&d)),
        Err(e) => out.error = Some(error_output(&e)),
    }
    out
}
