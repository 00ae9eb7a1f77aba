//! Recorded sizes (the `recorded` estimator of a redacted trace): the per-call table of one
//! replay, and the run's table a compact trace carries from one call to the next.
//!
//! A recorded call measures each of its entries with the size recorded beside it. Two entries
//! of one call with the same id and the same content (equal content keys: the digest of a
//! redacted entry, the text of one with content) are the same entry to an estimator, so they
//! must carry one size (an estimator is pure, SPEC ASM-15); [`RecordedSizes`] checks that as it
//! is filled, and answers an entry by handle first, then by id and content.
//!
//! In the compact profile (trace format version 2) every entry of a call is a table entry of its
//! run, built once when it was defined; its size is fixed with it. So the run keeps one
//! handle -> size table for all its entries ([`RunSizes`], filled as entries are defined), and a
//! call whose entries all have distinct ids (none of them shares its id with another table
//! entry: then no two of its entries can be "the same entry" but for one shared value) needs no
//! table of its own and no consistency check: [`CarriedSizes`] answers from the run's table.
//! Should an implementation ever measure an entry that is not one of the handles it was given
//! (a copy), `CarriedSizes` falls back to exactly the per-call table, built on first need.

use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

use hybrid_compaction_model::entry::{Entry, EntryId};
use hybrid_compaction_model::estimator::{Estimator, MeasurementUnit};
use hybrid_compaction_model::message::Part;

use super::entries::PrepareError;

/// The content key of an entry: the recorded digest for redacted entries (their only text), the
/// message text for entries with content.
pub fn content_key(entry: &Entry) -> std::borrow::Cow<'_, str> {
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
pub struct RecordedSizes {
    unit: Option<MeasurementUnit>,
    by_handle: FxHashMap<usize, (Entry, i32)>,
    by_id: FxHashMap<EntryId, (Entry, i32)>,
    more: Vec<(Entry, i32)>,
}

impl RecordedSizes {
    /// An empty table in `unit` (default `HostDefinedUnits`), with room for `n` entries.
    pub fn with_capacity(unit: Option<MeasurementUnit>, n: usize) -> RecordedSizes {
        let mut s = RecordedSizes {
            unit,
            ..RecordedSizes::default()
        };
        s.by_handle.reserve(n);
        s.by_id.reserve(n);
        s
    }

    /// The same table, in `unit`.
    pub fn in_unit(mut self, unit: Option<MeasurementUnit>) -> RecordedSizes {
        self.unit = unit;
        self
    }

    /// Records `size` for `entry`; an error if the same entry was recorded with another size
    /// (SPEC ASM-15).
    pub fn insert(&mut self, entry: &Entry, size: i32) -> Result<(), PrepareError> {
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

/// The recorded size of every table entry of a run that has one, by handle (the entry is kept,
/// so its address cannot be reused while it is a key). Filled as the run's records define
/// entries; shared read-only with the calls being checked.
#[derive(Debug, Clone, Default)]
pub struct RunSizes {
    by_handle: FxHashMap<usize, (Entry, i32)>,
}

impl RunSizes {
    /// Room for `n` more entries.
    pub fn reserve(&mut self, n: usize) {
        self.by_handle.reserve(n);
    }

    /// Records the size of a newly defined table entry.
    pub fn insert(&mut self, entry: &Entry, size: i32) {
        self.by_handle.insert(handle(entry), (entry.clone(), size));
    }

    /// The size of this very table entry (not of a copy, nor of another entry with its id).
    pub fn get(&self, entry: &Entry) -> Option<i32> {
        match self.by_handle.get(&handle(entry)) {
            Some((e, s)) if e.ptr_eq(entry) => Some(*s),
            _ => None,
        }
    }
}

/// The `recorded` estimator of a call whose entries are all table entries of its run, with
/// distinct ids: the run's sizes answer each of them; anything else is answered by the call's
/// own [`RecordedSizes`], built (from the call's lists, in the order a replay records them) the
/// first time it is needed, so every answer is the per-call table's.
#[derive(Debug)]
pub struct CarriedSizes {
    unit: Option<MeasurementUnit>,
    run: Arc<RunSizes>,
    /// The call's entry lists (snapshots, then the proposals' new entries), for the fallback.
    lists: Vec<Arc<[Entry]>>,
    news: Vec<Entry>,
    fallback: OnceLock<RecordedSizes>,
}

impl CarriedSizes {
    /// The estimator of a call over `lists` and `news`, every entry of which the run's table
    /// sizes.
    pub fn new(
        unit: Option<MeasurementUnit>,
        run: Arc<RunSizes>,
        lists: Vec<Arc<[Entry]>>,
        news: Vec<Entry>,
    ) -> CarriedSizes {
        CarriedSizes {
            unit,
            run,
            lists,
            news,
            fallback: OnceLock::new(),
        }
    }

    fn fallback(&self) -> &RecordedSizes {
        self.fallback.get_or_init(|| {
            let mut t = RecordedSizes::with_capacity(self.unit, 0);
            let all = self.lists.iter().flat_map(|l| l.iter());
            for e in all.chain(&self.news) {
                if let Some(s) = self.run.get(e) {
                    // Distinct ids and one size per table entry: never inconsistent.
                    let _ = t.insert(e, s);
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
        match self.run.get(entry) {
            Some(s) => s,
            None => self.fallback().estimate(entry),
        }
    }
}
