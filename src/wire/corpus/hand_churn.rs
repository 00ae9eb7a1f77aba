//! Hand-written vectors: churn.
use super::HandGroup;

/// The groups of this topic.
pub fn churn() -> Vec<HandGroup> {
    Vec::new()
}
