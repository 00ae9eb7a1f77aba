//! Categorical values on the wire: [`Name<T>`] writes a vocabulary enum by its stable name and
//! publishes the names as the schema's `enum`, so an output schema says which outcomes, stages,
//! reasons and kinds can appear (SPEC ASM-1, ASM-2, VER-3, ERR-1, ...).

use std::fmt;

use hybrid_compaction_model::entry::EntryId;
use hybrid_compaction_model::Named;
#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A vocabulary enum written as its stable name.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name<T>(pub T);

impl<T: Named> Name<T> {
    /// The stable name.
    pub fn as_str(&self) -> &'static str {
        self.0.name()
    }
}

impl<T: Named> fmt::Debug for Name<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name())
    }
}

impl<T: Named> fmt::Display for Name<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name())
    }
}

impl<T> From<T> for Name<T> {
    fn from(value: T) -> Name<T> {
        Name(value)
    }
}

impl<T: Named> PartialEq<str> for Name<T> {
    fn eq(&self, other: &str) -> bool {
        self.0.name() == other
    }
}

impl<T: Named> Serialize for Name<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.name())
    }
}

impl<'de, T: Named> Deserialize<'de> for Name<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Borrowed where it can be: a name is only looked up.
        let name = crate::strict::Text::deserialize(deserializer)?;
        T::from_name(&name).map(Name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown {} {}, expected one of {}",
                T::TYPE,
                serde_json::Value::from(&*name),
                T::names().join(", ")
            ))
        })
    }
}

#[cfg(feature = "schema")]
impl<T: Named> JsonSchema for Name<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Owned(format!("{}Name", T::TYPE))
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": format!("A `{}` by its stable name.", T::TYPE),
            "type": "string",
            "enum": T::names(),
        })
    }
}

/// An entry id on the wire, written as its text (the schema's plain string). Rendered from the
/// vocabulary it shares the entry's id instead of copying its text, so a checker comparing the
/// ids an implementation answered with the ids a trace names (both handles of one table
/// entry's id) neither allocates nor reads the text; read from a record it holds the text
/// read. Two ids are equal when their texts are.
#[derive(Clone)]
pub enum Id {
    /// A vocabulary id (shared, not copied).
    Shared(EntryId),
    /// The text read.
    Text(String),
}

impl Id {
    /// The id text.
    pub fn as_str(&self) -> &str {
        match self {
            Id::Shared(id) => id.as_str(),
            Id::Text(t) => t,
        }
    }
}

impl std::ops::Deref for Id {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Id {
    fn eq(&self, other: &Id) -> bool {
        match (self, other) {
            // Handles of one id are equal without reading the text (`Arc`'s equality).
            (Id::Shared(a), Id::Shared(b)) => a == b,
            _ => self.as_str() == other.as_str(),
        }
    }
}

impl Eq for Id {}

impl PartialEq<str> for Id {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Id {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&EntryId> for Id {
    fn from(id: &EntryId) -> Id {
        Id::Shared(id.clone())
    }
}

impl From<String> for Id {
    fn from(text: String) -> Id {
        Id::Text(text)
    }
}

impl From<&str> for Id {
    fn from(text: &str) -> Id {
        Id::Text(text.to_owned())
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Id {
    /// Read as a `String` is (the same request, so the same refusals).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Id::Text)
    }
}

#[cfg(feature = "schema")]
impl JsonSchema for Id {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::Id;
    use hybrid_compaction_model::entry::EntryId;

    /// Ids are equal exactly when their texts are, whichever way each was made: two handles of
    /// one vocabulary id, two vocabulary ids with the same text, a vocabulary id and the text
    /// read; and they are written and read as plain strings.
    #[test]
    fn ids_are_equal_when_their_texts_are() {
        let a = EntryId::new("m-\u{e9}").unwrap();
        let same_text = EntryId::new("m-\u{e9}").unwrap();
        let other = EntryId::new("m-e").unwrap();
        let forms = |id: &EntryId| [Id::from(id), Id::from(id.clone().as_str()), Id::from(id)];
        for x in forms(&a) {
            for y in forms(&a).into_iter().chain(forms(&same_text)) {
                assert_eq!(x, y);
            }
            for y in forms(&other) {
                assert_ne!(x, y);
                assert_ne!(y, x);
            }
            assert!(x == "m-\u{e9}" && x != "m-e");
            let written = serde_json::to_string(&x).unwrap();
            assert_eq!(written, "\"m-\u{e9}\"");
            assert_eq!(serde_json::from_str::<Id>(&written).unwrap(), x);
            assert_eq!(format!("{x:?}"), format!("{:?}", "m-\u{e9}"));
        }
    }
}
