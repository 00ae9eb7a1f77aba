//! The text renderings the token estimator counts (SPEC EST-6).
//!
//! Provider tokenizers see text, so a structured value is counted through one fixed rendering,
//! written here so another language can reproduce it byte for byte:
//!
//! - **Compact JSON** of a value ([`write_json`]): `null`, `true` / `false`; numbers in the EST-2
//!   number text (integers plain, floats in the .NET invariant shortest round-trip form, decimals
//!   keeping their scale); raw JSON verbatim; strings quoted with the escapes of
//!   `json.dumps(..., ensure_ascii=False)` / `serde_json` (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`,
//!   `\t`, other characters below U+0020 as `\u00xx` in lowercase hex, everything else literal);
//!   maps as `{"k":v,...}` with keys in code point order; lists as `[v,...]`; no whitespace.
//! - **Result text** ([`result_text`]): a string result is its own text (a tool message's
//!   content); any other value is its compact JSON.

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::engine::classify::dotnet_float;
use hybrid_compaction_model::value::{Value, ValueMap};

/// The text a tool result is counted as (SPEC EST-6): a string as-is, else its compact JSON.
pub fn result_text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(s) => Cow::Borrowed(s),
        other => {
            let mut out = String::new();
            write_json(other, &mut out);
            Cow::Owned(out)
        }
    }
}

/// The compact JSON of an argument map (SPEC EST-6).
pub fn map_json(map: &ValueMap) -> String {
    let mut out = String::new();
    write_map(map, &mut out);
    out
}

/// Appends the compact JSON of an argument map to `out` (SPEC EST-6): [`map_json`] into a buffer
/// the caller reuses.
pub fn write_map_json(map: &ValueMap, out: &mut String) {
    write_map(map, out);
}

/// Appends the compact JSON of `value` to `out` (SPEC EST-6; numbers as EST-2).
pub fn write_json(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::String(s) => write_string(s, out),
        Value::I16(n) => push_display(out, n),
        Value::I32(n) => push_display(out, n),
        Value::I64(n) => push_display(out, n),
        Value::U8(n) => push_display(out, n),
        Value::U32(n) => push_display(out, n),
        Value::U64(n) => push_display(out, n),
        Value::F32(x) => float_text(f64::from(*x), &format!("{:e}", x.abs()), 9, out),
        Value::F64(x) => float_text(*x, &format!("{:e}", x.abs()), 17, out),
        Value::Decimal(d) => push_display(out, d),
        Value::RawJson(raw) => out.push_str(raw.as_str()),
        Value::Map(map) => write_map(map, out),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
    }
}

fn push_display(out: &mut String, value: &impl std::fmt::Display) {
    // Writing into a String cannot fail.
    let _ = write!(out, "{value}");
}

fn write_map(map: &ValueMap, out: &mut String) {
    out.push('{');
    // BTreeMap iterates in byte order of the UTF-8 keys, which is code point order.
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(k, out);
        out.push(':');
        write_json(v, out);
    }
    out.push('}');
}

/// A JSON string literal with the escapes of `json.dumps(ensure_ascii=False)`.
fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The .NET invariant rendering of a float (SPEC EST-2) from `sci`, Rust's shortest round-trip
/// `{:e}` text of its magnitude, with `precision` 17 (`f64`) or 9 (`f32`): the engine's rendering.
fn float_text(x: f64, sci: &str, precision: i64, out: &mut String) {
    out.push_str(&dotnet_float(
        x.is_nan(),
        x.is_infinite(),
        x.is_sign_negative(),
        x == 0.0,
        sci,
        precision,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use hybrid_compaction_model::value::{Decimal, RawJson};

    fn json(v: &Value) -> String {
        let mut s = String::new();
        write_json(v, &mut s);
        s
    }

    #[test]
    fn numbers_use_the_est2_text() {
        assert_eq!(json(&Value::F64(1e21)), "1E+21");
        assert_eq!(json(&Value::F64(100.0)), "100");
        assert_eq!(json(&Value::F64(0.0001)), "0.0001");
        assert_eq!(json(&Value::F64(0.00001)), "1E-05");
        assert_eq!(json(&Value::F64(-2.5)), "-2.5");
        assert_eq!(json(&Value::F32(0.1)), "0.1");
        assert_eq!(json(&Value::F64(f64::NEG_INFINITY)), "-Infinity");
        assert_eq!(json(&Value::F64(-0.0)), "-0");
        assert_eq!(json(&Value::Decimal(Decimal::new(150, 2).unwrap())), "1.50");
        assert_eq!(json(&Value::I64(-7)), "-7");
    }

    #[test]
    fn strings_maps_and_lists_are_compact_json() {
        let mut map = ValueMap::new();
        map.insert("é".into(), Value::String("a\"b\\c\n\u{1}ü".into()));
        map.insert(
            "a".into(),
            Value::List(vec![Value::Null, Value::Bool(false)]),
        );
        map.insert("r".into(), Value::RawJson(RawJson::new("{ }").unwrap()));
        assert_eq!(
            map_json(&map),
            "{\"a\":[null,false],\"r\":{ },\"é\":\"a\\\"b\\\\c\\n\\u0001ü\"}"
        );
        assert_eq!(result_text(&Value::String("x".into())), "x");
        assert_eq!(result_text(&Value::I32(3)), "3");
    }
}
