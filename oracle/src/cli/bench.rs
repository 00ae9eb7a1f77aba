//! `hybrid-compaction bench INPUT`: what compaction costs on the user's own history.
//!
//! The input is a transcript object (`hybrid-compaction workload` prints one; SPEC TRN-1) or a
//! wire case with `policy` and `entries` or `transcript` (any `op`). Each measure runs
//! `--iterations` times on the engine, timed one call at a time with the monotonic clock:
//!
//! | measure | one call |
//! |---|---|
//! | `estimate <estimator> cold` | a fresh estimator sums every entry (EST-2, EST-4, EST-6) |
//! | `estimate <estimator> memoized` | a memo warmed on the history sums it again (EST-7: lookups only) |
//! | `verify accepted` | `Verify(history, history)` (VER-1) |
//! | `verify rejected` | `Verify(history, history without its first required entry)` |
//! | `assemble <estimator>` | the assembler on a static snapshot of the history with the echoing reducer (ASM-7) |
//!
//! Reported per measure: median and p99 (nearest rank) of the calls, and the median per entry and
//! per UTF-8 byte of the history (its EST-2 size), as a table or one JSON document (`--json`).
//! `--estimators` restricts the estimate rows. Progress goes to stderr, one line per measure (updated in place on a terminal).
//!
//! `--texts FILE` also writes, per entry, the texts the token estimator counts (SPEC EST-6: role,
//! author, message text, call names and argument JSON, result texts), the fixed overhead tokens
//! and both encodings' chat counts, so another tokenizer can count the very same texts in a
//! side-by-side run (`benches/side_by_side/versus_tiktoken.py` times Python tiktoken on them).
//!
//! Without `--policy` (and for a transcript) the policy is: the UTF-8 estimator, hard limit 50 %
//! of the history's size, trigger margin a tenth of it, retention 4, 3 attempts.
//! `--estimator` replaces the assembly's estimator and `--budget-percent` the hard limit (as a
//! percentage of the history's size in that estimator's unit).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use clap::Args;
use hybrid_compaction::estimators::{TokenEncoding, TokenEstimator};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::reducers::ScriptedReducer;
use hybrid_compaction_model::snapshot::StaticProvider;
use serde::Serialize;
use serde_json::{json, Value as Json};

use super::{
    failed, invalid, parse_estimator, read_input, Expected, Failure, DEFAULT_MAX_INPUT_BYTES,
};
use crate::wire::convert;
use crate::wire::error::CaseError;
use crate::wire::input::{EntryInput, EstimatorInput, PolicyInput, TranscriptInput};
use crate::wire::output::AssemblyOutput;
use crate::wire::strict;
use crate::Engine;
use hybrid_compaction_model::seam::Implementation;

pub(super) const BENCH_EXAMPLE: &str = r#"Examples:
  hybrid-compaction workload --messages 10000 --seed 1 > conv.json
  hybrid-compaction bench conv.json                       # table
  hybrid-compaction bench conv.json --json --iterations 5
  hybrid-compaction bench conv.json --estimator tokens:o200k_base --budget-percent 30
  hybrid-compaction bench case.json                       # a wire case: its policy and entries

Build with --release for numbers that mean something (cargo run --release -- bench ...)."#;

/// The estimators measured, by their `--estimator` names.
const ESTIMATORS: [&str; 4] = [
    "utf8",
    "utf8-text",
    "tokens:o200k_base",
    "tokens:cl100k_base",
];

/// Arguments of `bench`.
#[derive(Debug, Args)]
pub(super) struct BenchArgs {
    /// A transcript object or a wire case (file, or `-` for stdin).
    input: String,
    /// Calls per measure.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    iterations: u32,
    /// The policy (a JSON object, or `@FILE`); default: see above.
    #[arg(long, value_name = "JSON")]
    policy: Option<String>,
    /// The assembly's estimator (`utf8`, `utf8-text`, `tokens:o200k_base`, `tokens:cl100k_base`,
    /// optionally `memo:`-prefixed).
    #[arg(long, value_name = "ESTIMATOR", value_parser = parse_estimator)]
    estimator: Option<EstimatorInput>,
    /// The hard limit as a percentage (1-100) of the history's size in the assembly's unit.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u32).range(1..=100))]
    budget_percent: Option<u32>,
    /// The estimators to measure, comma-separated (default: all four).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = estimator_name)]
    estimators: Vec<String>,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write the texts the token estimator counts, per entry, to FILE (JSON).
    #[arg(long, value_name = "FILE")]
    texts: Option<std::path::PathBuf>,
    /// Refuse inputs larger than this many bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_INPUT_BYTES, value_name = "BYTES")]
    max_input_bytes: u64,
}

