//! Cross-call checks (SPEC TRC-8, TRC-11 across calls, TRC-12) with memory bounded by the open
//! runs.
//!
//! The state of a run is what later calls of the same run can contradict: the bodies already
//! delivered (SPEC LSE-9: at most once per run; LSE-8: never captured again), the AssemblyIds
//! already seen (SPEC EVT-5: distinct across attempts) and the call ids (distinct). Sequence
//! numbers are not compared across calls (SPEC TRC-11 says why). A `runEnd` record drops it, so memory
//! follows the number of runs open at once, not the trace length.

use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::trace::format::{CallRecord, ObservedRecord};
use crate::trace::judge::invariants::{Finding, RunFacts};

#[derive(Debug, Default)]
struct RunState {
    delivered: HashSet<String>,
    assembly_ids: HashSet<String>,
    calls: HashSet<String>,
    /// Calls seen so far: the admission order of a call that records none (line order).
    lines: u64,
    /// Digest -> the earliest admission of a call that committed it.
    committed_at: HashMap<String, u64>,
    /// Digest -> the latest admission of a call that captured it, and that call.
    captured_at: HashMap<String, (u64, Arc<str>)>,
}

fn short(d: &str) -> String {
    d.chars().take(12).collect()
}

/// The per-run state of every open run.
#[derive(Debug, Default)]
pub(crate) struct Cross {
    runs: HashMap<String, RunState>,
    /// Runs that call records named so far (a run is counted when a call opens it: a run named
    /// again after its `runEnd` counts again, one only a `runEnd` names does not count).
    pub runs_seen: usize,
}

/// What identifies a call of a run to the cross-call checks.
struct CallKey<'a> {
    run: &'a str,
    call: &'a str,
    admitted: Option<u64>,
    assembly_id: Option<&'a str>,
}

impl Cross {
    /// Checks one call against its run's history, then adds it to that history.
    pub(crate) fn call(&mut self, rec: &CallRecord, facts: &RunFacts) -> Vec<Finding> {
        let events = rec.events.as_deref().unwrap_or_default();
        let key = CallKey {
            run: &rec.run,
            call: &rec.call,
            admitted: rec.admitted,
            assembly_id: events.first().map(|e| e.assembly_id.as_str()),
        };
        self.judge(&key, facts)
    }

    /// Checks one observed call against its run's history (SPEC TRC-13: its call id and the
    /// bodies it delivered), then adds it to that history.
    pub(crate) fn observed(&mut self, rec: &ObservedRecord, facts: &RunFacts) -> Vec<Finding> {
        let key = CallKey {
            run: &rec.run,
            call: &rec.call,
            admitted: None,
            assembly_id: None,
        };
        self.judge(&key, facts)
    }

