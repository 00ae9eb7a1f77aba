//! Snapshots and snapshot providers (SPEC SNAP-1 .. SNAP-3).
//!
//! A [`Snapshot`] is a version (`>= 0`) and an entry list with unique ids. A
//! [`SnapshotProvider`] hands out snapshots; the assembler compares versions only for
//! (in)equality. Two providers ship here: [`StaticProvider`] (always version 0) and
//! [`ScriptedProvider`], which plays a schedule of captures, for tests, vectors and churn (a test
//! double: crate feature `testing`).
//!
//! A snapshot either owns its entry list or shares one behind an `Arc` ([`SharedEntries`]:
//! ids validated once, at construction). A host that keeps its history as `SharedEntries` can
//! hand out snapshots in O(1) ([`Snapshot::from_shared`]) instead of copying `n` entry handles
//! per capture; both forms behave identically (same accessors, equality and `Debug` output).

use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashSet;

#[cfg(feature = "testing")]
use crate::cancel::CancellationToken;
use crate::entry::Entry;
use crate::error::ErrorKind;

/// Why a snapshot could not be constructed (SPEC SNAP-1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The version is negative.
    #[error("snapshot version {0} is negative")]
    NegativeVersion(i64),
    /// Two entries share an id.
    #[error("snapshot has duplicate entry id `{0}`")]
    DuplicateEntryId(String),
    /// A lease-filtering provider could not update its run's coordinator (SPEC LSE-8); in
    /// practice only a revision-counter overflow.
    #[error("lease coordinator failed during capture: {0}")]
    Lease(crate::lease::LeaseError),
}

impl SnapshotError {
    /// The language-neutral category.
    pub fn kind(&self) -> ErrorKind {
        match self {
            SnapshotError::NegativeVersion(_) => ErrorKind::OutOfRange,
            SnapshotError::DuplicateEntryId(_) => ErrorKind::InvalidArgument,
            SnapshotError::Lease(e) => e.kind(),
        }
    }
}

/// Unique-id check shared by [`Snapshot::new`] and [`SharedEntries::new`] (SPEC SNAP-1). The
/// set hashes with Fx, not SipHash, as the engine's own maps do (`src/engine/hash.rs`): the ids
/// are the host's, so ids crafted to collide slow only that host's own calls.
fn check_unique_ids(entries: &[Entry]) -> Result<(), SnapshotError> {
    let mut seen = FxHashSet::with_capacity_and_hasher(entries.len(), Default::default());
    for e in entries {
        if !seen.insert(e.id().as_str()) {
            return Err(SnapshotError::DuplicateEntryId(e.id().as_str().to_owned()));
        }
    }
    Ok(())
}

/// An immutable entry list with unique ids (validated once, SPEC SNAP-1), shared behind an
/// `Arc`: cloning it, and building a [`Snapshot`] from it, is O(1).
#[derive(Clone, PartialEq)]
pub struct SharedEntries(Arc<[Entry]>);

impl SharedEntries {
    /// Validates unique entry ids (SPEC SNAP-1) and shares the list.
    pub fn new(entries: Vec<Entry>) -> Result<SharedEntries, SnapshotError> {
        check_unique_ids(&entries)?;
        Ok(SharedEntries(entries.into()))
    }

    /// Validates unique entry ids (SPEC SNAP-1) of a list that is already shared, and shares
    /// it (the caller keeps its handle to the same list, valid or not).
    pub fn from_arc(entries: Arc<[Entry]>) -> Result<SharedEntries, SnapshotError> {
        check_unique_ids(&entries)?;
        Ok(SharedEntries(entries))
    }

    /// Shares a list whose ids the caller has already proven unique (SPEC SNAP-1) by other
    /// means, without checking them again: a trace checker whose entries come from a table in
    /// which no two entries share an id, each named once. Builds with debug
    /// assertions (tests) check the claim.
    #[cfg(feature = "testing")]
    pub fn from_arc_unique(entries: Arc<[Entry]>) -> SharedEntries {
        debug_assert!(
            check_unique_ids(&entries).is_ok(),
            "a list claimed unique repeats an id"
        );
        SharedEntries(entries)
    }

    /// The entries in order.
    pub fn entries(&self) -> &[Entry] {
        &self.0
    }
}

impl fmt::Debug for SharedEntries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0[..], f)
    }
}

