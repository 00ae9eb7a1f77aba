//! The differential oracles: run the model (`hybrid_compaction_spec::Model`) and the library
//! (`hybrid_compaction::seam::Engine`) through the vocabulary's seam, or a wire case through the
//! oracle, on the same decoded input and panic on any difference.
//!
//! Shared by the fuzz targets and by `tests/fuzz_replay.rs` (included there by path), so a
//! committed seed is re-checked by ordinary `cargo test` exactly as the fuzzer checked it.
//!
//! Equality is compared on the `Debug` rendering, as in
//! `tests/properties/engine_equivalence.rs`: the
//! vocabulary's `PartialEq` follows SPEC VER-2, under which a value holding NaN differs from
//! itself, while the engine must return *identical* values (NaN included, `-0.0` distinct).

use std::fmt::Debug;
use std::sync::Arc;

use hybrid_compaction_model::assembly::{
    AssemblyError, AssemblyResult, Reducer, ReducerError, ReductionRequest,
};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::reducers::{CancelAtCall, ScriptedReducer};
use hybrid_compaction_model::snapshot::ScriptedProvider;
use hybrid_compaction_oracle::vectors::{comparable, VectorFile};
use hybrid_compaction_oracle::{read_case, run_case, Case, Engine, Implementation, Model};

use crate::decode::{self, AssembleInput, EstimatorChoice, VerifyInput};

/// Panics (with both renderings and the input) unless `model` and `engine` render identically.
fn same<A: Debug, B: Debug, I: Debug>(what: &str, model: &A, engine: &B, input: &I) {
    let (m, e) = (format!("{model:?}"), format!("{engine:?}"));
    assert!(
        m == e,
        "model/engine disagree on {what}\nmodel:  {m}\nengine: {e}\ninput: {input:#?}"
    );
}

/// `verify_differential`: verify (SPEC VER-1..VER-4), required ids (PRE-1), selection (PRE-4),
/// tool-exchange analysis (EXC-1..EXC-3) and the UTF-8 estimators (EST-2, EST-4) on the decoded
/// lists, model == engine, results and errors.
pub fn check_verify(input: &VerifyInput) {
    let policy = input.policy();
    let (original, proposed) = (&input.original, &input.proposed);
    same(
        "verify",
        &Model.verify(original, proposed, &policy),
        &Engine.verify(original, proposed, &policy),
        input,
    );
    for (name, list) in [("original", original), ("proposed", proposed)] {
        same(
            &format!("required_ids({name})"),
            &Model.required_ids(list, input.retention),
            &Engine.required_ids(list, input.retention),
            input,
        );
        same(
            &format!("analyze({name})"),
            &Model.analyze(list),
            &Engine.analyze(list),
            input,
        );
    }
    // Per-entry estimates (SPEC EST-2 with its .NET number rendering, EST-4) and the
    // preservation selection (PRE-4), on both lists.
    let never = CancellationToken::new();
    for (name, list) in [("original", original), ("proposed", proposed)] {
        for e in list.iter() {
            same(
                "Utf8ContextEstimator",
                &Model.context_estimator().estimate(e),
                &Engine.context_estimator().estimate(e),
                e,
            );
            same(
                "Utf8TextEstimator",
                &Model.text_estimator().estimate(e),
                &Engine.text_estimator().estimate(e),
                e,
            );
        }
        same(
            &format!("select_required({name})"),
            &Model.select_required(list, &policy, &never),
            &Engine.select_required(list, &policy, &never),
            input,
        );
    }
    // Structural equality (SPEC VER-2) on every pair of messages with the same id.
    for a in original {
        for b in proposed.iter().filter(|b| b.id() == a.id()) {
            same(
                "structurally_equal",
                &Model.structurally_equal(a.message(), b.message()),
                &Engine.structurally_equal(a.message(), b.message()),
                input,
            );
        }
    }
}

/// Decodes and checks one `verify_differential` input.
pub fn verify_bytes(data: &[u8]) {
    check_verify(&decode::verify_input(data));
}

/// A reducer wrapper that records every reduction request (SPEC ASM-4) it forwards.
struct Recording<R> {
    inner: R,
    log: Vec<String>,
}

impl<R: Reducer> Reducer for Recording<R> {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        self.log.push(format!(
            "attempt {} entries {:?} required {:?}",
            request.attempt_number, request.entries, request.required_entry_ids
        ));
        self.inner.reduce(request)
    }
}

