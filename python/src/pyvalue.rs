//! Python values as JSON values, every refusal named by its JSON path.
//!
//! A case reaches the oracle as JSON text written here straight from the Python objects (in the
//! dict's own member order), then read by the oracle's own strict reader
//! (`hybrid_compaction_trace::strict::read`, behind `hybrid_compaction_oracle::read_case`), the reader behind the CLI: so a case that is
//! valid JSON but not a valid case is refused with the CLI's path and words
//! (`$.policy.hardLimit: expected a signed 32-bit integer ...`). Text rather than a
//! `serde_json::Value` because a `Value` object sorts its members, and member order is
//! observable (which of two part keys is named, whether `op` comes first).
//!
//! This module only refuses what JSON itself cannot hold, which a Python caller can write but a
//! JSON text cannot: a float NaN or infinity (the wire spells them `{"f64": "NaN"}`), a
//! non-string dict key, a `bytes`, `set` or any other non-JSON object, a string with a lone
//! surrogate, and nesting deeper than the 128 levels `docs/WIRE.md` allows (counted as
//! `serde_json` counts them, so a dict is refused exactly when its JSON text would be). Types
//! stay exact: `True` is `true`, never `1`; `1` and `1.0` stay an integer and a float; an integer
//! beyond 64 bits becomes the number its JSON text would parse to in a case ([`to_json`]) and is
//! refused in a transcript ([`to_json_exact`]).

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use std::fmt::Write as _;

use serde_json::{Number, Value as Json};

/// `serde_json`'s recursion limit: the 128th nested array or object is refused.
const MAX_DEPTH: usize = 128;

/// One step of a JSON path.
enum Segment {
    Key(String),
    Index(usize),
}

/// Why a Python value is not JSON: where (a JSON path) and what.
pub struct Refusal {
    /// The JSON path of the offending value (`$.entries[0].text`).
    pub path: String,
    /// What was expected there.
    pub message: String,
}

/// Converts `value` (the whole case) to JSON text; an integer beyond 64 bits becomes the number
/// its JSON text parses to, as the CLI reads it.
pub fn to_json(value: &Bound<'_, PyAny>) -> Result<String, Refusal> {
    to_json_with(value, false, 0)
}

/// Converts `value` (a transcript) to JSON text, refusing an integer beyond 64 bits: the
/// transcript's JSON values are read as 64-bit integers or floats, and a float would make
/// `2**70` equal `2**70 + 1` (SPEC TRN-12 keeps such integers exact only in argument *text*).
pub fn to_json_exact(value: &Bound<'_, PyAny>) -> Result<String, Refusal> {
    to_json_with(value, true, 0)
}

/// [`to_json_exact`] of a value `depth` levels below the transcript object (a message: 2), so
/// that it is refused for nesting exactly when the whole transcript's text would be; paths are
/// relative to the value.
pub fn to_json_exact_at(value: &Bound<'_, PyAny>, depth: usize) -> Result<String, Refusal> {
    to_json_with(value, true, depth)
}

fn to_json_with(value: &Bound<'_, PyAny>, exact: bool, depth: usize) -> Result<String, Refusal> {
    let mut w = Writer {
        path: Vec::new(),
        out: String::new(),
        exact,
        depth,
    };
    w.convert(value).map_err(|message| Refusal {
        path: render(&w.path),
        message,
    })?;
    Ok(w.out)
}

/// The JSON text written so far, where the writer is, whether integers must be exact, and how
/// deep below the whole text the value written is.
struct Writer {
    path: Vec<Segment>,
    out: String,
    exact: bool,
    depth: usize,
}

/// Appends `v` as JSON text (a string with its escapes, a number as `serde_json` prints it).
fn write(out: &mut String, v: &Json) {
    let _ = write!(out, "{v}");
}

/// Renders a path the way the oracle's strict reader does: `$.entries[0]["a b"]`.
fn render(segments: &[Segment]) -> String {
    let mut out = String::from("$");
    for s in segments {
        match s {
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
            Segment::Key(k)
                if !k.is_empty()
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !k.starts_with(|c: char| c.is_ascii_digit()) =>
            {
                out.push('.');
                out.push_str(k);
            }
            Segment::Key(k) => out.push_str(&format!("[{}]", Json::from(k.clone()))),
        }
    }
    out
}

