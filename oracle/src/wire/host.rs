//! What a host supplies, on the wire: capability profiles and client chains (SPEC CAP, CMP),
//! owners, trust bindings and the accessor's answers (SPEC TRU, ARF), and the fixed clock of
//! every record. Unknown names are wire errors naming the JSON path and listing the known
//! names.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hybrid_compaction_model::capability::{
    Acceptance, BundleLane, CapabilityEntry, CapabilityMetadata, CapabilityName, CapabilityProfile,
    DeliveryPhase, Stability, COMPACTION,
};
use hybrid_compaction_model::composition::{ClientChain, ClientComponent};
use hybrid_compaction_model::seam::composition::context_of;
use hybrid_compaction_model::seam::ScriptedAccessor;
use hybrid_compaction_model::trust::{
    BindingAccessor, Owners, TrustBinding, TrustContext, WorkspaceId,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::{wire, CaseError, WireError};

pub(crate) fn yes() -> bool {
    true
}

/// One capability of a profile (SPEC CAP-1 .. CAP-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapabilityInput {
    /// `Compaction` (fixed metadata, SPEC CAP-1) or any other capability name.
    pub name: String,
    /// Whether the caller names it.
    #[serde(default)]
    pub requested: bool,
    /// The resolver's evidence phase (`G2` .. `G7`); absent: no evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// Stability (`Stable`, `Experimental`, `ProviderDependent`); required for every capability
    /// but `Compaction`, refused for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stability: Option<String>,
    /// Whether it is a bundle default (not for `Compaction`; default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_default: Option<bool>,
    /// Declared delivery phase (`G2` .. `G7`); required for every capability but `Compaction`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_phase: Option<String>,
}

/// A resolved capability profile (SPEC CAP-2 .. CAP-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapabilityProfileInput {
    /// Bundle lane: `SelectedProviders` or `CompleteBundle`.
    pub lane: String,
    /// Acceptance: `StableOnly` or `StableAndExperimental`.
    pub acceptance: String,
    /// History coherence (default true).
    #[serde(default = "yes")]
    pub history_coherent: bool,
    /// The capabilities (names distinct).
    pub capabilities: Vec<CapabilityInput>,
}

/// The owners triple (SPEC section 16 "Owners").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OwnersInput {
    /// User id.
    pub user_id: String,
    /// Orchestration id.
    pub orchestration_id: String,
    /// Session id.
    pub session_id: String,
}

/// A trust binding (SPEC section 16 "trust binding").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BindingInput {
    /// The owners.
    pub owners: OwnersInput,
    /// The workspace instance (an opaque token, compared for equality).
    pub workspace: u64,
}

/// One answer of the binding accessor: the current execution context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextInput {
    /// User id.
    pub user_id: String,
    /// Orchestration id.
    pub orchestration_id: String,
    /// Workspace instance; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<u64>,
}

/// The value named `name` among `names` (the SPEC's names), else a wire error at `path`.
pub(crate) fn named<T>(
    name: &str,
    path: &str,
    from_name: fn(&str) -> Option<T>,
    names: &[&str],
) -> Result<T, CaseError> {
    from_name(name).ok_or_else(|| {
        CaseError::Wire(WireError::new(
            path,
            format!(
                "unknown name {name:?}; expected one of {}",
                names.join(", ")
            ),
        ))
    })
}

/// The creation time every record gets (a fixed instant: the wire has no clock).
pub(crate) fn fixed_now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_767_225_600)
}

/// Owners from the wire.
pub(crate) fn owners(o: &OwnersInput) -> Owners {
    Owners {
        user_id: o.user_id.clone(),
        orchestration_id: o.orchestration_id.clone(),
        session_id: o.session_id.clone(),
    }
}

/// A binding from the wire.
pub(crate) fn binding(b: &BindingInput) -> TrustBinding {
    TrustBinding {
        owners: owners(&b.owners),
        workspace: WorkspaceId(b.workspace),
    }
}

/// A client chain from middleware names (`Compaction`, `Other`).
pub(crate) fn chain(names: &[String], path: &str) -> Result<ClientChain, CaseError> {
    let mut components = Vec::with_capacity(names.len());
    for (i, n) in names.iter().enumerate() {
        components.push(match n.as_str() {
            "Compaction" => ClientComponent::Compaction,
            "Other" => ClientComponent::Other,
            _ => {
                return Err(CaseError::Wire(WireError::new(
                    format!("{path}[{i}]"),
                    format!("unknown middleware {n:?}; expected Compaction or Other"),
                )))
            }
        });
    }
    Ok(ClientChain { components })
}

