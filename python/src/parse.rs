//! Parsing one case with a JSON path in every error.
//!
//! The oracle's [`Case`] is the single source of truth: a case is whatever
//! `serde_json::from_value::<Case>` accepts. The CLI reports a rejected case by line and column
//! of the input text; a Python caller passed a dict and has no text, so a rejection here is
//! reported by **JSON path** (`$.entries[0].kind`) instead. `Case` is internally tagged by `op`,
//! which makes serde buffer the object and lose the position, so a rejected case is parsed a
//! second time, by its op, into the op's own struct through `serde_path_to_error`, only to
//! locate the error. Inner tagged enums (the estimator, the reducer) are located at their own
//! member (`$.policy.estimator`).

use hybrid_compaction_oracle::wire::case::{
    AnalyzeCase, AssembleCase, EntryCase, EvaluateCase, PolicyCase, SelectCase, VerifyCase,
};
use hybrid_compaction_oracle::wire::{Case, WireError};
use serde::de::DeserializeOwned;
use serde_json::Value as Json;

/// The operations of [`Case`], in the order `docs/WIRE.md` lists them.
const OPS: [&str; 7] = [
    "assemble", "verify", "select", "evaluate", "analyze", "policy", "entry",
];

/// Parses a case from JSON text; a rejection names the JSON path of the offending value.
pub fn case(text: &str) -> Result<Case, WireError> {
    let value: Json = serde_json::from_str(text)
        .map_err(|e| WireError::new("$", format!("invalid JSON: {e}")))?;
    match serde_json::from_value::<Case>(value.clone()) {
        Ok(c) => Ok(c),
        Err(whole) => Err(locate(value).unwrap_or_else(|| WireError::new("$", whole.to_string()))),
    }
}

/// Re-parses a rejected case by its op to find where it fails; `None` if it does not fail.
fn locate(mut value: Json) -> Option<WireError> {
    let Json::Object(map) = &mut value else {
        return Some(WireError::new("$", "expected a case object"));
    };
    let op = match map.remove("op") {
        Some(Json::String(op)) => op,
        Some(other) => {
            return Some(WireError::new(
                "$.op",
                format!("expected a string, got {other}"),
            ))
        }
        None => {
            return Some(WireError::new(
                "$.op",
                format!("missing: one of {}", OPS.join(", ")),
            ))
        }
    };
    match op.as_str() {
        "assemble" => typed::<AssembleCase>(value),
        "verify" => typed::<VerifyCase>(value),
        "select" => typed::<SelectCase>(value),
        "evaluate" => typed::<EvaluateCase>(value),
        "analyze" => typed::<AnalyzeCase>(value),
        "policy" => typed::<PolicyCase>(value),
        "entry" => typed::<EntryCase>(value),
        other => Some(WireError::new(
            "$.op",
            format!(
                "unknown operation {other:?}, expected one of {}",
                OPS.join(", ")
            ),
        )),
    }
}

/// The error of deserializing `value` as `T`, with its path; `None` if it deserializes.
fn typed<T: DeserializeOwned>(value: Json) -> Option<WireError> {
    let err = serde_path_to_error::deserialize::<_, T>(value).err()?;
    let inner = err.path().to_string();
    let path = if inner == "." {
        "$".to_owned()
    } else if inner.starts_with('[') {
        format!("${inner}")
    } else {
        format!("$.{inner}")
    };
    Some(WireError::new(path, err.into_inner().to_string()))
}
