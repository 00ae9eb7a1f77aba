//! # Trace checking: judging what an implementation recorded (SPEC TRC-1 .. TRC-13)
//!
//! A CI run of any implementation (C#, Python, TypeScript, this crate's node) records what
//! happened at each provider call as a trace (the format and its writer are the trace crate's,
//! `hybrid_compaction_trace`; `docs/TRACE.md`); [`check`] (`hybrid-compaction check`) reads it
//! line by line and says, per call and across calls, whether it conformed.
//!
//! A check runs in five stages, a batch of [`BATCH`] lines at a time:
//!
//! ```text
//!  read     lines of the file, each up to the cap, as UTF-8; the header first     (read)
//!  parse    each line into a record: the quick reader, else the strict one        (read, parallel)
//!  resolve  the runs' entry tables advanced in line order: `defs` defined,        (read, in order)
//!           references resolved to built entries, what the next call reuses kept
//!  judge    each record on its own: a call record rebuilt and replayed (TRC-1),   (judge, parallel)
//!           what it forwarded and its events checked (TRC-2..7, TRC-9..11), a
//!           disagreeing call shrunk to a wire case; an observed record judged by
//!           what it sent (TRC-13)
//!  fold     each verdict, replayed or observed alike, into the report, with the   (in order)
//!           checks across the calls of a run (TRC-8, TRC-11, TRC-12)
//! ```
//!
//! Parsing and judging run in parallel (`--jobs`, rayon); resolving and folding run in line
//! order, so the report does not depend on the number of jobs. Memory is one batch plus the
//! state (and entry table) of the open runs: a `runEnd` record drops its run's.
//!
//! The batch is small (16 lines) and its line buffers are reused by the next batch: a batch
//! of 1024 parsed records (tens of megabytes) left the allocator's cached pages at every batch,
//! so most of its memory came fresh from the kernel, zeroed (a sixth of the process time on
//! compact runs); 16 lines keep the batch's memory warm and still give each of two jobs work
//! (docs/PERFORMANCE.md, "Trace checking").
//!
//! Reading: a line is read up to [`Options::max_line_bytes`] bytes and no further (a longer
//! line is refused before the rest of it is read), must be UTF-8, and is parsed by the strict
//! reader (the trace crate's): a repeated key anywhere is refused, and every refusal
//! ([`Unreadable`]) names the line, the column where reading stopped and the JSON path of the
//! value, in the format's words. A call record as writers write it is read by a quick reader
//! instead ([`read_record`]), which gives the same record and leaves every other line (any it
//! does not read exactly as the strict reader would) to the strict reader; a record's redacted
//! defined entries are built into vocabulary as they are read.
//!
//! | module | holds |
//! |---|---|
//! | `read` | stages 1-3: lines, the quick reader, defined entries, the runs' tables, recorded sizes |
//! | `judge` | stage 4: replay, answers and their reuse, invariants, observed calls, cross-call state, counterexamples |
//! | `report` | rendering a [`Report`]: a table or one JSON document |

pub(crate) mod judge;
pub(crate) mod read;
pub(crate) mod report;

pub(crate) use hybrid_compaction_trace::format;

use std::fmt;
use std::io::BufRead;

use self::judge::cross::Cross;
use self::judge::invariants::Finding;
use self::judge::shrink::Counterexample;
use self::judge::{Checked, Judge};
use self::read::tables::Tables;
use self::read::{Malformed, Reader};
use hybrid_compaction_model::seam::Implementation;
use hybrid_compaction_trace::strict::ReadError;

/// Records per batch (the unit of parallel work): small, so that a batch's memory is reused
/// by the next one instead of taken fresh from the kernel.
pub const BATCH: usize = 16;

/// How much of a trace file a reader takes per system call (the command's, the Python
/// binding's): a compact record is a few kilobytes, so the default 8 KiB took a read every two
/// or three lines; 256 KiB is a read per ~70 lines, and the same at every trace length.
pub const READ_BUFFER: usize = 256 * 1024;

/// The default cap on one line of a trace (`--max-line-bytes`): 64 MiB, the cap on a case.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// How to check.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Worker threads for per-call checks (1: the calling thread only).
    pub jobs: usize,
    /// Write a shrunk counterexample for each call whose replay disagrees (SPEC TRC-1).
    pub counterexamples: bool,
    /// The longest line read, in bytes (its line break not counted); a longer line makes the
    /// trace unreadable.
    pub max_line_bytes: usize,
    /// Reuse a run's work from one call to the next (default): its recorded sizes, and the
    /// answer of an earlier call whose replay inputs are equal. `false` measures
    /// and replays every call from scratch; the report is the same either way (the checker's
    /// reference mode, for tests).
    pub reuse: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            jobs: 1,
            counterexamples: true,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            reuse: true,
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
    /// Call records read, observed ones included.
    pub calls: usize,
    /// Runs that call records name (a run named again after its `runEnd` counts again; a run
    /// only a `runEnd` names does not count).
    pub runs: usize,
    /// Calls replayed through the implementation (TRC-1).
    pub replayed: usize,
    /// Observed calls among `calls`, judged by what they sent (TRC-13).
    pub observed: usize,
    /// Which implementation replayed: `model` or `engine`.
    pub implementation: String,
    /// Every violation, in line order.
    pub violations: Vec<Violation>,
    /// One shrunk wire case per call whose replay disagreed.
    pub counterexamples: Vec<Counterexample>,
    /// Replayed calls answered by an earlier call's replay of equal inputs; not
    /// part of the report's output (the output is the same with reuse on or off).
    #[serde(skip)]
    pub reused: usize,
}

