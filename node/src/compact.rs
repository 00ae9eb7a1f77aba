//! `compact` and `Compactor`: the library's per-call path (`hybrid_compaction::node`, SPEC
//! NODE-2 .. NODE-5) on a caller's transcript, with a JavaScript function, sync or async, as the
//! upstream reducer (SPEC BRG-1), as the Python binding's `python/src/compact.rs` does it.
//!
//! **Threads.** A JavaScript function can only be called on the JavaScript thread, and an async
//! one answers after the event loop has run. So the node runs on a worker thread of its own and
//! the JavaScript thread steps through the call ([`Call::next`]): it blocks while the node
//! works, and gets back either the call's answer or a request for the reducer, which it calls
//! (awaiting a Promise on its own event loop, nothing blocked), and hands the answer back
//! ([`Call::reply`]). The reducer's request and answer never cross as objects: the request is
//! named (`"history"`, or the previous proposal) and the JavaScript layer hands the reducer the
//! caller's own objects (identity kept); the answer crosses as JSON text, read back with the
//! history's converter (SPEC TRN-14). The final messages come back as sources, as in Python:
//! `["o", position, count]` of the caller's own messages, `["r", attempt, index]` of a reducer's
//! answer, `["n", message JSON]` for a message the node made (rendered in the format, TRN-6).
//!
//! ```text
//!  JS thread:  start ---> next (blocks) ----------> reducer(request) [await] -> reply -> next ...
//!  worker:        parse, node.call_adapted ... JsReducer.reduce: send "reduce", wait reply ...
//!                                             ... answer / error envelope -> next returns it
//! ```
//!
//! A [`Session`] is one `Compactor`: its policy's estimator wrapped in a memo (SPEC EST-7) once,
//! and a run scope holding one run for all its calls (SPEC LSE-6). Its calls are made one at a
//! time (the JavaScript layer queues them): a worker holds the session while its call runs (the
//! memo's counters are read beside it, not through it). A call's transcript is either JSON text
//! converted whole or the messages' kept conversions, reassembled (`crate::reuse`).

use std::error::Error;
use std::fmt;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

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
use hybrid_compaction::transcript::{FinalSource, Transcript};
use hybrid_compaction_oracle::{CaseError, Engine};
use hybrid_compaction_trace::shapes::{assembly_output, diagnostics_output};
use hybrid_compaction_trace::write::{event, Collector};
use napi::bindgen_prelude::{ObjectFinalize, Uint32Array};
use napi::Env;
use napi_derive::napi;
use serde_json::{json, Value as Json};

use crate::answer::{envelope, Failure};
use crate::record::TraceRecorder;
use crate::reuse::{Input, Store};
use crate::transcript;
use hybrid_compaction_trace::format::Record;

/// The dispatch step of the node (SPEC NODE-2 step 4): nothing leaves the process.
struct Capture;

impl ChatClient for Capture {
    type Reply = ();
    fn send(&mut self, _: &[Message], _: &CancellationToken) -> Result<(), ProviderError> {
        Ok(())
    }
    fn send_entries(&mut self, _: &[Entry], _: &CancellationToken) -> Result<(), ProviderError> {
        Ok(())
    }
}

/// Events are read from the call's record; the sink keeps nothing.
struct NoSink;

impl ProgressSink for NoSink {
    fn report(&self, _: CompactionEvent) {}
}

/// What the reducer did wrong (SPEC BRG-1: the assembly fails with `ReducerFailed`).
#[derive(Debug)]
struct Problem(String);

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for Problem {}

fn fail(why: impl Into<String>) -> UpstreamError {
    UpstreamError::new(Problem(why.into()))
}

/// The JavaScript thread's answer to a reducer request (see [`Call::reply`]).
enum Reply {
    /// The reducer's messages as JSON text (an array).
    Answer(String),
    /// It answered `null` or `undefined` (a contract error, SPEC BRG-1).
    Null,
    /// It threw (or its Promise rejected): the error's text.
    Threw(String),
}

/// The JavaScript function as the node's upstream reducer, reached through the channels.
struct JsReducer<'t> {
    present: bool,
    transcript: &'t Transcript,
    /// The top-level system (Anthropic's, the Responses instructions): not the reducer's.
    system: Option<Message>,
    /// The request of the next attempt: the history (its entries without the system: shared
    /// handles, no message copied) or the previous answer (attempt k's).
    expected: Expected,
    attempts: usize,
    /// Per attempt: how many of its objects each message of its answer was read from (TRN-23).
    items: Vec<Vec<usize>>,
    events: &'t Sender<String>,
    replies: &'t Receiver<Reply>,
}

