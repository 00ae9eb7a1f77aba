//! The engine's private hash maps: the Fx hasher of the maintained `rustc-hash` crate.
//!
//! The engine hashes entry ids, call ids and digests many times per assembly. `std`'s default
//! SipHash is DoS-resistant but several times slower on short keys; the keys here come from the
//! host's own history (not from a remote peer choosing collisions), so the engine's private maps
//! use rustc's fast non-cryptographic hasher. Nothing hashed here is ever exposed, persisted or
//! iterated into a result (maps are only looked up), so the choice of hasher never changes what
//! the engine returns.

use std::collections::{HashMap, HashSet};

use rustc_hash::FxBuildHasher;
pub(crate) use rustc_hash::{FxHashMap, FxHashSet, FxHasher};

/// An empty map with room for `n` keys.
pub(crate) fn map_with_capacity<K, V>(n: usize) -> FxHashMap<K, V> {
    HashMap::with_capacity_and_hasher(n, FxBuildHasher)
}

/// An empty set with room for `n` keys.
pub(crate) fn set_with_capacity<K>(n: usize) -> FxHashSet<K> {
    HashSet::with_capacity_and_hasher(n, FxBuildHasher)
}
