//! # `hybrid_compaction._native`: the oracle inside a Python process
//!
//! The native half of the Python package `hybrid_compaction` (see `python/README.md` and
//! `docs/PYTHON.md`). It is deliberately thin: JSON text in, JSON text out, over the public API of
//! the conformance oracle (`hybrid_compaction_oracle`), so a case answered here is the
//! answer of `hybrid-compaction run` byte for byte. A case dict is converted to JSON text
//! here ([`pyvalue`], which keeps the wire types exact: `True` stays a JSON `true`, never the
//! integer `1`; `1` and `1.0` stay distinct) and read by the oracle's strict reader, the CLI's,
//! so a refusal carries the CLI's JSON path and words; answers go back as JSON text.
//!
//! ```text
//!  dict --pyvalue (Python-only refusals)--> JSON text --read_case (the strict reader)--> Case
//!       --run_case_caught--> Output --> output JSON --json.loads--> dict
//!                            | raised: InvalidCaseError(JSON path, reason)
//!                            | raised: InternalError(implementation, reason)
//! ```
//!
//! A function answers its value or raises the package's own exception itself ([`errors`]:
//! `InvalidCaseError`, `InternalError`, `SpecError`, `TranscriptError`,
//! `UnsupportedContentError`, `CompactionTerminated`), as pydantic-core raises its
//! `ValidationError`: the classes are the Python package's (`hybrid_compaction/_errors.py`),
//! imported once, so the hierarchy is written in one language and no Python code maps a status
//! to an exception or parses an error's text. A panic inside an implementation is caught by the
//! oracle (`run_case_caught`) and raised as `InternalError`.
//!
//! Not a member of the root workspace (its own `[workspace]` table, like `fuzz/`): PyO3 needs a
//! Python interpreter at build time, and `cargo test --workspace` must not.
//!
//! The extension's own allocations use mimalloc, as the `hybrid-compaction` command does: the
//! trace checker makes and drops many small values per call, where the system allocator is
//! markedly slower (`docs/PERFORMANCE.md`, "Trace checking from Python"). Python's objects keep
//! Python's allocator; only memory Rust allocates, and Rust frees, goes through it. mimalloc is
//! built with local-dynamic thread-local storage here: a library the interpreter loads with
//! `dlopen` cannot use the initial-exec model the command links with (the import fails with
//! "cannot allocate memory in static TLS block").

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod compact;
mod errors;
mod pyvalue;
mod record;
mod reuse;
mod transcript;
mod witness;

use hybrid_compaction::estimators::TokenEncoding;
use hybrid_compaction::transcript::TranscriptFormat;
use hybrid_compaction_oracle::trace;
use hybrid_compaction_oracle::workload::{self, Ending, WorkloadError, MAX_MESSAGES, MIN_MESSAGES};
use hybrid_compaction_oracle::{read_case, vectors};
use hybrid_compaction_oracle::{run_case_caught, Engine, Implementation, Model};
use hybrid_compaction_oracle::{schema, Case, RunError};
use hybrid_compaction_trace::shapes::PolicyInput;
use hybrid_compaction_trace::strict;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use std::io::BufReader;
use std::path::PathBuf;

use crate::errors::Failure;

/// The extension's allocator (module docs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The answer of a case or a check: its output as JSON text (a typed error of the SPEC is an
/// answer), or why there is none ([`Failure::Invalid`]: not valid wire input, the CLI's exit 2;
/// [`Failure::Internal`]: an implementation failed, the CLI's exit 1).
type Answer = Result<String, Failure>;

fn implementation(name: &str) -> Option<&'static dyn Implementation> {
    match name {
        "model" => Some(&Model),
        "engine" => Some(&Engine),
        _ => None,
    }
}

