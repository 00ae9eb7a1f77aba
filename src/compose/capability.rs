//! Capability resolution: effective state by first match and executability (SPEC CAP-3, CAP-4;
//! C# S75, S76).
//!
//! Written as one ordered table of (condition, state) rows over precomputed facts, so the
//! first-match rule is literally "the first row whose condition holds".

use hybrid_compaction_model::capability::{
    Acceptance, BundleLane, CapabilityEntry, CapabilityProfile, CapabilityState, DeliveryPhase,
    Stability,
};

/// Whether `entry` is requested (SPEC CAP-3): named by the caller, or a bundle default on the
/// complete-bundle lane.
pub fn is_requested(entry: &CapabilityEntry, lane: BundleLane) -> bool {
    entry.requested || (lane == BundleLane::CompleteBundle && entry.metadata.bundle_default)
}

/// Whether the evidence reached `phase` (phases compare by value, SPEC CAP-2; absent evidence
/// reaches none, SPEC CAP-3).
fn reached(evidence: Option<DeliveryPhase>, phase: DeliveryPhase) -> bool {
    matches!(evidence, Some(e) if e.value() >= phase.value())
}

/// The effective state of `entry` (SPEC CAP-3): the first matching row decides.
pub fn effective_state(
    entry: &CapabilityEntry,
    lane: BundleLane,
    acceptance: Acceptance,
) -> CapabilityState {
    let accepted = acceptance == Acceptance::StableAndExperimental
        || entry.metadata.stability == Stability::Stable;
    let rows = [
        (!is_requested(entry, lane), CapabilityState::Disabled),
        (
            lane == BundleLane::CompleteBundle && !reached(entry.evidence, DeliveryPhase::G6),
            CapabilityState::Deferred,
        ),
        (
            !reached(entry.evidence, entry.metadata.delivery_phase),
            CapabilityState::Deferred,
        ),
        (!accepted, CapabilityState::Disabled),
    ];
    rows.into_iter()
        .find_map(|(holds, state)| holds.then_some(state))
        .unwrap_or(CapabilityState::Enabled)
}

/// Whether `profile` is executable (SPEC CAP-4): history coherent, at least one active
/// capability, and every active one `Enabled`.
pub fn is_executable(profile: &CapabilityProfile) -> bool {
    let mut active = profile
        .capabilities
        .iter()
        .filter(|c| is_requested(c, profile.lane))
        .peekable();
    profile.history_coherent
        && active.peek().is_some()
        && active.all(|c| {
            effective_state(c, profile.lane, profile.acceptance) == CapabilityState::Enabled
        })
}
