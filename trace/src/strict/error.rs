//! The reader's own serde error: what went wrong, as data ([`Problem`]), and where (the JSON
//! path, built segment by segment as the error passes up through the adapter's layers).
//!
//! Every `Deserialize` impl the adapter drives gets this type as its error, so serde's error
//! constructors land here with their arguments intact: `invalid_type(Unexpected, &dyn
//! Expected)` keeps the value it got as a [`Got`], `unknown_variant(name, names)` the name and
//! the accepted names, `missing_field(name)` the member. The words are produced from that data
//! by [`super::words`], never from serde's own sentences.
//!
//! Between two adapter layers sit the parser's frames (`serde_json`'s `MapAccess`, its
//! `deserialize_any`), typed with the parser's error. An error of ours crosses them *carried*:
//! it waits in a per-thread slot while the parser's error (a marker, created once, where the
//! parser then records its line and column) propagates, and the next adapter layer takes it
//! back. Each layer keeps the parser's error it received and re-raises that same value when
//! the error goes on up, so the position the parser noted where the failure happened is the
//! one the caller finally reads. An error the parser raised itself (a syntax error, the end of
//! the text) arrives with the slot empty: it is [`Problem::Parser`], and its words are the
//! parser's.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, Unexpected};

use super::Segment;

/// An error of the strict reader: a `Problem` and its JSON path.
#[derive(Debug)]
pub struct Error(Box<Inner>);

#[derive(Debug)]
struct Inner {
    problem: Problem,
    /// Innermost segment first (each layer pushes its own as the error passes up).
    path: Vec<Segment>,
}

/// What went wrong, as data; [`super::words`] says it in the format's words.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Problem {
    /// A value of the wrong JSON type (`invalid_type`), or of the right type but not
    /// acceptable (`invalid_value`, e.g. a number out of range).
    Mismatch {
        /// What the text held.
        got: Got,
        /// What was expected.
        expected: Expected,
        /// An `invalid_value` (the type was right).
        value: bool,
    },
    /// An array with the wrong number of elements (`invalid_length`).
    Length {
        /// The elements read.
        len: usize,
        /// What was expected.
        expected: Expected,
    },
    /// A name that is not one of the accepted names (`unknown_variant`).
    UnknownName {
        /// The name as written.
        name: String,
        /// The accepted names.
        accepted: &'static [&'static str],
        /// What the names are called (`message part`), when the type says.
        noun: Option<&'static str>,
    },
    /// An object member the object does not have (`unknown_field`).
    UnknownMember {
        /// The member as written.
        name: String,
        /// The members the object has.
        accepted: &'static [&'static str],
    },
    /// A required member that is absent (`missing_field`).
    MissingMember(&'static str),
    /// A key given twice in one object (`duplicate_field`, or the adapter's own check).
    DuplicateKey(String),
    /// A refusal in a `Deserialize` impl's own words (`custom`).
    Message(String),
    /// The parser's own error (malformed text): its words are the parser's.
    Parser,
}

/// What the text held where a value failed.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Got {
    Null,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Str(String),
    Array,
    Object,
    /// A description of something else (a `Deserialize` impl's `Unexpected::Other`).
    Other(String),
}

impl Got {
    /// The value serde describes.
    fn of(u: Unexpected<'_>) -> Got {
        match u {
            Unexpected::Bool(b) => Got::Bool(b),
            Unexpected::Unsigned(n) => Got::Unsigned(n),
            Unexpected::Signed(n) => Got::Signed(n),
            Unexpected::Float(f) => Got::Float(f),
            Unexpected::Char(c) => Got::Str(c.to_string()),
            Unexpected::Str(s) => Got::Str(s.to_owned()),
            Unexpected::Bytes(_) => Got::Other("a byte string".to_owned()),
            Unexpected::Unit | Unexpected::Option => Got::Null,
            Unexpected::Seq => Got::Array,
            Unexpected::Map => Got::Object,
            Unexpected::UnitVariant => Got::Other("a name".to_owned()),
            Unexpected::Enum
            | Unexpected::NewtypeVariant
            | Unexpected::TupleVariant
            | Unexpected::StructVariant => Got::Other("an object with one key".to_owned()),
            Unexpected::NewtypeStruct => Got::Other("a value".to_owned()),
            Unexpected::Other(s) => Got::Other(s.to_owned()),
        }
    }
}

