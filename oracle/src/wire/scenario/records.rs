//! The `diagnostics` and `bridge` operations (SPEC DIA-1 .. DIA-4, BRG-1 .. BRG-3).

use std::sync::Arc;

use hybrid_compaction_model::assembly::{CompactionOutcome, ReductionRequest, StageCategory};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::diagnostics::{ContributionFields, RecordFields};
use hybrid_compaction_model::entry::Category;
use hybrid_compaction_model::estimator::{ConstantEstimator, MeasurementUnit};
use hybrid_compaction_model::policy::{Policy, PolicySpec};
use hybrid_compaction_model::reducers::{CancelAtCall, ScriptedUpstreamReducer, UpstreamStep};

use super::case::{BridgeCase, BridgeStepInput, DiagnosticsCase, EnumValueInput};
use super::exec::wire;
use super::output::BridgeOutput;
use crate::wire::convert::{self, CaseError, WireError};
use crate::wire::exec::WireUpstream;
use crate::wire::output::{ContributionOutput, DiagnosticsOutput, Output};

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

/// The `diagnostics` operation (SPEC DIA-1 .. DIA-4): the record's checks, then its echo.
pub fn diagnostics(
    c: &DiagnosticsCase,
    imp: &dyn crate::wire::exec::Implementation,
) -> Result<Output, CaseError> {
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
        echoed.push(ContributionOutput {
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
    imp.validate_record(&fields)
        .map_err(|e| CaseError::Answer(convert::assembly_error(&e)))?;
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
    Ok(Output {
        diagnostics: Some(DiagnosticsOutput {
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
        }),
        ..Output::default()
    })
}

// ---------------------------------------------------------------------------------------------
// bridge

/// The policy handed to the bridge in its requests (the bridge reads none of it, SPEC BRG-1).
fn bridge_policy() -> Result<Policy, CaseError> {
    Policy::new(PolicySpec {
        hard_limit: 100,
        trigger_margin: 1,
        recent_message_retention_count: 1,
        maximum_compaction_attempts: 1,
        preservation_label: Some("bridge".to_owned()),
        preservation_version: 1,
        estimator: Some(Arc::new(ConstantEstimator(1))),
    })
    .map_err(|e| CaseError::Wire(WireError::new("$", e.to_string())))
}

/// The `bridge` operation (SPEC BRG-1 .. BRG-3).
pub fn bridge(
    c: &BridgeCase,
    imp: &dyn crate::wire::exec::Implementation,
) -> Result<Output, CaseError> {
    let mut current = convert::entries(&c.entries, "$.entries")?;
    if c.steps.is_empty() {
        return wire("$.steps", "the bridge needs at least one step");
    }
    let mut steps = Vec::with_capacity(c.steps.len());
    let mut cancel_at = None;
    for (i, s) in c.steps.iter().enumerate() {
        let path = format!("$.steps[{i}]");
        steps.push(match s {
            BridgeStepInput::Echo => UpstreamStep::Echo,
            BridgeStepInput::Null => UpstreamStep::Null,
            BridgeStepInput::Fail(m) => UpstreamStep::Fail(m.clone()),
            BridgeStepInput::Cancel => {
                cancel_at.get_or_insert(i);
                UpstreamStep::Fail("the upstream reducer observed cancellation".to_owned())
            }
            BridgeStepInput::Return(ms) => {
                let mut out = Vec::with_capacity(ms.len());
                for (j, m) in ms.iter().enumerate() {
                    out.push(convert::message(m, &format!("{path}.return[{j}]"))?);
                }
                UpstreamStep::Return(out)
            }
        });
    }
    let token = CancellationToken::new();
    let inner = imp.bridge(WireUpstream::Scripted(ScriptedUpstreamReducer::new(steps)));
    // The upstream's cancellation: the token is set during its call, which then throws.
    let mut reducer = match cancel_at {
        Some(k) => CancelAtCall::at(inner, k, token.clone()),
        None => CancelAtCall::never(inner),
    };
    let policy = bridge_policy()?;
    let mut calls = Vec::with_capacity(c.steps.len());
    for k in 0..c.steps.len() {
        let request = ReductionRequest {
            entries: &current,
            required_entry_ids: &[],
            policy: &policy,
            attempt_number: i32::try_from(k + 1).unwrap_or(i32::MAX),
        };
        let result = hybrid_compaction_model::assembly::Reducer::reduce(&mut reducer, &request);
        if token.is_cancelled() {
            return Err(CaseError::Answer(convert::assembly_error(
                &hybrid_compaction_model::assembly::AssemblyError::Cancelled,
            )));
        }
        let entries = match result {
            Ok(Some(es)) => es,
            Ok(None) => {
                return Err(CaseError::Answer(convert::assembly_error(
                    &hybrid_compaction_model::assembly::AssemblyError::ReducerReturnedNothing,
                )))
            }
            Err(e) => {
                return Err(CaseError::Answer(convert::assembly_error(&e.into())));
            }
        };
        calls.push(convert::entry_outputs(&entries));
        current = entries;
    }
    Ok(Output {
        bridge: Some(BridgeOutput { calls }),
        ..Output::default()
    })
}
