//! The compaction policy and its validation (SPEC POL-1, POL-2), plus the trigger evaluation
//! record (SPEC POL-3, POL-4).
//!
//! A [`Policy`] is built only through [`Policy::new`], which applies the checks of SPEC POL-2 in
//! their specified order, so every `Policy` value satisfies `0 < TriggerMargin < HardLimit` and
//! hence `TriggerThreshold >= 1`.

use std::fmt;
use std::sync::Arc;

use crate::error::ErrorKind;
use crate::estimator::Estimator;

/// The policy inputs before validation (SPEC POL-1). `None` models a null reference.
#[derive(Clone)]
pub struct PolicySpec {
    /// Hard limit; must be `> 0`.
    pub hard_limit: i32,
    /// Margin below the hard limit; must be `> 0` and `< hard_limit`.
    pub trigger_margin: i32,
    /// Recency units always retained; must be `> 0`.
    pub recent_message_retention_count: i32,
    /// Attempt budget; must be `> 0`.
    pub maximum_compaction_attempts: i32,
    /// Preservation label; required, not blank.
    pub preservation_label: Option<String>,
    /// Preservation version; must be `> 0`.
    pub preservation_version: i32,
    /// The size estimator; required.
    pub estimator: Option<Arc<dyn Estimator>>,
}

impl fmt::Debug for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicySpec")
            .field("hard_limit", &self.hard_limit)
            .field("trigger_margin", &self.trigger_margin)
            .field(
                "recent_message_retention_count",
                &self.recent_message_retention_count,
            )
            .field(
                "maximum_compaction_attempts",
                &self.maximum_compaction_attempts,
            )
            .field("preservation_label", &self.preservation_label)
            .field("preservation_version", &self.preservation_version)
            .field("estimator", &self.estimator)
            .finish()
    }
}

crate::names::named_enum! {
    /// The policy field a validation error names.
    pub enum PolicyField {
        /// `HardLimit`.
        HardLimit,
        /// `TriggerMargin`.
        TriggerMargin,
        /// `RecentMessageRetentionCount`.
        RecentMessageRetentionCount,
        /// `MaximumCompactionAttempts`.
        MaximumCompactionAttempts,
        /// `PreservationLabel`.
        PreservationLabel,
        /// `PreservationVersion`.
        PreservationVersion,
        /// `SizeEstimator`.
        SizeEstimator,
    }
}

/// Why a policy was refused (SPEC POL-2). Only the first failing check is reported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A numeric field is out of range.
    #[error("policy field {field} is out of range: {requirement}")]
    OutOfRange {
        /// The field.
        field: PolicyField,
        /// The rule it broke, e.g. `must be > 0`.
        requirement: &'static str,
    },
    /// A required reference is missing (label or estimator).
    #[error("policy field {0} is missing")]
    Missing(PolicyField),
    /// The label is empty or whitespace-only.
    #[error("policy field {0} is blank")]
    Blank(PolicyField),
}

impl PolicyError {
    /// The language-neutral category (SPEC POL-2).
    pub fn kind(&self) -> ErrorKind {
        match self {
            PolicyError::OutOfRange { .. } => ErrorKind::OutOfRange,
            PolicyError::Missing(_) => ErrorKind::NullArgument,
            PolicyError::Blank(_) => ErrorKind::InvalidArgument,
        }
    }

    /// The field the error names.
    pub fn field(&self) -> PolicyField {
        match self {
            PolicyError::OutOfRange { field, .. } => *field,
            PolicyError::Missing(f) | PolicyError::Blank(f) => *f,
        }
    }
}

/// A validated policy (SPEC POL-1). Cloning shares the estimator.
#[derive(Clone)]
pub struct Policy {
    hard_limit: i32,
    trigger_margin: i32,
    recent_message_retention_count: i32,
    maximum_compaction_attempts: i32,
    preservation_label: String,
    preservation_version: i32,
    estimator: Arc<dyn Estimator>,
}

impl fmt::Debug for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Policy")
            .field("hard_limit", &self.hard_limit)
            .field("trigger_margin", &self.trigger_margin)
            .field(
                "recent_message_retention_count",
                &self.recent_message_retention_count,
            )
            .field(
                "maximum_compaction_attempts",
                &self.maximum_compaction_attempts,
            )
            .field("preservation_label", &self.preservation_label)
            .field("preservation_version", &self.preservation_version)
            .field("unit", &self.estimator.unit())
            .finish()
    }
}