/// The request the reducer is expected to get next (as in the Python binding).
enum Expected {
    /// The history: the transcript's entries (the system excluded).
    History(Vec<Entry>),
    /// Attempt k's proposal.
    Proposal(usize, Vec<Message>),
}

impl Expected {
    fn is(&self, request: &[Message]) -> bool {
        match self {
            Expected::History(entries) => {
                request.len() == entries.len()
                    && request.iter().zip(entries).all(|(m, e)| m == e.message())
            }
            Expected::Proposal(_, messages) => request == messages.as_slice(),
        }
    }
}

impl UpstreamReducer for JsReducer<'_> {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        if !self.present {
            return Ok(Some(messages.to_vec())); // no reducer: keeps everything (ASM-7 falls back)
        }
        let body = match &self.system {
            Some(s) if messages.first() == Some(s) => &messages[1..],
            _ => messages,
        };
        if !self.expected.is(body) {
            return Err(fail(
                "internal: the request is neither the history nor the last proposal",
            ));
        }
        let request = match &self.expected {
            Expected::History(_) => json!({"reduce": "history"}),
            Expected::Proposal(k, _) => json!({"reduce": k}),
        };
        self.events
            .send(request.to_string())
            .map_err(|_| fail("the call was abandoned"))?;
        let text = match self.replies.recv() {
            Err(_) => return Err(fail("the call was abandoned")),
            Ok(Reply::Null) => return Ok(None),
            Ok(Reply::Threw(e)) => return Err(fail(format!("the reducer threw {e}"))),
            Ok(Reply::Answer(text)) => text,
        };
        let values: Vec<Json> = serde_json::from_str(&text).map_err(|e| {
            fail(format!(
                "the reducer's answer is not an array of messages: {e}"
            ))
        })?;
        let answer = self.transcript.read_answer(&values).map_err(|e| {
            let f = transcript::refusal(&e);
            fail(match f {
                Failure::Transcript { path, reason, .. } => {
                    format!("the reducer's answer at {path}: {reason}")
                }
                _ => "the reducer's answer cannot be read".to_owned(),
            })
        })?;
        let mut parsed = answer.messages;
        self.items.push(answer.items);
        self.expected = Expected::Proposal(self.attempts, parsed.clone());
        self.attempts += 1;
        if let Some(s) = &self.system {
            parsed.insert(0, s.clone());
        }
        Ok(Some(parsed))
    }
}

/// One `Compactor`'s state (see the module docs).
struct State {
    policy: Policy,
    scope: RunScope,
    workflow: String,
    /// The last call's record (for a trace writer).
    last: Option<CallTrace>,
}

/// A compaction session: one `Compactor` (see the module docs).
#[napi(custom_finalize)]
pub struct Session {
    state: Arc<Mutex<State>>,
    /// The policy's memo (shared with `state.policy`): its counters are read without the
    /// session's lock, so they answer while a call runs.
    memo: Arc<MemoEstimator>,
    /// The kept conversions of the messages (`crate::reuse`): used on the JavaScript thread
    /// only, before a call starts, so never while a worker holds the session.
    store: Mutex<Store>,
}

/// A wire policy (JSON text) as the library's policy, or why not: invalid input (its path under
/// `policy`) or the SPEC's refusal (POL-2).
pub fn read_policy(text: &str) -> Result<Policy, Failure> {
    hybrid_compaction_oracle::read_policy(text, &Engine).map_err(|e| match e {
        CaseError::Wire(e) => Failure::invalid(e.path.replacen('$', "policy", 1), e.message),
        CaseError::Answer(e) => Failure::Spec {
            kind: e.kind.0.name().to_owned(),
            field: e.field.filter(|f| !f.is_empty()),
            message: e.message,
        },
    })
}

