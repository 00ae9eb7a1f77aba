//! The clause suite (`tests/clauses/`) run on the executable specification, crate
//! `hybrid-compaction-spec`, through the seam.

use hybrid_compaction_model::seam::Implementation;

#[path = "clauses/mod.rs"]
mod clauses;

/// The implementation under test.
fn imp() -> &'static dyn Implementation {
    &hybrid_compaction_spec::Model
}
