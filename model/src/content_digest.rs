//! The content digest of an entry: the memo's cache key (SPEC EST-7).
//!
//! A [`ContentDigest`] is the SHA-256 of an unambiguous encoding of **everything an estimator can
//! read** from an entry: id, kind, role, author, every part with every field (call ids, names,
//! argument maps, the informational flag, result values with their exact variant, float bits,
//! decimal mantissa *and* scale, raw JSON text; a block's kind, type, JSON and token count) and
//! the recovered segment's reference. Every
//! variable-length field is length-prefixed and every variant tagged, so distinct entries give
//! distinct byte strings, and equal digests mean entries no estimator can tell apart.
//!
//! An entry is immutable, so its digest is computed at most once, on first use, and kept with the
//! entry ([`Entry::content_digest`](crate::entry::Entry::content_digest)): a memo that meets the
//! same entry again (the host's history of the previous call, shared handles) reads 32 bytes,
//! not the content. An equal entry built anew (a host that rebuilds its entries per call) pays
//! one pass over its content to compute its own digest, then finds the size cached.

use std::fmt;
use std::hash::{Hash, Hasher};

use sha2::{Digest as _, Sha256};

use crate::entry::Entry;
use crate::message::Part;
use crate::value::{Value, ValueMap};

/// SHA-256 of everything an estimator can read from an entry (SPEC EST-7).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ContentDigest([u8; 32]);

impl ContentDigest {
    /// The digest of `entry`, computed now (the entry caches it: prefer
    /// [`Entry::content_digest`](crate::entry::Entry::content_digest)).
    pub fn compute(entry: &Entry) -> ContentDigest {
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
                Part::Block(b) => {
                    h.update([b'b']);
                    bytes(&mut h, b.kind.name().as_bytes());
                    bytes(&mut h, b.block_type.as_bytes());
                    bytes(&mut h, b.json.as_bytes());
                    match b.tokens {
                        None => h.update([0]),
                        Some(t) => {
                            h.update([1]);
                            h.update(t.to_le_bytes());
                        }
                    }
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
        ContentDigest(h.finalize().into())
    }

    /// The 32 digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl Hash for ContentDigest {
    /// The first eight bytes: a SHA-256 is already uniformly distributed, so a hash map keyed by
    /// digests needs no further mixing (pair it with a pass-through hasher).
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut head = [0u8; 8];
        head.copy_from_slice(&self.0[..8]);
        state.write_u64(u64::from_le_bytes(head));
    }
}

impl fmt::Debug for ContentDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ContentDigest(")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
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
