//! The upstream-reducer bridge (SPEC BRG-1 .. BRG-3).
//!
//! The bridge itself (BRG-1 hand-off and null check, BRG-3 fabricated-content check and minted
//! `Summary` ids) is the vocabulary's [`hybrid_compaction_model::bridge::Bridge`]. What the
//! specification defines here is BRG-2: [`bridge_equal`], and [`FirstUnmatched`], the plain
//! search for the first not-yet-matched bridge-equal request entry, scanning from the start.

use crate::verify::parts_equal;
pub use hybrid_compaction_model::bridge::minted_summary_id;
use hybrid_compaction_model::bridge::BridgeMatcher;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::message::Message;

/// The specification's bridge: the vocabulary's bridge with the [`FirstUnmatched`] search
/// (SPEC BRG-1 .. BRG-3).
pub type Bridge<U> = hybrid_compaction_model::bridge::Bridge<U, FirstUnmatched>;

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

/// The BRG-2 search of the specification: scan the request from the start.
#[derive(Debug, Clone, Copy, Default)]
pub struct FirstUnmatched;

impl BridgeMatcher for FirstUnmatched {
    fn prepare(_request: &[Entry]) -> FirstUnmatched {
        FirstUnmatched
    }

    fn find(&mut self, request: &[Entry], matched: &[bool], message: &Message) -> Option<usize> {
        // SPEC BRG-2: the first not-yet-matched bridge-equal request entry.
        (0..request.len()).find(|&i| !matched[i] && bridge_equal(request[i].message(), message))
    }
}
