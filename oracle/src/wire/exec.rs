//! Running one case against one implementation.
//!
//! [`Implementation`] is the single seam between the wire format and the two implementations of
//! the SPEC: [`Model`] (the executable specification, `hybrid_compaction_spec`) and
//! [`Engine`] (the optimized `hybrid_compaction::engine`). Everything else (parsing, input
//! construction, scripted providers and reducers, rendering) is shared, so a difference between
//! the two answers is a difference between the two implementations.
//!
//! [`run_case`] never panics on its own account; [`run_case_caught`] additionally turns a panic
//! inside an implementation into [`RunError::Panic`] so the CLI can report it as a failure.

use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use hybrid_compaction_model::analysis::ToolExchangeAnalysis;
use hybrid_compaction_model::assembly::{AssemblyError, AssemblyResult, Reducer};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::classifier::Classifier;
use hybrid_compaction_model::diagnostics::Diagnostics;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::policy::{Policy, TriggerEvaluation};
use hybrid_compaction_model::reducers::{
    CancelAtCall, MessageCountingReducer, ProposalItem, ScriptStep, ScriptedReducer,
    ScriptedUpstreamReducer, UpstreamError, UpstreamReducer, UpstreamStep,
};
use hybrid_compaction_model::selection::PreservationSelection;
use hybrid_compaction_model::snapshot::{ScriptedProvider, SnapshotProvider};
use hybrid_compaction_model::verification::VerificationResult;

use super::adr::exec::{self as adr, AdrImplementation, EngineAdr, ModelAdr};
use super::case::{
    Case, ProposalItemInput, ProposedItem, ReducerInput, StepInput, UpstreamStepInput,
};
use super::convert::{self, CancelPoint, CaseError, WireError};
use super::output::{ErrorOutput, Output};

