//! Rendering a [`Report`]: a human table (default) or one JSON document (`--json`).

use std::collections::BTreeMap;

use super::Report;

/// The human table: a summary line, one row per violation, per-clause counts.
pub(crate) fn table(name: &str, r: &Report) -> String {
    let mut s = format!(
        "{name}: {} call(s) in {} run(s), {} replayed on the {}",
        r.calls, r.runs, r.replayed, r.implementation
    );
    if r.observed > 0 {
        s.push_str(&format!(", {} observed", r.observed));
    }
    s.push('\n');
    if r.violations.is_empty() {
        s.push_str("conformant: 0 violations\n");
        return s;
    }
    let w_run = r
        .violations
        .iter()
        .map(|v| v.run.len())
        .max()
        .unwrap_or(3)
        .max(3);
    let w_call = r
        .violations
        .iter()
        .map(|v| v.call.len())
        .max()
        .unwrap_or(4)
        .max(4);
    s.push_str(&format!(
        "\n{:<7} {:<w_run$} {:<w_call$} {:>6}  explanation\n",
        "clause", "run", "call", "line"
    ));
    for v in &r.violations {
        s.push_str(&format!(
            "{:<7} {:<w_run$} {:<w_call$} {:>6}  {}\n",
            v.clause, v.run, v.call, v.line, v.message
        ));
    }
    let mut per: BTreeMap<&str, usize> = BTreeMap::new();
    for v in &r.violations {
        *per.entry(v.clause).or_default() += 1;
    }
    let counts: Vec<String> = per.iter().map(|(c, n)| format!("{c}: {n}")).collect();
    s.push_str(&format!(
        "\n{} violation(s) ({})\n",
        r.violations.len(),
        counts.join(", ")
    ));
    for c in &r.counterexamples {
        s.push_str(&format!(
            "counterexample for {}/{} (line {}): {} entries, disagreeing at {}\n",
            c.run,
            c.call,
            c.line,
            c.case_entries(),
            c.field
        ));
    }
    s
}

/// The JSON document (`--json`).
pub(crate) fn json(r: &Report) -> String {
    let mut s = serde_json::to_string(r).unwrap_or_default();
    s.push('\n');
    s
}
