//! The assembler (SPEC ASM-1 .. ASM-16): the state machine of SPEC ASM-7 / ASM-9 over a
//! per-snapshot index.
//!
//! The control flow is the model's, line for line and phase for phase (the same `Run` methods:
//! `below_trigger`, `eviction`, `reducer_loop` / `preserve_current`, `fallback` /
//! `fallback_candidate`, `finalize` / `recheck` / `check`; same captures, same version checks,
//! the same observable cancellation, same attempt accounting), so the two agree on every stage list and
//! error. What differs is the data work:
//!
//! * `cur` (the latest snapshot) carries lazily built derived data (`Snap`): per-entry sizes
//!   (each entry allocation estimated at most once per call, across restarts, proposals and a
//!   churn snapshot, `SizeCache`, SPEC ASM-15), the positional tool analysis, the
//!   required positions and ids, and an id -> position index. Each is built at most once per
//!   snapshot, and only when first needed. The first full estimation pass also gathers, while
//!   each entry is in cache, its kind, NaN flag, digest flag and (for tool entries) the hashing
//!   pass of the tool analysis, so later passes read compact per-position arrays.
//! * `cur` stays inside the captured `Snapshot` (no copy of its entry list: a snapshot over
//!   shared entries is O(1)); the handles are copied only when the result returns the whole list.
//! * `Verify(cur, cur)` (below the trigger) needs no identity mapping: checks 1-3 reduce to the
//!   NaN flags and check 4 is `cur`'s own analysis (`judge_self`).
//! * Candidates built from `cur` (the evicted list, fallback candidates) are position lists, so
//!   their sizes are sums of cached sizes and their verification needs no id lookup; when they
//!   keep every `ToolExchange` entry, the tool analysis of `cur` is reused. When nothing was
//!   evicted, the evicted list is `cur` itself: the reducer's request lends `cur`'s entries
//!   (no copy of the handles, no reference count touched per entry).
//! * A reducer proposal is mapped onto `cur` positions once (one hash lookup per entry); entries
//!   that are the same allocation as the `cur` entry reuse its cached size.
//! * `req(evicted)` equals `req(cur)`: eviction removes only durable recovered bodies, which are
//!   neither required, nor recency units, nor part of tool groups, nor durable-set sources.
//! * Scratch buffers live in [`Assembler`] and are reused across attempts, restarts and calls,
//!   and so do the buffers of the per-snapshot index (facts, tool analysis and its builder,
//!   required selection, durable set) and of a proposal's `req(p)`: an assembly allocates only
//!   what its result or a reduction request takes away (plus the analysis's call-id map).
//!
//! Per pass the work is O(n) plus O(parts) hash operations, independent of calls per message.

#![allow(
    clippy::cast_possible_truncation,
    reason = "positions are u32 by design: the engine indexes lists of at most u32::MAX entries (module docs)"
)]

use hybrid_compaction_model::assembly::{
    AssemblyError, AssemblyResult, Outcome, Reducer, ReductionRequest, Stage,
};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::snapshot::{Snapshot, SnapshotProvider};

use std::ops::ControlFlow;

use super::estimate::SizeCache;

use super::exchange::{analyze_kinds_into, kinds_of, Analysis, AnalysisBuilder, BuilderBuffers};
use super::hash::FxHashMap;
use super::preserve::{required_ids_of, required_into, Durability, Required};
use super::verify::{
    clear_inverse, fill_inverse, judge, judge_self, map_proposal, same_tool_sequence, Findings,
    Original,
};
use super::NONE;

/// Eviction (SPEC ASM-8): drop every recoverable segment whose digest is durable.
pub fn evict(entries: &[Entry]) -> Vec<Entry> {
    evicted_positions(
        entries,
        &kinds_of(entries),
        None,
        &mut Durability::default(),
    )
    .into_iter()
    .map(|p| entries[p as usize].clone())
    .collect()
}

/// Positions kept by eviction (SPEC ASM-8), in order, given the kinds of `entries`;
/// `durability` is scratch.
fn evicted_positions(
    entries: &[Entry],
    kinds: &[EntryKind],
    refs: Option<&[bool]>,
    durability: &mut Durability,
) -> Vec<u32> {
    durability.judge(entries, kinds, refs);
    let mut gone = durability
        .bodies()
        .filter(|&(_, durable)| durable)
        .map(|(i, _)| i)
        .peekable();
    let mut kept = Vec::with_capacity(entries.len());
    for i in 0..entries.len() as u32 {
        if gone.next_if_eq(&i).is_none() {
            kept.push(i);
        }
    }
    kept
}

