//! `hc.compact`: the library's per-call path (`hybrid_compaction::node`, SPEC NODE-2 .. NODE-5)
//! on a caller's transcript, with a Python callable as the upstream reducer (SPEC BRG-1).
//!
//! ```text
//! objects (Python) --reuse::Cache (only messages not provably unchanged converted)--> Transcript
//!     (or, for a refusal and for hc.compact: transcript (Python) --transcript::read--> Transcript)
//! Transcript --its entries--> CompactionNode
//!     node.call_adapted: the transcript's entries (CLS-1, its ids and overrides), static snapshot (SNAP-3),
//!                bridge(PyReducer) -> engine assembler (ASM-7) -> diagnostics -> events
//!     PyReducer.reduce: GIL taken, request as the caller's own objects, callable, answer read
//!                       back with the same converter (TRN), GIL released
//!     Capture client: "dispatch" hands nothing on (send_entries: no message copied); the trace
//!                     observer keeps the call record
//! record -> final entries as sources: ("o", position, count) | ("r", attempt, index, count) | ("n", JSON)
//! ```
//!
//! A [`Session`] is one `hc.Compactor`: its policy's estimator is wrapped in a memo (SPEC EST-7)
//! once, and its [`reuse::Cache`] keeps each message's conversion and entries, so a repeat call
//! on history + k messages converts and estimates the k new ones only, and its run
//! scope holds one run for all its calls (SPEC LSE-6), as an agent's outer run does. The GIL is
//! released while the node runs and taken only to call the reducer.
//!
//! **Request objects.** The reducer gets the caller's own objects: on the first attempt the
//! request is the whole history in order (the static provider never evicts, SPEC ASM-8, and a
//! version never changes, so no restart happens), and on a later one it is the previous
//! proposal, which the bridge builds one entry per returned message in order (SPEC BRG-2,
//! BRG-3): the objects the reducer returned then. Both are checked message by message; a
//! request that is neither is an internal error, never a guess.

use std::error::Error;
use std::fmt;
use std::sync::Arc;

use hybrid_compaction::estimators::MemoEstimator;
use hybrid_compaction::lease::{Run, RunScope};
use hybrid_compaction::model::cancel::CancellationToken;
use hybrid_compaction::model::entry::Entry;
use hybrid_compaction::model::message::Message;
use hybrid_compaction::model::policy::Policy;
use hybrid_compaction::model::reducers::{UpstreamError, UpstreamReducer};
use hybrid_compaction::node::{
    select, CallTrace, ChatClient, CompactionEvent, NodeError, NodeOptions, NodeSelection,
    ProgressSink, ProviderError, Reporter, ReporterIdentity,
};
use hybrid_compaction::transcript::{FinalSource, Transcript, TranscriptFormat};
use hybrid_compaction_oracle::CaseError;
use hybrid_compaction_oracle::Engine;
use hybrid_compaction_trace::shapes::{assembly_output, diagnostics_output};
use hybrid_compaction_trace::write::{event, Collector};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use serde_json::{json, Value as Json};

use crate::errors::{self, Failure, Field};
use crate::record::TraceRecorder;
use crate::witness::Reads;

use crate::{pyvalue, reuse, transcript};

/// The dispatch step of the node (SPEC NODE-2 step 4): nothing leaves the process; the bounded
/// list is read from the call's record.
struct Capture;

impl ChatClient for Capture {
    type Reply = ();
    fn send(&mut self, _: &[Message], _: &CancellationToken) -> Result<(), ProviderError> {
        Ok(())
    }
    /// Nothing is sent, so no message is copied (the default would copy the bounded context).
    fn send_entries(&mut self, _: &[Entry], _: &CancellationToken) -> Result<(), ProviderError> {
        Ok(())
    }
}

/// Events are read from the call's record; the sink itself keeps nothing.
struct NoSink;

impl ProgressSink for NoSink {
    fn report(&self, _: CompactionEvent) {}
}

