//! `artifactDiagnostics`: an artifact diagnostics value built from given fields by the reference
//! implementation's two factories (SPEC ATR-5), not from a decision: the fields can contradict
//! each other, and the reference id is text, so every check of ATR-2 is reachable. The answer
//! is the validated value (with the attribution the factory computed, ATR-1) or the typed
//! error of the first broken rule, naming it.

use hybrid_compaction_model::artifact_diagnostics::{
    ArtifactContent, ArtifactGiven, ArtifactOperation, ArtifactOutcome, ArtifactReason,
};
use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::super::Operation;
use super::{artifact_diagnostics_output, ArtifactDiagnosticsOutput};
use crate::wire::error::{typed, wire, CaseError};
use crate::wire::names::Name;

/// Inputs of `artifactDiagnostics` (SPEC ATR-5): the arguments of `ForOffload` or
/// `ForRehydration`, by `operation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactDiagnosticsCase {
    /// `Offload` or `Rehydration`: which factory is called.
    pub operation: Name<ArtifactOperation>,
    /// The outcome (any name of SPEC ATR-2's outcome enum).
    pub outcome: Name<ArtifactOutcome>,
    /// The content kind: required for `Offload`, absent for `Rehydration` (whose factory
    /// always says `RecoverableContextSegment`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Name<ArtifactContent>>,
    /// The reason (any name of SPEC ATR-2's reason enum).
    pub reason: Name<ArtifactReason>,
    /// The observed UTF-8 byte size: required for `Offload`; for `Rehydration` absent means
    /// nothing was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_utf8_byte_size: Option<i64>,
    /// The inline threshold (`Offload`) or the byte budget (`Rehydration`).
    pub configured_threshold_or_budget: i64,
    /// The reference id as text; absent: none. `Rehydration` always names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_id: Option<String>,
}

/// The answer of `artifactDiagnostics`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactDiagnosticsAnswer {
    /// The validated value.
    pub artifact_diagnostics: ArtifactDiagnosticsOutput,
}

impl ArtifactDiagnosticsCase {
    /// The factory call the case names; a member the factory has no parameter for (or
    /// requires) is a wire error at its path.
    fn given(&self) -> Result<ArtifactGiven, CaseError> {
        let (outcome, reason) = (self.outcome.0, self.reason.0);
        let budget = self.configured_threshold_or_budget;
        match self.operation.0 {
            ArtifactOperation::Offload => {
                let Some(Name(content)) = self.content else {
                    return wire("$.content", "an offload names its content kind");
                };
                let Some(observed) = self.observed_utf8_byte_size else {
                    return wire(
                        "$.observedUtf8ByteSize",
                        "an offload always observes a size (the factory's parameter is not nullable)",
                    );
                };
                Ok(ArtifactGiven::Offload {
                    outcome,
                    content,
                    reason,
                    observed_utf8_byte_size: observed,
                    configured_threshold: budget,
                    reference_id: self.reference_id.clone(),
                })
            }
            ArtifactOperation::Rehydration => {
                if self.content.is_some() {
                    return wire(
                        "$.content",
                        "a rehydration's content is always RecoverableContextSegment; leave it out",
                    );
                }
                let Some(reference_id) = &self.reference_id else {
                    return wire(
                        "$.referenceId",
                        "a rehydration always names the reference it resolves",
                    );
                };
                Ok(ArtifactGiven::Rehydration {
                    outcome,
                    reason,
                    observed_utf8_byte_size: self.observed_utf8_byte_size,
                    configured_budget: budget,
                    reference_id: reference_id.clone(),
                })
            }
        }
    }
}

impl Operation for ArtifactDiagnosticsCase {
    const ANSWER: &'static str = "artifactDiagnostics";
    type Answer = ArtifactDiagnosticsAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<ArtifactDiagnosticsAnswer, CaseError> {
        let value = imp
            .artifact_diagnostics(&self.given()?)
            .map_err(|e| typed(&e))?;
        Ok(ArtifactDiagnosticsAnswer {
            artifact_diagnostics: artifact_diagnostics_output(&value),
        })
    }
}
