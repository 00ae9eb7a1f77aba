//! Identifier, sequence and clock sources of the node's events (SPEC EVT-3, EVT-5).
//!
//! Everything is injected through a small trait so tests can pin values and hosts can plug in
//! their own (a GUID generator, the reporter's sequence source, a UTC clock).
//!
//! An [`AssemblyId`] is a UUID (`uuid::Uuid`). The default source, [`RandomIdSource`], draws a
//! random version-4 UUID (RFC 9562: 122 random bits from the operating system's generator, version
//! and variant bits set), as the reference draws a random GUID (SPEC EVT-5). Version 4 rather
//! than the time-ordered version 7: an id must carry nothing but identity, and a v7 id would embed
//! the wall-clock time of the attempt, read behind the node's injected [`Clock`] (SPEC EVT-3).
//! This default source is the node's only ambient read; tests and hosts that need deterministic
//! ids inject their own [`IdSource`] (SPEC NODE-6), e.g. with [`AssemblyId::from_u128`].

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use uuid::Uuid;

/// The opaque identifier of one assembly attempt (SPEC EVT-5): created once per attempt,
/// immediately before `Started`, and carried by every event of that attempt. A UUID, rendered in
/// its hyphenated lowercase form; it carries no content.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AssemblyId(Uuid);

impl AssemblyId {
    /// The id holding `uuid`.
    pub const fn from_uuid(uuid: Uuid) -> AssemblyId {
        AssemblyId(uuid)
    }

    /// The id whose 128 bits are `bits` (big-endian), for injected deterministic sources. No
    /// version or variant bits are set: such ids are the source's own choice.
    pub const fn from_u128(bits: u128) -> AssemblyId {
        AssemblyId(Uuid::from_u128(bits))
    }

    /// The UUID.
    pub const fn as_uuid(&self) -> &Uuid {
        &self.0
    }
}

impl From<Uuid> for AssemblyId {
    fn from(uuid: Uuid) -> AssemblyId {
        AssemblyId(uuid)
    }
}

impl fmt::Display for AssemblyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

impl fmt::Debug for AssemblyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AssemblyId({self})")
    }
}

/// A source of fresh [`AssemblyId`]s (SPEC EVT-5, NODE-6). Implementations must never hand out the
/// same id twice to attempts that can be observed together.
pub trait IdSource: Send + Sync {
    /// A fresh id.
    fn next_id(&self) -> AssemblyId;
}

/// The default id source: random version-4 UUIDs (see the module docs). Two draws collide with
/// probability about 2^-122; the operating system's generator is the only input.
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomIdSource;

impl IdSource for RandomIdSource {
    fn next_id(&self) -> AssemblyId {
        AssemblyId(Uuid::new_v4())
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

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::{Variant, Version};

    #[test]
    fn the_default_source_draws_distinct_version_4_rfc_uuids() {
        // SPEC EVT-5: opaque, distinct; ours: RFC 9562 version 4 (version and variant bits set).
        let a = RandomIdSource.next_id();
        let b = RandomIdSource.next_id();
        assert_ne!(a, b);
        for id in [a, b] {
            assert_eq!(id.as_uuid().get_version(), Some(Version::Random));
            assert_eq!(id.as_uuid().get_variant(), Variant::RFC4122);
            let text = id.to_string();
            assert_eq!(text.len(), 36);
            assert_eq!(text.as_bytes()[14], b'4', "{text}");
            assert!(
                matches!(text.as_bytes()[19], b'8' | b'9' | b'a' | b'b'),
                "{text}"
            );
        }
    }

    #[test]
    fn injected_ids_render_their_bits_verbatim() {
        let id = AssemblyId::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        assert_eq!(id.to_string(), "01234567-89ab-cdef-0011-223344556677");
        assert_eq!(
            format!("{id:?}"),
            "AssemblyId(01234567-89ab-cdef-0011-223344556677)"
        );
    }
}
