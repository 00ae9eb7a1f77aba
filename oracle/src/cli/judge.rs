//! `hybrid-compaction vectors check OUTPUTS.jsonl`: the oracle judges another implementation's
//! answers to the corpus, without running that implementation itself.
//!
//! An implementation in any language runs each vector's case and writes one line per vector,
//! `{"tcId": N, "output": {...}}` (the output exactly as its own `run` would print it). This
//! command compares every line with the expectation of that `tcId` exactly as `vectors` compares
//! the oracle's own implementations (`error.message` ignored; otherwise strict JSON equality:
//! `true` is not `1`, `1` is not `1.0`) and prints one line per vector that differs or was not
//! answered, then a summary. Exit 0 when every vector matched, 1 otherwise, 2 for unreadable
//! input (a line that is not `{"tcId": N, "output": {...}}`, or a `tcId` given twice).

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::PathBuf;

use clap::Args;
use serde_json::Value as Json;

use super::{failed, invalid, load_corpus, Embedded, Failure};
use crate::corpus::{comparable, first_difference};

/// Arguments of `vectors check`.
#[derive(Debug, Args)]
pub(super) struct JudgeArgs {
    /// The other implementation's outputs: JSON Lines `{"tcId": N, "output": {...}}`, or `-`.
    outputs: String,
    /// Corpus directory or one vector file (default: the corpus embedded in this binary).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Maximum number of differing tcIds listed.
    #[arg(long, default_value_t = 50)]
    max_failures: usize,
}

/// Reads the outputs (tcId -> output with `error.message` removed), one JSON object per line.
fn read_outputs(a: &JudgeArgs) -> Result<BTreeMap<u64, Json>, Failure> {
    let name = if a.outputs == "-" {
        "<stdin>"
    } else {
        a.outputs.as_str()
    };
    let reader: Box<dyn BufRead> = if a.outputs == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let f = std::fs::File::open(&a.outputs)
            .map_err(|e| invalid(format!("{name}: cannot open: {e}")))?;
        Box::new(std::io::BufReader::new(f))
    };
    let mut outputs = BTreeMap::new();
    for (i, line) in reader.lines().enumerate() {
        let at = format!("{name}:{}", i + 1);
        let line = line.map_err(|e| invalid(format!("{at}: cannot read: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: Json =
            serde_json::from_str(&line).map_err(|e| invalid(format!("{at}: invalid JSON: {e}")))?;
        let (Some(tc_id), Some(output)) = (
            value.get("tcId").and_then(Json::as_u64),
            value.get("output"),
        ) else {
            return Err(invalid(format!(
                "{at}: expected {{\"tcId\": N, \"output\": {{...}}}} with N a non-negative integer"
            )));
        };
        let mut output = output.clone();
        if let Some(Json::Object(e)) = output.get_mut("error") {
            e.remove("message");
        }
        if outputs.insert(tc_id, output).is_some() {
            return Err(invalid(format!("{at}: tcId {tc_id} is answered twice")));
        }
    }
    Ok(outputs)
}

/// Runs `vectors check`.
pub(super) fn cmd_judge(
    a: &JudgeArgs,
    embedded: Embedded,
    out: &mut Vec<u8>,
) -> Result<(), Failure> {
    let mut outputs = read_outputs(a)?;
    let (files, corpus) = load_corpus(a.corpus.as_deref(), embedded)?;
    let (mut total, mut matched) = (0usize, 0usize);
    let mut problems = Vec::new();
    for file in &files {
        for test in file.test_groups.iter().flat_map(|g| &g.tests) {
            total += 1;
            let expected = comparable(&test.expected);
            match outputs.remove(&u64::from(test.tc_id)) {
                None => problems.push(format!(
                    "  tcId {} [{}]: not answered",
                    test.tc_id, file.topic
                )),
                Some(actual) => match first_difference(&expected, &actual) {
                    None => matched += 1,
                    Some(d) => {
                        problems.push(format!("  tcId {} [{}]: {d}", test.tc_id, file.topic))
                    }
                },
            }
        }
    }
    for tc_id in outputs.keys() {
        problems.push(format!("  tcId {tc_id}: not in {corpus}"));
    }
    for p in problems.iter().take(a.max_failures) {
        out.extend(format!("{p}\n").as_bytes());
    }
    if problems.len() > a.max_failures {
        out.extend(format!("  ... and {} more\n", problems.len() - a.max_failures).as_bytes());
    }
    out.extend(format!("{matched} of {total} vectors of {corpus} matched\n").as_bytes());
    if problems.is_empty() {
        Ok(())
    } else {
        Err(failed(format!(
            "{} problem(s): see the list above",
            problems.len()
        )))
    }
}