/// The entry list of a snapshot: owned, or shared (already validated).
#[derive(Clone)]
enum EntryList {
    Owned(Vec<Entry>),
    Shared(SharedEntries),
}

/// A captured history: `(version, entries)` (SPEC SNAP-1).
#[derive(Clone)]
pub struct Snapshot {
    version: i64,
    entries: EntryList,
}

impl Snapshot {
    /// Validates version `>= 0` and unique entry ids (SPEC SNAP-1).
    pub fn new(version: i64, entries: Vec<Entry>) -> Result<Snapshot, SnapshotError> {
        if version < 0 {
            return Err(SnapshotError::NegativeVersion(version));
        }
        check_unique_ids(&entries)?;
        Ok(Snapshot {
            version,
            entries: EntryList::Owned(entries),
        })
    }

    /// Validates version `>= 0` over an already validated shared list (SPEC SNAP-1): O(1), the
    /// entries are not copied.
    pub fn from_shared(version: i64, entries: SharedEntries) -> Result<Snapshot, SnapshotError> {
        if version < 0 {
            return Err(SnapshotError::NegativeVersion(version));
        }
        Ok(Snapshot {
            version,
            entries: EntryList::Shared(entries),
        })
    }

    /// The snapshot at `version` (`>= 0`, SPEC SNAP-1) of the entries `keep` answers `true` for,
    /// in order; `keep` is asked once per entry, in order, with its index. A subset of a list
    /// with unique ids has unique ids, so nothing is checked again, and when every entry is
    /// kept the list itself is (a shared list stays shared: O(n) calls of `keep`, no copy).
    pub fn keeping(
        self,
        version: i64,
        mut keep: impl FnMut(usize, &Entry) -> bool,
    ) -> Result<Snapshot, SnapshotError> {
        if version < 0 {
            return Err(SnapshotError::NegativeVersion(version));
        }
        let flags: Vec<bool> = self
            .entries()
            .iter()
            .enumerate()
            .map(|(i, e)| keep(i, e))
            .collect();
        if flags.iter().all(|&k| k) {
            return Ok(Snapshot { version, ..self });
        }
        let kept = self
            .into_entries()
            .into_iter()
            .zip(flags)
            .filter_map(|(e, k)| k.then_some(e))
            .collect();
        Ok(Snapshot {
            version,
            entries: EntryList::Owned(kept),
        })
    }

    /// The version.
    pub fn version(&self) -> i64 {
        self.version
    }

    /// The entries in order.
    pub fn entries(&self) -> &[Entry] {
        match &self.entries {
            EntryList::Owned(v) => v,
            EntryList::Shared(s) => s.entries(),
        }
    }

    /// Takes the entries (a copy of the entry handles when the list is shared).
    pub fn into_entries(self) -> Vec<Entry> {
        match self.entries {
            EntryList::Owned(v) => v,
            EntryList::Shared(s) => s.entries().to_vec(),
        }
    }
}

impl Default for Snapshot {
    /// Version 0, no entries (a valid snapshot).
    fn default() -> Snapshot {
        Snapshot {
            version: 0,
            entries: EntryList::Owned(Vec::new()),
        }
    }
}

impl PartialEq for Snapshot {
    /// Equal versions and equal entry lists, whether owned or shared.
    fn eq(&self, other: &Snapshot) -> bool {
        self.version == other.version && self.entries() == other.entries()
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("version", &self.version)
            .field("entries", &self.entries())
            .finish()
    }
}

/// Source of snapshots for one provider call (SPEC SNAP-2). Contract: versions never decrease
/// and stay equal while the entries are unchanged.
pub trait SnapshotProvider {
    /// Captures the current history.
    fn capture(&mut self) -> Result<Snapshot, SnapshotError>;
}

impl<P: SnapshotProvider + ?Sized> SnapshotProvider for &mut P {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        (**self).capture()
    }
}

impl<P: SnapshotProvider + ?Sized> SnapshotProvider for Box<P> {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        (**self).capture()
    }
}

/// The default provider: fixed entries, always version 0 (SPEC SNAP-3).
///
/// The ids are validated once, at the first capture, and the list is shared from then on: every
/// capture is O(1) (an assembly captures more than once).
#[derive(Debug, Clone)]
pub struct StaticProvider {
    entries: StaticEntries,
}