/// The model's and the engine's policy for an assembly input: identical numbers; the same
/// host estimator instance, or each side's own UTF-8 estimator. `None` if the numbers are invalid.
pub fn assemble_policies(input: &AssembleInput) -> Option<(Policy, Policy)> {
    let (model_est, engine_est): (Arc<dyn Estimator>, Arc<dyn Estimator>) = match &input.estimator {
        EstimatorChoice::Host(e) => (e.clone(), e.clone()),
        EstimatorChoice::Utf8Context => (Model.context_estimator(), Engine.context_estimator()),
        EstimatorChoice::Utf8Text => (Model.text_estimator(), Engine.text_estimator()),
    };
    let policy = |est| {
        decode::policy(
            input.hard_limit,
            input.margin,
            input.retention,
            input.attempts,
            est,
        )
    };
    Some((policy(model_est)?, policy(engine_est)?))
}

/// One side's fresh token, scripted provider and recording scripted reducer, with the input's
/// cancellation points wired to the token.
fn side(
    input: &AssembleInput,
) -> (
    CancellationToken,
    ScriptedProvider,
    Recording<CancelAtCall<ScriptedReducer>>,
) {
    let token = CancellationToken::new();
    let mut provider = ScriptedProvider::new(input.captures.clone());
    if let Some(k) = input.cancel_at_capture {
        provider = provider.cancel_at_capture(k, token.clone());
    }
    let scripted = ScriptedReducer::new(input.steps.clone());
    let reducer = match input.cancel_at_call {
        Some(k) => scripted.cancel_at_call(k, token.clone()),
        None => CancelAtCall::never(scripted),
    };
    let reducer = Recording {
        inner: reducer,
        log: Vec::new(),
    };
    (token, provider, reducer)
}

/// The model's answer alone (for seed statistics); `None` if the policy numbers are invalid.
pub fn model_assemble(input: &AssembleInput) -> Option<Result<AssemblyResult, AssemblyError>> {
    let (policy, _) = assemble_policies(input)?;
    let (token, mut provider, mut reducer) = side(input);
    Some(Model.assemble(&policy, &mut provider, &mut reducer, &token))
}

/// `assemble_differential`: one assembly (SPEC ASM-7) with a scripted provider (SNAP-5) and a
/// scripted reducer on each side; results, errors, reduction requests, capture counts and
/// diagnostics (DIA-5) must be identical.
pub fn check_assemble(input: &AssembleInput) {
    let Some((model_policy, engine_policy)) = assemble_policies(input) else {
        return;
    };
    let (m_token, mut m_provider, mut m_reducer) = side(input);
    let (e_token, mut e_provider, mut e_reducer) = side(input);
    let m = Model.assemble(&model_policy, &mut m_provider, &mut m_reducer, &m_token);
    let e = Engine.assemble(&engine_policy, &mut e_provider, &mut e_reducer, &e_token);
    same("assemble", &m, &e, input);
    same("reduction requests", &m_reducer.log, &e_reducer.log, input);
    same(
        "captures",
        &m_provider.captures(),
        &e_provider.captures(),
        input,
    );
    if let (Ok(m), Ok(e)) = (&m, &e) {
        same(
            "diagnostics",
            &Model.diagnostics(m, &model_policy),
            &Engine.diagnostics(e, &engine_policy),
            input,
        );
    }
}

/// Decodes and checks one `assemble_differential` input.
pub fn assemble_bytes(data: &[u8]) {
    check_assemble(&decode::assemble_input(data));
}

/// Runs one wire case on the wire layer's `Model` and `Engine` implementations; outputs must be
/// equal as compared by the vector runner (JSON, ignoring `error.message`), wire errors equal.
/// Also checks that the case survives a serialize/parse round trip unchanged.
pub fn check_case(case: &Case) {
    let m = run_case(case, &Model);
    let e = run_case(case, &Engine);
    match (&m, &e) {
        (Ok(a), Ok(b)) => {
            let (a, b) = (comparable(a), comparable(b));
            assert!(
                a == b,
                "model/engine outputs differ\nmodel:  {a}\nengine: {b}\ncase: {}",
                serde_json::to_string(case).unwrap_or_default()
            );
        }
        _ => same("wire run", &m, &e, case),
    }
    let text = serde_json::to_string(case).expect("a parsed case serializes");
    let back: Case = serde_json::from_str(&text)
        .unwrap_or_else(|err| panic!("re-parse of a serialized case failed: {err}\n{text}"));
    assert!(back == *case, "case round trip changed the case\n{text}");
}

