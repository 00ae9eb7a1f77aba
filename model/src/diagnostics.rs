//! The privacy-safe diagnostics record (SPEC DIA-1 .. DIA-6).
//!
//! The record has no string fields: categorical enums (each a fixed one-to-one mirror of an
//! internal enum, SPEC DIA-2, declared with that enum from the same variant list, mapping
//! included: [`Category`] beside `EntryKind`, [`CompactionOutcome`] beside `Outcome`,
//! [`StageCategory`] beside `Stage`), sizes, and per-category contributions.
//!
//! [`Diagnostics::checked`] is the one constructor of a record from an assembly result: it maps
//! the result (SPEC DIA-5) and checks the success / termination instance invariants (SPEC DIA-3,
//! DIA-4). Only the contributions (SPEC DIA-6) differ between the two implementations (the
//! specification makes one pass per category, the engine one pass overall), so `spec::diagnostics`
//! and the engine's `diagnostics` hand their own contributions function to it.

use crate::assembly::{AssemblyError, AssemblyResult};
pub use crate::assembly::{CompactionOutcome, StageCategory};
pub use crate::entry::Category;
use crate::entry::Entry;
use crate::error::ErrorKind;
use crate::estimator::{Estimator, MeasurementUnit};
use crate::policy::Policy;

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

crate::names::named_enum! {
    /// A rule of the record's constructor (SPEC DIA-3, DIA-4; C# S66, S67), in check order. A
    /// violation is an error of the rule's kind ([`RecordRule::kind`]).
    pub enum RecordRule {
        /// The outcome is no defined value.
        UndefinedOutcome,
        /// The measurement unit is no defined value.
        UndefinedUnit,
        /// A size, the threshold, the hard limit or the attempt count is negative.
        NegativeNumber,
        /// A termination carries contributions.
        TerminationContributions,
        /// A termination carries a final sequence validity.
        TerminationSequenceValidity,
        /// A success's final size exceeds the hard limit.
        FinalSizeOverHardLimit,
        /// A contribution's category is no defined value.
        UndefinedCategory,
        /// Two contributions name one category.
        DuplicateCategory,
        /// A contribution's size is negative.
        NegativeContributionSize,
        /// A contribution counts fewer than one entry.
        EntryCountBelowOne,
        /// The contributions do not sum to the final size.
        ContributionSumMismatch,
        /// A success's final sequence validity is not `true`.
        SuccessSequenceValidity,
    }
}

impl RecordRule {
    /// The kind of a violation (SPEC DIA-3, DIA-4): as the reference implementation's own
    /// tests pin them where they do (an undefined unit or category, a negative contribution
    /// size, an entry count below one: .NET `ArgumentOutOfRangeException`; a duplicate
    /// category: `ArgumentException`), and by the same .NET conventions where they do not
    /// (DEP-21): a value outside its range or enum is `OutOfRange`, a combination of arguments
    /// that contradict each other is `InvalidArgument`.
    pub fn kind(self) -> ErrorKind {
        match self {
            RecordRule::UndefinedOutcome
            | RecordRule::UndefinedUnit
            | RecordRule::NegativeNumber
            | RecordRule::FinalSizeOverHardLimit
            | RecordRule::UndefinedCategory
            | RecordRule::NegativeContributionSize
            | RecordRule::EntryCountBelowOne => ErrorKind::OutOfRange,
            RecordRule::TerminationContributions
            | RecordRule::TerminationSequenceValidity
            | RecordRule::DuplicateCategory
            | RecordRule::ContributionSumMismatch
            | RecordRule::SuccessSequenceValidity => ErrorKind::InvalidArgument,
        }
    }