fn estimator_name(text: &str) -> Result<String, Expected> {
    ESTIMATORS
        .contains(&text)
        .then(|| text.to_owned())
        .ok_or_else(|| Expected::new(format!("some of {}", ESTIMATORS.join(", "))))
}

/// One measured row.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    measure: String,
    runs: usize,
    median_ns: u64,
    p99_ns: u64,
    per_entry_ns: f64,
    per_byte_ns: f64,
}

/// The history and policy read from the input.
struct Input {
    entries: Vec<Entry>,
    policy: Option<PolicyInput>,
}

fn case_error(name: &str, e: CaseError) -> Failure {
    match e {
        CaseError::Wire(w) => invalid(format!("{name}: {w}")),
        CaseError::Answer(a) => invalid(format!("{name}: {}", a.message)),
    }
}

/// `obj[key]` read as `T` by the strict reader (a refusal names the JSON path, in the format's
/// words).
fn member<T: serde::de::DeserializeOwned>(
    name: &str,
    obj: &serde_json::Map<String, Json>,
    key: &str,
) -> Result<Option<T>, Failure> {
    let Some(v) = obj.get(key).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    strict::read_value(v.clone()).map(Some).map_err(|e| {
        let within = e.path.strip_prefix('$').unwrap_or(&e.path);
        invalid(format!("{name}: $.{key}{within}: {}", e.message))
    })
}

/// The JSON text of an input (strictly: a repeated key is refused too).
fn json_text(name: &str, text: &str) -> Result<Json, Failure> {
    strict::read::<Json>(text).map_err(|e| match e.position {
        Some((l, c)) if e.syntax => invalid(format!("{name}:{l}:{c}: invalid JSON: {}", e.message)),
        _ => invalid(format!("{name}: {e}")),
    })
}

fn read(name: &str, text: &str) -> Result<Input, Failure> {
    let value = json_text(name, text)?;
    let Json::Object(obj) = &value else {
        return Err(invalid(format!(
            "{name}: expected a transcript object or a wire case"
        )));
    };
    if obj.contains_key("format") {
        let t = TranscriptInput::deserialize_from(name, &value)?;
        let t = convert::transcript(&t).map_err(|e| case_error(name, e))?;
        return Ok(Input {
            entries: t.entries().to_vec(),
            policy: None,
        });
    }
    let entries: Option<Vec<EntryInput>> = member(name, obj, "entries")?;
    let transcript: Option<TranscriptInput> = member(name, obj, "transcript")?;
    let policy: Option<PolicyInput> = member(name, obj, "policy")?;
    let (entries, _) = convert::entries_or_transcript(entries.as_deref(), transcript.as_ref())
        .map_err(|e| case_error(name, e))?;
    Ok(Input { entries, policy })
}

trait DeserializeFrom: Sized {
    fn deserialize_from(name: &str, v: &Json) -> Result<Self, Failure>;
}

impl DeserializeFrom for TranscriptInput {
    fn deserialize_from(name: &str, v: &Json) -> Result<Self, Failure> {
        strict::read_value(v.clone())
            .map_err(|e| invalid(format!("{name}: invalid transcript: {e}")))
    }
}

fn sum(estimator: &dyn Estimator, entries: &[Entry]) -> i64 {
    entries
        .iter()
        .map(|e| i64::from(estimator.estimate(e)))
        .sum()
}