/// What went wrong in the reducer (SPEC BRG-1: either way the assembly fails with
/// `ReducerFailed`): the upstream reducer's own error, the source of its [`UpstreamError`], which
/// the node's error keeps; [`raise`] finds it there again and raises it as the `SpecError`'s
/// cause. Its text is what `reducer failed: ` is followed by.
#[derive(Debug)]
enum Problem {
    /// The callable raised this exception.
    Raised(PyErr),
    /// Its answer is not messages of the format: `(kind, path, reason)`.
    Answer(transcript::Refusal),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Raised(e) => write!(f, "the reducer raised {e}"),
            Problem::Answer((_, path, reason)) => {
                write!(f, "the reducer's answer at {path}: {reason}")
            }
        }
    }
}

impl Error for Problem {}

impl Problem {
    /// The exception the `SpecError` is raised from: the reducer's own, or the answer's
    /// `TranscriptError`.
    fn cause(&self, py: Python<'_>) -> PyErr {
        match self {
            Problem::Raised(e) => e.clone_ref(py),
            Problem::Answer((kind, path, reason)) => {
                errors::transcript(kind.clone(), path.clone(), reason.clone())
            }
        }
    }
}

/// The Python callable as the node's upstream reducer (SPEC BRG-1).
struct PyReducer<'t> {
    callable: Option<Py<PyAny>>,
    /// The history's transcript: the reducer's answer is read as it reads its own messages
    /// (SPEC TRN-14: a returned message of the history keeps its paired call ids).
    transcript: &'t Transcript,
    /// Writes the reducer's answer as the converter's JSON (the package's `_serialize`).
    serialize: Py<PyAny>,
    /// The top-level system (Anthropic's, the Responses instructions): not the reducer's, put back before its answer.
    system: Option<Message>,
    /// The request of the next attempt, as messages and as the caller's objects.
    expected: (Expected, Py<PyList>),
    /// The objects each attempt returned, in order.
    returned: Vec<Py<PyList>>,
    /// Per attempt: how many of its objects each message of its answer was read from (TRN-23).
    items: Vec<Vec<usize>>,
}

/// The reducer failed: `problem` travels to the node's error as the source (see [`Problem`]).
fn fail(problem: Problem) -> UpstreamError {
    UpstreamError::new(problem)
}

impl PyReducer<'_> {
    /// The caller's objects for `request` (see the module docs).
    fn request(&self, py: Python<'_>, request: &[Message]) -> Option<Py<PyList>> {
        let body = match &self.system {
            Some(s) if request.first() == Some(s) => &request[1..],
            _ => request,
        };
        self.expected
            .0
            .is(body)
            .then(|| self.expected.1.clone_ref(py))
    }
}

/// The request the reducer is expected to get next (see the module docs).
enum Expected {
    /// The history: the baseline's entries (the system excluded).
    History(Vec<Entry>),
    /// The previous attempt's proposal.
    Proposal(Vec<Message>),
}

impl Expected {
    fn is(&self, request: &[Message]) -> bool {
        match self {
            Expected::History(entries) => {
                request.len() == entries.len()
                    && request.iter().zip(entries).all(|(m, e)| m == e.message())
            }
            Expected::Proposal(messages) => request == messages.as_slice(),
        }
    }
}

impl UpstreamReducer for PyReducer<'_> {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        Python::attach(|py| {
            let Some(callable) = self.callable.as_ref().map(|c| c.clone_ref(py)) else {
                // No reducer: it keeps everything (the assembly then falls back, SPEC ASM-7).
                return Ok(Some(messages.to_vec()));
            };
            let Some(request) = self.request(py, messages) else {
                return Err(fail(Problem::Answer((
                    "InvalidOperation".into(),
                    String::new(),
                    "internal: the request is neither the history nor the last proposal".into(),
                ))));
            };
            let answer = match callable.call1(py, (request,)) {
                Ok(a) => a,
                Err(e) => return Err(fail(Problem::Raised(e))),
            };
            if answer.is_none(py) {
                return Ok(None); // SPEC BRG-1: a null answer is a contract error
            }
            let listed = match self
                .serialize
                .call1(py, (answer.bind(py), self.transcript.format().name()))
            {
                Ok(l) => l,
                Err(e) => return Err(fail(Problem::Raised(e))),
            };
            let (objects, json) = match listed.extract::<(Py<PyList>, Py<PyAny>)>(py) {
                Ok(pair) => pair,
                Err(e) => return Err(fail(Problem::Raised(e))),
            };
            let text = match pyvalue::to_json_exact(json.bind(py)) {
                Ok(t) => t,
                Err(r) => {
                    let path = transcript::relative(&r.path);
                    return Err(fail(Problem::Answer((
                        "InvalidArgument".into(),
                        path,
                        r.message,
                    ))));
                }
            };
            let values: Vec<Json> = serde_json::from_str(&text).unwrap_or_default();
            let (mut parsed, items) = match self.transcript.read_answer(&values) {
                Ok(a) => (a.messages, a.items),
                Err(e) => return Err(fail(Problem::Answer(transcript::refusal(&e)))),
            };
            self.items.push(items);
            self.expected = (Expected::Proposal(parsed.clone()), objects.clone_ref(py));
            self.returned.push(objects);
            if let Some(s) = &self.system {
                parsed.insert(0, s.clone());
            }
            Ok(Some(parsed))
        })
    }
}

