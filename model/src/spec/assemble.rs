//! The assembler (SPEC ASM-1 .. ASM-16).
use crate::assembly::{AssemblyError, AssemblyResult, Reducer};
use crate::cancel::CancellationToken;
use crate::entry::Entry;
use crate::policy::Policy;
use crate::snapshot::SnapshotProvider;

/// Eviction (SPEC ASM-8): drop every recoverable segment whose digest is durable.
pub fn evict(_entries: &[Entry]) -> Vec<Entry> {
    todo!("SPEC ASM-8")
}

/// Assembles bounded context for one provider call (SPEC ASM-7).
pub fn assemble(
    _policy: &Policy,
    _provider: &mut dyn SnapshotProvider,
    _reducer: &mut dyn Reducer,
    _cancel: &CancellationToken,
) -> Result<AssemblyResult, AssemblyError> {
    todo!("SPEC ASM-7")
}
