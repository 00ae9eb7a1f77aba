//! The upstream-reducer bridge (SPEC BRG-1 .. BRG-3), written once around a pluggable matcher.
//!
//! An untrusted upstream chat reducer works on messages, not entries. The bridge hands it the
//! request entries' messages in order (BRG-1), matches every returned message back to the first
//! not-yet-matched bridge-equal request entry (BRG-2), and turns unmatched plain messages into
//! `Summary` entries with minted content-derived ids (BRG-3). Fabricated tool content and a null
//! result are contract errors, raised as errors, never terminations.
//!
//! Only the BRG-2 search differs between the implementations, so [`Bridge`] does everything else
//! and takes the search as its [`BridgeMatcher`] type parameter: the specification's
//! `spec::bridge` scans the request from the start, the engine's `engine::bridge` looks in hash
//! buckets. Each names its bridge with an alias, `type Bridge<U> = Bridge<U, ItsMatcher>`.

use std::fmt;
use std::marker::PhantomData;

use crate::artifact::sha256_hex;
use crate::assembly::{ContractViolation, Reducer, ReducerError, ReductionRequest};
use crate::entry::{Entry, EntryKind};
use crate::message::Message;
use crate::reducers::UpstreamReducer;

/// The BRG-2 search of one reduction: prepared once per request, then asked once per returned
/// message in order.
pub trait BridgeMatcher {
    /// Prepares the search over the request entries (after the upstream answered).
    fn prepare(request: &[Entry]) -> Self;

    /// The position of the first request entry that is not `matched` and is bridge-equal to
    /// `message` (SPEC BRG-2), if any. The bridge marks the returned position matched.
    fn find(&mut self, request: &[Entry], matched: &[bool], message: &Message) -> Option<usize>;
}

/// Adapts an [`UpstreamReducer`] to the entry-level [`Reducer`] seam (SPEC BRG-1 .. BRG-3), with
/// the BRG-2 search `M`.
pub struct Bridge<U, M> {
    /// The wrapped upstream reducer.
    pub upstream: U,
    matcher: PhantomData<fn() -> M>,
}

impl<U, M> Bridge<U, M> {
    /// Wraps `upstream`.
    pub fn new(upstream: U) -> Bridge<U, M> {
        Bridge {
            upstream,
            matcher: PhantomData,
        }
    }
}

impl<U: fmt::Debug, M> fmt::Debug for Bridge<U, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bridge")
            .field("upstream", &self.upstream)
            .finish_non_exhaustive()
    }
}

/// The minted id of the `k`-th new message of a proposal (SPEC BRG-3):
/// `upstream-summary-{k}-{h}`, `h` = lowercase hex SHA-256 of UTF-8 `"{k}:{role}:{text}"`.
pub fn minted_summary_id(k: usize, message: &Message) -> String {
    let h = sha256_hex(&format!("{k}:{}:{}", message.role, message.text_content()));
    format!("upstream-summary-{k}-{h}")
}

impl<U: UpstreamReducer, M: BridgeMatcher> Reducer for Bridge<U, M> {
    fn reduce(
        &mut self,
        request: &ReductionRequest<'_>,
    ) -> Result<Option<Vec<Entry>>, ReducerError> {
        let entries = request.entries;
        // SPEC BRG-1: the request entries' messages, in order.
        let messages: Vec<Message> = entries.iter().map(|e| e.message().clone()).collect();
        // Upstream failures propagate unchanged (as the reducer's own failure, SPEC ASM-4): the
        // whole error, so the host's own error stays its source.
        let returned = self
            .upstream
            .reduce(&messages)
            .map_err(ReducerError::Failed)?
            // SPEC BRG-1: a null result is a reducer-contract error.
            .ok_or(ReducerError::Contract(ContractViolation::NullResult))?;

        let mut matcher = M::prepare(entries);
        let mut matched = vec![false; entries.len()];
        let mut out = Vec::with_capacity(returned.len());
        let mut new_ordinal = 0usize;
        for (index, message) in returned.iter().enumerate() {
            // SPEC BRG-2: the first not-yet-matched bridge-equal request entry, reused verbatim.
            if let Some(i) = matcher.find(entries, &matched, message) {
                matched[i] = true;
                out.push(entries[i].clone());
                continue;
            }
            // SPEC BRG-3: an unmatched message with call/result parts, or with a block only the
            // provider makes (ENT-8), is fabricated tool or provider content.
            let fabricated =
                ReducerError::Contract(ContractViolation::FabricatedToolContent { index });
            if message.has_call() || message.has_result() || message.has_provider_block() {
                return Err(fabricated);
            }
            // SPEC BRG-3: otherwise a Summary entry with a minted id.
            let id = minted_summary_id(new_ordinal, message);
            new_ordinal += 1;
            // Unreachable error: a minted id is never blank and a Summary without tool parts
            // satisfies SPEC ENT-5; mapped to a contract error rather than a panic.
            let entry =
                Entry::new(id, EntryKind::Summary, message.clone()).map_err(|_| fabricated)?;
            out.push(entry);
        }
        // Unmatched request entries are dropped.
        Ok(Some(out))
    }
}
