//! # The `hybrid-compaction` command line
//!
//! A thin layer over [`crate::wire`]: argument parsing (clap), reading input with a size cap,
//! splitting it into cases, printing outputs, and the exit-code contract:
//!
//! | code | meaning |
//! |---|---|
//! | 0 | every case answered (a typed error is an answer) / every vector passed |
//! | 1 | a vector failed, generation was refused, or an implementation failed internally |
//! | 2 | unreadable or schema-invalid input (one line on stderr naming file, position or JSON path) |
//!
//! Nothing is written to stdout unless the whole command succeeded, so stdout never holds a
//! partial JSON document. Panics inside an implementation are caught and reported as failures.

use std::cell::Cell;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::corpus::{self, corpus_files, load_file, render_table, run_file, VectorFile};
use crate::ops::Case;
use crate::ops::{run_case_caught, RunError};
use crate::schema;
use crate::wire::input::EstimatorInput;
use crate::wire::strict;
use crate::{Engine, Model};
use hybrid_compaction_model::seam::Implementation;

mod bench;
mod check;
mod generate;
mod judge;
mod stream;
mod workload;

/// Default input size cap: 64 MiB.
pub(crate) const DEFAULT_MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

const RUN_EXAMPLE: &str = r#"Example:
  echo '{"op":"evaluate","policy":{"hardLimit":100,"triggerMargin":10,
        "recentMessageRetentionCount":1,"maximumCompactionAttempts":1,
        "preservationLabel":"l","preservationVersion":1,"estimator":{"kind":"utf8"}},
        "entries":[{"id":"u1","kind":"ConversationalMessage","text":"hello"}]}' \
    | hybrid-compaction run --model -

Input: one case, a JSON array of cases, or JSONL (one case per line); output has the same shape."#;

const VERIFY_EXAMPLE: &str = r#"Example:
  echo '{"policy":{"hardLimit":100,"triggerMargin":10,"recentMessageRetentionCount":1,
        "maximumCompactionAttempts":1,"preservationLabel":"l","preservationVersion":1,
        "estimator":{"kind":"utf8"}},
        "original":[{"id":"s","kind":"SystemInstruction","text":"be brief"},
                    {"id":"u1","kind":"ConversationalMessage","text":"hi"}],
        "proposed":["u1"]}' | hybrid-compaction verify -

The input is a `verify` case without (or with) "op": "verify"."#;

const VECTORS_EXAMPLE: &str = r#"Examples:
  hybrid-compaction vectors                 # the shipped corpus, model and engine
  hybrid-compaction vectors vectors/ --implementation model
  hybrid-compaction vectors vectors/verify.json             # one file
  hybrid-compaction vectors generate --topic generated        # print one topic to stdout
  hybrid-compaction vectors generate --topic verify --out vectors/   # regenerate one topic, pin new tcIds"#;

const SCHEMA_EXAMPLE: &str = r#"Examples:
  hybrid-compaction schema            # {"case": ..., "output": ..., "vectorFile": ...}
  hybrid-compaction schema case
  hybrid-compaction schema trace      # every line of a trace (docs/TRACE.md)"#;

