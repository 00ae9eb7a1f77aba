//! The clause suite (`tests/clauses/`) run on the library, crate `hybrid-compaction` (its engine,
//! leases, node and composition), through the seam.

use hybrid_compaction_model::seam::Implementation;

#[path = "clauses/mod.rs"]
mod clauses;

/// The implementation under test.
fn imp() -> &'static dyn Implementation {
    &hybrid_compaction::seam::Engine
}
