//! The privacy-safe diagnostics record (SPEC DIA-1 .. DIA-6).
//!
//! The record has no string fields: categorical enums (each a fixed one-to-one mirror of an
//! internal enum, SPEC DIA-2), sizes, and per-category contributions. It is built by
//! `spec::diagnostics::build` (and independently by the engine) from an assembly result.

use std::fmt;

use crate::estimator::MeasurementUnit;

macro_rules! mirror_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stable name (identical to the reference implementation's identifier).
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => stringify!($variant)),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

mirror_enum! {
    /// Mirror of the assembly outcome (SPEC DIA-2); terminations double as the termination
    /// category.
    CompactionOutcome {
        /// Mirrors `Outcome::WithinLimit`.
        WithinLimit,
        /// Mirrors `Outcome::Reduced`.
        Reduced,
        /// Mirrors `Outcome::PreservationFallback`.
        PreservationFallback,
        /// Mirrors `Outcome::Irreducible`.
        Irreducible,
        /// Mirrors `Outcome::ConcurrentMutationLimit`.
        ConcurrentMutationLimit,
    }
}

mirror_enum! {
    /// Mirror of the assembly stage (SPEC DIA-2).
    StageCategory {
        /// Mirrors `Stage::SnapshotCaptured`.
        SnapshotCaptured,
        /// Mirrors `Stage::RecoverableBodyEviction`.
        RecoverableBodyEviction,
        /// Mirrors `Stage::ReducerAttempt`.
        ReducerAttempt,
        /// Mirrors `Stage::RestartedAfterMutation`.
        RestartedAfterMutation,
        /// Mirrors `Stage::DeterministicFallback`.
        DeterministicFallback,
    }
}

mirror_enum! {
    /// Mirror of the entry kind (SPEC DIA-2); order drives contribution order (SPEC DIA-6).
    Category {
        /// Mirrors `EntryKind::SystemInstruction`.
        SystemInstruction,
        /// Mirrors `EntryKind::AuthoritativeSessionState`.
        AuthoritativeSessionState,
        /// Mirrors `EntryKind::ApprovalSecurityState`.
        ApprovalSecurityState,
        /// Mirrors `EntryKind::ToolExchange`.
        ToolExchange,
        /// Mirrors `EntryKind::ArtifactReference`.
        ArtifactReference,
        /// Mirrors `EntryKind::ConversationalMessage`.
        ConversationalMessage,
        /// Mirrors `EntryKind::Summary`.
        Summary,
        /// Mirrors `EntryKind::RecoverableContextSegment`.
        RecoverableContextSegment,
        /// Mirrors `EntryKind::OptionalContext`.
        OptionalContext,
    }
}

/// One category's share of the final list (SPEC DIA-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contribution {
    /// The category.
    pub category: Category,
    /// Checked sum of the estimator over the category's final entries.
    pub size: i32,
    /// Number of final entries in the category (`>= 1`).
    pub entry_count: i32,
}

/// The diagnostics record of one assembly (SPEC DIA-1). No string fields, by design (SPEC DIA-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostics {
    /// The outcome category.
    pub outcome: CompactionOutcome,
    /// The policy estimator's unit.
    pub measurement_unit: MeasurementUnit,
    /// `OriginalEstimatedSize` of the result.
    pub original_size: i32,
    /// `FinalEstimatedSize` of the result.
    pub final_size: i32,
    /// The policy's trigger threshold.
    pub trigger_threshold: i32,
    /// The hard limit.
    pub hard_limit: i32,
    /// The attempt count.
    pub attempt_count: i32,
    /// Stage categories in execution order, repeats kept.
    pub stages: Vec<StageCategory>,
    /// Per-category contributions in category order (empty for terminations).
    pub category_contributions: Vec<Contribution>,
    /// `Some(true)` on success, `None` on termination.
    pub final_sequence_valid: Option<bool>,
}