/// The `hybrid-compaction` command line.
#[derive(Debug, Parser)]
#[command(
    name = "hybrid-compaction",
    version,
    about = "Conformance oracle for hybrid context compaction (ADR-0007): run cases, verify proposals, run the vector corpus",
    after_help = "Exit codes: 0 answered / all vectors passed; 1 vectors failed or internal failure; 2 unreadable or invalid input."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one case, a JSON array of cases, or JSONL, and print the output(s).
    #[command(after_help = RUN_EXAMPLE)]
    Run(RunArgs),
    /// Run a `verify` case (shorthand: "op" may be omitted).
    #[command(after_help = VERIFY_EXAMPLE)]
    Verify(InputArgs),
    /// Run the vector corpus against the model and the engine, or generate it.
    #[command(after_help = VECTORS_EXAMPLE, args_conflicts_with_subcommands = true)]
    Vectors(VectorsArgs),
    /// Print the JSON Schemas of cases, outputs and vector files.
    #[command(after_help = SCHEMA_EXAMPLE)]
    Schema(SchemaArgs),
    /// Check a recorded trace (JSON Lines, docs/TRACE.md) against the SPEC.
    #[command(after_help = check::CHECK_EXAMPLE)]
    Check(check::CheckArgs),
    /// Print a seeded agent conversation as a transcript (the benches' and peers' workload).
    #[command(after_help = workload::WORKLOAD_EXAMPLE)]
    Workload(workload::WorkloadArgs),
    /// Measure what estimation, verification and assembly cost on a transcript or wire case.
    #[command(after_help = bench::BENCH_EXAMPLE)]
    Bench(bench::BenchArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Which {
    Model,
    Engine,
    Both,
}

#[derive(Debug, Args)]
struct InputArgs {
    /// Input file, or `-` for stdin.
    input: String,
    /// Use the executable specification (the model).
    #[arg(long, conflicts_with = "engine")]
    model: bool,
    /// Use the optimized engine (default).
    #[arg(long)]
    engine: bool,
    /// Refuse inputs larger than this many bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_INPUT_BYTES, value_name = "BYTES")]
    max_input_bytes: u64,
    /// Pretty-print the output JSON.
    #[arg(long, conflicts_with = "stream")]
    pretty: bool,
    /// JSON Lines, answered line by line in constant memory: a bad line is answered by an
    /// `invalid` line and the rest continues (`--max-input-bytes` then limits each line).
    #[arg(long)]
    stream: bool,
    /// Measure with this estimator instead of each case policy's: `utf8`, `utf8-text`,
    /// `tokens:o200k_base`, `tokens:cl100k_base`, optionally prefixed by `memo:` (SPEC EST-6, EST-7).
    #[arg(long, value_name = "ESTIMATOR", value_parser = parse_estimator)]
    estimator: Option<EstimatorInput>,
}

fn parse_estimator(text: &str) -> Result<EstimatorInput, Expected> {
    EstimatorInput::from_shorthand(text).ok_or_else(|| {
        Expected::new("utf8, utf8-text, tokens:o200k_base or tokens:cl100k_base, optionally prefixed by memo:")
    })
}

/// What a command-line value should have been (clap prints it after the option and the value
/// it refuses): `expected ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expected(String);

impl Expected {
    /// `expected {what}`.
    pub(crate) fn new(what: impl Into<String>) -> Expected {
        Expected(what.into())
    }
}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "expected {}", self.0)
    }
}

impl std::error::Error for Expected {}

#[derive(Debug, Args)]
struct RunArgs {
    #[command(flatten)]
    input: InputArgs,
}

#[derive(Debug, Args)]
struct VectorsArgs {
    #[command(subcommand)]
    action: Option<VectorsAction>,
    /// Corpus directory or one vector file (default: the corpus embedded in this binary).
    dir: Option<PathBuf>,
    /// Which implementation(s) to run.
    #[arg(long, value_enum, default_value_t = Which::Both)]
    implementation: Which,
    /// Maximum number of failing tcIds listed per implementation.
    #[arg(long, default_value_t = 50)]
    max_failures: usize,
}

#[derive(Debug, Subcommand)]
enum VectorsAction {
    /// Write the corpus from the topic sources (vectors/source/) and the seeded generator,
    /// expectations from the model, published tcIds pinned (vectors/pins/).
    #[command(after_help = generate::GENERATE_EXAMPLE)]
    Generate(generate::GenerateArgs),
    /// Judge another implementation's outputs (JSON Lines `{"tcId": N, "output": {...}}`)
    /// against the corpus' expectations, with the same strict comparison as `vectors`.
    #[command(after_help = JUDGE_EXAMPLE)]
    Check(judge::JudgeArgs),
}

const JUDGE_EXAMPLE: &str = r#"Example:
  my-implementation --run-corpus > outputs.jsonl    # {"tcId": 2001, "output": {...}} per line
  hybrid-compaction vectors check outputs.jsonl     # exit 0: every vector matched"#;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SchemaWhich {
    Case,
    Output,
    VectorFile,
    Trace,
}

#[derive(Debug, Args)]
struct SchemaArgs {
    /// Which schema (default: case, output and vector file).
    which: Option<SchemaWhich>,
}

/// A failure of the command: exit code plus one line for stderr.
#[derive(Debug)]
struct Failure {
    code: u8,
    message: String,
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: message.into(),
    }
}

fn failed(message: impl Into<String>) -> Failure {
    Failure {
        code: 1,
        message: message.into(),
    }
}

thread_local! {
    static QUIET_PANICS: Cell<bool> = const { Cell::new(false) };
}

/// Installs a panic hook that keeps caught implementation panics off stderr (they are reported
/// as failures instead) and prints any other as one `internal error` line.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        if QUIET_PANICS.with(Cell::get) {
            return;
        }
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            (*s).to_owned()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "unknown".to_owned()
        };
        let at = info
            .location()
            .map(|l| format!(" ({}:{})", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("hybrid-compaction: internal error{at}: {msg}");
    }));
}