/// `--texts`: per entry `{"overhead", "texts", "o200k_base", "cl100k_base"}` (module docs).
fn write_texts(path: &std::path::Path, entries: &[Entry]) -> Result<(), Failure> {
    let rows: Vec<Json> = entries
        .iter()
        .map(|e| {
            let mut texts = Vec::new();
            let overhead = TokenEstimator::texts(e.message(), |t| texts.push(t.to_owned()));
            let mut row = json!({ "overhead": overhead, "texts": texts });
            for encoding in TokenEncoding::ALL {
                row[encoding.name()] =
                    json!(TokenEstimator::new(encoding).message_tokens(e.message()));
            }
            row
        })
        .collect();
    let mut text = serde_json::to_string(&json!({ "entries": rows })).unwrap_or_default();
    text.push('\n');
    std::fs::write(path, text)
        .map_err(|e| invalid(format!("{}: cannot write: {e}", path.display())))
}

fn estimator_of(input: &EstimatorInput) -> Result<std::sync::Arc<dyn Estimator>, Failure> {
    convert::estimator(input, &Engine, "$.policy.estimator").map_err(|e| case_error("policy", e))
}

/// The policy the assembly runs with (module docs).
fn policy(a: &BenchArgs, input: &Input) -> Result<(Policy, PolicyInput), Failure> {
    let given = match &a.policy {
        None => input.policy.clone(),
        Some(text) => Some(policy_argument(text)?),
    };
    let mut p = given.clone().unwrap_or(PolicyInput {
        hard_limit: 0,
        trigger_margin: 0,
        recent_message_retention_count: 4,
        maximum_compaction_attempts: 3,
        preservation_label: Some("bench".into()),
        preservation_version: 1,
        estimator: Some(EstimatorInput::from_shorthand("utf8").expect("a known name")),
    });
    if let Some(e) = &a.estimator {
        p.estimator = Some(e.clone());
    }
    let percent = a.budget_percent.or(input.policy.is_none().then_some(50));
    if let Some(percent) = percent {
        let unit = p
            .estimator
            .as_ref()
            .ok_or_else(|| invalid("the policy has no estimator"))?;
        let size = sum(estimator_of(unit)?.as_ref(), &input.entries);
        let limit = (size * i64::from(percent) / 100).clamp(2, i64::from(i32::MAX));
        p.hard_limit = i32::try_from(limit).unwrap_or(i32::MAX);
        p.trigger_margin = (p.hard_limit / 10).max(1);
    }
    let policy =
        convert::policy(Some(&p), &Engine, "$.policy").map_err(|e| case_error("policy", e))?;
    Ok((policy, p))
}

/// `--policy`: a wire policy object as JSON text, or `@FILE` holding one.
fn policy_argument(text: &str) -> Result<PolicyInput, Failure> {
    let (name, json) = match text.strip_prefix('@') {
        Some(path) => (
            path.to_owned(),
            read_input(path, DEFAULT_MAX_INPUT_BYTES)?.1,
        ),
        None => ("--policy".to_owned(), text.to_owned()),
    };
    let value = json_text(&name, &json)?;
    let mut obj = serde_json::Map::new();
    obj.insert("policy".into(), value);
    member(&name, &obj, "policy").map(|p| p.expect("present"))
}

/// Times `iterations` calls of `f` (after one untimed warm-up call when there are several).
fn time<T>(iterations: u32, mut f: impl FnMut() -> T) -> Vec<Duration> {
    if iterations > 1 {
        std::hint::black_box(f());
    }
    (0..iterations)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .collect()
}

fn row(measure: String, mut samples: Vec<Duration>, n: usize, bytes: i64) -> Row {
    samples.sort();
    let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    let median = ns(samples[samples.len() / 2]);
    // Nearest rank: the smallest sample with at least 99 % of the samples at or below it.
    let rank = (samples.len() * 99).div_ceil(100).max(1) - 1;
    #[allow(
        clippy::cast_precision_loss,
        reason = "nanosecond medians and history sizes are far below 2^52"
    )]
    let (per_entry, per_byte) = (
        median as f64 / n.max(1) as f64,
        median as f64 / bytes.max(1) as f64,
    );
    Row {
        measure,
        runs: samples.len(),
        median_ns: median,
        p99_ns: ns(samples[rank]),
        per_entry_ns: per_entry,
        per_byte_ns: per_byte,
    }
}

