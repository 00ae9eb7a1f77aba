//! Hand-written vectors: errors.
use super::HandGroup;

/// The groups of this topic.
pub fn errors() -> Vec<HandGroup> {
    Vec::new()
}
