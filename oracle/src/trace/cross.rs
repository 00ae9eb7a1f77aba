//! Cross-call checks (SPEC TRC-8, TRC-11 across calls) with memory bounded by the open runs.
//!
//! The state of a run is what later calls of the same run can contradict: the bodies already
//! delivered (SPEC LSE-9: at most once per run) and the AssemblyIds already seen (SPEC EVT-5:
//! distinct across attempts). A `runEnd` record drops it, so memory follows the number of runs
//! open at once, not the trace length.

use std::collections::{HashMap, HashSet};

use super::format::{CallRecord, Settlement};
use super::invariants::Finding;

#[derive(Debug, Default)]
struct RunState {
    delivered: HashSet<String>,
    assembly_ids: HashSet<String>,
}

/// The per-run state of every open run.
#[derive(Debug, Default)]
pub struct Cross {
    runs: HashMap<String, RunState>,
    /// Runs that call records named so far (a run is counted when a call opens it: a run named
    /// again after its `runEnd` counts again, one only a `runEnd` names does not count).
    pub runs_seen: usize,
}

impl Cross {
    /// Checks one call against its run's history, then adds it to that history.
    pub fn call(&mut self, rec: &CallRecord) -> Vec<Finding> {
        let mut out = Vec::new();
        let state = match self.runs.get_mut(&rec.run) {
            Some(s) => s,
            None => {
                self.runs_seen += 1;
                self.runs.entry(rec.run.clone()).or_default()
            }
        };
        // TRC-11: AssemblyIds distinct across the attempts of a run.
        if let Some(id) = rec.events.iter().flatten().next().map(|e| &e.assembly_id) {
            if !state.assembly_ids.insert(id.clone()) {
                out.push(Finding {
                    clause: "TRC-11",
                    message: format!(
                        "AssemblyId {id} was already used by an earlier call of this run"
                    ),
                });
            }
        }
        // TRC-8: a body reaches the provider at most once per run.
        if let Some(l) = rec
            .lease
            .as_ref()
            .filter(|l| l.settled == Settlement::Committed)
        {
            for d in &l.forwarded {
                if !state.delivered.insert(d.clone()) {
                    out.push(Finding {
                        clause: "TRC-8",
                        message: format!(
                            "body {}... was already delivered in this run",
                            d.chars().take(12).collect::<String>()
                        ),
                    });
                }
            }
        }
        out
    }

    /// Forgets a run that ended.
    pub fn end(&mut self, run: &str) {
        self.runs.remove(run);
    }

    /// Runs open now.
    pub fn open(&self) -> usize {
        self.runs.len()
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
        cross.call(&rec);
        cross.call(&rec);
        assert_eq!(cross.runs_seen, 1);
        cross.end("r");
        cross.end("r");
        assert_eq!((cross.runs_seen, cross.open()), (1, 0));
        cross.call(&rec);
        assert_eq!(cross.runs_seen, 2);
    }

    /// A forwarded "digest" is any string in a trace: the message never splits a character.
    #[test]
    fn a_repeated_non_ascii_digest_is_reported_without_panicking() {
        let line = r#"{"type":"call","run":"r","call":"c","policy":{"hardLimit":10,"triggerMargin":1,"recentMessageRetentionCount":1,"maximumCompactionAttempts":1,"preservationLabel":"l","preservationVersion":1,"estimator":{"kind":"utf8"}},"lease":{"settled":"committed","forwarded":["ééééééééééééé","ééééééééééééé"]}}"#;
        let rec: CallRecord = serde_json::from_str(line).unwrap();
        let f = Cross::default().call(&rec);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.starts_with("body éééééééééééé..."),
            "{}",
            f[0].message
        );
    }
}
