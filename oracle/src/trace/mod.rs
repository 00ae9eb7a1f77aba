//! # Trace checking: judging what an implementation recorded (SPEC TRC-1 .. TRC-13)
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
//!
//!  JSONL --format--> ObservedRecord (v3: any system) --observed::resolve--> entries built
//!                        --observed::check (TRC-13: what was sent judged against the history
//!                          by TRC-2..5; a shrunk `verify` case) --> cross::Cross --> report
//! ```
//!
//! Streaming: records are read in batches of [`BATCH`] lines; each batch is parsed in parallel
//! (`--jobs`, rayon), the runs' entry tables are advanced sequentially in line order (version
//! 2, [`compact`]), the per-call work runs in parallel, and the cross-call state is then
//! advanced sequentially in line order, so the output does not depend on the number of jobs.
//! Memory is one batch plus the state (and entry table) of the open runs.
//!
//! The batch is small (16 lines) and its line buffers are reused by the next batch: a batch
//! of 1024 parsed records (tens of megabytes) left the allocator's cached pages at every batch,
//! so most of its memory came fresh from the kernel, zeroed (a sixth of the process time on
//! compact runs); 16 lines keep the batch's memory warm and still give each of two jobs work
//! (docs/PERFORMANCE.md, "Trace checking").
//!
//! Reading: a line is read up to [`Options::max_line_bytes`] bytes and no further (a longer
//! line is refused before the rest of it is read), must be UTF-8, and is parsed by the wire's
//! strict reader ([`crate::wire::strict`]): a repeated key anywhere is refused, and every
//! refusal ([`Unreadable`]) names the line, the column where reading stopped and the JSON path
//! of the value, in the format's words. A call record as writers write it is read by
//! [`quick`] instead, which gives the same record and leaves every other line (any it does not
//! read exactly as the strict reader would) to the strict reader; a record's defined entries
//! are built into vocabulary as they are read ([`defined`]).

pub use hybrid_compaction_trace::format;
pub use hybrid_compaction_trace::write as record;

pub mod answer;
pub mod compact;
pub mod cross;
pub mod defined;
pub mod entries;
pub mod invariants;
pub mod observed;
pub mod quick;
pub mod replay;
pub mod report;
pub mod shrink;
pub mod sizes;

use std::fmt;
use std::io::BufRead;
use std::sync::Arc;

use rayon::prelude::*;

use self::compact::{Resolved, Tables};
use self::entries::PrepareError;
use self::format::{
    CallRecord, Header, ObservedRecord, Record, COMPACT_VERSION, SUPPORTED_VERSIONS, TRACE_VERSION,
};
use self::invariants::Finding;
use crate::wire::strict;
use hybrid_compaction_model::seam::Implementation;

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
    /// answer of an earlier call whose replay inputs are equal ([`compact`]). `false` measures
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
    pub counterexamples: Vec<shrink::Counterexample>,
    /// Replayed calls answered by an earlier call's replay of equal inputs ([`answer`]); not
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

impl Unreadable {
    fn at(line: usize, message: impl Into<String>) -> Unreadable {
        Unreadable {
            line,
            column: None,
            message: message.into(),
        }
    }
}

/// Why a line cannot be read, before its line number is known to the caller: the column and
/// the message of an [`Unreadable`].
type Refusal = (Option<usize>, String);

/// A strict reader's refusal of one line: the column where it stopped, the path, the words.
fn refusal(e: &strict::ReadError) -> Refusal {
    let column = e.position.map(|(_, c)| c);
    let message = if e.syntax {
        format!("{}: invalid JSON: {}", e.path, e.message)
    } else {
        format!("{}: {}", e.path, e.message)
    };
    (column, message)
}

/// The lines of a trace, each read up to a cap: a longer line is refused after reading one
/// byte past the cap, never whole.
struct Lines<R> {
    input: R,
    cap: usize,
    number: usize,
}

impl<R: BufRead> Lines<R> {
    /// The next line (1-based number, text without its line break), `None` at the end; read
    /// into `buf` (a spent line's buffer, so that its memory is reused; cleared first).
    fn next_line(&mut self, mut buf: Vec<u8>) -> Result<Option<(usize, String)>, Unreadable> {
        buf.clear();
        // The cap, plus "\r\n": enough to see the end of a line of exactly `cap` bytes.
        let limit = u64::try_from(self.cap)
            .unwrap_or(u64::MAX)
            .saturating_add(2);
        let n = read_line(&mut self.input, &mut buf, limit)
            .map_err(|e| Unreadable::at(self.number + 1, format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        if buf.len() > self.cap {
            return Err(Unreadable::at(
                self.number,
                format!(
                    "the line is longer than {} bytes, the cap on a line (raise it with --max-line-bytes)",
                    self.cap
                ),
            ));
        }
        let text = String::from_utf8(buf).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            Unreadable {
                line: self.number,
                column: Some(at + 1),
                message: "$: invalid JSON: invalid UTF-8".to_owned(),
            }
        })?;
        Ok(Some((self.number, text)))
    }
}

