//! Identifier, sequence and clock sources of the node's events (SPEC EVT-3, EVT-5).
//!
//! Everything is injected through a small trait so tests can pin values and hosts can plug in
//! their own (a GUID generator, the reporter's sequence source, a UTC clock).
//!
//! The default [`AssemblyId`] source, [`RandomIdSource`], needs no dependency: the high 64 bits
//! are a process-random seed (hashed out of std's randomly keyed `RandomState`), the low 64 bits
//! a process-wide counter passed through a bijective mixer. Two ids drawn in one process can
//! therefore never be equal (the counter part differs), and ids of different processes collide
//! only if their random seeds do. The reference uses a random GUID (SPEC EVT-5; a `uuid` v4
//! source can replace this one through [`IdSource`] without touching the node).

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::SystemTime;

/// The opaque identifier of one assembly attempt (SPEC EVT-5): created once per attempt,
/// immediately before `Started`, and carried by every event of that attempt. Rendered as a
/// GUID-shaped lowercase hex string; it carries no content.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AssemblyId(pub u128);

impl fmt::Display for AssemblyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            (v >> 96) as u32,
            (v >> 80) as u16,
            (v >> 64) as u16,
            (v >> 48) as u16,
            v & 0xffff_ffff_ffff
        )
    }
}

impl fmt::Debug for AssemblyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AssemblyId({self})")
    }
}

/// A source of fresh [`AssemblyId`]s (SPEC EVT-5). Implementations must never hand out the same
/// id twice to attempts that can be observed together (the default never repeats in-process).
pub trait IdSource: Send + Sync {
    /// A fresh id.
    fn next_id(&self) -> AssemblyId;
}

/// The default id source: process-random seed + process-wide counter (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomIdSource;

static ID_COUNTER: AtomicU64 = AtomicU64::new(0);
static ID_SEED: OnceLock<(u64, u64)> = OnceLock::new();

fn seed() -> (u64, u64) {
    *ID_SEED.get_or_init(|| {
        let draw = |salt: u64| {
            let mut h = RandomState::new().build_hasher();
            h.write_u64(salt);
            if let Ok(d) = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH) {
                h.write_u128(d.as_nanos());
            }
            h.write_u32(std::process::id());
            h.finish()
        };
        (draw(0x5eed), draw(0xc0ffee) | 1)
    })
}

/// A bijection on `u64` (odd multiplier, xor-shifts): distinct counters give distinct outputs.
fn mix(mut x: u64, key: u64) -> u64 {
    x ^= key;
    x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^ (x >> 32)
}

impl IdSource for RandomIdSource {
    fn next_id(&self) -> AssemblyId {
        let (hi, key) = seed();
        // Relaxed suffices: only uniqueness of the fetched values matters.
        let n = ID_COUNTER.fetch_add(1, Ordering::Relaxed);
        AssemblyId(((hi as u128) << 64) | mix(n, key) as u128)
    }
}

/// The reporter's sequence source (SPEC EVT-3): a number is taken at each emission, so an
/// attempt's events carry increasing numbers in emission order.
pub trait SequenceSource: Send + Sync {
    /// The next sequence number; strictly greater than every number handed out before.
    fn next_sequence(&self) -> u64;
}

/// The default sequence source: an atomic counter starting at 1.
#[derive(Debug, Default)]
pub struct CounterSequence(AtomicU64);

impl CounterSequence {
    /// A counter whose first number is 1.
    pub fn new() -> CounterSequence {
        CounterSequence::default()
    }
}

impl SequenceSource for CounterSequence {
    fn next_sequence(&self) -> u64 {
        // SeqCst: numbers are totally ordered with the emissions that take them.
        self.0.fetch_add(1, Ordering::SeqCst).saturating_add(1)
    }
}

/// The UTC clock of event timestamps (SPEC EVT-3). Injected so that the node itself stays free of
/// ambient time; a reporter without a clock emits events without a timestamp.
pub trait Clock: Send + Sync {
    /// The current time (UTC, as a `SystemTime` since the Unix epoch).
    fn now(&self) -> SystemTime;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}
