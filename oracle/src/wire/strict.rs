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
            Segment::Key(k)
                if !k.is_empty()
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !k.starts_with(|c: char| c.is_ascii_digit()) =>
            {
                out.push('.');
                out.push_str(k);
            }
            Segment::Key(k) => out.push_str(&format!("[{}]", serde_json::Value::from(k.clone()))),
        }
    }
    out
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

fn read_error(e: &serde_json::Error, text: &str) -> ReadError {
    let mut segments = take_path();
    segments.reverse();
    let syntax = matches!(
        e.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    );
    let position = (e.line() > 0).then(|| (e.line(), e.column()));
    let raw = strip_position(&e.to_string());
    let message = if syntax {
        syntax_message(&raw, position, text)
    } else {
        humanize(&raw)
    };
    ReadError {
        position,
        path: render_path(&segments),
        message,
        syntax,
    }
}

/// serde_json appends " at line L column C"; positions are reported separately.
pub fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

/// serde_json calls any unpaired `\uDC00`..`\uDFFF` a "leading" surrogate; name it right.
fn syntax_message(raw: &str, position: Option<(usize, usize)>, text: &str) -> String {
    if raw == "recursion limit exceeded" {
        return "nested deeper than 128 levels".to_owned();
    }
    if raw != "lone leading surrogate in hex escape" {
        return raw.to_owned();
    }
    let escape = position.and_then(|(line, column)| {
        let line_text = text.lines().nth(line - 1)?;
        let upto = line_text.get(..column.min(line_text.len()))?;
        let at = upto.rfind("\\u")?;
        let hex = upto.get(at + 2..at + 6)?;
        u16::from_str_radix(hex, 16)
            .ok()
            .map(|n| (n, upto[at..at + 6].to_owned()))
    });
    match escape {
        Some((n, esc)) if (0xDC00..=0xDFFF).contains(&n) => format!(
            "lone trailing surrogate {esc} in a string: a \\uDC00-\\uDFFF escape must follow a \\uD800-\\uDBFF escape"
        ),
        Some((_, esc)) => format!(
            "lone leading surrogate before {esc} in a string: a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF escape"
        ),
        None => "unpaired surrogate escape in a string".to_owned(),
    }
}

// ------------------------------------------------------------------------------- wording

/// Puts a serde failure message in the wire format's words (no Rust type names).
pub fn humanize(msg: &str) -> String {
    if let Some(rest) = msg
        .strip_prefix("invalid type: ")
        .or_else(|| msg.strip_prefix("invalid value: "))
    {
        if let Some((got, expected)) = rest.split_once(", expected ") {
            return format!(
                "expected {}, got {}",
                expected_words(expected),
                got_words(got)
            );
        }
    }
    if let Some(rest) = msg.strip_prefix("invalid length ") {
        if let Some((n, expected)) = rest.split_once(", expected ") {
            return format!("expected {}, got {n} elements", expected_words(expected));
        }
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        return format!("unknown name {}", names_words(rest));
    }
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        return format!("unknown member {}", names_words(rest));
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        return format!("missing member {rest}");
    }
    if let Some(rest) = msg.strip_prefix("duplicate field ") {
        return format!("duplicate key {rest}");
    }
    if msg.starts_with("data did not match any variant") {
        return "the value matches none of the accepted forms".to_owned();
    }
    msg.to_owned()
}

fn names_words(rest: &str) -> String {
    rest.replace("there are no variants", "none is accepted here")
        .replace("there are no fields", "no member is accepted here")
}

/// serde's `Unexpected` rendering, in JSON's words.
fn got_words(got: &str) -> String {
    if got == "unit value" {
        return "null".to_owned();
    }
    if got == "sequence" {
        return "an array".to_owned();
    }
    if got == "map" {
        return "an object".to_owned();
    }
    let inner = |prefix: &str| {
        got.strip_prefix(prefix)
            .and_then(|r| r.strip_prefix('`'))
            .and_then(|r| r.strip_suffix('`'))
            .map(str::to_owned)
    };
    if let Some(x) = inner("floating point ") {
        if x == "-0.0" || x == "-0" {
            return "-0 (a negative zero is not an integer: write 0)".to_owned();
        }
        return format!("the number {x}");
    }
    if let Some(x) = inner("integer ") {
        return format!("the number {x}");
    }
    if let Some(x) = inner("boolean ") {
        return x;
    }
    if let Some(x) = got.strip_prefix("string ") {
        return format!("the string {x}");
    }
    got.to_owned()
}