/// The operations of the SPEC that a case can exercise, implemented once by the model and once
/// by the engine.
pub trait Implementation: Sync + super::scenario::Scenarios {
    /// `model` or `engine`.
    fn name(&self) -> &'static str;
    /// The UTF-8 context estimator (SPEC EST-2).
    fn utf8_estimator(&self) -> Arc<dyn Estimator>;
    /// The UTF-8 text estimator (SPEC EST-4).
    fn utf8_text_estimator(&self) -> Arc<dyn Estimator>;
    /// Trigger evaluation (SPEC POL-3).
    fn evaluate(
        &self,
        entries: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<TriggerEvaluation, AssemblyError>;
    /// Tool-exchange analysis (SPEC EXC-1 .. EXC-3).
    fn analyze(&self, entries: &[Entry]) -> ToolExchangeAnalysis;
    /// Required-preservation selection (SPEC PRE-4).
    fn select_required(
        &self,
        entries: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<PreservationSelection, AssemblyError>;
    /// Verification (SPEC VER-1).
    fn verify(
        &self,
        original: &[Entry],
        proposed: &[Entry],
        policy: &Policy,
    ) -> Result<VerificationResult, AssemblyError>;
    /// `Verify` observing a cancellation token (SPEC VER-5).
    fn verify_cancellable(
        &self,
        original: &[Entry],
        proposed: &[Entry],
        policy: &Policy,
        cancel: &CancellationToken,
    ) -> Result<VerificationResult, AssemblyError>;
    /// Assembly (SPEC ASM-7).
    fn assemble(
        &self,
        policy: &Policy,
        provider: &mut dyn SnapshotProvider,
        reducer: &mut dyn Reducer,
        cancel: &CancellationToken,
    ) -> Result<AssemblyResult, AssemblyError>;
    /// The reducer bridge over an upstream reducer (SPEC BRG-1 .. BRG-3).
    fn bridge(&self, upstream: WireUpstream) -> Box<dyn Reducer>;
    /// Message adaptation with the default content-hash classifier plus kind overrides by
    /// message index (SPEC CLS-1, CLS-2).
    fn adapt(
        &self,
        messages: &[Message],
        overrides: &BTreeMap<usize, EntryKind>,
    ) -> Result<Vec<Entry>, ErrorOutput>;
    /// Diagnostics (SPEC DIA-5).
    fn diagnostics(
        &self,
        result: &AssemblyResult,
        policy: &Policy,
    ) -> Result<Diagnostics, AssemblyError>;
    /// The ADR-0007 operations this implementation answers on its own (SPEC CAP, CMP, TRU).
    fn adr(&self) -> &'static dyn AdrImplementation;
}

/// The executable specification (`hybrid_compaction_spec`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Model;

/// The optimized engine (`hybrid_compaction::engine`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Engine;

macro_rules! implementation {
    ($ty:ty, $name:literal, $($p:ident)::+, $adapt:ident, $adr:expr) => {
        impl Implementation for $ty {
            fn name(&self) -> &'static str {
                $name
            }
            fn utf8_estimator(&self) -> Arc<dyn Estimator> {
                Arc::new($($p)::+::estimate::Utf8ContextEstimator)
            }
            fn utf8_text_estimator(&self) -> Arc<dyn Estimator> {
                Arc::new($($p)::+::estimate::Utf8TextEstimator)
            }
            fn evaluate(
                &self,
                entries: &[Entry],
                policy: &Policy,
                cancel: &CancellationToken,
            ) -> Result<TriggerEvaluation, AssemblyError> {
                $($p)::+::estimate::evaluate(entries, policy, cancel)
            }
            fn analyze(&self, entries: &[Entry]) -> ToolExchangeAnalysis {
                $($p)::+::exchange::analyze(entries)
            }
            fn select_required(
                &self,
                entries: &[Entry],
                policy: &Policy,
                cancel: &CancellationToken,
            ) -> Result<PreservationSelection, AssemblyError> {
                $($p)::+::preserve::select_required(entries, policy, cancel)
            }
            fn verify(
                &self,
                original: &[Entry],
                proposed: &[Entry],
                policy: &Policy,
            ) -> Result<VerificationResult, AssemblyError> {
                $($p)::+::verify::verify(original, proposed, policy)
            }
            fn verify_cancellable(
                &self,
                original: &[Entry],
                proposed: &[Entry],
                policy: &Policy,
                cancel: &CancellationToken,
            ) -> Result<VerificationResult, AssemblyError> {
                $($p)::+::verify::verify_cancellable(original, proposed, policy, cancel)
            }
            fn assemble(
                &self,
                policy: &Policy,
                provider: &mut dyn SnapshotProvider,
                reducer: &mut dyn Reducer,
                cancel: &CancellationToken,
            ) -> Result<AssemblyResult, AssemblyError> {
                $($p)::+::assemble::assemble(policy, provider, reducer, cancel)
            }
            fn bridge(&self, upstream: WireUpstream) -> Box<dyn Reducer> {
                Box::new($($p)::+::bridge::Bridge::new(upstream))
            }
            fn adapt(
                &self,
                messages: &[Message],
                overrides: &BTreeMap<usize, EntryKind>,
            ) -> Result<Vec<Entry>, ErrorOutput> {
                $adapt(messages, overrides)
            }
            fn diagnostics(
                &self,
                result: &AssemblyResult,
                policy: &Policy,
            ) -> Result<Diagnostics, AssemblyError> {
                $($p)::+::diagnostics::build(result, policy)
            }
            fn adr(&self) -> &'static dyn AdrImplementation {
                &$adr
            }
        }
    };
}

implementation!(
    Model,
    "model",
    hybrid_compaction_spec,
    model_adapt,
    ModelAdr
);
implementation!(
    Engine,
    "engine",
    hybrid_compaction::engine,
    engine_adapt,
    EngineAdr
);

/// A classifier yielding a base classifier's ids plus scripted kind overrides.
struct Overriding<'a, C> {
    base: C,
    overrides: &'a BTreeMap<usize, EntryKind>,
}

impl<C: Classifier> Classifier for Overriding<'_, C> {
    fn entry_id(&mut self, messages: &[Message], index: usize) -> String {
        self.base.entry_id(messages, index)
    }
    fn override_kind(&mut self, _messages: &[Message], index: usize) -> Option<EntryKind> {
        self.overrides.get(&index).copied()
    }
}