impl Policy {
    /// Validates `spec` with the checks of SPEC POL-2, in order, reporting the first failure.
    pub fn new(spec: PolicySpec) -> Result<Policy, PolicyError> {
        let out_of_range = |field, requirement| PolicyError::OutOfRange { field, requirement };
        if spec.hard_limit <= 0 {
            return Err(out_of_range(PolicyField::HardLimit, "must be > 0"));
        }
        if spec.trigger_margin <= 0 {
            return Err(out_of_range(PolicyField::TriggerMargin, "must be > 0"));
        }
        if spec.trigger_margin >= spec.hard_limit {
            return Err(out_of_range(
                PolicyField::TriggerMargin,
                "must be < HardLimit",
            ));
        }
        if spec.recent_message_retention_count <= 0 {
            return Err(out_of_range(
                PolicyField::RecentMessageRetentionCount,
                "must be > 0",
            ));
        }
        if spec.maximum_compaction_attempts <= 0 {
            return Err(out_of_range(
                PolicyField::MaximumCompactionAttempts,
                "must be > 0",
            ));
        }
        let label = spec
            .preservation_label
            .ok_or(PolicyError::Missing(PolicyField::PreservationLabel))?;
        if label.chars().all(char::is_whitespace) {
            return Err(PolicyError::Blank(PolicyField::PreservationLabel));
        }
        if spec.preservation_version <= 0 {
            return Err(out_of_range(
                PolicyField::PreservationVersion,
                "must be > 0",
            ));
        }
        let estimator = spec
            .estimator
            .ok_or(PolicyError::Missing(PolicyField::SizeEstimator))?;
        Ok(Policy {
            hard_limit: spec.hard_limit,
            trigger_margin: spec.trigger_margin,
            recent_message_retention_count: spec.recent_message_retention_count,
            maximum_compaction_attempts: spec.maximum_compaction_attempts,
            preservation_label: label,
            preservation_version: spec.preservation_version,
            estimator,
        })
    }

    /// `HardLimit`.
    pub fn hard_limit(&self) -> i32 {
        self.hard_limit
    }

    /// `TriggerMargin`.
    pub fn trigger_margin(&self) -> i32 {
        self.trigger_margin
    }

    /// `TriggerThreshold = HardLimit - TriggerMargin`, always `>= 1` (SPEC POL-1, POL-2).
    pub fn trigger_threshold(&self) -> i32 {
        self.hard_limit - self.trigger_margin
    }

    /// `RecentMessageRetentionCount`.
    pub fn recent_message_retention_count(&self) -> i32 {
        self.recent_message_retention_count
    }

    /// `MaximumCompactionAttempts`.
    pub fn maximum_compaction_attempts(&self) -> i32 {
        self.maximum_compaction_attempts
    }

    /// `PreservationLabel`.
    pub fn preservation_label(&self) -> &str {
        &self.preservation_label
    }

    /// `PreservationVersion`.
    pub fn preservation_version(&self) -> i32 {
        self.preservation_version
    }

    /// The size estimator.
    pub fn estimator(&self) -> &dyn Estimator {
        &*self.estimator
    }

    /// The shared estimator handle.
    pub fn estimator_arc(&self) -> &Arc<dyn Estimator> {
        &self.estimator
    }

    /// A copy of this policy measuring with another estimator (same numbers and label).
    pub fn with_estimator(&self, estimator: Arc<dyn Estimator>) -> Policy {
        Policy {
            estimator,
            ..self.clone()
        }
    }
}

/// The result of evaluating a list against a policy (SPEC POL-3, POL-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TriggerEvaluation {
    /// Checked 32-bit sum of per-entry estimates.
    pub estimated_size: i32,
    /// The policy's hard limit.
    pub hard_limit: i32,
    /// The policy's trigger margin.
    pub trigger_margin: i32,
    /// `hard_limit - trigger_margin`.
    pub trigger_threshold: i32,
    /// `estimated_size >= trigger_threshold` (SPEC POL-4).
    pub triggered: bool,
}
