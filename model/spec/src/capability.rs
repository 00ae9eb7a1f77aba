//! Capability resolution (SPEC CAP-3, CAP-4; C# S75, S76).
//!
//! [`effective_state`] applies CAP-3's rows in order, the first match deciding;
//! [`is_executable`] is CAP-4.

use hybrid_compaction_model::capability::{
    Acceptance, BundleLane, CapabilityEntry, CapabilityProfile, CapabilityState, DeliveryPhase,
    Stability,
};

/// Whether `entry` is requested (SPEC CAP-3): named by the caller, or a bundle default on the
/// complete-bundle lane.
pub fn is_requested(entry: &CapabilityEntry, lane: BundleLane) -> bool {
    entry.requested || (entry.metadata.bundle_default && lane == BundleLane::CompleteBundle)
}

/// Whether the evidence is below `phase`; absent evidence is below every phase (SPEC CAP-3).
fn below(evidence: Option<DeliveryPhase>, phase: DeliveryPhase) -> bool {
    evidence.is_none_or(|e| e.value() < phase.value())
}

/// Whether `acceptance` accepts `stability` (SPEC CAP-3 row 4).
pub fn accepts(acceptance: Acceptance, stability: Stability) -> bool {
    match acceptance {
        Acceptance::StableOnly => stability == Stability::Stable,
        Acceptance::StableAndExperimental => true,
    }
}

/// The effective state of `entry`, first match (SPEC CAP-3).
pub fn effective_state(
    entry: &CapabilityEntry,
    lane: BundleLane,
    acceptance: Acceptance,
) -> CapabilityState {
    // 1. not requested -> Disabled.
    if !is_requested(entry, lane) {
        return CapabilityState::Disabled;
    }
    // 2. the bundle lane needs evidence of G6.
    if lane == BundleLane::CompleteBundle && below(entry.evidence, DeliveryPhase::G6) {
        return CapabilityState::Deferred;
    }
    // 3. the capability's own delivery phase.
    if below(entry.evidence, entry.metadata.delivery_phase) {
        return CapabilityState::Deferred;
    }
    // 4. acceptance.
    if !accepts(acceptance, entry.metadata.stability) {
        return CapabilityState::Disabled;
    }
    // 5.
    CapabilityState::Enabled
}

/// Whether `profile` is executable (SPEC CAP-4): at least one active capability, all active ones
/// `Enabled`, history coherence.
pub fn is_executable(profile: &CapabilityProfile) -> bool {
    let active: Vec<&CapabilityEntry> = profile
        .capabilities
        .iter()
        .filter(|c| is_requested(c, profile.lane))
        .collect();
    !active.is_empty()
        && active.iter().all(|c| {
            effective_state(c, profile.lane, profile.acceptance) == CapabilityState::Enabled
        })
        && profile.history_coherent
}
