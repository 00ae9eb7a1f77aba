//! Size estimation and trigger evaluation (SPEC EST-2, EST-4, POL-3, POL-4).
use hybrid_compaction_model::assembly::AssemblyError;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::estimator::{Estimator, MeasurementUnit};
use hybrid_compaction_model::policy::{Policy, TriggerEvaluation};

/// The UTF-8 context estimator (SPEC EST-2), unit `Utf8Bytes`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Utf8ContextEstimator;

impl Estimator for Utf8ContextEstimator {
    fn unit(&self) -> MeasurementUnit {
        MeasurementUnit::Utf8Bytes
    }
    fn estimate(&self, _entry: &Entry) -> i32 {
        todo!("SPEC EST-2")
    }
}

/// The UTF-8 text estimator (SPEC EST-4), unit `Utf8Bytes`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Utf8TextEstimator;

impl Estimator for Utf8TextEstimator {
    fn unit(&self) -> MeasurementUnit {
        MeasurementUnit::Utf8Bytes
    }
    fn estimate(&self, _entry: &Entry) -> i32 {
        todo!("SPEC EST-4")
    }
}

/// Checked sum of the estimator over `entries` (SPEC POL-3), no cancellation checks.
pub fn size(_entries: &[Entry], _estimator: &dyn Estimator) -> Result<i32, AssemblyError> {
    todo!("SPEC POL-3")
}

/// Evaluate (SPEC POL-3, POL-4): cancellation checked before and after the sum.
pub fn evaluate(
    _entries: &[Entry],
    _policy: &Policy,
    _cancel: &CancellationToken,
) -> Result<TriggerEvaluation, AssemblyError> {
    todo!("SPEC POL-3")
}
