//! Hybrid profiles and composition statuses (SPEC CMP-1 .. CMP-4; C# S73, S74).
//!
//! A composition builds one agent from a [`ClientChain`], one resolved capability profile and,
//! optionally, a [`HybridProfile`]. The decision procedure is
//! `hybrid_compaction_spec::composition::compose`; node construction is injected through
//! [`NodeFactory`], which only `Success` calls, so "fails closed before any node exists"
//! (SPEC CMP-4) is observable in tests and the library can plug its node in later.

use crate::error::ErrorKind;
use crate::names::named_enum;
use crate::policy::Policy;

/// The static snapshot integration (SPEC SNAP-3) as a profile's integration choice: no
/// recovered body ever appears.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StaticSnapshotIntegration;

/// A hybrid profile (SPEC CMP-1): every field required.
#[derive(Debug, Clone)]
pub struct HybridProfile<U, C, I> {
    /// The compaction policy (SPEC POL-1).
    pub policy: Policy,
    /// The upstream reducer (SPEC BRG-1).
    pub reducer: U,
    /// The classifier (SPEC CLS-1).
    pub classifier: C,
    /// The snapshot integration (SPEC SNAP-4).
    pub integration: I,
}

named_enum! {
    /// The composition status (SPEC CMP-2), in declaration order.
    pub enum CompositionStatus {
        /// Neither capability nor profile: nothing installed.
        Disabled,
        /// One node and one run coordinator installed.
        Success,
        /// The capability is `Enabled` but no hybrid profile was supplied.
        CapabilityEnabledWithoutProfile,
        /// A hybrid profile was supplied but the capability is not `Enabled`.
        ProfileSuppliedWithoutCapabilityEnabled,
        /// No compaction evidence, or the capability profile is not executable.
        ProfileNotExecutable,
        /// The client chain already holds a compaction component.
        ExistingCompactionComponent,
    }
}

/// One component of a client chain (the real provider and the middleware around it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientComponent {
    /// A hybrid compaction node.
    Compaction,
    /// Any other middleware or the provider itself.
    Other,
}

/// The client chain a composition wraps (SPEC CMP-3 step 8).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientChain {
    /// Components, outermost first.
    pub components: Vec<ClientComponent>,
}

impl ClientChain {
    /// Whether a compaction component is already installed.
    pub fn has_compaction(&self) -> bool {
        self.components.contains(&ClientComponent::Compaction)
    }
}

named_enum! {
    /// A required composition input (SPEC CMP-3 step 1), in check order.
    pub enum CompositionInput {
        /// The client chain.
        Client,
        /// The resolved capability profile.
        CapabilityProfile,
        /// The execution binding.
        ExecutionBinding,
        /// The binding accessor.
        BindingAccessor,
    }
}

/// A composition input error (SPEC CMP-3 steps 1-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CompositionError {
    /// A required input is missing (`NullArgument`).
    #[error("composition input {0} is missing")]
    Missing(CompositionInput),
    /// The session id is blank (`InvalidArgument`).
    #[error("composition session id is blank")]
    BlankSession,
}

impl CompositionError {
    /// The language-neutral category (SPEC ERR-1).
    pub fn kind(&self) -> ErrorKind {
        match self {
            CompositionError::Missing(_) => ErrorKind::NullArgument,
            CompositionError::BlankSession => ErrorKind::InvalidArgument,
        }
    }
}

named_enum! {
    /// Who owns the non-retransmission runs of an installed node (SPEC CMP-3, CFG-3, LSE-6).
    pub enum RunCoordination {
        /// One run coordinator shared with the guarded agent (one run per outer run).
        SharedWithAgent,
        /// No shared coordinator: every provider call runs in a call-local run.
        CallLocal,
    }
}

/// Builds the compaction node of a successful composition (SPEC CMP-4). Only `Success` calls it,
/// exactly once.
pub trait NodeFactory<P> {
    /// Installs one node for `profile` innermost around `chain`'s provider.
    fn install(&mut self, profile: P, chain: &ClientChain, runs: RunCoordination);
}

named_enum! {
    /// The provider composer's statuses that concern compaction (SPEC CMP-5), in declaration
    /// order: the composer builds the whole agent around the narrow composition of CMP-3 and
    /// maps its failures to `Compaction…` statuses.
    pub enum ProviderCompositionStatus {
        /// The agent was built (with one compaction node, or none when compaction is
        /// `Disabled`).
        Success,
        /// The execution binding does not validate against the current context.
        ExecutionBindingInvalid,
        /// CMP-3's `CapabilityEnabledWithoutProfile`.
        CompactionCapabilityEnabledWithoutProfile,
        /// CMP-3's `ProfileSuppliedWithoutCapabilityEnabled`.
        CompactionProfileSuppliedWithoutCapabilityEnabled,
        /// CMP-3's `ProfileNotExecutable`.
        CompactionProfileNotExecutable,
        /// CMP-3's `ExistingCompactionComponent`.
        CompactionExistingComponent,
    }
}

impl ProviderCompositionStatus {
    /// The fixed mapping of a narrow composition's status (SPEC CMP-5): `Disabled` and
    /// `Success` both let the agent be built; every failure has its `Compaction…` status.
    pub fn of(status: CompositionStatus) -> ProviderCompositionStatus {
        use CompositionStatus as C;
        use ProviderCompositionStatus as P;
        match status {
            C::Disabled | C::Success => P::Success,
            C::CapabilityEnabledWithoutProfile => P::CompactionCapabilityEnabledWithoutProfile,
            C::ProfileSuppliedWithoutCapabilityEnabled => {
                P::CompactionProfileSuppliedWithoutCapabilityEnabled
            }
            C::ProfileNotExecutable => P::CompactionProfileNotExecutable,
            C::ExistingCompactionComponent => P::CompactionExistingComponent,
        }
    }
}
