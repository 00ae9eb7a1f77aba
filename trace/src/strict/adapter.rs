//! The strict adapter: a serde `Deserializer` wrapping the parser's, which states what each
//! request reads ([`Want`]) and refuses any other kind of JSON value itself, refuses repeated
//! keys and non-object structs, reads enums as a name or a one-key object, and gives every
//! `Deserialize` impl below it the reader's own [`Error`], with the JSON path of a failure
//! added as the error passes up through each layer.
//!
//! Every value is requested from the parser with `deserialize_any` (except `Option`, newtype
//! structs and ignored values, which the parser never refuses), so the parser never judges a
//! value's type: it would describe the expectation with the visitor's Rust-flavoured
//! `expecting` text.

#[allow(
    clippy::wildcard_imports,
    reason = "one module split in five files; the parent holds the shared imports and paths"
)]
use super::*;

/// The strict, path-tracking adapter around a `Deserializer` (see the module docs). `E` is the
/// wrapped deserializer's error.
pub struct Strict<'n, D, E> {
    de: D,
    /// Where the parser's error is kept when a request fails, for the caller to re-raise (it
    /// holds the position).
    native: Option<&'n mut Option<E>>,
}

impl<'n, 'de, D: Deserializer<'de>> Strict<'n, D, D::Error> {
    /// Wraps `de`.
    pub fn new(de: D) -> Strict<'n, D, D::Error> {
        Strict { de, native: None }
    }

    /// Wraps `de`, keeping the parser's error of a failed request in `native`.
    pub(super) fn keeping(de: D, native: &'n mut Option<D::Error>) -> Strict<'n, D, D::Error> {
        Strict {
            de,
            native: Some(native),
        }
    }
}

/// The result of a request to the parser, its error turned back into ours (the parser's own
/// kept for the caller).
#[inline]
fn settle<T, E>(native: Option<&mut Option<E>>, r: Result<T, E>) -> Result<T, Error> {
    r.map_err(|n| {
        let e = recover();
        if let Some(slot) = native {
            *slot = Some(n);
        }
        e
    })
}

macro_rules! stated {
    ($($method:ident => $want:expr),* $(,)?) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            let Strict { de, native } = self;
            settle(native, de.deserialize_any(Wrap::new(visitor, $want)))
        }
    )*};
}

const fn int(bits: u8, signed: bool) -> Want {
    Want::Int { bits, signed }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<'_, D, D::Error> {
    type Error = Error;

    stated!(
        deserialize_any => Want::Any,
        deserialize_bool => Want::Bool,
        deserialize_i8 => int(8, true),
        deserialize_i16 => int(16, true),
        deserialize_i32 => int(32, true),
        deserialize_i64 => int(64, true),
        deserialize_i128 => int(128, true),
        deserialize_u8 => int(8, false),
        deserialize_u16 => int(16, false),
        deserialize_u32 => int(32, false),
        deserialize_u64 => int(64, false),
        deserialize_u128 => int(128, false),
        deserialize_f32 => Want::Float,
        deserialize_f64 => Want::Float,
        deserialize_char => Want::Char,
        deserialize_str => Want::Str,
        deserialize_string => Want::Str,
        deserialize_identifier => Want::Str,
        deserialize_bytes => Want::Bytes,
        deserialize_byte_buf => Want::Bytes,
        deserialize_unit => Want::Unit,
        deserialize_seq => Want::Seq,
        deserialize_map => Want::Map,
    );

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let Strict { de, native } = self;
        settle(
            native,
            de.deserialize_option(Wrap::new(visitor, Want::Option)),
        )
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let Strict { de, native } = self;
        settle(
            native,
            de.deserialize_ignored_any(Wrap::new(visitor, Want::Ignored)),
        )
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        let Strict { de, native } = self;
        settle(
            native,
            de.deserialize_newtype_struct(name, Wrap::new(visitor, Want::NewtypeStruct)),
        )
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        let Strict { de, native } = self;
        settle(
            native,
            de.deserialize_any(Wrap::new(visitor, Want::Tuple(len))),
        )
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_tuple(len, visitor)
    }

    /// A struct is an object, never an array of its fields.
    #[inline]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let Strict { de, native } = self;
        settle(native, de.deserialize_any(Wrap::new(visitor, Want::Struct)))
    }

    /// An enum is a name (a string) or an object with exactly one key, the name, whose value
    /// holds the rest; anything else is refused in the enum's own words.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let Strict { de, native } = self;
        settle(
            native,
            de.deserialize_any(EnumShape {
                visitor,
                name,
                variants,
            }),
        )
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// A visitor for one request (`want`): a value of another JSON kind is refused here, in the
/// adapter's words; anything else goes to the impl's visitor with the reader's [`Error`], and
/// nested values are read through [`Strict`].
pub(super) struct Wrap<V> {
    visitor: V,
    want: Want,
}

