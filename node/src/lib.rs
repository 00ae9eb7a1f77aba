//! # `hybrid-compaction` for Node: the oracle inside a Node process
//!
//! The native half of the npm package `hybrid-compaction` (see `docs/NODE.md`), built with
//! napi-rs. Deliberately thin, as the Python binding (`python/src/lib.rs`): JSON text in, JSON
//! text out, over the public API of the conformance oracle (`hybrid_compaction_oracle`) and the
//! library's converter, so a case answered here is the answer of `hybrid-compaction run` byte
//! for byte. Every function answers one JSON envelope ([`answer`]): the answer, or why there is
//! none (invalid input with its JSON path, an implementation's failure, a converter's refusal
//! with its kind and path); the JavaScript layer (`lib/`) turns a failure into the package's
//! `Error` subclass.
//!
//! ```text
//!  JS value --lib/json.cjs (JS-only refusals, by path)--> JSON text --read_case (the CLI's
//!  strict reader)--> Case --run_case_caught--> Output --> {"ok": output} --> JSON.parse
//!                                         | {"invalid": {path, reason}}   -> InvalidCaseError
//!                                         | {"internal": {...}}           -> InternalError
//! ```
//!
//! Unsafe code: napi-rs's macros generate the `unsafe` calls into N-API that register each
//! function; this crate writes none itself (it cannot `forbid(unsafe_code)`, which would reject
//! the generated code too). It is the only crate of the project with generated unsafe code.
//!
//! Not a member of the root workspace (its own `[workspace]` table, `Cargo.toml` says why).
//!
//! The addon's own allocations use mimalloc, as the Python extension's and the command's do: a
//! call converts and adapts many small values, where the system allocator is markedly slower
//! (`docs/PERFORMANCE.md`, "Node versus Python"). JavaScript's values keep V8's heap; only
//! memory Rust allocates, and Rust frees, goes through it. Local-dynamic thread-local storage,
//! as for any library loaded with `dlopen`.

#![deny(missing_docs)]

mod answer;
mod compact;
mod record;
mod reuse;
mod transcript;

use std::io::BufReader;

use hybrid_compaction::estimators::TokenEncoding;
use hybrid_compaction::transcript::TranscriptFormat;
use hybrid_compaction_oracle::workload::{self, Ending, WorkloadError, MAX_MESSAGES, MIN_MESSAGES};
use hybrid_compaction_oracle::{read_case, run_case_caught, schema, trace, vectors};
use hybrid_compaction_oracle::{Engine, Implementation, Model, RunError};
use napi_derive::napi;

use crate::answer::{envelope, Answer, Failure};

/// The addon's allocator (module docs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn implementation(name: &str) -> Result<&'static dyn Implementation, Failure> {
    match name {
        "model" => Ok(&Model),
        "engine" => Ok(&Engine),
        _ => Err(Failure::invalid(
            "implementation",
            format!("expected \"model\" or \"engine\", got {name:?}"),
        )),
    }
}

/// Runs one case (JSON text) on `implementation` (`"model"` or `"engine"`): the envelope of its
/// output (a typed error of the SPEC is an answer), of its invalid input, or of a failure.
#[napi]
pub fn run_case(case: String, implementation: String) -> String {
    envelope(answer(&case, &implementation))
}

fn answer(case: &str, implementation_name: &str) -> Answer {
    let imp = implementation(implementation_name)?;
    let case = read_case(case).map_err(|e| Failure::invalid(e.path, e.message))?;
    match run_case_caught(&case, imp) {
        Ok(out) => {
            serde_json::to_string(&out).map_err(|e| Failure::internal(imp.name(), e.to_string()))
        }
        Err(RunError::Wire(e)) => Err(Failure::invalid(e.path, e.message)),
        Err(RunError::Panic {
            implementation,
            message,
        }) => Err(Failure::internal(implementation, message)),
    }
}

/// Checks a trace (JSON Lines text, `docs/TRACE.md`) by replaying every call through
/// `implementation` (SPEC TRC-1 .. TRC-11): the envelope of the report, or of the unreadable
/// line (path `"line N"`).
#[napi]
pub fn check_text(trace: String, implementation: String) -> String {
    envelope(self::implementation(&implementation).and_then(|imp| {
        report(
            trace::check(trace.as_bytes(), imp, &trace::Options::default()),
            imp,
        )
    }))
}

/// Checks the trace in the file at `path` as [`check_text`], read in blocks as the command
/// reads it (never whole); a file that cannot be opened is invalid input at path `"file"`.
#[napi]
pub fn check_file(path: String, implementation: String) -> String {
    envelope(self::implementation(&implementation).and_then(|imp| {
        let file = std::fs::File::open(&path)
            .map_err(|e| Failure::invalid("file", format!("{path}: cannot open: {e}")))?;
        let reader = BufReader::with_capacity(trace::READ_BUFFER, file);
        report(trace::check(reader, imp, &trace::Options::default()), imp)
    }))
}

