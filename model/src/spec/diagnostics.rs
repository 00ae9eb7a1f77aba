//! Diagnostics and contributions (SPEC DIA-1 .. DIA-6).
use crate::assembly::{AssemblyError, AssemblyResult};
use crate::diagnostics::Diagnostics;
use crate::policy::Policy;

/// Builds the diagnostics record of `result` (SPEC DIA-5).
pub fn build(_result: &AssemblyResult, _policy: &Policy) -> Result<Diagnostics, AssemblyError> {
    todo!("SPEC DIA-5")
}
