//! `diagnostics`: a diagnostics record given field by field (SPEC DIA-1 .. DIA-4). Categorical
//! values are given by name or ordinal, so undefined values are expressible; the answer is the
//! record echoed (names as given, ordinals as their names when defined) or the typed error of
//! the record's checks.

use hybrid_compaction_model::assembly::{CompactionOutcome, StageCategory};
use hybrid_compaction_model::diagnostics::{ContributionFields, RecordFields};
use hybrid_compaction_model::entry::Category;
use hybrid_compaction_model::estimator::MeasurementUnit;
use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::error::{typed, CaseError};

/// A categorical value of a diagnostics record: its name, or its ordinal (declaration order,
/// 0-based). A name that is no member, or an ordinal out of range, is an *undefined* value,
/// which the record's checks reject (SPEC DIA-3, DIA-4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum EnumValueInput {
    /// The ordinal.
    Ordinal(i64),
    /// The name.
    Name(String),
}

impl<'de> Deserialize<'de> for EnumValueInput {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(s) => Ok(EnumValueInput::Name(s)),
            serde_json::Value::Number(n) if n.as_i64().is_some() => {
                Ok(EnumValueInput::Ordinal(n.as_i64().unwrap_or_default()))
            }
            other => Err(serde::de::Error::custom(format!(
                "expected a name (string) or an ordinal (integer), got {other}"
            ))),
        }
    }
}

/// Inputs of the `diagnostics` operation: a record given field by field (SPEC DIA-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiagnosticsCase {
    /// The outcome (SPEC ASM-1 names).
    pub outcome: EnumValueInput,
    /// The measurement unit (SPEC EST-1 names).
    pub measurement_unit: EnumValueInput,
    /// `OriginalSize`.
    pub original_size: i32,
    /// `FinalSize`.
    pub final_size: i32,
    /// `TriggerThreshold`.
    pub trigger_threshold: i32,
    /// `HardLimit`.
    pub hard_limit: i32,
    /// `AttemptCount`.
    pub attempt_count: i32,
    /// Stage categories (SPEC ASM-2 names); not checked by the record (echoed).
    #[serde(default)]
    pub stages: Vec<EnumValueInput>,
    /// The contributions, in the given order.
    #[serde(default)]
    pub category_contributions: Vec<ContributionInput>,
    /// `FinalSequenceValid`: `true`, `false`, or absent / null.
    #[serde(default)]
    pub final_sequence_valid: Option<bool>,
}

/// One contribution given field by field (SPEC DIA-6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContributionInput {
    /// The category (SPEC ENT-1 names).
    pub category: EnumValueInput,
    /// The size.
    pub size: i32,
    /// The entry count.
    pub entry_count: i32,
}

/// A categorical value: `Ok(Some)` defined, `Ok(None)` undefined; the echo text.
fn enum_value<T: Copy>(
    v: &EnumValueInput,
    all: &[T],
    names: &[&str],
    from_name: fn(&str) -> Option<T>,
) -> (Option<T>, String) {
    match v {
        EnumValueInput::Name(n) => (from_name(n), n.clone()),
        EnumValueInput::Ordinal(i) => {
            let value = usize::try_from(*i).ok().and_then(|i| all.get(i).copied());
            let text = usize::try_from(*i)
                .ok()
                .and_then(|i| names.get(i))
                .map_or_else(|| i.to_string(), |n| (*n).to_owned());
            (value, text)
        }
    }
}

/// One contribution as given (SPEC DIA-6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContributionEchoOutput {
    /// The category, as given.
    pub category: String,
    /// The size.
    pub size: i32,
    /// The entry count.
    pub entry_count: i32,
}

/// A record that passed its checks, echoed (SPEC DIA-1): categorical values by the name given,
/// or by their name when given as a defined ordinal; `stages` are not checked by the record, so
/// an undefined stage is echoed as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordEchoOutput {
    /// The outcome category.
    pub outcome: String,
    /// The unit.
    pub measurement_unit: String,
    /// `OriginalSize`.
    pub original_size: i32,
    /// `FinalSize`.
    pub final_size: i32,
    /// `TriggerThreshold`.
    pub trigger_threshold: i32,
    /// `HardLimit`.
    pub hard_limit: i32,
    /// `AttemptCount`.
    pub attempt_count: i32,
    /// Stage categories.
    pub stages: Vec<String>,
    /// Contributions in the given order.
    pub category_contributions: Vec<ContributionEchoOutput>,
    /// `true` on success, null on termination.
    pub final_sequence_valid: Option<bool>,
}

/// The answer of `diagnostics`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiagnosticsAnswer {
    /// The record.
    pub diagnostics: RecordEchoOutput,
}

impl Operation for DiagnosticsCase {
    const ANSWER: &'static str = "diagnostics";
    type Answer = DiagnosticsAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<DiagnosticsAnswer, CaseError> {
        let c = self;
        let (outcome, outcome_text) = enum_value(
            &c.outcome,
            &CompactionOutcome::ALL,
            &CompactionOutcome::NAMES,
            CompactionOutcome::from_name,
        );
        let (unit, unit_text) = enum_value(
            &c.measurement_unit,
            &MeasurementUnit::ALL,
            &MeasurementUnit::NAMES,
            MeasurementUnit::from_name,
        );
        let mut contributions = Vec::with_capacity(c.category_contributions.len());
        let mut echoed = Vec::with_capacity(c.category_contributions.len());
        for x in &c.category_contributions {
            let (category, text) = enum_value(
                &x.category,
                &Category::ALL,
                &Category::NAMES,
                Category::from_name,
            );
            contributions.push(ContributionFields {
                category,
                size: x.size,
                entry_count: x.entry_count,
            });
            echoed.push(ContributionEchoOutput {
                category: text,
                size: x.size,
                entry_count: x.entry_count,
            });
        }
        let fields = RecordFields {
            outcome,
            measurement_unit: unit,
            original_size: c.original_size,
            final_size: c.final_size,
            trigger_threshold: c.trigger_threshold,
            hard_limit: c.hard_limit,
            attempt_count: c.attempt_count,
            category_contributions: contributions,
            final_sequence_valid: c.final_sequence_valid,
        };
        imp.validate_record(&fields).map_err(|e| typed(&e))?;
        let stages = c
            .stages
            .iter()
            .map(|s| {
                enum_value(
                    s,
                    &StageCategory::ALL,
                    &StageCategory::NAMES,
                    StageCategory::from_name,
                )
                .1
            })
            .collect();
        Ok(DiagnosticsAnswer {
            diagnostics: RecordEchoOutput {
                outcome: outcome_text,
                measurement_unit: unit_text,
                original_size: c.original_size,
                final_size: c.final_size,
                trigger_threshold: c.trigger_threshold,
                hard_limit: c.hard_limit,
                attempt_count: c.attempt_count,
                stages,
                category_contributions: echoed,
                final_sequence_valid: c.final_sequence_valid,
            },
        })
    }
}
