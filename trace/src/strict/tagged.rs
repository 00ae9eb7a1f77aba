//! Tagged unions (`op`, `kind`, `type`) read without serde's buffering of internally tagged
//! enums: the tag selects the type, and the rest of the object is streamed into it when the tag
//! comes first.

#[allow(
    clippy::wildcard_imports,
    reason = "one module split in five files; the parent holds the shared imports and paths"
)]
use super::*;

/// A name in `NAMES` without its line in `read_as` (a programming error, reported as input).
pub fn unlisted<E: serde::de::Error>(name: &str) -> E {
    E::custom(format!(
        "`{name}` is accepted but not readable (a bug of this reader)"
    ))
}

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

/// Reads a [`TaggedUnion`] (for its `Deserialize` impl). It asks for any value, so a value
/// that is not an object is refused in its words: `expected an object with `op``.
pub fn tagged<'de, T: TaggedUnion, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(TaggedVisitor(PhantomData::<T>))
}

pub(super) struct TaggedVisitor<T>(PhantomData<T>);

/// Reads the tag's value, refusing names outside `T::NAMES`.
pub(super) struct TagSeed<T>(PhantomData<T>);

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
        // Read the buffered members through the adapter, so paths and wording stay the same;
        // its error (the reader's) is carried up as this map's.
        T::read_as(&name, Strict::new(serde_json::Value::Object(rest))).map_err(carry)
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

pub(super) struct SkipTag<A> {
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
                // The key read as the reader reads every key, a failing one noted on the path.
                return match seed.deserialize(KeyDe(key.clone())) {
                    Ok(v) => Ok(Some(v)),
                    Err(e) => Err(carry(e.at(Segment::Key(key.into_owned())))),
                };
            }
            let value: String = self.map.next_value()?;
            if value != self.name {
                return Err(carry(
                    Error::message(format!(
                        "this command takes `{}` cases only, got {}",
                        self.name,
                        serde_json::Value::from(value)
                    ))
                    .at(Segment::Key(self.tag.to_owned())),
                ));
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}
