//! The compact profile of trace format version 2 (`docs/TRACE.md`, "Compact records"): each
//! run's entry table, and resolving a record's table references against it.
//!
//! A run's table is the list of every entry its records defined (`defs`), in order. An entry is
//! built into vocabulary once, when it is defined, and every later reference (a snapshot's
//! `refs`, a proposal's `{"new": i}` or kept index, a result id list) shares that one value: a
//! run of calls over a growing conversation parses and builds each entry once per run, not once
//! per snapshot of every call. That, with index lists instead of 66-byte ids, is what the
//! profile is for (`docs/PERFORMANCE.md`, "Trace checking").
//!
//! Tables are advanced sequentially, in line order ([`Tables::resolve`]), before the per-call
//! checks of a batch run in parallel: a record only ever refers to entries defined by itself or
//! by earlier records of its run. A `runEnd` drops the run's table.
//!
//! ## What a run carries from one call to the next
//!
//! Besides its entries, a run's table keeps what the next call can reuse (unless
//! [`Tables::new`] is asked not to, the checker's reference mode):
//!
//! * which ids more than one table entry has (one flag per reference): a call whose replayed
//!   entries are all table entries named by reference, none of them sharing its id with
//!   another table entry ([`Resolved::carried`]), is measured with the recorded sizes its
//!   references hand over beside its entries (`sizes::CarriedSizes`), with no per-call size
//!   table and no consistency check (`sizes` says why none is needed);
//! * a stamp per table entry that tells whether a snapshot names each entry once
//!   ([`Resolved::unique`]): such a snapshot of distinct-id entries has unique ids by
//!   construction, so the replay shares it without checking SNAP-1 again;
//! * the digest of the run's policy, and the last answers of the run's calls ([`Answers`]):
//!   [`Resolved::key`] is the digest of a call's replay inputs (`answer` says what it covers),
//!   under which the per-call checks find the answer of an earlier call with equal inputs.

use std::collections::hash_map::Entry as MapEntry;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use hybrid_compaction_model::entry::{Entry, EntryId};

use crate::trace::format::{
    CallRecord, Defined, Defs, ReducerAnswer, ReducerStep, RefItem, Shape, TraceEntry,
    TraceProposalItem, TraceResult, TraceSnapshot, TraceVerification,
};
use crate::trace::judge::answer::{Answers, Key};
use crate::trace::read::entries::entry_at;
use crate::trace::read::Malformed;
use crate::wire::input::PolicyInput;
use crate::wire::names::Id;
use crate::wire::output::{AssemblyOutput, VerificationOutput};

/// How a table entry was recorded, for counterexamples (they are built from it).
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// Not kept (no counterexample is written).
    Dropped,
    /// As recorded.
    Kept(Arc<TraceEntry>),
    /// Given back from the built entry and its shape ([`Defined::Built`]).
    Shaped(Shape),
}

/// One table entry: the entry as recorded, and built.
#[derive(Debug, Clone)]
pub(crate) struct Def {
    /// As recorded.
    pub source: Source,
    /// As vocabulary (shared by every reference).
    pub entry: Entry,
    /// The recorded size (for the `recorded` estimator).
    pub size: Option<i32>,
}

/// A snapshot written as `refs`, resolved: its entries and their recorded sizes, in order.
pub(crate) type Sized = (Arc<[Entry]>, Vec<Option<i32>>);

/// A proposal item written as a table index, resolved: the table entry and its recorded size.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    /// The table entry.
    pub entry: Entry,
    /// Its recorded size.
    pub size: Option<i32>,
}

/// A record's table references, resolved (per snapshot and per proposal item, `None` where the
/// record wrote no reference).
#[derive(Debug, Default)]
pub(crate) struct Resolved {
    /// Per snapshot: its entries when it was written as `refs` (taken by
    /// [`crate::trace::judge::replay::prepare`]).
    pub snapshots: Vec<Option<Sized>>,
    /// Per reducer step, per proposal item: the table entry of a `KeepRef` / `NewRef` item
    /// (taken by [`crate::trace::judge::replay::prepare`]). (The recorded entries a counterexample needs
    /// stay in the run's table, where [`Tables::expand`] finds them by the record's own
    /// references.)
    pub items: Vec<Vec<Option<Item>>>,
    /// Whether any reference was resolved (the record used the compact profile).
    pub compact: bool,
    /// Every entry the call replays (its snapshots' entries and its proposals' new entries) is
    /// a table entry named by reference, and none of them shares its id with another table
    /// entry: the recorded sizes handed over with them measure the call.
    pub carried: bool,
    /// Per snapshot: its entries have distinct ids by construction (table entries whose ids no
    /// other table entry has, each named once), so they need no SNAP-1
    /// check (reuse on only).
    pub unique: Vec<bool>,
    /// The digest of the call's replay inputs, and the run's answers it is looked up in
    /// (records whose inputs are all table references, reuse on).
    pub key: Option<([u8; 32], Arc<Answers>)>,
    /// The table the references were resolved against.
    table: Option<u64>,
}