/// Runs one case (JSON text) on `implementation` (`"model"` or `"engine"`).
fn answer(case: &str, implementation_name: &str) -> Answer {
    let imp = implementation(implementation_name)
        .ok_or_else(|| unknown_implementation(implementation_name))?;
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

fn unknown_implementation(name: &str) -> Failure {
    Failure::invalid(
        "implementation",
        format!("expected \"model\" or \"engine\", got {name:?}"),
    )
}

/// Runs one case given as a Python value (a dict): the output as JSON text, or
/// `InvalidCaseError` / `InternalError` raised (see [`Answer`]). The value is converted with the
/// GIL held, then the GIL is released while the case is read and run.
#[pyfunction]
fn run_case(py: Python<'_>, case: &Bound<'_, PyAny>, implementation: String) -> PyResult<String> {
    let text = pyvalue::to_json(case).map_err(|r| Failure::invalid(r.path, r.message))?;
    Ok(py.detach(move || answer(&text, &implementation))?)
}

/// The trace records (a Python list of dicts) as JSON Lines text; `InvalidCaseError` names the
/// record's value JSON cannot hold (`$[i]...`).
#[pyfunction]
fn trace_lines(records: &Bound<'_, PyAny>) -> PyResult<String> {
    let Ok(list) = records.cast::<pyo3::types::PyList>() else {
        return Err(Failure::invalid("$", "expected a list of trace records").into());
    };
    let mut text = String::new();
    for (i, record) in list.iter().enumerate() {
        let line = pyvalue::to_json(&record)
            .map_err(|r| Failure::invalid(format!("$[{i}]{}", &r.path[1..]), r.message))?;
        text.push_str(&line);
        text.push('\n');
    }
    Ok(text)
}

/// Checks a trace (JSON Lines text, `docs/TRACE.md`) by replaying every recorded call through
/// `implementation` (SPEC TRC-1 .. TRC-11): the report as JSON text, or `InvalidCaseError` with
/// path `"line N"` for an unreadable trace (`"implementation"` for an unknown one). Releases the
/// GIL while it runs. The trace is read from Python's own UTF-8 encoding of it (`PyBackedStr`,
/// one copy: the stable ABI of Python 3.9, which the wheel targets, cannot lend the text), not
/// copied again into a `String`: a trace may be tens of megabytes.
#[pyfunction]
fn check_json(py: Python<'_>, trace: PyBackedStr, implementation: String) -> PyResult<String> {
    let checked = py.detach(move || {
        let imp = self::implementation(&implementation)
            .ok_or_else(|| unknown_implementation(&implementation))?;
        report(
            trace::check(trace.as_bytes(), imp, &trace::Options::default()),
            imp,
        )
    });
    Ok(checked?)
}

/// Checks the trace in the file at `path` as [`check_json`] checks text, read in blocks as the
/// `hybrid-compaction check` command reads it: the file is never held whole, nor decoded into a
/// Python `str`, so memory stays constant in the trace's length. A file that cannot be opened
/// is `InvalidCaseError` with path `"file"` (the Python layer opens it first, to raise Python's
/// own `OSError`).
#[pyfunction]
fn check_file(py: Python<'_>, path: PathBuf, implementation: String) -> PyResult<String> {
    let checked = py.detach(move || {
        let imp = self::implementation(&implementation)
            .ok_or_else(|| unknown_implementation(&implementation))?;
        let file = std::fs::File::open(&path).map_err(|e| {
            Failure::invalid("file", format!("{}: cannot open: {e}", path.display()))
        })?;
        let reader = BufReader::with_capacity(trace::READ_BUFFER, file);
        report(trace::check(reader, imp, &trace::Options::default()), imp)
    });
    Ok(checked?)
}

/// A check's answer: the report as JSON text, or the unreadable line.
fn report(checked: Result<trace::Report, trace::Unreadable>, imp: &dyn Implementation) -> Answer {
    let report = checked.map_err(|e| Failure::invalid(format!("line {}", e.line), e.message))?;
    serde_json::to_string(&report).map_err(|e| Failure::internal(imp.name(), e.to_string()))
}

/// The JSON Schema(s) as JSON text: `which` is `None` (case, output and vector file), `"case"`,
/// `"output"`, `"vector-file"` or `"trace"` (every line of a trace, `docs/TRACE.md`); anything
/// else gives `None`.
#[pyfunction]
#[pyo3(signature = (which=None))]
fn schema_json(which: Option<String>) -> Option<String> {
    let v = match which.as_deref() {
        None => schema::all(),
        Some("case") => schema::case_schema(),
        Some("output") => schema::output_schema(),
        Some("vector-file") => schema::vector_file_schema(),
        Some("trace") => hybrid_compaction_oracle::schema::trace_schema(),
        Some(_) => return None,
    };
    serde_json::to_string(&v).ok()
}

/// Whether a case given as a Python value inherits the group policy `policy` (a vector file's
/// harness rule, `docs/WIRE.md`): by the oracle's own rule ([`vectors::effective_case`]: the
/// case's operation takes a policy and the case has none), so that `vectors.py` holds no
/// second copy of it. Raises `InvalidCaseError(path, reason)` when the case or the policy (its
/// paths under `$.policy`, where it would go) is not valid wire input.
#[pyfunction]
fn inherits_policy(
    py: Python<'_>,
    case: &Bound<'_, PyAny>,
    policy: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let under_policy = |path: &str| format!("$.policy{}", path.strip_prefix('$').unwrap_or(path));
    let case = pyvalue::to_json(case).map_err(|r| Failure::invalid(r.path, r.message))?;
    let policy =
        pyvalue::to_json(policy).map_err(|r| Failure::invalid(under_policy(&r.path), r.message))?;
    let inherits = py.detach(move || {
        let case = read_case(&case).map_err(|e| Failure::invalid(e.path, e.message))?;
        let policy = strict::read::<PolicyInput>(&policy)
            .map_err(|e| Failure::invalid(under_policy(&e.path), e.message))?;
        Ok::<_, Failure>(vectors::effective_case(&case, Some(&policy)) != case)
    })?;
    Ok(inherits)
}

/// The cases of the vector file at `path` with their group's policy applied by the oracle's
/// loader ([`vectors::load_file`], [`vectors::TestVector::effective_case`]), in file order, as
/// one JSON array: what `vectors.load_file` must agree with. Raises
/// `InvalidCaseError("file", reason)` for a file the oracle cannot load.
#[pyfunction]
fn vector_file_cases(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let text = py.detach(move || {
        let loaded =
            vectors::load_file(&path).map_err(|e| Failure::invalid("file", e.to_string()))?;
        let cases: Vec<Case> = loaded
            .test_groups
            .iter()
            .flat_map(|g| g.tests.iter().map(|t| t.effective_case(g.policy.as_ref())))
            .collect();
        serde_json::to_string(&cases).map_err(|e| Failure::invalid("file", e.to_string()))
    })?;
    Ok(text)
}

/// The published vector files the console script runs when no corpus is named, compiled into
/// this crate (as into the binary).
static CORPUS: &[(&str, &str)] = hybrid_compaction_vectors::embedded!();

/// The `hybrid-compaction` command on `argv` (program name first); returns its exit code.
/// Reads this process's stdin and writes its stdout/stderr, like the binary.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(move || hybrid_compaction_oracle::main_with_args(argv, CORPUS))
}

