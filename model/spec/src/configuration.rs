//! The public switch of ADR-0011 (SPEC CFG-1 .. CFG-3; C# S84, S85).
//!
//! [`configure`] applies CFG-2's checks in order and, when compaction is on, builds the profile
//! with CFG-3's defaults: the UTF-8 context estimator, label `foundry-harness-bundle` version 1,
//! the content-hash classifier, the static integration, no trust binding, call-local runs, and
//! no capability resolution.

use std::sync::Arc;

use hybrid_compaction_model::composition::{
    ClientChain, HybridProfile, RunCoordination, StaticSnapshotIntegration,
};
use hybrid_compaction_model::configuration::{
    BundleCompaction, ConfigurationError, Configured, DefaultSource, EffectiveDefault,
    EffectiveState, HistoryPlacement, PublicOptions, RequestedState, BUNDLE_PRESERVATION_LABEL,
    BUNDLE_PRESERVATION_VERSION,
};
use hybrid_compaction_model::policy::{Policy, PolicySpec};

use crate::classify::ContentHashClassifier;
use crate::estimate::Utf8ContextEstimator;

/// Configures the public path (SPEC CFG-2, CFG-3), before any agent exists.
pub fn configure<U>(
    enabled: bool,
    options: Option<PublicOptions<U>>,
    client: &ClientChain,
) -> Result<Configured<U, ContentHashClassifier>, ConfigurationError> {
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