/// Appends the next line of `input` to `buf`, its line break included, reading at most `limit`
/// bytes; returns how many were read (0 at the end). `read_until` on `take(limit)`, with the line
/// break found by `memchr` (std's byte search took a tenth of the time spent reading a trace).
fn read_line<R: BufRead>(input: &mut R, buf: &mut Vec<u8>, limit: u64) -> std::io::Result<usize> {
    let mut read = 0usize;
    loop {
        let left = usize::try_from(limit.saturating_sub(read as u64)).unwrap_or(usize::MAX);
        if left == 0 {
            return Ok(read);
        }
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(read);
        }
        let window = &available[..available.len().min(left)];
        let (used, done) = match memchr::memchr(b'\n', window) {
            Some(i) => (i + 1, true),
            None => (window.len(), false),
        };
        buf.extend_from_slice(&window[..used]);
        input.consume(used);
        read += used;
        if done {
            return Ok(read);
        }
    }
}

/// What checking one line produced.
enum Checked {
    Call(Box<CallRecord>, Box<CallOutcome>),
    Observed(Box<ObservedRecord>, Box<observed::Observed>),
    RunEnd(String),
}

struct CallOutcome {
    findings: Vec<Finding>,
    replayed: bool,
    /// The answer was an earlier call's.
    reused: bool,
    counterexample: Option<shrink::Counterexample>,
    run: invariants::RunFacts,
}

impl CallOutcome {
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
        CallOutcome {
            findings: vec![Finding {
                clause: "TRC-1",
                message: format!(
                    "the {} failed internally on this call: {message}",
                    imp.name()
                ),
            }],
            replayed: false,
            reused: false,
            counterexample: None,
            run: invariants::RunFacts::default(),
        }
    }
}

/// Runs every per-call check on one self-contained (version-1) record.
pub fn check_call(
    rec: &CallRecord,
    imp: &dyn Implementation,
) -> Result<(Vec<Finding>, bool), String> {
    let o = call_outcome(rec, Resolved::default(), imp, false, None)?;
    Ok((o.findings, o.replayed))
}

/// The per-call checks of `rec`; `tables` (the runs' tables `rec` was resolved against, read
/// only while a batch is checked) write out a compact record for its counterexample.
fn call_outcome(
    rec: &CallRecord,
    mut resolved: Resolved,
    imp: &dyn Implementation,
    cex: bool,
    tables: Option<&Tables>,
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
                reused: false,
                counterexample: None,
                run: invariants::RunFacts::default(),
            });
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
    // A compact record is written out by its run's table (which keeps the recorded entries,
    // so no call copies them) before it is shrunk.
    let counterexample = match answer {
        Some(_) if cex && disagrees && resolved.compact => tables
            .zip(resolved.table())
            .and_then(|(t, id)| t.expand(rec, id))
            .and_then(|full| shrink::counterexample(&full, &prep, imp)),
        Some(_) if cex && disagrees => shrink::counterexample(rec, &prep, imp),
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

/// One parsed line, its table references resolved.
enum Parsed {
    Call(Box<CallRecord>, Resolved),
    Observed(Box<ObservedRecord>, observed::ObservedEntries),
    RunEnd(String),
}

fn check_parsed(
    p: Parsed,
    imp: &dyn Implementation,
    cex: bool,
    tables: &Tables,
) -> Result<Checked, String> {
    match p {
        Parsed::RunEnd(r) => Ok(Checked::RunEnd(r)),
        Parsed::Observed(rec, entries) => {
            let o = observed::check(&rec, entries, imp, cex)?;
            Ok(Checked::Observed(rec, Box::new(o)))
        }
        Parsed::Call(rec, resolved) => {
            // An implementation that panics on recorded inputs is a failure to report (exit 1),
            // not an unreadable trace.
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                call_outcome(&rec, resolved, imp, cex, Some(tables))
            }));
            let o = match caught {
                Ok(o) => o?,
                Err(payload) => CallOutcome::failed_internally(imp, payload),
            };
            Ok(Checked::Call(rec, Box::new(o)))
        }
    }
}

/// Reads the header line; returns the version.
fn header(line: &str) -> Result<u32, Refusal> {
    let h: Header = strict::read(line).map_err(|e| {
        let (column, message) = refusal(&e);
        (
            column,
            format!("expected the header {{\"trace\": {TRACE_VERSION}}}: {message}"),
        )
    })?;
    if !SUPPORTED_VERSIONS.contains(&h.trace) {
        return Err((
            None,
            format!(
                "$.trace: trace format version {} is not supported (this checker reads versions 1, 2 and 3)",
                h.trace
            ),
        ));
    }
    Ok(h.trace)
}

