//! # `hybrid_compaction._native`: the oracle inside a Python process
//!
//! The native half of the Python package `hybrid_compaction` (see `python/README.md` and
//! `docs/PYTHON.md`). It is deliberately thin: JSON text in, JSON text out, over the public API of
//! the conformance oracle (`hybrid_compaction_oracle::wire`), so a case answered here is the
//! answer of `hybrid-compaction run` byte for byte. A case dict is converted to JSON text
//! here ([`pyvalue`], which keeps the wire types exact: `True` stays a JSON `true`, never the
//! integer `1`; `1` and `1.0` stay distinct) and read by the oracle's strict reader, the CLI's,
//! so a refusal carries the CLI's JSON path and words; answers go back as JSON text.
//!
//! ```text
//!  dict --pyvalue (Python-only refusals)--> JSON text --wire::strict::read--> wire::Case
//!       --run_case_caught--> Output --> ("ok", output JSON) | ("invalid", JSON path, message)
//!                                       | ("internal", implementation, message) --json.loads--> dict
//! ```
//!
//! Every function returns a plain value and never raises from Rust: the Python layer turns the
//! status into its own exception classes (`InvalidCaseError`, `InternalError`), which keeps the
//! exception hierarchy in one language and typed in one stub. A panic inside an implementation
//! is caught by the oracle (`run_case_caught`) and reported as `internal`.
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
mod pyvalue;
mod record;
mod reuse;
mod transcript;
mod witness;

use hybrid_compaction::estimators::TokenEncoding;
use hybrid_compaction::transcript::TranscriptFormat;
use hybrid_compaction_oracle::corpus::file::{self, PolicyInput};
use hybrid_compaction_oracle::trace;
use hybrid_compaction_oracle::wire::strict;
use hybrid_compaction_oracle::workload::{self, Ending};
use hybrid_compaction_oracle::{run_case_caught, Engine, Implementation, Model};
use hybrid_compaction_oracle::{schema, Case, RunError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use std::io::BufReader;
use std::path::PathBuf;

/// The extension's allocator (module docs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The outcome of [`run_json`]: `(status, a, b)`.
///
/// * `("ok", output_json, "")`: the case was answered (a typed error is an answer);
/// * `("invalid", json_path, message)`: the case is not valid wire input (the CLI's exit 2);
/// * `("internal", implementation, message)`: an implementation failed (the CLI's exit 1).
type Answer = (&'static str, String, String);

fn implementation(name: &str) -> Option<&'static dyn Implementation> {
    match name {
        "model" => Some(&Model),
        "engine" => Some(&Engine),
        _ => None,
    }
}

/// Runs one case (JSON text) on `implementation` (`"model"` or `"engine"`).
fn answer(case: &str, implementation_name: &str) -> Answer {
    let Some(imp) = implementation(implementation_name) else {
        return unknown_implementation(implementation_name);
    };
    let case = match strict::read::<Case>(case) {
        Ok(c) => c,
        Err(e) => return ("invalid", e.path, e.message),
    };
    match run_case_caught(&case, imp) {
        Ok(out) => match serde_json::to_string(&out) {
            Ok(text) => ("ok", text, String::new()),
            Err(e) => ("internal", imp.name().to_owned(), e.to_string()),
        },
        Err(RunError::Wire(e)) => ("invalid", e.path, e.message),
        Err(RunError::Panic {
            implementation,
            message,
        }) => ("internal", implementation.to_owned(), message),
    }
}

fn unknown_implementation(name: &str) -> Answer {
    (
        "invalid",
        "implementation".to_owned(),
        format!("expected \"model\" or \"engine\", got {name:?}"),
    )
}

/// Runs one case given as a Python value (a dict); see [`Answer`]. The value is converted
/// with the GIL held, then the GIL is released while the case is read and run.
#[pyfunction]
fn run_case(py: Python<'_>, case: &Bound<'_, PyAny>, implementation: String) -> Answer {
    match pyvalue::to_json(case) {
        Ok(text) => py.detach(move || answer(&text, &implementation)),
        Err(r) => ("invalid", r.path, r.message),
    }
}

/// The trace records (a Python list of dicts) as JSON Lines text, or where they are not JSON.
#[pyfunction]
fn trace_lines(records: &Bound<'_, PyAny>) -> Answer {
    let Ok(list) = records.cast::<pyo3::types::PyList>() else {
        return (
            "invalid",
            "$".to_owned(),
            "expected a list of trace records".to_owned(),
        );
    };
    let mut text = String::new();
    for (i, record) in list.iter().enumerate() {
        match pyvalue::to_json(&record) {
            Ok(line) => {
                text.push_str(&line);
                text.push('\n');
            }
            Err(r) => return ("invalid", format!("$[{i}]{}", &r.path[1..]), r.message),
        }
    }
    ("ok", text, String::new())
}

/// Checks a trace (JSON Lines text, `docs/TRACE.md`) by replaying every recorded call through
/// `implementation` (SPEC TRC-1 .. TRC-11). `("ok", report JSON, "")`, `("invalid", "line N",
/// message)` for an unreadable trace, or `("invalid", "implementation", message)`. Releases the
/// GIL while it runs. The trace is read from Python's own UTF-8 encoding of it (`PyBackedStr`,
/// one copy: the stable ABI of Python 3.9, which the wheel targets, cannot lend the text), not
/// copied again into a `String`: a trace may be tens of megabytes.
#[pyfunction]
fn check_json(py: Python<'_>, trace: PyBackedStr, implementation: String) -> Answer {
    py.detach(move || {
        let Some(imp) = self::implementation(&implementation) else {
            return unknown_implementation(&implementation);
        };
        report(
            trace::check(trace.as_bytes(), imp, &trace::Options::default()),
            imp,
        )
    })
}

/// Checks the trace in the file at `path` as [`check_json`] checks text, read in blocks as the
/// `hybrid-compaction check` command reads it: the file is never held whole, nor decoded into a
/// Python `str`, so memory stays constant in the trace's length. A file that cannot be opened
/// is `("invalid", "file", message)` (the Python layer opens it first, to raise Python's own
/// `OSError`).
#[pyfunction]
fn check_file(py: Python<'_>, path: PathBuf, implementation: String) -> Answer {
    py.detach(move || {
        let Some(imp) = self::implementation(&implementation) else {
            return unknown_implementation(&implementation);
        };
        let file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(e) => {
                let message = format!("{}: cannot open: {e}", path.display());
                return ("invalid", "file".to_owned(), message);
            }
        };
        let reader = BufReader::with_capacity(trace::READ_BUFFER, file);
        report(trace::check(reader, imp, &trace::Options::default()), imp)
    })
}

