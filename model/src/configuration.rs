//! The public switch and options of ADR-0011 and the effective-defaults report (SPEC CFG-1 ..
//! CFG-4; C# S84-S86).
//!
//! The checks and defaults are `hybrid_compaction_spec::configuration::configure`.

use crate::composition::{HybridProfile, RunCoordination, StaticSnapshotIntegration};
use crate::error::ErrorKind;
use crate::names::named_enum;
use crate::policy::PolicyError;

/// The preservation label of the public path (SPEC CFG-3).
pub const BUNDLE_PRESERVATION_LABEL: &str = "foundry-harness-bundle";

/// The preservation version of the public path (SPEC CFG-3).
pub const BUNDLE_PRESERVATION_VERSION: i32 = 1;

/// `FoundryHarnessHybridCompactionOptions` (SPEC CFG-1): five required members, no defaults.
/// `upstream_reducer: None` models a null reducer (SPEC CFG-2).
#[derive(Debug, Clone)]
pub struct PublicOptions<U> {
    /// `HardLimitBytes`.
    pub hard_limit_bytes: i32,
    /// `TriggerMarginBytes`.
    pub trigger_margin_bytes: i32,
    /// `RecentMessageRetentionCount`.
    pub recent_message_retention_count: i32,
    /// `MaximumCompactionAttempts`.
    pub maximum_compaction_attempts: i32,
    /// `UpstreamReducer`.
    pub upstream_reducer: Option<U>,
}

/// Why a configuration was refused (SPEC CFG-2), before any agent exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigurationError {
    /// Switch on, no options (`InvalidArgument`).
    #[error("hybrid compaction is enabled but no compaction options were supplied")]
    EnabledWithoutOptions,
    /// Options without the switch (`InvalidArgument`).
    #[error("compaction options were supplied but hybrid compaction is not enabled")]
    OptionsWithoutEnabled,
    /// No upstream reducer (`NullArgument`).
    #[error("compaction options have no upstream reducer")]
    MissingReducer,
    /// The client already holds a compaction component (`InvalidArgument`).
    #[error("the client already contains a compaction component")]
    ExistingCompactionComponent,
    /// A number failed policy validation (SPEC POL-2).
    #[error(transparent)]
    Policy(PolicyError),
}

impl ConfigurationError {
    /// The language-neutral category (SPEC ERR-1).
    pub fn kind(&self) -> ErrorKind {
        match self {
            ConfigurationError::EnabledWithoutOptions
            | ConfigurationError::OptionsWithoutEnabled
            | ConfigurationError::ExistingCompactionComponent => ErrorKind::InvalidArgument,
            ConfigurationError::MissingReducer => ErrorKind::NullArgument,
            ConfigurationError::Policy(e) => e.kind(),
        }
    }
}

named_enum! {
    /// Requested state in the effective-defaults report (SPEC CFG-3).
    pub enum RequestedState {
        /// The switch is on.
        RequestedEnabled,
        /// The switch is off.
        RequestedDisabled,
    }
}

named_enum! {
    /// Effective state in the effective-defaults report (SPEC CFG-3).
    pub enum EffectiveState {
        /// Compaction runs.
        Enabled,
        /// Compaction does not run.
        Disabled,
    }
}

named_enum! {
    /// Where the value came from in the effective-defaults report (SPEC CFG-3).
    pub enum DefaultSource {
        /// The caller supplied the options.
        CallerSupplied,
        /// Nothing applies.
        NotApplicable,
    }
}

/// The `HybridCompaction` row of the effective-defaults report (SPEC CFG-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EffectiveDefault {
    /// Requested state.
    pub requested: RequestedState,
    /// Effective state.
    pub effective: EffectiveState,
    /// Source.
    pub source: DefaultSource,
}

/// What the public path installs (SPEC CFG-3): the profile with the defaults, no trust binding,
/// call-local runs, and no capability resolution.
#[derive(Debug, Clone)]
pub struct BundleCompaction<U, C> {
    /// The profile (default classifier, static integration).
    pub profile: HybridProfile<U, C, StaticSnapshotIntegration>,
    /// Always [`RunCoordination::CallLocal`].
    pub runs: RunCoordination,
    /// Always `false`: no trust binding on this path.
    pub trust_binding: bool,
    /// Always `false`: the capability resolver is not consulted.
    pub capability_resolver_consulted: bool,
    /// Always [`HistoryPlacement::InsidePerCallHistory`] (SPEC CFG-4).
    pub placement: HistoryPlacement,
}

named_enum! {
    /// Where the public path places the node relative to the history decorator (SPEC CFG-4).
    pub enum HistoryPlacement {
        /// Inside the per-call history decorator: stored history is never reduced, every
        /// provider call assembles again from the full record.
        InsidePerCallHistory,
    }
}

/// The outcome of a valid configuration (SPEC CFG-2, CFG-3).
#[derive(Debug, Clone)]
pub struct Configured<U, C> {
    /// The effective-defaults row.
    pub report: EffectiveDefault,
    /// `None`: the client is unchanged.
    pub compaction: Option<BundleCompaction<U, C>>,
}
