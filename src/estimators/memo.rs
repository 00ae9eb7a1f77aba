//! Memoized estimation (SPEC EST-7): per-entry sizes cached by content digest.
//!
//! A host calls the provider again and again with a history that grows by a few entries; the
//! expensive estimators (provider tokens) would re-tokenize the whole history every time.
//! [`MemoEstimator`] wraps one estimator and remembers each entry's size under the SHA-256 of an
//! unambiguous encoding of **everything an estimator can read** from the entry: id, kind, role,
//! author, every part with every field (call ids, names, argument maps, the informational flag,
//! result values with their exact numeric variant, decimal scale and raw JSON text) and the
//! recovered segment's reference. Equal digests mean equal entries, so the memo returns exactly
//! what the wrapped (pure, SPEC ASM-15) estimator would: the cached and uncached paths are
//! indistinguishable except in time (a property test checks it). The cache key does not name the
//! estimator: one memo wraps one estimator, and is that estimator's identity.
//!
//! **Bound and eviction.** Two generations, `current` and `previous`, each of at most `capacity`
//! sizes. A hit in `previous` is promoted to `current`; when `current` is full it becomes
//! `previous` (the old `previous` is dropped) and a fresh `current` starts. Every operation is
//! O(1) amortized, memory is at most `2 × capacity` sizes, and everything used within the last
//! `capacity` distinct entries survives. With the default capacity (65 536) a history of up to
//! that many entries is estimated once and then only its new entries are.
//!
//! **Sharing.** The memo is `Send + Sync` (one mutex, held only for the map operations, never
//! while the wrapped estimator runs). A host builds its policy once with a memo and reuses the
//! policy for every call, so the node and its assemblies share one memo per policy.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::estimator::{Estimator, MeasurementUnit};
use hybrid_compaction_model::message::Part;
use hybrid_compaction_model::value::{Value, ValueMap};
use sha2::{Digest as _, Sha256};

type Key = [u8; 32];
type Sizes = HashMap<Key, i32, BuildHasherDefault<DigestHasher>>;

/// Cache counters (SPEC EST-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoStats {
    /// Estimates answered from the cache.
    pub hits: u64,
    /// Estimates computed by the wrapped estimator.
    pub misses: u64,
    /// Sizes currently held (both generations).
    pub cached: usize,
}

#[derive(Default)]
struct State {
    current: Sizes,
    previous: Sizes,
    hits: u64,
    misses: u64,
}

impl State {
    fn insert(&mut self, key: Key, size: i32, capacity: usize) {
        if self.current.len() >= capacity {
            self.previous = std::mem::take(&mut self.current);
        }
        self.current.insert(key, size);
    }
}

/// A memoizing wrapper around one estimator (SPEC EST-7).
pub struct MemoEstimator {
    inner: Arc<dyn Estimator>,
    capacity: usize,
    state: Mutex<State>,
}

impl MemoEstimator {
    /// The default per-generation capacity.
    pub const DEFAULT_CAPACITY: usize = 65_536;

    /// A memo over `inner` with the default capacity.
    pub fn new(inner: Arc<dyn Estimator>) -> MemoEstimator {
        MemoEstimator::with_capacity(inner, MemoEstimator::DEFAULT_CAPACITY)
    }

    /// A memo over `inner` holding at most `capacity` sizes per generation (at least 1).
    pub fn with_capacity(inner: Arc<dyn Estimator>, capacity: usize) -> MemoEstimator {
        MemoEstimator {
            inner,
            capacity: capacity.max(1),
            state: Mutex::new(State::default()),
        }
    }

    /// The wrapped estimator.
    pub fn inner(&self) -> &Arc<dyn Estimator> {
        &self.inner
    }

    /// Hit / miss counters and the number of cached sizes.
    pub fn stats(&self) -> MemoStats {
        let s = self.lock();
        MemoStats {
            hits: s.hits,
            misses: s.misses,
            cached: s.current.len() + s.previous.len(),
        }
    }

    /// Forgets every cached size (counters are kept).
    pub fn clear(&self) {
        let mut s = self.lock();
        s.current.clear();
        s.previous.clear();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic never leaves the maps half-updated (inserts are single calls), so a poisoned
        // lock still guards valid data.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl fmt::Debug for MemoEstimator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoEstimator")
            .field("inner", &self.inner)
            .field("capacity", &self.capacity)
            .field("stats", &self.stats())
            .finish()
    }
}