/// Assembles bounded context for one provider call (SPEC ASM-7).
pub fn assemble(
    policy: &Policy,
    provider: &mut dyn SnapshotProvider,
    reducer: &mut dyn Reducer,
    cancel: &CancellationToken,
) -> Result<AssemblyResult, AssemblyError> {
    Assembler::new().assemble(policy, provider, reducer, cancel)
}

/// A reusable assembler that keeps its working buffers across calls.
#[derive(Debug, Default)]
pub struct Assembler {
    sizes: SizeCache,
    /// Scratch: original position -> proposal index (all `NONE` between uses).
    inv: Vec<u32>,
    /// Scratch: proposal index -> original position.
    pos: Vec<u32>,
    /// The index buffers of `cur`, kept between snapshots and calls (a snapshot's index is
    /// rebuilt in them, so indexing allocates only what a result or request takes away).
    spare: Buffers,
    /// Buffers for `req(p)` of a proposal (its kinds, analysis and selection).
    proposal: Buffers,
}

/// Reusable buffers of one list's index: facts, tool analysis (and its builder), required
/// selection, durable set. Emptied and refilled per list; never read across lists.
#[derive(Debug, Default)]
struct Buffers {
    facts: Facts,
    analysis: Analysis,
    builder: BuilderBuffers,
    required: Required,
    durable: Durability,
}

impl Assembler {
    /// A fresh assembler with empty buffers.
    pub fn new() -> Assembler {
        Assembler::default()
    }

    /// Assembles bounded context for one provider call (SPEC ASM-7).
    pub fn assemble(
        &mut self,
        policy: &Policy,
        provider: &mut dyn SnapshotProvider,
        reducer: &mut dyn Reducer,
        cancel: &CancellationToken,
    ) -> Result<AssemblyResult, AssemblyError> {
        // check cancellation
        cancel.check()?;
        // s0 = capture(); anchor = size(s0.entries): `size` is `Evaluate`, which observes a
        // cancellation raised during the capture (SPEC ASM-16).
        let mut stages = Vec::with_capacity(8);
        stages.push(Stage::SnapshotCaptured);
        let s0 = provider.capture()?;
        cancel.check()?;
        let latest_version = s0.version();
        let snap = Snap::new(s0, std::mem::take(&mut self.spare));
        self.sizes.start_call(snap.entries.len());
        let mut run = Run {
            policy,
            provider,
            reducer,
            cancel,
            sizes: &mut self.sizes,
            inv: &mut self.inv,
            pos: &mut self.pos,
            proposal: &mut self.proposal,
            snap,
            anchor: 0,
            latest_version,
            attempts: 0,
            stages,
        };
        let result = run.cur_size().and_then(|anchor| {
            run.anchor = anchor;
            run.run()
        });
        self.spare = run.snap.take_buffers();
        self.sizes.end_call();
        result
    }
}

/// The entries of `cur`, kept inside the captured snapshot: a snapshot over a shared list
/// ([`hybrid_compaction_model::snapshot::SharedEntries`]) is never copied; the entry handles
/// are copied only if the result hands the whole list back.
#[derive(Default)]
struct Cur(Snapshot);

impl std::ops::Deref for Cur {
    type Target = [Entry];

    #[inline]
    fn deref(&self) -> &[Entry] {
        self.0.entries()
    }
}

/// Per-position facts of `cur`, gathered in one pass (fused with the first full estimation), so
/// later passes read these compact arrays instead of the entries.
#[derive(Debug, Default)]
struct Facts {
    /// The entry kinds.
    kinds: Vec<EntryKind>,
    /// The message holds a NaN (it differs from itself, SPEC VER-2).
    nan: Vec<bool>,
    /// The entry carries artifact-reference digests (SPEC ENT-5.2, ENT-5.3).
    refs: Vec<bool>,
}

impl Facts {
    /// Empties the arrays, with room for `n` entries.
    fn clear_for(&mut self, n: usize) {
        self.kinds.clear();
        self.nan.clear();
        self.refs.clear();
        self.kinds.reserve(n);
        self.nan.reserve(n);
        self.refs.reserve(n);
    }

    /// Appends the facts of the next entry and returns its kind.
    #[inline]
    fn push(&mut self, e: &Entry) -> EntryKind {
        let kind = e.kind();
        self.kinds.push(kind);
        self.nan.push(e.holds_nan());
        self.refs.push(!e.artifact_reference_digests().is_empty());
        kind
    }
}