/// Progress on stderr: in place on a terminal, a line per measure otherwise.
struct Progress {
    total: usize,
    done: usize,
    tty: bool,
}

impl Progress {
    fn start(&mut self, measure: &str) {
        if self.tty {
            eprint!(
                "\r\x1b[Kbench: [{}/{}] {measure} ...",
                self.done + 1,
                self.total
            );
            let _ = std::io::stderr().flush();
        }
    }

    fn finish(&mut self, r: &Row) {
        self.done += 1;
        let line = format!(
            "bench: [{}/{}] {} median {}",
            self.done,
            self.total,
            r.measure,
            human(r.median_ns)
        );
        if self.tty {
            eprint!("\r\x1b[K{line}");
            if self.done == self.total {
                eprintln!();
            }
        } else {
            eprintln!("{line}");
        }
    }
}

fn human(ns: u64) -> String {
    #[allow(clippy::cast_precision_loss, reason = "display only")]
    let x = ns as f64;
    if x >= 1e9 {
        format!("{:.3} s", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.3} ms", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.2} µs", x / 1e3)
    } else {
        format!("{ns} ns")
    }
}

pub(super) fn cmd_bench(a: &BenchArgs, out: &mut Vec<u8>) -> Result<(), Failure> {
    let (name, text) = read_input(&a.input, a.max_input_bytes)?;
    let input = read(&name, &text)?;
    let entries = &input.entries;
    if entries.is_empty() {
        return Err(invalid(format!("{name}: the history has no entries")));
    }
    let (policy, policy_input) = policy(a, &input)?;
    if let Some(path) = &a.texts {
        write_texts(path, entries)?;
    }
    let n = entries.len();
    let bytes = sum(Engine.context_estimator().as_ref(), entries);
    let it = a.iterations;
    let estimators: Vec<&str> = if a.estimators.is_empty() {
        ESTIMATORS.to_vec()
    } else {
        ESTIMATORS
            .into_iter()
            .filter(|e| a.estimators.iter().any(|x| x == e))
            .collect()
    };
    let mut progress = Progress {
        total: estimators.len() * 2 + 3,
        done: 0,
        tty: std::io::stderr().is_terminal(),
    };
    let mut rows = Vec::new();
    let mut measure = |label: String, f: &mut dyn FnMut() -> i64| {
        progress.start(&label);
        let r = row(label, time(it, f), n, bytes);
        progress.finish(&r);
        rows.push(r);
    };
    for name in estimators {
        let e = EstimatorInput::from_shorthand(name).expect("a known name");
        // A cold pass builds its estimator each time (shorthands never name `recorded`, the
        // one estimator that cannot be built outside a trace).
        measure(format!("estimate {name} cold"), &mut || {
            estimator_of(&e).map_or(0, |x| sum(x.as_ref(), entries))
        });
        let memo = EstimatorInput::from_shorthand(&format!("memo:{name}")).expect("known");
        let warm = estimator_of(&memo)?;
        sum(warm.as_ref(), entries);
        measure(format!("estimate {name} memoized"), &mut || {
            sum(warm.as_ref(), entries)
        });
    }
    let verify = |proposed: &[Entry]| {
        Engine
            .verify(entries, proposed, &policy)
            .map(|v| v.rejection_reasons.len())
    };
    let required = Engine
        .select_required(entries, &policy, &CancellationToken::new())
        .map_err(|e| failed(format!("{name}: selection failed: {e}")))?
        .required_entry_ids;
    let without_first: Vec<Entry> = entries
        .iter()
        .filter(|e| Some(e.id()) != required.first())
        .cloned()
        .collect();
    if verify(entries).is_err() {
        return Err(invalid(format!(
            "{name}: the history cannot be verified (duplicate entry ids)"
        )));
    }
    measure("verify accepted".into(), &mut || {
        verify(entries).map_or(-1, |r| r as i64)
    });
    measure("verify rejected".into(), &mut || {
        verify(&without_first).map_or(-1, |r| r as i64)
    });
    let assemble = || {
        let mut provider = StaticProvider::new(entries.clone());
        let mut reducer = ScriptedReducer::new(Vec::new());
        Engine.assemble(
            &policy,
            &mut provider,
            &mut reducer,
            &CancellationToken::new(),
        )
    };
    let estimator_name = policy_input
        .estimator
        .as_ref()
        .map(|e| serde_json::to_value(e).unwrap_or(Json::Null))
        .unwrap_or(Json::Null);
    measure(
        format!("assemble {}", shorthand(&estimator_name)),
        &mut || assemble().map_or(-1, |r| r.final_entries.map_or(0, |f| f.len() as i64)),
    );
    let result = assemble().map_err(|e| failed(format!("{name}: assembly failed: {e}")))?;
    let assembly = crate::wire::output::assembly_output(&result);
    if a.json {
        let doc = json!({
            "input": name,
            "entries": n,
            "utf8Bytes": bytes,
            "iterations": it,
            "policy": policy_input,
            "assembly": summary(&assembly),
            "rows": rows,
        });
        out.extend(
            serde_json::to_string_pretty(&doc)
                .unwrap_or_default()
                .as_bytes(),
        );
        out.push(b'\n');
    } else {
        out.extend(table(&name, n, bytes, &policy_input, &assembly, &rows).as_bytes());
    }
    Ok(())
}

