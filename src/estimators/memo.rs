//! Memoized estimation (SPEC EST-7): per-entry sizes cached by content digest.
//!
//! A host calls the provider again and again with a history that grows by a few entries; the
//! expensive estimators (provider tokens) would re-tokenize the whole history every time.
//! [`MemoEstimator`] wraps one estimator and remembers each entry's size under the entry's
//! [`ContentDigest`]: the SHA-256 of an unambiguous encoding of **everything an estimator can
//! read** from the entry (id, kind, role, author, every part with every field, result values with
//! their exact numeric variant, float bits, decimal scale and raw JSON text, and the recovered
//! segment's reference; `model::content_digest`). Equal digests mean entries no estimator can
//! tell apart, so the memo returns exactly what the wrapped (pure, SPEC ASM-15) estimator would:
//! the cached and uncached paths are indistinguishable except in time (property tests check it,
//! over histories that reuse ids with changed content of every value kind). The cache key does
//! not name the estimator: one memo wraps one estimator, and is that estimator's identity.
//!
//! **A warm lookup reads no content.** An entry is immutable, so its digest is computed once, on
//! first use, and kept with the entry ([`Entry::content_digest`]); a later lookup of the same
//! entry (the history a host passes again, shared handles) costs a hash-map probe under one
//! uncontended lock, less than the cheapest estimator's walk of the entry's parts. A repeated
//! call on history + k entries therefore digests and estimates the k new entries and probes the
//! rest. An equal entry built anew (a host that rebuilds its entries per call) pays one pass over
//! its content for its own digest, then finds the size cached.
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

use hybrid_compaction_model::content_digest::ContentDigest;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::estimator::{Estimator, MeasurementUnit};

type Key = ContentDigest;
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
        let key = *entry.content_digest();
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

/// Passes a content digest's first eight bytes through as the hash (they are already uniformly
/// distributed; [`ContentDigest`]'s `Hash` writes exactly them).
#[derive(Default)]
struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, head: u64) {
        self.0 = head;
    }

    fn write(&mut self, bytes: &[u8]) {
        for (i, b) in bytes.iter().take(8).enumerate() {
            self.0 ^= u64::from(*b) << (8 * i);
        }
    }
}
