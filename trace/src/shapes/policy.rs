//! Policies and size estimators as the wire and the trace write them (SPEC POL-1, EST-1 ..
//! EST-7): the serde images of `docs/WIRE.md`'s `policy` and `estimator` objects.
//!
//! Syntax only: turning them into a vocabulary `Policy` (validating it, building the estimator)
//! is the oracle's job. An enum's serde name is the format's word for its names, which the strict
//! reader's refusals use.

use std::collections::BTreeMap;

use hybrid_compaction_model::estimator::MeasurementUnit;
#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use super::names::Name;
use crate::strict::{self, unlisted, TaggedUnion};

impl EstimatorInput {
    /// Parses the CLI shorthand: `utf8`, `utf8-text`, `tokens:o200k_base`, `tokens:cl100k_base`,
    /// each optionally prefixed by `memo:` (SPEC EST-2, EST-4, EST-6, EST-7).
    pub fn from_shorthand(text: &str) -> Option<EstimatorInput> {
        if let Some(inner) = text.strip_prefix("memo:") {
            return Some(EstimatorInput::Memo(MemoEstimatorInput {
                estimator: Box::new(EstimatorInput::from_shorthand(inner)?),
                capacity: None,
            }));
        }
        Some(match text {
            "utf8" => EstimatorInput::Utf8(NoParameters {}),
            "utf8-text" => EstimatorInput::Utf8Text(NoParameters {}),
            "tokens:o200k_base" | "tokens" => EstimatorInput::Tokens(TokensEstimatorInput {
                encoding: EncodingInput::O200kBase,
            }),
            "tokens:cl100k_base" => EstimatorInput::Tokens(TokensEstimatorInput {
                encoding: EncodingInput::Cl100kBase,
            }),
            _ => return None,
        })
    }
}

/// Policy inputs (SPEC POL-1). Numbers are signed 32-bit; label and estimator may be absent
/// (or null), which the policy rejects as a null argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyInput {
    /// `HardLimit`.
    pub hard_limit: i32,
    /// `TriggerMargin`.
    pub trigger_margin: i32,
    /// `RecentMessageRetentionCount`.
    pub recent_message_retention_count: i32,
    /// `MaximumCompactionAttempts`.
    pub maximum_compaction_attempts: i32,
    /// `PreservationLabel` (absent or null: missing).
    #[serde(default)]
    pub preservation_label: Option<String>,
    /// `PreservationVersion`.
    pub preservation_version: i32,
    /// `SizeEstimator` (absent or null: missing).
    #[serde(default)]
    pub estimator: Option<EstimatorInput>,
}

/// A size estimator (SPEC EST-1 .. EST-5).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum EstimatorInput {
    /// The UTF-8 context estimator (SPEC EST-2), `Utf8Bytes`.
    Utf8(NoParameters),
    /// The UTF-8 text-only estimator (SPEC EST-4), `Utf8Bytes`.
    Utf8Text(NoParameters),
    /// Every entry measures `size` (SPEC EST-5), `HostDefinedUnits`.
    Constant(ConstantEstimatorInput),
    /// Per-id sizes with a default (SPEC EST-5), `HostDefinedUnits`.
    Table(TableEstimatorInput),
    /// Provider tokens with a bundled BPE encoding (SPEC EST-6), `EstimatedTokens`.
    Tokens(TokensEstimatorInput),
    /// Another estimator behind a memo (SPEC EST-7); its unit.
    Memo(MemoEstimatorInput),
    /// The sizes recorded with each entry of a trace, in the declared unit: only a trace has
    /// them (`docs/TRACE.md`); a wire case naming it is refused.
    Recorded(RecordedEstimatorInput),
}

/// Parameters of the `recorded` estimator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedEstimatorInput {
    /// The unit of the recorded sizes (default `HostDefinedUnits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<Name<MeasurementUnit>>,
}

impl TaggedUnion for EstimatorInput {
    const TAG: &'static str = "kind";
    const NAMES: &'static [&'static str] = &[
        "utf8",
        "utf8-text",
        "constant",
        "table",
        "tokens",
        "memo",
        "recorded",
    ];
    const WHAT: &'static str = "estimator kind";

    fn read_as<'de, D: Deserializer<'de>>(name: &str, rest: D) -> Result<Self, D::Error> {
        Ok(match name {
            "utf8" => EstimatorInput::Utf8(NoParameters::deserialize(rest)?),
            "utf8-text" => EstimatorInput::Utf8Text(NoParameters::deserialize(rest)?),
            "constant" => EstimatorInput::Constant(ConstantEstimatorInput::deserialize(rest)?),
            "table" => EstimatorInput::Table(TableEstimatorInput::deserialize(rest)?),
            "tokens" => EstimatorInput::Tokens(TokensEstimatorInput::deserialize(rest)?),
            "memo" => EstimatorInput::Memo(MemoEstimatorInput::deserialize(rest)?),
            "recorded" => EstimatorInput::Recorded(RecordedEstimatorInput::deserialize(rest)?),
            _ => return Err(unlisted(name)),
        })
    }
}

impl<'de> Deserialize<'de> for EstimatorInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        strict::tagged(d)
    }
}

/// Parameters of the `memo` estimator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoEstimatorInput {
    /// The wrapped estimator.
    pub estimator: Box<EstimatorInput>,
    /// Sizes per cache generation (absent: the library default, 65536; 0 means 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u32>,
}

/// Parameters of the `tokens` estimator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokensEstimatorInput {
    /// The BPE encoding.
    pub encoding: EncodingInput,
}

/// A bundled BPE encoding (SPEC EST-6), by its tiktoken name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename = "encoding")]
#[cfg_attr(feature = "schema", schemars(rename = "EncodingInput"))]
pub enum EncodingInput {
    /// `o200k_base`.
    #[serde(rename = "o200k_base")]
    O200kBase,
    /// `cl100k_base`.
    #[serde(rename = "cl100k_base")]
    Cl100kBase,
}

/// An estimator without parameters (only `kind`; any other member is refused).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NoParameters {}

/// Parameters of the `constant` estimator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConstantEstimatorInput {
    /// The size of every entry (may be negative, to exercise SPEC POL-3).
    pub size: i32,
}

/// Parameters of the `table` estimator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TableEstimatorInput {
    /// Size per entry id.
    pub sizes: BTreeMap<String, i32>,
    /// Size of every entry not in `sizes`.
    pub default: i32,
}