fn quietly<T>(f: impl FnOnce() -> T) -> T {
    QUIET_PANICS.with(|q| q.set(true));
    let r = f();
    QUIET_PANICS.with(|q| q.set(false));
    r
}

/// The first line of clap's usage error without its `error: ` prefix, plus a pointer to help.
fn usage_error_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    // The first paragraph, joined: it may name the missing arguments on indented lines.
    let first: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let first = first.join(" ");
    let first = first.strip_prefix("error: ").unwrap_or(&first);
    let first = if first.is_empty() {
        "invalid command line"
    } else {
        first
    };
    format!("{first} (see --help)")
}

/// The published vector files a build of the command carries, `(file name, text)` sorted by
/// name: what `vectors` and `vectors check` run when no corpus is named. The binary passes
/// `hybrid_compaction_vectors::embedded!()`, which compiles the files into the binary's own small
/// crate (`src/main.rs`), so a regenerated vector file does not rebuild this library.
pub type Embedded = &'static [(&'static str, &'static str)];

/// Entry point used by `main.rs`: the process arguments and the embedded corpus, the process exit
/// code.
pub fn main(embedded: Embedded) -> ExitCode {
    ExitCode::from(main_with_args(std::env::args_os(), embedded))
}

/// The command run on `args` (the first one is the program name) with the embedded corpus
/// `embedded` (`&[]` for none), returning the exit code of the table above. For hosts that embed
/// the command, such as the Python package's `hybrid-compaction` console script; it prints to
/// this process's stdout and stderr.
pub fn main_with_args<I, T>(args: I, embedded: Embedded) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    install_panic_hook();
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => {
            // Help and version go to stdout, exit 0.
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            // A usage error is one line on stderr, like every other refusal (exit 2).
            eprintln!("hybrid-compaction: error: {}", usage_error_line(&e));
            return 2;
        }
    };
    let mut stdout = Vec::new();
    let result = match cli.command {
        Command::Run(a) => cmd_run(&a.input, false, &mut stdout),
        Command::Verify(a) => cmd_run(&a, true, &mut stdout),
        Command::Vectors(a) => match a.action {
            Some(VectorsAction::Generate(g)) => generate::cmd_generate(&g, &mut stdout),
            Some(VectorsAction::Check(j)) => judge::cmd_judge(&j, embedded, &mut stdout),
            None => cmd_vectors(&a, embedded, &mut stdout),
        },
        Command::Schema(a) => cmd_schema(&a, &mut stdout),
        Command::Check(a) => check::cmd_check(&a, &mut stdout),
        Command::Workload(a) => workload::cmd_workload(&a, &mut stdout),
        Command::Bench(a) => bench::cmd_bench(&a, &mut stdout),
    };
    // Vectors failures still print their table; invalid input prints nothing on stdout.
    let print_stdout = match &result {
        Ok(()) => true,
        Err(f) => f.code == 1,
    };
    if print_stdout {
        let mut out = std::io::stdout().lock();
        if out.write_all(&stdout).and_then(|()| out.flush()).is_err() {
            return 1;
        }
    }
    match result {
        Ok(()) => 0,
        Err(f) => {
            eprintln!("hybrid-compaction: error: {}", f.message);
            f.code
        }
    }
}

fn implementation(model: bool, engine: bool) -> &'static dyn Implementation {
    match (model, engine) {
        (_, true) => &Engine,
        (true, _) => &Model,
        _ => default_implementation(),
    }
}

/// The implementation `run` uses without `--model`/`--engine`: the engine, which passes the
/// whole corpus (`vectors`) exactly like the model.
fn default_implementation() -> &'static dyn Implementation {
    &Engine
}

/// Reads a file or stdin, refusing more than `cap` bytes and invalid UTF-8.
fn read_input(src: &str, cap: u64) -> Result<(String, String), Failure> {
    let name = if src == "-" {
        "<stdin>".to_owned()
    } else {
        src.to_owned()
    };
    let mut bytes = Vec::new();
    let too_big = || {
        invalid(format!(
            "{name}: input exceeds the limit of {cap} bytes (raise it with --max-input-bytes)"
        ))
    };
    if src == "-" {
        std::io::stdin()
            .lock()
            .take(cap.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| invalid(format!("{name}: cannot read: {e}")))?;
    } else {
        let f =
            std::fs::File::open(src).map_err(|e| invalid(format!("{name}: cannot open: {e}")))?;
        if f.metadata().map(|m| m.len() > cap).unwrap_or(false) {
            return Err(too_big());
        }
        f.take(cap.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| invalid(format!("{name}: cannot read: {e}")))?;
    }
    if bytes.len() as u64 > cap {
        return Err(too_big());
    }
    match String::from_utf8(bytes) {
        Ok(s) => Ok((name, s)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let (line, col) = line_col(&e.as_bytes()[..at]);
            Err(invalid(format!(
                "{name}:{line}:{col}: invalid UTF-8 at byte offset {at}"
            )))
        }
    }
}