/// A seeded agent conversation (`hybrid-compaction workload`) as transcript JSON text;
/// `InvalidCaseError` names the argument (`messages`, `format`, `ending`) that is wrong.
#[pyfunction]
#[pyo3(signature = (messages, seed, format, ending=None))]
fn workload_json(
    messages: usize,
    seed: u64,
    format: String,
    ending: Option<String>,
) -> PyResult<String> {
    let Some(format) = TranscriptFormat::from_name(&format) else {
        return Err(
            Failure::invalid("format", format!("expected {}", TranscriptFormat::EXPECTED)).into(),
        );
    };
    let ending = match ending.as_deref().map(Ending::from_name) {
        None => None,
        Some(Some(e)) => Some(e),
        Some(None) => {
            return Err(Failure::invalid(
                "ending",
                "expected user-question, tool-results, pending-call or final-answer",
            )
            .into())
        }
    };
    // The reason from the error's own field: its text names the argument too.
    let c = workload::generate(messages, seed, ending).map_err(|WorkloadError(n)| {
        Failure::invalid(
            "messages",
            format!("expected a whole number from {MIN_MESSAGES} to {MAX_MESSAGES}, got {n}"),
        )
    })?;
    Ok(c.transcript(format).to_string())
}

/// The number of BPE tokens of each text (`encoding` `o200k_base` or `cl100k_base`, the ranks
/// of the token estimator, SPEC EST-6), or `None` for an unknown encoding. A plain token
/// counter for hosts and the peer harness; releases the GIL while it counts.
#[pyfunction]
fn count_tokens(py: Python<'_>, texts: Vec<String>, encoding: String) -> Option<Vec<usize>> {
    let encoding = TokenEncoding::from_name(&encoding)?;
    Some(py.detach(move || texts.iter().map(|t| encoding.count(t)).collect()))
}

/// The native module `hybrid_compaction._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_case, m)?)?;
    m.add_function(wrap_pyfunction!(trace_lines, m)?)?;
    m.add_function(wrap_pyfunction!(check_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_file, m)?)?;
    m.add_function(wrap_pyfunction!(schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(workload_json, m)?)?;
    m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(inherits_policy, m)?)?;
    m.add_function(wrap_pyfunction!(vector_file_cases, m)?)?;
    m.add_function(wrap_pyfunction!(transcript::transcript_entries, m)?)?;
    m.add_function(wrap_pyfunction!(compact::new_session, m)?)?;
    m.add_class::<compact::Session>()?;
    m.add_class::<record::TraceRecorder>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
