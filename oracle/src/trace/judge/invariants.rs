//! Per-call checks (SPEC TRC-1 .. TRC-7, TRC-9 .. TRC-11 within one call).
//!
//! Each check reads the recorded call (and the vocabulary [`crate::trace::judge::replay`] rebuilt from it) and
//! yields zero or more [`Finding`]s: a clause id and a one-line explanation. The checks never
//! trust the recorded answer to judge the recorded answer: sizes are re-measured with the
//! policy's estimator (recorded sizes for redacted traces), verification, required ids and tool
//! analysis are recomputed by the chosen implementation against the last captured snapshot.

use std::sync::Arc;

use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::policy::Policy;
use serde::Serialize;

use crate::trace::format::{CallRecord, EventKind, Phase, Settlement, StreamEnd};
use crate::trace::judge::replay::{self, Prepared};
use hybrid_compaction_model::seam::Implementation;

/// One broken clause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// The TRC clause id.
    pub clause: &'static str,
    /// One line: what was recorded and what the SPEC requires.
    pub message: String,
}

fn finding(clause: &'static str, message: impl Into<String>) -> Finding {
    Finding {
        clause,
        message: message.into(),
    }
}

const SUCCESSES: [&str; 3] = ["WithinLimit", "Reduced", "PreservationFallback"];

/// Whether the recorded call assembled successfully.
fn succeeded(rec: &CallRecord) -> bool {
    rec.result
        .as_ref()
        .is_some_and(|r| SUCCESSES.contains(&r.outcome.as_str()))
}

/// The first path at which two JSON renderings differ, with both values.
fn first_difference<T: Serialize>(recorded: &T, spec: &T) -> String {
    fn walk(a: &serde_json::Value, b: &serde_json::Value, path: &mut String) -> Option<String> {
        use serde_json::Value as J;
        match (a, b) {
            (J::Object(x), J::Object(y)) => {
                for (k, va) in x {
                    let vb = y.get(k).unwrap_or(&J::Null);
                    let len = path.len();
                    path.push('.');
                    path.push_str(k);
                    if let Some(d) = walk(va, vb, path) {
                        return Some(d);
                    }
                    path.truncate(len);
                }
                None
            }
            _ if a == b => None,
            _ => Some(format!("{path}: recorded {a}, SPEC {b}")),
        }
    }
    let a = serde_json::to_value(recorded).unwrap_or_default();
    let b = serde_json::to_value(spec).unwrap_or_default();
    walk(&a, &b, &mut String::new()).unwrap_or_else(|| "outputs differ".to_owned())
}

fn shorten(mut s: String) -> String {
    if s.len() > 160 {
        let mut cut = 157;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

/// SPEC TRC-1: a call that failed before assembly captured nothing, invoked no reducer and
/// records no result and no diagnostics.
fn before_assembly(rec: &CallRecord, phase: Phase, out: &mut Vec<Finding>) {
    let facts: Vec<&str> = [
        (!rec.snapshots.is_empty(), "captured snapshots"),
        (!rec.reducer.is_empty(), "invoked the reducer"),
        (rec.result.is_some(), "records a result"),
        (rec.diagnostics.is_some(), "records diagnostics"),
    ]
    .into_iter()
    .filter_map(|(present, what)| present.then_some(what))
    .collect();
    if !facts.is_empty() {
        out.push(finding(
            "TRC-1",
            format!(
                "the call failed before assembly (phase {}), yet it {}",
                phase_name(phase),
                facts.join(", ")
            ),
        ));
    }
}

fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::Gate => "gate",
        Phase::Prepare => "prepare",
        Phase::Assembly => "assembly",
        Phase::Terminated => "terminated",
        Phase::Provider => "provider",
        Phase::Commit => "commit",
    }
}

