//! The clause suite (`tests/clauses/`) run on the executable specification, crate
//! `hybrid-compaction-spec`. This file is only the adapter: every trait method is the spec
//! function of the same name (`clauses::same_name_functions!` and the four below).

use hybrid_compaction_model::reducers::UpstreamReducer;
use hybrid_compaction_model::*;
use hybrid_compaction_spec as spec;

#[path = "clauses/mod.rs"]
mod clauses;

use clauses::{AdaptErrorView, Implementation};

/// The implementation under test.
type Imp = Spec;

/// The executable specification.
struct Spec;

impl Implementation for Spec {
    clauses::same_name_functions!(spec);

    fn value_size(value: &Value) -> i32 {
        spec::estimate::value_size(value)
    }
    fn recency_units(entries: &[Entry]) -> Option<Vec<Vec<EntryId>>> {
        Some(spec::preserve::recency_units(entries))
    }
    fn minted_summary_id(k: usize, message: &Message) -> Option<String> {
        Some(spec::bridge::minted_summary_id(k, message))
    }
    fn canonical_rendering(message: &Message) -> Option<String> {
        Some(spec::classify::canonical_rendering(message))
    }
}