/// A check's answer: the report as JSON text, or the unreadable line.
fn report(checked: Result<trace::Report, trace::Unreadable>, imp: &dyn Implementation) -> Answer {
    match checked {
        Ok(report) => match serde_json::to_string(&report) {
            Ok(text) => ("ok", text, String::new()),
            Err(e) => ("internal", imp.name().to_owned(), e.to_string()),
        },
        Err(e) => ("invalid", format!("line {}", e.line), e.message),
    }
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
        Some("trace") => trace::format::schema(),
        Some(_) => return None,
    };
    serde_json::to_string(&v).ok()
}

/// Whether a case given as a Python value inherits the group policy `policy` (a vector file's
/// harness rule, `docs/WIRE.md`): by the oracle's own rule ([`file::effective_case`]: the
/// case's operation takes a policy and the case has none), so that `vectors.py` holds no
/// second copy of it. `("ok", "inherit" | "keep", "")`, or `("invalid", json_path, message)`
/// when the case or the policy (its paths under `$.policy`, where it would go) is not valid
/// wire input.
#[pyfunction]
fn inherits_policy(py: Python<'_>, case: &Bound<'_, PyAny>, policy: &Bound<'_, PyAny>) -> Answer {
    let (case, policy) = match (pyvalue::to_json(case), pyvalue::to_json(policy)) {
        (Ok(c), Ok(p)) => (c, p),
        (Err(r), _) => return ("invalid", r.path, r.message),
        (_, Err(r)) => return ("invalid", format!("$.policy{}", &r.path[1..]), r.message),
    };
    py.detach(move || {
        let case = match strict::read::<Case>(&case) {
            Ok(c) => c,
            Err(e) => return ("invalid", e.path, e.message),
        };
        let policy = match strict::read::<PolicyInput>(&policy) {
            Ok(p) => p,
            Err(e) => return ("invalid", format!("$.policy{}", &e.path[1..]), e.message),
        };
        let filled = file::effective_case(&case, Some(&policy)) != case;
        let verdict = if filled { "inherit" } else { "keep" };
        ("ok", verdict.to_owned(), String::new())
    })
}

/// The cases of the vector file at `path` with their group's policy applied by the oracle's
/// loader ([`file::load_file`], [`file::TestVector::effective_case`]), in file order, as one
/// JSON array: `("ok", array JSON, "")`, or `("invalid", "file", message)` for a file the
/// oracle cannot load. What `vectors.load_file` must agree with.
#[pyfunction]
fn vector_file_cases(py: Python<'_>, path: PathBuf) -> Answer {
    py.detach(move || {
        let loaded = match file::load_file(&path) {
            Ok(f) => f,
            Err(e) => return ("invalid", "file".to_owned(), e.to_string()),
        };
        let cases: Vec<Case> = loaded
            .test_groups
            .iter()
            .flat_map(|g| g.tests.iter().map(|t| t.effective_case(g.policy.as_ref())))
            .collect();
        match serde_json::to_string(&cases) {
            Ok(text) => ("ok", text, String::new()),
            Err(e) => ("invalid", "file".to_owned(), e.to_string()),
        }
    })
}

/// The published vector files the console script runs when no corpus is named, compiled into
/// this crate (as into the binary).
static CORPUS: &[(&str, &str)] = hybrid_compaction_vectors::embedded!();

/// The `hybrid-compaction` command on `argv` (program name first); returns its exit code.
/// Reads this process's stdin and writes its stdout/stderr, like the binary.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(move || hybrid_compaction_oracle::cli::main_with_args(argv, CORPUS))
}

/// A seeded agent conversation (`hybrid-compaction workload`) as transcript JSON text:
/// `("ok", transcript JSON, "")` or `("invalid", argument name, message)`.
#[pyfunction]
#[pyo3(signature = (messages, seed, format, ending=None))]
fn workload_json(messages: usize, seed: u64, format: String, ending: Option<String>) -> Answer {
    let Some(format) = TranscriptFormat::from_name(&format) else {
        return (
            "invalid",
            "format".to_owned(),
            "expected \"openai-chat\", \"anthropic-messages\" or \"langchain\"".to_owned(),
        );
    };
    let ending = match ending.as_deref().map(Ending::from_name) {
        None => None,
        Some(Some(e)) => Some(e),
        Some(None) => {
            return (
                "invalid",
                "ending".to_owned(),
                "expected user-question, tool-results, pending-call or final-answer".to_owned(),
            )
        }
    };
    match workload::generate(messages, seed, ending) {
        Ok(c) => ("ok", c.transcript(format).to_string(), String::new()),
        Err(e) => ("invalid", "messages".to_owned(), e.to_string()),
    }
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