/// SPEC TRC-1: every recorded capture and reducer invocation is one the SPEC's assembler makes,
/// with the same attempt numbers, and none it makes is missing.
fn facts(rec: &CallRecord, prep: &Prepared, ans: &replay::Answer, out: &mut Vec<Finding>) {
    if rec.snapshots.len() != ans.captures {
        out.push(finding(
            "TRC-1",
            format!(
                "the trace records {} capture(s), the SPEC's assembler makes {}",
                rec.snapshots.len(),
                ans.captures
            ),
        ));
    }
    let recorded: Vec<i32> = rec.reducer.iter().map(|r| r.attempt).collect();
    if recorded.len() != ans.attempts.len() {
        let budget = prep.policy.maximum_compaction_attempts();
        let over = if recorded.len() > usize::try_from(budget).unwrap_or(0) {
            format!(" (MaximumCompactionAttempts is {budget}, ASM-11)")
        } else {
            String::new()
        };
        out.push(finding(
            "TRC-1",
            format!(
                "the trace records {} reducer invocation(s){over}, the SPEC's assembler makes {}",
                recorded.len(),
                ans.attempts.len()
            ),
        ));
    } else if let Some((k, (a, b))) = recorded
        .iter()
        .zip(&ans.attempts)
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        out.push(finding(
            "TRC-1",
            format!(
                "reducer invocation {} is recorded as attempt {a}, the SPEC's request is attempt {b}",
                k + 1
            ),
        ));
    }
}

/// SPEC TRC-1: the recorded error (kind and phase) is the one the node raises for the SPEC's
/// answer; after a dispatched success only a provider or commit failure may be recorded.
fn error(rec: &CallRecord, ans: &replay::Answer, out: &mut Vec<Finding>) {
    let recorded = rec.error.as_ref().map(|e| (e.kind.as_str(), e.phase));
    let describe = |e: Option<(&str, Phase)>| match e {
        None => "no error".to_owned(),
        Some((k, p)) => format!("error {k} in phase {}", phase_name(p)),
    };
    match ans.expected_error() {
        Some((kind, phase)) => {
            if recorded != Some((kind.name(), phase)) {
                out.push(finding(
                    "TRC-1",
                    format!(
                        "the trace records {}, the SPEC's answer raises {}",
                        describe(recorded),
                        describe(Some((kind.name(), phase)))
                    ),
                ));
            }
        }
        None => {
            if let Some((k, p)) =
                recorded.filter(|(_, p)| !matches!(p, Phase::Provider | Phase::Commit))
            {
                out.push(finding(
                    "TRC-1",
                    format!(
                        "the trace records {} on a success (only a dispatched call's provider or commit failure may follow)",
                        describe(Some((k, p)))
                    ),
                ));
            }
        }
    }
}

/// SPEC TRC-1: the recorded result and diagnostics are the SPEC's.
fn result(rec: &CallRecord, ans: &replay::Answer, out: &mut Vec<Finding>) {
    match (&rec.result, &ans.assembly) {
        (Some(res), None) => out.push(finding(
            "TRC-1",
            format!(
                "the trace records outcome {}, the SPEC answers error {}",
                res.outcome,
                ans.error.as_ref().map_or("?", |e| e.kind.as_str())
            ),
        )),
        (None, Some(spec)) => out.push(finding(
            "TRC-1",
            format!(
                "the trace records no result, the SPEC answers outcome {}",
                spec.outcome
            ),
        )),
        (Some(res), Some(spec)) if spec != res => out.push(finding(
            "TRC-1",
            shorten(format!("result{}", first_difference(res, spec))),
        )),
        _ => {}
    }
    // The diagnostics the node records at step 9 (none when it failed before).
    match (&rec.diagnostics, ans.recorded_diagnostics()) {
        (Some(d), Some(sd)) if sd != d => out.push(finding(
            "TRC-1",
            shorten(format!("diagnostics{}", first_difference(d, sd))),
        )),
        (Some(_), None) if ans.assembly.is_some() => out.push(finding(
            "TRC-1",
            format!(
                "the trace records diagnostics, the SPEC's diagnostics fail with {}",
                ans.error.as_ref().map_or("?", |e| e.kind.as_str())
            ),
        )),
        (Some(_), None) => out.push(finding(
            "TRC-1",
            "the trace records diagnostics, the SPEC's assembler fails before building any",
        )),
        (None, Some(_)) if succeeded(rec) => out.push(finding(
            "TRC-6",
            "a success is recorded without its diagnostics (DIA-5 builds them for every result)",
        )),
        (None, Some(_)) if rec.result.is_some() => out.push(finding(
            "TRC-1",
            "the trace records no diagnostics, the SPEC builds them (DIA-5)",
        )),
        _ => {}
    }
}