fn line_col(prefix: &[u8]) -> (usize, usize) {
    let line = prefix.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = prefix.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, col)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Single,
    Array,
    Lines,
}

/// Splits input text into cases, reading each straight from the text (one pass, see
/// [`crate::wire::strict`]). With `verify_shorthand`, objects without `op` are `verify` cases and
/// any other op is refused.
fn parse_cases(
    name: &str,
    text: &str,
    verify_shorthand: bool,
) -> Result<(Shape, Vec<Case>), Failure> {
    if text.trim().is_empty() {
        return Err(invalid(format!(
            "{name}: empty input: expected a case object, a JSON array of cases, or JSONL"
        )));
    }
    if text.trim_start().starts_with('[') {
        let cases = if verify_shorthand {
            strict::read::<Vec<VerifyOnly>>(text).map(|v| v.into_iter().map(|c| c.0).collect())
        } else {
            strict::read::<Vec<Case>>(text)
        };
        return match cases {
            Ok(cases) => Ok((Shape::Array, cases)),
            Err(e) => {
                let (index, e) = e.split_index();
                Err(read_failure(name, index, &e))
            }
        };
    }
    let mut cases = Vec::new();
    let items: Box<dyn Iterator<Item = _>> = if verify_shorthand {
        Box::new(strict::read_many::<VerifyOnly>(text).map(|r| r.map(|(c, _)| c.0)))
    } else {
        Box::new(strict::read_many::<Case>(text).map(|r| r.map(|(c, _)| c)))
    };
    for item in items {
        match item {
            Ok(case) => cases.push(case),
            Err(e) => {
                let index = (!cases.is_empty()).then_some(cases.len());
                return Err(read_failure(name, index, &e));
            }
        }
    }
    let shape = if cases.len() == 1 {
        Shape::Single
    } else {
        Shape::Lines
    };
    Ok((shape, cases))
}

/// The one-line report of an unreadable case: `NAME:LINE:COL: case #N invalid case: PATH: WHAT`.
fn read_failure(name: &str, index: Option<usize>, e: &strict::ReadError) -> Failure {
    // A `--stream` line is labelled `NAME:LINE` already: add only the column there.
    let labelled_line = name
        .rsplit_once(':')
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let at = match e.position {
        Some((1, c)) if labelled_line => format!(":{c}"),
        Some((l, c)) => format!(":{l}:{c}"),
        None => String::new(),
    };
    if e.syntax {
        return invalid(format!("{name}{at}: invalid JSON: {}", e.message));
    }
    let label = index.map(|i| format!(" case #{i}")).unwrap_or_default();
    invalid(format!(
        "{name}{at}:{label} invalid case: {}: {}",
        e.path, e.message
    ))
}

/// A `verify` case whose `op` may be omitted (the `verify` command's shorthand).
struct VerifyOnly(Case);

impl<'de> serde::Deserialize<'de> for VerifyOnly {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        strict::without_tag(d, "op", "verify").map(|c| VerifyOnly(Case::Verify(c)))
    }
}

fn cmd_run(a: &InputArgs, verify_shorthand: bool, out: &mut Vec<u8>) -> Result<(), Failure> {
    if a.stream {
        return stream::cmd_stream(a, verify_shorthand);
    }
    let imp = implementation(a.model, a.engine);
    let (name, text) = read_input(&a.input, a.max_input_bytes)?;
    let (shape, mut cases) = parse_cases(&name, &text, verify_shorthand)?;
    if let Some(e) = &a.estimator {
        for p in cases.iter_mut().filter_map(Case::policy_mut) {
            p.estimator = Some(e.clone());
        }
    }
    let mut outputs = Vec::with_capacity(cases.len());
    for (i, case) in cases.iter().enumerate() {
        let label = match shape {
            Shape::Single => String::new(),
            _ => format!(" case #{i}"),
        };
        match quietly(|| run_case_caught(case, imp)) {
            Ok(o) => outputs.push(o),
            Err(RunError::Wire(w)) => {
                return Err(invalid(format!("{name}:{label} invalid case: {w}")))
            }
            Err(e @ RunError::Panic { .. }) => return Err(failed(format!("{name}:{label} {e}"))),
        }
    }
    fn render<T: serde::Serialize + ?Sized>(v: &T, pretty: bool) -> String {
        if pretty {
            serde_json::to_string_pretty(v)
        } else {
            serde_json::to_string(v)
        }
        .unwrap_or_default()
    }
    match shape {
        Shape::Single => {
            out.extend(render(&outputs[0], a.pretty).as_bytes());
            out.push(b'\n');
        }
        Shape::Array => {
            out.extend(render(&outputs, a.pretty).as_bytes());
            out.push(b'\n');
        }
        Shape::Lines => {
            for o in &outputs {
                out.extend(serde_json::to_string(o).unwrap_or_default().as_bytes());
                out.push(b'\n');
            }
        }
    }
    Ok(())
}