fn phase(name: &str, path: &str) -> Result<DeliveryPhase, CaseError> {
    named(name, path, DeliveryPhase::from_name, &DeliveryPhase::NAMES)
}

/// A capability profile from the wire, plus the capabilities' names in input order. Other
/// capabilities are numbered by first appearance; names must be distinct.
pub(crate) fn profile(
    p: &CapabilityProfileInput,
    path: &str,
) -> Result<(CapabilityProfile, Vec<String>), CaseError> {
    let lane = named(
        &p.lane,
        &format!("{path}.lane"),
        BundleLane::from_name,
        &BundleLane::NAMES,
    )?;
    let acceptance = named(
        &p.acceptance,
        &format!("{path}.acceptance"),
        Acceptance::from_name,
        &Acceptance::NAMES,
    )?;
    let mut names: Vec<String> = Vec::new();
    let mut capabilities = Vec::new();
    for (i, c) in p.capabilities.iter().enumerate() {
        let at = format!("{path}.capabilities[{i}]");
        if names.contains(&c.name) {
            return Err(CaseError::Wire(WireError::new(
                format!("{at}.name"),
                format!("capability {:?} appears twice", c.name),
            )));
        }
        let metadata = if c.name == "Compaction" {
            if c.stability.is_some() || c.bundle_default.is_some() || c.delivery_phase.is_some() {
                return Err(CaseError::Wire(WireError::new(
                    &at,
                    "Compaction's metadata is fixed (SPEC CAP-1): give no stability, bundleDefault or deliveryPhase",
                )));
            }
            COMPACTION
        } else {
            let need = |v: &Option<String>, field: &str| {
                v.clone().ok_or_else(|| {
                    CaseError::Wire(WireError::new(
                        format!("{at}.{field}"),
                        format!("capability {:?} needs `{field}`", c.name),
                    ))
                })
            };
            let number = u16::try_from(names.len()).unwrap_or(u16::MAX);
            CapabilityMetadata {
                name: CapabilityName::Other(number),
                stability: named(
                    &need(&c.stability, "stability")?,
                    &format!("{at}.stability"),
                    Stability::from_name,
                    &Stability::NAMES,
                )?,
                bundle_default: c.bundle_default.unwrap_or(false),
                delivery_phase: phase(
                    &need(&c.delivery_phase, "deliveryPhase")?,
                    &format!("{at}.deliveryPhase"),
                )?,
                ..COMPACTION
            }
        };
        let evidence = match &c.evidence {
            None => None,
            Some(e) => Some(phase(e, &format!("{at}.evidence"))?),
        };
        capabilities.push(CapabilityEntry {
            metadata,
            requested: c.requested,
            evidence,
        });
        names.push(c.name.clone());
    }
    Ok((
        CapabilityProfile {
            lane,
            acceptance,
            history_coherent: p.history_coherent,
            capabilities,
        },
        names,
    ))
}

/// The accessor of the wire's answers (non-empty, else a wire error at `path`): the k-th
/// revalidation gets the k-th answer, the last repeating; `null` is "no context".
pub(crate) fn accessor(
    answers: &[Option<ContextInput>],
    path: &str,
) -> Result<ScriptedAccessor, CaseError> {
    if answers.is_empty() {
        return wire(
            path,
            "the accessor needs at least one answer (use null for \"no context\")",
        );
    }
    Ok(ScriptedAccessor::new(
        answers
            .iter()
            .map(|a| {
                a.as_ref().map(|c| TrustContext {
                    user_id: c.user_id.clone(),
                    orchestration_id: c.orchestration_id.clone(),
                    workspace: c.workspace.map(WorkspaceId),
                })
            })
            .collect(),
    ))
}

/// The accessor of a case: its script, or always `binding`'s own context.
pub(crate) fn case_accessor(
    answers: Option<&[Option<ContextInput>]>,
    binding: &TrustBinding,
    path: &str,
) -> Result<Arc<dyn BindingAccessor>, CaseError> {
    Ok(Arc::new(match answers {
        Some(a) => accessor(a, path)?,
        None => ScriptedAccessor::always(context_of(binding)),
    }))
}