impl Estimator for MemoEstimator {
    /// The wrapped estimator's unit (SPEC EST-7).
    fn unit(&self) -> MeasurementUnit {
        self.inner.unit()
    }

    fn estimate(&self, entry: &Entry) -> i32 {
        let key = entry_digest(entry);
        {
            let mut s = self.lock();
            if let Some(&size) = s.current.get(&key) {
                s.hits += 1;
                return size;
            }
            if let Some(size) = s.previous.remove(&key) {
                s.hits += 1;
                s.insert(key, size, self.capacity);
                return size;
            }
        }
        let size = self.inner.estimate(entry);
        let mut s = self.lock();
        s.misses += 1;
        s.insert(key, size, self.capacity);
        size
    }
}

/// SHA-256 of an unambiguous encoding of everything an estimator can read (SPEC EST-7): every
/// variable-length field is length-prefixed and every variant tagged, so distinct entries give
/// distinct byte strings.
pub fn entry_digest(entry: &Entry) -> [u8; 32] {
    let mut h = Sha256::new();
    bytes(&mut h, entry.id().as_str().as_bytes());
    bytes(&mut h, entry.kind().name().as_bytes());
    let message = entry.message();
    bytes(&mut h, message.role.as_bytes());
    match &message.author {
        None => h.update([0]),
        Some(a) => {
            h.update([1]);
            bytes(&mut h, a.as_bytes());
        }
    }
    len(&mut h, message.parts.len());
    for part in &message.parts {
        match part {
            Part::Text(t) => {
                h.update([b't']);
                bytes(&mut h, t.as_bytes());
            }
            Part::Call(c) => {
                h.update([b'c', u8::from(c.informational_only)]);
                bytes(&mut h, c.call_id.as_bytes());
                bytes(&mut h, c.name.as_bytes());
                match &c.arguments {
                    None => h.update([0]),
                    Some(map) => {
                        h.update([1]);
                        value_map(&mut h, map);
                    }
                }
            }
            Part::Result(r) => {
                h.update([b'r']);
                bytes(&mut h, r.call_id.as_bytes());
                value(&mut h, &r.value);
            }
        }
    }
    match entry.recoverable_segment() {
        None => h.update([0]),
        Some(seg) => {
            h.update([1]);
            h.update(seg.reference.digest().as_bytes());
        }
    }
    h.finalize().into()
}

fn len(h: &mut Sha256, n: usize) {
    h.update((n as u64).to_le_bytes());
}

fn bytes(h: &mut Sha256, b: &[u8]) {
    len(h, b.len());
    h.update(b);
}

fn value_map(h: &mut Sha256, map: &ValueMap) {
    len(h, map.len());
    for (k, v) in map {
        bytes(h, k.as_bytes());
        value(h, v);
    }
}

fn value(h: &mut Sha256, v: &Value) {
    match v {
        Value::Null => h.update([0]),
        Value::String(s) => {
            h.update([1]);
            bytes(h, s.as_bytes());
        }
        Value::Bool(b) => h.update([2, u8::from(*b)]),
        Value::I16(n) => tagged(h, 3, &n.to_le_bytes()),
        Value::I32(n) => tagged(h, 4, &n.to_le_bytes()),
        Value::I64(n) => tagged(h, 5, &n.to_le_bytes()),
        Value::U8(n) => tagged(h, 6, &[*n]),
        Value::U32(n) => tagged(h, 7, &n.to_le_bytes()),
        Value::U64(n) => tagged(h, 8, &n.to_le_bytes()),
        Value::F32(x) => tagged(h, 9, &x.to_bits().to_le_bytes()),
        Value::F64(x) => tagged(h, 10, &x.to_bits().to_le_bytes()),
        Value::Decimal(d) => {
            tagged(h, 11, &d.mantissa().to_le_bytes());
            h.update([d.scale()]);
        }
        Value::RawJson(raw) => {
            h.update([12]);
            bytes(h, raw.as_str().as_bytes());
        }
        Value::Map(map) => {
            h.update([13]);
            value_map(h, map);
        }
        Value::List(items) => {
            h.update([14]);
            len(h, items.len());
            for item in items {
                value(h, item);
            }
        }
    }
}

fn tagged(h: &mut Sha256, tag: u8, payload: &[u8]) {
    h.update([tag]);
    h.update(payload);
}

/// Hashes a SHA-256 key by its first eight bytes (already uniformly distributed).
#[derive(Default)]
struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for (i, b) in bytes.iter().take(8).enumerate() {
            self.0 ^= u64::from(*b) << (8 * i);
        }
    }
}