/// The latest snapshot `cur` and its lazily derived data, built in reused [`Buffers`]: the
/// flags say which parts of the buffers describe `cur` (the rest is stale content of an earlier
/// list, never read).
struct Snap {
    entries: Cur,
    buf: Buffers,
    /// `buf.facts` holds every entry of `cur`.
    gathered: bool,
    total: Option<i32>,
    /// `buf.analysis` is the tool analysis of `cur`.
    analysed: bool,
    /// `buf.required` is the required selection of `cur` (and `required_ids` its ids).
    selected: bool,
    required_ids: Option<Vec<EntryId>>,
    index: Option<FxHashMap<EntryId, u32>>,
}

impl Snap {
    fn new(snapshot: Snapshot, buf: Buffers) -> Snap {
        Snap {
            entries: Cur(snapshot),
            buf,
            gathered: false,
            total: None,
            analysed: false,
            selected: false,
            required_ids: None,
            index: None,
        }
    }

    /// Hands the buffers back for the next list (this snapshot's derived data is gone).
    fn take_buffers(&mut self) -> Buffers {
        self.gathered = false;
        self.analysed = false;
        self.selected = false;
        std::mem::take(&mut self.buf)
    }

    /// Gathers the per-position facts (when the full estimation pass did not already).
    fn ensure_facts(&mut self) {
        if self.gathered {
            return;
        }
        self.buf.facts.clear_for(self.entries.len());
        for e in self.entries.iter() {
            self.buf.facts.push(e);
        }
        self.gathered = true;
    }

    /// Builds the analysis and required selection of `cur` once (snapshots have unique ids).
    fn ensure_required(&mut self, retention: i32) {
        if self.selected {
            return;
        }
        self.ensure_facts();
        let buf = &mut self.buf;
        if !self.analysed {
            analyze_kinds_into(
                &self.entries,
                &buf.facts.kinds,
                &mut buf.builder,
                &mut buf.analysis,
            );
            self.analysed = true;
        }
        required_into(
            &self.entries,
            &buf.facts.kinds,
            Some(&buf.facts.refs),
            &buf.analysis,
            retention,
            &mut buf.required,
        );
        self.required_ids = Some(buf.required.ids(&self.entries));
        self.selected = true;
    }

    /// The required selection of `cur` (after [`Snap::ensure_required`]).
    fn required(&self) -> &Required {
        debug_assert!(self.selected, "ensure_required ran");
        &self.buf.required
    }

    /// The tool analysis of `cur` (after [`Snap::ensure_required`]).
    fn analysis(&self) -> &Analysis {
        debug_assert!(self.analysed, "ensure_required ran");
        &self.buf.analysis
    }

    fn original(&self) -> Original<'_> {
        Original {
            entries: &self.entries,
            kinds: &self.buf.facts.kinds,
            nan: Some(&self.buf.facts.nan),
            required: self.required(),
            analysis: self.analysis(),
        }
    }
}

/// A candidate built from `cur` (the evicted list, a fallback candidate): entries, their `cur`
/// positions, and its size. The evicted list of a `cur` nothing was evicted from is `cur`
/// itself ([`Candidate::whole`]): its entries are read from `cur`, not copied (a candidate
/// never outlives the `cur` it was built from: a restart drops it).
struct Candidate {
    /// The entries; `None` for all of `cur` ([`Candidate::whole`]).
    entries: Option<Vec<Entry>>,
    pos: Vec<u32>,
    size: i32,
}

impl Candidate {
    fn from_positions(cur: &[Entry], pos: Vec<u32>, size: i32) -> Candidate {
        Candidate {
            entries: Some(pos.iter().map(|&p| cur[p as usize].clone()).collect()),
            pos,
            size,
        }
    }

    /// All of `cur` (`pos` is every position), its entries not copied.
    fn whole(pos: Vec<u32>, size: i32) -> Candidate {
        Candidate {
            entries: None,
            pos,
            size,
        }
    }

    /// The entries, given the `cur` the candidate was built from.
    fn entries<'a>(&'a self, cur: &'a [Entry]) -> &'a [Entry] {
        debug_assert!(self.entries.is_some() || cur.len() == self.pos.len());
        self.entries.as_deref().unwrap_or(cur)
    }

    /// The entries, owned (a copy of `cur`'s handles for all of `cur`).
    fn into_entries(self, cur: &[Entry]) -> Vec<Entry> {
        self.entries.unwrap_or_else(|| cur.to_vec())
    }
}

/// An accepted reducer proposal kept as the working list (SPEC ASM-7 `work = p`). Accepted means
/// every retained entry kept its kind, so kinds can be read from `cur`.
struct Proposal {
    entries: Vec<Entry>,
    /// Per entry: its `cur` position, or `NONE` for a new entry.
    positions: Vec<u32>,
    /// Its `ToolExchange` entries are exactly `cur`'s (same allocations, same order), so its
    /// tool analysis is `cur`'s, translated to its positions.
    same_tools: bool,
}

