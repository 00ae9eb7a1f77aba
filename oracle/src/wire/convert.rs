//! Conversions from the wire's inputs ([`super::input`]) to the vocabulary.
//!
//! A case that is syntactically valid may still be rejected by the SPEC (a policy with
//! `HardLimit = 0`, an entry mixing calls and results, an unsupported part). Those become
//! [`CaseError::Answer`], a typed error that is the case's legitimate answer. Inputs the wire
//! format itself cannot express (a `u8` of 300, a malformed decimal, `text` together with
//! `parts`) are [`CaseError::Wire`]: the case is invalid, the CLI exits 2.
//!
//! Estimators the SPEC defines per implementation (the UTF-8 ones of EST-2 and EST-4) and the
//! bridge of an upstream reducer come from the implementation under test; everything else here
//! is vocabulary, the same for both.

use std::collections::BTreeMap;
use std::sync::Arc;

use hybrid_compaction::estimators::{MemoEstimator, TokenEncoding, TokenEstimator};
use hybrid_compaction::transcript::Transcript;
use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::assembly::Reducer;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryError, EntryId, EntryKind, RecoverableSegment};
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::estimator::{ConstantEstimator, Estimator, TableEstimator};
use hybrid_compaction_model::message::{
    Block, FunctionCall, FunctionResult, Message, Part, ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_TOOL,
    ROLE_USER,
};
use hybrid_compaction_model::policy::{Policy, PolicyError, PolicySpec};
use hybrid_compaction_model::reducers::{
    MessageCountingReducer, ProposalItem, ScriptStep, ScriptedReducer, ScriptedUpstreamReducer,
    UpstreamStep,
};
use hybrid_compaction_model::seam::{BoxedUpstream, Implementation};
use hybrid_compaction_model::value::{Decimal, RawJson, Value};
use serde_json::Value as Json;

use super::error::{answer, wire, CaseError, ErrorOutput, WireError};
use super::input::{
    BlockInput, EncodingInput, EntryInput, EstimatorInput, KindInput, MessageInput, PartInput,
    PolicyInput, ProposalItemInput, ReducerInput, ScriptedReducerInput, StepInput, TranscriptInput,
    UpstreamReducerInput, UpstreamStepInput,
};
use super::strict::key_segment;

/// The typed answer of a policy error: its kind and the member it names (SPEC POL-2).
pub(crate) fn policy_error(e: &PolicyError) -> ErrorOutput {
    answer(e.kind(), Some(e.field().name()), None, e.to_string())
}

/// The typed answer of an entry error: its kind, `EntryId` for a blank id, the entry (SPEC ENT-2).
pub(crate) fn entry_error(e: &EntryError) -> ErrorOutput {
    let field = match e {
        EntryError::BlankId => Some("EntryId"),
        _ => None,
    };
    answer(e.kind(), field, e.entry_id(), e.to_string())
}

/// Builds the policy of a case with `imp`'s estimators (SPEC POL-1, POL-2).
pub(crate) fn policy(
    input: Option<&PolicyInput>,
    imp: &dyn Implementation,
    path: &str,
) -> Result<Policy, CaseError> {
    let Some(p) = input else {
        return wire(
            path,
            "missing member `policy` (neither in the case nor in its test group)",
        );
    };
    let estimator = match &p.estimator {
        None => None,
        Some(e) => Some(estimator(e, imp, &format!("{path}.estimator"))?),
    };
    Policy::new(PolicySpec {
        hard_limit: p.hard_limit,
        trigger_margin: p.trigger_margin,
        recent_message_retention_count: p.recent_message_retention_count,
        maximum_compaction_attempts: p.maximum_compaction_attempts,
        preservation_label: p.preservation_label.clone(),
        preservation_version: p.preservation_version,
        estimator,
    })
    .map_err(|e| CaseError::Answer(policy_error(&e)))
}