/// SPEC TRC-1: the recorded answer equals the implementation's answer for the recorded inputs
/// (`answer` gives it, replaying the call or reusing an earlier replay of equal inputs; called
/// only when the call is replayed). Returns the answer when the call was replayed.
pub(crate) fn replay(
    rec: &CallRecord,
    prep: &Prepared,
    answer: impl FnOnce() -> Arc<replay::Answer>,
) -> (Option<Arc<replay::Answer>>, Vec<Finding>) {
    let mut out = Vec::new();
    if let Some(phase) = rec
        .error
        .as_ref()
        .map(|e| e.phase)
        .filter(|p| matches!(p, Phase::Gate | Phase::Prepare))
    {
        before_assembly(rec, phase, &mut out);
        return (None, out);
    }
    if prep.cancel.is_err() {
        // Cancellation at an unrecorded point: nothing to replay.
        return (None, out);
    }
    let ans = answer();
    facts(rec, prep, &ans, &mut out);
    result(rec, &ans, &mut out);
    error(rec, &ans, &mut out);
    (Some(ans), out)
}

/// The final entries of a successful call, resolved by id against the last snapshot, then the
/// proposals' new entries (the last one with that id).
fn final_entries(rec: &CallRecord, prep: &Prepared) -> Result<Vec<Entry>, Finding> {
    let ids = rec
        .result
        .as_ref()
        .and_then(|r| r.final_entry_ids.as_ref())
        .ok_or_else(|| finding("TRC-3", "a success records no final entry ids"))?;
    let last: &[Entry] = prep.steps.last().map_or(&[], |(_, es)| es);
    // The first entry with the id in the last snapshot, else the last proposed one.
    let mut by_id: rustc_hash::FxHashMap<&str, &Entry> =
        prep.news.iter().map(|e| (e.id().as_str(), e)).collect();
    by_id.extend(last.iter().rev().map(|e| (e.id().as_str(), e)));
    ids.iter()
        .map(|id| {
            by_id.get(id.as_str()).copied().cloned().ok_or_else(|| {
                finding(
                    "TRC-3",
                    format!(
                        "forwarded entry {id:?} is in neither the last snapshot nor a proposal"
                    ),
                )
            })
        })
        .collect()
}

/// How a sequence that reached the provider is judged (SPEC TRC-2 .. TRC-5): forwarded by an
/// assembler (a call record, against its last captured snapshot) or sent by any system (an
/// observed record, SPEC TRC-13, against its history).
pub(crate) struct Judged {
    /// What the sequence is, in messages: `forwarded` or `sent`.
    pub what: &'static str,
    /// What it is judged against, in messages.
    pub against: &'static str,
    /// The size the recording claims for it (a call record's result), if any.
    pub recorded_size: Option<i32>,
    /// The hard limit it must be within.
    pub hard_limit: i32,
}

