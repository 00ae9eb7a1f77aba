//! # Reading a trace: its lines, its records, their table references resolved
//!
//! The first three stages of a check ([`super::check`]):
//!
//! 1. **read**: [`Reader`] takes the header line, then the record lines a batch at a time, each
//!    line read up to the cap and no further, as UTF-8;
//! 2. **parse**: [`parse`] reads each line of a batch into a record ([`quick`], or the strict
//!    reader for any line the quick reader leaves), in parallel;
//! 3. **resolve**: [`resolve`] advances the runs' entry tables in line order ([`tables`]: a
//!    record's `defs` defined, its references resolved to built entries, what a later call can
//!    reuse carried), so that each record can then be judged on its own.
//!
//! Every refusal is a [`Malformed`] line: the column where reading stopped (when known) and the
//! JSON path of the value, then why, in the format's words.
//!
//! | module | holds |
//! |---|---|
//! | [`quick`] | the quick reader of call records as writers write them |
//! | [`defined`] | a record's redacted defined entries, built into vocabulary as they are read |
//! | [`tables`] | each run's entry table (the compact profile) and resolving references to it |
//! | [`observed`] | an observed record's history and sent entries, built against its run's table |
//! | [`entries`] | recorded entries rebuilt as vocabulary entries |
//! | [`sizes`] | recorded sizes: a call's size table, and the sizes table entries carry |

pub(crate) mod defined;
pub(crate) mod entries;
pub(crate) mod observed;
pub(crate) mod quick;
pub(crate) mod sizes;
pub(crate) mod tables;

use std::io::BufRead;

use rayon::prelude::*;

use self::observed::ObservedEntries;
use self::tables::{Resolved, Tables};
use super::{Unreadable, BATCH};
use crate::trace::format::{
    CallRecord, Header, ObservedRecord, Record, COMPACT_VERSION, SUPPORTED_VERSIONS, TRACE_VERSION,
};
use crate::wire::strict::{self, ReadError};

/// Why one line cannot be read, before its line number is known: where reading stopped (the
/// 1-based byte column, when known) and what is wrong (the JSON path of the value, `$` the
/// record, then why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed {
    /// The 1-based column (byte) of the line where reading stopped, when known.
    pub(crate) column: Option<usize>,
    /// The path, then why.
    pub(crate) message: String,
}

impl Malformed {
    /// A refusal with no column (found after the line was parsed).
    pub(crate) fn new(message: impl Into<String>) -> Malformed {
        Malformed {
            column: None,
            message: message.into(),
        }
    }

    /// A strict reader's refusal: the column where it stopped, the path, the words.
    pub(crate) fn read(e: &ReadError) -> Malformed {
        let message = if e.syntax {
            format!("{}: invalid JSON: {}", e.path, e.message)
        } else {
            format!("{}: {}", e.path, e.message)
        };
        Malformed {
            column: e.position.map(|(_, c)| c),
            message,
        }
    }

    /// The same refusal, with its message prefixed by `context`.
    fn after(self, context: &str) -> Malformed {
        Malformed {
            message: format!("{context}{}", self.message),
            ..self
        }
    }

    /// The refusal of line `line`.
    pub(crate) fn at(self, line: usize) -> Unreadable {
        Unreadable {
            line,
            column: self.column,
            message: self.message,
        }
    }
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Malformed {}

impl From<entries::PrepareError> for Malformed {
    /// An entry that cannot be rebuilt, as the line's refusal.
    fn from(e: entries::PrepareError) -> Malformed {
        Malformed::new(e.to_string())
    }
}

/// The record lines of a trace, a batch at a time, after its header.
pub(super) struct Reader<R> {
    lines: Lines<R>,
    /// The header's version, once it was read.
    version: Option<u32>,
    /// The current batch: line numbers and texts.
    batch: Vec<(usize, String)>,
    /// The buffers of the previous batch's lines (the records own copies of what they keep):
    /// reused, so that a batch's memory stays warm.
    spare: Vec<Vec<u8>>,
}

impl<R: BufRead> Reader<R> {
    /// A reader of `input` that refuses lines longer than `cap` bytes.
    pub(super) fn new(input: R, cap: usize) -> Reader<R> {
        Reader {
            lines: Lines {
                input,
                cap,
                number: 0,
            },
            version: None,
            batch: Vec::with_capacity(BATCH),
            spare: Vec::with_capacity(BATCH),
        }
    }