impl<V> Wrap<V> {
    pub(super) fn new(visitor: V, want: Want) -> Wrap<V> {
        Wrap { visitor, want }
    }
}

macro_rules! visit {
    ($($method:ident($ty:ty) => $kind:ident, $got:path);* $(;)?) => {$(
        #[inline]
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            let want = self.want;
            if !want.admits(Kind::$kind) {
                return Err(carry(Error::mismatch($got(v), want)));
            }
            self.visitor.$method::<Error>(v).map_err(|e| carry(e.stated(want)))
        }
    )*};
}

fn wide<T: fmt::Display>(v: T) -> Got {
    Got::Other(format!("the number {v}"))
}

fn text(v: &str) -> Got {
    Got::Str(v.to_owned())
}

fn character(v: char) -> Got {
    Got::Str(v.to_string())
}

fn bytes<T>(_: T) -> Got {
    Got::Other("a byte string".to_owned())
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.want == Want::Any {
            self.visitor.expecting(f)
        } else {
            write!(f, "{}", self.want)
        }
    }

    visit!(
        visit_bool(bool) => Bool, Got::Bool;
        visit_i64(i64) => Integer, Got::Signed;
        visit_u64(u64) => Integer, Got::Unsigned;
        visit_i128(i128) => Integer, wide;
        visit_u128(u128) => Integer, wide;
        visit_f64(f64) => Float, Got::Float;
        visit_char(char) => String, character;
        visit_str(&str) => String, text;
        visit_borrowed_str(&'de str) => String, text;
        visit_string(String) => String, Got::Str;
        visit_bytes(&[u8]) => String, bytes;
        visit_borrowed_bytes(&'de [u8]) => String, bytes;
        visit_byte_buf(Vec<u8>) => String, bytes;
    );

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        let want = self.want;
        if !want.admits(Kind::Null) {
            return Err(carry(Error::mismatch(Got::Null, want)));
        }
        self.visitor
            .visit_unit::<Error>()
            .map_err(|e| carry(e.stated(want)))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        let want = self.want;
        if !want.admits(Kind::Null) {
            return Err(carry(Error::mismatch(Got::Null, want)));
        }
        self.visitor
            .visit_none::<Error>()
            .map_err(|e| carry(e.stated(want)))
    }

    #[inline]
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let mut native = None;
        let r = self.visitor.visit_some(Strict::keeping(d, &mut native));
        r.map_err(|e| raise(e, native))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let mut native = None;
        let r = self
            .visitor
            .visit_newtype_struct(Strict::keeping(d, &mut native));
        r.map_err(|e| raise(e, native))
    }

    #[inline]
    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        let want = self.want;
        if !want.admits(Kind::Array) {
            return Err(carry(Error::mismatch(Got::Array, want)));
        }
        let mut s = SeqWrap {
            seq,
            index: 0,
            native: None,
            done: false,
        };
        match self.visitor.visit_seq(&mut s) {
            Ok(v) => match s.finish() {
                Ok(()) => Ok(v),
                Err(e) => Err(raise(e.stated(want), s.native.take())),
            },
            Err(e) => Err(raise(e.stated(want), s.native.take())),
        }
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let want = self.want;
        if !want.admits(Kind::Object) {
            return Err(carry(Error::mismatch(Got::Object, want)));
        }
        let mut m = MapWrap::new(map);
        match self.visitor.visit_map(&mut m) {
            Ok(v) => match m.finish() {
                Ok(()) => Ok(v),
                Err(e) => Err(raise(e.stated(want), m.native.take())),
            },
            Err(e) => Err(raise(e.stated(want), m.native.take())),
        }
    }

    /// The parser never offers an enum (the adapter asks for enums with `deserialize_any`).
    fn visit_enum<A: de::EnumAccess<'de>>(self, _data: A) -> Result<Self::Value, A::Error> {
        Err(carry(Error::mismatch(
            Got::Other("an object with one key".to_owned()),
            self.want,
        )))
    }
}

/// A seed whose value is read through [`Strict`].
pub(super) struct SeedWrap<S>(pub(super) S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for SeedWrap<S> {
    type Value = S::Value;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        let mut native = None;
        let r = self.0.deserialize(Strict::keeping(d, &mut native));
        r.map_err(|e| raise(e, native))
    }
}