/// The working list of the reducer loop: the evicted list or an accepted proposal.
enum Work {
    Evicted(Candidate),
    Proposal(Proposal),
}

impl Work {
    /// The entries, given `cur`.
    fn entries<'a>(&'a self, cur: &'a [Entry]) -> &'a [Entry] {
        match self {
            Work::Evicted(c) => c.entries(cur),
            Work::Proposal(p) => &p.entries,
        }
    }

    /// The entries, owned, given `cur`.
    fn into_entries(self, cur: &[Entry]) -> Vec<Entry> {
        match self {
            Work::Evicted(c) => c.into_entries(cur),
            Work::Proposal(p) => p.entries,
        }
    }
}

/// A reducer proposal judged against `cur`: `Verify(cur, p)` then `size(p)` (SPEC ASM-7).
struct Judged {
    verification: Findings,
    size: i32,
    /// As [`Proposal::same_tools`].
    same_tools: bool,
}

/// The result of the shared version check (SPEC ASM-5).
enum Check {
    /// The observed version equals the latest consumed one.
    Stable,
    /// A version change with the budget exhausted: churn termination for this snapshot.
    Churn(Snapshot),
    /// A version change consumed as a restart; `cur` and `latest_version` were updated.
    Restarted,
}

/// How a finalization or restart site ended the current pass (SPEC ASM-5, ASM-10).
#[allow(
    clippy::large_enum_variant,
    reason = "one value per pass, moved a few times: boxing would only add an allocation"
)]
enum Exit {
    /// The run is over: a success or a termination.
    Done(AssemblyResult),
    /// A consumed restart: resume at the top of the site's loop (OUTER, or the fallback's).
    Restart,
}

/// The state of one assembly run (SPEC ASM-7), borrowing the [`Assembler`]'s buffers.
struct Run<'a> {
    policy: &'a Policy,
    provider: &'a mut dyn SnapshotProvider,
    reducer: &'a mut dyn Reducer,
    cancel: &'a CancellationToken,
    sizes: &'a mut SizeCache,
    inv: &'a mut Vec<u32>,
    pos: &'a mut Vec<u32>,
    /// Buffers for `req(p)` of proposals.
    proposal: &'a mut Buffers,
    snap: Snap,
    /// `OriginalEstimatedSize` for the whole run: the size of the first snapshot.
    anchor: i32,
    latest_version: i64,
    attempts: i32,
    stages: Vec<Stage>,
}

