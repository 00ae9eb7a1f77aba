//! # Trace checking: judging what an implementation recorded (SPEC TRC-1 .. TRC-11)
//!
//! A CI run of any implementation (C#, Python, TypeScript, this crate's node) records what
//! happened at each provider call as a trace ([`mod@format`], `docs/TRACE.md`); `hybrid-compaction
//! check` reads it line by line and says, per call and across calls, whether it conformed.
//!
//! ```text
//!  JSONL --format--> CallRecord --compact (v2: run's entry table)--> table references resolved
//!                        |                                                     |
//!                        +--------------replay::prepare--> vocabulary (policy, schedule, reducer)
//!                        |                               |
//!                        |            invariants::replay (TRC-1: recorded == SPEC's answer)
//!                        |            invariants::forwarded (TRC-2..7: what was sent)
//!                        |            invariants::events (TRC-9..11: one call's events)
//!                        +--> cross::Cross (TRC-8, TRC-11 across calls; per open run)
//!                        +--> shrink (a minimal wire case per disagreeing call)
//!                                   |
//!                               report (table / JSON; exit 0 / 1 / 2)
//! ```
//!
//! Streaming: records are read in batches of [`BATCH`] lines; each batch is parsed in parallel
//! (`--jobs`, rayon), the runs' entry tables are advanced sequentially in line order (version
//! 2, [`compact`]), the per-call work runs in parallel, and the cross-call state is then
//! advanced sequentially in line order, so the output does not depend on the number of jobs.
//! Memory is one batch plus the state (and entry table) of the open runs.

pub mod compact;
pub mod cross;
pub mod format;
pub mod invariants;
pub mod record;
pub mod replay;
pub mod report;
pub mod shrink;

use std::io::BufRead;

use rayon::prelude::*;

use self::compact::{Resolved, Tables};
use self::format::{
    CallRecord, Header, Record, COMPACT_VERSION, SUPPORTED_VERSIONS, TRACE_VERSION,
};
use self::invariants::Finding;
use self::replay::PrepareError;
use hybrid_compaction_model::seam::Implementation;

/// Records per batch (the unit of parallel work).
pub const BATCH: usize = 1024;

/// How to check.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Worker threads for per-call checks (1: the calling thread only).
    pub jobs: usize,
    /// Write a shrunk counterexample for each call whose replay disagrees (SPEC TRC-1).
    pub counterexamples: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            jobs: 1,
            counterexamples: true,
        }
    }
}

/// One violation: a clause, where, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Violation {
    /// The TRC clause id.
    pub clause: &'static str,
    /// The run id.
    pub run: String,
    /// The call id.
    pub call: String,
    /// The 1-based line of the call record.
    pub line: usize,
    /// One line of explanation.
    pub message: String,
}

/// The checker's verdict.
#[derive(Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Call records read.
    pub calls: usize,
    /// Distinct runs seen.
    pub runs: usize,
    /// Calls replayed through the implementation (TRC-1).
    pub replayed: usize,
    /// Which implementation replayed: `model` or `engine`.
    pub implementation: String,
    /// Every violation, in line order.
    pub violations: Vec<Violation>,
    /// One shrunk wire case per call whose replay disagreed.
    pub counterexamples: Vec<shrink::Counterexample>,
}

/// The trace cannot be read (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct Unreadable {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// What checking one line produced.
enum Checked {
    Call(Box<CallRecord>, Box<CallOutcome>),
    RunEnd(String),
}

struct CallOutcome {
    findings: Vec<Finding>,
    replayed: bool,
    counterexample: Option<shrink::Counterexample>,
    run: invariants::RunFacts,
}

/// Runs every per-call check on one self-contained (version-1) record.
pub fn check_call(
    rec: &CallRecord,
    imp: &dyn Implementation,
) -> Result<(Vec<Finding>, bool), String> {
    let o = call_outcome(rec, Resolved::default(), imp, false)?;
    Ok((o.findings, o.replayed))
}

fn call_outcome(
    rec: &CallRecord,
    mut resolved: Resolved,
    imp: &dyn Implementation,
    cex: bool,
) -> Result<CallOutcome, String> {
    let prep = match replay::prepare(rec, &mut resolved, imp) {
        Ok(p) => p,
        Err(PrepareError::Unreadable(m)) => return Err(m),
        Err(PrepareError::Inconsistent(m)) => {
            let mut findings = vec![Finding {
                clause: "TRC-1",
                message: m,
            }];
            findings.extend(invariants::events(rec, None, None));
            return Ok(CallOutcome {
                findings,
                replayed: false,
                counterexample: None,
                run: invariants::RunFacts::default(),
            });
        }
    };
    let (answer, mut findings) = invariants::replay(rec, &prep, imp);
    let replayed = answer.is_some();
    let disagrees = !findings.is_empty();
    findings.extend(invariants::forwarded(rec, &prep, imp));
    findings.extend(invariants::events(rec, Some(&prep), answer.as_ref()));
    let counterexample = match answer {
        Some(_) if cex && disagrees && resolved.compact => {
            shrink::counterexample(&compact::expand(rec, &resolved), &prep, imp)
        }
        Some(_) if cex && disagrees => shrink::counterexample(rec, &prep, imp),
        _ => None,
    };
    Ok(CallOutcome {
        findings,
        replayed,
        counterexample,
        run: invariants::run_facts(rec, &prep),
    })
}

/// One parsed line, its table references resolved.
enum Parsed {
    Call(Box<CallRecord>, Resolved),
    RunEnd(String),
}

