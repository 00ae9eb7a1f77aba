//! The public switch and options of ADR-0011 and the effective-defaults report (SPEC CFG-1 ..
//! CFG-5; C# S84-S86).
//!
//! The checks and defaults are `hybrid_compaction_spec::configuration::configure` (and the
//! library's `hybrid_compaction::compose::configuration::configure`). Besides hybrid compaction,
//! the public configuration has the upstream framework's own compaction switch
//! ([`UpstreamCompaction`], SPEC CFG-5): a different mechanism, consulted once per agent turn,
//! which this crate does not implement but whose configuration checks and effective-defaults
//! rows ([`FeatureDisposition`], with the fixed limitation texts below) it states.

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
    /// A token budget of the upstream compaction is not positive (`OutOfRange`, SPEC CFG-5).
    #[error("{0} must be positive when provided")]
    TokenBudget(TokenBudget),
    /// `MaxOutputTokens` is not below `MaxContextWindowTokens` (`InvalidArgument`, SPEC CFG-5).
    #[error("MaxContextWindowTokens must be greater than MaxOutputTokens")]
    OutputBudgetNotBelowContextWindow,
    /// The upstream compaction is enabled with neither a strategy nor both token budgets
    /// (`InvalidArgument`, SPEC CFG-5).
    #[error("EnableCompaction is true, but neither a CompactionStrategy nor both MaxContextWindowTokens and MaxOutputTokens were supplied")]
    UpstreamCompactionWithoutBacking,
}

named_enum! {
    /// A token budget of the upstream compaction (SPEC CFG-5).
    pub enum TokenBudget {
        /// `MaxContextWindowTokens`.
        MaxContextWindowTokens,
        /// `MaxOutputTokens`.
        MaxOutputTokens,
    }
}

impl ConfigurationError {
    /// The language-neutral category (SPEC ERR-1).
    pub fn kind(&self) -> ErrorKind {
        match self {
            ConfigurationError::EnabledWithoutOptions
            | ConfigurationError::OptionsWithoutEnabled
            | ConfigurationError::ExistingCompactionComponent
            | ConfigurationError::OutputBudgetNotBelowContextWindow
            | ConfigurationError::UpstreamCompactionWithoutBacking => ErrorKind::InvalidArgument,
            ConfigurationError::MissingReducer => ErrorKind::NullArgument,
            ConfigurationError::Policy(e) => e.kind(),
            ConfigurationError::TokenBudget(_) => ErrorKind::OutOfRange,
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
    /// Where the value came from in the effective-defaults report (SPEC CFG-3, CFG-5): the
    /// backing selection of a row.
    pub enum DefaultSource {
        /// The caller supplied the options (or the strategy).
        CallerSupplied,
        /// Nothing applies.
        NotApplicable,
        /// The upstream framework's default backs it (SPEC CFG-5).
        UpstreamDefault,
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

/// The outcome of a valid configuration (SPEC CFG-2, CFG-3, CFG-5).
#[derive(Debug, Clone)]
pub struct Configured<U, C> {
    /// The effective-defaults row.
    pub report: EffectiveDefault,
    /// The effective-defaults rows of the two compaction features (SPEC CFG-5), in
    /// [`BundleFeature`] order.
    pub dispositions: [FeatureDisposition; 2],
    /// `None`: the client is unchanged.
    pub compaction: Option<BundleCompaction<U, C>>,
}

/// The upstream framework's own compaction switch (`EnableCompaction`) with its backing (SPEC
/// CFG-5): a caller-supplied strategy, or the two token budgets from which the framework builds
/// its default strategy. The framework consults it once per agent turn; this crate states its
/// checks and report rows only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UpstreamCompaction {
    /// `EnableCompaction`.
    pub enabled: bool,
    /// Whether a `CompactionStrategy` is supplied.
    pub strategy: bool,
    /// `MaxContextWindowTokens`, if supplied.
    pub max_context_window_tokens: Option<i32>,
    /// `MaxOutputTokens`, if supplied.
    pub max_output_tokens: Option<i32>,
}

named_enum! {
    /// The rows of the effective-defaults report this crate states (SPEC CFG-5).
    pub enum BundleFeature {
        /// The upstream framework's compaction (`EnableCompaction`).
        Compaction,
        /// Hybrid compaction (`EnableHybridCompaction`).
        HybridCompaction,
    }
}

/// One row of the effective-defaults report (SPEC CFG-3, CFG-5): requested and effective
/// state, the limitation text (if any), the backing selection and its description (if any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureDisposition {
    /// The feature.
    pub feature: BundleFeature,
    /// Requested state.
    pub requested: RequestedState,
    /// Effective state.
    pub effective: EffectiveState,
    /// What the enabled feature does not do (one of the fixed texts below), if anything.
    pub limitation: Option<&'static str>,
    /// The backing selection.
    pub backing: DefaultSource,
    /// How the backing is built (one of the fixed texts below), if one applies.
    pub backing_description: Option<&'static str>,
}

impl FeatureDisposition {
    /// The row of a disabled feature: requested disabled, disabled, no limitation, no backing.
    pub fn disabled(feature: BundleFeature) -> FeatureDisposition {
        FeatureDisposition {
            feature,
            requested: RequestedState::RequestedDisabled,
            effective: EffectiveState::Disabled,
            limitation: None,
            backing: DefaultSource::NotApplicable,
            backing_description: None,
        }
    }
}

/// The limitation of the upstream compaction (SPEC CFG-5): consulted once per agent turn.
pub const UPSTREAM_COMPACTION_LIMITATION: &str = "The upstream framework evaluates its compaction strategy once per agent turn, not once per provider request, so it does not bound context within a multi-round tool loop: a run whose tool rounds grow the conversation is compacted only against the state that preceded the first round. Enable HybridCompaction for per-provider-call bounding.";

/// The backing description of the upstream compaction with a caller-supplied strategy.
pub const UPSTREAM_STRATEGY_BACKING: &str = "The caller-supplied CompactionStrategy is used directly; MaxContextWindowTokens and MaxOutputTokens are not required for compaction when a strategy is supplied.";

/// The backing description of the upstream compaction built from the two token budgets.
pub const UPSTREAM_BUDGET_BACKING: &str = "Upstream default: a context-window compaction strategy built from the supplied MaxContextWindowTokens and MaxOutputTokens token budgets.";

/// The limitation of hybrid compaction (SPEC CFG-5).
pub const HYBRID_COMPACTION_LIMITATION: &str = "Owned by this component rather than by the upstream framework, so it is not covered by the framework's compatibility guarantees, and its position depends on the verified middleware order. Budgets are measured in UTF-8 bytes of rendered content, not provider tokens, so a budget must be chosen with headroom. A context that cannot be reduced below the hard limit fails the request rather than being forwarded over budget.";

/// The backing description of hybrid compaction (SPEC CFG-3, CFG-5).
pub const HYBRID_COMPACTION_BACKING: &str = "The supplied chat client is wrapped with a per-provider-call compaction node at the innermost position, using the caller-supplied byte budget and reducer with the default content-hash entry identity and per-call snapshot strategies.";
