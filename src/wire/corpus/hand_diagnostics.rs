//! Hand-written vectors: diagnostics.
use super::HandGroup;

/// The groups of this topic.
pub fn diagnostics() -> Vec<HandGroup> {
    Vec::new()
}