impl Resolved {
    /// The table the record was resolved against (none for a record that used no table).
    pub(crate) fn table(&self) -> Option<u64> {
        self.table
    }
}

impl Def {
    /// The entry as recorded (`None` when that was not kept).
    pub(crate) fn recorded(&self) -> Option<TraceEntry> {
        match &self.source {
            Source::Dropped => None,
            Source::Kept(t) => Some((**t).clone()),
            Source::Shaped(s) => Some(s.recorded(&self.entry, self.size)),
        }
    }
}

impl Item {
    fn of(d: &Def) -> Item {
        Item {
            entry: d.entry.clone(),
            size: d.size,
        }
    }
}

/// A run's entry table and what it carries from one call to the next.
#[derive(Debug)]
struct RunTable {
    /// Identifies this table among the tables of the run's name (a name used again after its
    /// `runEnd` gets a new table).
    id: u64,
    defs: Vec<Def>,
    /// Per table entry: another table entry has its id.
    shares_id: Vec<bool>,
    /// Per table entry: the last reference list that named it (see [`named_once`]).
    marks: Vec<u32>,
    /// The current reference list's mark.
    stamp: u32,
    /// The first table entry of each id.
    first: FxHashMap<EntryId, u32>,
    answers: Arc<Answers>,
    /// The last policy a record of the run named, with its digest.
    policy: Option<(PolicyInput, [u8; 32])>,
}

impl RunTable {
    fn new(id: u64) -> RunTable {
        RunTable {
            id,
            defs: Vec::new(),
            shares_id: Vec::new(),
            marks: Vec::new(),
            stamp: 0,
            first: FxHashMap::default(),
            answers: Arc::default(),
            policy: None,
        }
    }

    /// Room for `n` more entries (a run's first record defines its whole history at once: its
    /// maps are sized once instead of rehashing every id as they grow).
    fn reserve(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        self.defs.reserve(n);
        self.shares_id.reserve(n);
        self.first.reserve(n);
    }

    /// Appends a defined entry.
    fn define(&mut self, def: Def) {
        let at = u32::try_from(self.defs.len()).unwrap_or(u32::MAX);
        let mut shares = false;
        // One lookup (the id's text hashed once); ids are rarely shared.
        match self.first.entry(def.entry.id().clone()) {
            MapEntry::Occupied(first) => {
                shares = true;
                self.shares_id[*first.get() as usize] = true;
            }
            MapEntry::Vacant(slot) => {
                slot.insert(at);
            }
        }
        self.shares_id.push(shares);
        self.defs.push(def);
    }

    /// The digest of `policy`, computed once per distinct policy of the run.
    fn policy_digest(&mut self, policy: &PolicyInput) -> [u8; 32] {
        match &self.policy {
            Some((p, d)) if p == policy => *d,
            _ => {
                let json = serde_json::to_vec(policy).unwrap_or_default();
                let mut k = Key::new();
                k.bytes(&json);
                let d = k.finish();
                self.policy = Some((policy.clone(), d));
                d
            }
        }
    }
}

/// The entry tables of the open runs.
#[derive(Debug)]
pub(crate) struct Tables {
    runs: FxHashMap<String, RunTable>,
    /// Tables of runs that ended in the batch being resolved: its calls' counterexamples are
    /// still expanded from them ([`Tables::expand`]) until [`Tables::batch_done`].
    ended: Vec<RunTable>,
    tables: u64,
    reuse: bool,
}

impl Default for Tables {
    fn default() -> Tables {
        Tables::new(true)
    }
}

