//! The clause suite (`tests/clauses/`) run on the optimized engine, `hybrid_compaction::engine`.
//! This file is only the adapter: every trait method is the engine function of the same name
//! (`clauses::same_name_functions!`), except where the engine keeps a helper internal. Those
//! answer through the engine's public functions (never through the spec): `value_size` through
//! the context estimator; the rendering string, recency units and minted-id helper are `None`
//! (the suite then checks what they imply).

use hybrid_compaction::engine;
use hybrid_compaction_model::reducers::UpstreamReducer;
use hybrid_compaction_model::*;

#[path = "clauses/mod.rs"]
mod clauses;

use clauses::{AdaptErrorView, Implementation};

/// The implementation under test.
type Imp = Engine;

/// The optimized engine.
struct Engine;

impl Implementation for Engine {
    clauses::same_name_functions!(engine);

    fn value_size(value: &Value) -> i32 {
        // SPEC EST-2: a result part measures its call id (here 1 byte) plus size(value).
        let message = Message::new("tool", vec![Part::result("c", value.clone())]);
        let entry = Entry::new("v", EntryKind::ToolExchange, message).expect("a result entry");
        engine::estimate::Utf8ContextEstimator.estimate(&entry) - 1
    }
    fn recency_units(_entries: &[Entry]) -> Option<Vec<Vec<EntryId>>> {
        None
    }
    fn minted_summary_id(_k: usize, _message: &Message) -> Option<String> {
        None
    }
    fn canonical_rendering(_message: &Message) -> Option<String> {
        None
    }
}
