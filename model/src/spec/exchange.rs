//! Tool-exchange analysis (SPEC EXC-1 .. EXC-3).
use crate::analysis::ToolExchangeAnalysis;
use crate::entry::Entry;

/// Analyzes the tool exchanges of `entries` (SPEC EXC-1 .. EXC-3).
pub fn analyze(_entries: &[Entry]) -> ToolExchangeAnalysis {
    todo!("SPEC EXC-1")
}