/// One `hc.Compactor`'s state (see the module docs).
#[pyclass(module = "hybrid_compaction._native")]
pub struct Session {
    policy: Policy,
    memo: Arc<MemoEstimator>,
    scope: RunScope,
    workflow: String,
    /// The last call's record, until [`Session::take_record`] writes it.
    last: Option<CallTrace>,
    /// What the previous call converted ([`reuse`]).
    cache: reuse::Cache,
}

/// The answer of a successful [`Session::compact`]: `(JSON payload, the reducer's objects per
/// attempt)`.
type Compacted = (String, Vec<Py<PyList>>);

/// Why a wire policy dict is not a policy (see [`read_policy`]).
#[derive(Debug)]
pub enum PolicyRefusal {
    /// Not wire input: the JSON path (from `$`) and what was expected there.
    Invalid {
        /// The JSON path of the offending value.
        path: String,
        /// What was expected there.
        reason: String,
    },
    /// The SPEC refuses it (POL-2): a typed error.
    Refused {
        /// Its ERR-1 kind.
        kind: &'static str,
        /// The policy member it names, if any.
        field: Option<String>,
        /// Its message.
        message: String,
    },
}

impl PolicyRefusal {
    /// The exception: `InvalidCaseError` with the path under `policy` (`$.hardLimit` as
    /// `policy.hardLimit`), or `SpecError` naming the field.
    pub fn raise(self, py: Python<'_>) -> PyErr {
        match self {
            PolicyRefusal::Invalid { path, reason } => {
                Failure::invalid(path.replacen('$', "policy", 1), reason).into()
            }
            PolicyRefusal::Refused {
                kind,
                field,
                message,
            } => {
                let field = field.as_deref().filter(|f| !f.is_empty());
                errors::spec(py, kind, Field::Named(field), &message)
            }
        }
    }
}

/// A wire policy dict as the library's policy, or why not.
pub fn read_policy(policy: &Bound<'_, PyAny>) -> Result<Policy, PolicyRefusal> {
    let invalid = |path, reason| PolicyRefusal::Invalid { path, reason };
    let text = pyvalue::to_json(policy).map_err(|r| invalid(r.path, r.message))?;
    hybrid_compaction_oracle::read_policy(&text, &Engine).map_err(|e| match e {
        CaseError::Wire(e) => invalid(e.path, e.message),
        CaseError::Answer(e) => PolicyRefusal::Refused {
            kind: e.kind.0.name(),
            field: e.field,
            message: e.message,
        },
    })
}

/// A session for `policy` (a wire policy dict) whose calls share one run (`persistent`) or are
/// each a run of their own; `InvalidCaseError` or `SpecError` for a policy it is not
/// ([`PolicyRefusal::raise`]).
#[pyfunction]
pub fn new_session(
    py: Python<'_>,
    policy: &Bound<'_, PyAny>,
    persistent: bool,
    workflow: String,
) -> PyResult<Session> {
    let built = read_policy(policy).map_err(|r| r.raise(py))?;
    let memo = Arc::new(MemoEstimator::new(Arc::clone(built.estimator_arc())));
    let scope = if persistent {
        RunScope::with_run(Run::new())
    } else {
        RunScope::new()
    };
    Ok(Session {
        policy: built.with_estimator(memo.clone()),
        memo,
        scope,
        workflow,
        last: None,
        cache: reuse::Cache::default(),
    })
}