/// The estimator of a wire estimator, with `imp`'s UTF-8 estimators (SPEC EST-1 .. EST-7);
/// `path` locates it. `recorded` has no sizes outside a trace: a wire error here (the trace
/// reader builds it from the recorded sizes instead).
pub(crate) fn estimator(
    input: &EstimatorInput,
    imp: &dyn Implementation,
    path: &str,
) -> Result<Arc<dyn Estimator>, CaseError> {
    Ok(match input {
        EstimatorInput::Utf8(_) => imp.context_estimator(),
        EstimatorInput::Utf8Text(_) => imp.text_estimator(),
        EstimatorInput::Constant(c) => Arc::new(ConstantEstimator(c.size)),
        EstimatorInput::Table(t) => Arc::new(TableEstimator {
            sizes: t.sizes.clone(),
            default: t.default,
        }),
        EstimatorInput::Tokens(t) => Arc::new(TokenEstimator::new(match t.encoding {
            EncodingInput::O200kBase => TokenEncoding::O200kBase,
            EncodingInput::Cl100kBase => TokenEncoding::Cl100kBase,
        })),
        EstimatorInput::Memo(m) => {
            let inner = estimator(&m.estimator, imp, &format!("{path}.estimator"))?;
            Arc::new(match m.capacity {
                None => MemoEstimator::new(inner),
                Some(c) => MemoEstimator::with_capacity(inner, c as usize),
            })
        }
        EstimatorInput::Recorded(_) => {
            return wire(
                format!("{path}.kind"),
                "the `recorded` estimator reads the sizes a trace records with its entries; a case has none (use `table`)",
            )
        }
    })
}

/// Adapts a wire transcript (SPEC TRN-1 .. TRN-5); its errors are typed answers.
pub(crate) fn transcript(input: &TranscriptInput) -> Result<Transcript, CaseError> {
    let value = serde_json::to_value(input)
        .map_err(|e| CaseError::Wire(WireError::new("$.transcript", e.to_string())))?;
    Transcript::parse(&value)
        .map_err(|e| CaseError::Answer(answer(e.kind(), None, None, format!("transcript: {e}"))))
}

/// Exactly one of `entries` and `transcript` (SPEC TRN-1), converted.
pub(crate) fn entries_or_transcript(
    entries: Option<&[EntryInput]>,
    transcript_input: Option<&TranscriptInput>,
) -> Result<(Vec<Entry>, Option<Transcript>), CaseError> {
    match (entries, transcript_input) {
        (Some(es), None) => Ok((self::entries(es, "$.entries")?, None)),
        (None, Some(t)) => {
            let t = transcript(t)?;
            Ok((t.entries().to_vec(), Some(t)))
        }
        (Some(_), Some(_)) => wire("$", "`entries` and `transcript` are mutually exclusive"),
        (None, None) => wire("$", "missing member `entries` (or `transcript`)"),
    }
}

/// The vocabulary kind of a wire kind.
pub(crate) fn kind(k: KindInput) -> EntryKind {
    k.0
}

/// A block part (SPEC ENT-8): its JSON written compactly; an empty type is refused at `path`.
fn block(b: &BlockInput, path: &str) -> Result<Part, CaseError> {
    if b.block_type.is_empty() {
        return wire(
            path,
            "a block's type names what the provider calls it: not empty",
        );
    }
    Ok(Part::Block(Block {
        kind: b.kind.0,
        block_type: b.block_type.clone(),
        json: b.json.to_string(),
        tokens: b.tokens,
    }))
}