    fn judge(&mut self, rec: &CallKey<'_>, facts: &RunFacts) -> Vec<Finding> {
        let mut out = Vec::new();
        let state = match self.runs.get_mut(rec.run) {
            Some(s) => s,
            None => {
                self.runs_seen += 1;
                self.runs.entry(rec.run.to_owned()).or_default()
            }
        };
        let mut find = |clause: &'static str, message: String| {
            out.push(Finding { clause, message });
        };
        // TRC-12: call ids distinct within the run.
        if !state.calls.insert(rec.call.to_owned()) {
            find(
                "TRC-12",
                format!(
                    "call id {:?} was already used by an earlier call of this run",
                    rec.call
                ),
            );
        }
        // TRC-11: AssemblyIds distinct across the attempts of a run.
        if let Some(id) = rec.assembly_id {
            if !state.assembly_ids.insert(id.to_owned()) {
                find(
                    "TRC-11",
                    format!("AssemblyId {id} was already used by an earlier call of this run"),
                );
            }
        }
        // TRC-12: a body committed by a call the gate admitted earlier is never captured by a
        // later one (LSE-8), whichever of the two records comes first.
        state.lines += 1;
        let at = rec.admitted.unwrap_or(state.lines);
        if let Some(d) = facts
            .captured
            .iter()
            .find(|d| state.committed_at.get(*d).is_some_and(|c| *c < at))
        {
            find(
                "TRC-12",
                format!(
                    "body {}... is captured by this call, admitted after a call that delivered it",
                    short(d)
                ),
            );
        }
        if let Some((d, (_, call))) = facts.committed.iter().find_map(|d| {
            state
                .captured_at
                .get(d)
                .filter(|(c, _)| *c > at)
                .map(|c| (d, c))
        }) {
            find(
                "TRC-12",
                format!(
                    "body {}... delivered by this call is captured by call {call:?}, which the run's gate admitted later",
                    short(d)
                ),
            );
        }
        // (Keys and call ids are copied only when a digest is new or its entry changes.)
        // The call's name, once for all the bodies it captured.
        let mut call: Option<Arc<str>> = None;
        let mut name = || Arc::clone(call.get_or_insert_with(|| Arc::from(rec.call)));
        for d in &facts.captured {
            match state.captured_at.get_mut(d) {
                Some(c) if at > c.0 => *c = (at, name()),
                Some(_) => {}
                None => {
                    state.captured_at.insert(d.clone(), (at, name()));
                }
            }
        }
        for d in &facts.committed {
            match state.committed_at.get_mut(d) {
                Some(c) => *c = (*c).min(at),
                None => {
                    state.committed_at.insert(d.clone(), at);
                }
            }
        }
        // TRC-8: a body reaches the provider at most once per run.
        for d in &facts.committed {
            if !state.delivered.insert(d.clone()) {
                find(
                    "TRC-8",
                    format!("body {}... was already delivered in this run", short(d)),
                );
            }
        }
        out
    }

    /// Forgets a run that ended.
    pub(crate) fn end(&mut self, run: &str) {
        self.runs.remove(run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run is counted when a call opens it: a run only a `runEnd` names is not one; a run
    /// named again after its end counts again (its state was forgotten).
    #[test]
    fn runs_are_counted_by_their_calls() {
        let line = r#"{"type":"call","run":"r","call":"c","policy":{"hardLimit":10,"triggerMargin":1,"recentMessageRetentionCount":1,"maximumCompactionAttempts":1,"preservationLabel":"l","preservationVersion":1,"estimator":{"kind":"utf8"}}}"#;
        let rec: CallRecord = serde_json::from_str(line).unwrap();
        let mut cross = Cross::default();
        cross.end("never-called");
        assert_eq!(cross.runs_seen, 0);
        cross.call(&rec, &RunFacts::default());
        cross.call(&rec, &RunFacts::default());
        assert_eq!(cross.runs_seen, 1);
        cross.end("r");
        cross.end("r");
        assert_eq!((cross.runs_seen, cross.runs.len()), (1, 0));
        cross.call(&rec, &RunFacts::default());
        assert_eq!(cross.runs_seen, 2);
    }

    /// A forwarded "digest" is any string in a trace: the message never splits a character (and
    /// a second call of the run committing it is a second delivery).
    #[test]
    fn a_repeated_non_ascii_digest_is_reported_without_panicking() {
        let line = r#"{"type":"call","run":"r","call":"c","policy":{"hardLimit":10,"triggerMargin":1,"recentMessageRetentionCount":1,"maximumCompactionAttempts":1,"preservationLabel":"l","preservationVersion":1,"estimator":{"kind":"utf8"}},"lease":{"settled":"committed","forwarded":["ééééééééééééé","ééééééééééééé"]}}"#;
        let rec: CallRecord = serde_json::from_str(line).unwrap();
        let facts = RunFacts {
            captured: Vec::new(),
            committed: vec!["ééééééééééééé".to_owned()],
        };
        let mut cross = Cross::default();
        assert!(cross.call(&rec, &facts).is_empty());
        let mut again = rec.clone();
        again.call = "d".to_owned();
        let f = cross.call(&again, &facts);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.starts_with("body éééééééééééé..."),
            "{}",
            f[0].message
        );
    }
}