#[napi]
impl Session {
    /// A session for `policy` (a wire policy as JSON text) whose calls share one run
    /// (`persistent`) or are each a run of their own. A policy it is not throws an `Error` whose
    /// message is the failure's envelope (the JavaScript layer throws the package's error).
    #[napi(constructor)]
    pub fn new(policy: String, persistent: bool, workflow: String) -> napi::Result<Session> {
        let built = read_policy(&policy).map_err(|f| napi::Error::from_reason(envelope(Err(f))))?;
        let memo = Arc::new(MemoEstimator::new(Arc::clone(built.estimator_arc())));
        let scope = if persistent {
            RunScope::with_run(Run::new())
        } else {
            RunScope::new()
        };
        let state = State {
            policy: built.with_estimator(memo.clone()),
            scope,
            workflow,
            last: None,
        };
        Ok(Session {
            state: Arc::new(Mutex::new(state)),
            memo,
            store: Mutex::new(Store::default()),
        })
    }

    /// Starts one call of the node on the transcript `transcript` (JSON text) with a reducer
    /// (`reducer`: whether there is one; `system`: whether the transcript's first entry is its
    /// top-level system, not one of the caller's objects). Step through it with [`Call::next`].
    #[napi]
    pub fn start(&self, transcript: String, reducer: bool, system: bool) -> Call {
        self.spawn(Input::Text(transcript), reducer, system)
    }

    /// `messages` (a JSON array of messages) converted one by one in `format` and kept, the
    /// `i`-th as message `indices[i]` of its transcript (so a refusal names
    /// `$.messages[index]`): their ids, in order (`crate::reuse`). Throws an `Error` whose
    /// message is the failure's envelope for the first refusal (the JavaScript layer then
    /// converts the whole transcript, which reports it as a `TranscriptError`).
    #[napi]
    pub fn adapt(
        &self,
        env: Env,
        format: String,
        indices: Uint32Array,
        messages: String,
    ) -> napi::Result<Uint32Array> {
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let (ids, added) = store
            .adapt(&format, &indices, &messages)
            .map_err(|f| napi::Error::from_reason(envelope(Err(f))))?;
        env.adjust_external_memory(added)?;
        Ok(Uint32Array::from(ids))
    }

    /// [`Session::start`] on a `format` transcript given as each message's kept conversion
    /// (`ids`, [`Session::adapt`]'s; the store then keeps exactly these), its top-level
    /// `system` and its `overrides` member as JSON text if given: the transcript is
    /// reassembled from them, converting nothing again. An id not kept throws (the envelope of
    /// an internal failure); nothing is started then.
    #[napi]
    pub fn start_adapted(
        &self,
        env: Env,
        format: String,
        ids: Uint32Array,
        system: Option<String>,
        overrides: Option<String>,
        reducer: bool,
    ) -> napi::Result<Call> {
        let (messages, dropped) = self
            .store
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take_call(&ids)
            .map_err(|f| napi::Error::from_reason(envelope(Err(f))))?;
        env.adjust_external_memory(-dropped)?;
        let has_system = system.is_some();
        let input = Input::Adapted {
            format,
            messages,
            system,
            overrides,
        };
        Ok(self.spawn(input, reducer, has_system))
    }

    fn spawn(&self, input: Input, reducer: bool, system: bool) -> Call {
        let (events, from_worker) = channel::<String>();
        let (to_worker, replies) = channel::<Reply>();
        let state = Arc::clone(&self.state);
        let worker = std::thread::Builder::new()
            .name("hybrid-compaction-call".into())
            .spawn(move || {
                let answer = match state.lock() {
                    Ok(mut s) => run_call(&mut s, input, reducer, system, &events, &replies),
                    Err(_) => Err(Failure::internal("engine", "the session was poisoned")),
                };
                let _ = events.send(format!("{{\"done\":{}}}", envelope(answer)));
            });
        Call {
            events: from_worker,
            replies: to_worker,
            worker: worker.ok(),
        }
    }

    /// The trace line of the last call for `recorder` (`docs/TRACE.md`), once.
    #[napi]
    pub fn take_record(&self, recorder: &mut TraceRecorder) -> Option<String> {
        let call = self.state.lock().ok()?.last.take()?;
        let record = Record::Call(Box::new(recorder.writer.record(&call)));
        serde_json::to_string(&record).ok()
    }

    /// The `runEnd` line of this session's run for `recorder`, if the recorder named the run.
    #[napi]
    pub fn end_run(&self, recorder: &mut TraceRecorder) -> Option<String> {
        let state = self.state.lock().ok()?;
        let end = recorder.writer.end_run(state.scope.current()?)?;
        serde_json::to_string(&Record::RunEnd(end)).ok()
    }

