//! `resolve`: capability resolution (SPEC CAP-1 .. CAP-4): each capability's requested flag and
//! effective state, the profile's executability, and `Compaction`'s fixed metadata.

use hybrid_compaction_model::capability::COMPACTION;
use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::error::CaseError;
use crate::wire::host::{profile, CapabilityProfileInput};

/// Inputs of `resolve`: capability resolution (SPEC CAP-1 .. CAP-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveCase {
    /// The profile to resolve.
    pub profile: CapabilityProfileInput,
}

/// One capability's resolution (SPEC CAP-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapabilityStateOutput {
    /// The capability name.
    pub name: String,
    /// Whether it is requested (active).
    pub requested: bool,
    /// Its effective state.
    pub state: String,
}

/// The fixed metadata of `Compaction` (SPEC CAP-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactionMetadataOutput {
    /// Stability.
    pub stability: String,
    /// Source.
    pub source: String,
    /// Bundle default.
    pub bundle_default: bool,
    /// Provider requirement.
    pub provider_requirement: bool,
    /// Trust boundary.
    pub trust_boundary: String,
    /// AOT status.
    pub aot: String,
    /// Diagnostics status.
    pub diagnostics: String,
    /// Delivery phase.
    pub delivery_phase: String,
    /// The delivery phase's numeric value (SPEC CAP-2).
    pub delivery_phase_value: u8,
}

/// `resolve`: the profile's resolution (SPEC CAP-1 .. CAP-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolutionOutput {
    /// Every capability, in input order.
    pub capabilities: Vec<CapabilityStateOutput>,
    /// Whether the profile is executable (SPEC CAP-4).
    pub executable: bool,
    /// `Compaction`'s fixed metadata (SPEC CAP-1).
    pub compaction: CompactionMetadataOutput,
}

/// `Compaction`'s fixed metadata (SPEC CAP-1).
pub(crate) fn compaction_metadata() -> CompactionMetadataOutput {
    let m = COMPACTION;
    CompactionMetadataOutput {
        stability: m.stability.name().to_owned(),
        source: m.source.to_owned(),
        bundle_default: m.bundle_default,
        provider_requirement: m.provider_requirement,
        trust_boundary: m.trust_boundary.name().to_owned(),
        aot: m.aot.name().to_owned(),
        diagnostics: m.diagnostics.name().to_owned(),
        delivery_phase: m.delivery_phase.name().to_owned(),
        delivery_phase_value: m.delivery_phase.value(),
    }
}

/// The answer of `resolve`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveAnswer {
    /// The resolution.
    pub resolution: ResolutionOutput,
}

impl Operation for ResolveCase {
    const ANSWER: &'static str = "resolution";
    type Answer = ResolveAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<ResolveAnswer, CaseError> {
        let (p, names) = profile(&self.profile, "$.profile")?;
        let capabilities = p
            .capabilities
            .iter()
            .zip(names)
            .map(|(entry, name)| CapabilityStateOutput {
                name,
                requested: imp.is_requested(entry, p.lane),
                state: imp
                    .effective_state(entry, p.lane, p.acceptance)
                    .name()
                    .to_owned(),
            })
            .collect();
        Ok(ResolveAnswer {
            resolution: ResolutionOutput {
                capabilities,
                executable: imp.is_executable(&p),
                compaction: compaction_metadata(),
            },
        })
    }
}
