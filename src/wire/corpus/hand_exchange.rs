//! Hand-written vectors: exchange, preserve.
use super::HandGroup;

/// Tool-exchange analysis.
pub fn exchange() -> Vec<HandGroup> {
    Vec::new()
}

/// Required preservation.
pub fn preserve() -> Vec<HandGroup> {
    Vec::new()
}
