//! Running vectors on implementations: the comparison rule and the per-topic report.
//!
//! Comparison is structural JSON equality of the rendered [`Output`], ignoring only
//! `error.message` (informative text, free to differ between implementations): objects compare
//! member by member in any order, arrays element by element, and numbers and booleans exactly
//! (`true` is not `1`, `1` is not `1.0`).

use std::fmt::Write as _;

use serde_json::Value as Json;

use super::file::{PolicyInput, TestVector, VectorFile};
use crate::ops::Output;
use crate::ops::{run_case_caught, RunError};
use hybrid_compaction_model::seam::Implementation;

/// The output as compared: JSON with `error.message` removed.
pub fn comparable(out: &Output) -> Json {
    let mut v = serde_json::to_value(out).unwrap_or(Json::Null);
    if let Some(Json::Object(e)) = v.get_mut("error") {
        e.remove("message");
    }
    v
}

/// The first difference between `expected` and `actual`, as `path: expected X, got Y`.
pub fn first_difference(expected: &Json, actual: &Json) -> Option<String> {
    fn short(v: &Json) -> String {
        let s = v.to_string();
        if s.len() > 120 {
            format!(
                "{}...",
                &s[..s.char_indices().nth(117).map_or(s.len(), |(i, _)| i)]
            )
        } else {
            s
        }
    }
    fn walk(path: &str, e: &Json, a: &Json) -> Option<String> {
        match (e, a) {
            (Json::Object(eo), Json::Object(ao)) => {
                for (k, ev) in eo {
                    match ao.get(k) {
                        Some(av) => {
                            if let Some(d) = walk(&format!("{path}.{k}"), ev, av) {
                                return Some(d);
                            }
                        }
                        None => {
                            return Some(format!("{path}.{k}: expected {}, got nothing", short(ev)))
                        }
                    }
                }
                for (k, av) in ao {
                    if !eo.contains_key(k) {
                        return Some(format!("{path}.{k}: expected nothing, got {}", short(av)));
                    }
                }
                None
            }
            (Json::Array(ea), Json::Array(aa)) if ea.len() == aa.len() => ea
                .iter()
                .zip(aa)
                .enumerate()
                .find_map(|(i, (x, y))| walk(&format!("{path}[{i}]"), x, y)),
            _ if e == a => None,
            _ => Some(format!("{path}: expected {}, got {}", short(e), short(a))),
        }
    }
    walk("$", expected, actual)
}

/// The verdict of one vector on one implementation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Output equal to the expectation.
    Pass,
    /// Output differs: a one-line diff.
    Fail(String),
}

/// Runs one vector on one implementation.
pub(crate) fn check(
    test: &TestVector,
    group_policy: Option<&PolicyInput>,
    imp: &dyn Implementation,
) -> Verdict {
    let case = test.effective_case(group_policy);
    match run_case_caught(&case, imp) {
        Ok(out) => {
            let (e, a) = (comparable(&test.expected), comparable(&out));
            match first_difference(&e, &a) {
                None => Verdict::Pass,
                Some(d) => Verdict::Fail(d),
            }
        }
        Err(RunError::Wire(w)) => Verdict::Fail(format!("case rejected as invalid input: {w}")),
        Err(e @ RunError::Panic { .. }) => Verdict::Fail(e.to_string()),
    }
}

/// Per-topic, per-implementation counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicReport {
    /// The topic.
    pub topic: String,
    /// Number of vectors.
    pub total: usize,
    /// Passed count per implementation, in the order run.
    pub passed: Vec<usize>,
    /// Failures: (implementation, tcId, one-line diff).
    pub failures: Vec<(&'static str, u32, String)>,
}

/// Runs every vector of `file` on every implementation of `imps`.
pub fn run_file(file: &VectorFile, imps: &[&dyn Implementation]) -> TopicReport {
    let mut report = TopicReport {
        topic: file.topic.clone(),
        total: 0,
        passed: vec![0; imps.len()],
        failures: Vec::new(),
    };
    for group in &file.test_groups {
        for test in &group.tests {
            report.total += 1;
            for (i, imp) in imps.iter().enumerate() {
                match check(test, group.policy.as_ref(), *imp) {
                    Verdict::Pass => report.passed[i] += 1,
                    Verdict::Fail(d) => report.failures.push((imp.name(), test.tc_id, d)),
                }
            }
        }
    }
    report
}

/// Renders the summary table (one row per topic, `passed/failed` per implementation).
pub fn render_table(reports: &[TopicReport], imps: &[&dyn Implementation]) -> String {
    let mut s = String::new();
    let _ = write!(s, "{:<20} {:>6}", "topic", "total");
    for imp in imps {
        let _ = write!(s, " {:>8} {:>8}", format!("{} ok", imp.name()), "failed");
    }
    s.push('\n');
    let mut total = 0;
    let mut passed = vec![0; imps.len()];
    for r in reports {
        let _ = write!(s, "{:<20} {:>6}", r.topic, r.total);
        for (i, p) in r.passed.iter().enumerate() {
            let _ = write!(s, " {:>8} {:>8}", p, r.total - p);
            passed[i] += p;
        }
        total += r.total;
        s.push('\n');
    }
    let _ = write!(s, "{:<20} {:>6}", "TOTAL", total);
    for p in &passed {
        let _ = write!(s, " {:>8} {:>8}", p, total - p);
    }
    s.push('\n');
    s
}