/// Whether a record uses any version-2 member.
pub(crate) fn is_compact(rec: &CallRecord) -> bool {
    let indexed = |i: &TraceProposalItem| {
        matches!(
            i,
            TraceProposalItem::KeepRef(_) | TraceProposalItem::NewRef(_)
        )
    };
    rec.defs.is_some()
        || rec.result_refs.is_some()
        || rec.snapshots.iter().any(|s| s.refs.is_some())
        || rec.reducer.iter().any(|r| {
            r.request.is_some()
                || matches!(&r.answer, ReducerAnswer::Propose(items) if items.iter().any(indexed))
        })
}

fn get<'a>(table: &'a [Def], i: u32, path: &dyn Fn() -> String) -> Result<&'a Def, Malformed> {
    table.get(i as usize).ok_or_else(|| {
        Malformed::new(format!(
            "{}: table index {i} is not defined yet (the run's table holds {} entries)",
            path(),
            table.len()
        ))
    })
}

/// Every table entry a reference list names, in order, with its index.
pub(crate) fn defs<'t>(
    table: &'t [Def],
    refs: &[RefItem],
    path: &dyn Fn() -> String,
) -> Result<Vec<(u32, &'t Def)>, Malformed> {
    let mut out = Vec::with_capacity(refs.len());
    for r in refs {
        match r {
            RefItem::Index(i) => out.push((*i, get(table, *i, path)?)),
            RefItem::Range([a, b]) => {
                get(table, *b, path)?;
                out.extend((*a..=*b).zip(&table[*a as usize..=*b as usize]));
            }
            RefItem::Id(id) => {
                return Err(Malformed::new(format!(
                    "{}: expected table indices, got the id {id:?}",
                    path()
                )))
            }
        }
    }
    Ok(out)
}

/// Checks that every reference of a list names a table entry (as [`defs`] does), collecting
/// nothing.
fn check_refs(table: &[Def], refs: &[RefItem], path: &dyn Fn() -> String) -> Result<(), Malformed> {
    for r in refs {
        match r {
            RefItem::Index(i) | RefItem::Range([_, i]) => {
                get(table, *i, path)?;
            }
            RefItem::Id(id) => {
                return Err(Malformed::new(format!(
                    "{}: expected table indices, got the id {id:?}",
                    path()
                )))
            }
        }
    }
    Ok(())
}

/// The ids a reference list stands for (a table entry's id shared, not copied).
fn ids(table: &[Def], refs: &[RefItem], path: &dyn Fn() -> String) -> Result<Vec<Id>, Malformed> {
    let mut out = Vec::with_capacity(refs.len());
    for r in refs {
        match r {
            RefItem::Id(id) => out.push(Id::from(id.as_str())),
            RefItem::Index(i) => out.push(Id::from(get(table, *i, path)?.entry.id())),
            RefItem::Range([a, b]) => {
                get(table, *b, path)?;
                out.extend(
                    table[*a as usize..=*b as usize]
                        .iter()
                        .map(|d| Id::from(d.entry.id())),
                );
            }
        }
    }
    Ok(out)
}

fn verification(table: &[Def], v: TraceVerification) -> Result<VerificationOutput, Malformed> {
    let p = |m: &'static str| move || format!("$.resultRefs.finalVerification.{m}");
    Ok(VerificationOutput {
        outcome: v.outcome,
        rejection_reasons: v.rejection_reasons,
        missing_required_entry_ids: ids(
            table,
            &v.missing_required_entry_ids,
            &p("missingRequiredEntryIds"),
        )?,
        invalid_entry_ids: ids(table, &v.invalid_entry_ids, &p("invalidEntryIds"))?,
        preservation_only_fallback_entry_ids: ids(
            table,
            &v.preservation_only_fallback_entry_ids,
            &p("preservationOnlyFallbackEntryIds"),
        )?,
    })
}

fn result(table: &[Def], r: TraceResult) -> Result<AssemblyOutput, Malformed> {
    Ok(AssemblyOutput {
        outcome: r.outcome,
        final_entry_ids: match r.final_entry_ids {
            Some(f) => Some(ids(table, &f, &|| "$.resultRefs.finalEntryIds".to_owned())?),
            None => None,
        },
        original_estimated_size: r.original_estimated_size,
        final_estimated_size: r.final_estimated_size,
        hard_limit: r.hard_limit,
        attempt_count: r.attempt_count,
        stages: r.stages,
        required_entry_ids: ids(table, &r.required_entry_ids, &|| {
            "$.resultRefs.requiredEntryIds".to_owned()
        })?,
        latest_snapshot_version: r.latest_snapshot_version,
        final_verification: match r.final_verification {
            Some(v) => Some(verification(table, v)?),
            None => None,
        },
    })
}

