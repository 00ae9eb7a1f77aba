//! ADR-0007 wire inputs to vocabulary values and results to outputs.
//!
//! Unknown names are wire errors naming the JSON path and listing the known names; SPEC
//! rejections are typed answers ([`CaseError::Answer`]).

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hybrid_compaction_model::artifact_diagnostics::ArtifactDiagnostics;
use hybrid_compaction_model::artifact_record::{utf16_len, ReferenceRecord};
use hybrid_compaction_model::capability::{
    Acceptance, BundleLane, CapabilityEntry, CapabilityMetadata, CapabilityName, CapabilityProfile,
    DeliveryPhase, Stability, COMPACTION,
};
use hybrid_compaction_model::composition::{ClientChain, ClientComponent};
use hybrid_compaction_model::trust::{
    BindingAccessor, Owners, TrustBinding, TrustContext, WorkspaceId,
};

use super::case::{BindingInput, CapabilityProfileInput, ContextInput, OwnersInput};
use super::output::{
    ArtifactDiagnosticsOutput, AttributionOutput, CompactionMetadataOutput, OwnersOutput,
    RecordOutput,
};
use crate::wire::convert::CaseError;
use crate::wire::WireError;

/// The value named `name` among `names` (the SPEC's names), else a wire error at `path`.
pub fn named<T>(
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
pub fn fixed_now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_767_225_600)
}

/// The default owners: `user-1`, `orch-1`, `session-1`.
pub fn default_owners() -> Owners {
    Owners {
        user_id: "user-1".to_owned(),
        orchestration_id: "orch-1".to_owned(),
        session_id: "session-1".to_owned(),
    }
}

/// The default binding: the default owners, workspace 1.
pub fn default_binding() -> TrustBinding {
    TrustBinding {
        owners: default_owners(),
        workspace: WorkspaceId(1),
    }
}

/// Owners from the wire.
pub fn owners(o: &OwnersInput) -> Owners {
    Owners {
        user_id: o.user_id.clone(),
        orchestration_id: o.orchestration_id.clone(),
        session_id: o.session_id.clone(),
    }
}

/// A binding from the wire.
pub fn binding(b: &BindingInput) -> TrustBinding {
    TrustBinding {
        owners: owners(&b.owners),
        workspace: WorkspaceId(b.workspace),
    }
}

/// The context matching `binding` exactly.
pub fn context_of(binding: &TrustBinding) -> TrustContext {
    TrustContext {
        user_id: binding.owners.user_id.clone(),
        orchestration_id: binding.owners.orchestration_id.clone(),
        workspace: Some(binding.workspace),
    }
}

/// An accessor answering from a script: the k-th call gets the k-th answer, the last repeating.
#[derive(Debug)]
pub struct ScriptedAccessor {
    answers: Vec<Option<TrustContext>>,
    calls: Mutex<usize>,
}

impl ScriptedAccessor {
    /// The accessor of the wire's answers (non-empty, else a wire error at `path`).
    pub fn from_wire(
        answers: &[Option<ContextInput>],
        path: &str,
    ) -> Result<ScriptedAccessor, CaseError> {
        if answers.is_empty() {
            return Err(CaseError::Wire(WireError::new(
                path,
                "the accessor needs at least one answer (use null for \"no context\")",
            )));
        }
        let answers = answers
            .iter()
            .map(|a| {
                a.as_ref().map(|c| TrustContext {
                    user_id: c.user_id.clone(),
                    orchestration_id: c.orchestration_id.clone(),
                    workspace: c.workspace.map(WorkspaceId),
                })
            })
            .collect();
        Ok(ScriptedAccessor {
            answers,
            calls: Mutex::new(0),
        })
    }

    /// Always `context`.
    pub fn always(context: TrustContext) -> ScriptedAccessor {
        ScriptedAccessor {
            answers: vec![Some(context)],
            calls: Mutex::new(0),
        }
    }

    /// The accessor of a case: its script, or always `binding`'s own context.
    pub fn for_case(
        answers: Option<&[Option<ContextInput>]>,
        binding: &TrustBinding,
        path: &str,
    ) -> Result<Arc<dyn BindingAccessor>, CaseError> {
        Ok(Arc::new(match answers {
            Some(a) => ScriptedAccessor::from_wire(a, path)?,
            None => ScriptedAccessor::always(context_of(binding)),
        }))
    }
}

impl BindingAccessor for ScriptedAccessor {
    fn current(&self) -> Option<TrustContext> {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        let k = (*calls).min(self.answers.len().saturating_sub(1));
        *calls += 1;
        self.answers.get(k).cloned().flatten()
    }
}

/// A client chain from middleware names (`Compaction`, `Other`).
pub fn chain(names: &[String], path: &str) -> Result<ClientChain, CaseError> {
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
pub fn profile(
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

/// `Compaction`'s fixed metadata (SPEC CAP-1).
pub fn compaction_metadata() -> CompactionMetadataOutput {
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

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A record's output.
pub fn record_output(r: &ReferenceRecord) -> RecordOutput {
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
pub fn diagnostics_output(d: &ArtifactDiagnostics) -> ArtifactDiagnosticsOutput {
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