/// What was expected where a value failed.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Expected {
    /// What the adapter was asked to read (it states it itself).
    Stated(Want),
    /// What the `Deserialize` impl said it expects: only kept where the impl asked for any
    /// value (`deserialize_any`), i.e. one of this crate's own visitors.
    Said(String),
}

/// What a `Deserialize` impl asked the adapter for: the `deserialize_*` method it called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Want {
    /// `deserialize_any`: the impl decides (and says what it expects).
    Any,
    Bool,
    /// `deserialize_i8` .. `deserialize_u128`.
    Int {
        bits: u8,
        signed: bool,
    },
    Float,
    Char,
    Str,
    Bytes,
    Unit,
    Option,
    NewtypeStruct,
    Ignored,
    Seq,
    Tuple(usize),
    Map,
    /// A struct: an object, never an array of its fields.
    Struct,
    /// An enum: a name, or an object whose one key is the name. `name` is the serde name of the
    /// type: the format's word for its names when it starts with a lowercase letter (`#[serde(
    /// rename = "message part")]`), else the Rust identifier, which is never shown.
    Enum {
        name: &'static str,
        variants: &'static [&'static str],
    },
}

/// The JSON kinds, for the adapter's gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Null,
    Bool,
    Integer,
    Float,
    String,
    Array,
    Object,
}

impl Want {
    /// Whether a value of `kind` can be what was asked for; anything else is refused by the
    /// adapter without consulting the impl.
    pub(super) fn admits(self, kind: Kind) -> bool {
        match self {
            Want::Any | Want::Option | Want::NewtypeStruct | Want::Ignored | Want::Bytes => true,
            Want::Bool => kind == Kind::Bool,
            Want::Int { .. } => kind == Kind::Integer,
            Want::Float => matches!(kind, Kind::Integer | Kind::Float),
            Want::Char | Want::Str => kind == Kind::String,
            Want::Unit => kind == Kind::Null,
            Want::Seq | Want::Tuple(_) => kind == Kind::Array,
            Want::Map | Want::Struct => kind == Kind::Object,
            Want::Enum { .. } => matches!(kind, Kind::String | Kind::Object),
        }
    }

    /// Whether the adapter can say what a value of this request must be (else the impl says).
    fn stated(self) -> bool {
        !matches!(
            self,
            Want::Any | Want::Option | Want::NewtypeStruct | Want::Ignored | Want::Bytes
        )
    }

    /// Whether the request's own words bound the acceptable values too (the integer ranges):
    /// then an `invalid_value` is stated by the adapter, otherwise the impl's words stay.
    fn bounds_values(self) -> bool {
        matches!(self, Want::Int { .. } | Want::Float | Want::Char)
    }
}

thread_local! {
    /// An error of ours crossing the parser's frames (module docs).
    static CARRIED: Cell<Option<Error>> = const { Cell::new(None) };
}

/// Empties the slot (at the start of a read: nothing from an earlier, abandoned one remains).
pub(super) fn clear() {
    CARRIED.with(Cell::take);
}

/// The error carried across the parser's frames, if one is.
pub(super) fn take_carried() -> Option<Error> {
    CARRIED.with(Cell::take)
}

fn put(e: Error) {
    CARRIED.with(|c| c.set(Some(e)));
}

/// `e` as an error of any serde error type: carried in the slot behind a marker of type `E`
/// (whose text is `e`'s words, for a caller that is not the adapter). When `E` is [`Error`]
/// itself, its `custom` takes `e` straight back.
pub(super) fn carry<E: de::Error>(e: Error) -> E {
    let words = e.to_string();
    put(e);
    E::custom(words)
}

/// `e` going up into a parser frame: the parser's error that brought it here (`native`,
/// which holds the position) is re-raised with `e` carried, or a new marker made.
pub(super) fn raise<E: de::Error>(e: Error, native: Option<E>) -> E {
    match native {
        Some(n) => {
            put(e);
            n
        }
        None => carry(e),
    }
}

