//! Observed calls (SPEC TRC-13): judging any system by what it sent.
//!
//! A framework's own compaction (LangChain's summarization or trimming, Agent Framework's
//! strategies) or none at all records, per provider call, the history it held and the entries
//! it sent. Nothing is replayed: there is no assembler whose answer could be compared. The sent
//! entries take the place of a call record's forwarded entries and the history that of its last
//! captured snapshot, and the same judgment applies ([`crate::trace::judge::invariants::Judged`]: TRC-2 ..
//! TRC-5, with the chosen implementation's verifier, required ids and tool analysis). Across
//! calls the record adds its call id and the recovered bodies it delivered to its run's state
//! ([`crate::trace::judge::cross`]).
//!
//! Reading happens first, like a call record's: [`crate::trace::read::observed::resolve`] runs in
//! line order (it may define entries in the run's table, version 2's compact profile) and
//! builds the entries; [`check`] runs in parallel with the other records of a batch.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value as Json;

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::seam::Implementation;

use crate::ops::verify::{ProposedItem, VerifyCase};
use crate::ops::{run_case, Case, Output};
use crate::trace::format::{Dispatch, ObservedRecord, TraceEntries, TraceEntry};
use crate::trace::judge::invariants::{segment_digests, Finding, Judged, RunFacts};
use crate::trace::judge::shrink::{wire_entry, Counterexample, BUDGET};
use crate::trace::read::observed::{ObservedEntries, Sources};
use crate::trace::read::Malformed;
use crate::wire::convert;
use crate::wire::error::CaseError;
use crate::wire::input::{EstimatorInput, NoParameters, PolicyInput};

/// What checking one observed record produced.
#[derive(Debug, Default)]
pub(crate) struct Observed {
    /// Its violations.
    pub findings: Vec<Finding>,
    /// What the cross-call checks need from it.
    pub facts: RunFacts,
    /// A wire `verify` case that reproduces the rejection of what was sent, shrunk (SPEC TRC-3
    /// .. TRC-5 violations, when counterexamples are asked for).
    pub counterexample: Option<Counterexample>,
}

fn unreadable(e: CaseError) -> Malformed {
    match e {
        CaseError::Wire(w) => Malformed::new(w.to_string()),
        CaseError::Answer(a) => Malformed::new(format!("$.policy: {}", a.message)),
    }
}

/// The policy the verifier and the required ids read (SPEC TRC-13: the retention count only;
/// the verifier performs no size check, VER-1), with the record's estimator where it is a wire
/// one. The other fields take values POL-2 accepts for any hard limit.
fn policy(rec: &ObservedRecord, imp: &dyn Implementation) -> Result<Policy, Malformed> {
    let p = &rec.policy;
    if p.hard_limit <= 0 {
        return Err(Malformed::new(format!(
            "$.policy.hardLimit: must be positive (POL-2), got {}",
            p.hard_limit
        )));
    }
    let estimator = match &p.estimator {
        EstimatorInput::Recorded(_) => None,
        e => Some(convert::estimator(e, imp, "$.policy.estimator").map_err(unreadable)?),
    };
    Policy::new(PolicySpec {
        hard_limit: p.hard_limit.max(2),
        trigger_margin: 1,
        recent_message_retention_count: p.recent_message_retention_count,
        maximum_compaction_attempts: 1,
        preservation_label: Some("observed".to_owned()),
        preservation_version: 1,
        estimator: Some(estimator.unwrap_or_else(|| imp.context_estimator())),
    })
    .map_err(|e| Malformed::new(format!("$.policy: {e}")))
}

/// SPEC TRC-13: judges one observed record (TRC-2 .. TRC-5 for what it sent against its
/// history) and gathers what the run's cross-call checks need (TRC-8, TRC-12). An `Err` is an
/// unreadable record.
pub(crate) fn check(
    rec: &ObservedRecord,
    entries: ObservedEntries,
    imp: &dyn Implementation,
    cex: bool,
) -> Result<Observed, Malformed> {
    let policy = policy(rec, imp)?;
    let Some(sent) = entries.sent else {
        return Ok(Observed::default());
    };
    let history: Vec<Entry> = entries.history.into_iter().map(|(e, _)| e).collect();
    let (sent, sizes): (Vec<Entry>, Vec<Option<i32>>) = sent.into_iter().unzip();
    let mut findings = Vec::new();
    let measured = match &rec.policy.estimator {
        EstimatorInput::Recorded(_) => Some(sizes.iter().map(|s| s.unwrap_or(0) as i64).sum()),
        _ => match imp.size(&sent, policy.estimator()) {
            Ok(n) => Some(n as i64),
            Err(e) => {
                findings.push(Finding {
                    clause: "TRC-2",
                    message: format!("the sent entries cannot be measured: {e}"),
                });
                None
            }
        },
    };
    let judged = Judged {
        what: "sent",
        against: "the history",
        recorded_size: None,
        hard_limit: rec.policy.hard_limit,
    };
    findings.extend(judged.sent(&history, &sent, measured.unwrap_or(0), &policy, imp));
    let committed = if rec.dispatch() == Dispatch::Answered {
        let mut seen = std::collections::HashSet::new();
        let mut d = segment_digests(&sent);
        d.retain(|x| seen.insert(x.clone()));
        d
    } else {
        Vec::new()
    };
    let rejected = findings
        .iter()
        .any(|f| matches!(f.clause, "TRC-3" | "TRC-4" | "TRC-5"));
    let counterexample = if cex && rejected {
        let history = recorded(Some(&rec.history), &entries.sources.0);
        let sent = recorded(rec.sent.as_ref(), &entries.sources.1);
        counterexample(rec, &as_refs(&history), &as_refs(&sent), imp)
    } else {
        None
    };
    Ok(Observed {
        findings,
        facts: RunFacts {
            captured: Vec::new(),
            committed,
        },
        counterexample,
    })
}