/// The elements of an array, each read through [`Strict`], a failing one noted by its index.
pub(super) struct SeqWrap<A, E> {
    seq: A,
    index: usize,
    /// The parser's error of a failed element (see [`Strict`]).
    native: Option<E>,
    done: bool,
}

impl<'de, A: de::SeqAccess<'de>> SeqWrap<A, A::Error> {
    /// Reads the elements a visitor left (a fixed-size visitor that stopped early): an array
    /// longer than the visitor reads is refused, as the parser would refuse it as text.
    fn finish(&mut self) -> Result<(), Error> {
        if self.done {
            return Ok(());
        }
        let read = self.index;
        let mut extra = 0;
        while de::SeqAccess::next_element_seed(&mut *self, PhantomData::<IgnoredAny>)?.is_some() {
            extra += 1;
        }
        if extra == 0 {
            return Ok(());
        }
        Err(Error::new(Problem::Length {
            len: read + extra,
            expected: Expected::Said(format!("an array of at most {read} elements")),
        }))
    }
}

impl<'de, A: de::SeqAccess<'de>> de::SeqAccess<'de> for SeqWrap<A, A::Error> {
    type Error = Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        if self.done {
            return Ok(None);
        }
        let r = self.seq.next_element_seed(SeedWrap(seed));
        match &r {
            Ok(Some(_)) => self.index += 1,
            Ok(None) => self.done = true,
            Err(_) => {}
        }
        r.map_err(|n| {
            let e = recover();
            self.native = Some(n);
            e.at(Segment::Index(self.index))
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// An object key, borrowed from the text when it has no escapes.
pub(super) struct Key<'de>(pub(super) Cow<'de, str>);

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

/// An object key handed to a `Deserialize` impl (a struct's member name, a map's key, an
/// enum's name): a string, with the adapter's statement of any other request.
pub(super) struct KeyDe<'de>(pub(super) Cow<'de, str>);

impl<'de> KeyDe<'de> {
    /// The key as `want`: a number or a boolean read from the key's text where one is asked
    /// for (as serde_json reads keys), else the string.
    #[inline]
    fn read<V: Visitor<'de>>(self, visitor: V, want: Want) -> Result<V::Value, Error> {
        let w = Wrap::new(visitor, want);
        let text: &str = &self.0;
        match want {
            Want::Int { .. } | Want::Float => {
                if let Ok(n) = text.parse::<u64>() {
                    return w.visit_u64(n);
                }
                if let Ok(n) = text.parse::<i64>() {
                    return w.visit_i64(n);
                }
                if want == Want::Float {
                    if let Ok(x) = text.parse::<f64>() {
                        return w.visit_f64(x);
                    }
                }
            }
            Want::Bool if text == "true" || text == "false" => return w.visit_bool(text == "true"),
            _ => {}
        }
        match self.0 {
            Cow::Borrowed(s) => w.visit_borrowed_str(s),
            Cow::Owned(s) => w.visit_string(s),
        }
    }
}

macro_rules! key_stated {
    ($($method:ident => $want:expr),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.read(visitor, $want)
        }
    )*};
}

impl<'de> Deserializer<'de> for KeyDe<'de> {
    type Error = Error;

    key_stated!(
        deserialize_any => Want::Any,
        deserialize_bool => Want::Bool,
        deserialize_i8 => int(8, true),
        deserialize_i16 => int(16, true),
        deserialize_i32 => int(32, true),
        deserialize_i64 => int(64, true),
        deserialize_i128 => int(128, true),
        deserialize_u8 => int(8, false),
        deserialize_u16 => int(16, false),
        deserialize_u32 => int(32, false),
        deserialize_u64 => int(64, false),
        deserialize_u128 => int(128, false),
        deserialize_f32 => Want::Float,
        deserialize_f64 => Want::Float,
        deserialize_char => Want::Char,
        deserialize_str => Want::Str,
        deserialize_string => Want::Str,
        deserialize_identifier => Want::Str,
        deserialize_bytes => Want::Bytes,
        deserialize_byte_buf => Want::Bytes,
        deserialize_unit => Want::Unit,
        deserialize_seq => Want::Seq,
        deserialize_map => Want::Map,
    );

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.read(visitor, Want::Unit)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        self.read(visitor, Want::Tuple(len))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.read(visitor, Want::Tuple(len))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.read(visitor, Want::Struct)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let shape = EnumShape {
            visitor,
            name,
            variants,
        };
        match self.0 {
            Cow::Borrowed(s) => shape.visit_borrowed_str(s),
            Cow::Owned(s) => shape.visit_string(s),
        }
    }
}