fn check_parsed(p: Parsed, imp: &dyn Implementation, cex: bool) -> Result<Checked, String> {
    match p {
        Parsed::RunEnd(r) => Ok(Checked::RunEnd(r)),
        Parsed::Call(rec, resolved) => {
            // An implementation that panics on recorded inputs is a failure to report (exit 1),
            // not an unreadable trace.
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                call_outcome(&rec, resolved, imp, cex)
            }));
            let o = match caught {
                Ok(o) => o?,
                Err(payload) => {
                    let message = payload
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| payload.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "non-string panic payload".to_owned());
                    CallOutcome {
                        findings: vec![Finding {
                            clause: "TRC-1",
                            message: format!(
                                "the {} failed internally on this call: {message}",
                                imp.name()
                            ),
                        }],
                        replayed: false,
                        counterexample: None,
                        run: invariants::RunFacts::default(),
                    }
                }
            };
            Ok(Checked::Call(rec, Box::new(o)))
        }
    }
}

/// Reads the header line; returns the version.
fn header(line: &str) -> Result<u32, String> {
    let h: Header = crate::wire::strict::read(line)
        .map_err(|e| format!("expected the header {{\"trace\": {TRACE_VERSION}}}: {e}"))?;
    if !SUPPORTED_VERSIONS.contains(&h.trace) {
        return Err(format!(
            "trace format version {} is not supported (this checker reads versions 1 and 2)",
            h.trace
        ));
    }
    Ok(h.trace)
}

/// Parses a batch (in parallel with more than one job).
fn parse_batch(
    pool: &rayon::ThreadPool,
    batch: &[(usize, String)],
    jobs: usize,
) -> Vec<Result<Record, String>> {
    let parse = |(_, l): &(usize, String)| format::parse_record(l).map_err(|e| e.to_string());
    if jobs <= 1 {
        batch.iter().map(parse).collect()
    } else {
        pool.install(|| batch.par_iter().map(parse).collect())
    }
}

/// Checks a whole trace, streaming.
pub fn check<R: BufRead>(
    input: R,
    imp: &dyn Implementation,
    opts: &Options,
) -> Result<Report, Unreadable> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.max(1))
        .build()
        .map_err(|e| Unreadable {
            line: 0,
            message: format!("cannot start workers: {e}"),
        })?;
    let mut report = Report {
        implementation: imp.name().to_owned(),
        ..Report::default()
    };
    let mut cross = cross::Cross::default();
    let mut tables = Tables::default();
    let mut compact = false;
    let mut lines = input.lines().enumerate();
    let mut saw_header = false;
    let mut batch: Vec<(usize, String)> = Vec::with_capacity(BATCH);
    loop {
        batch.clear();
        for (i, l) in lines.by_ref() {
            let l = l.map_err(|e| Unreadable {
                line: i + 1,
                message: format!("cannot read: {e}"),
            })?;
            if l.trim().is_empty() {
                continue;
            }
            if !saw_header {
                let version = header(&l).map_err(|message| Unreadable {
                    line: i + 1,
                    message,
                })?;
                compact = version >= COMPACT_VERSION;
                saw_header = true;
                continue;
            }
            batch.push((i + 1, l));
            if batch.len() == BATCH {
                break;
            }
        }
        if batch.is_empty() {
            break;
        }
        // Table references are resolved in line order; the first unreadable line ends the
        // batch (the lines before it are still checked, so errors are reported in line order).
        let mut parsed: Vec<Result<Parsed, String>> = Vec::with_capacity(batch.len());
        for r in parse_batch(&pool, &batch, opts.jobs) {
            let p = r.and_then(|rec| match rec {
                Record::RunEnd(e) => {
                    tables.end(&e.run);
                    Ok(Parsed::RunEnd(e.run))
                }
                Record::Call(mut rec) => {
                    let resolved = tables.resolve(&mut rec, compact, opts.counterexamples)?;
                    Ok(Parsed::Call(rec, resolved))
                }
            });
            let stop = p.is_err();
            parsed.push(p);
            if stop {
                break;
            }
        }
        let cex = opts.counterexamples;
        let checked: Vec<Result<Checked, String>> = if opts.jobs <= 1 {
            parsed
                .into_iter()
                .map(|p| p.and_then(|p| check_parsed(p, imp, cex)))
                .collect()
        } else {
            pool.install(|| {
                parsed
                    .into_par_iter()
                    .map(|p| p.and_then(|p| check_parsed(p, imp, cex)))
                    .collect()
            })
        };
        for ((line, _), c) in batch.iter().zip(checked) {
            match c.map_err(|message| Unreadable {
                line: *line,
                message,
            })? {
                Checked::RunEnd(run) => cross.end(&run),
                Checked::Call(rec, o) => {
                    report.calls += 1;
                    report.replayed += o.replayed as usize;
                    let mut findings = o.findings;
                    findings.extend(cross.call(&rec, &o.run));
                    for f in findings {
                        report.violations.push(Violation {
                            clause: f.clause,
                            run: rec.run.clone(),
                            call: rec.call.clone(),
                            line: *line,
                            message: f.message,
                        });
                    }
                    if let Some(mut cex) = o.counterexample {
                        cex.run = rec.run.clone();
                        cex.call = rec.call.clone();
                        cex.line = *line;
                        report.counterexamples.push(cex);
                    }
                }
            }
        }
    }
    if !saw_header {
        return Err(Unreadable {
            line: 1,
            message: format!("empty trace: expected the header {{\"trace\": {TRACE_VERSION}}}"),
        });
    }
    report.runs = cross.runs_seen;
    Ok(report)
}