impl Tables {
    /// No open run; `reuse` false keeps nothing across calls but the entries themselves (every
    /// call is measured by a table of its own and replayed: the checker's reference mode).
    pub(crate) fn new(reuse: bool) -> Tables {
        Tables {
            runs: FxHashMap::default(),
            ended: Vec::new(),
            tables: 0,
            reuse,
        }
    }

    /// Ends a run's table: kept until the batch is checked (its calls' counterexamples are
    /// expanded from it), then dropped by [`Tables::batch_done`].
    pub(crate) fn end(&mut self, run: &str) {
        if let Some(t) = self.runs.remove(run) {
            self.ended.push(t);
        }
    }

    /// `rec` (resolved in this batch against the table [`Resolved::table`] names) as a
    /// self-contained version-1 record for its counterexample; call it before
    /// [`Tables::batch_done`]. `None` when the recorded entries were not kept.
    pub(crate) fn expand(&self, rec: &CallRecord, id: u64) -> Option<CallRecord> {
        let table = match self.runs.get(&rec.run) {
            Some(t) if t.id == id => t,
            _ => self.ended.iter().find(|t| t.id == id)?,
        };
        expand_in(rec, &table.defs)
    }

    /// Forgets the tables of the runs that ended in the batch.
    pub(crate) fn batch_done(&mut self) {
        self.ended.clear();
    }

    /// Appends a record's `defs` to its run's table, each built into vocabulary once (as it
    /// was read, [`Defined::Built`], or now; a recorded entry that is not given back from the
    /// built one is kept when `sources`, for counterexamples), and returns the table. Errors
    /// are unreadable-trace messages (`$.defs[i]: ...`).
    pub(crate) fn define(
        &mut self,
        run: &str,
        defs: Option<Defs>,
        sources: bool,
    ) -> Result<&[Def], Malformed> {
        Ok(&self.define_in(run, defs, sources)?.defs)
    }

    /// [`Tables::define`], returning the run's whole table.
    fn define_in(
        &mut self,
        run: &str,
        defs: Option<Defs>,
        sources: bool,
    ) -> Result<&mut RunTable, Malformed> {
        if !self.runs.contains_key(run) {
            // Identifiers count tables: never reused within a check.
            self.runs.insert(run.to_owned(), RunTable::new(self.tables));
            self.tables += 1;
        }
        let table = self
            .runs
            .get_mut(run)
            .ok_or_else(|| Malformed::new(format!("$.run: the table of run {run:?} is missing")))?;
        let defs = defs.map(|d| d.0).unwrap_or_default();
        table.reserve(defs.len());
        for (i, d) in defs.into_iter().enumerate() {
            table.define(match d {
                Defined::Built { entry, size, shape } => Def {
                    source: Source::Shaped(shape),
                    entry,
                    size,
                },
                Defined::Recorded(t) => Def {
                    entry: entry_at(&t, || format!("$.defs[{i}]"))?,
                    size: t.size,
                    source: if sources {
                        Source::Kept(Arc::new(*t))
                    } else {
                        Source::Dropped
                    },
                },
            });
        }
        Ok(table)
    }