impl Writer {
    /// Converts one value; on failure `path` is left at the offending value.
    fn convert(&mut self, v: &Bound<'_, PyAny>) -> Result<(), String> {
        let scalar = if v.is_none() {
            Some(Json::Null)
        } else if let Ok(b) = v.cast::<PyBool>() {
            Some(Json::Bool(b.is_true()))
        } else if let Ok(s) = v.cast::<PyString>() {
            Some(Json::String(text(s)?))
        } else if v.cast::<PyInt>().is_ok() {
            Some(integer(v, self.exact)?)
        } else if let Ok(f) = v.cast::<PyFloat>() {
            Some(float(f.value())?)
        } else {
            None
        };
        if let Some(scalar) = scalar {
            write(&mut self.out, &scalar);
            return Ok(());
        }
        let depth = self.depth + self.path.len() + 1;
        if let Ok(d) = v.cast::<PyDict>() {
            nesting(depth)?;
            return self.object(d.items().iter());
        }
        if let Ok(l) = v.cast::<PyList>() {
            nesting(depth)?;
            return self.array(l.iter());
        }
        if let Ok(t) = v.cast::<PyTuple>() {
            nesting(depth)?;
            return self.array(t.iter());
        }
        if let Ok(m) = v.cast::<PyMapping>() {
            nesting(depth)?;
            let items = m
                .items()
                .map_err(|e| format!("a mapping whose items cannot be read: {e}"))?;
            return self.object(items.iter());
        }
        Err(format!(
            "expected a JSON value (a dict, list, tuple, str, int, float, bool or None), got {}",
            python_type(v)
        ))
    }

    fn object<'py>(
        &mut self,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
    ) -> Result<(), String> {
        self.out.push('{');
        for (i, item) in items.enumerate() {
            let (key, value): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item
                .extract()
                .map_err(|e| format!("a mapping item that is not a key and a value: {e}"))?;
            let Ok(key) = key.cast::<PyString>() else {
                return Err(format!(
                    "expected string keys (JSON object member names), got the key {} ({})",
                    repr(&key),
                    python_type(&key)
                ));
            };
            let key = text(key)?;
            if i > 0 {
                self.out.push(',');
            }
            write(&mut self.out, &Json::String(key.clone()));
            self.out.push(':');
            self.path.push(Segment::Key(key));
            self.convert(&value)?;
            self.path.pop();
        }
        self.out.push('}');
        Ok(())
    }

    fn array<'py>(&mut self, items: impl Iterator<Item = Bound<'py, PyAny>>) -> Result<(), String> {
        self.out.push('[');
        for (i, item) in items.enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.path.push(Segment::Index(i));
            self.convert(&item)?;
            self.path.pop();
        }
        self.out.push(']');
        Ok(())
    }
}

fn nesting(depth: usize) -> Result<(), String> {
    if depth >= MAX_DEPTH {
        Err(format!("nested deeper than {MAX_DEPTH} levels"))
    } else {
        Ok(())
    }
}

fn text(s: &Bound<'_, PyString>) -> Result<String, String> {
    s.to_cow().map(|c| c.into_owned()).map_err(|_| {
        format!(
            "a string with a lone surrogate ({}): not valid Unicode text, which JSON strings hold",
            repr(s.as_any())
        )
    })
}

/// An `int` as the number its decimal JSON text parses to (beyond 64 bits: a float, or out of
/// range past the largest float, as the CLI reads it), or with `exact` a refusal beyond 64 bits.
fn integer(v: &Bound<'_, PyAny>, exact: bool) -> Result<Json, String> {
    if let Ok(i) = v.extract::<i64>() {
        return Ok(Json::from(i));
    }
    if let Ok(u) = v.extract::<u64>() {
        return Ok(Json::from(u));
    }
    let digits = v.str().map_err(|e| e.to_string())?.to_string();
    if exact {
        return Err(format!(
            "the integer {digits} is beyond 64 bits: it cannot be held exactly here (give it as a string, or as JSON text in OpenAI's `arguments`, which keeps its digits)"
        ));
    }
    serde_json::from_str::<Json>(&digits).map_err(|_| "number out of range".to_owned())
}

fn float(f: f64) -> Result<Json, String> {
    Number::from_f64(f).map(Json::Number).ok_or_else(|| {
        let name = if f.is_nan() {
            "NaN"
        } else if f > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        };
        format!(
            "expected a finite number, got the float {name}: JSON has no NaN or infinities (a wire value spells it {{\"f64\": \"{name}\"}})"
        )
    })
}

fn python_type(v: &Bound<'_, PyAny>) -> String {
    let name = v
        .get_type()
        .name()
        .map_or_else(|_| "object".to_owned(), |n| n.to_string());
    format!("a Python {name}")
}

fn repr(v: &Bound<'_, PyAny>) -> String {
    v.repr()
        .map_or_else(|_| "?".to_owned(), |r| r.to_string_lossy().into_owned())
}
