//! `hybrid-compaction check TRACE.jsonl|-`: judge a recorded trace (`docs/TRACE.md`, SPEC
//! TRC-1 .. TRC-11). Exit 0 conformant, 1 violations, 2 unreadable.
//!
//! The trace is read as a stream (a file or stdin), never whole, each line up to
//! `--max-line-bytes`; the report is printed only when the whole trace was readable, so stdout
//! never holds a partial verdict.
//!
//! Counterexamples are written as `DIR/<run>.<call>.json`, each name encoded so that no two
//! (run, call) pairs share a file ([`file_name`]).

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

use clap::Args;

use super::{failed, invalid, quietly, Failure};
use crate::trace::{self, report, Options, DEFAULT_MAX_LINE_BYTES};
use crate::{Engine, Model};
use hybrid_compaction_model::seam::Implementation;

pub(super) const CHECK_EXAMPLE: &str = r#"Examples:
  hybrid-compaction check docs/trace-example.jsonl          # table; exit 1 on violations
  hybrid-compaction check --json --jobs 2 run.jsonl         # one JSON document
  my-agent-tests --trace - | hybrid-compaction check -      # from stdin
  hybrid-compaction check --counterexamples cex/ run.jsonl  # then: hybrid-compaction run cex/*.json
  hybrid-compaction check --max-line-bytes 268435456 big.jsonl  # lines up to 256 MiB

Exit codes: 0 conformant; 1 violations (each with its TRC clause, run, call and line);
2 unreadable trace (one line on stderr, nothing on stdout)."#;

/// Arguments of `check`.
#[derive(Debug, Args)]
pub(super) struct CheckArgs {
    /// The trace (JSON Lines), or `-` for stdin.
    input: String,
    /// Replay through the optimized engine instead of the executable specification.
    #[arg(long)]
    engine: bool,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
    /// Worker threads for per-call checks (the output does not depend on it).
    #[arg(long, default_value_t = 1, value_name = "N")]
    jobs: usize,
    /// Write one shrunk wire case per disagreeing call into this directory, as
    /// `<run>.<call>.json` (names encoded: see docs/TRACE.md).
    #[arg(long, value_name = "DIR")]
    counterexamples: Option<PathBuf>,
    /// The longest line read, in bytes (its line break not counted); a longer line makes the
    /// trace unreadable (exit 2).
    #[arg(long, default_value_t = DEFAULT_MAX_LINE_BYTES, value_name = "BYTES")]
    max_line_bytes: usize,
}

