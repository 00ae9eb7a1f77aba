//! `hybrid-compaction check TRACE.jsonl|-`: judge a recorded trace (`docs/TRACE.md`, SPEC
//! TRC-1 .. TRC-11). Exit 0 conformant, 1 violations, 2 unreadable.
//!
//! The trace is read as a stream (a file or stdin), never whole; the report is printed only
//! when the whole trace was readable, so stdout never holds a partial verdict.

use std::io::BufRead;
use std::path::PathBuf;

use clap::Args;

use super::{failed, invalid, quietly, Failure};
use crate::trace::{self, report, Options};
use crate::{Engine, Model};
use hybrid_compaction_model::seam::Implementation;

pub(super) const CHECK_EXAMPLE: &str = r#"Examples:
  hybrid-compaction check docs/trace-example.jsonl          # table; exit 1 on violations
  hybrid-compaction check --json --jobs 2 run.jsonl         # one JSON document
  my-agent-tests --trace - | hybrid-compaction check -      # from stdin
  hybrid-compaction check --counterexamples cex/ run.jsonl  # then: hybrid-compaction run cex/*.json

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
    /// Write one shrunk wire case per disagreeing call into this directory.
    #[arg(long, value_name = "DIR")]
    counterexamples: Option<PathBuf>,
}

fn file_name(run: &str, call: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("{}-{}.json", clean(run), clean(call))
}

pub(super) fn cmd_check(a: &CheckArgs, out: &mut Vec<u8>) -> Result<(), Failure> {
    let imp: &dyn Implementation = if a.engine { &Engine } else { &Model };
    let (name, reader): (String, Box<dyn BufRead>) = if a.input == "-" {
        ("<stdin>".to_owned(), Box::new(std::io::stdin().lock()))
    } else {
        let f = std::fs::File::open(&a.input)
            .map_err(|e| invalid(format!("{}: cannot open: {e}", a.input)))?;
        (a.input.clone(), Box::new(std::io::BufReader::new(f)))
    };
    let opts = Options {
        jobs: a.jobs,
        counterexamples: a.counterexamples.is_some() || a.json,
    };
    let rep =
        quietly(|| trace::check(reader, imp, &opts)).map_err(|e| invalid(format!("{name}:{e}")))?;
    if let Some(dir) = &a.counterexamples {
        std::fs::create_dir_all(dir)
            .map_err(|e| invalid(format!("{}: cannot create: {e}", dir.display())))?;
        for c in &rep.counterexamples {
            let p = dir.join(file_name(&c.run, &c.call));
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
