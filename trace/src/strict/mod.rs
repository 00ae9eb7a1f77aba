//! # Strict, path-tracking JSON reading
//!
//! Every case (and every trace line) is read from its JSON text in **one pass**, straight into
//! its serde types, through [`Strict`]: a serde `Deserializer` adapter around `serde_json`'s that
//!
//! * refuses a repeated key in any object (`{"a":1,"a":2}` is ambiguous JSON), checked as each
//!   key is read, at any depth (value maps, tool-call arguments, provider messages);
//! * reads every struct from a JSON object only (serde would also take an array of its fields in
//!   order, which the wire format does not allow);
//! * records, when something fails, the JSON path of the failing value (`$.entries[3].kind`):
//!   each layer adds its segment only while an error passes up through it, so the happy path
//!   pays nothing for it.
//!
//! ## One definition of each message
//!
//! The words of a refusal are built from what the reader itself knows, never from serde's or
//! serde_json's sentences:
//!
//! * **what was expected** is stated by the adapter, which knows which `deserialize_*` a
//!   `Deserialize` impl called: `deserialize_i32` reads "a signed 32-bit integer (-2147483648
//!   to 2147483647)", `deserialize_struct` "an object", `deserialize_seq` "an array",
//!   `deserialize_enum(name, variants)` its names. Only an impl that asks for *any* value
//!   (`deserialize_any`: this crate's own visitors, such as "a request entry id (a string) or
//!   {"new": entry}") says what it expects itself;
//! * **what was there, and what is wrong** arrive as data: the impls below the adapter get the
//!   reader's own error type ([`Error`]), whose serde constructors (`invalid_type(Unexpected,
//!   ..)`, `unknown_variant(name, names)`, `missing_field(name)`, ...) keep their arguments;
//!   `words` renders them (``got the string "100"``, ``unknown member `x`, expected `a` or
//!   `b` ``).
//!
//! An enum's names are called by the format's word for them when its serde name is one:
//! `#[serde(rename = "message part")]` on `PartInput` makes an unknown part read ``unknown
//! message part `hi` ``; a serde name that is a Rust identifier (upper case first) is never
//! shown (``unknown name `hi` ``).
//!
//! The one text taken from serde_json is its description of malformed JSON (classified by
//! `Error::classify()`), which comes with the line and column where the parser stopped.
//!
//! ## Positions
//!
//! A failure inside a value still names the line and column where the parser stopped: the
//! reader's error crosses serde_json's frames *carried* beside serde_json's own error, which
//! records the position once, where the failure happened, and is re-raised unchanged up to
//! the caller (the `error` file says how).
//!
//! ## Tagged unions
//!
//! Tagged unions (an object whose `op`, `kind` or `type` member selects the shape of the rest)
//! use [`TaggedUnion`] instead of serde's internally tagged enums, which buffer the whole
//! object before dispatching (losing the path of anything that fails inside). When the tag is
//! the object's first member, the rest is streamed into the selected type; otherwise the
//! members are buffered as JSON values (still with paths and duplicate checks) and read after
//! the tag.
//!
//! Nesting is bounded by `serde_json`'s recursion limit (128 levels), as `docs/WIRE.md` says.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

mod adapter;
mod error;
mod tagged;
mod words;

pub use adapter::Strict;
pub use error::Error;
pub use tagged::{tagged, unlisted, without_tag, TaggedUnion};
pub use words::strip_position;
#[allow(
    clippy::wildcard_imports,
    reason = "the five files share their helpers through this module"
)]
use {adapter::*, error::*};

/// A string read as `String` is (the same request, so the same refusals), borrowed from the
/// JSON text when it has no escapes: a member only looked at, or copied once where it ends up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Text<'de>(pub Cow<'de, str>);

impl Text<'_> {
    /// The string, owned.
    pub fn into_owned(self) -> String {
        self.0.into_owned()
    }
}

impl std::ops::Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_string(V)
    }
}

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Renders a path, `$` being the root: `$.entries[0]["a b"]`.
fn render_path<'a>(segments: impl Iterator<Item = &'a Segment>) -> String {
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
    /// JSON path of the failing value (`$` for the root; for a syntax error, the value the
    /// parser was in).
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

/// The [`ReadError`] of a read that failed with the parser's error `native` (the carrier of
/// ours, or the parser's own).
fn read_error(native: &serde_json::Error, text: &str) -> ReadError {
    let position = (native.line() > 0).then(|| (native.line(), native.column()));
    match take_carried() {
        Some(e) if *e.problem() != Problem::Parser => ReadError {
            position,
            path: render_path(e.path()),
            message: e.to_string(),
            syntax: false,
        },
        carried => {
            // serde_json's own error: malformed text (its words, which carry the position),
            // with the path of the value it was in.
            let path = carried.map_or_else(|| "$".to_owned(), |e| render_path(e.path()));
            let syntax = matches!(
                native.classify(),
                serde_json::error::Category::Syntax
                    | serde_json::error::Category::Eof
                    | serde_json::error::Category::Io
            );
            let raw = strip_position(&native.to_string());
            let message = if syntax {
                words::syntax_message(&raw, position, text)
            } else {
                raw
            };
            ReadError {
                position,
                path,
                message,
                syntax,
            }
        }
    }
}

/// Reads one `T` from `text` (one JSON value, nothing after it) strictly.
pub fn read<'de, T: Deserialize<'de>>(text: &'de str) -> Result<T, ReadError> {
    error::clear();
    let mut de = serde_json::Deserializer::from_str(text);
    let result = Tracked::<T>::deserialize(&mut de).and_then(|Tracked(t)| de.end().map(|()| t));
    result.map_err(|e| read_error(&e, text))
}

/// Reads one `T` from an already parsed JSON value strictly (for hosts that hold a value, not
/// text, such as the Python binding): the same checks, paths and wording as [`read`], without
/// positions.
pub fn read_value<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
) -> Result<T, ReadError> {
    error::clear();
    Tracked::<T>::deserialize(value)
        .map(|Tracked(t)| t)
        .map_err(|e| read_error(&e, ""))
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
        error::clear();
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

/// `T` read through [`Strict`], its error raised as the parser's (so that the caller reads the
/// position the parser noted).
struct Tracked<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Tracked<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut native = None;
        let r = T::deserialize(Strict::keeping(d, &mut native));
        r.map(Tracked).map_err(|e| raise(e, native))
    }
}
