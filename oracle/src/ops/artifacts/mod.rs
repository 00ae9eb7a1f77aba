//! The artifact operations (SPEC sections 17-18): `record` ([`record`], ARF-1 .. ARF-3),
//! `rehydrate` ([`rehydrate`], RHY-1 .. RHY-4) and `offload` ([`offload`], OFF-1 .. OFF-3), each
//! with its attribution (ATR-1 .. ATR-4), and `artifactDiagnostics` ([`given`], ATR-5): the
//! diagnostics value from given fields; `decisions` ([`decisions`], ATR-6, EVT-7) runs several
//! offload and rehydration decisions ([`offload_decision`], [`rehydration_decision`], which no
//! operation owns) on one flow. They have no separate library implementation: both
//! implementations answer them with the executable specification (docs/WIRE.md says so). This
//! module holds what the three share: the record and diagnostics outputs, the errors' fields,
//! the default trust guard.
//!
//! Artifact diagnostics are rendered field by field as enum names and numbers plus the bounded
//! reference id: the JSON has no string an input could have supplied except that content
//! address (SPEC ATR-4).

use hybrid_compaction_model::artifact_diagnostics::ArtifactDiagnostics;
use hybrid_compaction_model::artifact_record::{utf16_len, RecordError, ReferenceRecord};
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::seam::composition::default_binding;
use hybrid_compaction_model::trust::{TrustGuard, TrustStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::wire::error::{answer, CaseError};
use crate::wire::host::{case_accessor, ContextInput};

pub(crate) mod decisions;
pub(crate) mod given;
pub(crate) mod offload;
pub(crate) mod offload_decision;
pub(crate) mod record;
pub(crate) mod rehydrate;
pub(crate) mod rehydration_decision;

/// The owners triple.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OwnersOutput {
    /// User id.
    pub user_id: String,
    /// Orchestration id.
    pub orchestration_id: String,
    /// Session id.
    pub session_id: String,
}

/// A validated reference record (SPEC ARF-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordOutput {
    /// Schema version (1).
    pub schema: i32,
    /// Reference id.
    pub reference_id: String,
    /// The reference id's UTF-8 length (82, SPEC ART-2).
    pub reference_utf8_bytes: u32,
    /// Workspace path (derived from the digest).
    pub path: String,
    /// Digest.
    pub digest: String,
    /// The body's UTF-8 byte size.
    pub byte_size: i64,
    /// The description's length in UTF-16 code units.
    pub description_utf16_units: u32,
    /// Owners.
    pub owners: OwnersOutput,
    /// Creating tool name.
    pub tool_name: String,
    /// Creating tool call id.
    pub call_id: String,
}

/// An attribution (SPEC ATR-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttributionOutput {
    /// `Offload` or `Rehydration`.
    pub operation: String,
    /// Input UTF-8 bytes.
    pub input_utf8_bytes: i64,
    /// Output UTF-8 bytes, or null.
    pub output_utf8_bytes: Option<i64>,
}

/// An artifact diagnostics value (SPEC ATR-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactDiagnosticsOutput {
    /// Operation.
    pub operation: String,
    /// Outcome.
    pub outcome: String,
    /// Content.
    pub content: String,
    /// Reason.
    pub reason: String,
    /// Observed UTF-8 byte size, or null.
    pub observed_utf8_byte_size: Option<i64>,
    /// Threshold or budget.
    pub configured_threshold_or_budget: i64,
    /// Reference id, or null.
    pub reference_id: Option<String>,
    /// Attribution.
    pub attribution: AttributionOutput,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A record's output.
pub(crate) fn record_output(r: &ReferenceRecord) -> RecordOutput {
    let reference = r.reference().to_string();
    RecordOutput {
        schema: hybrid_compaction_model::artifact_record::SCHEMA_VERSION,
        reference_utf8_bytes: count(reference.len()),
        reference_id: reference,
        path: r.path(),
        digest: r.reference().digest().to_hex(),
        byte_size: r.byte_size(),
        description_utf16_units: count(utf16_len(r.description())),
        owners: OwnersOutput {
            user_id: r.owners().user_id.clone(),
            orchestration_id: r.owners().orchestration_id.clone(),
            session_id: r.owners().session_id.clone(),
        },
        tool_name: r.tool_name().to_owned(),
        call_id: r.call_id().to_owned(),
    }
}

/// An artifact diagnostics value's output (SPEC ATR-2): names and numbers only.
pub(crate) fn artifact_diagnostics_output(d: &ArtifactDiagnostics) -> ArtifactDiagnosticsOutput {
    let a = d.attribution();
    ArtifactDiagnosticsOutput {
        operation: d.operation().name().to_owned(),
        outcome: d.outcome().name().to_owned(),
        content: d.content().name().to_owned(),
        reason: d.reason().name().to_owned(),
        observed_utf8_byte_size: d.observed_utf8_byte_size(),
        configured_threshold_or_budget: d.configured_threshold_or_budget(),
        reference_id: d.reference().map(|r| r.to_string()),
        attribution: AttributionOutput {
            operation: a.operation.name().to_owned(),
            input_utf8_bytes: a.input_utf8_bytes,
            output_utf8_bytes: a.output_utf8_bytes,
        },
    }
}

/// The field a record error names (SPEC ARF-2).
pub(super) fn record_error(e: &RecordError) -> CaseError {
    let field = match e {
        RecordError::UnsupportedSchema => "Schema",
        RecordError::Invalid(f) | RecordError::OutOfRange(f) => f.name(),
        _ => "Record",
    };
    CaseError::Answer(answer(e.kind(), Some(field), None, e.to_string()))
}

/// The guard of the default binding with `c`'s accessor.
pub(super) fn default_guard(
    accessor: Option<&[Option<ContextInput>]>,
) -> Result<TrustGuard, CaseError> {
    let binding = default_binding();
    let accessor = case_accessor(accessor, &binding, "$.accessor")?;
    let session_id = binding.owners.session_id.clone();
    Ok(TrustGuard {
        binding,
        accessor,
        session_id,
    })
}

pub(super) fn trust_answer(status: TrustStatus, message: String) -> CaseError {
    CaseError::Answer(answer(
        ErrorKind::InvalidOperation,
        Some(status.name()),
        None,
        message,
    ))
}
