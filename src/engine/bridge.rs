//! The upstream-reducer bridge (SPEC BRG-1 .. BRG-3).
use hybrid_compaction_model::assembly::{Reducer, ReducerError, ReductionRequest};
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::reducers::UpstreamReducer;

/// Adapts an [`UpstreamReducer`] to the entry-level [`Reducer`] seam (SPEC BRG-1 .. BRG-3).
#[derive(Debug)]
pub struct Bridge<U> {
    /// The wrapped upstream reducer.
    pub upstream: U,
}

impl<U: UpstreamReducer> Reducer for Bridge<U> {
    fn reduce(
        &mut self,
        _request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        todo!("SPEC BRG-1")
    }
}
