//! Recorded sizes (the `recorded` estimator of a redacted trace): the per-call table of one
//! replay, and the sizes a compact call's table entries carry with them.
//!
//! A recorded call measures each of its entries with the size recorded beside it. Two entries
//! of one call with the same id and the same content (equal content keys: the digest of a
//! redacted entry, the text of one with content) are the same entry to an estimator, so they
//! must carry one size (an estimator is pure, SPEC ASM-15); [`RecordedSizes`] checks that as it
//! is filled, and answers an entry by handle first, then by id and content.
//!
//! In the compact profile (trace format version 2) every entry of a call is a table entry of its
//! run, built once when it was defined; its size is fixed with it, and resolving a call's
//! references hands each entry over with its size. A call whose entries all have distinct ids
//! (none of them shares its id with another table entry: then no two of its entries can be "the
//! same entry" but for one shared value) needs no table of its own and no consistency check:
//! [`CarriedSizes`] answers each entry with the size handed over beside it. Should an
//! implementation ever measure an entry that is not one of the handles it was given (a copy),
//! `CarriedSizes` falls back to exactly the per-call table, built on first need.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use hybrid_compaction_model::entry::{Entry, EntryId};
use hybrid_compaction_model::estimator::{Estimator, MeasurementUnit};
use hybrid_compaction_model::message::Part;

use crate::trace::read::entries::PrepareError;
use crate::trace::read::tables::Sized;

/// The content key of an entry: the recorded digest for redacted entries (their only text), the
/// message text for entries with content.
pub(crate) fn content_key(entry: &Entry) -> std::borrow::Cow<'_, str> {
    match entry.message().parts.as_slice() {
        [Part::Text(t), ..] => std::borrow::Cow::Borrowed(t.as_str()),
        _ => std::borrow::Cow::Owned(entry.message().text_content()),
    }
}

/// The address of an entry's id text: equal for an entry and its clones.
fn handle(e: &Entry) -> usize {
    e.id().as_str().as_ptr() as usize
}

/// The same entry: one shared value, or equal content keys.
fn same(a: &Entry, b: &Entry) -> bool {
    a.ptr_eq(b) || content_key(a) == content_key(b)
}

/// Recorded per-entry sizes of one call: keyed by entry id, then by the entry itself (the same
/// shared value, or equal content). Most ids have one entry; the few with several (other
/// content under the same id) are kept in `more`. The replay measures the very values it was
/// given (shared handles), so `by_handle` answers first, keyed by the address of the entry's id
/// text (one allocation per built entry, shared by its clones) and confirmed by
/// [`Entry::ptr_eq`].
#[derive(Debug, Default)]
pub(crate) struct RecordedSizes {
    unit: Option<MeasurementUnit>,
    by_handle: FxHashMap<usize, (Entry, i32)>,
    by_id: FxHashMap<EntryId, (Entry, i32)>,
    more: Vec<(Entry, i32)>,
}

impl RecordedSizes {
    /// An empty table in `unit` (default `HostDefinedUnits`), with room for `n` entries.
    pub(crate) fn with_capacity(unit: Option<MeasurementUnit>, n: usize) -> RecordedSizes {
        let mut s = RecordedSizes {
            unit,
            ..RecordedSizes::default()
        };
        s.by_handle.reserve(n);
        s.by_id.reserve(n);
        s
    }

    /// The same table, in `unit`.
    pub(crate) fn in_unit(mut self, unit: Option<MeasurementUnit>) -> RecordedSizes {
        self.unit = unit;
        self
    }

    /// Records `size` for `entry`; an error if the same entry was recorded with another size
    /// (SPEC ASM-15).
    pub(crate) fn insert(&mut self, entry: &Entry, size: i32) -> Result<(), PrepareError> {
        let found = match self.by_handle.get(&handle(entry)) {
            Some((e, s)) if e.ptr_eq(entry) => Some(*s),
            _ => self.find_or_insert(entry, size),
        };
        match found {
            Some(s) if s != size => Err(PrepareError::Inconsistent(format!(
                "entry {:?} is recorded with sizes {s} and {size} for the same content (an estimator must be pure, SPEC ASM-15)",
                entry.id().as_str()
            ))),
            _ => Ok(()),
        }
    }

    /// The size recorded for the same entry, or `None` after recording `size` for it.
    fn find_or_insert(&mut self, entry: &Entry, size: i32) -> Option<i32> {
        self.by_handle.insert(handle(entry), (entry.clone(), size));
        let found = match self.by_id.get(entry.id()) {
            None => {
                self.by_id.insert(entry.id().clone(), (entry.clone(), size));
                return None;
            }
            Some((e, s)) if same(e, entry) => Some(*s),
            Some(_) => self
                .more
                .iter()
                .find(|(e, _)| e.id() == entry.id() && same(e, entry))
                .map(|(_, s)| *s),
        };
        if found.is_none() {
            self.more.push((entry.clone(), size));
        }
        found
    }
}

