//! `hybrid-compaction run --stream`: JSON Lines in, JSON Lines out, one line at a time.
//!
//! Every other mode of `run` reads its whole input and prints nothing unless every case was
//! answered. A harness feeding thousands of cases wants the opposite: constant memory over the
//! input length, each answer as soon as its case is read, and one bad line not losing the rest.
//! So in this mode each non-blank input line is one case, parsed and answered on its own; its
//! output line is written and flushed before the next line is read. A line that is not a valid
//! case (or longer than `--max-input-bytes`) is answered by
//! `{"invalid": {"line": N, "message": "..."}}`, an implementation failure by
//! `{"failed": {"line": N, "message": "..."}}`, and the stream goes on. The exit code summarizes
//! afterwards: 1 if any line failed, else 2 if any line was invalid, else 0 (the usual codes).

use std::io::{BufRead, Read, Write};

use serde_json::json;

use super::{failed, implementation, invalid, parse_cases, quietly, Failure, InputArgs};
use crate::ops::Case;
use crate::ops::{run_case_caught, RunError};

/// What one line produced: its output line, and whether it was invalid or failed.
enum Answer {
    Output(String),
    Invalid(String),
    Failed(String),
}

/// Runs `--stream` over the input of `a` (a file or `-`), writing to stdout as it goes.
pub(super) fn cmd_stream(a: &InputArgs, verify_shorthand: bool) -> Result<(), Failure> {
    let name = if a.input == "-" {
        "<stdin>"
    } else {
        a.input.as_str()
    };
    let reader: Box<dyn BufRead> = if a.input == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let f = std::fs::File::open(&a.input)
            .map_err(|e| invalid(format!("{name}: cannot open: {e}")))?;
        Box::new(std::io::BufReader::new(f))
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (mut invalid_lines, mut failed_lines) = (0usize, 0usize);
    let mut lines = Lines::new(reader, a.max_input_bytes);
    while let Some(line) = lines.next_line(name)? {
        let (number, text) = line;
        let answer = match text {
            Err(bad) => Answer::Invalid(bad.message(name, number)),
            Ok(text) if text.trim().is_empty() => continue,
            Ok(text) => answer(a, &format!("{name}:{number}"), &text, verify_shorthand),
        };
        let rendered = match answer {
            Answer::Output(o) => o,
            Answer::Invalid(message) => {
                invalid_lines += 1;
                json!({"invalid": {"line": number, "message": message}}).to_string()
            }
            Answer::Failed(message) => {
                failed_lines += 1;
                json!({"failed": {"line": number, "message": message}}).to_string()
            }
        };
        writeln!(out, "{rendered}")
            .and_then(|()| out.flush())
            .map_err(|e| failed(format!("cannot write the output: {e}")))?;
    }
    match (failed_lines, invalid_lines) {
        (0, 0) => Ok(()),
        (0, n) => Err(invalid(format!(
            "{name}: {n} invalid line(s), answered in the output"
        ))),
        (n, _) => Err(failed(format!(
            "{name}: {n} line(s) failed, answered in the output"
        ))),
    }
}

/// The answer to one line: parsed as one case, the estimator override applied, run.
fn answer(a: &InputArgs, label: &str, text: &str, verify_shorthand: bool) -> Answer {
    let mut case: Case = match parse_cases(label, text, verify_shorthand) {
        Ok((_, cases)) if cases.len() == 1 => cases.into_iter().next().expect("one case"),
        Ok(_) => return Answer::Invalid(format!("{label}: expected one case object per line")),
        Err(f) => return Answer::Invalid(f.message),
    };
    if let (Some(e), Some(p)) = (&a.estimator, case.policy_mut()) {
        p.estimator = Some(e.clone());
    }
    match quietly(|| run_case_caught(&case, implementation(a.model, a.engine))) {
        Ok(o) => Answer::Output(serde_json::to_string(&o).unwrap_or_default()),
        Err(RunError::Wire(w)) => Answer::Invalid(format!("{label}: invalid case: {w}")),
        Err(e @ RunError::Panic { .. }) => Answer::Failed(format!("{label}: {e}")),
    }
}

/// One input line: its 1-based number and its text, or why it cannot be a case.
type Line = (usize, Result<String, BadLine>);

/// Why an input line cannot be a case, before it is read as one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BadLine {
    /// Longer than the cap on an input line (`--max-input-bytes`).
    TooLong {
        /// The cap, in bytes.
        cap: u64,
    },
    /// Not UTF-8 from this byte offset on.
    NotUtf8 {
        /// The offset of the first byte that is not.
        at: usize,
    },
}

impl BadLine {
    /// The refusal of line `number` of input `name`.
    fn message(self, name: &str, number: usize) -> String {
        match self {
            BadLine::TooLong { cap } => format!(
                "{name}:{number}: line exceeds the limit of {cap} bytes (raise it with --max-input-bytes)"
            ),
            BadLine::NotUtf8 { at } => {
                format!("{name}:{number}: invalid UTF-8 at byte offset {at}")
            }
        }
    }
}

/// Numbered input lines, each at most `cap` bytes: a longer line is consumed to its end and
/// reported as an error line, so memory stays bounded by `cap` whatever the input.
struct Lines {
    reader: Box<dyn BufRead>,
    cap: u64,
    number: usize,
}

impl Lines {
    fn new(reader: Box<dyn BufRead>, cap: u64) -> Lines {
        Lines {
            reader,
            cap,
            number: 0,
        }
    }

    /// The next line (1-based number, text or a per-line error); `None` at the end of input.
    fn next_line(&mut self, name: &str) -> Result<Option<Line>, Failure> {
        let read_err = |e: std::io::Error| invalid(format!("{name}: cannot read: {e}"));
        let mut buf = Vec::new();
        let n = Read::take(&mut self.reader, self.cap.saturating_add(1))
            .read_until(b'\n', &mut buf)
            .map_err(read_err)?;
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        let number = self.number;
        if buf.last() != Some(&b'\n') && buf.len() as u64 > self.cap {
            // Too long: skip the rest of the line without keeping it.
            let mut rest = Vec::new();
            loop {
                rest.clear();
                let m = Read::take(&mut self.reader, 64 * 1024)
                    .read_until(b'\n', &mut rest)
                    .map_err(read_err)?;
                if m == 0 || rest.last() == Some(&b'\n') {
                    break;
                }
            }
            return Ok(Some((number, Err(BadLine::TooLong { cap: self.cap }))));
        }
        Ok(Some((
            number,
            String::from_utf8(buf).map_err(|e| BadLine::NotUtf8 {
                at: e.utf8_error().valid_up_to(),
            }),
        )))
    }
}
