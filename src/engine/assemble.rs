//! The assembler (SPEC ASM-1 .. ASM-16): the state machine of SPEC ASM-7 / ASM-9 over a
//! per-snapshot index.
//!
//! The control flow is the model's, line for line (same captures, same version checks, same
//! cancellation points, same attempt accounting), so the two agree on every stage list and
//! error. What differs is the data work:
//!
//! * `cur` (the latest snapshot) carries lazily built derived data (`Snap`): per-entry sizes
//!   (each entry estimated at most once, `SizeCache`), the positional tool analysis, the
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
//!   keep every `ToolExchange` entry, the tool analysis of `cur` is reused.
//! * A reducer proposal is mapped onto `cur` positions once (one hash lookup per entry); entries
//!   that are the same allocation as the `cur` entry reuse its cached size.
//! * `req(evicted)` equals `req(cur)`: eviction removes only durable recovered bodies, which are
//!   neither required, nor recency units, nor part of tool groups, nor durable-set sources.
//! * Scratch buffers live in [`Assembler`] and are reused across attempts, restarts and calls.
//!
//! Per pass the work is O(n) plus O(parts) hash operations, independent of calls per message.

use hybrid_compaction_model::assembly::{
    AssemblyError, AssemblyResult, Outcome, Reducer, ReductionRequest, Stage,
};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::snapshot::{Snapshot, SnapshotProvider};
use hybrid_compaction_model::verification::VerificationResult;

use super::estimate::{size, SizeCache};
use super::exchange::{analyze_kinds, kinds_of, Analysis, AnalysisBuilder};
use super::hash::FxHashMap;
use super::preserve::{durable_set_kinds, is_durable, required_into, Required};
use super::verify::{entry_has_nan, judge, judge_self, map_proposal, same_tool_sequence, Original};
use super::NONE;

/// Eviction (SPEC ASM-8): drop every recoverable segment whose digest is durable.
pub fn evict(entries: &[Entry]) -> Vec<Entry> {
    evicted_positions(entries, &kinds_of(entries), None)
        .into_iter()
        .map(|p| entries[p as usize].clone())
        .collect()
}

/// Positions kept by eviction (SPEC ASM-8), in order, given the kinds of `entries`.
fn evicted_positions(entries: &[Entry], kinds: &[EntryKind], refs: Option<&[bool]>) -> Vec<u32> {
    let has_segments = kinds.contains(&EntryKind::RecoverableContextSegment);
    if !has_segments {
        return (0..entries.len() as u32).collect();
    }
    let durable = durable_set_kinds(entries, kinds, refs);
    entries
        .iter()
        .enumerate()
        .filter(|(i, e)| {
            !(kinds[*i] == EntryKind::RecoverableContextSegment && is_durable(e, &durable))
        })
        .map(|(i, _)| i as u32)
        .collect()
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
        if cancel.is_cancelled() {
            return Err(AssemblyError::Cancelled);
        }
        // s0 = capture(); anchor = size(s0.entries)
        let stages = vec![Stage::SnapshotCaptured];
        let s0 = provider.capture()?;
        let latest_version = s0.version();
        let snap = Snap::new(s0);
        self.sizes.reset(snap.entries.len());
        let mut run = Run {
            policy,
            provider,
            reducer,
            cancel,
            sizes: &mut self.sizes,
            inv: &mut self.inv,
            pos: &mut self.pos,
            snap,
            anchor: 0,
            latest_version,
            attempts: 0,
            stages,
        };
        run.anchor = run.cur_size()?;
        run.run()
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

/// The latest snapshot `cur` and its lazily derived data.
struct Snap {
    entries: Cur,
    /// Per-position kinds and NaN flags, gathered in one pass (fused with the first full
    /// estimation), so later passes read these compact arrays instead of the entries.
    kinds: Vec<EntryKind>,
    nan: Vec<bool>,
    /// Per position: the entry carries artifact-reference digests (SPEC ENT-5.2, ENT-5.3).
    refs: Vec<bool>,
    facts: bool,
    total: Option<i32>,
    analysis: Option<Analysis>,
    required: Option<Required>,
    required_ids: Option<Vec<EntryId>>,
    index: Option<FxHashMap<EntryId, u32>>,
}

impl Snap {
    fn new(snapshot: Snapshot) -> Snap {
        Snap {
            entries: Cur(snapshot),
            kinds: Vec::new(),
            nan: Vec::new(),
            refs: Vec::new(),
            facts: false,
            total: None,
            analysis: None,
            required: None,
            required_ids: None,
            index: None,
        }
    }

    /// Gathers kinds and NaN flags (when the full estimation pass did not already).
    fn ensure_facts(&mut self) {
        if self.facts {
            return;
        }
        self.kinds.clear();
        self.nan.clear();
        self.refs.clear();
        self.kinds.reserve(self.entries.len());
        self.nan.reserve(self.entries.len());
        self.refs.reserve(self.entries.len());
        for e in self.entries.iter() {
            let kind = e.kind();
            self.kinds.push(kind);
            self.nan.push(entry_has_nan(e, kind));
            self.refs.push(!e.artifact_reference_digests().is_empty());
        }
        self.facts = true;
    }

    /// Builds the analysis and required selection of `cur` once (snapshots have unique ids).
    fn ensure_required(&mut self, retention: i32) {
        if self.required.is_some() {
            return;
        }
        self.ensure_facts();
        let analysis = match self.analysis.take() {
            Some(a) => a,
            None => analyze_kinds(&self.entries, &self.kinds),
        };
        let mut required = Required::default();
        required_into(
            &self.entries,
            &self.kinds,
            Some(&self.refs),
            &analysis,
            retention,
            &mut required,
        );
        self.required_ids = Some(required.ids(&self.entries));
        self.required = Some(required);
        self.analysis = Some(analysis);
    }

    fn original(&self) -> Original<'_> {
        Original {
            entries: &self.entries,
            kinds: &self.kinds,
            nan: Some(&self.nan),
            required: self.required.as_ref().expect("ensure_required ran"),
            required_ids: self.required_ids.as_deref().unwrap_or(&[]),
            analysis: self.analysis.as_ref().expect("ensure_required ran"),
        }
    }
}