/// Keys of an object kept inline for the repeated-key check (an object with more spills into a
/// hash set). Sixteen: a trace's call record, its result and its diagnostics (10-16 members
/// each) are checked without allocating or hashing.
const INLINE_KEYS: usize = 16;

/// The keys of one object read so far: the first [`INLINE_KEYS`] borrowed ones in place (a
/// small object allocates nothing for the check), the others (and keys with escapes, which the
/// parser had to copy) in a hash set (a map keyed by ids stays linear).
struct Seen<'de> {
    inline: [&'de str; INLINE_KEYS],
    len: usize,
    rest: std::collections::HashSet<Cow<'de, str>>,
}

impl<'de> Seen<'de> {
    #[inline]
    fn new() -> Seen<'de> {
        Seen {
            inline: [""; INLINE_KEYS],
            len: 0,
            rest: std::collections::HashSet::new(),
        }
    }

    /// Remembers `key`; false if the object already had it.
    #[inline]
    #[allow(
        clippy::ptr_arg,
        reason = "the Cow is kept: a borrowed key stays borrowed"
    )]
    fn first_time(&mut self, key: &Cow<'de, str>) -> bool {
        let text: &str = key;
        if self.inline[..self.len].contains(&text) {
            return false;
        }
        match key {
            Cow::Borrowed(k) if self.len < INLINE_KEYS => {
                self.inline[self.len] = k;
                self.len += 1;
                true
            }
            _ => !self.rest.contains(text) && self.rest.insert(key.clone()),
        }
    }
}

/// The members of an object: keys checked for repeats as they are read, values read through
/// [`Strict`], a failing member noted by its key.
pub(super) struct MapWrap<'de, A: MapAccess<'de>> {
    map: A,
    seen: Seen<'de>,
    /// The key whose value is next.
    current: Option<Cow<'de, str>>,
    /// The parser's error of a failed member (see [`Strict`]).
    pub(super) native: Option<A::Error>,
    done: bool,
}

impl<'de, A: MapAccess<'de>> MapWrap<'de, A> {
    pub(super) fn new(map: A) -> MapWrap<'de, A> {
        MapWrap {
            map,
            seen: Seen::new(),
            current: None,
            native: None,
            done: false,
        }
    }

    /// The next key (`None` at the end), refused if the object already had it.
    #[inline]
    pub(super) fn key(&mut self) -> Result<Option<Cow<'de, str>>, Error> {
        match self.map.next_key::<Key<'de>>() {
            Err(n) => {
                let e = recover();
                self.native = Some(n);
                Err(e)
            }
            Ok(None) => {
                self.done = true;
                Ok(None)
            }
            Ok(Some(Key(key))) if !self.seen.first_time(&key) => {
                let e = Error::new(Problem::DuplicateKey(key.clone().into_owned()));
                Err(e.at(Segment::Key(key.into_owned())))
            }
            Ok(Some(Key(key))) => Ok(Some(key)),
        }
    }

    /// The value of the member `key` (just read), through `seed`.
    #[inline]
    pub(super) fn value<V: DeserializeSeed<'de>>(
        &mut self,
        key: &str,
        seed: V,
    ) -> Result<V::Value, Error> {
        self.map.next_value_seed(SeedWrap(seed)).map_err(|n| {
            let e = recover();
            self.native = Some(n);
            e.at(Segment::Key(key.to_owned()))
        })
    }

    /// Reads the members a visitor left: an object whose visitor stopped early is refused at
    /// its next member (as the parser would refuse it as text).
    fn finish(&mut self) -> Result<(), Error> {
        if self.done {
            return Ok(());
        }
        if let Some(k) = self.current.take() {
            self.value(&k, PhantomData::<IgnoredAny>)?;
        }
        match self.key()? {
            None => Ok(()),
            Some(k) => {
                let e = Error::message(format!(
                    "unexpected member {}",
                    serde_json::Value::from(k.as_ref())
                ));
                Err(e.at(Segment::Key(k.into_owned())))
            }
        }
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for MapWrap<'de, A> {
    type Error = Error;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(key) = self.key()? else {
            return Ok(None);
        };
        match seed.deserialize(KeyDe(key.clone())) {
            Ok(v) => {
                self.current = Some(key);
                Ok(Some(v))
            }
            Err(e) => Err(e.at(Segment::Key(key.into_owned()))),
        }
    }

    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let key = self.current.take().unwrap_or_default();
        self.value(&key, seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// Reads an enum from a string (a name alone) or a one-key object; any other value is refused
/// naming the enum's names.
pub(super) struct EnumShape<V> {
    visitor: V,
    name: &'static str,
    variants: &'static [&'static str],
}

