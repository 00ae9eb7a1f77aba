//! The upstream-reducer bridge (SPEC BRG-1 .. BRG-3).
//!
//! The model matches every returned message by scanning the request from the start (O(n·m)).
//! The engine hashes the bridge-relevant identity of each request message (role, author, part
//! count, per part its shape and text / call id and name / call id; values are left out of the
//! hash, so the hash is consistent with bridge equality, which compares values by SPEC VER-2
//! equality) into buckets of ascending positions; a returned message is compared only with its
//! bucket, first unmatched position first. The result is the same "first not-yet-matched
//! bridge-equal request entry" of SPEC BRG-2.

use std::hash::{Hash, Hasher};

use hybrid_compaction_model::artifact::sha256_hex;
use hybrid_compaction_model::assembly::{
    ContractViolation, Reducer, ReducerError, ReductionRequest,
};
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::message::{Message, Part};
use hybrid_compaction_model::reducers::UpstreamReducer;

use super::hash::{map_with_capacity, FxHashMap, FxHasher};

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

/// Bridge equality (SPEC BRG-2): role, author, part count, and per part the same shape with equal
/// text / call id + name + arguments / call id + value; the informational flag is not compared.
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
        }
    }
    h.finish()
}

/// Unmatched request positions sharing one hash, ascending, with a cursor past matched ones.
struct Bucket {
    positions: Vec<u32>,
    start: usize,
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
        let returned = self
            .upstream
            .reduce(&messages)
            .map_err(|e| ReducerError::Failed(e.0))?
            .ok_or(ReducerError::Contract(ContractViolation::NullResult))?;

        let entries = request.entries;
        let mut buckets: FxHashMap<u64, Bucket> = map_with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            buckets
                .entry(bridge_hash(e.message()))
                .or_insert_with(|| Bucket {
                    positions: Vec::new(),
                    start: 0,
                })
                .positions
                .push(i as u32);
        }
        let mut matched = vec![false; entries.len()];
        let mut out = Vec::with_capacity(returned.len());
        let mut new_ordinal = 0usize;
        for (index, message) in returned.iter().enumerate() {
            // SPEC BRG-2: the first not-yet-matched bridge-equal request entry.
            if let Some(bucket) = buckets.get_mut(&bridge_hash(message)) {
                while bucket.start < bucket.positions.len()
                    && matched[bucket.positions[bucket.start] as usize]
                {
                    bucket.start += 1;
                }
                let found = bucket.positions[bucket.start..].iter().copied().find(|&p| {
                    !matched[p as usize] && bridge_equal(entries[p as usize].message(), message)
                });
                if let Some(p) = found {
                    matched[p as usize] = true;
                    out.push(entries[p as usize].clone());
                    continue;
                }
            }
            // SPEC BRG-3: fabricated tool content is a contract error.
            if message
                .parts
                .iter()
                .any(|p| matches!(p, Part::Call(_) | Part::Result(_)))
            {
                return Err(ReducerError::Contract(
                    ContractViolation::FabricatedToolContent { index },
                ));
            }
            // SPEC BRG-3: a Summary with id `upstream-summary-{k}-{sha256("{k}:{role}:{text}")}`.
            let mut text = String::new();
            for part in &message.parts {
                if let Part::Text(t) = part {
                    text.push_str(t);
                }
            }
            let k = new_ordinal;
            new_ordinal += 1;
            let h = sha256_hex(&format!("{k}:{}:{text}", message.role));
            let entry = Entry::new(
                format!("upstream-summary-{k}-{h}"),
                EntryKind::Summary,
                message.clone(),
            )
            .map_err(|_| {
                ReducerError::Contract(ContractViolation::FabricatedToolContent { index })
            })?;
            out.push(entry);
        }
        Ok(Some(out))
    }
}