fn model_adapt(
    messages: &[Message],
    overrides: &BTreeMap<usize, EntryKind>,
) -> Result<Vec<Entry>, ErrorOutput> {
    use hybrid_compaction_spec::classify::{adapt, ContentHashClassifier};
    let mut c = Overriding {
        base: ContentHashClassifier,
        overrides,
    };
    adapt(messages, &mut c).map_err(|e| convert::adapt_error(e.kind(), &e.to_string()))
}

fn engine_adapt(
    messages: &[Message],
    overrides: &BTreeMap<usize, EntryKind>,
) -> Result<Vec<Entry>, ErrorOutput> {
    use hybrid_compaction::engine::classify::{adapt, ContentHashClassifier};
    let mut c = Overriding {
        base: ContentHashClassifier::new(),
        overrides,
    };
    adapt(messages, &mut c).map_err(|e| convert::adapt_error(e.kind(), &e.to_string()))
}

/// The upstream reducers a case can name.
#[derive(Debug, Clone)]
pub enum WireUpstream {
    /// A message-level script.
    Scripted(ScriptedUpstreamReducer),
    /// Keep system messages and the last N others.
    Counting(MessageCountingReducer),
}

impl UpstreamReducer for WireUpstream {
    fn reduce(&mut self, messages: &[Message]) -> Result<Option<Vec<Message>>, UpstreamError> {
        match self {
            WireUpstream::Scripted(r) => r.reduce(messages),
            WireUpstream::Counting(r) => r.reduce(messages),
        }
    }
}

/// Why [`run_case_caught`] produced no output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The case is not valid wire input.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The implementation panicked (a bug in it, or an unimplemented stub).
    #[error("internal failure of the {implementation}: {message}")]
    Panic {
        /// `model` or `engine`.
        implementation: &'static str,
        /// The panic payload, if it was a string.
        message: String,
    },
}

/// Runs `case` on `imp`, catching panics of the implementation.
pub fn run_case_caught(case: &Case, imp: &dyn Implementation) -> Result<Output, RunError> {
    match catch_unwind(AssertUnwindSafe(|| run_case(case, imp))) {
        Ok(r) => r.map_err(RunError::Wire),
        Err(payload) => {
            let message = if let Some(s) = payload.downcast_ref::<&str>() {
                (*s).to_owned()
            } else if let Some(s) = payload.downcast_ref::<String>() {
                s.clone()
            } else {
                "non-string panic payload".to_owned()
            };
            Err(RunError::Panic {
                implementation: imp.name(),
                message,
            })
        }
    }
}

/// Runs `case` on `imp`. A wire error means the case itself is invalid.
pub fn run_case(case: &Case, imp: &dyn Implementation) -> Result<Output, WireError> {
    match run_inner(case, imp) {
        Ok(out) => Ok(out),
        Err(CaseError::Answer(e)) => Ok(Output::error(e)),
        Err(CaseError::Wire(e)) => Err(e),
    }
}

fn answer_of(e: AssemblyError) -> CaseError {
    CaseError::Answer(convert::assembly_error(&e))
}

/// A token already cancelled for `before`, else a fresh one.
fn token_for(
    point: Option<CancelPoint>,
    path: &str,
    allow_points: bool,
) -> Result<CancellationToken, CaseError> {
    match point {
        None => Ok(CancellationToken::new()),
        Some(CancelPoint::Before) => Ok(CancellationToken::cancelled()),
        Some(_) if !allow_points => Err(CaseError::Wire(WireError::new(
            path,
            "only `before` is meaningful for this operation",
        ))),
        Some(_) => Ok(CancellationToken::new()),
    }
}