/// A candidate built from `cur`: entries plus their `cur` positions.
struct Candidate {
    entries: Vec<Entry>,
    pos: Vec<u32>,
}

impl Candidate {
    fn from_positions(cur: &[Entry], pos: Vec<u32>) -> Candidate {
        Candidate {
            entries: pos.iter().map(|&p| cur[p as usize].clone()).collect(),
            pos,
        }
    }
}

/// The working list of the reducer loop: the evicted list (a `cur` candidate) or an accepted
/// proposal.
enum Work {
    Evicted(Candidate),
    /// An accepted proposal, its `cur` positions (`NONE` for new entries), and whether its tool
    /// entries are exactly `cur`'s. Accepted means every retained entry kept its kind, so kinds
    /// can be read from `cur`.
    Proposal(Vec<Entry>, Vec<u32>, bool),
}

impl Work {
    fn entries(&self) -> &[Entry] {
        match self {
            Work::Evicted(c) => &c.entries,
            Work::Proposal(p, _, _) => p,
        }
    }

    fn into_entries(self) -> Vec<Entry> {
        match self {
            Work::Evicted(c) => c.entries,
            Work::Proposal(p, _, _) => p,
        }
    }
}

enum Check {
    Stable,
    Churn(Snapshot),
    Restarted,
}

struct Run<'a> {
    policy: &'a Policy,
    provider: &'a mut dyn SnapshotProvider,
    reducer: &'a mut dyn Reducer,
    cancel: &'a CancellationToken,
    sizes: &'a mut SizeCache,
    inv: &'a mut Vec<u32>,
    pos: &'a mut Vec<u32>,
    snap: Snap,
    anchor: i32,
    latest_version: i64,
    attempts: i32,
    stages: Vec<Stage>,
}

