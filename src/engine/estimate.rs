//! Size estimation and trigger evaluation (SPEC EST-1 .. EST-5, POL-3, POL-4).
//!
//! The engine's estimators give exactly the model's numbers but never allocate: a string measures
//! its `len()`, an integer its digit count, and a float the length of its .NET invariant-culture
//! rendering computed arithmetically from Rust's shortest round-trip digits (formatted into a
//! small stack buffer, never a `String`).
//!
//! [`size`] is the checked 32-bit sum (SPEC POL-3); the assembler instead keeps a per-call cache
//! of per-entry sizes (`SizeCache`, SPEC ASM-15) so that each entry is estimated at most once per
//! assembly call, whatever the number of candidate lists, proposals and snapshots it appears in.

use std::fmt::Write as _;

use hybrid_compaction_model::assembly::AssemblyError;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::estimator::{Estimator, MeasurementUnit};
use hybrid_compaction_model::message::Part;
use hybrid_compaction_model::policy::{Policy, TriggerEvaluation};
use hybrid_compaction_model::value::{Decimal, Value, ValueMap};

use super::hash::FxHashMap;
use super::NONE;

/// The UTF-8 context estimator (SPEC EST-2), unit `Utf8Bytes`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Utf8ContextEstimator;

impl Estimator for Utf8ContextEstimator {
    fn unit(&self) -> MeasurementUnit {
        MeasurementUnit::Utf8Bytes
    }

    fn estimate(&self, entry: &Entry) -> i32 {
        context_size(entry)
    }
}

/// The UTF-8 text estimator (SPEC EST-4), unit `Utf8Bytes`: text parts only.
#[derive(Debug, Clone, Copy, Default)]
pub struct Utf8TextEstimator;

impl Estimator for Utf8TextEstimator {
    fn unit(&self) -> MeasurementUnit {
        MeasurementUnit::Utf8Bytes
    }

    fn estimate(&self, entry: &Entry) -> i32 {
        // SPEC EST-4: bytes of the concatenated text = Σ text-part lengths (no concatenation).
        let mut total = 0usize;
        for part in &entry.message().parts {
            if let Part::Text(t) = part {
                total = total.wrapping_add(t.len());
            }
        }
        // EST-4 / EST-2: the reference's unchecked 32-bit sum, truncated on purpose.
        #[allow(
            clippy::cast_possible_truncation,
            reason = "SPEC EST-2: the sum wraps modulo 2^32"
        )]
        let size = total as i32;
        size
    }
}

/// SPEC EST-2 for one entry. Arithmetic is modulo 2^32 (the reference's unchecked `int` sum), so
/// summing in `usize` and truncating once gives the same value as wrapping per term.
pub(crate) fn context_size(entry: &Entry) -> i32 {
    let mut total = 0usize;
    for part in &entry.message().parts {
        match part {
            Part::Text(t) => total = total.wrapping_add(t.len()),
            Part::Call(c) => {
                total = total
                    .wrapping_add(c.call_id.len())
                    .wrapping_add(c.name.len());
                if let Some(args) = &c.arguments {
                    total = total.wrapping_add(map_len(args));
                }
            }
            Part::Result(r) => {
                total = total
                    .wrapping_add(r.call_id.len())
                    .wrapping_add(value_len(&r.value));
            }
            // SPEC EST-2: the bytes of the block's JSON.
            Part::Block(b) => total = total.wrapping_add(b.json.len()),
        }
    }
    #[allow(
        clippy::cast_possible_truncation,
        reason = "SPEC EST-2: the sum wraps modulo 2^32"
    )]
    let size = total as i32;
    size
}

fn map_len(map: &ValueMap) -> usize {
    let mut total = 0usize;
    for (k, v) in map {
        total = total.wrapping_add(k.len()).wrapping_add(value_len(v));
    }
    total
}