/// Converts `text`/`parts` into message parts. `Unsupported` parts yield a `NotSupported`
/// answer naming `entry_id` (SPEC ENT-3, DEP-19).
fn parts(
    text: Option<&String>,
    parts: Option<&Vec<PartInput>>,
    entry_id: Option<&str>,
    path: &str,
) -> Result<Vec<Part>, CaseError> {
    match (text, parts) {
        (Some(_), Some(_)) => wire(path, "`text` and `parts` are mutually exclusive"),
        (Some(t), None) => Ok(vec![Part::Text(t.clone())]),
        (None, None) => Ok(Vec::new()),
        (None, Some(ps)) => {
            let mut out = Vec::with_capacity(ps.len());
            for (i, p) in ps.iter().enumerate() {
                let pp = format!("{path}.parts[{i}]");
                out.push(match p {
                    PartInput::Text(t) => Part::Text(t.clone()),
                    PartInput::Call(c) => {
                        let arguments = match &c.arguments {
                            None => None,
                            Some(m) => Some(map(m, &format!("{pp}.call.arguments"), entry_id)?),
                        };
                        Part::Call(FunctionCall {
                            call_id: c.call_id.clone(),
                            name: c.name.clone(),
                            arguments,
                            informational_only: c.informational_only,
                        })
                    }
                    PartInput::Result(r) => Part::Result(FunctionResult {
                        call_id: r.call_id.clone(),
                        value: value(&r.value, &format!("{pp}.result.value"), entry_id)?,
                    }),
                    PartInput::Unsupported(type_name) => {
                        return Err(CaseError::Answer(answer(
                            ErrorKind::NotSupported,
                            None,
                            entry_id,
                            format!(
                                "content type `{type_name}` is outside the closed content model"
                            ),
                        )))
                    }
                    PartInput::Block(b) => block(b, &format!("{pp}.block.type"))?,
                });
            }
            Ok(out)
        }
    }
}

/// Constructs one entry (SPEC ENT-2 .. ENT-6); `path` locates it for wire errors.
pub(crate) fn entry(input: &EntryInput, path: &str) -> Result<Entry, CaseError> {
    let k = kind(input.kind);
    // SPEC ENT-2 first: a blank id fails before anything else is looked at.
    if let Err(e) = EntryId::new(&input.id) {
        return Err(CaseError::Answer(entry_error(&e)));
    }
    if let Some(seg) = &input.segment {
        if k != EntryKind::RecoverableContextSegment {
            return wire(
                format!("{path}.segment"),
                "`segment` is only allowed with kind RecoverableContextSegment",
            );
        }
        if input.text.is_some() || input.parts.is_some() || input.role.is_some() {
            return wire(
                path,
                "a segment entry takes no `role`, `text` or `parts` (the body is its text)",
            );
        }
        let reference = match &seg.reference {
            None => ArtifactReference::to_content(&seg.body),
            Some(r) => ArtifactReference::parse(r).map_err(|e| {
                CaseError::Answer(answer(
                    ErrorKind::InvalidArgument,
                    Some("Reference"),
                    Some(&input.id),
                    e.to_string(),
                ))
            })?,
        };
        // SPEC ENT-6: the recoverable-segment factory.
        return Entry::recoverable(
            &input.id,
            RecoverableSegment {
                reference,
                body: seg.body.clone(),
            },
        )
        .map_err(|e| CaseError::Answer(entry_error(&e)));
    }
    let ps = parts(
        input.text.as_ref(),
        input.parts.as_ref(),
        Some(&input.id),
        path,
    )?;
    let role = match &input.role {
        Some(r) => r.clone(),
        None => default_role(k, &ps).to_owned(),
    };
    let message = Message {
        role,
        author: input.author.clone(),
        parts: ps,
    };
    Entry::new(&input.id, k, message).map_err(|e| CaseError::Answer(entry_error(&e)))
}

/// The documented role default of an entry without `role`.
fn default_role(k: EntryKind, parts: &[Part]) -> &'static str {
    if parts.iter().any(|p| matches!(p, Part::Call(_))) {
        ROLE_ASSISTANT
    } else if parts.iter().any(|p| matches!(p, Part::Result(_))) {
        ROLE_TOOL
    } else if k == EntryKind::SystemInstruction {
        ROLE_SYSTEM
    } else {
        ROLE_USER
    }
}

