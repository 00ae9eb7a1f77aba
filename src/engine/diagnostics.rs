//! Diagnostics and contributions (SPEC DIA-1 .. DIA-6).
use hybrid_compaction_model::assembly::{AssemblyError, AssemblyResult};
use hybrid_compaction_model::diagnostics::Diagnostics;
use hybrid_compaction_model::policy::Policy;

/// Builds the diagnostics record of `result` (SPEC DIA-5).
pub fn build(_result: &AssemblyResult, _policy: &Policy) -> Result<Diagnostics, AssemblyError> {
    todo!("SPEC DIA-5")
}
