//! JSON Schemas (draft 2020-12) of the wire format, derived from the serde types with
//! `schemars`: the contract another implementation can generate types from or pre-validate with.
//!
//! The derived schemas state every rule the parser applies that JSON Schema can say: required
//! members, closed objects, names (`enum` / `const`), patterns (cancellation points, decimal
//! scale, override keys) and the cross-member rules (`text` xor `parts`, `entries` xor
//! `transcript`, ...) written on the types with `#[schemars(extend(...))]`. One generic pass
//! here adds what `schemars` leaves to the `format` annotation, which validators do not assert:
//! every integer `format` (`int32`, `uint32`, ...) also gets its `minimum` and `maximum`. The
//! rules no schema can express are listed in `docs/WIRE.md` ("Rules the schema cannot
//! express"); `tests/bad_input.rs` checks the schema and the parser agree on everything else.

use serde_json::Value as Json;

use crate::corpus::VectorFile;
use crate::ops::{Case, Output};

/// The schema of one case.
pub fn case_schema() -> Json {
    with_ranges(serde_json::to_value(schemars::schema_for!(Case)).unwrap_or(Json::Null))
}

/// The schema of one output: a typed error, or the answer of one operation (the operations'
/// answer types each name their one member, so the alternatives exclude each other).
pub fn output_schema() -> Json {
    with_ranges(serde_json::to_value(schemars::schema_for!(Output)).unwrap_or(Json::Null))
}

/// The schema of a vector file.
pub fn vector_file_schema() -> Json {
    with_ranges(serde_json::to_value(schemars::schema_for!(VectorFile)).unwrap_or(Json::Null))
}

/// The range of an integer `format` as emitted by `schemars`.
fn range(format: &str) -> Option<(Json, Json)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        "uint8" => (0.into(), u8::MAX.into()),
        "uint16" => (0.into(), u16::MAX.into()),
        "uint32" => (0.into(), u32::MAX.into()),
        "uint64" | "uint" => (0.into(), u64::MAX.into()),
        _ => return None,
    })
}

/// Adds `minimum` / `maximum` to every integer schema with a sized `format`.
fn with_ranges(mut schema: Json) -> Json {
    fn walk(v: &mut Json) {
        match v {
            Json::Object(o) => {
                let is_int = match o.get("type") {
                    Some(Json::String(t)) => t == "integer",
                    Some(Json::Array(ts)) => ts.iter().any(|t| t == "integer"),
                    _ => false,
                };
                let bounds = o.get("format").and_then(Json::as_str).and_then(range);
                if let (true, Some((min, max))) = (is_int, bounds) {
                    o.entry("minimum").or_insert(min);
                    o.entry("maximum").or_insert(max);
                }
                o.values_mut().for_each(walk);
            }
            Json::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut schema);
    schema
}

/// The JSON Schema every line of a trace validates against (`docs/TRACE.md`): the header or
/// a record.
pub fn trace_schema() -> Json {
    hybrid_compaction_trace::format::schema()
}

/// All three schemas, keyed `case`, `output`, `vectorFile`.
pub fn all() -> Json {
    serde_json::json!({
        "case": case_schema(),
        "output": output_schema(),
        "vectorFile": vector_file_schema(),
    })
}
