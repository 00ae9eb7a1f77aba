//! The assembler (SPEC ASM-1 .. ASM-16).
//!
//! [`assemble`] is the main procedure of SPEC ASM-7, transcribed line by line: the below-trigger
//! path, eviction with the margin-restored rule (ASM-8), the bounded reducer loop, and the
//! deterministic fallback (ASM-9). Every finalization or restart site goes through one version
//! check (ASM-5, `Run::check`) whose attempt accounting follows the check-site table (ASM-10,
//! ASM-11); an exhausted budget at a version change ends in churn termination (ASM-6).
//!
//! Cancellation is observed only at the explicit `check cancellation` lines of ASM-7 / ASM-9
//! (SPEC ASM-16) and is an error, never an outcome. Sizes and required ids computed inside the
//! assembler do not observe cancellation.
//!
//! Notation as in the SPEC: `size(L)` is the checked sum of the policy estimator ([`size`]),
//! `req(L)` the required ids of `L` ([`required_ids`]), `T` the trigger threshold, `H` the hard
//! limit, `M` the attempt budget. `Verify` always compares against `cur`, the full latest
//! snapshot.

use crate::estimate::size;
use crate::preserve::{durable_digests, required_ids, segment_is_durable};
use crate::verify::verify;
use hybrid_compaction_model::assembly::{
    AssemblyError, AssemblyResult, Outcome, Reducer, ReductionRequest, Stage,
};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryId, EntryKind};
use hybrid_compaction_model::policy::Policy;
use hybrid_compaction_model::snapshot::{Snapshot, SnapshotProvider};
use hybrid_compaction_model::verification::VerificationResult;

/// Eviction (SPEC ASM-8): drop every `RecoverableContextSegment` whose digest is in the list's
/// durable set (SPEC PRE-2); keep everything else, in order. Reference-less bodies stay (they are
/// required, SPEC PRE-1.2).
pub fn evict(entries: &[Entry]) -> Vec<Entry> {
    let durable = durable_digests(entries);
    entries
        .iter()
        .filter(|e| {
            !(e.kind() == EntryKind::RecoverableContextSegment && segment_is_durable(e, &durable))
        })
        .cloned()
        .collect()
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

/// The mutable state of one assembly run (SPEC ASM-7).
struct Run<'a> {
    policy: &'a Policy,
    provider: &'a mut dyn SnapshotProvider,
    reducer: &'a mut dyn Reducer,
    cancel: &'a CancellationToken,
    /// `OriginalEstimatedSize` for the whole run: the size of the first snapshot.
    anchor: i32,
    latest_version: i64,
    cur: Vec<Entry>,
    attempts: i32,
    stages: Vec<Stage>,
}