fn report(checked: Result<trace::Report, trace::Unreadable>, imp: &dyn Implementation) -> Answer {
    let report = checked.map_err(|e| Failure::invalid(format!("line {}", e.line), e.message))?;
    serde_json::to_string(&report).map_err(|e| Failure::internal(imp.name(), e.to_string()))
}

/// The JSON Schema(s) as JSON text: `which` absent (case, output and vector file), `"case"`,
/// `"output"`, `"vector-file"` or `"trace"`; `null` for anything else.
#[napi]
pub fn schema_json(which: Option<String>) -> Option<String> {
    let v = match which.as_deref() {
        None => schema::all(),
        Some("case") => schema::case_schema(),
        Some("output") => schema::output_schema(),
        Some("vector-file") => schema::vector_file_schema(),
        Some("trace") => schema::trace_schema(),
        Some(_) => return None,
    };
    serde_json::to_string(&v).ok()
}

/// The number of BPE tokens of each text (`encoding` `o200k_base` or `cl100k_base`, the ranks of
/// the token estimator, SPEC EST-6), or `null` for an unknown encoding. A count beyond 2^32 - 1
/// (a text of more than 4 GB, which no JavaScript string holds) saturates.
#[napi]
pub fn count_tokens(texts: Vec<String>, encoding: String) -> Option<Vec<u32>> {
    let encoding = TokenEncoding::from_name(&encoding)?;
    Some(
        texts
            .iter()
            .map(|t| u32::try_from(encoding.count(t)).unwrap_or(u32::MAX))
            .collect(),
    )
}

/// The entries of a transcript object given as JSON text (SPEC TRN): the envelope of the wire
/// entries, or of the converter's refusal (kind, path, reason).
#[napi]
pub fn transcript_entries(transcript: String) -> String {
    envelope(transcript::entries(&transcript))
}

/// The cases of the vector file at `path` with their group's policy applied by the oracle's
/// loader, in file order, as the envelope of a JSON array of `{"tcId", "case", "expected"}`:
/// `case` as JSON text (so `1.0` stays a float when it is run), `expected` the output.
#[napi]
pub fn vector_file_cases(path: String) -> String {
    envelope(vector_cases(&path))
}

fn vector_cases(path: &str) -> Answer {
    let loaded = vectors::load_file(std::path::Path::new(path))
        .map_err(|e| Failure::invalid("file", e.to_string()))?;
    let mut cases = Vec::new();
    for g in &loaded.test_groups {
        for t in &g.tests {
            cases.push(serde_json::json!({
                "tcId": t.tc_id,
                "case": serde_json::to_string(&t.effective_case(g.policy.as_ref()))
                    .map_err(|e| Failure::invalid("file", e.to_string()))?,
                "expected": t.expected,
            }));
        }
    }
    serde_json::to_string(&cases).map_err(|e| Failure::invalid("file", e.to_string()))
}

/// The published vector files the command runs when no corpus is named, compiled in.
static CORPUS: &[(&str, &str)] = hybrid_compaction_vectors::embedded!();

/// The `hybrid-compaction` command on `argv` (program name first); returns its exit code. Reads
/// this process's stdin and writes its stdout/stderr, as the binary does.
#[napi]
pub fn main(argv: Vec<String>) -> u8 {
    hybrid_compaction_oracle::main_with_args(argv, CORPUS)
}

/// A seeded agent conversation (`hybrid-compaction workload`) as the envelope of its transcript
/// JSON; invalid input names the argument (`messages`, `format`, `ending`).
#[napi]
pub fn workload_json(messages: u32, seed: i64, format: String, ending: Option<String>) -> String {
    envelope(workload_answer(messages, seed, &format, ending.as_deref()))
}

fn workload_answer(messages: u32, seed: i64, format: &str, ending: Option<&str>) -> Answer {
    let format = TranscriptFormat::from_name(format).ok_or_else(|| {
        Failure::invalid("format", format!("expected {}", TranscriptFormat::EXPECTED))
    })?;
    let seed = u64::try_from(seed).map_err(|_| {
        Failure::invalid(
            "seed",
            format!("expected a whole number from 0, got {seed}"),
        )
    })?;
    let ending = match ending.map(Ending::from_name) {
        None => None,
        Some(Some(e)) => Some(e),
        Some(None) => {
            return Err(Failure::invalid(
                "ending",
                "expected user-question, tool-results, pending-call or final-answer",
            ))
        }
    };
    let messages = usize::try_from(messages).unwrap_or(usize::MAX);
    let c = workload::generate(messages, seed, ending).map_err(|WorkloadError(n)| {
        Failure::invalid(
            "messages",
            format!("expected a whole number from {MIN_MESSAGES} to {MAX_MESSAGES}, got {n}"),
        )
    })?;
    Ok(c.transcript(format).to_string())
}

/// The package's version (`Cargo.toml`'s, which `package.json` repeats: a test checks).
#[napi]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
