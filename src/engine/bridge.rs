//! The upstream-reducer bridge (SPEC BRG-1 .. BRG-3).
//!
//! The bridge itself (BRG-1, BRG-3) is the vocabulary's `Bridge`, shared with the model; the
//! engine supplies its own BRG-2 search, [`HashBuckets`].
//!
//! The model matches every returned message by scanning the request from the start (O(n·m)).
//! The engine hashes the bridge-relevant identity of each request message (role, author, part
//! count, per part its shape and text / call id and name / call id; values are left out of the
//! hash, so the hash is consistent with bridge equality, which compares values by SPEC VER-2
//! equality) into buckets of ascending positions; a returned message is compared only with its
//! bucket, first unmatched position first. The result is the same "first not-yet-matched
//! bridge-equal request entry" of SPEC BRG-2.

#![allow(
    clippy::cast_possible_truncation,
    reason = "positions are u32 by design: the engine indexes lists of at most u32::MAX entries (module docs)"
)]

use std::hash::{Hash, Hasher};

use hybrid_compaction_model::bridge::BridgeMatcher;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::message::{Message, Part};

use super::hash::{map_with_capacity, FxHashMap, FxHasher};

/// The engine's bridge: the vocabulary's bridge with the [`HashBuckets`] search
/// (SPEC BRG-1 .. BRG-3).
pub type Bridge<U> = hybrid_compaction_model::bridge::Bridge<U, HashBuckets>;

/// Bridge equality (SPEC BRG-2): role, author, part count, and per part the same shape with equal
/// text / call id + name + arguments / call id + value / block; the informational flag is not
/// compared.
pub fn bridge_equal(a: &Message, b: &Message) -> bool {
    a.role == b.role
        && a.author == b.author
        && a.parts.len() == b.parts.len()
        && a.parts.iter().zip(&b.parts).all(|(p, q)| match (p, q) {
            (Part::Text(x), Part::Text(y)) => x == y,
            (Part::Call(x), Part::Call(y)) => {
                x.call_id == y.call_id && x.name == y.name && x.arguments == y.arguments
            }
            (Part::Result(x), Part::Result(y)) => x.call_id == y.call_id && x.value == y.value,
            (Part::Block(x), Part::Block(y)) => x == y,
            _ => false,
        })
}

/// A hash of the fields bridge equality compares exactly (values excluded).
fn bridge_hash(m: &Message) -> u64 {
    let mut h = FxHasher::default();
    m.role.hash(&mut h);
    m.author.hash(&mut h);
    m.parts.len().hash(&mut h);
    for part in &m.parts {
        match part {
            Part::Text(t) => {
                0u8.hash(&mut h);
                t.hash(&mut h);
            }
            Part::Call(c) => {
                1u8.hash(&mut h);
                c.call_id.hash(&mut h);
                c.name.hash(&mut h);
            }
            Part::Result(r) => {
                2u8.hash(&mut h);
                r.call_id.hash(&mut h);
            }
            Part::Block(b) => {
                3u8.hash(&mut h);
                b.json.hash(&mut h);
            }
        }
    }
    h.finish()
}

/// Unmatched request positions sharing one hash, ascending, with a cursor past matched ones.
#[derive(Debug)]
struct Bucket {
    positions: Vec<u32>,
    start: usize,
}

/// The engine's BRG-2 search: request positions bucketed by `bridge_hash`.
#[derive(Debug)]
pub struct HashBuckets {
    buckets: FxHashMap<u64, Bucket>,
}

impl BridgeMatcher for HashBuckets {
    fn prepare(request: &[Entry]) -> HashBuckets {
        let mut buckets: FxHashMap<u64, Bucket> = map_with_capacity(request.len());
        for (i, e) in request.iter().enumerate() {
            buckets
                .entry(bridge_hash(e.message()))
                .or_insert_with(|| Bucket {
                    positions: Vec::new(),
                    start: 0,
                })
                .positions
                .push(i as u32);
        }
        HashBuckets { buckets }
    }

    fn find(&mut self, request: &[Entry], matched: &[bool], message: &Message) -> Option<usize> {
        // SPEC BRG-2: the first not-yet-matched bridge-equal request entry, within its bucket.
        let bucket = self.buckets.get_mut(&bridge_hash(message))?;
        while bucket.start < bucket.positions.len()
            && matched[bucket.positions[bucket.start] as usize]
        {
            bucket.start += 1;
        }
        bucket.positions[bucket.start..]
            .iter()
            .map(|&p| p as usize)
            .find(|&p| !matched[p] && bridge_equal(request[p].message(), message))
    }
}