/// The error of ours that came back from a parser frame, or the parser's own.
pub(super) fn recover() -> Error {
    take_carried().unwrap_or_else(|| Error::new(Problem::Parser))
}

impl Error {
    pub(super) fn new(problem: Problem) -> Error {
        Error(Box::new(Inner {
            problem,
            path: Vec::new(),
        }))
    }

    /// A refusal in the reader's own words.
    pub(super) fn message(text: impl Into<String>) -> Error {
        Error::new(Problem::Message(text.into()))
    }

    /// `got` where the adapter was asked for `want`.
    pub(super) fn mismatch(got: Got, want: Want) -> Error {
        Error::new(Problem::Mismatch {
            got,
            expected: Expected::Stated(want),
            value: false,
        })
    }

    pub(super) fn problem(&self) -> &Problem {
        &self.0.problem
    }

    /// The path, outermost segment first.
    pub(super) fn path(&self) -> impl Iterator<Item = &Segment> {
        self.0.path.iter().rev()
    }

    /// `self`, one level further in: `segment` is prepended to the path.
    pub(super) fn at(mut self, segment: Segment) -> Error {
        self.0.path.push(segment);
        self
    }

    /// The adapter's statement of what it was asked for (`want`) replaces the impl's own
    /// words, for a value that failed right here (not somewhere inside it).
    pub(super) fn stated(mut self, want: Want) -> Error {
        if !self.0.path.is_empty() || !want.stated() {
            return self;
        }
        match &mut self.0.problem {
            // A wrong type is the request's to state; a wrong value only where the request's
            // words bound the values (an integer's range), else it is the impl's domain rule.
            Problem::Mismatch {
                expected, value, ..
            } if !*value || want.bounds_values() => {
                *expected = Expected::Stated(want);
            }
            Problem::Length { expected, .. } if matches!(want, Want::Tuple(_)) => {
                *expected = Expected::Stated(want);
            }
            _ => {}
        }
        self
    }

    /// An unknown name of an enum, named by the enum's word (`unknown message part`) when its
    /// serde name is one (see [`Want::Enum`]).
    pub(super) fn naming(mut self, enum_name: &'static str) -> Error {
        if let Problem::UnknownName { noun, .. } = &mut self.0.problem {
            if self.0.path.is_empty() && noun.is_none() {
                *noun = format_word(enum_name);
            }
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.problem, f)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    /// A `Deserialize` impl's own words, or (when an error of ours is being carried into this
    /// very type) that error.
    fn custom<T: fmt::Display>(msg: T) -> Error {
        take_carried().unwrap_or_else(|| Error::message(msg.to_string()))
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn de::Expected) -> Error {
        Error::new(Problem::Mismatch {
            got: Got::of(unexp),
            expected: Expected::Said(exp.to_string()),
            value: false,
        })
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn de::Expected) -> Error {
        Error::new(Problem::Mismatch {
            got: Got::of(unexp),
            expected: Expected::Said(exp.to_string()),
            value: true,
        })
    }

    fn invalid_length(len: usize, exp: &dyn de::Expected) -> Error {
        Error::new(Problem::Length {
            len,
            expected: Expected::Said(exp.to_string()),
        })
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Error {
        Error::new(Problem::UnknownName {
            name: variant.to_owned(),
            accepted: expected,
            noun: None,
        })
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Error {
        Error::new(Problem::UnknownMember {
            name: field.to_owned(),
            accepted: expected,
        })
    }

    fn missing_field(field: &'static str) -> Error {
        Error::new(Problem::MissingMember(field))
    }

    fn duplicate_field(field: &'static str) -> Error {
        Error::new(Problem::DuplicateKey(field.to_owned()))
    }
}

/// The serde name of an enum as the format's word for its names: a name that starts with a
/// lowercase letter (`message part`) is one; a Rust identifier (`PartInput`) never is.
pub(super) fn format_word(name: &'static str) -> Option<&'static str> {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        .then_some(name)
}