/// The procedure of SPEC ASM-7 / ASM-9, one method per phase.
impl Run<'_> {
    /// SPEC ASM-7 after the initial capture: the OUTER loop over the phases.
    fn run(&mut self) -> Result<AssemblyResult, AssemblyError> {
        loop {
            self.check_cancellation()?;
            let e = self.cur_size()?;
            // SPEC POL-4: `>=` triggers.
            let exit = if e < self.policy.trigger_threshold() {
                self.below_trigger(e)?
            } else {
                match self.eviction()? {
                    ControlFlow::Break(exit) => exit,
                    ControlFlow::Continue(evicted) => match self.reducer_loop(evicted)? {
                        Some(exit) => exit,
                        None => return self.fallback(),
                    },
                }
            };
            match exit {
                Exit::Done(result) => return Ok(result),
                Exit::Restart => continue,
            }
        }
    }

    /// Below the trigger (SPEC ASM-7): no eviction, no reducer. `Verify(cur, cur)` rejected is
    /// `Irreducible` (SPEC ASM-12 (a)); accepted finalizes `WithinLimit`, a restart consuming
    /// an attempt (SPEC ASM-10).
    fn below_trigger(&mut self, e: i32) -> Result<Exit, AssemblyError> {
        let v = self.verify_self();
        if !v.is_accepted() {
            return Ok(Exit::Done(self.irreducible(e)));
        }
        self.finalize(true, |run| {
            // `cur` is not needed any more: hand its entries over (no copy); the required ids
            // are taken first, as `success` reads them from `cur`.
            let required = run.take_required_ids();
            let entries = std::mem::take(&mut run.snap.entries).0.into_entries();
            run.finish(Outcome::WithinLimit, entries, e, v, required)
        })
    }

    /// Eviction and the margin-restored rule (SPEC ASM-8): if something was evicted and the
    /// evicted list lands strictly below the trigger and verifies, it finalizes `Reduced`, a
    /// restart consuming an attempt (SPEC ASM-10). Otherwise it goes on to the reducer.
    fn eviction(&mut self) -> Result<ControlFlow<Exit, Candidate>, AssemblyError> {
        self.snap.ensure_facts();
        let snap = &mut self.snap;
        let kept = evicted_positions(
            &snap.entries,
            &snap.buf.facts.kinds,
            Some(&snap.buf.facts.refs),
            &mut snap.buf.durable,
        );
        let evicted_any = kept.len() != self.snap.entries.len();
        let es = self.positions_size(&kept)?;
        let ev = if evicted_any {
            Candidate::from_positions(&self.snap.entries, kept, es)
        } else {
            Candidate::whole(kept, es)
        };
        if evicted_any {
            self.stages.push(Stage::RecoverableBodyEviction);
        }
        if evicted_any && es < self.policy.trigger_threshold() {
            let v = self.verify_candidate(&ev);
            if v.is_accepted() {
                let exit = self.finalize(true, |run| {
                    let entries = ev.into_entries(&run.snap.entries);
                    run.success(Outcome::Reduced, entries, es, v)
                })?;
                return Ok(ControlFlow::Break(exit));
            }
        }
        Ok(ControlFlow::Continue(ev))
    }

    /// The bounded reducer loop (SPEC ASM-7, ASM-11) from the evicted list. `None`: on to the
    /// fallback (SPEC ASM-9), any remaining attempts unused.
    fn reducer_loop(&mut self, evicted: Candidate) -> Result<Option<Exit>, AssemblyError> {
        let mut ws = evicted.size;
        let mut work = Work::Evicted(evicted);
        while self.attempts < self.policy.maximum_compaction_attempts() {
            self.attempts += 1;
            self.check_cancellation()?;
            self.stages.push(Stage::ReducerAttempt);
            let p = self.reduce(&work)?;
            self.check_cancellation()?;
            // SPEC ASM-10: post-reducer recheck, a restart does not consume.
            if let Some(exit) = self.recheck(false)? {
                return Ok(Some(exit));
            }
            self.check_cancellation()?;
            let judged = self.verify_proposal(&p)?;
            if !judged.verification.is_accepted() || judged.size >= ws {
                return self.preserve_current(work, ws);
            }
            if judged.size <= self.policy.hard_limit() {
                // SPEC ASM-10: reduced-proposal success, a restart does not consume.
                let Judged {
                    verification, size, ..
                } = judged;
                let exit = self.finalize(false, |run| {
                    run.success(Outcome::Reduced, p, size, verification)
                })?;
                return Ok(Some(exit));
            }
            // Valid, strictly smaller, still over the hard limit: try again.
            ws = judged.size;
            work = Work::Proposal(Proposal {
                entries: p,
                positions: self.pos.clone(),
                same_tools: judged.same_tools,
            });
        }
        Ok(None)
    }

    /// One reducer call (SPEC ASM-4): the request carries `req(work)`; reducer errors propagate
    /// unchanged, and returning nothing is an error.
    fn reduce(&mut self, work: &Work) -> Result<Vec<Entry>, AssemblyError> {
        let owned;
        let required: &[EntryId] = match work {
            // req(evicted) is req(cur) (see the module docs): lent, not copied.
            Work::Evicted(_) => {
                self.snap.ensure_required(self.retention());
                self.snap.required_ids.as_deref().unwrap_or(&[])
            }
            Work::Proposal(p) => {
                owned = self.proposal_required_ids(p);
                &owned
            }
        };
        let request = ReductionRequest {
            entries: work.entries(&self.snap.entries),
            required_entry_ids: required,
            policy: self.policy,
            attempt_number: self.attempts,
        };
        self.reducer
            .reduce(&request)?
            .ok_or(AssemblyError::ReducerReturnedNothing)
    }

    /// After an invalid or non-progressing proposal (SPEC ASM-7): the working list itself, if
    /// it fits (`ws <= H`) and `Verify(cur, work)` accepts, a restart not consuming (SPEC
    /// ASM-10). `None`: on to the fallback.
    fn preserve_current(&mut self, work: Work, ws: i32) -> Result<Option<Exit>, AssemblyError> {
        if ws > self.policy.hard_limit() {
            return Ok(None);
        }
        let pv = match &work {
            Work::Evicted(c) => self.verify_candidate(c),
            Work::Proposal(p) => self.verify_proposal(&p.entries)?.verification,
        };
        if !pv.is_accepted() {
            return Ok(None);
        }
        let exit = self.finalize(false, |run| {
            let entries = work.into_entries(&run.snap.entries);
            let outcome = if entries.len() == run.snap.entries.len() {
                Outcome::WithinLimit
            } else {
                Outcome::Reduced
            };
            run.success(outcome, entries, ws, pv)
        })?;
        Ok(Some(exit))
    }

    /// The deterministic fallback (SPEC ASM-9): the extended candidate (required plus all
    /// optional context, all-or-nothing, DEP-6) when `cur` has optional context, then the
    /// required-only one, then `Irreducible` with the required-only size (SPEC ASM-12 (b)).
    /// Its restarts loop inside it.
    fn fallback(&mut self) -> Result<AssemblyResult, AssemblyError> {
        self.stages.push(Stage::DeterministicFallback);
        loop {
            self.check_cancellation()?;
            self.snap.ensure_required(self.retention());
            if self
                .snap
                .buf
                .facts
                .kinds
                .contains(&EntryKind::OptionalContext)
            {
                let pos = self.extended_positions();
                match self.fallback_candidate(pos)? {
                    ControlFlow::Break(Exit::Done(result)) => return Ok(result),
                    ControlFlow::Break(Exit::Restart) => continue,
                    ControlFlow::Continue(_) => {}
                }
            }
            let pos = self.snap.required().positions.clone();
            let cs = match self.fallback_candidate(pos)? {
                ControlFlow::Break(Exit::Done(result)) => return Ok(result),
                ControlFlow::Break(Exit::Restart) => continue,
                ControlFlow::Continue(cs) => cs,
            };
            self.check_cancellation()?;
            return Ok(self.irreducible(cs));
        }
    }

    /// The positions of `r ∪ {OptionalContext entries of cur}` (SPEC ASM-9), in list order.
    fn extended_positions(&self) -> Vec<u32> {
        let flags = &self.snap.required().flags;
        self.snap
            .buf
            .facts
            .kinds
            .iter()
            .enumerate()
            .filter(|(i, k)| flags[*i] || **k == EntryKind::OptionalContext)
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// One fallback candidate (SPEC ASM-9), the entries of `cur` at `pos`: if `cs = size(c)`
    /// fits and `Verify(cur, c)` accepts, the finalization site, a restart consuming an attempt
    /// and resuming inside the fallback (SPEC ASM-10). `Continue(cs)`: not taken.
    fn fallback_candidate(
        &mut self,
        pos: Vec<u32>,
    ) -> Result<ControlFlow<Exit, i32>, AssemblyError> {
        let cs = self.positions_size(&pos)?;
        if cs > self.policy.hard_limit() {
            return Ok(ControlFlow::Continue(cs));
        }
        let c = Candidate::from_positions(&self.snap.entries, pos, cs);
        let v = self.verify_candidate(&c);
        if !v.is_accepted() {
            return Ok(ControlFlow::Continue(cs));
        }
        let exit = self.finalize(true, |run| {
            let entries = c.into_entries(&run.snap.entries);
            run.success(Outcome::PreservationFallback, entries, cs, v)
        })?;
        Ok(ControlFlow::Break(exit))
    }

    /// A finalization site (SPEC ASM-5, ASM-10): `s = capture()` and the version check; when
    /// stable, the success `stable` builds.
    fn finalize(
        &mut self,
        consumes: bool,
        stable: impl FnOnce(&mut Self) -> AssemblyResult,
    ) -> Result<Exit, AssemblyError> {
        Ok(match self.recheck(consumes)? {
            Some(exit) => exit,
            None => Exit::Done(stable(self)),
        })
    }

    /// `s = capture(); check(s, consumes)` (SPEC ASM-5): `None` when stable, else churn
    /// termination (SPEC ASM-6) or a consumed restart.
    fn recheck(&mut self, consumes: bool) -> Result<Option<Exit>, AssemblyError> {
        let s = self.capture()?;
        Ok(match self.check(s, consumes) {
            Check::Stable => None,
            Check::Restarted => Some(Exit::Restart),
            Check::Churn(s) => Some(Exit::Done(self.churn(s)?)),
        })
    }

    /// `check cancellation` (SPEC ASM-16).
    fn check_cancellation(&self) -> Result<(), AssemblyError> {
        self.cancel.check()
    }

    fn retention(&self) -> i32 {
        self.policy.recent_message_retention_count()
    }

    /// `size(cur)`, estimating each entry at most once per call.
    fn cur_size(&mut self) -> Result<i32, AssemblyError> {
        if let Some(t) = self.snap.total {
            return Ok(t);
        }
        let t = if self.snap.gathered {
            let n = self.snap.entries.len();
            self.sizes
                .sum_positions(&self.snap.entries, 0..n, self.policy.estimator())?
        } else {
            self.first_pass()?
        };
        self.snap.total = Some(t);
        Ok(t)
    }

    /// The first full pass over a snapshot: `size(cur)`, estimating each entry and, while it is
    /// in cache, gathering its facts and interning the call ids of tool entries (the hashing
    /// pass of the tool analysis).
    fn first_pass(&mut self) -> Result<i32, AssemblyError> {
        let snap = &mut self.snap;
        let entries: &[Entry] = &snap.entries;
        let buf = &mut snap.buf;
        buf.facts.clear_for(entries.len());
        let mut tools = (!snap.analysed)
            .then(|| AnalysisBuilder::reusing(entries.len() / 4, std::mem::take(&mut buf.builder)));
        let mut total: i32 = 0;
        // No position of a new snapshot is estimated before its first pass; on the call's first
        // snapshot nothing else is known either, so each entry is estimated directly.
        let fresh = self.sizes.knows_no_other();
        let estimator = self.policy.estimator();
        for (i, e) in entries.iter().enumerate() {
            let s = if fresh {
                self.sizes.estimate_new(i, e, estimator)?
            } else {
                self.sizes.get(entries, i, estimator)?
            };
            total = total.checked_add(s).ok_or(AssemblyError::SizeOverflow)?;
            if buf.facts.push(e) == EntryKind::ToolExchange {
                if let Some(b) = tools.as_mut() {
                    b.push(i as u32, e);
                }
            }
        }
        if let Some(b) = tools {
            buf.builder = b.finish_into(&mut buf.analysis);
            snap.analysed = true;
        }
        snap.gathered = true;
        Ok(total)
    }

    /// `size(c)` for a candidate of `cur`.
    fn positions_size(&mut self, pos: &[u32]) -> Result<i32, AssemblyError> {
        self.sizes.sum_positions(
            &self.snap.entries,
            pos.iter().map(|&p| p as usize),
            self.policy.estimator(),
        )
    }

    /// `req(cur)` when `cur` is not needed any more (the run ends): moved, not copied.
    fn take_required_ids(&mut self) -> Vec<EntryId> {
        self.snap.ensure_required(self.retention());
        self.snap.required_ids.take().unwrap_or_default()
    }

    /// `req(p)` for an accepted proposal: kinds of retained entries read from `cur`, and when
    /// its tool entries are `cur`'s, `cur`'s tool analysis translated instead of a new one
    /// (in the proposal buffers).
    fn proposal_required_ids(&mut self, p: &Proposal) -> Vec<EntryId> {
        let cur_kinds = &self.snap.buf.facts.kinds;
        let buf = &mut *self.proposal;
        let kinds = &mut buf.facts.kinds;
        kinds.clear();
        kinds.extend(p.entries.iter().zip(&p.positions).map(|(e, &q)| {
            if q == NONE {
                e.kind()
            } else {
                cur_kinds[q as usize]
            }
        }));
        if p.same_tools {
            // `cur`'s tool analysis in the proposal's positions (it holds exactly `cur`'s tool
            // entries, in order).
            fill_inverse(self.inv, self.snap.entries.len(), &p.positions);
            self.snap
                .analysis()
                .translated_into(self.inv, &mut buf.analysis);
            clear_inverse(self.inv, &p.positions);
        } else {
            analyze_kinds_into(&p.entries, kinds, &mut buf.builder, &mut buf.analysis);
        }
        required_into(
            &p.entries,
            kinds,
            None,
            &buf.analysis,
            self.policy.recent_message_retention_count(),
            &mut buf.required,
        );
        buf.required.ids(&p.entries)
    }

    /// `Verify(cur, c)` for a candidate of `cur` (no duplicates possible).
    fn verify_candidate(&mut self, c: &Candidate) -> Findings {
        self.snap.ensure_required(self.retention());
        let orig = self.snap.original();
        let n_tools = c
            .pos
            .iter()
            .filter(|&&p| orig.kinds[p as usize] == EntryKind::ToolExchange)
            .count();
        let reuse = n_tools == orig.analysis.tool_positions.len();
        judge(&orig, c.entries(orig.entries), &c.pos, reuse, self.inv)
    }

    /// `Verify(cur, cur)`.
    fn verify_self(&mut self) -> Findings {
        self.snap.ensure_required(self.retention());
        judge_self(&self.snap.original())
    }

    /// `Verify(cur, p)` then `size(p)` for a reducer proposal, errors in the model's order;
    /// leaves `p`'s `cur` positions in `self.pos`.
    fn verify_proposal(&mut self, p: &[Entry]) -> Result<Judged, AssemblyError> {
        self.snap.ensure_required(self.retention());
        map_proposal(
            &self.snap.entries,
            &mut self.snap.index,
            p,
            self.inv,
            self.pos,
        )?;
        let orig = self.snap.original();
        let same_tools = same_tool_sequence(&orig, p, self.pos);
        let verification = judge(&orig, p, self.pos, same_tools, self.inv);
        let size =
            self.sizes
                .sum_proposal(&self.snap.entries, p, self.pos, self.policy.estimator())?;
        Ok(Judged {
            verification,
            size,
            same_tools,
        })
    }

    /// `capture()` always appends `SnapshotCaptured` (SPEC ASM-2, ASM-14). A cancellation raised
    /// during the capture is observed as soon as it returns: in the SPEC, every capture is
    /// followed by a computation that checks the token (`size`, `req` or `Verify` of the result
    /// being built, or an explicit check) before anything else can fail, and the engine's own
    /// computations read no host code that could cancel (SPEC ASM-15, ASM-16).
    fn capture(&mut self) -> Result<Snapshot, AssemblyError> {
        self.stages.push(Stage::SnapshotCaptured);
        let s = self.provider.capture()?;
        self.check_cancellation()?;
        Ok(s)
    }

    /// The shared version check (SPEC ASM-5): stable, churn (budget exhausted: nothing mutated,
    /// no stage), or a consumed restart that adopts the new snapshot (its derived data rebuilt
    /// lazily) and, at the sites of SPEC ASM-10 that say so, consumes an attempt.
    fn check(&mut self, s: Snapshot, consumes: bool) -> Check {
        if s.version() == self.latest_version {
            return Check::Stable;
        }
        if self.attempts >= self.policy.maximum_compaction_attempts() {
            return Check::Churn(s);
        }
        self.stages.push(Stage::RestartedAfterMutation);
        self.latest_version = s.version();
        self.sizes.restart(&self.snap.entries, s.entries().len());
        let buf = self.snap.take_buffers();
        self.snap = Snap::new(s, buf);
        if consumes {
            self.attempts += 1;
        }
        Check::Restarted
    }

    /// Churn termination for the observed snapshot (SPEC ASM-6): `req` of that snapshot and
    /// its version (SPEC ASM-13).
    fn churn(&mut self, s: Snapshot) -> Result<AssemblyResult, AssemblyError> {
        let final_estimated_size =
            self.sizes
                .sum_other(&self.snap.entries, s.entries(), self.policy.estimator())?;
        let required = required_ids_of(s.entries(), self.retention());
        Ok(AssemblyResult {
            latest_snapshot_version: s.version(),
            ..self.ended(
                Outcome::ConcurrentMutationLimit,
                final_estimated_size,
                required,
            )
        })
    }

    /// A success whose required ids are `req(cur)` (SPEC ASM-13).
    fn success(
        &mut self,
        outcome: Outcome,
        entries: Vec<Entry>,
        final_estimated_size: i32,
        verification: Findings,
    ) -> AssemblyResult {
        let required_entry_ids = self.take_required_ids();
        self.finish(
            outcome,
            entries,
            final_estimated_size,
            verification,
            required_entry_ids,
        )
    }

    /// A success (SPEC ASM-3): it fits the hard limit and its verification accepted.
    fn finish(
        &mut self,
        outcome: Outcome,
        entries: Vec<Entry>,
        final_estimated_size: i32,
        verification: Findings,
        required_entry_ids: Vec<EntryId>,
    ) -> AssemblyResult {
        // The verdict judged `cur`, whose required ids these are.
        let verification = verification.finish(&required_entry_ids);
        debug_assert!(
            final_estimated_size <= self.policy.hard_limit(),
            "SPEC ASM-3: a success fits the hard limit"
        );
        debug_assert!(
            verification.is_accepted(),
            "SPEC ASM-3: a success is verified"
        );
        AssemblyResult {
            final_entries: Some(entries),
            final_verification: Some(verification),
            ..self.ended(outcome, final_estimated_size, required_entry_ids)
        }
    }

    /// `Irreducible` judging `cur` (SPEC ASM-12, ASM-13).
    fn irreducible(&mut self, final_estimated_size: i32) -> AssemblyResult {
        let required_entry_ids = self.take_required_ids();
        self.ended(
            Outcome::Irreducible,
            final_estimated_size,
            required_entry_ids,
        )
    }

    /// The fields every result shares (SPEC ASM-3), with the latest consumed version and
    /// neither entries nor verification (a termination's).
    fn ended(
        &mut self,
        outcome: Outcome,
        final_estimated_size: i32,
        required_entry_ids: Vec<EntryId>,
    ) -> AssemblyResult {
        debug_assert!(
            self.attempts <= self.policy.maximum_compaction_attempts(),
            "SPEC ASM-11: AttemptCount <= M"
        );
        AssemblyResult {
            outcome,
            final_entries: None,
            original_estimated_size: self.anchor,
            final_estimated_size,
            hard_limit: self.policy.hard_limit(),
            attempt_count: self.attempts,
            stages: std::mem::take(&mut self.stages),
            required_entry_ids,
            latest_snapshot_version: self.latest_version,
            final_verification: None,
        }
    }
}
