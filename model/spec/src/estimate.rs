//! Size estimation and trigger evaluation (SPEC EST-1 .. EST-4, POL-3, POL-4).
//!
//! Two estimators are specified here:
//!
//! * [`Utf8ContextEstimator`] (SPEC EST-2), the production default: every text, call id, function
//!   name, argument and result value is measured in UTF-8 bytes; numbers are measured by the
//!   length of their .NET invariant-culture rendering ([`dotnet_f64`], [`dotnet_f32`]).
//! * [`Utf8TextEstimator`] (SPEC EST-4), a test estimator that measures only the message text.
//!
//! [`size`] is the checked 32-bit sum the assembler uses; [`evaluate`] is the standalone trigger
//! evaluation with its cancellation checks (SPEC POL-3, POL-4, ASM-16).

use hybrid_compaction_model::assembly::AssemblyError;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::estimator::{Estimator, MeasurementUnit};
use hybrid_compaction_model::message::Part;
use hybrid_compaction_model::policy::{Policy, TriggerEvaluation};
use hybrid_compaction_model::value::Value;

/// The UTF-8 context estimator (SPEC EST-2), unit `Utf8Bytes`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Utf8ContextEstimator;

impl Estimator for Utf8ContextEstimator {
    fn unit(&self) -> MeasurementUnit {
        // SPEC EST-1: the production estimator measures UTF-8 bytes.
        MeasurementUnit::Utf8Bytes
    }

    fn estimate(&self, entry: &Entry) -> i32 {
        // SPEC EST-2: Σ over parts; role, author and framing are not counted. The per-entry sum
        // is unchecked 32-bit arithmetic (it may wrap; POL-3 then rejects a negative size).
        let mut total: i32 = 0;
        for part in &entry.message().parts {
            let part_size = match part {
                Part::Text(text) => utf8_len(text),
                Part::Call(call) => {
                    let args = match &call.arguments {
                        None => 0,
                        Some(map) => map_size(map),
                    };
                    utf8_len(&call.call_id)
                        .wrapping_add(utf8_len(&call.name))
                        .wrapping_add(args)
                }
                Part::Result(result) => {
                    utf8_len(&result.call_id).wrapping_add(value_size(&result.value))
                }
                // SPEC EST-2: a block measures the bytes of its JSON (what it puts in the request).
                Part::Block(block) => utf8_len(&block.json),
            };
            total = total.wrapping_add(part_size);
        }
        total
    }
}

/// The UTF-8 text estimator (SPEC EST-4), unit `Utf8Bytes`: bytes of the message text (SPEC
/// ENT-3); call and result parts measure 0.
#[derive(Debug, Clone, Copy, Default)]
pub struct Utf8TextEstimator;

impl Estimator for Utf8TextEstimator {
    fn unit(&self) -> MeasurementUnit {
        MeasurementUnit::Utf8Bytes
    }

    fn estimate(&self, entry: &Entry) -> i32 {
        // SPEC EST-4: the concatenated text only.
        utf8_len(&entry.message().text_content())
    }
}

/// UTF-8 byte length of a string as a 32-bit size (SPEC EST-2; .NET strings never exceed
/// `i32::MAX` UTF-16 units, so a wrap here only mirrors the unchecked arithmetic of the reference).
#[allow(
    clippy::cast_possible_truncation,
    reason = "SPEC EST-2: the sum wraps modulo 2^32"
)]
fn utf8_len(s: &str) -> i32 {
    s.len() as i32
}

/// `size(value)` of SPEC EST-2.
pub fn value_size(value: &Value) -> i32 {
    match value {
        // SPEC EST-2: null measures 0.
        Value::Null => 0,
        Value::String(s) => utf8_len(s),
        // SPEC EST-2: `true` / `false`.
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        // SPEC EST-2: numbers measure their invariant-culture rendering.
        Value::I16(n) => utf8_len(&n.to_string()),
        Value::I32(n) => utf8_len(&n.to_string()),
        Value::I64(n) => utf8_len(&n.to_string()),
        Value::U8(n) => utf8_len(&n.to_string()),
        Value::U32(n) => utf8_len(&n.to_string()),
        Value::U64(n) => utf8_len(&n.to_string()),
        Value::F32(x) => utf8_len(&dotnet_f32(*x)),
        Value::F64(x) => utf8_len(&dotnet_f64(*x)),
        Value::Decimal(d) => utf8_len(&d.to_string()),
        // SPEC EST-2: raw JSON measures its exact raw text.
        Value::RawJson(raw) => utf8_len(raw.as_str()),
        Value::Map(map) => map_size(map),
        // SPEC EST-2: list → Σ size(item).
        Value::List(items) => {
            let mut total: i32 = 0;
            for item in items {
                total = total.wrapping_add(value_size(item));
            }
            total
        }
    }
}