impl Estimator for RecordedSizes {
    fn unit(&self) -> MeasurementUnit {
        self.unit.unwrap_or(MeasurementUnit::HostDefinedUnits)
    }

    fn estimate(&self, entry: &Entry) -> i32 {
        if let Some((e, s)) = self.by_handle.get(&handle(entry)) {
            if e.ptr_eq(entry) {
                return *s;
            }
        }
        match self.by_id.get(entry.id()) {
            Some((e, s)) if same(e, entry) => *s,
            Some(_) => self
                .more
                .iter()
                .find(|(e, _)| e.id() == entry.id() && same(e, entry))
                .map_or(0, |(_, s)| *s),
            None => 0,
        }
    }
}

/// The `recorded` estimator of a call whose entries are all table entries of its run, with
/// distinct ids: each entry's size travels beside it, in the call's own lists, so an entry is
/// answered by finding it there, without hashing. Entries are measured mostly in list order (an
/// assembler's first pass over a snapshot), so the entry after the last one found is tried
/// first; one that is not there (a new snapshot's appended entry, a proposal's new one, the
/// next category of a diagnostics record) is looked for by scanning on from there, around the
/// lists. Scans are bounded per call (they pass over at most 16 entries per entry of the call,
/// so a call costs O(n) whatever order it measures in); past that, or for an entry that is not
/// one of these handles (a copy), the call's own [`RecordedSizes`] answers, built from the same
/// lists the first time it is needed, so every answer is the per-call table's.
#[derive(Debug)]
pub(crate) struct CarriedSizes {
    unit: Option<MeasurementUnit>,
    /// The call's distinct lists (its snapshots, then its proposals' new entries), each entry
    /// with its recorded size (every one has one: the replay refuses a carried call without).
    lists: Vec<Sized>,
    /// Where the next entry is tried first: list index (high half) and position (low half).
    next: AtomicU64,
    /// Entries that scans may still pass over.
    budget: AtomicUsize,
    fallback: OnceLock<RecordedSizes>,
}

impl CarriedSizes {
    /// Scanned entries per entry of the call, before the per-call table answers instead.
    const SCAN_BUDGET: usize = 16;

    /// The estimator of a call over `lists` (each entry beside its recorded size).
    pub(crate) fn new(unit: Option<MeasurementUnit>, lists: Vec<Sized>) -> CarriedSizes {
        let n: usize = lists.iter().map(|(es, _)| es.len()).sum();
        CarriedSizes {
            unit,
            lists,
            next: AtomicU64::new(0),
            budget: AtomicUsize::new(Self::SCAN_BUDGET * (n + 1)),
            fallback: OnceLock::new(),
        }
    }

    /// The size of this very entry if it is at `(list, at)`; the next place to try is after it.
    #[inline]
    fn at(&self, list: usize, at: usize, entry: &Entry) -> Option<i32> {
        let (es, sizes) = self.lists.get(list)?;
        if !es.get(at)?.ptr_eq(entry) {
            return None;
        }
        let next = if at + 1 < es.len() {
            (list, at + 1)
        } else {
            // The start of the next list that has entries.
            let later = self.lists.get(list + 1..).unwrap_or_default();
            let skip = later.iter().take_while(|(es, _)| es.is_empty()).count();
            (list + 1 + skip, 0)
        };
        self.next
            .store(((next.0 as u64) << 32) | next.1 as u64, Ordering::Relaxed);
        Some(sizes.get(at).copied().flatten().unwrap_or(0))
    }

    /// The size of this very entry, found by scanning on from `(list, at)` around the lists
    /// (`None` if it is in none, or the budget is spent).
    fn scanned(&self, entry: &Entry, list: usize, at: usize) -> Option<i32> {
        let n = self.lists.len();
        if n == 0 {
            return None;
        }
        let (list, at) = if list < n { (list, at) } else { (0, 0) };
        // The lists from `(list, at)` on, then around to `list` again from its start.
        for step in 0..=n {
            let k = (list + step) % n;
            let from = if step == 0 { at } else { 0 };
            let rest = self.lists[k].0.get(from..).unwrap_or_default();
            let found = rest.iter().position(|e| e.ptr_eq(entry));
            let passed = found.map_or(rest.len(), |i| i + 1);
            let left = self.budget.load(Ordering::Relaxed);
            if passed > left {
                self.budget.store(0, Ordering::Relaxed);
                return None;
            }
            self.budget.store(left - passed, Ordering::Relaxed);
            if let Some(i) = found {
                return self.at(k, from + i, entry);
            }
        }
        None
    }

    fn fallback(&self) -> &RecordedSizes {
        self.fallback.get_or_init(|| {
            let mut t = RecordedSizes::with_capacity(self.unit, 0);
            for (es, sizes) in &self.lists {
                for (e, s) in es.iter().zip(sizes) {
                    // Distinct ids and one size per table entry: never inconsistent.
                    let _ = t.insert(e, s.unwrap_or(0));
                }
            }
            t
        })
    }
}