/// A visitor's `expecting` text, in JSON's words.
fn expected_words(expected: &str) -> String {
    let int = |bits: u32, signed: bool| {
        if signed {
            let max = (1i128 << (bits - 1)) - 1;
            format!("a signed {bits}-bit integer ({} to {max})", -max - 1)
        } else {
            format!(
                "an unsigned {bits}-bit integer (0 to {})",
                (1u128 << bits) - 1
            )
        }
    };
    match expected {
        "i8" => int(8, true),
        "i16" => int(16, true),
        "i32" => int(32, true),
        "i64" => int(64, true),
        "u8" => int(8, false),
        "u16" => int(16, false),
        "u32" => int(32, false),
        "u64" | "usize" => int(64, false),
        "a sequence" => "an array".to_owned(),
        "a map" => "an object".to_owned(),
        "a boolean" => "true or false".to_owned(),
        "a borrowed string" => "a string".to_owned(),
        "option" => "a value or null".to_owned(),
        "unit" => "null".to_owned(),
        e if e.starts_with("struct ")
            || e.starts_with("internally tagged enum ")
            || e.starts_with("tuple struct ") =>
        {
            "an object".to_owned()
        }
        e if e.starts_with("enum ") || e.starts_with("untagged enum ") => {
            "one of the documented forms".to_owned()
        }
        e => e.to_owned(),
    }
}

/// The text a visitor gives as its `expecting`.
struct Expecting<'a, V>(&'a V);

impl<'de, V: Visitor<'de>> fmt::Display for Expecting<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }
}

// ------------------------------------------------------------------------------- adapter

/// The strict, path-tracking adapter around a `Deserializer` (see the module docs).
pub struct Strict<D> {
    de: D,
}

impl<D> Strict<D> {
    /// Wraps `de`.
    pub fn new(de: D) -> Strict<D> {
        Strict { de }
    }
}