fn value_len(value: &Value) -> usize {
    match value {
        Value::Null => 0,
        Value::String(s) => s.len(),
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::I16(n) => signed_len(i64::from(*n)),
        Value::I32(n) => signed_len(i64::from(*n)),
        Value::I64(n) => signed_len(*n),
        Value::U8(n) => digits_u128(u128::from(*n)),
        Value::U32(n) => digits_u128(u128::from(*n)),
        Value::U64(n) => digits_u128(u128::from(*n)),
        Value::F32(x) => float_len(
            x.is_nan(),
            x.is_infinite(),
            x.is_sign_negative(),
            *x == 0.0,
            9,
            |b| write!(b, "{:e}", x.abs()),
        ),
        Value::F64(x) => float_len(
            x.is_nan(),
            x.is_infinite(),
            x.is_sign_negative(),
            *x == 0.0,
            17,
            |b| write!(b, "{:e}", x.abs()),
        ),
        Value::Decimal(d) => decimal_len(d),
        Value::RawJson(raw) => raw.as_str().len(),
        Value::Map(m) => map_len(m),
        Value::List(items) => {
            let mut total = 0usize;
            for item in items {
                total = total.wrapping_add(value_len(item));
            }
            total
        }
    }
}

/// Number of decimal digits of `n` (1 for zero).
fn digits_u128(mut n: u128) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

fn signed_len(n: i64) -> usize {
    usize::from(n < 0) + digits_u128(u128::from(n.unsigned_abs()))
}

/// Length of a .NET decimal rendering that keeps its scale (`1.50`, `-0.001`, `42`).
fn decimal_len(d: &Decimal) -> usize {
    let digits = digits_u128(d.mantissa().unsigned_abs());
    let scale = usize::from(d.scale());
    let sign = usize::from(d.mantissa() < 0);
    let body = if scale == 0 {
        digits
    } else if digits <= scale {
        // "0." + zero padding + digits = scale + 2 characters.
        scale + 2
    } else {
        digits + 1
    };
    sign + body
}

/// A fixed stack buffer for `{:e}` output (at most ~25 bytes for any f64).
struct StackBuf {
    bytes: [u8; 48],
    len: usize,
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(std::fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Length of the .NET rendering of a float (SPEC EST-2, decision "shortest round-trip"):
/// `NaN`, `Infinity`, `-Infinity`, `0` / `-0`; otherwise with `k` shortest digits and
/// `scale` = decimal exponent + 1, scientific `d[.ddd]E±XX` iff `scale > max(k, precision)` or
/// `scale < -3`, else positional.
fn float_len(
    nan: bool,
    infinite: bool,
    negative: bool,
    zero: bool,
    precision: i64,
    write_exp: impl FnOnce(&mut StackBuf) -> std::fmt::Result,
) -> usize {
    if nan {
        return 3;
    }
    if infinite {
        return if negative { 9 } else { 8 };
    }
    let sign = usize::from(negative);
    if zero {
        return sign + 1;
    }
    let mut buf = StackBuf {
        bytes: [0; 48],
        len: 0,
    };
    if write_exp(&mut buf).is_err() {
        return sign; // unreachable: the buffer holds any `{:e}` rendering of a float
    }
    let text = &buf.bytes[..buf.len];
    let mut k: i64 = 0;
    let mut exponent: i64 = 0;
    let mut exp_negative = false;
    let mut in_exp = false;
    for &b in text {
        match b {
            b'e' => in_exp = true,
            b'-' if in_exp => exp_negative = true,
            b'0'..=b'9' if in_exp => exponent = exponent * 10 + i64::from(b - b'0'),
            b'0'..=b'9' => k += 1,
            _ => {}
        }
    }
    if exp_negative {
        exponent = -exponent;
    }
    let scale = exponent + 1;
    let body = if scale > k.max(precision) || scale < -3 {
        let e = (scale - 1).abs();
        let exp_digits = if e < 100 { 2 } else { 3 };
        // d + [. + rest] + E + sign + exponent digits
        k + i64::from(k > 1) + 2 + exp_digits
    } else if scale <= 0 {
        2 + (-scale) + k
    } else if scale >= k {
        scale
    } else {
        k + 1
    };
    #[allow(
        clippy::cast_possible_truncation,
        reason = "a float text is shorter than 400 bytes"
    )]
    let body = body as usize;
    sign + body
}

/// Checked sum of the estimator over `entries` (SPEC POL-3), no cancellation checks (SPEC
/// ASM-16). The first failing entry, in list order, decides the error.
pub fn size(entries: &[Entry], estimator: &dyn Estimator) -> Result<i32, AssemblyError> {
    let mut total: i32 = 0;
    for entry in entries {
        total = add_size(total, estimate_checked(entry, estimator)?)?;
    }
    Ok(total)
}

