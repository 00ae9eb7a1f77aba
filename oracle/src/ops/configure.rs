//! `configure`: the public switch of ADR-0011 (SPEC CFG-1 .. CFG-5): the effective-defaults report
//! and the compaction the public path installs; with the upstream framework's own compaction
//! switch given, the report's two compaction rows with their limitation texts (CFG-5). Each
//! implementation answers with its own configuration path (the specification's
//! `configuration::configure_bundle`, the library's `compose::configuration::configure`).

use hybrid_compaction_model::configuration::{FeatureDisposition, UpstreamCompaction};
use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::error::CaseError;
use crate::wire::options::{configuration_error, configure_input, PublicOptionsInput};

/// Inputs of `configure`: the public switch (SPEC CFG-1 .. CFG-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigureCase {
    /// `EnableHybridCompaction`.
    pub enabled: bool,
    /// The options; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<PublicOptionsInput>,
    /// The client chain's middleware (`Compaction` or `Other`; default none).
    #[serde(default)]
    pub client: Vec<String>,
    /// The upstream framework's compaction switch (SPEC CFG-5); given, the answer lists the two
    /// compaction rows of the report (`dispositions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_compaction: Option<UpstreamCompactionInput>,
}

/// The upstream framework's compaction switch and its backing (SPEC CFG-5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpstreamCompactionInput {
    /// `EnableCompaction`.
    pub enabled: bool,
    /// Whether a `CompactionStrategy` is supplied (default false).
    #[serde(default)]
    pub strategy: bool,
    /// `MaxContextWindowTokens`; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_context_window_tokens: Option<i32>,
    /// `MaxOutputTokens`; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<i32>,
}

/// One row of the effective-defaults report (SPEC CFG-5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DispositionOutput {
    /// `Compaction` (the upstream framework's) or `HybridCompaction`.
    pub feature: String,
    /// `RequestedEnabled` or `RequestedDisabled`.
    pub requested: String,
    /// `Enabled` or `Disabled`.
    pub effective: String,
    /// The limitation text, or null.
    pub limitation: Option<String>,
    /// `CallerSupplied`, `UpstreamDefault` or `NotApplicable`.
    pub backing: String,
    /// How the backing is built, or null.
    pub backing_description: Option<String>,
}

fn disposition_output(d: &FeatureDisposition) -> DispositionOutput {
    DispositionOutput {
        feature: d.feature.name().to_owned(),
        requested: d.requested.name().to_owned(),
        effective: d.effective.name().to_owned(),
        limitation: d.limitation.map(str::to_owned),
        backing: d.backing.name().to_owned(),
        backing_description: d.backing_description.map(str::to_owned),
    }
}

/// The effective-defaults report (SPEC CFG-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EffectiveDefaultOutput {
    /// `RequestedEnabled` or `RequestedDisabled`.
    pub requested: String,
    /// `Enabled` or `Disabled`.
    pub effective: String,
    /// `CallerSupplied` or `NotApplicable`.
    pub source: String,
}

/// The compaction the public path installs (SPEC CFG-3, CFG-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BundleCompactionOutput {
    /// The estimator's unit (`Utf8Bytes`).
    pub measurement_unit: String,
    /// Hard limit.
    pub hard_limit: i32,
    /// Trigger threshold.
    pub trigger_threshold: i32,
    /// Preservation label.
    pub preservation_label: String,
    /// Preservation version.
    pub preservation_version: i32,
    /// Classifier and integration.
    pub strategies: Vec<String>,
    /// Run coordination (`CallLocal`).
    pub runs: String,
    /// Whether a trust binding is configured (false).
    pub trust_binding: bool,
    /// Whether the capability resolver was consulted (false).
    pub capability_resolver_consulted: bool,
    /// Where the node sits (`InsidePerCallHistory`, SPEC CFG-4).
    pub placement: String,
}

/// `configure` (SPEC CFG-2 .. CFG-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigurationOutput {
    /// The effective-defaults report.
    pub report: EffectiveDefaultOutput,
    /// The compaction installed, if any.
    pub compaction: Option<BundleCompactionOutput>,
    /// The report's two compaction rows (SPEC CFG-5), when the case gives the upstream switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispositions: Option<Vec<DispositionOutput>>,
}

/// The answer of `configure`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigureAnswer {
    /// The configuration.
    pub configuration: ConfigurationOutput,
}

impl Operation for ConfigureCase {
    const ANSWER: &'static str = "configuration";
    type Answer = ConfigureAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<ConfigureAnswer, CaseError> {
        let upstream =
            self.upstream_compaction
                .as_ref()
                .map_or_else(UpstreamCompaction::default, |u| UpstreamCompaction {
                    enabled: u.enabled,
                    strategy: u.strategy,
                    max_context_window_tokens: u.max_context_window_tokens,
                    max_output_tokens: u.max_output_tokens,
                });
        let input = configure_input(self.enabled, self.options.as_ref(), &self.client, upstream)?;
        let configured = imp.configure(input).map_err(|e| configuration_error(&e))?;
        let report = configured.report;
        let compaction = configured.compaction.map(|b| {
            let p = &b.policy;
            BundleCompactionOutput {
                measurement_unit: p.estimator().unit().name().to_owned(),
                hard_limit: p.hard_limit(),
                trigger_threshold: p.trigger_threshold(),
                preservation_label: p.preservation_label().to_owned(),
                preservation_version: p.preservation_version(),
                strategies: vec!["ContentHash".to_owned(), "Static".to_owned()],
                runs: b.runs.name().to_owned(),
                trust_binding: b.trust_binding,
                capability_resolver_consulted: b.capability_resolver_consulted,
                placement: b.placement.name().to_owned(),
            }
        });
        let dispositions = self.upstream_compaction.is_some().then(|| {
            configured
                .dispositions
                .iter()
                .map(disposition_output)
                .collect()
        });
        Ok(ConfigureAnswer {
            configuration: ConfigurationOutput {
                report: EffectiveDefaultOutput {
                    requested: report.requested.name().to_owned(),
                    effective: report.effective.name().to_owned(),
                    source: report.source.name().to_owned(),
                },
                compaction,
                dispositions,
            },
        })
    }
}
