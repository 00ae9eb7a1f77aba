//! The public configuration path of ADR-0011 (SPEC CFG-1 .. CFG-5; C# S84-S86): the switch
//! and options a host passes instead of composing through capability resolution.
//!
//! [`configure`] checks, in order, the upstream framework's own compaction switch (CFG-5: its
//! budgets and its backing), then CFG-2's switch, options, reducer and client chain, then the
//! numbers (POL-2); with compaction on it fills in CFG-3's defaults (the UTF-8 context
//! estimator, label `foundry-harness-bundle` version 1, the content-hash classifier, the static
//! integration) and reports no trust binding, call-local runs and no capability resolution. The
//! profile it returns is what a host hands to [`crate::node::select`] (policy and reducer as the
//! node's options) or installs with the same classifier and integration; the report has CFG-3's
//! row and CFG-5's two rows.

use std::sync::Arc;

use hybrid_compaction_model::composition::{
    ClientChain, HybridProfile, RunCoordination, StaticSnapshotIntegration,
};
use hybrid_compaction_model::configuration::{
    BundleCompaction, BundleFeature, ConfigurationError, Configured, DefaultSource,
    EffectiveDefault, EffectiveState, FeatureDisposition, HistoryPlacement, PublicOptions,
    RequestedState, TokenBudget, UpstreamCompaction, BUNDLE_PRESERVATION_LABEL,
    BUNDLE_PRESERVATION_VERSION, HYBRID_COMPACTION_BACKING, HYBRID_COMPACTION_LIMITATION,
    UPSTREAM_BUDGET_BACKING, UPSTREAM_COMPACTION_LIMITATION, UPSTREAM_STRATEGY_BACKING,
};
use hybrid_compaction_model::policy::{Policy, PolicySpec};

use crate::engine::classify::ContentHashClassifier;
use crate::engine::estimate::Utf8ContextEstimator;

/// The upstream switch's row and its checks (SPEC CFG-5).
fn upstream_row(u: &UpstreamCompaction) -> Result<FeatureDisposition, ConfigurationError> {
    for (budget, value) in [
        (
            TokenBudget::MaxContextWindowTokens,
            u.max_context_window_tokens,
        ),
        (TokenBudget::MaxOutputTokens, u.max_output_tokens),
    ] {
        if matches!(value, Some(n) if n <= 0) {
            return Err(ConfigurationError::TokenBudget(budget));
        }
    }
    let both = match (u.max_context_window_tokens, u.max_output_tokens) {
        (Some(context), Some(output)) if output >= context => {
            return Err(ConfigurationError::OutputBudgetNotBelowContextWindow)
        }
        (Some(_), Some(_)) => true,
        _ => false,
    };
    if !u.enabled {
        return Ok(FeatureDisposition::disabled(BundleFeature::Compaction));
    }
    let (backing, description) = match (u.strategy, both) {
        (true, _) => (DefaultSource::CallerSupplied, UPSTREAM_STRATEGY_BACKING),
        (false, true) => (DefaultSource::UpstreamDefault, UPSTREAM_BUDGET_BACKING),
        (false, false) => return Err(ConfigurationError::UpstreamCompactionWithoutBacking),
    };
    Ok(FeatureDisposition {
        feature: BundleFeature::Compaction,
        requested: RequestedState::RequestedEnabled,
        effective: EffectiveState::Enabled,
        limitation: Some(UPSTREAM_COMPACTION_LIMITATION),
        backing,
        backing_description: Some(description),
    })
}

/// Configures the public path (SPEC CFG-5, CFG-2, CFG-3) before any agent exists: the
/// effective-defaults report and, with compaction on, the profile with the public defaults.
pub fn configure<U>(
    enabled: bool,
    options: Option<PublicOptions<U>>,
    upstream: UpstreamCompaction,
    client: &ClientChain,
) -> Result<Configured<U, ContentHashClassifier>, ConfigurationError> {
    let upstream = upstream_row(&upstream)?;
    let options = match (enabled, options) {
        (false, None) => {
            return Ok(Configured {
                report: EffectiveDefault {
                    requested: RequestedState::RequestedDisabled,
                    effective: EffectiveState::Disabled,
                    source: DefaultSource::NotApplicable,
                },
                dispositions: [
                    upstream,
                    FeatureDisposition::disabled(BundleFeature::HybridCompaction),
                ],
                compaction: None,
            })
        }
        (true, None) => return Err(ConfigurationError::EnabledWithoutOptions),
        (false, Some(_)) => return Err(ConfigurationError::OptionsWithoutEnabled),
        (true, Some(options)) => options,
    };
    let Some(reducer) = options.upstream_reducer else {
        return Err(ConfigurationError::MissingReducer);
    };
    if client.has_compaction() {
        return Err(ConfigurationError::ExistingCompactionComponent);
    }
    let policy = Policy::new(PolicySpec {
        hard_limit: options.hard_limit_bytes,
        trigger_margin: options.trigger_margin_bytes,
        recent_message_retention_count: options.recent_message_retention_count,
        maximum_compaction_attempts: options.maximum_compaction_attempts,
        preservation_label: Some(BUNDLE_PRESERVATION_LABEL.to_owned()),
        preservation_version: BUNDLE_PRESERVATION_VERSION,
        estimator: Some(Arc::new(Utf8ContextEstimator)),
    })
    .map_err(ConfigurationError::Policy)?;
    let hybrid = FeatureDisposition {
        feature: BundleFeature::HybridCompaction,
        requested: RequestedState::RequestedEnabled,
        effective: EffectiveState::Enabled,
        limitation: Some(HYBRID_COMPACTION_LIMITATION),
        backing: DefaultSource::CallerSupplied,
        backing_description: Some(HYBRID_COMPACTION_BACKING),
    };
    Ok(Configured {
        report: EffectiveDefault {
            requested: RequestedState::RequestedEnabled,
            effective: EffectiveState::Enabled,
            source: DefaultSource::CallerSupplied,
        },
        dispositions: [upstream, hybrid],
        compaction: Some(BundleCompaction {
            profile: HybridProfile {
                policy,
                reducer,
                classifier: ContentHashClassifier::new(),
                integration: StaticSnapshotIntegration,
            },
            runs: RunCoordination::CallLocal,
            trust_binding: false,
            capability_resolver_consulted: false,
            placement: HistoryPlacement::InsidePerCallHistory,
        }),
    })
}
