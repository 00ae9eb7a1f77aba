//! Categorical values on the wire: [`Name<T>`] writes a vocabulary enum by its stable name and
//! publishes the names as the schema's `enum`, so an output schema says which outcomes, stages,
//! reasons and kinds can appear (SPEC ASM-1, ASM-2, VER-3, ERR-1, ...).

use std::borrow::Cow;
use std::fmt;

use hybrid_compaction_model::Named;
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
        let name = crate::wire::strict::Text::deserialize(deserializer)?;
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

impl<T: Named> JsonSchema for Name<T> {
    fn schema_name() -> Cow<'static, str> {
        Cow::Owned(format!("{}Name", T::TYPE))
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": format!("A `{}` by its stable name.", T::TYPE),
            "type": "string",
            "enum": T::names(),
        })
    }
}