fn as_refs<'a>(l: &'a [Cow<'_, TraceEntry>]) -> Vec<&'a TraceEntry> {
    l.iter().map(|t| &**t).collect()
}

/// The recorded entries of a list: written out in the record, or those of its run's table
/// entries.
fn recorded<'a>(written: Option<&'a TraceEntries>, refs: &Sources) -> Vec<Cow<'a, TraceEntry>> {
    match (written.and_then(|l| l.entries.as_ref()), refs) {
        (Some(ts), _) => ts.iter().map(Cow::Borrowed).collect(),
        (None, Some(ds)) => ds
            .iter()
            .filter_map(|d| d.recorded().map(Cow::Owned))
            .collect(),
        (None, None) => Vec::new(),
    }
}

/// The `verify` case of what an observed call sent against its history: history entries as the
/// original (redacted ones with their digest as text), sent entries recorded as their history
/// entry was by id, the others in full.
fn verify_case(rec: &ObservedRecord, history: &[&TraceEntry], sent: &[&TraceEntry]) -> VerifyCase {
    let by_id: HashMap<&str, &TraceEntry> = history.iter().map(|t| (t.id.as_str(), *t)).collect();
    VerifyCase {
        policy: Some(PolicyInput {
            hard_limit: rec.policy.hard_limit.max(2),
            trigger_margin: 1,
            recent_message_retention_count: rec.policy.recent_message_retention_count,
            maximum_compaction_attempts: 1,
            preservation_label: Some("observed".to_owned()),
            preservation_version: 1,
            estimator: Some(EstimatorInput::Utf8(NoParameters {})),
        }),
        original: history.iter().map(|t| wire_entry(t)).collect(),
        proposed: sent
            .iter()
            .map(|t| match by_id.get(t.id.as_str()) {
                Some(h) if *h == *t => ProposedItem::Same(t.id.clone()),
                _ => ProposedItem::Entry(wire_entry(t)),
            })
            .collect(),
        cancel: None,
    }
}

/// The rejection of a `verify` case: its reasons, if the SPEC rejects it.
fn rejection(case: &VerifyCase, imp: &dyn Implementation) -> Option<(Output, Json)> {
    let out = run_case(&Case::Verify(case.clone()), imp).ok()?;
    let v = serde_json::to_value(&out).ok()?;
    let reasons = v.pointer("/verification/rejectionReasons")?.clone();
    (v.pointer("/verification/outcome")? == "Rejected").then_some((out, reasons))
}

/// SPEC TRC-13: a shrunk wire case for a call whose sent entries the verifier rejects: history
/// entries are removed one id at a time (from the proposal too) while the SPEC still rejects
/// for the same first reason, within [`crate::trace::judge::shrink::BUDGET`] runs.
fn counterexample(
    rec: &ObservedRecord,
    history: &[&TraceEntry],
    sent: &[&TraceEntry],
    imp: &dyn Implementation,
) -> Option<Counterexample> {
    let mut best = verify_case(rec, history, sent);
    let (mut expected, reasons) = rejection(&best, imp)?;
    let first = reasons.get(0).cloned();
    let mut spent = 1;
    let mut changed = true;
    while changed && spent < BUDGET {
        changed = false;
        let ids: Vec<String> = best.original.iter().map(|e| e.id.clone()).collect();
        for id in ids {
            if spent >= BUDGET || best.original.len() == 1 {
                break;
            }
            let mut c = best.clone();
            c.original.retain(|e| e.id != id);
            c.proposed.retain(|p| match p {
                ProposedItem::Same(s) => *s != id,
                ProposedItem::Entry(e) => e.id != id,
            });
            spent += 1;
            if let Some((o, r)) = rejection(&c, imp) {
                if r.get(0).cloned() == first {
                    (best, expected, changed) = (c, o, true);
                }
            }
        }
    }
    Some(Counterexample {
        run: rec.run.clone(),
        call: rec.call.clone(),
        line: 0,
        field: "/verification/outcome".to_owned(),
        recorded: Json::String("Accepted".to_owned()),
        case: Case::Verify(best),
        expected,
    })
}