impl Run<'_> {
    /// `check cancellation` (SPEC ASM-16): only at the lines where the model checks.
    fn check_cancellation(&self) -> Result<(), AssemblyError> {
        if self.cancel.is_cancelled() {
            Err(AssemblyError::Cancelled)
        } else {
            Ok(())
        }
    }

    fn retention(&self) -> i32 {
        self.policy.recent_message_retention_count()
    }

    /// `size(cur)`, estimating each entry at most once per snapshot.
    fn cur_size(&mut self) -> Result<i32, AssemblyError> {
        if let Some(t) = self.snap.total {
            return Ok(t);
        }
        let n = self.snap.entries.len();
        let t = if self.snap.facts {
            self.sizes
                .sum_positions(&self.snap.entries, 0..n, self.policy.estimator())?
        } else {
            // One pass: estimate each entry and gather its kind and NaN flag, and intern the
            // call ids of tool entries (the hashing pass of the tool analysis), while it is in
            // cache (the first full pass over a snapshot).
            let snap = &mut self.snap;
            snap.kinds.clear();
            snap.nan.clear();
            snap.refs.clear();
            let entries: &[Entry] = &snap.entries;
            snap.kinds.reserve(entries.len());
            snap.nan.reserve(entries.len());
            snap.refs.reserve(entries.len());
            let mut tools = (snap.analysis.is_none())
                .then(|| AnalysisBuilder::with_capacity(entries.len() / 4));
            let mut total: i32 = 0;
            for (i, e) in entries.iter().enumerate() {
                let s = self.sizes.get(entries, i, self.policy.estimator())?;
                total = total.checked_add(s).ok_or(AssemblyError::SizeOverflow)?;
                let kind = e.kind();
                snap.kinds.push(kind);
                snap.nan.push(entry_has_nan(e, kind));
                snap.refs.push(!e.artifact_reference_digests().is_empty());
                if kind == EntryKind::ToolExchange {
                    if let Some(b) = tools.as_mut() {
                        b.push(i as u32, e);
                    }
                }
            }
            if let Some(b) = tools {
                snap.analysis = Some(b.finish());
            }
            snap.facts = true;
            total
        };
        self.snap.total = Some(t);
        Ok(t)
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

    fn cur_required_ids(&mut self) -> Vec<EntryId> {
        self.snap.ensure_required(self.retention());
        self.snap.required_ids.clone().unwrap_or_default()
    }

    /// `Verify(cur, c)` for a candidate of `cur` (no duplicates possible).
    fn verify_candidate(&mut self, c: &Candidate) -> VerificationResult {
        self.snap.ensure_required(self.retention());
        let orig = self.snap.original();
        let n_tools = c
            .pos
            .iter()
            .filter(|&&p| orig.kinds[p as usize] == EntryKind::ToolExchange)
            .count();
        let reuse = n_tools == orig.analysis.tool_positions.len();
        judge(&orig, &c.entries, &c.pos, reuse, self.inv)
    }

    /// `Verify(cur, cur)`.
    fn verify_self(&mut self) -> VerificationResult {
        self.snap.ensure_required(self.retention());
        judge_self(&self.snap.original())
    }

    /// `Verify(cur, p)` then `size(p)` for a reducer proposal, errors in the model's order.
    fn verify_proposal(&mut self, p: &[Entry]) -> Result<(VerificationResult, i32), AssemblyError> {
        let (v, ps, _) = self.verify_proposal_tools(p)?;
        Ok((v, ps))
    }

    /// As [`Run::verify_proposal`], also telling whether the proposal's tool entries are
    /// exactly `cur`'s (then its tool analysis is `cur`'s, translated to its positions).
    fn verify_proposal_tools(
        &mut self,
        p: &[Entry],
    ) -> Result<(VerificationResult, i32, bool), AssemblyError> {
        self.snap.ensure_required(self.retention());
        map_proposal(
            &self.snap.entries,
            &mut self.snap.index,
            p,
            self.inv,
            self.pos,
        )?;
        let orig = self.snap.original();
        let reuse = same_tool_sequence(&orig, p, self.pos);
        let v = judge(&orig, p, self.pos, reuse, self.inv);
        let ps =
            self.sizes
                .sum_proposal(&self.snap.entries, p, self.pos, self.policy.estimator())?;
        Ok((v, ps, reuse))
    }

    fn capture(&mut self) -> Result<Snapshot, AssemblyError> {
        self.stages.push(Stage::SnapshotCaptured);
        Ok(self.provider.capture()?)
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
        self.snap = Snap::new(s);
        self.sizes.reset(self.snap.entries.len());
        if consumes {
            self.attempts += 1;
        }
        Check::Restarted
    }

    /// Churn termination for the observed snapshot (SPEC ASM-6).
    fn churn(&mut self, s: Snapshot) -> Result<AssemblyResult, AssemblyError> {
        let final_estimated_size = size(s.entries(), self.policy.estimator())?;
        let kinds = kinds_of(s.entries());
        let analysis = analyze_kinds(s.entries(), &kinds);
        let mut required = Required::default();
        required_into(
            s.entries(),
            &kinds,
            None,
            &analysis,
            self.retention(),
            &mut required,
        );
        Ok(AssemblyResult {
            outcome: Outcome::ConcurrentMutationLimit,
            final_entries: None,
            original_estimated_size: self.anchor,
            final_estimated_size,
            hard_limit: self.policy.hard_limit(),
            attempt_count: self.attempts,
            stages: std::mem::take(&mut self.stages),
            required_entry_ids: required.ids(s.entries()),
            latest_snapshot_version: s.version(),
            final_verification: None,
        })
    }

    fn success(
        &mut self,
        outcome: Outcome,
        entries: Vec<Entry>,
        final_estimated_size: i32,
        verification: VerificationResult,
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

    fn finish(
        &mut self,
        outcome: Outcome,
        entries: Vec<Entry>,
        final_estimated_size: i32,
        verification: VerificationResult,
        required_entry_ids: Vec<EntryId>,
    ) -> AssemblyResult {
        AssemblyResult {
            outcome,
            final_entries: Some(entries),
            original_estimated_size: self.anchor,
            final_estimated_size,
            hard_limit: self.policy.hard_limit(),
            attempt_count: self.attempts,
            stages: std::mem::take(&mut self.stages),
            required_entry_ids,
            latest_snapshot_version: self.latest_version,
            final_verification: Some(verification),
        }
    }

    fn irreducible(&mut self, final_estimated_size: i32) -> AssemblyResult {
        let required_entry_ids = self.take_required_ids();
        AssemblyResult {
            outcome: Outcome::Irreducible,
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

    /// SPEC ASM-7 after the initial capture.
    fn run(&mut self) -> Result<AssemblyResult, AssemblyError> {
        let t = self.policy.trigger_threshold();
        let h = self.policy.hard_limit();
        let m = self.policy.maximum_compaction_attempts();
        'outer: loop {
            self.check_cancellation()?;
            let e = self.cur_size()?;

            // Below trigger (SPEC POL-4: `>=` triggers).
            if e < t {
                let v = self.verify_self();
                if !v.is_accepted() {
                    // SPEC ASM-12 (a).
                    return Ok(self.irreducible(e));
                }
                let s = self.capture()?;
                // SPEC ASM-10: consumes an attempt on restart.
                match self.check(s, true) {
                    Check::Churn(s) => return self.churn(s),
                    Check::Restarted => continue 'outer,
                    Check::Stable => {
                        // `cur` is not needed any more: hand its entries over (no copy); the
                        // required ids are taken first, as `success` reads them from `cur`.
                        let required = self.take_required_ids();
                        let entries = std::mem::take(&mut self.snap.entries).0.into_entries();
                        return Ok(self.finish(Outcome::WithinLimit, entries, e, v, required));
                    }
                }
            }

            // Eviction and the margin-restored rule (SPEC ASM-8).
            self.snap.ensure_facts();
            let kept =
                evicted_positions(&self.snap.entries, &self.snap.kinds, Some(&self.snap.refs));
            let evicted_any = kept.len() != self.snap.entries.len();
            let ev = Candidate::from_positions(&self.snap.entries, kept);
            let es = self.positions_size(&ev.pos)?;
            if evicted_any {
                self.stages.push(Stage::RecoverableBodyEviction);
            }
            if evicted_any && es < t {
                let v = self.verify_candidate(&ev);
                if v.is_accepted() {
                    let s = self.capture()?;
                    // SPEC ASM-10: margin-restored success, a restart consumes an attempt.
                    match self.check(s, true) {
                        Check::Churn(s) => return self.churn(s),
                        Check::Restarted => continue 'outer,
                        Check::Stable => {
                            return Ok(self.success(Outcome::Reduced, ev.entries, es, v))
                        }
                    }
                }
            }

            // The bounded reducer loop (SPEC ASM-7, ASM-11).
            let mut work = Work::Evicted(ev);
            let mut ws = es;
            while self.attempts < m {
                self.attempts += 1;
                self.check_cancellation()?;
                self.stages.push(Stage::ReducerAttempt);
                // req(work): for the evicted list it is req(cur) (see the module docs).
                let request_required = match &work {
                    Work::Evicted(_) => self.cur_required_ids(),
                    Work::Proposal(p, pos, same_tools) => {
                        let cur_kinds = &self.snap.kinds;
                        let kinds: Vec<EntryKind> = p
                            .iter()
                            .zip(pos)
                            .map(|(e, &q)| {
                                if q == NONE {
                                    e.kind()
                                } else {
                                    cur_kinds[q as usize]
                                }
                            })
                            .collect();
                        let analysis = if *same_tools {
                            // Same tool entries in the same order: translate cur's analysis.
                            let cur_analysis = self.snap.analysis.as_ref().expect("ensured");
                            if self.inv.len() < self.snap.entries.len() {
                                self.inv.resize(self.snap.entries.len(), NONE);
                            }
                            for (j, &q) in pos.iter().enumerate() {
                                if q != NONE {
                                    self.inv[q as usize] = j as u32;
                                }
                            }
                            let translated = cur_analysis.translated(self.inv);
                            for &q in pos {
                                if q != NONE {
                                    self.inv[q as usize] = NONE;
                                }
                            }
                            translated
                        } else {
                            analyze_kinds(p, &kinds)
                        };
                        let mut required = Required::default();
                        required_into(p, &kinds, None, &analysis, self.retention(), &mut required);
                        required.ids(p)
                    }
                };
                let request = ReductionRequest {
                    entries: work.entries(),
                    required_entry_ids: &request_required,
                    policy: self.policy,
                    attempt_number: self.attempts,
                };
                let p = self
                    .reducer
                    .reduce(&request)?
                    .ok_or(AssemblyError::ReducerReturnedNothing)?;
                self.check_cancellation()?;
                let s = self.capture()?;
                // SPEC ASM-10: post-reducer recheck does not consume.
                match self.check(s, false) {
                    Check::Churn(s) => return self.churn(s),
                    Check::Restarted => continue 'outer,
                    Check::Stable => {}
                }
                self.check_cancellation()?;
                let (v, ps, same_tools) = self.verify_proposal_tools(&p)?;
                if !v.is_accepted() || ps >= ws {
                    if ws <= h {
                        let pv = match &work {
                            Work::Evicted(c) => self.verify_candidate(c),
                            Work::Proposal(wp, _, _) => self.verify_proposal(wp)?.0,
                        };
                        if pv.is_accepted() {
                            let s = self.capture()?;
                            // SPEC ASM-10: preserve-current, a restart does not consume.
                            match self.check(s, false) {
                                Check::Churn(s) => return self.churn(s),
                                Check::Restarted => continue 'outer,
                                Check::Stable => {
                                    let outcome = if work.entries().len() == self.snap.entries.len()
                                    {
                                        Outcome::WithinLimit
                                    } else {
                                        Outcome::Reduced
                                    };
                                    return Ok(self.success(outcome, work.into_entries(), ws, pv));
                                }
                            }
                        }
                    }
                    break;
                }
                if ps <= h {
                    let s = self.capture()?;
                    // SPEC ASM-10: reduced-proposal success, a restart does not consume.
                    match self.check(s, false) {
                        Check::Churn(s) => return self.churn(s),
                        Check::Restarted => continue 'outer,
                        Check::Stable => return Ok(self.success(Outcome::Reduced, p, ps, v)),
                    }
                }
                work = Work::Proposal(p, self.pos.clone(), same_tools);
                ws = ps;
            }
            return self.fallback();
        }
    }

    /// The deterministic fallback (SPEC ASM-9).
    fn fallback(&mut self) -> Result<AssemblyResult, AssemblyError> {
        let h = self.policy.hard_limit();
        self.stages.push(Stage::DeterministicFallback);
        'fallback: loop {
            self.check_cancellation()?;
            self.snap.ensure_required(self.retention());
            let flags = &self.snap.required.as_ref().expect("ensured").flags;
            let kinds = &self.snap.kinds;
            let has_optional = kinds.contains(&EntryKind::OptionalContext);
            if has_optional {
                // Optional context is all-or-nothing.
                let pos: Vec<u32> = kinds
                    .iter()
                    .enumerate()
                    .filter(|(i, k)| flags[*i] || **k == EntryKind::OptionalContext)
                    .map(|(i, _)| i as u32)
                    .collect();
                let cs = self.positions_size(&pos)?;
                if cs <= h {
                    let c = Candidate::from_positions(&self.snap.entries, pos);
                    let v = self.verify_candidate(&c);
                    if v.is_accepted() {
                        let s = self.capture()?;
                        // SPEC ASM-10: fallback candidate, a restart consumes an attempt and
                        // resumes inside the fallback (ASM-9).
                        match self.check(s, true) {
                            Check::Churn(s) => return self.churn(s),
                            Check::Restarted => continue 'fallback,
                            Check::Stable => {
                                return Ok(self.success(
                                    Outcome::PreservationFallback,
                                    c.entries,
                                    cs,
                                    v,
                                ))
                            }
                        }
                    }
                }
            }
            // Required-only candidate.
            let pos = self
                .snap
                .required
                .as_ref()
                .expect("ensured")
                .positions
                .clone();
            let cs = self.positions_size(&pos)?;
            if cs <= h {
                let c = Candidate::from_positions(&self.snap.entries, pos);
                let v = self.verify_candidate(&c);
                if v.is_accepted() {
                    let s = self.capture()?;
                    // SPEC ASM-10: fallback candidate (required only).
                    match self.check(s, true) {
                        Check::Churn(s) => return self.churn(s),
                        Check::Restarted => continue 'fallback,
                        Check::Stable => {
                            return Ok(self.success(
                                Outcome::PreservationFallback,
                                c.entries,
                                cs,
                                v,
                            ))
                        }
                    }
                }
            }
            self.check_cancellation()?;
            // SPEC ASM-12 (b): the required-only size.
            return Ok(self.irreducible(cs));
        }
    }
}