impl Judged {
    /// SPEC TRC-2 .. TRC-5 for `finals` against `last`: the measured size (`measured`, in the
    /// policy's unit) within [`Judged::hard_limit`]; `Verify(last, finals)` accepts; the required ids of
    /// `last` kept in order; the tool exchanges of `finals` atomic.
    pub(crate) fn sent(
        &self,
        last: &[Entry],
        finals: &[Entry],
        measured: i64,
        policy: &Policy,
        imp: &dyn Implementation,
    ) -> Vec<Finding> {
        let mut out = Vec::new();
        let h = self.hard_limit;
        // TRC-2: nothing over the hard limit.
        let recorded = self.recorded_size.unwrap_or(0);
        if recorded > h || measured > h as i64 {
            out.push(finding(
                "TRC-2",
                match self.recorded_size {
                    Some(r) => format!(
                        "{} size {measured} (recorded {r}) exceeds the hard limit {h}",
                        self.what
                    ),
                    None => format!("{} size {measured} exceeds the hard limit {h}", self.what),
                },
            ));
        }
        // TRC-3: the sequence verifies against the snapshot of the final capture (the history).
        match imp.verify(last, finals, policy) {
            Ok(v) if v.is_accepted() => {}
            Ok(v) => out.push(finding(
                "TRC-3",
                format!(
                    "the {} entries are rejected against {}: {}",
                    self.what,
                    self.against,
                    v.rejection_reasons
                        .iter()
                        .map(|r| r.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
            Err(e) => out.push(finding("TRC-3", format!("verification fails: {e}"))),
        }
        // TRC-4: required entries kept, in order.
        if let Ok(sel) = imp.select_required(last, policy, &CancellationToken::new()) {
            let mut pos = 0usize;
            for id in &sel.required_entry_ids {
                match finals[pos..].iter().position(|e| e.id() == id) {
                    Some(p) => pos += p + 1,
                    None => {
                        let present = finals.iter().any(|e| e.id() == id);
                        out.push(finding(
                            "TRC-4",
                            format!(
                                "required entry {:?} is {} the {} entries",
                                id.as_str(),
                                if present {
                                    "out of order in"
                                } else {
                                    "missing from"
                                },
                                self.what
                            ),
                        ));
                        break;
                    }
                }
            }
        }
        // TRC-5: tool exchanges atomic.
        let analysis = imp.analyze(finals);
        if !analysis.is_sequence_valid() {
            let mut defects = Vec::new();
            for (name, ids) in [
                ("orphaned call", &analysis.orphaned_call_entry_ids),
                ("orphan result", &analysis.orphan_result_entry_ids),
                ("duplicate call", &analysis.duplicate_call_entry_ids),
                ("duplicate result", &analysis.duplicate_result_entry_ids),
                ("reordered group", &analysis.reordered_call_entry_ids),
                ("cross-group result", &analysis.cross_group_result_entry_ids),
            ] {
                if let Some(id) = ids.first() {
                    defects.push(format!("{name} {:?}", id.as_str()));
                }
            }
            out.push(finding(
                "TRC-5",
                format!(
                    "the {} tool exchanges are not atomic: {}",
                    self.what,
                    defects.join(", ")
                ),
            ));
        }
        out
    }
}

/// SPEC TRC-2 .. TRC-7: what was forwarded, judged against the last snapshot.
pub(crate) fn forwarded(
    rec: &CallRecord,
    prep: &Prepared,
    imp: &dyn Implementation,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if !succeeded(rec) {
        lease(rec, &[], &mut out);
        return out;
    }
    let Some(res) = &rec.result else { return out };
    let policy = &prep.policy;
    let finals = match final_entries(rec, prep) {
        Ok(f) => f,
        Err(f) => {
            out.push(f);
            return out;
        }
    };
    let measured: i64 = finals
        .iter()
        .map(|e| policy.estimator().estimate(e) as i64)
        .sum();
    let last: &[Entry] = prep.steps.last().map_or(&[], |(_, es)| es);
    let judged = Judged {
        what: "forwarded",
        against: "the last snapshot",
        recorded_size: Some(res.final_estimated_size),
        hard_limit: policy.hard_limit(),
    };
    out.extend(judged.sent(last, &finals, measured, policy, imp));
    // TRC-6: contributions sum to the final size, in the policy's unit.
    if let Some(d) = &rec.diagnostics {
        let unit = policy.estimator().unit();
        let sum: i64 = d.category_contributions.iter().map(|c| c.size as i64).sum();
        if d.measurement_unit.0 != unit {
            out.push(finding(
                "TRC-6",
                format!(
                    "diagnostics in {}, the policy measures in {unit}",
                    d.measurement_unit
                ),
            ));
        }
        if sum != d.final_size as i64 || d.final_size != res.final_estimated_size {
            out.push(finding(
                "TRC-6",
                format!(
                    "contributions sum to {sum}, diagnostics final size {}, result final size {}",
                    d.final_size, res.final_estimated_size
                ),
            ));
        }
    }
    lease(rec, &finals, &mut out);
    out
}

/// SPEC TRC-7 for a streaming call: a stream end only after a dispatched success; a failed
/// stream is a provider error; an abandoned stream is no error; a completed one at most fails
/// to commit.
fn stream_end(rec: &CallRecord, out: &mut Vec<Finding>) {
    let Some(end) = rec.streamed else { return };
    let phase = rec.error.as_ref().map(|e| e.phase);
    let consistent = succeeded(rec)
        && match end {
            StreamEnd::Completed => matches!(phase, None | Some(Phase::Commit)),
            StreamEnd::Failed => phase == Some(Phase::Provider),
            StreamEnd::Abandoned => phase.is_none(),
        };
    if !consistent {
        out.push(finding(
            "TRC-7",
            format!(
                "the stream is recorded {end:?} on a call that {}",
                match phase {
                    _ if !succeeded(rec) => "never dispatched".to_owned(),
                    None => "records no error".to_owned(),
                    Some(p) => format!("failed in phase {p:?}"),
                }
            ),
        ));
    }
}

/// SPEC TRC-7: the lease is committed exactly on a dispatched success (for a streaming call:
/// whose stream was read to its end), with the digests of the forwarded recovered bodies in
/// final order; released on every other path after the gate.
/// The settlement the SPEC requires of a call (SPEC TRC-7, NODE-5); `None` when the call failed
/// committing (its lease was settled by the failed commit).
fn required_settlement(rec: &CallRecord) -> Option<Settlement> {
    match rec.error.as_ref().map(|e| e.phase) {
        Some(Phase::Gate) => Some(Settlement::None),
        Some(Phase::Commit) => None,
        Some(_) => Some(Settlement::Released),
        None if rec.streamed == Some(StreamEnd::Abandoned) => Some(Settlement::Released),
        None if succeeded(rec) => Some(Settlement::Committed),
        None => Some(Settlement::Released),
    }
}

/// The digests of the recovered bodies among `entries`, in order.
pub(crate) fn segment_digests<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> Vec<String> {
    entries
        .into_iter()
        .filter(|e| e.kind() == EntryKind::RecoverableContextSegment)
        .filter_map(|e| {
            e.recoverable_segment()
                .map(|s| s.reference.digest().to_hex())
        })
        .collect()
}

fn lease(rec: &CallRecord, finals: &[Entry], out: &mut Vec<Finding>) {
    stream_end(rec, out);
    let Some(l) = &rec.lease else { return };
    if let Some(want) = required_settlement(rec).filter(|w| *w != l.settled) {
        out.push(finding(
            "TRC-7",
            format!(
                "the lease was settled {:?}, the SPEC requires {want:?}",
                l.settled
            ),
        ));
    }
    let bodies: Vec<String> = if l.settled == Settlement::Committed {
        segment_digests(finals)
    } else {
        Vec::new()
    };
    if l.forwarded != bodies {
        out.push(finding(
            "TRC-7",
            format!(
                "forwarded digests {} differ from the forwarded recovered bodies {}",
                l.forwarded.len(),
                bodies.len()
            ),
        ));
    }
}

/// What the cross-call checks of a run need from one call (SPEC TRC-8, TRC-12): the recovered
/// bodies its recorded snapshots hold, and the bodies it committed.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunFacts {
    /// Digests of the recovered bodies in the recorded (lease-filtered) snapshots.
    pub captured: Vec<String>,
    /// Digests the call committed as delivered, each once: its recorded lease, or without one
    /// what a dispatched success commits (SPEC TRC-8).
    pub committed: Vec<String>,
}

/// The run facts of one call.
pub(crate) fn run_facts(rec: &CallRecord, prep: &Prepared) -> RunFacts {
    // A capture of the very list before it adds no body (and repeats none it lists).
    let lists = prep
        .steps
        .iter()
        .enumerate()
        .filter(|(k, (_, es))| *k == 0 || !std::sync::Arc::ptr_eq(&prep.steps[k - 1].1, es));
    let captured = segment_digests(lists.flat_map(|(_, (_, es))| es.iter()));
    let mut committed = match &rec.lease {
        Some(l) if l.settled == Settlement::Committed => l.forwarded.clone(),
        Some(_) => Vec::new(),
        None if required_settlement(rec) == Some(Settlement::Committed) => {
            final_entries(rec, prep).map_or_else(|_| Vec::new(), |f| segment_digests(&f))
        }
        None => Vec::new(),
    };
    // One call delivers a body once, however many entries carry it (SPEC LSE-9).
    let mut seen = rustc_hash::FxHashSet::default();
    committed.retain(|d| seen.insert(d.clone()));
    RunFacts {
        captured,
        committed,
    }
}

/// SPEC TRC-9 .. TRC-11 within one call: the events the SPEC prescribes for how the call ended,
/// the call's diagnostics (the SPEC's for a replayed call, `spec`), one AssemblyId, increasing
/// sequence numbers.
pub(crate) fn events(
    rec: &CallRecord,
    prep: Option<&Prepared>,
    spec: Option<&replay::Answer>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(evs) = &rec.events else { return out };
    use EventKind::*;
    let phase = rec.error.as_ref().map(|e| e.phase);
    let expected: &[EventKind] = match phase {
        Some(Phase::Gate | Phase::Prepare) => &[],
        Some(Phase::Assembly) => &[Started],
        _ if rec.result.is_none() => &[Started],
        _ if succeeded(rec) => &[Started, Completed, Composed],
        _ => &[Started, Terminated],
    };
    let kinds: Vec<EventKind> = evs.iter().map(|e| e.kind).collect();
    if kinds != expected {
        let names = |k: &[EventKind]| {
            if k.is_empty() {
                "none".to_owned()
            } else {
                k.iter()
                    .map(|k| format!("{k:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        out.push(finding(
            "TRC-9",
            format!(
                "events {}; the SPEC requires {}",
                names(&kinds),
                names(expected)
            ),
        ));
    }
    // TRC-10: payloads.
    let completed = evs
        .iter()
        .find(|e| e.kind == Completed)
        .and_then(|e| e.diagnostics.as_ref());
    for e in evs {
        match e.kind {
            Started => {
                if let Some(p) = prep {
                    let pol = &p.policy;
                    if e.measurement_unit.as_deref() != Some(pol.estimator().unit().name())
                        || e.hard_limit != Some(pol.hard_limit())
                        || e.trigger_threshold != Some(pol.trigger_threshold())
                    {
                        out.push(finding(
                            "TRC-10",
                            "Started does not carry the policy's unit, hard limit and threshold",
                        ));
                    }
                }
            }
            Composed if completed.is_some() && e.diagnostics.as_ref() != completed => {
                out.push(finding(
                    "TRC-10",
                    "Composed carries different diagnostics than Completed",
                ))
            }
            Completed | Terminated | Composed => {
                let call = spec
                    .and_then(replay::Answer::recorded_diagnostics)
                    .or(rec.diagnostics.as_ref());
                if call.is_some_and(|d| e.diagnostics.as_ref() != Some(d)) {
                    out.push(finding(
                        "TRC-10",
                        format!("{:?} carries different diagnostics than the call's", e.kind),
                    ));
                }
            }
        }
    }
    // TRC-11: one AssemblyId per attempt, sequence numbers increasing in emission order.
    if let Some(first) = evs.first() {
        if evs.iter().any(|e| e.assembly_id != first.assembly_id) {
            out.push(finding(
                "TRC-11",
                "the events of one attempt carry different AssemblyIds",
            ));
        }
        if evs.windows(2).any(|w| w[1].sequence <= w[0].sequence) {
            out.push(finding(
                "TRC-11",
                "sequence numbers do not increase in emission order",
            ));
        }
    }
    out
}