/// Constructs a list of entries, stopping at the first failure.
pub(crate) fn entries(inputs: &[EntryInput], path: &str) -> Result<Vec<Entry>, CaseError> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, e)| entry(e, &format!("{path}[{i}]")))
        .collect()
}

/// Converts a message of an upstream script.
pub(crate) fn message(input: &MessageInput, path: &str) -> Result<Message, CaseError> {
    Ok(Message {
        role: input.role.clone(),
        author: input.author.clone(),
        parts: parts(input.text.as_ref(), input.parts.as_ref(), None, path)?,
    })
}

fn map<'a>(
    m: impl IntoIterator<Item = (&'a String, &'a Json)>,
    path: &str,
    entry_id: Option<&str>,
) -> Result<BTreeMap<String, Value>, CaseError> {
    let mut out = BTreeMap::new();
    for (k, v) in m {
        out.insert(
            k.clone(),
            value(v, &format!("{path}{}", key_segment(k)), entry_id)?,
        );
    }
    Ok(out)
}

fn int_in<T: TryFrom<i128>>(v: &Json, path: &str, name: &str) -> Result<T, CaseError> {
    let n: Option<i128> = match v {
        Json::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from)),
        _ => None,
    };
    match n.map(T::try_from) {
        Some(Ok(x)) => Ok(x),
        Some(Err(_)) => wire(path, format!("{name} out of range: {v}")),
        None => wire(path, format!("expected an integer for `{name}`, got {v}")),
    }
}

fn float(v: &Json, path: &str, name: &str) -> Result<f64, CaseError> {
    match v {
        Json::Number(n) => match n.as_f64() {
            Some(x) => Ok(x),
            None => wire(path, format!("{name}: number not representable")),
        },
        Json::String(s) => match s.as_str() {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            "-0" => Ok(-0.0),
            _ => wire(
                path,
                format!("{name}: expected a number or one of \"NaN\", \"Infinity\", \"-Infinity\", \"-0\""),
            ),
        },
        _ => wire(path, format!("{name}: expected a number, got {v}")),
    }
}