macro_rules! forward {
    ($($method:ident),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.de.$method(Wrap(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<D> {
    type Error = D::Error;

    forward!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any,
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_unit_struct(name, Wrap(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_newtype_struct(name, Wrap(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple(len, Wrap(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple_struct(name, len, Wrap(visitor))
    }

    /// A struct is an object, never an array of its fields.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_map(Wrap(visitor))
    }

    /// An enum is a name (a string) or an object with exactly one key, the name, whose value
    /// holds the rest; anything else is refused in the enum's own words.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_any(EnumShape(visitor))
    }
}

/// Reads an enum from a string (a name alone) or a one-key object.
struct EnumShape<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for EnumShape<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&expected_words(&Expecting(&self.0).to_string()))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.visit_string(v.to_owned())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        let what = Expecting(&self.0).to_string();
        self.0.visit_enum(EnumWrap {
            data: NameOnly(v, PhantomData),
            what,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let what = Expecting(&self.0).to_string();
        self.0.visit_enum(EnumWrap {
            data: OneKey(map),
            what,
        })
    }
}

/// An enum written as its name alone (a unit variant).
struct NameOnly<E>(String, PhantomData<E>);

impl<'de, E: de::Error> de::EnumAccess<'de> for NameOnly<E> {
    type Error = E;
    type Variant = NameOnly<E>;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self), E> {
        let d: de::value::StrDeserializer<'_, E> = self.0.as_str().into_deserializer();
        let v = seed.deserialize(d)?;
        Ok((v, self))
    }
}

impl<'de, E: de::Error> de::VariantAccess<'de> for NameOnly<E> {
    type Error = E;

    fn unit_variant(self) -> Result<(), E> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value, E> {
        Err(self.needs_value())
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, E> {
        Err(self.needs_value())
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, E> {
        Err(self.needs_value())
    }
}

impl<E: de::Error> NameOnly<E> {
    fn needs_value(&self) -> E {
        E::custom(format!(
            "`{0}` takes a value: write {{\"{0}\": ...}}",
            self.0
        ))
    }
}

/// An enum written as an object with one key (the name) and its value.
struct OneKey<A>(A);

impl<'de, A: MapAccess<'de>> de::EnumAccess<'de> for OneKey<A> {
    type Error = A::Error;
    type Variant = OneKey<A>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        mut self,
        seed: S,
    ) -> Result<(S::Value, Self), A::Error> {
        match self.0.next_key_seed(seed)? {
            Some(v) => Ok((v, self)),
            None => Err(de::Error::custom(
                "expected an object with exactly one key, got an empty object",
            )),
        }
    }
}

impl<'de, A: MapAccess<'de>> OneKey<A> {
    fn only<T>(mut self, value: T) -> Result<T, A::Error> {
        match self.0.next_key::<Key<'de>>()? {
            None => Ok(value),
            Some(Key(k)) => Err(de::Error::custom(format!(
                "expected an object with exactly one key, got another key {}",
                serde_json::Value::from(k.as_ref())
            ))),
        }
    }
}

impl<'de, A: MapAccess<'de>> de::VariantAccess<'de> for OneKey<A> {
    type Error = A::Error;

    fn unit_variant(mut self) -> Result<(), A::Error> {
        self.0.next_value::<()>()?;
        self.only(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        mut self,
        seed: T,
    ) -> Result<T::Value, A::Error> {
        let v = self.0.next_value_seed(seed)?;
        self.only(v)
    }

    fn tuple_variant<V: Visitor<'de>>(
        mut self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let v = self.0.next_value_seed(ShapeSeed::Tuple(len, visitor))?;
        self.only(v)
    }

    fn struct_variant<V: Visitor<'de>>(
        mut self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let v = self.0.next_value_seed(ShapeSeed::Struct(fields, visitor))?;
        self.only(v)
    }
}

/// The value of a tuple or struct variant.
enum ShapeSeed<V> {
    Tuple(usize, V),
    Struct(&'static [&'static str], V),
}

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for ShapeSeed<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        match self {
            ShapeSeed::Tuple(len, v) => d.deserialize_tuple(len, v),
            ShapeSeed::Struct(fields, v) => d.deserialize_struct("", fields, v),
        }
    }
}

/// A visitor whose nested values are read through [`Strict`].
struct Wrap<V>(V);

macro_rules! visit {
    ($($method:ident($ty:ty)),* $(,)?) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&expected_words(&Expecting(&self.0).to_string()))
    }

    visit!(
        visit_bool(bool),
        visit_i8(i8),
        visit_i16(i16),
        visit_i32(i32),
        visit_i64(i64),
        visit_i128(i128),
        visit_u8(u8),
        visit_u16(u16),
        visit_u32(u32),
        visit_u64(u64),
        visit_u128(u128),
        visit_f32(f32),
        visit_f64(f64),
        visit_char(char),
        visit_str(&str),
        visit_borrowed_str(&'de str),
        visit_string(String),
        visit_bytes(&[u8]),
        visit_borrowed_bytes(&'de [u8]),
        visit_byte_buf(Vec<u8>),
    );

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.visit_some(Strict::new(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.visit_newtype_struct(Strict::new(d))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.visit_seq(SeqWrap { seq, index: 0 })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(MapWrap {
            map,
            seen: Vec::new(),
            current: None,
        })
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        let what = Expecting(&self.0).to_string();
        self.0.visit_enum(EnumWrap { data, what })
    }
}

/// A seed whose value is read through [`Strict`].
struct SeedWrap<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for SeedWrap<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Strict::new(d))
    }
}

struct SeqWrap<A> {
    seq: A,
    index: usize,
}

