//! The strict adapter: a serde `Deserializer` wrapping another one, refusing repeated keys and
//! non-object structs, reading enums as a name or a one-key object, and noting the JSON path of
//! a failure as the error passes up through each layer.

#[allow(
    clippy::wildcard_imports,
    reason = "one module split in four files; the parent holds the shared imports and paths"
)]
use super::*;

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
pub(super) struct EnumShape<V>(V);

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
pub(super) struct NameOnly<E>(String, PhantomData<E>);

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
pub(super) struct OneKey<A>(A);

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

/// A visitor whose nested values are read through [`Strict`].
pub(super) struct Wrap<V>(V);

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
pub(super) struct SeedWrap<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for SeedWrap<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Strict::new(d))
    }
}

pub(super) struct SeqWrap<A> {
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

/// Above this many keys an object's duplicate check switches from a scan to a hash set.
const SCAN_KEYS: usize = 16;

pub(super) struct MapWrap<'de, A> {
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

pub(super) struct EnumWrap<A> {
    data: A,
    what: String,
}

/// `a message part` -> `message part`.
pub(super) fn without_article(what: &str) -> &str {
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

pub(super) struct VariantWrap<A> {
    access: A,
    name: String,
}

/// `r`, with the variant `name` noted as a path segment if it failed.
pub(super) fn under<T, E>(name: String, r: Result<T, E>) -> Result<T, E> {
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