    /// The memo's counters `[hits, misses, cached]` (SPEC EST-7; exact below 2^53), read
    /// without the session's lock: they answer while a call runs.
    #[napi]
    pub fn memo_stats(&self) -> Vec<f64> {
        let m = self.memo.stats();
        vec![m.hits as f64, m.misses as f64, m.cached as f64]
    }
}

impl ObjectFinalize for Session {
    /// Gives back to V8's account the memory its kept conversions held.
    fn finalize(self, env: Env) -> napi::Result<()> {
        let bytes = self.store.lock().map_or(0, |s| s.bytes);
        env.adjust_external_memory(-bytes).map(|_| ())
    }
}

/// One call of the node in progress (see the module docs).
#[napi]
pub struct Call {
    events: Receiver<String>,
    replies: Sender<Reply>,
    worker: Option<JoinHandle<()>>,
}

#[napi]
impl Call {
    /// Blocks until the call needs the reducer (`{"reduce": "history" | k}`) or is done
    /// (`{"done": envelope}`, the envelope's answer `{assembly, diagnostics, events, final}`).
    #[napi]
    pub fn next(&mut self) -> String {
        match self.events.recv() {
            Ok(e) => {
                if e.starts_with("{\"done\"") {
                    if let Some(w) = self.worker.take() {
                        let _ = w.join();
                    }
                }
                e
            }
            Err(_) => format!(
                "{{\"done\":{}}}",
                envelope(Err(Failure::internal(
                    "engine",
                    "the call's worker stopped"
                )))
            ),
        }
    }

    /// The reducer's answer: `kind` `"answer"` (`text` its messages as a JSON array), `"null"`
    /// or `"threw"` (`text` the error).
    #[napi]
    pub fn reply(&mut self, kind: String, text: String) {
        let reply = match kind.as_str() {
            "answer" => Reply::Answer(text),
            "null" => Reply::Null,
            _ => Reply::Threw(text),
        };
        let _ = self.replies.send(reply);
    }
}

/// The worker's part of a call: its answer payload, or its failure.
fn run_call(
    s: &mut State,
    input: Input,
    reducer: bool,
    system: bool,
    events: &Sender<String>,
    replies: &Receiver<Reply>,
) -> Result<String, Failure> {
    let t = input.transcript()?;
    let entries = t.entries().to_vec();
    let offset = usize::from(system && !entries.is_empty());
    let mut js = JsReducer {
        present: reducer,
        transcript: &t,
        system: (offset == 1).then(|| entries[0].message().clone()),
        expected: Expected::History(entries[offset..].to_vec()),
        attempts: 0,
        items: Vec::new(),
        events,
        replies,
    };
    let collector = Arc::new(Collector::default());
    let reporter = Reporter::new(Arc::new(NoSink), ReporterIdentity::workflow(&s.workflow));
    let options = NodeOptions {
        policy: s.policy.clone(),
        reducer: &mut js,
    };
    let Ok(NodeSelection::Installed(node)) = select(true, Some(options), Capture, Some(reporter))
    else {
        return Err(Failure::internal(
            "engine",
            "no compaction node was installed",
        ));
    };
    let mut node = node.with_trace_observer(collector.clone());
    let outcome = node
        .call_adapted(&mut s.scope, entries, &CancellationToken::new())
        .map(|_| ());
    drop(node);
    let record = collector.take().pop();
    let answered = match &outcome {
        Ok(()) => Ok(answer(&t, record.as_ref(), offset, &js.items).to_string()),
        Err(e) => Err(failure(e)),
    };
    s.last = record;
    answered
}

/// The failure of a call: `terminated` (SPEC NODE-4), else the error's kind and message.
fn failure(e: &NodeError) -> Failure {
    if let NodeError::Terminated(c) = e {
        return Failure::Terminated {
            outcome: c.outcome.name().to_owned(),
            final_size: i64::from(c.final_estimated_size),
            hard_limit: i64::from(c.hard_limit),
        };
    }
    Failure::Spec {
        kind: e.kind().name().to_owned(),
        field: None,
        message: e.to_string(),
    }
}

/// The answer payload of a successful call (see the module docs).
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