/// `utf8`, `tokens:o200k_base`, `memo:utf8`, ... of a wire estimator object.
fn shorthand(e: &Json) -> String {
    match e.get("kind").and_then(Json::as_str) {
        Some("tokens") => format!(
            "tokens:{}",
            e.get("encoding").and_then(Json::as_str).unwrap_or("?")
        ),
        Some("memo") => format!(
            "memo:{}",
            shorthand(e.get("estimator").unwrap_or(&Json::Null))
        ),
        Some(k) => k.to_owned(),
        None => "?".to_owned(),
    }
}

fn summary(a: &AssemblyOutput) -> Json {
    json!({
        "outcome": a.outcome,
        "finalEntries": a.final_entry_ids.as_ref().map(Vec::len),
        "originalEstimatedSize": a.original_estimated_size,
        "finalEstimatedSize": a.final_estimated_size,
        "hardLimit": a.hard_limit,
    })
}

fn table(
    name: &str,
    n: usize,
    bytes: i64,
    p: &PolicyInput,
    a: &AssemblyOutput,
    rows: &[Row],
) -> String {
    let estimator = p
        .estimator
        .as_ref()
        .map(|e| shorthand(&serde_json::to_value(e).unwrap_or(Json::Null)))
        .unwrap_or_default();
    let mut s = format!(
        "{name}: {n} entries, {bytes} UTF-8 bytes; assembly policy: {estimator}, hard limit {}, \
         trigger margin {}, retention {}, {} attempts\n\
         assembly: {}, {} of {n} entries kept, size {} -> {}\n\n",
        p.hard_limit,
        p.trigger_margin,
        p.recent_message_retention_count,
        p.maximum_compaction_attempts,
        a.outcome,
        a.final_entry_ids.as_ref().map_or(0, Vec::len),
        a.original_estimated_size,
        a.final_estimated_size,
    );
    s.push_str(&format!(
        "| {:<36} | {:>5} | {:>11} | {:>11} | {:>10} | {:>10} |\n",
        "measure", "runs", "median", "p99", "per entry", "per byte"
    ));
    s.push_str(&format!(
        "|{}|{}|{}|{}|{}|{}|\n",
        "-".repeat(38),
        "-".repeat(6) + ":",
        "-".repeat(12) + ":",
        "-".repeat(12) + ":",
        "-".repeat(11) + ":",
        "-".repeat(11) + ":"
    ));
    for r in rows {
        s.push_str(&format!(
            "| {:<36} | {:>5} | {:>11} | {:>11} | {:>7.1} ns | {:>7.2} ns |\n",
            r.measure,
            r.runs,
            human(r.median_ns),
            human(r.p99_ns),
            r.per_entry_ns,
            r.per_byte_ns
        ));
    }
    s
}