fn run_inner(case: &Case, imp: &dyn Implementation) -> Result<Output, CaseError> {
    use super::scenario::exec as scenario;
    match case {
        Case::Diagnostics(c) => scenario::diagnostics(c, imp),
        Case::Bridge(c) => scenario::bridge(c, imp),
        Case::Leases(c) => scenario::leases(c, imp),
        Case::Node(c) => scenario::node(c, imp),
        Case::Policy(c) => {
            let p = convert::policy(c.policy.as_ref(), imp, "$.policy")?;
            Ok(Output {
                policy: Some(convert::policy_output(&p)),
                ..Output::default()
            })
        }
        Case::Entry(c) => {
            if let Some(t) = &c.transcript {
                if !c.entries.is_empty() || c.messages.is_some() || c.overrides.is_some() {
                    return Err(CaseError::Wire(WireError::new(
                        "$",
                        "`transcript` excludes `entries`, `messages` and `overrides` (overrides go inside the transcript)",
                    )));
                }
                let t = convert::transcript(t)?;
                let mut es = t.entries().to_vec();
                if let Some(a) = &c.augment {
                    es = convert::augment(&es, a)?;
                }
                return Ok(Output {
                    entries: Some(convert::entry_outputs(&es)),
                    final_transcript: Some(t.render(&es)),
                    ..Output::default()
                });
            }
            let mut es = match &c.messages {
                None => {
                    if c.overrides.is_some() {
                        return Err(CaseError::Wire(WireError::new(
                            "$.overrides",
                            "`overrides` needs `messages`",
                        )));
                    }
                    convert::entries(&c.entries, "$.entries")?
                }
                Some(ms) => {
                    if !c.entries.is_empty() {
                        return Err(CaseError::Wire(WireError::new(
                            "$",
                            "`entries` and `messages` are mutually exclusive",
                        )));
                    }
                    let mut messages = Vec::with_capacity(ms.len());
                    for (i, m) in ms.iter().enumerate() {
                        messages.push(convert::message(m, &format!("$.messages[{i}]"))?);
                    }
                    let mut overrides = BTreeMap::new();
                    for (k, v) in c.overrides.iter().flatten() {
                        let i = k
                            .parse::<usize>()
                            .ok()
                            .filter(|i| *i < messages.len())
                            .ok_or_else(|| {
                                WireError::new(
                                    format!("$.overrides[{}]", serde_json::Value::from(k.as_str())),
                                    "expected the decimal index of a message",
                                )
                            })?;
                        overrides.insert(i, convert::kind(*v));
                    }
                    imp.adapt(&messages, &overrides)
                        .map_err(CaseError::Answer)?
                }
            };
            if let Some(a) = &c.augment {
                es = convert::augment(&es, a)?;
            }
            Ok(Output {
                entries: Some(convert::entry_outputs(&es)),
                ..Output::default()
            })
        }
        Case::Analyze(c) => {
            let (es, _) =
                convert::entries_or_transcript(c.entries.as_deref(), c.transcript.as_ref())?;
            let a = imp.analyze(&es);
            Ok(Output {
                analysis: Some(convert::analysis_output(&a)),
                ..Output::default()
            })
        }
        Case::Evaluate(c) => {
            let point = convert::cancel_point(c.cancel.as_ref(), "$.cancel")?;
            let token = token_for(point, "$.cancel", false)?;
            let p = convert::policy(c.policy.as_ref(), imp, "$.policy")?;
            let (es, _) =
                convert::entries_or_transcript(c.entries.as_deref(), c.transcript.as_ref())?;
            let t = imp.evaluate(&es, &p, &token).map_err(answer_of)?;
            let sizes = es.iter().map(|e| p.estimator().estimate(e)).collect();
            Ok(Output {
                evaluation: Some(convert::evaluation_output(&p, sizes, &t)),
                ..Output::default()
            })
        }
        Case::Select(c) => {
            let point = convert::cancel_point(c.cancel.as_ref(), "$.cancel")?;
            let token = token_for(point, "$.cancel", false)?;
            let p = convert::policy(c.policy.as_ref(), imp, "$.policy")?;
            let (es, _) =
                convert::entries_or_transcript(c.entries.as_deref(), c.transcript.as_ref())?;
            let s = imp.select_required(&es, &p, &token).map_err(answer_of)?;
            Ok(Output {
                selection: Some(convert::selection_output(&s)),
                ..Output::default()
            })
        }
        Case::Verify(c) => {
            let point = convert::cancel_point(c.cancel.as_ref(), "$.cancel")?;
            let token = token_for(point, "$.cancel", false)?;
            let p = convert::policy(c.policy.as_ref(), imp, "$.policy")?;
            let original = convert::entries(&c.original, "$.original")?;
            let proposed = proposed_entries(&original, &c.proposed)?;
            let v = match point {
                // SPEC VER-5: with a token, the verifier checks it first.
                Some(_) => imp.verify_cancellable(&original, &proposed, &p, &token),
                None => imp.verify(&original, &proposed, &p),
            }
            .map_err(answer_of)?;
            Ok(Output {
                verification: Some(convert::verification_output(&v)),
                ..Output::default()
            })
        }
        Case::Assemble(c) => run_assemble(c, imp),
        Case::Resolve(c) => adr::resolve(c, imp.adr()),
        Case::Compose(c) => adr::compose(c, imp.adr()),
        Case::Trust(c) => adr::trust(c, imp.adr()),
        Case::Record(c) => adr::record(c),
        Case::Rehydrate(c) => adr::rehydrate(c),
        Case::Offload(c) => adr::offload(c),
        Case::Configure(c) => adr::configure(c),
    }
}