/// SPEC EST-2: map → Σ (bytes(key) + size(value)).
fn map_size(map: &hybrid_compaction_model::value::ValueMap) -> i32 {
    let mut total: i32 = 0;
    for (key, value) in map {
        total = total
            .wrapping_add(utf8_len(key))
            .wrapping_add(value_size(value));
    }
    total
}

/// .NET invariant-culture rendering of a `double` (SPEC EST-2): shortest round-trip digits,
/// scientific notation iff the decimal exponent is `> max(digits, 17)` or `< -3`.
pub fn dotnet_f64(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    // `{:e}` yields Rust's shortest round-trip digits for f64.
    render_dotnet(
        x.is_sign_negative(),
        x == 0.0,
        &format!("{:e}", x.abs()),
        17,
    )
}

/// .NET invariant-culture rendering of a `float` (SPEC EST-2): as [`dotnet_f64`] with 9 in place
/// of 17.
pub fn dotnet_f32(x: f32) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    // `{:e}` on f32 yields the shortest digits that round-trip through f32.
    render_dotnet(x.is_sign_negative(), x == 0.0, &format!("{:e}", x.abs()), 9)
}

/// Renders a finite number from Rust's `{:e}` text (`d[.ddd]e[-]N`) with the .NET "R"/"G" rules:
/// `scale` = position of the decimal point relative to the first significant digit.
fn render_dotnet(negative: bool, zero: bool, sci: &str, precision: i64) -> String {
    let sign = if negative { "-" } else { "" };
    if zero {
        // SPEC EST-2: "-0" for negative zero, "0" otherwise.
        return format!("{sign}0");
    }
    let (mantissa, exponent) = match sci.split_once('e') {
        Some(pair) => pair,
        None => (sci, "0"),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let digit_count = digits.len() as i64;
    // value = 0.d1d2... × 10^scale
    let scale = exponent + 1;
    let max_digits = digit_count.max(precision);
    let mut out = String::from(sign);
    if scale > max_digits || scale < -3 {
        // Scientific: d[.ddd]E+XX with at least two exponent digits and an explicit sign.
        out.push_str(&digits[..1]);
        if digit_count > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = scale - 1;
        out.push('E');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", e.abs()));
    } else if scale <= 0 {
        out.push_str("0.");
        for _ in 0..(-scale) {
            out.push('0');
        }
        out.push_str(&digits);
    } else if scale >= digit_count {
        out.push_str(&digits);
        for _ in 0..(scale - digit_count) {
            out.push('0');
        }
    } else {
        let (int_part, frac_part) = digits.split_at(usize::try_from(scale).unwrap_or(0));
        out.push_str(int_part);
        out.push('.');
        out.push_str(frac_part);
    }
    out
}

/// Checked sum of the estimator over `entries` (SPEC POL-3), no cancellation checks (SPEC
/// ASM-16: sizes computed inside the assembler do not observe cancellation).
pub fn size(entries: &[Entry], estimator: &dyn Estimator) -> Result<i32, AssemblyError> {
    let mut total: i32 = 0;
    for entry in entries {
        let s = estimator.estimate(entry);
        // SPEC POL-3: a negative per-entry estimate is an invalid-operation error, never clamped.
        if s < 0 {
            return Err(AssemblyError::NegativeEstimate {
                entry_id: entry.id().as_str().to_owned(),
            });
        }
        // SPEC POL-3: the sum is overflow-checked signed 32-bit.
        total = total.checked_add(s).ok_or(AssemblyError::SizeOverflow)?;
    }
    Ok(total)
}

/// `Evaluate(entries)` (SPEC POL-3, POL-4): cancellation checked before and after the sum.
pub fn evaluate(
    entries: &[Entry],
    policy: &Policy,
    cancel: &CancellationToken,
) -> Result<TriggerEvaluation, AssemblyError> {
    // SPEC POL-3 / ASM-16: cancellation before the sum.
    cancel.check()?;
    let estimated_size = size(entries, policy.estimator())?;
    // SPEC POL-3 / ASM-16: and after it.
    cancel.check()?;
    let trigger_threshold = policy.trigger_threshold();
    Ok(TriggerEvaluation {
        estimated_size,
        hard_limit: policy.hard_limit(),
        trigger_margin: policy.trigger_margin(),
        trigger_threshold,
        // SPEC POL-4: exactly at the threshold triggers.
        triggered: estimated_size >= trigger_threshold,
    })
}