impl<V> EnumShape<V> {
    fn want(&self) -> Want {
        Want::Enum {
            name: self.name,
            variants: self.variants,
        }
    }
}

impl<'de, V: Visitor<'de>> EnumShape<V> {
    fn name_only<E: de::Error>(self, name: Cow<'de, str>) -> Result<V::Value, E> {
        let access = NameOnly {
            name,
            enum_name: self.name,
        };
        self.visitor.visit_enum(access).map_err(carry)
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for EnumShape<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.want())
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        self.name_only(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.name_only(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        self.name_only(Cow::Owned(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let mut m = MapWrap::new(map);
        let access = OneKey {
            map: &mut m,
            enum_name: self.name,
        };
        let r = self.visitor.visit_enum(access);
        r.map_err(|e| raise(e, m.native.take()))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, _seq: A) -> Result<V::Value, A::Error> {
        Err(carry(Error::mismatch(Got::Array, self.want())))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<V::Value, E> {
        Err(carry(Error::mismatch(Got::Bool(v), self.want())))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        Err(carry(Error::mismatch(Got::Signed(v), self.want())))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        Err(carry(Error::mismatch(Got::Unsigned(v), self.want())))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        Err(carry(Error::mismatch(Got::Float(v), self.want())))
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        Err(carry(Error::mismatch(Got::Null, self.want())))
    }
}

/// An enum written as its name alone (a unit variant).
pub(super) struct NameOnly<'de> {
    name: Cow<'de, str>,
    enum_name: &'static str,
}

impl<'de> de::EnumAccess<'de> for NameOnly<'de> {
    type Error = Error;
    type Variant = NameOnly<'de>;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self), Error> {
        let v = seed
            .deserialize(KeyDe(self.name.clone()))
            .map_err(|e| e.naming(self.enum_name))?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for NameOnly<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value, Error> {
        Err(self.needs_value())
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Error> {
        Err(self.needs_value())
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Error> {
        Err(self.needs_value())
    }
}

impl NameOnly<'_> {
    fn needs_value(&self) -> Error {
        Error::message(format!(
            "`{0}` takes a value: write {{\"{0}\": ...}}",
            self.name
        ))
    }
}

/// An enum written as an object with one key (the name) and its value.
pub(super) struct OneKey<'a, 'de, A: MapAccess<'de>> {
    map: &'a mut MapWrap<'de, A>,
    enum_name: &'static str,
}

impl<'a, 'de, A: MapAccess<'de>> de::EnumAccess<'de> for OneKey<'a, 'de, A> {
    type Error = Error;
    type Variant = OneKeyValue<'a, 'de, A>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), Error> {
        let Some(key) = self.map.key()? else {
            return Err(Error::message(
                "expected an object with exactly one key, got an empty object",
            ));
        };
        let v = seed
            .deserialize(KeyDe(key.clone()))
            .map_err(|e| e.naming(self.enum_name))?;
        Ok((v, OneKeyValue { map: self.map, key }))
    }
}

/// The value of a one-key enum object.
pub(super) struct OneKeyValue<'a, 'de, A: MapAccess<'de>> {
    map: &'a mut MapWrap<'de, A>,
    key: Cow<'de, str>,
}

impl<'de, A: MapAccess<'de>> OneKeyValue<'_, 'de, A> {
    /// `value`, if the object has no other key (a second key is refused under the first).
    fn only<T>(self, value: T) -> Result<T, Error> {
        let under = |e: Error| e.at(Segment::Key(self.key.to_string()));
        match self.map.key().map_err(under)? {
            None => Ok(value),
            Some(k) => Err(under(Error::message(format!(
                "expected an object with exactly one key, got another key {}",
                serde_json::Value::from(k.as_ref())
            )))),
        }
    }
}

impl<'de, A: MapAccess<'de>> de::VariantAccess<'de> for OneKeyValue<'_, 'de, A> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        self.map.value(&self.key, PhantomData::<()>)?;
        self.only(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        let v = self.map.value(&self.key, seed)?;
        self.only(v)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        let v = self.map.value(&self.key, ShapeSeed::Tuple(len, visitor))?;
        self.only(v)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let v = self
            .map
            .value(&self.key, ShapeSeed::Struct(fields, visitor))?;
        self.only(v)
    }
}

/// The value of a tuple or struct variant (read through [`Strict`], as every value).
pub(super) enum ShapeSeed<V> {
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