impl<'de, A: de::SeqAccess<'de>> de::SeqAccess<'de> for SeqWrap<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        let r = self.seq.next_element_seed(SeedWrap(seed));
        if r.is_err() {
            note(Segment::Index(self.index));
        }
        self.index += 1;
        r
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// An object key, borrowed from the text when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Above this many keys an object's duplicate check switches from a scan to a hash set.
const SCAN_KEYS: usize = 16;

struct MapWrap<'de, A> {
    map: A,
    seen: Vec<Cow<'de, str>>,
    current: Option<Cow<'de, str>>,
}

impl<'de, A: MapAccess<'de>> MapWrap<'de, A> {
    /// Remembers `key`; false if the object already had it.
    #[allow(
        clippy::ptr_arg,
        reason = "the Cow is kept: a borrowed key stays borrowed"
    )]
    fn first_time(&mut self, key: &Cow<'de, str>) -> bool {
        if self.seen.len() < SCAN_KEYS {
            if self.seen.iter().any(|k| k == key) {
                return false;
            }
            self.seen.push(key.clone());
            return true;
        }
        // Large objects (maps keyed by id): sort once, then binary search / insert.
        if self.seen.len() == SCAN_KEYS {
            self.seen.sort();
        }
        match self.seen.binary_search(key) {
            Ok(_) => false,
            Err(i) => {
                self.seen.insert(i, key.clone());
                true
            }
        }
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for MapWrap<'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(Key(key)) = self.map.next_key::<Key<'de>>()? else {
            return Ok(None);
        };
        if !self.first_time(&key) {
            note(Segment::Key(key.clone().into_owned()));
            return Err(de::Error::custom(format!(
                "duplicate key {}: an object may name each member once",
                serde_json::Value::from(key.as_ref())
            )));
        }
        let d: CowStrDeserializer<'de, A::Error> = key.clone().into_deserializer();
        match seed.deserialize(d) {
            Ok(v) => {
                self.current = Some(key);
                Ok(Some(v))
            }
            Err(e) => {
                note(Segment::Key(key.into_owned()));
                Err(e)
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        let r = self.map.next_value_seed(SeedWrap(seed));
        if r.is_err() {
            if let Some(k) = self.current.take() {
                note(Segment::Key(k.into_owned()));
            }
        }
        r
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

struct EnumWrap<A> {
    data: A,
    what: String,
}

/// `a message part` -> `message part`.
fn without_article(what: &str) -> &str {
    what.strip_prefix("a ")
        .or_else(|| what.strip_prefix("an "))
        .unwrap_or(what)
}

impl<'de, A: de::EnumAccess<'de>> de::EnumAccess<'de> for EnumWrap<A> {
    type Error = A::Error;
    type Variant = VariantWrap<A::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), A::Error> {
        let (Key(name), access) = self.data.variant_seed(PhantomData::<Key<'de>>)?;
        let d: CowStrDeserializer<'de, A::Error> = name.clone().into_deserializer();
        match seed.deserialize(d) {
            Ok(v) => Ok((
                v,
                VariantWrap {
                    access,
                    name: name.into_owned(),
                },
            )),
            Err(e) => {
                let msg = e.to_string();
                let what = expected_words(&self.what);
                let what = match what.split(':').next() {
                    Some(w) if !w.starts_with("one of") => without_article(w),
                    _ => "name",
                };
                Err(match msg.strip_prefix("unknown variant ") {
                    Some(rest) => {
                        de::Error::custom(format!("unknown {what} {}", names_words(rest)))
                    }
                    None => e,
                })
            }
        }
    }
}

struct VariantWrap<A> {
    access: A,
    name: String,
}

/// `r`, with the variant `name` noted as a path segment if it failed.
fn under<T, E>(name: String, r: Result<T, E>) -> Result<T, E> {
    if r.is_err() {
        note(Segment::Key(name));
    }
    r
}

impl<'de, A: de::VariantAccess<'de>> de::VariantAccess<'de> for VariantWrap<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.access.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        under(self.name, self.access.newtype_variant_seed(SeedWrap(seed)))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        under(self.name, self.access.tuple_variant(len, Wrap(visitor)))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        under(self.name, self.access.struct_variant(fields, Wrap(visitor)))
    }
}