/// Converts a wire value (SPEC ENT-4; see `docs/WIRE.md`, "Values").
pub(crate) fn value(v: &Json, path: &str, entry_id: Option<&str>) -> Result<Value, CaseError> {
    match v {
        Json::Null => Ok(Value::Null),
        Json::Bool(b) => Ok(Value::Bool(*b)),
        Json::String(s) => Ok(Value::String(s.clone())),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(match i32::try_from(i) {
                    Ok(x) => Value::I32(x),
                    Err(_) => Value::I64(i),
                })
            } else if let Some(u) = n.as_u64() {
                Ok(Value::U64(u))
            } else {
                float(v, path, "number").map(Value::F64)
            }
        }
        Json::Array(items) => Ok(Value::List(list(items, path, entry_id)?)),
        Json::Object(obj) => {
            if obj.len() != 1 {
                return wire(
                    path,
                    "a value object must have exactly one tag key (string, bool, i16, i32, i64, u8, u32, u64, f32, f64, decimal, raw, map, list, unsupported); use {\"map\": {...}} for maps",
                );
            }
            let (tag, inner) = obj.iter().next().expect("one key");
            let p = format!("{path}.{tag}");
            match tag.as_str() {
                "string" => match inner {
                    Json::String(s) => Ok(Value::String(s.clone())),
                    _ => wire(&p, "expected a string"),
                },
                "bool" => match inner {
                    Json::Bool(b) => Ok(Value::Bool(*b)),
                    _ => wire(&p, "expected a boolean"),
                },
                "i16" => int_in(inner, &p, "i16").map(Value::I16),
                "i32" => int_in(inner, &p, "i32").map(Value::I32),
                "i64" => int_in(inner, &p, "i64").map(Value::I64),
                "u8" => int_in(inner, &p, "u8").map(Value::U8),
                "u32" => int_in(inner, &p, "u32").map(Value::U32),
                "u64" => int_in(inner, &p, "u64").map(Value::U64),
                "f64" => float(inner, &p, "f64").map(Value::F64),
                "f32" => {
                    let x = match inner {
                        // Parse the shortest decimal text directly as f32 (no double rounding).
                        Json::Number(n) => n.to_string().parse::<f32>().ok(),
                        // Only "NaN", "Infinity", "-Infinity" and "-0" reach here: exact in f32.
                        #[allow(clippy::cast_possible_truncation, reason = "special values only")]
                        _ => Some(float(inner, &p, "f32")? as f32),
                    };
                    match x {
                        Some(x) if x.is_finite() || !matches!(inner, Json::Number(_)) => {
                            Ok(Value::F32(x))
                        }
                        _ => wire(&p, format!("f32 out of range: {inner}")),
                    }
                }
                "decimal" => match inner {
                    Json::String(s) => Decimal::parse(s).map(Value::Decimal).or_else(|_| {
                        wire(
                            &p,
                            "expected a decimal string -?digits[.digits], scale <= 28, |mantissa| < 2^96",
                        )
                    }),
                    _ => wire(&p, "expected a decimal string such as \"1.50\""),
                },
                "raw" => match inner {
                    Json::String(s) if nesting_exceeds(s, MAX_NESTING) => wire(
                        &p,
                        format!("raw JSON nested deeper than {MAX_NESTING} levels"),
                    ),
                    Json::String(s) => RawJson::new(s.clone()).map(Value::RawJson).or_else(|_| {
                        wire(
                            &p,
                            "expected the text of exactly one JSON value without surrounding whitespace",
                        )
                    }),
                    _ => wire(&p, "expected a string holding raw JSON text"),
                },
                "map" => match inner {
                    Json::Object(m) => Ok(Value::Map(map(m, &p, entry_id)?)),
                    _ => wire(&p, "expected an object"),
                },
                "list" => match inner {
                    Json::Array(items) => Ok(Value::List(list(items, &p, entry_id)?)),
                    _ => wire(&p, "expected an array"),
                },
                "unsupported" => match inner {
                    Json::String(t) => Err(CaseError::Answer(answer(
                        ErrorKind::NotSupported,
                        None,
                        entry_id,
                        format!("value type `{t}` is outside the closed value set"),
                    ))),
                    _ => wire(&p, "expected a type name string"),
                },
                other => wire(path, format!("unknown value tag `{other}`")),
            }
        }
    }
}

/// The deepest nesting the wire format accepts, in the case text and inside `raw` values.
pub(crate) const MAX_NESTING: usize = 128;

/// True if the JSON text `s` opens more than `max` arrays/objects at once (strings skipped).
fn nesting_exceeds(s: &str, max: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for b in s.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

fn list(items: &[Json], path: &str, entry_id: Option<&str>) -> Result<Vec<Value>, CaseError> {
    items
        .iter()
        .enumerate()
        .map(|(i, x)| value(x, &format!("{path}[{i}]"), entry_id))
        .collect()
}

/// A named cancellation point (see `docs/WIRE.md`, "Cancellation").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CancelPoint {
    /// The token is cancelled before the operation starts.
    Before,
    /// The token is cancelled during the K-th capture (0-based).
    Capture(usize),
    /// The token is cancelled during the K-th reducer invocation (0-based), before it answers.
    Reducer(usize),
}

/// Parses `before`, `capture:K`, `reducer:K`.
pub(crate) fn cancel_point(
    s: Option<&String>,
    path: &str,
) -> Result<Option<CancelPoint>, CaseError> {
    let Some(s) = s else { return Ok(None) };
    let bad = || {
        wire(
            path,
            format!("expected `before`, `capture:K` or `reducer:K` (K a non-negative integer), got {s:?}"),
        )
    };
    if s == "before" {
        return Ok(Some(CancelPoint::Before));
    }
    let (name, k) = match s.split_once(':') {
        Some(x) => x,
        None => return bad(),
    };
    if k.is_empty() || !k.bytes().all(|b| b.is_ascii_digit()) {
        return bad();
    }
    let Ok(k) = k.parse::<usize>() else {
        return bad();
    };
    match name {
        "capture" => Ok(Some(CancelPoint::Capture(k))),
        "reducer" => Ok(Some(CancelPoint::Reducer(k))),
        _ => bad(),
    }
}