#[pymethods]
impl Session {
    /// Compacts `transcript` (a transcript object whose messages the package has written as
    /// fields) with `reducer`, `objects` being the caller's messages (for Anthropic without the
    /// system), `serialize` the package's writer of a reducer's answer. The call's record is
    /// kept for [`Session::take_record`] (so no trace writer is borrowed while the node runs).
    /// See [`Compacted`]; raises `TranscriptError` for a refused transcript (no call is made),
    /// and what [`raise`] raises for a failed call.
    fn compact(
        &mut self,
        py: Python<'_>,
        transcript: &Bound<'_, PyAny>,
        objects: Py<PyList>,
        reducer: Option<Py<PyAny>>,
        serialize: Py<PyAny>,
    ) -> PyResult<Compacted> {
        let t = transcript::read(transcript)
            .map_err(|(kind, path, reason)| errors::transcript(kind, path, reason))?;
        let system = t.has_top_level_system();
        self.run(py, &t, system, objects, reducer, serialize)
    }

    /// [`Session::compact`] on the caller's `objects` themselves (`format` a wire name,
    /// `system` Anthropic's, `overrides` the transcript member or `None`), converting only the
    /// messages not provably unchanged since the previous call ([`reuse`]); `writer` and `names`
    /// are the package's LangChain writer and the attributes it reads, `token` the ABC cache
    /// token. `None`: a refusal or an exception, which the caller raises by converting the whole
    /// transcript with [`Session::compact`]; a failed call raises as that one does.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (format, objects, system, overrides, writer, names, pydantic_getattr, token, reducer, serialize))]
    fn compact_objects(
        &mut self,
        py: Python<'_>,
        format: &str,
        objects: Py<PyList>,
        system: Option<Bound<'_, PyAny>>,
        overrides: Option<Bound<'_, PyAny>>,
        writer: Bound<'_, PyAny>,
        names: Vec<Bound<'_, PyString>>,
        pydantic_getattr: Option<Bound<'_, PyAny>>,
        token: i64,
        reducer: Option<Py<PyAny>>,
        serialize: Py<PyAny>,
    ) -> PyResult<Option<Compacted>> {
        let Some(format) = TranscriptFormat::from_name(format) else {
            return Ok(None);
        };
        let Ok(reads) = Reads::new(py, names, pydantic_getattr) else {
            return Ok(None);
        };
        let inputs = reuse::Inputs {
            format,
            objects: objects.bind(py),
            system: system.as_ref(),
            overrides: overrides.as_ref(),
            writer: &writer,
            reads,
            token,
        };
        let Some(t) = self.cache.transcript(&inputs) else {
            return Ok(None);
        };
        self.run(py, &t, system.is_some(), objects, reducer, serialize)
            .map(Some)
    }

    /// The trace line of the last call for `recorder` (`docs/TRACE.md`), once.
    fn take_record(&mut self, mut recorder: PyRefMut<'_, TraceRecorder>) -> Option<String> {
        self.last.take().map(|c| recorder.line(&c))
    }

    /// The memo's counters: `(hits, misses, cached)` (SPEC EST-7).
    fn memo_stats(&self) -> (u64, u64, usize) {
        let s = self.memo.stats();
        (s.hits, s.misses, s.cached)
    }

    /// The `runEnd` line of this session's run for `recorder` (its state there is dropped), if
    /// the recorder named the run.
    fn end_run(&self, mut recorder: PyRefMut<'_, TraceRecorder>) -> Option<String> {
        self.scope.current().and_then(|run| recorder.end_run(run))
    }
}