/// One run or call name in a file name: lowercase ASCII letters, digits, `-` and `_` as they
/// are, every other byte of its UTF-8 as `%XX` (upper-case hex), the empty name as `%`. The
/// encoding is injective and never yields `.`, `~` or `+`; letters outside an escape are lower
/// case and escapes upper case, so the names of distinct pairs differ on a case-insensitive
/// file system too; a device name of Windows (`con`, `nul`, ...) gets its first letter escaped.
fn encode(name: &str) -> String {
    if name.is_empty() {
        return "%".to_owned();
    }
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        match b {
            b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' => out.push(char::from(b)),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    let device = matches!(out.as_str(), "con" | "prn" | "aux" | "nul")
        || (out.len() == 4
            && (out.starts_with("com") || out.starts_with("lpt"))
            && out.as_bytes()[3].is_ascii_digit());
    if device {
        out.replace_range(..1, &format!("%{:02X}", out.as_bytes()[0]));
    }
    out
}

/// Encoded names longer than this are shortened to a prefix and a hash of the whole name.
const LONG_NAME: usize = 96;

/// `<run>.<call>` (each [`encode`]d; `.` separates them, as no encoded name contains one), a
/// name over [`LONG_NAME`] bytes cut to its first 64 and `+` and 16 hex digits of its SHA-256,
/// so the file name stays within what file systems allow.
fn file_stem(run: &str, call: &str) -> String {
    let part = |name: &str| {
        let e = encode(name);
        if e.len() <= LONG_NAME {
            return e;
        }
        use sha2::Digest;
        let digest = sha2::Sha256::digest(name.as_bytes());
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        // `e` is ASCII: any byte index is a character boundary.
        format!("{}+{hex}", &e[..64])
    };
    format!("{}.{}", part(run), part(call))
}

/// The file of a counterexample: `<run>.<call>.json`, or `<run>.<call>~N.json` for the N-th
/// counterexample of a pair that already has one in this check (a trace that names the same
/// run and call twice), so no counterexample replaces another.
fn file_name(run: &str, call: &str, taken: &mut HashSet<String>) -> String {
    let stem = file_stem(run, call);
    let mut name = format!("{stem}.json");
    let mut n = 1;
    while !taken.insert(name.clone()) {
        n += 1;
        name = format!("{stem}~{n}.json");
    }
    name
}

pub(super) fn cmd_check(a: &CheckArgs, out: &mut Vec<u8>) -> Result<(), Failure> {
    let imp: &dyn Implementation = if a.engine { &Engine } else { &Model };
    let (name, reader): (String, Box<dyn BufRead>) = if a.input == "-" {
        (
            "<stdin>".to_owned(),
            Box::new(BufReader::with_capacity(
                trace::READ_BUFFER,
                std::io::stdin().lock(),
            )),
        )
    } else {
        let f = std::fs::File::open(&a.input)
            .map_err(|e| invalid(format!("{}: cannot open: {e}", a.input)))?;
        (
            a.input.clone(),
            Box::new(BufReader::with_capacity(trace::READ_BUFFER, f)),
        )
    };
    let opts = Options {
        jobs: a.jobs,
        counterexamples: a.counterexamples.is_some() || a.json,
        max_line_bytes: a.max_line_bytes,
        ..Options::default()
    };
    // `NAME:LINE:COLUMN: PATH: WHAT`, as `run` names a place in its input.
    let rep = quietly(|| trace::check(reader, imp, &opts)).map_err(|e| {
        let at = e.column.map(|c| format!(":{c}")).unwrap_or_default();
        invalid(format!("{name}:{}{at}: {}", e.line, e.message))
    })?;
    if let Some(dir) = &a.counterexamples {
        std::fs::create_dir_all(dir)
            .map_err(|e| invalid(format!("{}: cannot create: {e}", dir.display())))?;
        let mut taken = HashSet::new();
        for c in &rep.counterexamples {
            let p = dir.join(file_name(&c.run, &c.call, &mut taken));
            let mut text = serde_json::to_string_pretty(&c.case).unwrap_or_default();
            text.push('\n');
            std::fs::write(&p, text)
                .map_err(|e| invalid(format!("{}: cannot write: {e}", p.display())))?;
        }
    }
    if a.json {
        out.extend(report::json(&rep).as_bytes());
    } else {
        out.extend(report::table(&name, &rep).as_bytes());
    }
    if rep.violations.is_empty() {
        Ok(())
    } else {
        Err(failed(format!(
            "{name}: {} violation(s)",
            rep.violations.len()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct (run, call) pairs never share a file, even where a simpler cleaning would.
    #[test]
    fn counterexample_names_are_injective() {
        let pairs = [
            ("a-b", "c"),
            ("a", "b-c"),
            ("r/1", "x"),
            ("r_1", "x"),
            ("R1", "x"),
            ("r1", "x"),
            ("", "x"),
            ("%", "x"),
            ("a.b", "c"),
            ("a", "b.c"),
            ("con", "x"),
            ("%63on", "x"),
            ("é", "x"),
        ];
        let mut taken = HashSet::new();
        let names: Vec<String> = pairs
            .iter()
            .map(|(r, c)| file_name(r, c, &mut taken))
            .collect();
        let lower: HashSet<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
        assert_eq!(lower.len(), pairs.len(), "{names:?}");
        assert_eq!(names[0], "a-b.c.json");
        assert_eq!(names[2], "r%2F1.x.json");
        assert_eq!(names[10], "%63on.x.json");
        // The same pair again: a numbered file, never the first one's.
        assert_eq!(file_name("a-b", "c", &mut taken), "a-b.c~2.json");
        // A long name is cut and hashed: distinct long names stay distinct.
        let long_a = "x".repeat(300);
        let long_b = format!("{}y", "x".repeat(299));
        let (a, b) = (file_stem(&long_a, "c"), file_stem(&long_b, "c"));
        assert_ne!(a, b);
        assert!(a.len() < 100, "{a}");
    }
}