/// A token already cancelled for `before`, else a fresh one; `allow_points`: whether the
/// operation takes the points inside it (`capture:K`, `reducer:K`), else only `before`.
pub(crate) fn token_for(
    point: Option<CancelPoint>,
    path: &str,
    allow_points: bool,
) -> Result<CancellationToken, CaseError> {
    match point {
        None => Ok(CancellationToken::new()),
        Some(CancelPoint::Before) => Ok(CancellationToken::cancelled()),
        Some(_) if !allow_points => wire(path, "only `before` is meaningful for this operation"),
        Some(_) => Ok(CancellationToken::new()),
    }
}

/// The steps of an entry-level script (`$.reducer.steps[i]`).
pub(crate) fn script_steps(s: &ScriptedReducerInput) -> Result<Vec<ScriptStep>, CaseError> {
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
                        ProposalItemInput::New(n) => {
                            ProposalItem::New(entry(&n.new, &format!("{path}.propose[{j}].new"))?)
                        }
                    });
                }
                ScriptStep::Propose(out)
            }
        });
    }
    Ok(steps)
}

/// The steps of a message-level script (`$.reducer.steps[i]`).
pub(crate) fn upstream_steps(u: &UpstreamReducerInput) -> Result<Vec<UpstreamStep>, CaseError> {
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
                    out.push(message(m, &format!("{path}.return[{j}]"))?);
                }
                UpstreamStep::Return(out)
            }
        });
    }
    Ok(steps)
}

/// The upstream (message-level) reducer of `$.reducer`: a script or the message-counting
/// reducer; absent: a script that always echoes. An entry-level script is a wire error.
pub(crate) fn upstream(input: Option<&ReducerInput>) -> Result<BoxedUpstream<'static>, CaseError> {
    Ok(match input {
        None => Box::new(ScriptedUpstreamReducer::new(Vec::new())),
        Some(ReducerInput::MessageCounting(m)) => Box::new(MessageCountingReducer {
            target_count: m.target_count as usize,
        }),
        Some(ReducerInput::Upstream(u)) => {
            Box::new(ScriptedUpstreamReducer::new(upstream_steps(u)?))
        }
        Some(ReducerInput::Scripted(_)) => return wire(
            "$.reducer.kind",
            "the node takes an upstream (message-level) reducer: `upstream` or `messageCounting`",
        ),
    })
}

/// The entry-level reducer of `$.reducer`: an entry-level script as it is, an upstream reducer
/// behind `imp`'s bridge (SPEC BRG-1); absent: a script that always echoes.
pub(crate) fn reducer(
    input: Option<&ReducerInput>,
    imp: &dyn Implementation,
) -> Result<Box<dyn Reducer + Send>, CaseError> {
    Ok(match input {
        None => Box::new(ScriptedReducer::new(Vec::new())),
        Some(ReducerInput::Scripted(s)) => Box::new(ScriptedReducer::new(script_steps(s)?)),
        Some(upstream_input) => imp.bridge(upstream(Some(upstream_input))?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_kinds_are_the_entry_kinds_by_name() {
        for k in EntryKind::ALL {
            let json = serde_json::json!(k.name());
            let wire: KindInput = serde_json::from_value(json.clone()).expect("a kind name");
            assert_eq!(kind(wire), k);
            assert_eq!(serde_json::to_value(wire).ok(), Some(json));
        }
        let err = serde_json::from_value::<KindInput>(serde_json::json!("Nope")).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("unknown entry kind \"Nope\", expected one of SystemInstruction"));
    }
}
