//! # Strict, path-tracking JSON reading
//!
//! Every case is read from its JSON text in **one pass**, straight into the [`super::case`]
//! types, through [`Strict`]: a serde `Deserializer` adapter around `serde_json`'s that
//!
//! * refuses a repeated key in any object (`{"a":1,"a":2}` is ambiguous JSON), checked as each
//!   key is read;
//! * reads every struct from a JSON object only (serde would also take an array of its fields in
//!   order, which the wire format does not allow);
//! * records, when something fails, the JSON path of the failing value (`$.entries[3].kind`). The
//!   happy path pays nothing for this: each layer adds its segment only while an error passes
//!   up through it, into a per-thread list that [`read`] collects.
//!
//! The failure message is then put in the wire format's words by [`humanize`]: serde's
//! descriptions of Rust types (`invalid type: map, expected struct EntryInput`, `unknown variant`,
//! `i32`) become the format's (`expected an object`, `unknown message part`, `a signed 32-bit
//! integer`). The adapter is generic: any type with a serde `Deserialize` read through it gets
//! the same checks, paths and wording, whatever operation it belongs to.
//!
//! Tagged unions (an object whose `op` or `kind` member selects the shape of the rest) use
//! [`TaggedUnion`] instead of serde's internally tagged enums, which buffer the whole object
//! before dispatching (losing the path of anything that fails inside). When the tag is the
//! object's first member, the rest is streamed into the selected type; otherwise the members are
//! buffered as JSON values (still with paths and duplicate checks) and read after the tag.
//!
//! Nesting is bounded by `serde_json`'s recursion limit (128 levels), as `docs/WIRE.md` says.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{CowStrDeserializer, MapAccessDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde::Deserialize;

mod adapter;
mod tagged;
mod words;

pub use adapter::Strict;
pub use tagged::{tagged, without_tag, TaggedUnion};
pub use words::{humanize, strip_position};
#[allow(
    clippy::wildcard_imports,
    reason = "the four files share their helpers through this module"
)]
use {adapter::*, words::*};

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

thread_local! {
    /// The path of the error being propagated, innermost segment first.
    static ERROR_PATH: RefCell<Vec<Segment>> = const { RefCell::new(Vec::new()) };
}

fn note(segment: Segment) {
    ERROR_PATH.with(|p| p.borrow_mut().push(segment));
}

fn take_path() -> Vec<Segment> {
    ERROR_PATH.with(|p| std::mem::take(&mut *p.borrow_mut()))
}

/// Renders a path, `$` being the root: `$.entries[0]["a b"]`.
fn render_path(segments: &[Segment]) -> String {
    let mut out = String::from("$");
    for s in segments {
        match s {
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
            Segment::Key(k) => out.push_str(&key_segment(k)),
        }
    }
    out
}

/// One object key as a path segment: `.name` for a plain identifier, else the key as a JSON
/// string in brackets (`["a b"]`, `["0"]`), so every path reads back unambiguously.
pub fn key_segment(key: &str) -> String {
    let plain = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        format!(".{key}")
    } else {
        format!("[{}]", serde_json::Value::from(key))
    }
}

/// Why a text is not a valid value of the expected type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// 1-based line and column of the failure in the text, when the parser knows it.
    pub position: Option<(usize, usize)>,
    /// JSON path of the failing value (`$` for the root, or for a syntax error).
    pub path: String,
    /// What was expected, in the wire format's words.
    pub message: String,
    /// True for malformed JSON text (as opposed to valid JSON of the wrong shape).
    pub syntax: bool,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.syntax {
            write!(f, "invalid JSON: {}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl ReadError {
    /// The error with its first path segment (an array index) removed, returned with it: for a
    /// batch read as one array, the case number and the path within the case.
    pub fn split_index(mut self) -> (Option<usize>, ReadError) {
        if let Some(rest) = self.path.strip_prefix("$[") {
            if let Some((n, tail)) = rest.split_once(']') {
                if let Ok(i) = n.parse() {
                    self.path = format!("${tail}");
                    return (Some(i), self);
                }
            }
        }
        (None, self)
    }
}

/// Reads one `T` from `text` (one JSON value, nothing after it) strictly.
pub fn read<'de, T: Deserialize<'de>>(text: &'de str) -> Result<T, ReadError> {
    let mut de = serde_json::Deserializer::from_str(text);
    take_path();
    let result = T::deserialize(Strict::new(&mut de)).and_then(|t| de.end().map(|()| t));
    result.map_err(|e| read_error(&e, text))
}

/// Reads one `T` from an already parsed JSON value strictly (for hosts that hold a value, not
/// text, such as the Python binding): the same checks, paths and wording as [`read`], without
/// positions.
pub fn read_value<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
) -> Result<T, ReadError> {
    take_path();
    T::deserialize(Strict::new(value)).map_err(|e| read_error(&e, ""))
}

/// A stream of strictly read `T`s from whitespace-separated JSON values (JSON Lines), each with
/// the byte range of its text.
pub fn read_many<'de, T: Deserialize<'de> + 'de>(
    text: &'de str,
) -> impl Iterator<Item = Result<(T, std::ops::Range<usize>), ReadError>> + 'de {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Tracked<T>>();
    let mut start = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        take_path();
        match stream.next()? {
            Ok(Tracked(t)) => {
                let end = stream.byte_offset();
                let range = start..end;
                start = end;
                Some(Ok((t, range)))
            }
            Err(e) => {
                done = true;
                Some(Err(read_error(&e, text)))
            }
        }
    })
}

/// `T` read through [`Strict`] (for `serde_json`'s stream reader).
struct Tracked<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Tracked<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(Strict::new(d)).map(Tracked)
    }
}