impl Estimator for CarriedSizes {
    fn unit(&self) -> MeasurementUnit {
        self.unit.unwrap_or(MeasurementUnit::HostDefinedUnits)
    }

    fn estimate(&self, entry: &Entry) -> i32 {
        let next = self.next.load(Ordering::Relaxed);
        #[allow(
            clippy::cast_possible_truncation,
            reason = "the two halves of `next`, each written from a u32-sized index"
        )]
        let (list, at) = ((next >> 32) as usize, next as u32 as usize);
        if let Some(s) = self.at(list, at, entry) {
            return s;
        }
        if let Some(s) = self.scanned(entry, list, at) {
            return s;
        }
        self.fallback().estimate(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hybrid_compaction_model::entry::EntryKind;
    use hybrid_compaction_model::message::Message;
    use proptest::prelude::*;

    fn entry(i: usize) -> Entry {
        Entry::new(
            format!("e\u{e9}{i}"),
            EntryKind::ConversationalMessage,
            Message::text("user", format!("{i:064x}")),
        )
        .unwrap()
    }

    /// Lists of `lens` entries (distinct ids), entry `i` of size `i * 7 + 1`; the second list
    /// (when there is one) repeats the first list's entries before its own.
    fn lists(lens: &[usize]) -> (Vec<Sized>, Vec<(Entry, i32)>) {
        let mut all = Vec::new();
        let mut out: Vec<Sized> = Vec::new();
        for (k, &n) in lens.iter().enumerate() {
            let mut es: Vec<Entry> = match (k, out.first()) {
                (1, Some((first, _))) => first.iter().cloned().collect(),
                _ => Vec::new(),
            };
            for _ in 0..n {
                let i = all.len();
                let e = entry(i);
                all.push((e.clone(), i32::try_from(i).unwrap() * 7 + 1));
                es.push(e);
            }
            let sizes = es
                .iter()
                .map(|e| all.iter().find(|(a, _)| a.ptr_eq(e)).map(|(_, s)| *s))
                .collect();
            out.push((es.into(), sizes));
        }
        (out, all)
    }

    proptest! {
        /// Whatever order a call measures its entries in (each any number of times, copies of
        /// them included), every answer is the size handed over beside the entry: found at
        /// the next place, by a scan, or (past the scan budget, or for a copy) by the per-call
        /// table.
        #[test]
        fn every_order_answers_the_size_beside_the_entry(
            lens in proptest::collection::vec(0usize..40, 1..4),
            order in proptest::collection::vec((any::<prop::sample::Index>(), any::<bool>()), 0..400),
        ) {
            let (ls, all) = lists(&lens);
            prop_assume!(!all.is_empty());
            let sizes = CarriedSizes::new(None, ls);
            for (at, copy) in order {
                let (e, s) = &all[at.index(all.len())];
                let asked = if copy {
                    // Another allocation of the same id and content.
                    Entry::new(e.id().as_str(), e.kind(), e.message().clone()).unwrap()
                } else {
                    e.clone()
                };
                prop_assert_eq!(sizes.estimate(&asked), *s);
            }
        }
    }

    /// Lists measured in order (an assembler's first pass over each snapshot) are answered
    /// where the last answer left off: nothing scanned, no per-call table built.
    #[test]
    fn lists_measured_in_order_are_answered_without_scanning() {
        let (ls, _) = lists(&[5, 3, 0, 4]);
        let walk: Vec<(Entry, Option<i32>)> = ls
            .iter()
            .flat_map(|(es, sz)| es.iter().cloned().zip(sz.iter().copied()))
            .collect();
        let sizes = CarriedSizes::new(None, ls);
        let budget = sizes.budget.load(Ordering::Relaxed);
        for (e, s) in &walk {
            assert_eq!(Some(sizes.estimate(e)), *s);
        }
        assert_eq!(
            sizes.budget.load(Ordering::Relaxed),
            budget,
            "nothing scanned"
        );
        assert!(sizes.fallback.get().is_none(), "no per-call table");
    }

    /// A call with no lists (no snapshot captured) answers any entry as the per-call table
    /// does an entry it does not hold: 0.
    #[test]
    fn no_lists_answer_zero() {
        let sizes = CarriedSizes::new(None, Vec::new());
        assert_eq!(sizes.estimate(&entry(0)), 0);
        let (ls, _) = lists(&[0, 0]);
        assert_eq!(CarriedSizes::new(None, ls).estimate(&entry(1)), 0);
    }

    /// A long list measured backwards spends the scan budget, then the per-call table answers:
    /// still the size beside each entry.
    #[test]
    fn a_list_measured_backwards_is_answered_past_the_scan_budget() {
        let (ls, all) = lists(&[300]);
        let sizes = CarriedSizes::new(None, ls);
        for (e, s) in all.iter().rev() {
            assert_eq!(sizes.estimate(e), *s);
        }
        assert_eq!(
            sizes.budget.load(Ordering::Relaxed),
            0,
            "the budget was spent"
        );
        assert!(
            sizes.fallback.get().is_some(),
            "the per-call table answered"
        );
    }
}