    /// What the rule requires, in words.
    pub fn text(self) -> &'static str {
        match self {
            RecordRule::UndefinedOutcome => "the outcome must be a defined value",
            RecordRule::UndefinedUnit => "the measurement unit must be a defined value",
            RecordRule::NegativeNumber => "numbers must be non-negative",
            RecordRule::TerminationContributions => "a termination has no contributions",
            RecordRule::TerminationSequenceValidity => {
                "a termination has no final sequence validity"
            }
            RecordRule::FinalSizeOverHardLimit => "a success's final size is within the hard limit",
            RecordRule::UndefinedCategory => "a contribution category must be a defined value",
            RecordRule::DuplicateCategory => "contribution categories must be unique",
            RecordRule::NegativeContributionSize => "a contribution size must be non-negative",
            RecordRule::EntryCountBelowOne => "a contribution counts at least one entry",
            RecordRule::ContributionSumMismatch => "contributions sum to the final size",
            RecordRule::SuccessSequenceValidity => "a success has a valid final sequence",
        }
    }
}

impl Diagnostics {
    /// The record of `result` under `policy` (SPEC DIA-5), checked against the instance
    /// invariants of SPEC DIA-3 (success) and DIA-4 (termination); a broken invariant is an
    /// invalid-operation error naming it.
    ///
    /// `contributions` computes SPEC DIA-6 over the final entries with the policy's estimator (the
    /// same instance that governed the policy decision). It runs only for a success whose size,
    /// verification and final entries passed, so every error surfaces in the SPEC's check order.
    pub fn checked(
        result: &AssemblyResult,
        policy: &Policy,
        contributions: impl FnOnce(&[Entry], &dyn Estimator) -> Result<Vec<Contribution>, AssemblyError>,
    ) -> Result<Diagnostics, AssemblyError> {
        let invariant = AssemblyError::DiagnosticsInvariant;
        // All numbers >= 0 (DIA-3, DIA-4).
        if result.original_estimated_size < 0
            || result.final_estimated_size < 0
            || result.hard_limit < 0
            || result.attempt_count < 0
            || policy.trigger_threshold() < 0
        {
            return Err(AssemblyError::DiagnosticsRecord(RecordRule::NegativeNumber));
        }
        let (category_contributions, final_sequence_valid) = if result.outcome.is_success() {
            // SPEC DIA-3: success instance.
            if result.final_estimated_size > result.hard_limit {
                return Err(AssemblyError::DiagnosticsRecord(
                    RecordRule::FinalSizeOverHardLimit,
                ));
            }
            if !result
                .final_verification
                .as_ref()
                .is_some_and(|v| v.is_accepted())
            {
                return Err(invariant("success requires an accepted verification"));
            }
            let entries = result
                .final_entries
                .as_ref()
                .ok_or(invariant("success requires final entries"))?;
            let contributions = contributions(entries, policy.estimator())?;
            check_contributions(&contributions, result.final_estimated_size)?;
            (contributions, Some(true))
        } else {
            // SPEC DIA-4: termination instance: no contributions, validity unknown.
            (Vec::new(), None)
        };
        Ok(Diagnostics {
            outcome: result.outcome.into(),
            // SPEC DIA-5: the policy estimator's unit; threshold from the policy.
            measurement_unit: policy.estimator().unit(),
            original_size: result.original_estimated_size,
            final_size: result.final_estimated_size,
            trigger_threshold: policy.trigger_threshold(),
            hard_limit: result.hard_limit,
            attempt_count: result.attempt_count,
            stages: result.stages.iter().map(|&s| s.into()).collect(),
            category_contributions,
            final_sequence_valid,
        })
    }
}

/// SPEC DIA-3: every contribution has size >= 0 and at least one entry, and the sizes sum
/// (checked) to the final size.
fn check_contributions(
    contributions: &[Contribution],
    final_size: i32,
) -> Result<(), AssemblyError> {
    let broken = AssemblyError::DiagnosticsRecord;
    let mut total: i32 = 0;
    for c in contributions {
        if c.size < 0 {
            return Err(broken(RecordRule::NegativeContributionSize));
        }
        if c.entry_count < 1 {
            return Err(broken(RecordRule::EntryCountBelowOne));
        }
        total = total
            .checked_add(c.size)
            .ok_or(AssemblyError::SizeOverflow)?;
    }
    if total != final_size {
        return Err(broken(RecordRule::ContributionSumMismatch));
    }
    Ok(())
}