    /// Appends `rec`'s `defs` to its run's table and resolves its references; `resultRefs`
    /// becomes `result`. `compact` is false for a version-1 trace, where version-2 members are
    /// refused; `sources` keeps the recorded entries (for counterexamples). Errors are
    /// unreadable-trace messages (paths relative to the record, `$`).
    pub(crate) fn resolve(
        &mut self,
        rec: &mut CallRecord,
        compact: bool,
        sources: bool,
    ) -> Result<Resolved, Malformed> {
        if !is_compact(rec) {
            return Ok(Resolved::default());
        }
        if !compact {
            return Err(Malformed::new(
                "$: `defs`, `refs`, `request`, table indices and `resultRefs` need the header {\"trace\": 2}",
            ));
        }
        let reuse = self.reuse;
        let table = self.define_in(&rec.run, rec.defs.take(), sources)?;
        // The digest of the replay inputs, while every input is a table reference.
        let key = reuse.then(|| {
            let mut k = Key::new();
            k.bytes(&table.policy_digest(&rec.policy));
            match &rec.cancel {
                Some(c) => k.tag(1).bytes(c.as_bytes()),
                None => k.tag(0),
            };
            k.number(rec.snapshots.len() as u64);
            k
        });
        let mut r = Resolving {
            out: Resolved {
                compact: true,
                carried: reuse,
                table: Some(table.id),
                ..Resolved::default()
            },
            table,
            reuse,
            key,
        };
        for (i, s) in rec.snapshots.iter().enumerate() {
            r.snapshot(i, s)?;
        }
        if let Some(k) = &mut r.key {
            k.number(rec.reducer.len() as u64);
        }
        for (i, st) in rec.reducer.iter().enumerate() {
            r.reducer_step(i, st)?;
        }
        let Resolving {
            table,
            mut out,
            key,
            ..
        } = r;
        out.key = key.map(|k| (k.finish(), Arc::clone(&table.answers)));
        if let Some(refs) = rec.result_refs.take() {
            if rec.result.is_some() {
                return Err(Malformed::new(
                    "$.resultRefs: a record has `result` or `resultRefs`, not both",
                ));
            }
            rec.result = Some(result(&table.defs, refs)?);
        }
        Ok(out)
    }
}

/// One call record being resolved against its run's table: what is resolved so far, and the
/// digest of its replay inputs while every input is a table reference (`None` once one is not,
/// or when nothing is reused).
struct Resolving<'t> {
    table: &'t mut RunTable,
    reuse: bool,
    out: Resolved,
    key: Option<Key>,
}

impl Resolving<'_> {
    /// The `i`th snapshot: its references resolved, and fed to the key.
    fn snapshot(&mut self, i: usize, s: &TraceSnapshot) -> Result<(), Malformed> {
        let Resolving {
            table,
            reuse,
            out,
            key,
        } = self;
        let refs = match &s.refs {
            Some(_) if s.entries.is_some() => {
                return Err(Malformed::new(format!(
                    "$.snapshots[{i}]: a snapshot has `entries` or `refs`, not both"
                )))
            }
            Some(r) => Some(defs(&table.defs, r, &|| format!("$.snapshots[{i}].refs"))?),
            None => None,
        };
        if let Some(k) = key.as_mut() {
            k.number(s.version as u64);
        }
        feed_snapshot(key, s);
        let distinct = refs
            .as_ref()
            .is_some_and(|ds| ds.iter().all(|&(at, _)| !table.shares_id[at as usize]));
        out.carried &= distinct || (refs.is_none() && s.entries.is_none());
        out.unique.push(
            *reuse
                && distinct
                && refs.as_ref().is_some_and(|ds| {
                    named_once(&mut table.marks, &mut table.stamp, table.defs.len(), ds)
                }),
        );
        out.snapshots.push(refs.map(|ds| {
            let es: Arc<[Entry]> = ds.iter().map(|(_, d)| d.entry.clone()).collect();
            (es, ds.iter().map(|(_, d)| d.size).collect())
        }));
        Ok(())
    }

    /// The `i`th reducer step: its request's references checked, its answer fed to the key and
    /// its proposal's references resolved.
    fn reducer_step(&mut self, i: usize, st: &ReducerStep) -> Result<(), Malformed> {
        if let Some(r) = &st.request {
            check_refs(&self.table.defs, r, &|| format!("$.reducer[{i}].request"))?;
        }
        let mut items = Vec::new();
        match &st.answer {
            ReducerAnswer::Nothing => {
                if let Some(k) = &mut self.key {
                    k.tag(4);
                }
            }
            ReducerAnswer::Error(e) => {
                if let Some(k) = &mut self.key {
                    k.tag(5).bytes(e.as_bytes());
                }
            }
            ReducerAnswer::Propose(ps) => {
                if let Some(k) = &mut self.key {
                    k.tag(6).number(ps.len() as u64);
                }
                items.reserve_exact(ps.len());
                for (j, p) in ps.iter().enumerate() {
                    let path = || format!("$.reducer[{i}].answer.propose[{j}]");
                    items.push(self.proposal_item(p, &path)?);
                }
            }
        }
        self.out.items.push(items);
        Ok(())
    }

    /// One proposal item: a table reference resolved (and fed to the key), `None` for an item
    /// written out.
    fn proposal_item(
        &mut self,
        p: &TraceProposalItem,
        path: &dyn Fn() -> String,
    ) -> Result<Option<Item>, Malformed> {
        let defs = &self.table.defs;
        let (item, feed) = match p {
            TraceProposalItem::KeepRef(k) => (Some(Item::of(get(defs, *k, path)?)), Some((7, *k))),
            TraceProposalItem::NewRef(n) => {
                self.out.carried &= self
                    .table
                    .shares_id
                    .get(n.new as usize)
                    .is_some_and(|shares| !shares);
                (Some(Item::of(get(defs, n.new, path)?)), Some((8, n.new)))
            }
            TraceProposalItem::Keep(id) => {
                if let Some(k) = &mut self.key {
                    k.tag(9).bytes(id.as_bytes());
                }
                (None, None)
            }
            TraceProposalItem::New(_) => {
                self.out.carried = false;
                self.key = None;
                (None, None)
            }
        };
        if let (Some(k), Some((tag, at))) = (&mut self.key, feed) {
            k.tag(tag).number(u64::from(at));
        }
        Ok(item)
    }
}