/// The wire parser under test: UTF-8 text -> one `Case`, or else a `VectorFile` (every test's
/// effective case, the group policy filled in). Anything else is refused (no cases); never panics.
pub fn wire_cases(data: &[u8]) -> Vec<Case> {
    let Ok(text) = std::str::from_utf8(data) else {
        return Vec::new();
    };
    if let Ok(case) = serde_json::from_str::<Case>(text) {
        return vec![case];
    }
    match serde_json::from_str::<VectorFile>(text) {
        Ok(file) => file
            .test_groups
            .iter()
            .flat_map(|g| {
                g.tests
                    .iter()
                    .map(move |t| t.effective_case(g.policy.as_ref()))
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// `wire_case`: arbitrary bytes -> [`wire_cases`] -> every case checked by [`check_case`].
pub fn wire_bytes(data: &[u8]) {
    for case in wire_cases(data) {
        check_case(&case);
    }
}

/// The transcript formats a `transcript` input's first byte picks from (SPEC TRN-1).
pub const TRANSCRIPT_FORMATS: [&str; 7] = [
    "openai-chat",
    "anthropic-messages",
    "langchain",
    "openai-responses",
    "pydantic-ai",
    "gemini",
    "ai-sdk",
];

/// The `entry` case of a `transcript` input: the first byte picks a format
/// ([`TRANSCRIPT_FORMATS`]), the rest is JSON: the `messages` array, or an object with
/// `messages` and (for the formats that have one) `system`. `None` for anything else.
pub fn transcript_case(data: &[u8]) -> Option<(serde_json::Value, Case)> {
    use serde_json::{json, Value};
    let (&pick, rest) = data.split_first()?;
    let format = TRANSCRIPT_FORMATS[usize::from(pick) % TRANSCRIPT_FORMATS.len()];
    let mut transcript = match serde_json::from_slice::<Value>(rest).ok()? {
        messages @ Value::Array(_) => json!({"messages": messages}),
        Value::Object(mut o) => {
            let mut t = json!({"messages": o.remove("messages")?});
            if let Some(system) = o.remove("system") {
                t["system"] = system;
            }
            t
        }
        _ => return None,
    };
    transcript["format"] = json!(format);
    let case = read_case(&json!({"op": "entry", "transcript": transcript}).to_string()).ok()?;
    Some((transcript, case))
}

/// The `transcript` input of a recorded conversation `{"format", "messages", "system"?}`: its
/// format's byte, then `{"messages", "system"}` as JSON (how CI seeds the target with real
/// conversations at run time). `None` for a format not in [`TRANSCRIPT_FORMATS`].
pub fn transcript_input(conversation: &serde_json::Value) -> Option<Vec<u8>> {
    let format = conversation.get("format")?.as_str()?;
    let pick = TRANSCRIPT_FORMATS.iter().position(|f| *f == format)?;
    let mut body = serde_json::json!({"messages": conversation.get("messages")?});
    if let Some(system) = conversation.get("system").filter(|s| !s.is_null()) {
        body["system"] = system.clone();
    }
    let mut data = vec![u8::try_from(pick).ok()?];
    data.extend(serde_json::to_vec(&body).ok()?);
    Some(data)
}

/// `transcript`: a transcript (see [`transcript_case`]) adapted by the wire's `entry`
/// operation on both implementations: never a panic, the same answer ([`check_case`]), and a
/// transcript adapted without error renders back exactly as given (SPEC TRN-6): its messages
/// and its top-level system.
pub fn transcript_bytes(data: &[u8]) {
    let Some((transcript, case)) = transcript_case(data) else {
        return;
    };
    check_case(&case);
    let Ok(output) = run_case(&case, &Engine) else {
        return;
    };
    let output = serde_json::to_value(&output).expect("an output serializes");
    let Some(rendered) = output.get("finalTranscript") else {
        return; // a typed error answer
    };
    assert_eq!(
        rendered["messages"], transcript["messages"],
        "the adapted transcript renders back as given (TRN-6)"
    );
    let given_system = transcript.get("system").filter(|s| !s.is_null());
    assert_eq!(
        rendered.get("system").filter(|s| !s.is_null()),
        given_system,
        "the top-level system renders back as given (TRN-6)"
    );
}