/// Parses a batch (in parallel with more than one job).
fn parse_batch(
    pool: &rayon::ThreadPool,
    batch: &[(usize, String)],
    jobs: usize,
) -> Vec<Result<Record, Refusal>> {
    let parse = |(_, l): &(usize, String)| quick::parse_record(l).map_err(|e| refusal(&e));
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
        .map_err(|e| Unreadable::at(0, format!("cannot start workers: {e}")))?;
    let mut report = Report {
        implementation: imp.name().to_owned(),
        ..Report::default()
    };
    let mut cross = cross::Cross::default();
    let mut tables = Tables::new(opts.reuse);
    let mut version = 0;
    let mut lines = Lines {
        input,
        cap: opts.max_line_bytes,
        number: 0,
    };
    let mut saw_header = false;
    let mut batch: Vec<(usize, String)> = Vec::with_capacity(BATCH);
    // The buffers of the previous batch's lines (the records own copies of what they keep).
    let mut spare: Vec<Vec<u8>> = Vec::with_capacity(BATCH);
    loop {
        spare.extend(batch.drain(..).map(|(_, l)| l.into_bytes()));
        while let Some((number, l)) = lines.next_line(spare.pop().unwrap_or_default())? {
            if l.trim().is_empty() {
                spare.push(l.into_bytes());
                continue;
            }
            if !saw_header {
                version = header(&l).map_err(|(column, message)| Unreadable {
                    line: number,
                    column,
                    message,
                })?;
                saw_header = true;
                continue;
            }
            batch.push((number, l));
            if batch.len() == BATCH {
                break;
            }
        }
        if batch.is_empty() {
            break;
        }
        // Table references are resolved in line order; the first unreadable line ends the
        // batch (the lines before it are still checked, so errors are reported in line order).
        let mut parsed: Vec<Result<Parsed, Refusal>> = Vec::with_capacity(batch.len());
        for r in parse_batch(&pool, &batch, opts.jobs) {
            let p = r.and_then(|rec| match rec {
                Record::RunEnd(e) => {
                    tables.end(&e.run);
                    Ok(Parsed::RunEnd(e.run))
                }
                Record::Call(mut rec) => {
                    let resolved = tables
                        .resolve(&mut rec, version >= COMPACT_VERSION, opts.counterexamples)
                        .map_err(|m| (None, m))?;
                    Ok(Parsed::Call(rec, resolved))
                }
                Record::Observed(mut rec) => {
                    let entries =
                        observed::resolve(&mut tables, &mut rec, version, opts.counterexamples)
                            .map_err(|m| (None, m))?;
                    Ok(Parsed::Observed(rec, entries))
                }
            });
            let stop = p.is_err();
            parsed.push(p);
            if stop {
                break;
            }
        }
        // The tables are only read while the batch is checked (counterexamples), and forget
        // the runs that ended in the batch once it is.
        let cex = opts.counterexamples;
        let read = &tables;
        let check = |p: Result<Parsed, Refusal>| {
            p.and_then(|p| check_parsed(p, imp, cex, read).map_err(|m| (None, m)))
        };
        let checked: Vec<Result<Checked, Refusal>> = if opts.jobs <= 1 {
            parsed.into_iter().map(check).collect()
        } else {
            pool.install(|| parsed.into_par_iter().map(check).collect())
        };
        tables.batch_done();
        for ((line, _), c) in batch.iter().zip(checked) {
            match c.map_err(|(column, message)| Unreadable {
                line: *line,
                column,
                message,
            })? {
                Checked::RunEnd(run) => cross.end(&run),
                Checked::Observed(rec, o) => {
                    report.calls += 1;
                    report.observed += 1;
                    let mut findings = o.findings;
                    findings.extend(cross.observed(&rec, &o.facts));
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
                        cex.line = *line;
                        report.counterexamples.push(cex);
                    }
                }
                Checked::Call(rec, o) => {
                    report.calls += 1;
                    report.replayed += o.replayed as usize;
                    report.reused += o.reused as usize;
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
        return Err(Unreadable::at(
            1,
            format!("$: empty trace: expected the header {{\"trace\": {TRACE_VERSION}}}"),
        ));
    }
    report.runs = cross.runs_seen;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read};

    /// `read_line` reads what `take(limit).read_until(b'\n')` reads, line after line, whatever
    /// the reader's buffer size (lines across buffer boundaries), the cap (lines longer than
    /// it, exactly at it) and the ending (with and without a last line break).
    #[test]
    fn read_line_is_read_until_on_take() {
        let texts = [
            "",
            "\n",
            "a",
            "ab\ncd",
            "ab\ncd\n",
            "\n\nxyz\n\n",
            "12345678\n1234567\n123456789\n",
            "é€😀\nnon-ASCII\r\nand CRLF\r\n",
        ];
        for text in texts {
            for capacity in 1..=10 {
                for limit in [0u64, 1, 2, 3, 7, 8, 9, 10, 100] {
                    let mut ours = BufReader::with_capacity(capacity, text.as_bytes());
                    let mut std = BufReader::with_capacity(capacity, text.as_bytes());
                    loop {
                        let (mut a, mut b) = (Vec::new(), Vec::new());
                        let n = super::read_line(&mut ours, &mut a, limit).unwrap();
                        let m = (&mut std).take(limit).read_until(b'\n', &mut b).unwrap();
                        assert_eq!(
                            (n, &a),
                            (m, &b),
                            "{text:?} capacity {capacity} limit {limit}"
                        );
                        if n == 0 {
                            break;
                        }
                    }
                    assert_eq!(ours.fill_buf().unwrap(), std.fill_buf().unwrap());
                }
            }
        }
    }
}