/// Feeds a snapshot's references to the key as written (a range is two numbers, not one per
/// entry): each item is tagged and self-delimiting, so distinct lists write distinct bytes;
/// the same list written another way only misses a reuse. A snapshot written out ends the
/// key.
fn feed_snapshot(key: &mut Option<Key>, s: &TraceSnapshot) {
    match (&s.refs, key.as_mut()) {
        (Some(r), Some(k)) => {
            k.tag(2).number(r.len() as u64);
            for item in r {
                match item {
                    RefItem::Index(at) => k.tag(0).number(u64::from(*at)),
                    RefItem::Range([a, b]) => k.tag(1).number(u64::from(*a)).number(u64::from(*b)),
                    // Refused by `defs` before the key is fed.
                    RefItem::Id(_) => k.tag(2),
                };
            }
        }
        (None, Some(k)) if s.entries.is_none() => {
            k.tag(3);
        }
        _ => *key = None,
    }
}

/// `rec` with its table references written out as version-1 members (`entries`, kept ids,
/// `{"new": entry}`) from `table`, the run's table it was resolved against (which has only grown
/// since: references stay valid), for counterexamples: the shrinker works on self-contained
/// records. `None` when a named entry's recorded form was not kept (the table was resolved
/// without `sources`) or a reference does not resolve.
fn expand_in(rec: &CallRecord, table: &[Def]) -> Option<CallRecord> {
    let recorded = Def::recorded;
    let none = || String::new();
    let mut out = rec.clone();
    for s in &mut out.snapshots {
        if let Some(refs) = s.refs.take() {
            let ds = defs(table, &refs, &none).ok()?;
            s.entries = Some(ds.iter().map(|(_, d)| recorded(d)).collect::<Option<_>>()?);
        }
    }
    for st in &mut out.reducer {
        st.request = None;
        if let ReducerAnswer::Propose(ps) = &mut st.answer {
            for p in ps.iter_mut() {
                match &*p {
                    TraceProposalItem::KeepRef(k) => {
                        let d = table.get(*k as usize)?;
                        *p = TraceProposalItem::Keep(d.entry.id().as_str().to_owned());
                    }
                    TraceProposalItem::NewRef(n) => {
                        let d = table.get(n.new as usize)?;
                        *p =
                            TraceProposalItem::New(Box::new(crate::trace::format::NewTraceEntry {
                                new: recorded(d)?,
                            }));
                    }
                    _ => {}
                }
            }
        }
    }
    Some(out)
}

/// Whether a reference list names every table entry at most once: each entry named is marked
/// with the list's own stamp, so a repeat is seen without hashing anything.
fn named_once(marks: &mut Vec<u32>, stamp: &mut u32, len: usize, ds: &[(u32, &Def)]) -> bool {
    if *stamp == u32::MAX {
        marks.iter_mut().for_each(|m| *m = 0);
        *stamp = 0;
    }
    *stamp += 1;
    marks.resize(len, 0);
    ds.iter().all(|&(at, _)| {
        let m = &mut marks[at as usize];
        let fresh = *m != *stamp;
        *m = *stamp;
        fresh
    })
}
