//! The assembler (SPEC ASM-1 .. ASM-16).
use hybrid_compaction_model::assembly::{AssemblyError, AssemblyResult, Reducer};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::snapshot::SnapshotProvider;

/// Eviction (SPEC ASM-8): drop every recoverable segment whose digest is durable.
pub fn evict(_entries: &[Entry]) -> Vec<Entry> {
    todo!("SPEC ASM-8")
}

/// Assembles bounded context for one provider call (SPEC ASM-7).
pub fn assemble(
    policy: &Policy,
    provider: &mut dyn SnapshotProvider,
    reducer: &mut dyn Reducer,
    cancel: &CancellationToken,
) -> Result<AssemblyResult, AssemblyError> {
    Assembler::new().assemble(policy, provider, reducer, cancel)
}

/// A reusable assembler that keeps its working buffers across calls.
#[derive(Debug, Default)]
pub struct Assembler {}

impl Assembler {
    /// A fresh assembler with empty buffers.
    pub fn new() -> Assembler {
        Assembler::default()
    }

    /// Assembles bounded context for one provider call (SPEC ASM-7).
    pub fn assemble(
        &mut self,
        _policy: &Policy,
        _provider: &mut dyn SnapshotProvider,
        _reducer: &mut dyn Reducer,
        _cancel: &CancellationToken,
    ) -> Result<AssemblyResult, AssemblyError> {
        todo!("SPEC ASM-7")
    }
}