/// A [`StaticProvider`]'s list: not captured yet, or validated (SPEC SNAP-1) at the first capture.
#[derive(Debug, Clone)]
enum StaticEntries {
    Unchecked(Vec<Entry>),
    Checked(Result<SharedEntries, SnapshotError>),
}

impl StaticProvider {
    /// A provider over fixed entries. Duplicate ids surface at capture (SPEC SNAP-1).
    pub fn new(entries: Vec<Entry>) -> StaticProvider {
        StaticProvider {
            entries: StaticEntries::Unchecked(entries),
        }
    }
}

impl SnapshotProvider for StaticProvider {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        let shared = match &mut self.entries {
            StaticEntries::Checked(checked) => checked.clone()?,
            StaticEntries::Unchecked(entries) => {
                let checked = SharedEntries::new(std::mem::take(entries));
                self.entries = StaticEntries::Checked(checked.clone());
                checked?
            }
        };
        Snapshot::from_shared(0, shared)
    }
}

#[cfg(feature = "testing")]
/// A provider that plays a schedule: the k-th capture (0-based) returns step `k`, and every
/// capture past the end repeats the last step. Optionally sets a cancellation token when a
/// chosen capture happens (after building that capture's snapshot).
///
/// Each distinct entry list is validated once (SPEC SNAP-1) and shared by every capture that
/// sees it: consecutive steps holding the very same entries (the same allocations, as a replayed
/// trace's repeated snapshots do) share one list, so a long schedule over a large history costs
/// one validation per distinct list, not one per capture.
#[derive(Debug, Clone)]
pub struct ScriptedProvider {
    steps: Vec<(i64, Result<SharedEntries, SnapshotError>)>,
    captures: usize,
    cancel_at: Option<(usize, CancellationToken)>,
}

#[cfg(feature = "testing")]
impl ScriptedProvider {
    /// A provider over `(version, entries)` steps; an empty schedule captures version 0, no entries.
    pub fn new(steps: Vec<(i64, Vec<Entry>)>) -> ScriptedProvider {
        let mut out: Vec<(i64, Result<SharedEntries, SnapshotError>)> =
            Vec::with_capacity(steps.len());
        let mut prev: Option<Vec<Entry>> = None;
        for (version, entries) in steps {
            let repeated = prev.as_ref().is_some_and(|p| {
                p.len() == entries.len() && p.iter().zip(&entries).all(|(a, b)| a.ptr_eq(b))
            });
            let shared = match out.last() {
                Some((_, s)) if repeated => s.clone(),
                _ => SharedEntries::new(entries.clone()),
            };
            out.push((version, shared));
            prev = Some(entries);
        }
        ScriptedProvider {
            steps: out,
            captures: 0,
            cancel_at: None,
        }
    }

    /// A provider over steps whose entry lists are already shared (validated once, SPEC
    /// SNAP-1): the k-th capture returns step `k`, as [`ScriptedProvider::new`] plays it, with
    /// no copy and no validation of a list (a trace checker replays one schedule's lists in
    /// several places; an empty schedule captures version 0, no entries).
    pub fn from_shared(steps: Vec<(i64, SharedEntries)>) -> ScriptedProvider {
        ScriptedProvider {
            steps: steps.into_iter().map(|(v, s)| (v, Ok(s))).collect(),
            captures: 0,
            cancel_at: None,
        }
    }

    /// Sets `token` during the `capture`-th capture (0-based).
    pub fn cancel_at_capture(
        mut self,
        capture: usize,
        token: CancellationToken,
    ) -> ScriptedProvider {
        self.cancel_at = Some((capture, token));
        self
    }

    /// How many captures happened so far.
    pub fn captures(&self) -> usize {
        self.captures
    }
}

