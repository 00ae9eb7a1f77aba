//! Diagnostics and contributions (SPEC DIA-1 .. DIA-6).
//!
//! The record itself (mappings, DIA-3 / DIA-4 checks) comes from the vocabulary's
//! `Diagnostics::checked`, as in the model; only the contributions differ.
//!
//! Contributions are computed in one pass over the final entries (the model makes one pass per
//! category). To report the same error as the model when an estimate is negative or a sum
//! overflows, each category keeps its own first error, and the error of the first category in
//! declaration order wins, exactly the error the model's category-major loop meets first.

use hybrid_compaction_model::assembly::{AssemblyError, AssemblyResult};
use hybrid_compaction_model::diagnostics::{Contribution, Diagnostics};
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::estimator::Estimator;
use hybrid_compaction_model::policy::Policy;

/// The number of entry kinds (SPEC ENT-1).
const KINDS: usize = EntryKind::ALL.len();

/// Per-category contributions (SPEC DIA-6): one per category present, in declaration order.
pub fn contributions(
    entries: &[Entry],
    estimator: &dyn Estimator,
) -> Result<Vec<Contribution>, AssemblyError> {
    let mut sizes = [0i32; KINDS];
    let mut counts = [0i32; KINDS];
    let mut errors: [Option<AssemblyError>; KINDS] = Default::default();
    for e in entries {
        let k = e.kind().index();
        if errors[k].is_some() {
            continue;
        }
        let s = estimator.estimate(e);
        if s < 0 {
            errors[k] = Some(AssemblyError::NegativeEstimate {
                entry_id: e.id().as_str().to_owned(),
            });
            continue;
        }
        match (sizes[k].checked_add(s), counts[k].checked_add(1)) {
            (Some(total), Some(count)) => {
                sizes[k] = total;
                counts[k] = count;
            }
            _ => errors[k] = Some(AssemblyError::SizeOverflow),
        }
    }
    if let Some(err) = errors.into_iter().flatten().next() {
        return Err(err);
    }
    Ok((0..KINDS)
        .filter(|&k| counts[k] > 0)
        .map(|k| Contribution {
            category: EntryKind::ALL[k].into(),
            size: sizes[k],
            entry_count: counts[k],
        })
        .collect())
}

/// Builds the diagnostics record of `result` (SPEC DIA-5) with the vocabulary's checked
/// constructor (SPEC DIA-3 / DIA-4, the model's order and invariant names) and the one-pass
/// [`contributions`].
pub fn build(result: &AssemblyResult, policy: &Policy) -> Result<Diagnostics, AssemblyError> {
    Diagnostics::checked(result, policy, contributions)
}
