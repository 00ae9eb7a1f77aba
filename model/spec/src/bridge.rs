//! The upstream-reducer bridge (SPEC BRG-1 .. BRG-3).
//!
//! An untrusted upstream chat reducer works on messages, not entries. The bridge hands it the
//! request entries' messages in order (BRG-1), matches every returned message back to the first
//! not-yet-matched bridge-equal request entry (BRG-2), and turns unmatched plain messages into
//! `Summary` entries with minted content-derived ids (BRG-3). Fabricated tool content and a null
//! result are contract errors, raised as errors, never terminations.

use crate::verify::parts_equal;
use hybrid_compaction_model::artifact::sha256_hex;
use hybrid_compaction_model::assembly::{
    ContractViolation, Reducer, ReducerError, ReductionRequest,
};
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::reducers::UpstreamReducer;

/// Adapts an [`UpstreamReducer`] to the entry-level [`Reducer`] seam (SPEC BRG-1 .. BRG-3).
#[derive(Debug)]
pub struct Bridge<U> {
    /// The wrapped upstream reducer.
    pub upstream: U,
}

impl<U> Bridge<U> {
    /// Wraps `upstream`.
    pub fn new(upstream: U) -> Bridge<U> {
        Bridge { upstream }
    }
}

/// Bridge equality (SPEC BRG-2): role, author, part count; per part the same shape and equal
/// text / call id + name + arguments / call id + value. The informational flag is not compared.
pub fn bridge_equal(a: &Message, b: &Message) -> bool {
    a.role == b.role
        && a.author == b.author
        && a.parts.len() == b.parts.len()
        && a.parts
            .iter()
            .zip(&b.parts)
            .all(|(p, q)| parts_equal(p, q, false))
}

/// The minted id of the `k`-th new message of a proposal (SPEC BRG-3):
/// `upstream-summary-{k}-{h}`, `h` = lowercase hex SHA-256 of UTF-8 `"{k}:{role}:{text}"`.
pub fn minted_summary_id(k: usize, message: &Message) -> String {
    let h = sha256_hex(&format!("{k}:{}:{}", message.role, message.text_content()));
    format!("upstream-summary-{k}-{h}")
}

impl<U: UpstreamReducer> Reducer for Bridge<U> {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        // SPEC BRG-1: the request entries' messages, in order.
        let messages: Vec<Message> = request
            .entries
            .iter()
            .map(|e| e.message().clone())
            .collect();
        // Upstream failures propagate unchanged (as the reducer's own failure, SPEC ASM-4).
        let returned = self
            .upstream
            .reduce(&messages)
            .map_err(|e| ReducerError::Failed(e.0))?
            // SPEC BRG-1: a null result is a reducer-contract error.
            .ok_or(ReducerError::Contract(ContractViolation::NullResult))?;

        let mut matched = vec![false; request.entries.len()];
        let mut out = Vec::with_capacity(returned.len());
        let mut new_ordinal = 0usize;
        for (index, message) in returned.iter().enumerate() {
            // SPEC BRG-2: the first not-yet-matched bridge-equal request entry, reused verbatim.
            let found = request
                .entries
                .iter()
                .enumerate()
                .find(|(i, e)| !matched[*i] && bridge_equal(e.message(), message));
            if let Some((i, entry)) = found {
                matched[i] = true;
                out.push(entry.clone());
                continue;
            }
            // SPEC BRG-3: an unmatched message with call/result parts is fabricated tool content.
            if message.has_call() || message.has_result() {
                return Err(ReducerError::Contract(
                    ContractViolation::FabricatedToolContent { index },
                ));
            }
            // SPEC BRG-3: otherwise a Summary entry with a minted id.
            let id = minted_summary_id(new_ordinal, message);
            new_ordinal += 1;
            let entry = Entry::new(id, EntryKind::Summary, message.clone()).map_err(|_| {
                // Unreachable: a minted id is never blank and a Summary without tool parts
                // satisfies SPEC ENT-5; mapped to a contract error rather than a panic.
                ReducerError::Contract(ContractViolation::FabricatedToolContent { index })
            })?;
            out.push(entry);
        }
        // Unmatched request entries are dropped.
        Ok(Some(out))
    }
}
