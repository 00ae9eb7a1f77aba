//! Tool-exchange analysis (SPEC EXC-1 .. EXC-3).
use hybrid_compaction_model::analysis::ToolExchangeAnalysis;
use hybrid_compaction_model::entry::Entry;

/// Analyzes the tool exchanges of `entries` (SPEC EXC-1 .. EXC-3).
pub fn analyze(_entries: &[Entry]) -> ToolExchangeAnalysis {
    todo!("SPEC EXC-1")
}