/// The proposed list of a `verify` case: ids name original entries (the first with that id, as a
/// positional search would find it), objects are new entries. One id index, so linear in the
/// input.
fn proposed_entries(original: &[Entry], items: &[ProposedItem]) -> Result<Vec<Entry>, CaseError> {
    let mut by_id: HashMap<&str, &Entry> = HashMap::with_capacity(original.len());
    for entry in original {
        by_id.entry(entry.id().as_str()).or_insert(entry);
    }
    let mut proposed = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        proposed.push(match item {
            ProposedItem::Same(id) => {
                by_id
                    .get(id.as_str())
                    .map(|e| (*e).clone())
                    .ok_or_else(|| {
                        WireError::new(
                            format!("$.proposed[{i}]"),
                            format!("no original entry with id {id:?}"),
                        )
                    })?
            }
            ProposedItem::Entry(e) => convert::entry(e, &format!("$.proposed[{i}]"))?,
        });
    }
    Ok(proposed)
}

fn prev_is_some(base: &Option<Vec<Entry>>) -> bool {
    base.is_some()
}

fn run_assemble(
    c: &super::case::AssembleCase,
    imp: &dyn Implementation,
) -> Result<Output, CaseError> {
    let point = convert::cancel_point(c.cancel.as_ref(), "$.cancel")?;
    let token = token_for(point, "$.cancel", true)?;
    let p = convert::policy(c.policy.as_ref(), imp, "$.policy")?;

    // The snapshot schedule (SPEC SNAP-3 for plain `entries`, SNAP-5 for `snapshots`).
    let (base, transcript) = match (&c.entries, &c.transcript) {
        (None, None) => (None, None),
        (es, t) => {
            let (es, t) = convert::entries_or_transcript(es.as_deref(), t.as_ref())?;
            (Some(es), t)
        }
    };
    let mut steps: Vec<(i64, Vec<Entry>)> = Vec::new();
    match &c.snapshots {
        None => match base {
            Some(es) => steps.push((0, es)),
            None => {
                return Err(CaseError::Wire(WireError::new(
                    "$",
                    "an assemble case needs `entries` or `snapshots`",
                )))
            }
        },
        Some(snaps) => {
            // SPEC SNAP-5: the empty schedule captures version 0 with no entries, so a base
            // list would never be seen.
            if snaps.is_empty() && prev_is_some(&base) {
                return Err(CaseError::Wire(WireError::new(
                    "$.snapshots",
                    "an empty schedule captures no entries: drop `entries` / `transcript`, or give a snapshot",
                )));
            }
            let mut prev = base;
            for (i, s) in snaps.iter().enumerate() {
                let path = format!("$.snapshots[{i}]");
                let es = match &s.entries {
                    Some(es) => convert::entries(es, &format!("{path}.entries"))?,
                    None => match &prev {
                        Some(es) => es.clone(),
                        None => {
                            return Err(CaseError::Wire(WireError::new(
                                &path,
                                "the first snapshot needs `entries` when the case has none",
                            )))
                        }
                    },
                };
                prev = Some(es.clone());
                steps.push((s.version, es));
            }
        }
    }
    let mut provider = ScriptedProvider::new(steps);
    if let Some(CancelPoint::Capture(k)) = point {
        provider = provider.cancel_at_capture(k, token.clone());
    }

    let inner: Box<dyn Reducer> = match &c.reducer {
        None => Box::new(ScriptedReducer::new(Vec::new())),
        Some(ReducerInput::Scripted(s)) => {
            let mut steps = Vec::with_capacity(s.steps.len());
            for (i, st) in s.steps.iter().enumerate() {
                let path = format!("$.reducer.steps[{i}]");
                steps.push(match st {
                    StepInput::Echo => ScriptStep::Echo,
                    StepInput::Nothing => ScriptStep::Nothing,
                    StepInput::Fail(m) => ScriptStep::Fail(m.clone()),
                    StepInput::Propose(items) => {
                        let mut out = Vec::with_capacity(items.len());
                        for (j, item) in items.iter().enumerate() {
                            out.push(match item {
                                ProposalItemInput::Keep(id) => ProposalItem::Keep(id.clone()),
                                ProposalItemInput::New(n) => ProposalItem::New(convert::entry(
                                    &n.new,
                                    &format!("{path}.propose[{j}].new"),
                                )?),
                            });
                        }
                        ScriptStep::Propose(out)
                    }
                });
            }
            Box::new(ScriptedReducer::new(steps))
        }
        Some(ReducerInput::Upstream(u)) => imp.bridge(WireUpstream::Scripted(
            ScriptedUpstreamReducer::new(upstream_steps(u)?),
        )),
        Some(ReducerInput::MessageCounting(m)) => {
            imp.bridge(WireUpstream::Counting(MessageCountingReducer {
                target_count: m.target_count as usize,
            }))
        }
    };
    let mut reducer = match point {
        Some(CancelPoint::Reducer(k)) => CancelAtCall::at(inner, k, token.clone()),
        _ => CancelAtCall::never(inner),
    };

    let result = imp
        .assemble(&p, &mut provider, &mut reducer, &token)
        .map_err(answer_of)?;
    let diagnostics = imp.diagnostics(&result, &p).map_err(answer_of)?;
    let final_transcript = transcript
        .zip(result.final_entries.as_deref())
        .map(|(t, es)| t.render(es));
    Ok(Output {
        assembly: Some(convert::assembly_output(&result)),
        diagnostics: Some(convert::diagnostics_output(&diagnostics)),
        final_transcript,
        ..Output::default()
    })
}

/// The scripted steps of an `upstream` reducer (`$.reducer.steps[i]`), shared by `assemble` and
/// the `node` scenario.
pub(crate) fn upstream_steps(
    u: &super::case::UpstreamReducerInput,
) -> Result<Vec<UpstreamStep>, CaseError> {
    let mut steps = Vec::with_capacity(u.steps.len());
    for (i, st) in u.steps.iter().enumerate() {
        let path = format!("$.reducer.steps[{i}]");
        steps.push(match st {
            UpstreamStepInput::Echo => UpstreamStep::Echo,
            UpstreamStepInput::Null => UpstreamStep::Null,
            UpstreamStepInput::Fail(m) => UpstreamStep::Fail(m.clone()),
            UpstreamStepInput::Return(ms) => {
                let mut out = Vec::with_capacity(ms.len());
                for (j, m) in ms.iter().enumerate() {
                    out.push(convert::message(m, &format!("{path}.return[{j}]"))?);
                }
                UpstreamStep::Return(out)
            }
        });
    }
    Ok(steps)
}
