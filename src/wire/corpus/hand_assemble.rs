//! Hand-written vectors: outcomes.
use super::HandGroup;

/// The groups of this topic.
pub fn outcomes() -> Vec<HandGroup> {
    Vec::new()
}
