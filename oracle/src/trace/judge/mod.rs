//! # Judging a trace's records, each on its own (stage 4 of a check)
//!
//! A resolved record ([`super::read::Parsed`]) is judged without looking at any other: a call
//! record is rebuilt as vocabulary and replayed through the chosen implementation
//! ([`replay`]; an earlier call's answer reused when the inputs are equal, [`answer`]), then its
//! recorded answer, what it forwarded and its events are held against the SPEC's
//! ([`invariants`]), and a disagreeing call is shrunk to a wire case ([`shrink`]); an observed
//! record is judged by what it sent ([`observed`]). The records of a batch are judged in
//! parallel; what one call tells about later calls of its run is folded in line order
//! afterwards ([`cross`], from [`super::check`]).
//!
//! | module | holds |
//! |---|---|
//! | [`replay`] | a recorded call rebuilt as vocabulary and replayed (SPEC TRC-1) |
//! | [`answer`] | the SPEC's answer for a call, and the answers a run keeps for reuse |
//! | [`invariants`] | the per-call checks (TRC-1 .. TRC-7, TRC-9 .. TRC-11) |
//! | [`observed`] | observed calls judged by what they sent (TRC-13) |
//! | [`cross`] | what calls of one run may not contradict (TRC-8, TRC-11, TRC-12) |
//! | [`shrink`] | a minimal wire case for a call whose replay disagrees |

pub(crate) mod answer;
pub(crate) mod cross;
pub(crate) mod invariants;
pub(crate) mod observed;
pub(crate) mod replay;
pub(crate) mod shrink;

use std::sync::Arc;

use rayon::prelude::*;

use self::invariants::{Finding, RunFacts};
use self::shrink::Counterexample;
use super::read::entries::PrepareError;
use super::read::tables::{Resolved, Tables};
use super::read::{Malformed, Parsed};
use crate::trace::format::{CallRecord, ObservedRecord};
use hybrid_compaction_model::seam::Implementation;

/// What judging one record produced.
pub(super) enum Checked {
    /// A call record and its outcome.
    Call(Box<CallRecord>, Box<CallOutcome>),
    /// An observed record and its outcome.
    Observed(Box<ObservedRecord>, Box<observed::Observed>),
    /// The end of a run.
    RunEnd(String),
}

/// What judging one call record produced.
pub(super) struct CallOutcome {
    /// Its violations (cross-call ones are added when it is folded).
    pub(super) findings: Vec<Finding>,
    /// It was replayed (TRC-1).
    pub(super) replayed: bool,
    /// The answer was an earlier call's.
    pub(super) reused: bool,
    /// The shrunk wire case of a disagreeing replay.
    pub(super) counterexample: Option<Counterexample>,
    /// What the cross-call checks need from it.
    pub(super) run: RunFacts,
}

impl CallOutcome {
    /// An outcome of `findings` alone: nothing replayed.
    fn unreplayed(findings: Vec<Finding>) -> CallOutcome {
        CallOutcome {
            findings,
            replayed: false,
            reused: false,
            counterexample: None,
            run: RunFacts::default(),
        }
    }

    /// An implementation that panicked on recorded inputs: a failure to report (exit 1), not
    /// an unreadable trace.
    fn failed_internally(
        imp: &dyn Implementation,
        payload: Box<dyn std::any::Any + Send>,
    ) -> CallOutcome {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic payload".to_owned());
        CallOutcome::unreplayed(vec![Finding {
            clause: "TRC-1",
            message: format!(
                "the {} failed internally on this call: {message}",
                imp.name()
            ),
        }])
    }
}

/// How to judge: the implementation, whether to shrink counterexamples, and the runs' tables
/// (read only while a batch is judged: a compact record's counterexample is written out from
/// its run's table).
#[derive(Clone, Copy)]
pub(super) struct Judge<'a> {
    pub(super) imp: &'a dyn Implementation,
    pub(super) counterexamples: bool,
    pub(super) tables: &'a Tables,
}

/// Stage 4: the records of a batch judged (in parallel with more than one job).
pub(super) fn judge(
    pool: &rayon::ThreadPool,
    parsed: Vec<Result<Parsed, Malformed>>,
    judge: Judge<'_>,
    jobs: usize,
) -> Vec<Result<Checked, Malformed>> {
    let one = |p: Result<Parsed, Malformed>| p.and_then(|p| judge.record(p));
    if jobs <= 1 {
        parsed.into_iter().map(one).collect()
    } else {
        pool.install(|| parsed.into_par_iter().map(one).collect())
    }
}

impl Judge<'_> {
    /// One resolved record judged.
    fn record(self, p: Parsed) -> Result<Checked, Malformed> {
        match p {
            Parsed::RunEnd(r) => Ok(Checked::RunEnd(r)),
            Parsed::Observed(rec, entries) => {
                let o = observed::check(&rec, entries, self.imp, self.counterexamples)?;
                Ok(Checked::Observed(rec, Box::new(o)))
            }
            Parsed::Call(rec, resolved) => {
                // An implementation that panics on recorded inputs is a failure to report
                // (exit 1), not an unreadable trace.
                let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    self.call(&rec, resolved)
                }));
                let o = match caught {
                    Ok(o) => o?,
                    Err(payload) => CallOutcome::failed_internally(self.imp, payload),
                };
                Ok(Checked::Call(rec, Box::new(o)))
            }
        }
    }

    /// The per-call checks of `rec`, resolved as `resolved`.
    fn call(self, rec: &CallRecord, mut resolved: Resolved) -> Result<CallOutcome, Malformed> {
        let imp = self.imp;
        let prep = match replay::prepare(rec, &mut resolved, imp) {
            Ok(p) => p,
            Err(PrepareError::Unreadable(m)) => return Err(Malformed::new(m)),
            Err(PrepareError::Inconsistent(m)) => {
                let mut findings = vec![Finding {
                    clause: "TRC-1",
                    message: m,
                }];
                findings.extend(invariants::events(rec, None, None));
                return Ok(CallOutcome::unreplayed(findings));
            }
        };
        let mut reused = false;
        let (answer, mut findings) = invariants::replay(rec, &prep, || match &resolved.key {
            Some((key, answers)) => match answers.get(key) {
                Some(a) => {
                    reused = true;
                    a
                }
                None => {
                    let a = Arc::new(replay::answer(&prep, imp));
                    answers.put(*key, Arc::clone(&a));
                    a
                }
            },
            None => Arc::new(replay::answer(&prep, imp)),
        });
        let replayed = answer.is_some();
        let disagrees = !findings.is_empty();
        findings.extend(invariants::forwarded(rec, &prep, imp));
        findings.extend(invariants::events(rec, Some(&prep), answer.as_deref()));
        let counterexample = match answer {
            Some(_) if self.counterexamples && disagrees => self.shrunk(rec, &resolved, &prep),
            _ => None,
        };
        Ok(CallOutcome {
            findings,
            replayed,
            reused,
            counterexample,
            run: invariants::run_facts(rec, &prep),
        })
    }

    /// The shrunk counterexample of a disagreeing call. A compact record is written out by
    /// its run's table first (which keeps the recorded entries, so no call copies them).
    fn shrunk(
        self,
        rec: &CallRecord,
        resolved: &Resolved,
        prep: &replay::Prepared,
    ) -> Option<Counterexample> {
        if !resolved.compact {
            return shrink::counterexample(rec, prep, self.imp);
        }
        let full = resolved
            .table()
            .and_then(|id| self.tables.expand(rec, id))?;
        shrink::counterexample(&full, prep, self.imp)
    }
}