/// The corpus to run: the files of `arg` (a directory or one vector file), else the corpus
/// embedded in the binary. Returns the files and a name for messages.
fn load_corpus(
    arg: Option<&Path>,
    embedded: Embedded,
) -> Result<(Vec<VectorFile>, String), Failure> {
    let Some(dir) = arg else {
        if embedded.is_empty() {
            return Err(invalid(
                "this build of the command embeds no corpus: name a vector directory or file",
            ));
        }
        let files = corpus::embedded_corpus(embedded).map_err(|e| invalid(e.to_string()))?;
        return Ok((files, "the embedded corpus".to_owned()));
    };
    // A single vector file is a corpus of one.
    let paths = if dir.is_file() {
        vec![dir.to_path_buf()]
    } else {
        corpus_files(dir).map_err(|e| invalid(e.to_string()))?
    };
    if paths.is_empty() {
        return Err(invalid(format!(
            "{}: no *.json vector files",
            dir.display()
        )));
    }
    let mut loaded = Vec::new();
    for f in &paths {
        loaded.push(load_file(f).map_err(|e| invalid(e.to_string()))?);
    }
    Ok((loaded, dir.display().to_string()))
}

fn cmd_vectors(a: &VectorsArgs, embedded: Embedded, out: &mut Vec<u8>) -> Result<(), Failure> {
    let (loaded, name) = load_corpus(a.dir.as_deref(), embedded)?;
    if let Err(problems) = corpus::check_corpus(&loaded) {
        return Err(invalid(format!(
            "{name}: malformed corpus: {}",
            problems.join("; ")
        )));
    }
    let imps: Vec<&dyn Implementation> = match a.implementation {
        Which::Model => vec![&Model],
        Which::Engine => vec![&Engine],
        Which::Both => vec![&Model, &Engine],
    };
    let started = Instant::now();
    let reports: Vec<_> = quietly(|| loaded.iter().map(|f| run_file(f, &imps)).collect());
    let elapsed = started.elapsed();
    out.extend(render_table(&reports, &imps).as_bytes());
    let mut failures = 0usize;
    for imp in &imps {
        let mine: Vec<_> = reports
            .iter()
            .flat_map(|r| r.failures.iter().map(move |f| (&r.topic, f)))
            .filter(|(_, f)| f.0 == imp.name())
            .collect();
        failures += mine.len();
        if mine.is_empty() {
            continue;
        }
        out.extend(format!("\nfailing vectors ({}): {}\n", imp.name(), mine.len()).as_bytes());
        for (topic, (_, tc, diff)) in mine.iter().take(a.max_failures) {
            out.extend(format!("  tcId {tc} [{topic}]: {diff}\n").as_bytes());
        }
        if mine.len() > a.max_failures {
            out.extend(format!("  ... and {} more\n", mine.len() - a.max_failures).as_bytes());
        }
    }
    let total: usize = reports.iter().map(|r| r.total).sum();
    out.extend(
        format!(
            "\n{} vectors x {} implementation(s) in {:.2?}: {}\n",
            total,
            imps.len(),
            elapsed,
            if failures == 0 {
                "all passed".to_owned()
            } else {
                format!("{failures} failed")
            }
        )
        .as_bytes(),
    );
    if failures > 0 {
        return Err(failed(format!("{failures} vector run(s) failed")));
    }
    Ok(())
}

fn cmd_schema(a: &SchemaArgs, out: &mut Vec<u8>) -> Result<(), Failure> {
    let v = match a.which {
        None => schema::all(),
        Some(SchemaWhich::Case) => schema::case_schema(),
        Some(SchemaWhich::Output) => schema::output_schema(),
        Some(SchemaWhich::VectorFile) => schema::vector_file_schema(),
        Some(SchemaWhich::Trace) => crate::schema::trace_schema(),
    };
    out.extend(
        serde_json::to_string_pretty(&v)
            .unwrap_or_default()
            .as_bytes(),
    );
    out.push(b'\n');
    Ok(())
}