/// `estimator.estimate(entry)`, a negative estimate being an error, never clamped (SPEC POL-3).
#[inline]
fn estimate_checked(entry: &Entry, estimator: &dyn Estimator) -> Result<i32, AssemblyError> {
    let s = estimator.estimate(entry);
    if s < 0 {
        return Err(AssemblyError::NegativeEstimate {
            entry_id: entry.id().as_str().to_owned(),
        });
    }
    Ok(s)
}

/// One step of the overflow-checked signed 32-bit sum (SPEC POL-3).
#[inline]
fn add_size(total: i32, s: i32) -> Result<i32, AssemblyError> {
    total.checked_add(s).ok_or(AssemblyError::SizeOverflow)
}

/// Evaluate (SPEC POL-3, POL-4): cancellation checked before and after the sum.
pub fn evaluate(
    entries: &[Entry],
    policy: &Policy,
    cancel: &CancellationToken,
) -> Result<TriggerEvaluation, AssemblyError> {
    if cancel.is_cancelled() {
        return Err(AssemblyError::Cancelled);
    }
    let estimated_size = size(entries, policy.estimator())?;
    if cancel.is_cancelled() {
        return Err(AssemblyError::Cancelled);
    }
    let trigger_threshold = policy.trigger_threshold();
    Ok(TriggerEvaluation {
        estimated_size,
        hard_limit: policy.hard_limit(),
        trigger_margin: policy.trigger_margin(),
        trigger_threshold,
        // SPEC POL-4: exactly at the threshold triggers.
        triggered: estimated_size >= trigger_threshold,
    })
}

/// The identity of an entry's allocation: the address of its message, which lives inside the
/// shared allocation (SPEC ENT: entries are immutable), so two handles share it iff they are the
/// same allocation. The cache keeps a handle of every entry it keys, so no address can be reused
/// by another entry while it is a key.
#[inline]
fn identity(entry: &Entry) -> usize {
    std::ptr::from_ref(entry.message()) as usize
}

/// The size cache of one assembly call (SPEC ASM-15: estimators are pure, so an implementation
/// may estimate each entry once per call): each entry allocation is estimated at most once, lazily,
/// in the order the model's `size(L)` would first reach it, so errors surface at the same point
/// (a negative estimate is an error, never cached).
///
/// Sizes of the latest snapshot `cur` are kept by position (the hot path: no hashing). Entries of
/// earlier snapshots of the call (restarts), new entries of reducer proposals and the entries of a
/// churn snapshot are kept by allocation identity (`known`), so a restart over a snapshot sharing
/// most entries, a new entry carried from one attempt to the next, or a churn result re-estimates
/// nothing it already measured. Two different entries with one id are two allocations: never
/// confused.
#[derive(Debug, Default)]
pub(crate) struct SizeCache {
    /// Per position of `cur`: `-1` = not estimated yet; estimated sizes are always `>= 0`.
    sizes: Vec<i32>,
    /// Entries estimated earlier in this call and not (known to be) in `cur`, by identity, with a
    /// handle that keeps the allocation alive.
    known: FxHashMap<usize, (Entry, i32)>,
}

impl SizeCache {
    /// Forgets everything (a new assembly call, possibly another estimator) and prepares for a
    /// first snapshot of `n` entries (buffers reused).
    pub(crate) fn start_call(&mut self, n: usize) {
        self.known.clear();
        self.sizes.clear();
        self.sizes.resize(n, -1);
    }

    /// Ends the call: releases the entry handles it holds.
    pub(crate) fn end_call(&mut self) {
        self.known.clear();
        self.sizes.clear();
    }

    /// Moves the positional sizes of `cur` (`entries`) into the identity map, so that a later
    /// snapshot or list reuses them.
    fn absorb(&mut self, entries: &[Entry]) {
        for (e, &s) in entries.iter().zip(&self.sizes) {
            if s >= 0 {
                self.known.insert(identity(e), (e.clone(), s));
            }
        }
        self.sizes.iter_mut().for_each(|s| *s = -1);
    }

    /// A restart adopts a new `cur` of `n` entries: the sizes of the old one (`old`) are kept by
    /// identity.
    pub(crate) fn restart(&mut self, old: &[Entry], n: usize) {
        self.absorb(old);
        self.sizes.clear();
        self.sizes.resize(n, -1);
    }

