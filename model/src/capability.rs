//! Capabilities and their resolution inputs (SPEC CAP-1 .. CAP-4; C# S75, S76).
//!
//! A composition carries exactly one resolved [`CapabilityProfile`]: the bundle lane, the
//! caller's acceptance, history coherence, and one [`CapabilityEntry`] per known capability
//! (its fixed [`CapabilityMetadata`], whether the caller requested it, and the resolver's
//! evidence phase). The *rules* (effective state by first match, executability) are functions
//! of the executable specification (`hybrid_compaction_spec::capability`); this module holds
//! only the data and the fixed metadata of `Compaction` ([`COMPACTION`], SPEC CAP-1).

use crate::names::named_enum;

named_enum! {
    /// Effective state of a capability (SPEC CAP-2).
    pub enum CapabilityState {
        /// Not active.
        Disabled,
        /// Active and delivered.
        Enabled,
        /// Accepted but its delivery phase (or the bundle lane's) is not reached yet.
        Deferred,
        /// Never produced by this resolver (SPEC CAP-3).
        Unsupported,
    }
}

named_enum! {
    /// The trust boundary a capability crosses (SPEC CAP-2).
    pub enum TrustBoundary {
        /// No boundary.
        None,
        /// The host's identity.
        HostIdentity,
        /// The file system.
        FileSystem,
        /// Host-classified external content (compaction, SPEC CAP-1).
        ExternalContent,
        /// An approval.
        Approval,
    }
}

named_enum! {
    /// Ahead-of-time compilation status (SPEC CAP-2).
    pub enum AotStatus {
        /// Executed under AOT.
        Verified,
        /// Compiles under AOT.
        Compatible,
        /// Not executed under AOT (compaction, SPEC CAP-1).
        Unverified,
        /// Not supported.
        Unsupported,
    }
}

named_enum! {
    /// Diagnostics availability (SPEC CAP-2).
    pub enum DiagnosticsStatus {
        /// Full diagnostics.
        Available,
        /// Some diagnostics.
        Partial,
        /// None.
        Unavailable,
    }
}

named_enum! {
    /// Delivery phases, compared by their numbers 2 .. 7 (SPEC CAP-2).
    pub enum DeliveryPhase {
        /// Phase 2.
        G2,
        /// Phase 3.
        G3,
        /// Phase 4.
        G4,
        /// Phase 5 (compaction's declared phase, SPEC CAP-1).
        G5,
        /// Phase 6 (the bundle lane's floor, SPEC CAP-3).
        G6,
        /// Phase 7.
        G7,
    }
}

impl DeliveryPhase {
    /// The phase's number, 2 .. 7 (SPEC CAP-2).
    pub fn value(self) -> u8 {
        match self {
            DeliveryPhase::G2 => 2,
            DeliveryPhase::G3 => 3,
            DeliveryPhase::G4 => 4,
            DeliveryPhase::G5 => 5,
            DeliveryPhase::G6 => 6,
            DeliveryPhase::G7 => 7,
        }
    }
}

named_enum! {
    /// Stability of a capability (SPEC CAP-2).
    pub enum Stability {
        /// Stable.
        Stable,
        /// Experimental (compaction, SPEC CAP-1).
        Experimental,
        /// Depends on the provider.
        ProviderDependent,
    }
}

named_enum! {
    /// Which stabilities the caller accepts (SPEC CAP-2, CAP-3).
    pub enum Acceptance {
        /// Only stable capabilities.
        StableOnly,
        /// Stable and experimental capabilities.
        StableAndExperimental,
    }
}

named_enum! {
    /// How a composition chooses its capabilities (SPEC CAP-2; the *bundle lane*, section 16).
    pub enum BundleLane {
        /// The caller names every capability it requests.
        SelectedProviders,
        /// The bundle's defaults are active without being named.
        CompleteBundle,
    }
}

/// The name of a capability. Only `Compaction` is specified here; others exist so that
/// executability (SPEC CAP-4) can be stated over several capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CapabilityName {
    /// `HarnessCapability.Compaction`.
    Compaction,
    /// Another capability, by a host-chosen number.
    Other(u16),
}

/// The fixed metadata of a capability (SPEC CAP-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapabilityMetadata {
    /// Which capability.
    pub name: CapabilityName,
    /// Its stability.
    pub stability: Stability,
    /// The package that delivers it.
    pub source: &'static str,
    /// Whether it is active by default on the bundle lane.
    pub bundle_default: bool,
    /// Whether it requires a specific provider.
    pub provider_requirement: bool,
    /// The trust boundary it crosses.
    pub trust_boundary: TrustBoundary,
    /// Its AOT status.
    pub aot: AotStatus,
    /// Its diagnostics status.
    pub diagnostics: DiagnosticsStatus,
    /// The phase at which it is delivered.
    pub delivery_phase: DeliveryPhase,
}

/// The fixed metadata of `Compaction` (SPEC CAP-1; C# S75).
pub const COMPACTION: CapabilityMetadata = CapabilityMetadata {
    name: CapabilityName::Compaction,
    stability: Stability::Experimental,
    source: "Microsoft.Agents.AI",
    bundle_default: false,
    provider_requirement: false,
    trust_boundary: TrustBoundary::ExternalContent,
    aot: AotStatus::Unverified,
    diagnostics: DiagnosticsStatus::Available,
    delivery_phase: DeliveryPhase::G5,
};

/// One capability of a resolved profile: metadata, the caller's request and the resolver's
/// evidence (SPEC CAP-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapabilityEntry {
    /// The fixed metadata.
    pub metadata: CapabilityMetadata,
    /// Whether the caller named it.
    pub requested: bool,
    /// The delivery phase the resolver's evidence reached; `None` when there is no evidence.
    pub evidence: Option<DeliveryPhase>,
}

/// The single resolved capability profile of a composition (SPEC CAP-3, CAP-4, CMP-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapabilityProfile {
    /// The bundle lane.
    pub lane: BundleLane,
    /// The caller's acceptance.
    pub acceptance: Acceptance,
    /// Whether the profile's history coherence holds (SPEC CAP-4).
    pub history_coherent: bool,
    /// The capabilities it resolves.
    pub capabilities: Vec<CapabilityEntry>,
}

impl CapabilityProfile {
    /// The entry of `name`, if the profile resolves it.
    pub fn entry(&self, name: CapabilityName) -> Option<&CapabilityEntry> {
        self.capabilities.iter().find(|c| c.metadata.name == name)
    }
}