impl Run<'_> {
    /// `check cancellation` (SPEC ASM-16): a cancellation is an error, never an outcome.
    fn check_cancellation(&self) -> Result<(), AssemblyError> {
        if self.cancel.is_cancelled() {
            Err(AssemblyError::Cancelled)
        } else {
            Ok(())
        }
    }

    fn size(&self, entries: &[Entry]) -> Result<i32, AssemblyError> {
        size(entries, self.policy.estimator())
    }

    fn req(&self, entries: &[Entry]) -> Result<Vec<EntryId>, AssemblyError> {
        required_ids(entries, self.policy.recent_message_retention_count())
    }

    fn verify(&self, proposed: &[Entry]) -> Result<VerificationResult, AssemblyError> {
        verify(&self.cur, proposed, self.policy)
    }

    /// `capture()` always appends `SnapshotCaptured` (SPEC ASM-2, ASM-14).
    fn capture(&mut self) -> Result<Snapshot, AssemblyError> {
        self.stages.push(Stage::SnapshotCaptured);
        Ok(self.provider.capture()?)
    }

    /// The version check shared by all finalization / restart sites (SPEC ASM-5).
    fn check(&mut self, s: Snapshot, consumes: bool) -> Check {
        if s.version() == self.latest_version {
            return Check::Stable;
        }
        // SPEC ASM-5 / ASM-11: budget exhausted → churn; nothing mutated, no stage added.
        if self.attempts >= self.policy.maximum_compaction_attempts() {
            return Check::Churn(s);
        }
        self.stages.push(Stage::RestartedAfterMutation);
        self.latest_version = s.version();
        self.cur = s.into_entries();
        // SPEC ASM-10: only some sites consume an attempt for a restart.
        if consumes {
            self.attempts += 1;
        }
        Check::Restarted
    }

    /// Churn termination for the observed snapshot `s` (SPEC ASM-6). Never runs the fallback.
    fn churn(&mut self, s: Snapshot) -> Result<AssemblyResult, AssemblyError> {
        let final_estimated_size = self.size(s.entries())?;
        let required_entry_ids = self.req(s.entries())?;
        Ok(AssemblyResult {
            outcome: Outcome::ConcurrentMutationLimit,
            final_entries: None,
            original_estimated_size: self.anchor,
            final_estimated_size,
            hard_limit: self.policy.hard_limit(),
            attempt_count: self.attempts,
            stages: std::mem::take(&mut self.stages),
            required_entry_ids,
            // SPEC ASM-13: churn reports the newly observed version.
            latest_snapshot_version: s.version(),
            final_verification: None,
        })
    }

    /// A success result (SPEC ASM-3): `RequiredEntryIds` = `req(cur)` (SPEC ASM-13).
    fn success(
        &mut self,
        outcome: Outcome,
        entries: Vec<Entry>,
        final_estimated_size: i32,
        verification: VerificationResult,
    ) -> Result<AssemblyResult, AssemblyError> {
        let required_entry_ids = self.req(&self.cur)?;
        Ok(AssemblyResult {
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
        })
    }

    /// An `Irreducible` termination judging a list whose required ids are `required`.
    fn irreducible(
        &mut self,
        final_estimated_size: i32,
        required_entry_ids: Vec<EntryId>,
    ) -> AssemblyResult {
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

    /// The main loop of SPEC ASM-7, after the initial capture.
    fn run(&mut self) -> Result<AssemblyResult, AssemblyError> {
        let t = self.policy.trigger_threshold();
        let h = self.policy.hard_limit();
        let m = self.policy.maximum_compaction_attempts();
        'outer: loop {
            self.check_cancellation()?;
            let e = self.size(&self.cur)?;

            // ---- Below trigger: no eviction, no reducer (SPEC POL-4, ASM-7).
            if e < t {
                let v = verify(&self.cur, &self.cur, self.policy)?;
                if !v.is_accepted() {
                    // SPEC ASM-12 (a): invalid tool structure under the threshold.
                    let r = self.req(&self.cur)?;
                    return Ok(self.irreducible(e, r));
                }
                let s = self.capture()?;
                // SPEC ASM-10: below-trigger success, a restart consumes an attempt.
                match self.check(s, true) {
                    Check::Churn(s) => return self.churn(s),
                    Check::Restarted => continue 'outer,
                    Check::Stable => {
                        let cur = self.cur.clone();
                        return self.success(Outcome::WithinLimit, cur, e, v);
                    }
                }
            }

            // ---- Eviction and the margin-restored rule (SPEC ASM-8).
            let ev = evict(&self.cur);
            let es = self.size(&ev)?;
            let evicted_any = ev.len() != self.cur.len();
            if evicted_any {
                self.stages.push(Stage::RecoverableBodyEviction);
            }
            // Strict: eviction must remove something and land strictly below the threshold.
            if evicted_any && es < t {
                let v = self.verify(&ev)?;
                if v.is_accepted() {
                    let s = self.capture()?;
                    // SPEC ASM-10: margin-restored success, a restart consumes an attempt.
                    match self.check(s, true) {
                        Check::Churn(s) => return self.churn(s),
                        Check::Restarted => continue 'outer,
                        Check::Stable => return self.success(Outcome::Reduced, ev, es, v),
                    }
                }
                // Rejected: fall through to the reducer.
            }

            // ---- The bounded reducer loop (SPEC ASM-7, ASM-11).
            let mut work = ev;
            let mut ws = es;
            let mut restart = false;
            while self.attempts < m {
                self.attempts += 1;
                self.check_cancellation()?;
                self.stages.push(Stage::ReducerAttempt);
                let request_required = self.req(&work)?;
                let request = ReductionRequest {
                    entries: &work,
                    required_entry_ids: &request_required,
                    policy: self.policy,
                    attempt_number: self.attempts,
                };
                // SPEC ASM-4: reducer errors propagate unchanged; nothing returned is an error.
                let p = self
                    .reducer
                    .reduce(&request)?
                    .ok_or(AssemblyError::ReducerReturnedNothing)?;
                self.check_cancellation()?;
                let s = self.capture()?;
                // SPEC ASM-10: post-reducer recheck, a restart does not consume an attempt.
                match self.check(s, false) {
                    Check::Churn(s) => return self.churn(s),
                    Check::Restarted => {
                        restart = true;
                        break;
                    }
                    Check::Stable => {}
                }
                self.check_cancellation()?;
                let v = self.verify(&p)?;
                let ps = self.size(&p)?;
                if !v.is_accepted() || ps >= ws {
                    // Invalid or non-progressing: preserve the current list if it fits and
                    // verifies, else go to the fallback with the remaining attempts unused.
                    if ws <= h {
                        let pv = self.verify(&work)?;
                        if pv.is_accepted() {
                            let s = self.capture()?;
                            // SPEC ASM-10: preserve-current, a restart does not consume.
                            match self.check(s, false) {
                                Check::Churn(s) => return self.churn(s),
                                Check::Restarted => {
                                    restart = true;
                                    break;
                                }
                                Check::Stable => {
                                    let outcome = if work.len() == self.cur.len() {
                                        Outcome::WithinLimit
                                    } else {
                                        Outcome::Reduced
                                    };
                                    return self.success(outcome, work, ws, pv);
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
                        Check::Restarted => {
                            restart = true;
                            break;
                        }
                        Check::Stable => return self.success(Outcome::Reduced, p, ps, v),
                    }
                }
                // Valid, strictly smaller, still over the hard limit: try again.
                work = p;
                ws = ps;
            }
            if restart {
                continue 'outer;
            }
            return self.fallback();
        }
    }

    /// The deterministic fallback (SPEC ASM-9). Its restarts loop inside it and never re-run
    /// the trigger, eviction or reducer.
    fn fallback(&mut self) -> Result<AssemblyResult, AssemblyError> {
        let h = self.policy.hard_limit();
        self.stages.push(Stage::DeterministicFallback);
        'fallback: loop {
            self.check_cancellation()?;
            let r = self.req(&self.cur)?;
            // x = r ∪ {ids of all OptionalContext entries in cur}: optional context is
            // all-or-nothing.
            let mut x = r.clone();
            for entry in &self.cur {
                if entry.kind() == EntryKind::OptionalContext && !x.contains(entry.id()) {
                    x.push(entry.id().clone());
                }
            }
            if x.len() > r.len() {
                let c: Vec<Entry> = self
                    .cur
                    .iter()
                    .filter(|e| x.contains(e.id()))
                    .cloned()
                    .collect();
                let cs = self.size(&c)?;
                if cs <= h {
                    let v = self.verify(&c)?;
                    if v.is_accepted() {
                        let s = self.capture()?;
                        // SPEC ASM-10: fallback candidate, a restart consumes an attempt.
                        match self.check(s, true) {
                            Check::Churn(s) => return self.churn(s),
                            Check::Restarted => continue 'fallback,
                            Check::Stable => {
                                return self.success(Outcome::PreservationFallback, c, cs, v)
                            }
                        }
                    }
                }
            }
            // Required-only candidate.
            let c: Vec<Entry> = self
                .cur
                .iter()
                .filter(|e| r.contains(e.id()))
                .cloned()
                .collect();
            let cs = self.size(&c)?;
            if cs <= h {
                let v = self.verify(&c)?;
                if v.is_accepted() {
                    let s = self.capture()?;
                    match self.check(s, true) {
                        Check::Churn(s) => return self.churn(s),
                        Check::Restarted => continue 'fallback,
                        Check::Stable => {
                            return self.success(Outcome::PreservationFallback, c, cs, v)
                        }
                    }
                }
            }
            self.check_cancellation()?;
            // SPEC ASM-12 (b): Irreducible reports the required-only size.
            return Ok(self.irreducible(cs, r));
        }
    }
}

/// Assembles bounded context for one provider call (SPEC ASM-7).
pub fn assemble(
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
    let anchor = size(s0.entries(), policy.estimator())?;
    let mut run = Run {
        policy,
        provider,
        reducer,
        cancel,
        anchor,
        latest_version: s0.version(),
        cur: s0.into_entries(),
        attempts: 0,
        stages,
    };
    run.run()
}