/// One contribution given field by field (SPEC DIA-3): `category` is `None` when the value is
/// no member of the category enum (an undefined value, e.g. an out-of-range integer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContributionFields {
    /// The category, `None` if undefined.
    pub category: Option<Category>,
    /// The size.
    pub size: i32,
    /// The entry count.
    pub entry_count: i32,
}

/// A diagnostics record given field by field (SPEC DIA-1), as a host constructs one; the
/// categorical fields are `None` when their value is undefined. [`RecordFields::validate`] is
/// the record's constructor check (SPEC DIA-3, DIA-4; C# S66, S67). Stages are not checked
/// there: neither instance rule names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordFields {
    /// The outcome, `None` if undefined.
    pub outcome: Option<CompactionOutcome>,
    /// The unit, `None` if undefined.
    pub measurement_unit: Option<MeasurementUnit>,
    /// `OriginalSize`.
    pub original_size: i32,
    /// `FinalSize`.
    pub final_size: i32,
    /// `TriggerThreshold`.
    pub trigger_threshold: i32,
    /// `HardLimit`.
    pub hard_limit: i32,
    /// `AttemptCount`.
    pub attempt_count: i32,
    /// The contributions, in the given order.
    pub category_contributions: Vec<ContributionFields>,
    /// `FinalSequenceValid` (`None`: absent).
    pub final_sequence_valid: Option<bool>,
}

impl RecordFields {
    /// The instance checks, in this order: a defined outcome (success or termination); a
    /// defined unit; every number `>= 0`; then for a success (SPEC DIA-3) `FinalSize <=
    /// HardLimit`, every contribution with a defined category not seen before, `Size >= 0` and
    /// `EntryCount >= 1`, the checked sum of sizes (overflow: an `Overflow` error) equal to
    /// `FinalSize`, and `FinalSequenceValid = true`; for a termination (SPEC DIA-4) no
    /// contributions and `FinalSequenceValid` absent. A violation is an error of the broken
    /// [`RecordRule`]'s kind.
    pub fn validate(&self) -> Result<(), AssemblyError> {
        let broken = AssemblyError::DiagnosticsRecord;
        let outcome = self.outcome.ok_or(broken(RecordRule::UndefinedOutcome))?;
        if self.measurement_unit.is_none() {
            return Err(broken(RecordRule::UndefinedUnit));
        }
        let numbers = [
            self.original_size,
            self.final_size,
            self.trigger_threshold,
            self.hard_limit,
            self.attempt_count,
        ];
        if numbers.iter().any(|n| *n < 0) {
            return Err(broken(RecordRule::NegativeNumber));
        }
        // SPEC DIA-2: the mirror has the outcome's order, so the index names the outcome.
        let success = crate::assembly::Outcome::ALL[outcome.index()].is_success();
        if !success {
            if !self.category_contributions.is_empty() {
                return Err(broken(RecordRule::TerminationContributions));
            }
            if self.final_sequence_valid.is_some() {
                return Err(broken(RecordRule::TerminationSequenceValidity));
            }
            return Ok(());
        }
        if self.final_size > self.hard_limit {
            return Err(broken(RecordRule::FinalSizeOverHardLimit));
        }
        let mut seen = Vec::with_capacity(self.category_contributions.len());
        let mut checked = Vec::with_capacity(self.category_contributions.len());
        for c in &self.category_contributions {
            let category = c.category.ok_or(broken(RecordRule::UndefinedCategory))?;
            if seen.contains(&category) {
                return Err(broken(RecordRule::DuplicateCategory));
            }
            seen.push(category);
            checked.push(Contribution {
                category,
                size: c.size,
                entry_count: c.entry_count,
            });
        }
        check_contributions(&checked, self.final_size)?;
        if self.final_sequence_valid != Some(true) {
            return Err(broken(RecordRule::SuccessSequenceValidity));
        }
        Ok(())
    }
}