#[cfg(feature = "testing")]
impl SnapshotProvider for ScriptedProvider {
    fn capture(&mut self) -> Result<Snapshot, SnapshotError> {
        let k = self.captures;
        self.captures += 1;
        if let Some((at, token)) = &self.cancel_at {
            if *at == k {
                token.cancel();
            }
        }
        match self.steps.get(k).or_else(|| self.steps.last()) {
            // The version is checked first, as `Snapshot::new` does (SPEC SNAP-1).
            Some((version, _)) if *version < 0 => Err(SnapshotError::NegativeVersion(*version)),
            Some((version, shared)) => Snapshot::from_shared(*version, shared.clone()?),
            None => Snapshot::new(0, Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::EntryKind;
    use crate::message::Message;

    fn entry(id: &str) -> Entry {
        Entry::new(
            id,
            EntryKind::ConversationalMessage,
            Message::text("user", id),
        )
        .expect("entry")
    }

    // SPEC SNAP-1: a shared list validates its ids once; snapshots over it check the version
    // only and behave like owned snapshots (accessors, equality, Debug, into_entries).
    #[test]
    fn shared_snapshots_behave_like_owned_ones() {
        let entries = vec![entry("a"), entry("b")];
        assert_eq!(
            SharedEntries::new(vec![entry("a"), entry("a")]),
            Err(SnapshotError::DuplicateEntryId("a".to_owned()))
        );
        let shared = SharedEntries::new(entries.clone()).expect("unique");
        assert_eq!(
            Snapshot::from_shared(-1, shared.clone()),
            Err(SnapshotError::NegativeVersion(-1))
        );
        let s = Snapshot::from_shared(3, shared.clone()).expect("snapshot");
        let owned = Snapshot::new(3, entries.clone()).expect("snapshot");
        assert_eq!(s, owned);
        assert_ne!(s, Snapshot::new(4, entries.clone()).expect("snapshot"));
        assert_eq!(format!("{s:?}"), format!("{owned:?}"));
        assert_eq!(s.version(), 3);
        assert_eq!(s.entries(), &entries[..]);
        assert!(s.entries()[0].ptr_eq(&shared.entries()[0]));
        assert_eq!(s.clone().into_entries(), entries);
        assert_eq!(owned.into_entries(), entries);
        assert_eq!(
            Snapshot::default(),
            Snapshot::new(0, Vec::new()).expect("empty")
        );
    }

    // SPEC SNAP-1, SNAP-3: the static provider validates its ids once and answers the same at
    // every capture: the error for a repeated id (the first repeat named), else version 0 and
    // the very entries, shared from the second capture on.
    #[test]
    fn static_provider_answers_alike_at_every_capture() {
        for ids in [&["a", "a"][..], &["a", "b", "a"], &["b", "a", "c", "c"]] {
            let mut p = StaticProvider::new(ids.iter().map(|i| entry(i)).collect());
            let dup = ids.iter().enumerate().find(|(k, i)| ids[..*k].contains(i));
            let want = SnapshotError::DuplicateEntryId(dup.expect("a repeat").1.to_string());
            for _ in 0..3 {
                assert_eq!(p.capture(), Err(want.clone()));
            }
        }
        for n in [0, 1, 5] {
            let entries: Vec<Entry> = (0..n).map(|k| entry(&format!("e{k}"))).collect();
            let mut p = StaticProvider::new(entries.clone());
            for _ in 0..3 {
                let s = p.capture().expect("unique ids");
                assert_eq!(s, Snapshot::new(0, entries.clone()).expect("snapshot"));
                assert!(s.entries().iter().zip(&entries).all(|(a, b)| a.ptr_eq(b)));
            }
        }
    }

    // SPEC SNAP-1: `keeping` is `Snapshot::new` over the kept entries (every mask of five
    // entries, owned and shared), asks once per entry in order, refuses a negative version.
    #[test]
    fn keeping_is_new_over_the_kept_entries() {
        let entries: Vec<Entry> = (0..5).map(|k| entry(&format!("e{k}"))).collect();
        let shared = SharedEntries::new(entries.clone()).expect("unique");
        for mask in 0u32..32 {
            let kept: Vec<Entry> = (0..5)
                .filter(|k| mask & (1 << k) != 0)
                .map(|k| entries[k].clone())
                .collect();
            let want = Snapshot::new(7, kept).expect("snapshot");
            for s in [
                Snapshot::new(2, entries.clone()).expect("snapshot"),
                Snapshot::from_shared(2, shared.clone()).expect("snapshot"),
            ] {
                let mut asked = Vec::new();
                let got = s.clone().keeping(7, |i, e| {
                    assert!(e.ptr_eq(&entries[i]));
                    asked.push(i);
                    mask & (1 << i) != 0
                });
                assert_eq!(got, Ok(want.clone()), "mask {mask:05b}");
                assert_eq!(asked, vec![0, 1, 2, 3, 4]);
                assert_eq!(
                    s.keeping(-1, |_, _| true),
                    Err(SnapshotError::NegativeVersion(-1))
                );
            }
        }
    }
}
