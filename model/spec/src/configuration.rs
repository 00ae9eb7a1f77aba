//! The public switch of ADR-0011 (SPEC CFG-1 .. CFG-3, CFG-5; C# S84, S85).
//!
//! [`configure_bundle`] applies CFG-5's checks of the upstream framework's compaction switch,
//! then CFG-2's checks in order and, when compaction is on, builds the profile with CFG-3's
//! defaults: the UTF-8 context estimator, label `foundry-harness-bundle` version 1, the
//! content-hash classifier, the static integration, no trust binding, call-local runs, and no
//! capability resolution; the report has CFG-5's two rows. [`configure`] is the same without the
//! upstream switch (off).

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

use crate::classify::ContentHashClassifier;
use crate::estimate::Utf8ContextEstimator;

/// Configures the public path without the upstream framework's compaction (SPEC CFG-2,
/// CFG-3): [`configure_bundle`] with that switch off.
pub fn configure<U>(
    enabled: bool,
    options: Option<PublicOptions<U>>,
    client: &ClientChain,
) -> Result<Configured<U, ContentHashClassifier>, ConfigurationError> {
    configure_bundle(enabled, options, UpstreamCompaction::default(), client)
}

/// SPEC CFG-5's checks of the upstream compaction switch, in order: each token budget
/// positive when supplied, the output budget below the context window, and an enabled switch
/// backed by a strategy or by both budgets.
fn check_upstream(u: &UpstreamCompaction) -> Result<(), ConfigurationError> {
    if u.max_context_window_tokens.is_some_and(|n| n <= 0) {
        return Err(ConfigurationError::TokenBudget(
            TokenBudget::MaxContextWindowTokens,
        ));
    }
    if u.max_output_tokens.is_some_and(|n| n <= 0) {
        return Err(ConfigurationError::TokenBudget(
            TokenBudget::MaxOutputTokens,
        ));
    }
    let budgets = u.max_context_window_tokens.zip(u.max_output_tokens);
    if budgets.is_some_and(|(context, output)| output >= context) {
        return Err(ConfigurationError::OutputBudgetNotBelowContextWindow);
    }
    if u.enabled && !u.strategy && budgets.is_none() {
        return Err(ConfigurationError::UpstreamCompactionWithoutBacking);
    }
    Ok(())
}

/// The report's two compaction rows (SPEC CFG-5): the upstream compaction's, backed by the
/// caller's strategy or the framework's default from the budgets; hybrid compaction's, backed
/// by the caller's options.
fn dispositions(u: &UpstreamCompaction, hybrid: bool) -> [FeatureDisposition; 2] {
    let enabled = |feature, limitation, backing, description| FeatureDisposition {
        feature,
        requested: RequestedState::RequestedEnabled,
        effective: EffectiveState::Enabled,
        limitation: Some(limitation),
        backing,
        backing_description: Some(description),
    };
    let upstream = match (u.enabled, u.strategy) {
        (false, _) => FeatureDisposition::disabled(BundleFeature::Compaction),
        (true, true) => enabled(
            BundleFeature::Compaction,
            UPSTREAM_COMPACTION_LIMITATION,
            DefaultSource::CallerSupplied,
            UPSTREAM_STRATEGY_BACKING,
        ),
        (true, false) => enabled(
            BundleFeature::Compaction,
            UPSTREAM_COMPACTION_LIMITATION,
            DefaultSource::UpstreamDefault,
            UPSTREAM_BUDGET_BACKING,
        ),
    };
    let hybrid = if hybrid {
        enabled(
            BundleFeature::HybridCompaction,
            HYBRID_COMPACTION_LIMITATION,
            DefaultSource::CallerSupplied,
            HYBRID_COMPACTION_BACKING,
        )
    } else {
        FeatureDisposition::disabled(BundleFeature::HybridCompaction)
    };
    [upstream, hybrid]
}

/// Configures the public path (SPEC CFG-5, then CFG-2, CFG-3), before any agent exists.
pub fn configure_bundle<U>(
    enabled: bool,
    options: Option<PublicOptions<U>>,
    upstream: UpstreamCompaction,
    client: &ClientChain,
) -> Result<Configured<U, ContentHashClassifier>, ConfigurationError> {
    check_upstream(&upstream)?;
    let options = match (enabled, options) {
        (true, None) => return Err(ConfigurationError::EnabledWithoutOptions),
        (false, Some(_)) => return Err(ConfigurationError::OptionsWithoutEnabled),
        (false, None) => {
            return Ok(Configured {
                report: EffectiveDefault {
                    requested: RequestedState::RequestedDisabled,
                    effective: EffectiveState::Disabled,
                    source: DefaultSource::NotApplicable,
                },
                dispositions: dispositions(&upstream, false),
                compaction: None,
            })
        }
        (true, Some(options)) => options,
    };
    let reducer = options
        .upstream_reducer
        .ok_or(ConfigurationError::MissingReducer)?;
    if client.has_compaction() {
        return Err(ConfigurationError::ExistingCompactionComponent);
    }
    // SPEC CFG-3 defaults; the numbers are validated by POL-2.
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
    Ok(Configured {
        report: EffectiveDefault {
            requested: RequestedState::RequestedEnabled,
            effective: EffectiveState::Enabled,
            source: DefaultSource::CallerSupplied,
        },
        dispositions: dispositions(&upstream, true),
        compaction: Some(BundleCompaction {
            profile: HybridProfile {
                policy,
                reducer,
                classifier: ContentHashClassifier,
                integration: StaticSnapshotIntegration,
            },
            runs: RunCoordination::CallLocal,
            trust_binding: false,
            capability_resolver_consulted: false,
            // SPEC CFG-4: inside the per-call history decorator.
            placement: HistoryPlacement::InsidePerCallHistory,
        }),
    })
}
