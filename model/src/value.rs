//! The closed set of argument and result values (SPEC ENT-4).
//!
//! Values form a closed recursive set: null, string, bool, six integer widths, two float widths,
//! decimal, raw JSON kept with its exact text, string-keyed maps and lists. Numeric variants are
//! distinct: `I32(1) != I64(1)` (SPEC ENT-4). Structural equality (SPEC VER-2) is the derived
//! `PartialEq` except for [`Decimal`], which compares by numeric value like .NET's `decimal`.

use std::collections::BTreeMap;
use std::fmt;

/// Why a value could not be constructed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// A decimal's scale exceeds 28 or its mantissa does not fit in 96 bits.
    #[error("decimal out of range: scale must be 0..=28 and |mantissa| < 2^96")]
    DecimalOutOfRange,
    /// Raw JSON text is not a single valid JSON value without surrounding whitespace.
    #[error("raw JSON is not a single valid JSON value without surrounding whitespace")]
    InvalidRawJson,
}

/// A string-keyed map of values. Key order is irrelevant to equality and size (SPEC VER-2, EST-2).
pub type ValueMap = BTreeMap<String, Value>;

/// One argument or result value (SPEC ENT-4).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// JSON-like null; measures 0 (SPEC EST-2).
    Null,
    /// A string; measures its UTF-8 byte length.
    String(String),
    /// A boolean; measures 4 (`true`) or 5 (`false`).
    Bool(bool),
    /// Signed 16-bit integer.
    I16(i16),
    /// Signed 32-bit integer.
    I32(i32),
    /// Signed 64-bit integer.
    I64(i64),
    /// Unsigned 8-bit integer.
    U8(u8),
    /// Unsigned 32-bit integer.
    U32(u32),
    /// Unsigned 64-bit integer.
    U64(u64),
    /// 32-bit float (`NaN != NaN`).
    F32(f32),
    /// 64-bit float (`NaN != NaN`).
    F64(f64),
    /// .NET-style decimal: compares by value, renders with its scale.
    Decimal(Decimal),
    /// Raw JSON, kept and compared by its exact text.
    RawJson(RawJson),
    /// String-keyed map.
    Map(ValueMap),
    /// Ordered list.
    List(Vec<Value>),
}

/// A .NET `System.Decimal`: a 96-bit magnitude with a decimal scale 0..=28.
///
/// Equality is numeric (`1.50 == 1.5`), rendering keeps the scale (`1.50`), as in .NET. Negative
/// zero is normalised to zero (a documented choice, SPEC EST-2).
#[derive(Debug, Clone, Copy)]
pub struct Decimal {
    mantissa: i128,
    scale: u8,
}

const DECIMAL_MAX_MAGNITUDE: u128 = (1u128 << 96) - 1;

impl Decimal {
    /// `mantissa / 10^scale`; requires `scale <= 28` and `|mantissa| < 2^96`.
    pub fn new(mantissa: i128, scale: u8) -> Result<Decimal, ValueError> {
        if scale > 28 || mantissa.unsigned_abs() > DECIMAL_MAX_MAGNITUDE {
            return Err(ValueError::DecimalOutOfRange);
        }
        Ok(Decimal { mantissa, scale })
    }

    /// Parses `-?digits(.digits)?` keeping the written scale (`"1.50"` has scale 2).
    pub fn parse(text: &str) -> Result<Decimal, ValueError> {
        let (neg, body) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (int_part, frac_part) = match body.split_once('.') {
            Some((i, f)) => (i, f),
            None => (body, ""),
        };
        let valid = !int_part.is_empty()
            && int_part.bytes().all(|b| b.is_ascii_digit())
            && frac_part.bytes().all(|b| b.is_ascii_digit())
            && !(body.contains('.') && frac_part.is_empty());
        // Scale 0..=28 (ENT-4), so it fits a `u8`.
        let scale = match u8::try_from(frac_part.len()) {
            Ok(scale) if valid && scale <= 28 => scale,
            _ => return Err(ValueError::DecimalOutOfRange),
        };
        let mut mantissa: i128 = 0;
        for b in int_part.bytes().chain(frac_part.bytes()) {
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(i128::from(b - b'0')))
                .ok_or(ValueError::DecimalOutOfRange)?;
            if mantissa.unsigned_abs() > DECIMAL_MAX_MAGNITUDE {
                return Err(ValueError::DecimalOutOfRange);
            }
        }
        Decimal::new(if neg { -mantissa } else { mantissa }, scale)
    }

    /// The signed mantissa.
    pub fn mantissa(&self) -> i128 {
        self.mantissa
    }

    /// The decimal scale (digits after the point).
    pub fn scale(&self) -> u8 {
        self.scale
    }

    /// The value with trailing fractional zeros removed (for numeric comparison).
    fn normalized(&self) -> (i128, u8) {
        let (mut m, mut s) = (self.mantissa, self.scale);
        while s > 0 && m % 10 == 0 {
            m /= 10;
            s -= 1;
        }
        (m, s)
    }
}

impl PartialEq for Decimal {
    fn eq(&self, other: &Decimal) -> bool {
        self.normalized() == other.normalized()
    }
}

impl fmt::Display for Decimal {
    /// Invariant-culture rendering keeping the scale: `1.50`, `-0.001`, `42` (SPEC EST-2).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.mantissa.unsigned_abs().to_string();
        let scale = self.scale as usize;
        if self.mantissa < 0 {
            f.write_str("-")?;
        }
        if scale == 0 {
            return f.write_str(&digits);
        }
        let padded = if digits.len() <= scale {
            format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits)
        } else {
            digits
        };
        let (int_part, frac_part) = padded.split_at(padded.len() - scale);
        write!(f, "{int_part}.{frac_part}")
    }
}

/// Raw JSON text, kept exactly as given (SPEC ENT-4) and compared by that text (SPEC VER-2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawJson(String);

impl RawJson {
    /// Accepts exactly one JSON value with no leading or trailing whitespace.
    pub fn new(text: impl Into<String>) -> Result<RawJson, ValueError> {
        let text = text.into();
        let trimmed_same =
            text.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\r')) == text;
        if text.is_empty() || !trimmed_same {
            return Err(ValueError::InvalidRawJson);
        }
        // IgnoredAny scans numbers without converting them, so `1e400` is accepted as JSON text.
        serde_json::from_str::<serde::de::IgnoredAny>(&text)
            .map_err(|_| ValueError::InvalidRawJson)?;
        Ok(RawJson(text))
    }

    /// The exact raw text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// If the raw JSON is a JSON string, its decoded content (SPEC ENT-5.3, CLS-2).
    pub fn as_json_string(&self) -> Option<String> {
        if !self.0.starts_with('"') {
            return None;
        }
        serde_json::from_str::<String>(&self.0).ok()
    }
}