    /// The size of an entry that is not (known to be) in `cur`: by identity, else estimated.
    fn get_other(
        &mut self,
        entry: &Entry,
        estimator: &dyn Estimator,
    ) -> Result<i32, AssemblyError> {
        let key = identity(entry);
        if let Some((_, s)) = self.known.get(&key) {
            return Ok(*s);
        }
        let s = estimate_checked(entry, estimator)?;
        self.known.insert(key, (entry.clone(), s));
        Ok(s)
    }

    /// Whether no entry of an earlier list is known (the first snapshot of a call): then an
    /// entry of `cur` not estimated yet by position is estimated, never looked up.
    #[inline]
    pub(crate) fn knows_no_other(&self) -> bool {
        self.known.is_empty()
    }

    /// The first estimate of entry `pos` of `cur` when [`SizeCache::knows_no_other`] holds and
    /// position `pos` was not estimated yet: estimated and kept, no lookup.
    #[inline]
    pub(crate) fn estimate_new(
        &mut self,
        pos: usize,
        entry: &Entry,
        estimator: &dyn Estimator,
    ) -> Result<i32, AssemblyError> {
        debug_assert!(self.known.is_empty() && self.sizes[pos] < 0);
        let s = estimate_checked(entry, estimator)?;
        self.sizes[pos] = s;
        Ok(s)
    }

    /// The size of entry `pos` of `entries` (`cur`), estimating it on first use. The cached
    /// case (every later pass of a call) is a load and a compare, inlined into the summing
    /// loops; the first use is out of line.
    #[inline]
    pub(crate) fn get(
        &mut self,
        entries: &[Entry],
        pos: usize,
        estimator: &dyn Estimator,
    ) -> Result<i32, AssemblyError> {
        let cached = self.sizes[pos];
        if cached >= 0 {
            return Ok(cached);
        }
        self.first_use(entries, pos, estimator)
    }

    /// [`SizeCache::get`] for a position not estimated yet: by identity, else estimated.
    #[inline(never)]
    fn first_use(
        &mut self,
        entries: &[Entry],
        pos: usize,
        estimator: &dyn Estimator,
    ) -> Result<i32, AssemblyError> {
        let s = if self.known.is_empty() {
            estimate_checked(&entries[pos], estimator)?
        } else {
            let e = &entries[pos];
            match self.known.get(&identity(e)) {
                Some((_, s)) => *s,
                None => estimate_checked(e, estimator)?,
            }
        };
        self.sizes[pos] = s;
        Ok(s)
    }

    /// `size(L)` for the sub-list of `entries` (`cur`) at `positions` (in that order).
    pub(crate) fn sum_positions(
        &mut self,
        entries: &[Entry],
        positions: impl IntoIterator<Item = usize>,
        estimator: &dyn Estimator,
    ) -> Result<i32, AssemblyError> {
        let mut total: i32 = 0;
        for pos in positions {
            total = add_size(total, self.get(entries, pos, estimator)?)?;
        }
        Ok(total)
    }

    /// `size(p)` for a proposal whose entry `j` is `cur` entry `pos[j]` when `pos[j] != NONE`
    /// and the same allocation, else an entry looked up by identity or estimated once.
    pub(crate) fn sum_proposal(
        &mut self,
        entries: &[Entry],
        proposal: &[Entry],
        pos: &[u32],
        estimator: &dyn Estimator,
    ) -> Result<i32, AssemblyError> {
        debug_assert_eq!(pos.len(), proposal.len());
        let mut total: i32 = 0;
        for (j, entry) in proposal.iter().enumerate() {
            let p = pos[j];
            let s = if p != NONE && entries[p as usize].ptr_eq(entry) {
                self.get(entries, p as usize, estimator)?
            } else {
                self.get_other(entry, estimator)?
            };
            total = add_size(total, s)?;
        }
        Ok(total)
    }

    /// `size(L)` for a list that is not `cur` (a churn snapshot), given `cur`: every entry
    /// already measured in this call is reused by identity.
    pub(crate) fn sum_other(
        &mut self,
        cur: &[Entry],
        list: &[Entry],
        estimator: &dyn Estimator,
    ) -> Result<i32, AssemblyError> {
        self.absorb(cur);
        let mut total: i32 = 0;
        for entry in list {
            total = add_size(total, self.get_other(entry, estimator)?)?;
        }
        Ok(total)
    }
}