    /// Reads the next batch of up to [`BATCH`] record lines (blank lines skipped, the header
    /// read first) into [`Reader::current`]; `false` at the end of the trace.
    pub(super) fn next_batch(&mut self) -> Result<bool, Unreadable> {
        self.spare
            .extend(self.batch.drain(..).map(|(_, l)| l.into_bytes()));
        while self.batch.len() < BATCH {
            let buf = self.spare.pop().unwrap_or_default();
            let Some((number, l)) = self.lines.next_line(buf)? else {
                break;
            };
            if l.trim().is_empty() {
                self.spare.push(l.into_bytes());
            } else if self.version.is_none() {
                self.version = Some(header(&l).map_err(|m| m.at(number))?);
            } else {
                self.batch.push((number, l));
            }
        }
        Ok(!self.batch.is_empty())
    }

    /// The current batch: each line's number and text.
    pub(super) fn current(&self) -> &[(usize, String)] {
        &self.batch
    }

    /// The header's version; an error if the trace had no header (it was empty).
    pub(super) fn version(&self) -> Result<u32, Unreadable> {
        self.version.ok_or_else(|| {
            Malformed::new(format!(
                "$: empty trace: expected the header {{\"trace\": {TRACE_VERSION}}}"
            ))
            .at(1)
        })
    }
}

/// Reads the header line; returns the version.
fn header(line: &str) -> Result<u32, Malformed> {
    let h: Header = strict::read(line).map_err(|e| {
        Malformed::read(&e).after(&format!(
            "expected the header {{\"trace\": {TRACE_VERSION}}}: "
        ))
    })?;
    if !SUPPORTED_VERSIONS.contains(&h.trace) {
        return Err(Malformed::new(format!(
            "$.trace: trace format version {} is not supported (this checker reads versions 1, 2 and 3)",
            h.trace
        )));
    }
    Ok(h.trace)
}

/// Stage 2: each line of a batch read as a record (in parallel with more than one job).
pub(super) fn parse(
    pool: &rayon::ThreadPool,
    batch: &[(usize, String)],
    jobs: usize,
) -> Vec<Result<Record, Malformed>> {
    let parse = |(_, l): &(usize, String)| quick::parse_record(l).map_err(|e| Malformed::read(&e));
    if jobs <= 1 {
        batch.iter().map(parse).collect()
    } else {
        pool.install(|| batch.par_iter().map(parse).collect())
    }
}

/// One record, its table references resolved: ready to be judged on its own.
pub(super) enum Parsed {
    /// A call record and its resolved references.
    Call(Box<CallRecord>, Resolved),
    /// An observed record and its built entry lists.
    Observed(Box<ObservedRecord>, ObservedEntries),
    /// The end of a run.
    RunEnd(String),
}

/// Stage 3: the records of a batch resolved against the runs' tables, in line order; the first
/// unreadable record ends the batch (the records before it are still judged, so refusals are
/// reported in line order). `sources` keeps the recorded entries counterexamples are built
/// from.
pub(super) fn resolve(
    tables: &mut Tables,
    records: Vec<Result<Record, Malformed>>,
    version: u32,
    sources: bool,
) -> Vec<Result<Parsed, Malformed>> {
    let mut parsed = Vec::with_capacity(records.len());
    for r in records {
        let p = r.and_then(|rec| match rec {
            Record::RunEnd(e) => {
                tables.end(&e.run);
                Ok(Parsed::RunEnd(e.run))
            }
            Record::Call(mut rec) => {
                let resolved = tables.resolve(&mut rec, version >= COMPACT_VERSION, sources)?;
                Ok(Parsed::Call(rec, resolved))
            }
            Record::Observed(mut rec) => {
                let entries = observed::resolve(tables, &mut rec, version, sources)?;
                Ok(Parsed::Observed(rec, entries))
            }
        });
        let stop = p.is_err();
        parsed.push(p);
        if stop {
            break;
        }
    }
    parsed
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
            .map_err(|e| Malformed::new(format!("cannot read: {e}")).at(self.number + 1))?;
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
            return Err(Malformed::new(format!(
                "the line is longer than {} bytes, the cap on a line (raise it with --max-line-bytes)",
                self.cap
            ))
            .at(self.number));
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