impl Session {
    /// One call of the node on `t`'s entries (`system`: its first is Anthropic's system, not one
    /// of `objects`): its answer, or its exception ([`raise`]). The call's record is kept either
    /// way.
    fn run(
        &mut self,
        py: Python<'_>,
        t: &Transcript,
        system: bool,
        objects: Py<PyList>,
        reducer: Option<Py<PyAny>>,
        serialize: Py<PyAny>,
    ) -> PyResult<Compacted> {
        let entries = t.entries().to_vec();
        let offset = usize::from(system);
        let system = system.then(|| entries[0].message().clone());
        let mut reducer = PyReducer {
            callable: reducer,
            transcript: t,
            serialize,
            system,
            expected: (Expected::History(entries[offset..].to_vec()), objects),
            returned: Vec::new(),
            items: Vec::new(),
        };
        let collector = Arc::new(Collector::default());
        let reporter = Reporter::new(Arc::new(NoSink), ReporterIdentity::workflow(&self.workflow));
        let options = NodeOptions {
            policy: self.policy.clone(),
            reducer: &mut reducer,
        };
        let Ok(NodeSelection::Installed(node)) =
            select(true, Some(options), Capture, Some(reporter))
        else {
            // Unreachable (SPEC NODE-1: the switch with options installs a node); never a panic.
            let message = "no compaction node was installed";
            return Err(errors::spec(py, "InvalidOperation", Field::Absent, message));
        };
        let mut node = node.with_trace_observer(collector.clone());
        let scope = &mut self.scope;
        let outcome = py.detach(|| {
            node.call_adapted(scope, entries, &CancellationToken::new())
                .map(|_| ())
        });
        drop(node);
        let record = collector.take().pop();
        let answered = match &outcome {
            Ok(()) => Ok((
                answer(t, record.as_ref(), offset, &reducer.items).to_string(),
                std::mem::take(&mut reducer.returned),
            )),
            Err(e) => Err(raise(py, e)),
        };
        self.last = record;
        answered
    }
}

/// The exception of a failed call: `CompactionTerminated` for a termination (SPEC NODE-4), else
/// `SpecError` with the error's kind and message, raised from the reducer's own exception (or
/// its answer's `TranscriptError`) when the reducer failed: the [`Problem`] the node's error
/// keeps as a source.
fn raise(py: Python<'_>, e: &NodeError) -> PyErr {
    if let NodeError::Terminated(c) = e {
        return errors::terminated(c.outcome.name(), c.final_estimated_size, c.hard_limit);
    }
    let err = errors::spec(py, e.kind().name(), Field::Absent, &e.to_string());
    let problem = std::iter::successors(Some(e as &(dyn Error + 'static)), |&e| e.source())
        .find_map(|e| e.downcast_ref::<Problem>());
    if let Some(p) = problem {
        err.set_cause(py, Some(p.cause(py)));
    }
    err
}

/// The JSON payload of a successful call (see [`Session::compact`]).
fn answer(
    t: &Transcript,
    record: Option<&CallTrace>,
    offset: usize,
    answers: &[Vec<usize>],
) -> Json {
    let result = record.and_then(|r| r.result.as_ref());
    let finals = result
        .and_then(|r| r.final_entries.as_deref())
        .unwrap_or(&[]);
    json!({
        "assembly": result.map(assembly_output),
        "diagnostics": record.and_then(|r| r.diagnostics.as_deref()).map(diagnostics_output),
        "events": record
            .and_then(|r| r.events.as_ref())
            .map(|evs| evs.iter().map(event).collect::<Vec<_>>()),
        "final": sources(t, record, finals, offset, answers),
    })
}

/// Where the final entries come from, in order (SPEC TRN-6; the library's
/// [`Transcript::final_sources`]): `["o", position, count]` (`count` of the caller's own
/// objects from `position` on, the top-level system first), `["r", attempt, index, count]`
/// (`count` of the objects a reducer attempt returned from `index` on, 0-based all: a message,
/// or a turn of several, TRN-23), or `["n", message JSON]` (neither: rendered in the format).
fn sources(
    t: &Transcript,
    record: Option<&CallTrace>,
    finals: &[Entry],
    offset: usize,
    answers: &[Vec<usize>],
) -> Vec<Json> {
    t.final_sources(record, finals, offset, answers)
        .into_iter()
        .map(FinalSource::into_json)
        .collect()
}