// ------------------------------------------------------------------------------- tagged unions

/// An object whose `TAG` member (a name) selects the shape of its other members.
pub trait TaggedUnion: Sized {
    /// The selecting member, e.g. `op`.
    const TAG: &'static str;
    /// The accepted names, in documentation order.
    const NAMES: &'static [&'static str];
    /// What one of them is called, e.g. `operation`.
    const WHAT: &'static str;
    /// Reads the other members (an object without `TAG`) as the shape `name` selects. `name` is
    /// one of [`Self::NAMES`].
    fn read_as<'de, D: Deserializer<'de>>(name: &str, rest: D) -> Result<Self, D::Error>;
}

/// Reads a [`TaggedUnion`] (for its `Deserialize` impl).
pub fn tagged<'de, T: TaggedUnion, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(TaggedVisitor(PhantomData::<T>))
}

struct TaggedVisitor<T>(PhantomData<T>);

/// Reads the tag's value, refusing names outside `T::NAMES`.
struct TagSeed<T>(PhantomData<T>);

impl<'de, T: TaggedUnion> DeserializeSeed<'de> for TagSeed<T> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        let name = String::deserialize(d)?;
        if T::NAMES.contains(&name.as_str()) {
            return Ok(name);
        }
        let names: Vec<String> = T::NAMES.iter().map(|n| format!("`{n}`")).collect();
        Err(de::Error::custom(format!(
            "unknown {} {}, expected one of {}",
            T::WHAT,
            serde_json::Value::from(name),
            names.join(", ")
        )))
    }
}

impl<'de, T: TaggedUnion> Visitor<'de> for TaggedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an object with `{}`", T::TAG)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let missing = || {
            de::Error::custom(format!(
                "missing member `{}` (the {}: one of {})",
                T::TAG,
                T::WHAT,
                T::NAMES.join(", ")
            ))
        };
        let Some(Key(first)) = map.next_key::<Key<'de>>()? else {
            return Err(missing());
        };
        if first == T::TAG {
            // The common case: stream the rest straight into the selected shape.
            let name = map.next_value_seed(TagSeed(PhantomData::<T>))?;
            return T::read_as(&name, MapAccessDeserializer::new(map));
        }
        // The tag comes later: keep the members seen before it as JSON values.
        let mut rest = serde_json::Map::new();
        let mut name = None;
        let mut key = Some(first);
        while let Some(k) = key {
            if k == T::TAG {
                name = Some(map.next_value_seed(TagSeed(PhantomData::<T>))?);
            } else {
                let v: serde_json::Value = map.next_value()?;
                rest.insert(k.into_owned(), v);
            }
            key = map.next_key::<Key<'de>>()?.map(|Key(k)| k);
        }
        let Some(name) = name else {
            return Err(missing());
        };
        // Read the buffered members through the adapter, so paths and wording stay the same.
        T::read_as(&name, Strict::new(serde_json::Value::Object(rest)))
            .map_err(|e| de::Error::custom(e.to_string()))
    }
}

/// An object read as `T` after skipping a member `TAG` whose value must be `NAME` (the `verify`
/// command's shorthand: `op` may be omitted, or must say `verify`).
pub fn without_tag<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    d: D,
    tag: &'static str,
    name: &'static str,
) -> Result<T, D::Error> {
    struct V<T>(&'static str, &'static str, PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(MapAccessDeserializer::new(SkipTag {
                map,
                tag: self.0,
                name: self.1,
            }))
        }
    }
    d.deserialize_map(V(tag, name, PhantomData))
}

struct SkipTag<A> {
    map: A,
    tag: &'static str,
    name: &'static str,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for SkipTag<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(Key(key)) = self.map.next_key::<Key<'de>>()? else {
                return Ok(None);
            };
            if key != self.tag {
                return seed.deserialize(key.into_deserializer()).map(Some);
            }
            let value: String = self.map.next_value()?;
            if value != self.name {
                note(Segment::Key(self.tag.to_owned()));
                return Err(de::Error::custom(format!(
                    "this command takes `{}` cases only, got {:?}",
                    self.name, value
                )));
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}