/// The trace cannot be read (exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The 1-based line.
    pub line: usize,
    /// The 1-based column (byte) of the line where reading stopped, when known.
    pub column: Option<usize>,
    /// What is wrong: the JSON path of the value (`$` the record), then why.
    pub message: String,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(c) => write!(f, "line {}, column {c}: {}", self.line, self.message),
            None => write!(f, "line {}: {}", self.line, self.message),
        }
    }
}

impl std::error::Error for Unreadable {}

/// Reads one record line (a line after the header) as the checker reads it: a call record as
/// writers write it by the quick reader, anything else by the strict reader, with the same
/// record and the same refusal either way.
pub fn read_record(line: &str) -> Result<format::Record, ReadError> {
    read::quick::parse_record(line)
}

/// Checks a whole trace, streaming, a batch of lines at a time: read -> parse -> resolve ->
/// judge -> fold. Parsing and judging run in parallel with more than one job; resolving (the
/// runs' entry tables) and folding (the cross-call checks and the report) run in line order, so
/// the report does not depend on the number of jobs.
pub fn check<R: BufRead>(
    input: R,
    imp: &dyn Implementation,
    opts: &Options,
) -> Result<Report, Unreadable> {
    let jobs = opts.jobs.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| Malformed::new(format!("cannot start workers: {e}")).at(0))?;
    let mut reader = Reader::new(input, opts.max_line_bytes);
    let mut tables = Tables::new(opts.reuse);
    let mut fold = Fold::new(imp);
    while reader.next_batch()? {
        let records = read::parse(&pool, reader.current(), jobs);
        let version = reader.version()?;
        let parsed = read::resolve(&mut tables, records, version, opts.counterexamples);
        let judge = Judge {
            imp,
            counterexamples: opts.counterexamples,
            tables: &tables,
        };
        let checked = judge::judge(&pool, parsed, judge, jobs);
        // The runs that ended in the batch are forgotten once it is judged (their calls'
        // counterexamples are written out from their tables).
        tables.batch_done();
        for ((line, _), c) in reader.current().iter().zip(checked) {
            fold.record(*line, c.map_err(|m| m.at(*line))?);
        }
    }
    reader.version()?;
    Ok(fold.report())
}

/// Stage 5: the judged records folded into the report in line order, with the cross-call
/// checks of each run.
struct Fold {
    report: Report,
    cross: Cross,
}

/// One call's verdict, replayed or observed, with its cross-call findings.
struct Verdict {
    run: String,
    call: String,
    findings: Vec<Finding>,
    counterexample: Option<Counterexample>,
}

impl Fold {
    fn new(imp: &dyn Implementation) -> Fold {
        Fold {
            report: Report {
                implementation: imp.name().to_owned(),
                ..Report::default()
            },
            cross: Cross::default(),
        }
    }

    /// Folds the record of line `line`.
    fn record(&mut self, line: usize, checked: Checked) {
        let verdict = match checked {
            Checked::RunEnd(run) => return self.cross.end(&run),
            Checked::Call(rec, o) => {
                self.report.replayed += usize::from(o.replayed);
                self.report.reused += usize::from(o.reused);
                let mut findings = o.findings;
                findings.extend(self.cross.call(&rec, &o.run));
                Verdict {
                    run: rec.run,
                    call: rec.call,
                    findings,
                    counterexample: o.counterexample,
                }
            }
            Checked::Observed(rec, o) => {
                self.report.observed += 1;
                let mut findings = o.findings;
                findings.extend(self.cross.observed(&rec, &o.facts));
                Verdict {
                    run: rec.run,
                    call: rec.call,
                    findings,
                    counterexample: o.counterexample,
                }
            }
        };
        self.verdict(line, verdict);
    }

    /// One call's verdict: its violations and counterexample, named by run, call and line.
    fn verdict(&mut self, line: usize, v: Verdict) {
        self.report.calls += 1;
        for f in v.findings {
            self.report.violations.push(Violation {
                clause: f.clause,
                run: v.run.clone(),
                call: v.call.clone(),
                line,
                message: f.message,
            });
        }
        if let Some(mut cex) = v.counterexample {
            cex.run = v.run;
            cex.call = v.call;
            cex.line = line;
            self.report.counterexamples.push(cex);
        }
    }

    fn report(mut self) -> Report {
        self.report.runs = self.cross.runs_seen;
        self.report
    }
}
