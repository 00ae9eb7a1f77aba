//! JSON Schemas of the wire format, derived from the serde types with `schemars`, plus a small
//! validator for the subset of JSON Schema those derived schemas use.
//!
//! The validator exists so that the test suite (and `vectors`) can check every shipped vector
//! against the published schema without a heavy dependency. It understands `$ref` (local
//! `#/$defs/...`), `type`, `enum`, `const`, `properties`, `required`, `additionalProperties`,
//! `items`, `oneOf`, `anyOf`, `allOf`, `minimum`, `maximum` and the integer `format`s schemars
//! emits (`int32`, `uint32`, `int64`, `uint64`, `uint`, `uint8`, `int16`); other keywords
//! (`description`, `title`, `pattern`, ...) are ignored.

use serde_json::Value as Json;

use super::case::Case;
use super::output::Output;
use super::vectors::VectorFile;

/// The schema of one case.
pub fn case_schema() -> Json {
    serde_json::to_value(schemars::schema_for!(Case)).unwrap_or(Json::Null)
}

/// The schema of one output.
pub fn output_schema() -> Json {
    serde_json::to_value(schemars::schema_for!(Output)).unwrap_or(Json::Null)
}

/// The schema of a vector file.
pub fn vector_file_schema() -> Json {
    serde_json::to_value(schemars::schema_for!(VectorFile)).unwrap_or(Json::Null)
}

/// All three schemas, keyed `case`, `output`, `vectorFile`.
pub fn all() -> Json {
    serde_json::json!({
        "case": case_schema(),
        "output": output_schema(),
        "vectorFile": vector_file_schema(),
    })
}

/// Validates `value` against `schema` (the root, which holds `$defs`). Returns every violation
/// as `path: message`; empty means valid.
pub fn validate(schema: &Json, value: &Json) -> Vec<String> {
    let mut errors = Vec::new();
    check(schema, schema, value, "$", &mut errors, 0);
    errors
}

fn type_ok(t: &str, v: &Json) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_i64().is_some() || v.as_u64().is_some(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    }
}

fn format_ok(f: &str, v: &Json) -> bool {
    let (i, u) = (v.as_i64(), v.as_u64());
    match f {
        "int16" => i.is_some_and(|x| i16::try_from(x).is_ok()),
        "int32" => i.is_some_and(|x| i32::try_from(x).is_ok()),
        "int64" => i.is_some(),
        "uint8" => u.is_some_and(|x| u8::try_from(x).is_ok()),
        "uint16" => u.is_some_and(|x| u16::try_from(x).is_ok()),
        "uint32" => u.is_some_and(|x| u32::try_from(x).is_ok()),
        "uint64" | "uint" => u.is_some(),
        _ => true,
    }
}

fn check(root: &Json, schema: &Json, v: &Json, path: &str, errs: &mut Vec<String>, depth: usize) {
    if depth > 256 {
        errs.push(format!("{path}: schema nesting too deep"));
        return;
    }
    let obj = match schema {
        Json::Bool(true) => return,
        Json::Bool(false) => {
            errs.push(format!("{path}: no value is allowed here"));
            return;
        }
        Json::Object(o) => o,
        _ => return,
    };
    if let Some(Json::String(r)) = obj.get("$ref") {
        match r
            .strip_prefix("#/$defs/")
            .and_then(|name| root.get("$defs").and_then(|d| d.get(name)))
        {
            Some(target) => check(root, target, v, path, errs, depth + 1),
            None if r == "#" => check(root, root, v, path, errs, depth + 1),
            None => errs.push(format!("{path}: unresolvable $ref {r}")),
        }
    }
    if let Some(t) = obj.get("type") {
        let ok = match t {
            Json::String(s) => type_ok(s, v),
            Json::Array(ts) => ts.iter().any(|x| x.as_str().is_some_and(|s| type_ok(s, v))),
            _ => true,
        };
        if !ok {
            errs.push(format!("{path}: expected type {t}, got {v}"));
            return;
        }
    }
    if let Some(Json::String(f)) = obj.get("format") {
        if v.is_number() && !format_ok(f, v) {
            errs.push(format!("{path}: {v} is not a valid {f}"));
        }
    }
    if let Some(Json::Array(options)) = obj.get("enum") {
        if !options.contains(v) {
            errs.push(format!(
                "{path}: {v} is not one of {}",
                Json::Array(options.clone())
            ));
        }
    }
    if let Some(c) = obj.get("const") {
        if c != v {
            errs.push(format!("{path}: expected {c}, got {v}"));
        }
    }
    if let Some(min) = obj.get("minimum").and_then(Json::as_f64) {
        if v.as_f64().is_some_and(|x| x < min) {
            errs.push(format!("{path}: {v} is below the minimum {min}"));
        }
    }
    if let Some(max) = obj.get("maximum").and_then(Json::as_f64) {
        if v.as_f64().is_some_and(|x| x > max) {
            errs.push(format!("{path}: {v} is above the maximum {max}"));
        }
    }
    if let Json::Object(vo) = v {
        let props = obj.get("properties").and_then(Json::as_object);
        if let Some(Json::Array(req)) = obj.get("required") {
            for r in req.iter().filter_map(Json::as_str) {
                if !vo.contains_key(r) {
                    errs.push(format!("{path}: missing required property `{r}`"));
                }
            }
        }
        for (k, x) in vo {
            let p = format!("{path}.{k}");
            match props.and_then(|ps| ps.get(k)) {
                Some(s) => check(root, s, x, &p, errs, depth + 1),
                None => match obj.get("additionalProperties") {
                    Some(Json::Bool(false)) => errs.push(format!("{path}: unknown property `{k}`")),
                    Some(s @ Json::Object(_)) => check(root, s, x, &p, errs, depth + 1),
                    _ => {}
                },
            }
        }
    }
    if let (Json::Array(items), Some(s)) = (v, obj.get("items")) {
        for (i, x) in items.iter().enumerate() {
            check(root, s, x, &format!("{path}[{i}]"), errs, depth + 1);
        }
    }
    if let Some(Json::Array(all)) = obj.get("allOf") {
        for s in all {
            check(root, s, v, path, errs, depth + 1);
        }
    }
    let count_ok = |options: &Vec<Json>| {
        options
            .iter()
            .filter(|s| {
                let mut e = Vec::new();
                check(root, s, v, path, &mut e, depth + 1);
                e.is_empty()
            })
            .count()
    };
    if let Some(Json::Array(one)) = obj.get("oneOf") {
        let n = count_ok(one);
        if n != 1 {
            errs.push(format!(
                "{path}: matches {n} of the `oneOf` alternatives, expected exactly 1"
            ));
        }
    }
    if let Some(Json::Array(any)) = obj.get("anyOf") {
        if count_ok(any) == 0 {
            errs.push(format!("{path}: matches none of the `anyOf` alternatives"));
        }
    }
}
