//! Diagnostics and contributions (SPEC DIA-1 .. DIA-6).
//!
//! [`build`] maps an assembly result to the privacy-safe diagnostics record (DIA-5) with the
//! vocabulary's checked constructor, [`Diagnostics::checked`], which applies the fixed one-to-one
//! enum mappings (DIA-2) and checks the success / termination instance invariants (DIA-3, DIA-4).
//! What the specification contributes is [`contributions`] (DIA-6): per category, in declaration
//! order, a checked sum of the policy's own estimator.

use hybrid_compaction_model::assembly::{AssemblyError, AssemblyResult};
use hybrid_compaction_model::diagnostics::{Contribution, Diagnostics};
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::policy::Policy;

/// Per-category contributions of `entries` (SPEC DIA-6): one per category present, in category
/// declaration order; size = checked Σ of `estimator` over the category's entries (negative →
/// invalid-operation error).
pub fn contributions(
    entries: &[Entry],
    estimator: &dyn Estimator,
) -> Result<Vec<Contribution>, AssemblyError> {
    let mut out = Vec::new();
    for kind in EntryKind::ALL {
        let mut size: i32 = 0;
        let mut count: i32 = 0;
        for entry in entries.iter().filter(|e| e.kind() == kind) {
            let s = estimator.estimate(entry);
            if s < 0 {
                return Err(AssemblyError::NegativeEstimate {
                    entry_id: entry.id().as_str().to_owned(),
                });
            }
            size = size.checked_add(s).ok_or(AssemblyError::SizeOverflow)?;
            count = count.checked_add(1).ok_or(AssemblyError::SizeOverflow)?;
        }
        if count > 0 {
            out.push(Contribution {
                // SPEC DIA-2: the fixed kind mapping.
                category: kind.into(),
                size,
                entry_count: count,
            });
        }
    }
    Ok(out)
}

/// Builds the diagnostics record of `result` (SPEC DIA-5), checking the instance invariants of
/// SPEC DIA-3 (success) and DIA-4 (termination); contributions by [`contributions`] (DIA-6).
pub fn build(result: &AssemblyResult, policy: &Policy) -> Result<Diagnostics, AssemblyError> {
    Diagnostics::checked(result, policy, contributions)
}
