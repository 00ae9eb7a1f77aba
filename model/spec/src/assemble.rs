//! The assembler (SPEC ASM-1 .. ASM-16).
//!
//! [`assemble`] is the main procedure of SPEC ASM-7, transcribed line by line, one method of
//! `Run` per phase: the below-trigger path (`below_trigger`), eviction with the margin-restored
//! rule (`eviction`, ASM-8), the bounded reducer loop (`reducer_loop`, with `preserve_current`
//! after an invalid or non-progressing proposal), and the deterministic fallback (`fallback`,
//! ASM-9, trying its extended and required-only candidates through one `fallback_candidate`).
//! Every finalization or restart site (`finalize` / `recheck`) goes through one version check
//! (ASM-5, `Run::check`) whose attempt accounting follows the check-site table (ASM-10, ASM-11);
//! an exhausted budget at a version change ends in churn termination (ASM-6). A phase ends the
//! pass with an `Exit`: the run's result, or a restart of the site's loop.
//!
//! Cancellation (SPEC ASM-16) is an error, never an outcome. It is observed at the explicit
//! `check cancellation` lines of ASM-7 / ASM-9 and inside every computation of the procedure
//! that the SPEC names: `size(L)` is `Evaluate(L)` (checks before and after summing, POL-3),
//! `req(L)` is the required selection (checks on entry, PRE-4) and `Verify` checks on entry
//! (VER-5), including the computations that build success and churn results (ASM-6, ASM-13).
//!
//! Notation as in the SPEC: `size(L)` is `Evaluate(L)`, the checked sum of the policy estimator ([`evaluate`]),
//! `req(L)` the required ids of `L` ([`required_ids`]), `T` the trigger threshold, `H` the hard
//! limit, `M` the attempt budget. `Verify` always compares against `cur`, the full latest
//! snapshot.

use std::ops::ControlFlow;

use crate::estimate::evaluate;
use crate::preserve::{durable_digests, required_ids, segment_is_durable};
use crate::verify::verify_cancellable;
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

/// How a finalization or restart site ended the current pass (SPEC ASM-5, ASM-10).
#[allow(
    clippy::large_enum_variant,
    reason = "one value per pass, moved a few times: boxing would only add an allocation"
)]
enum Exit {
    /// The run is over: a success or a termination.
    Done(AssemblyResult),
    /// A consumed restart: `continue` the site's loop (OUTER, or the fallback's).
    Restart,
}

/// A list with its size: the evicted list `ev, es` and the working list `work, ws` of ASM-7.
struct SizedList {
    entries: Vec<Entry>,
    size: i32,
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

/// The procedure of SPEC ASM-7 / ASM-9, one method per phase.
impl Run<'_> {
    /// The main loop of SPEC ASM-7 (`OUTER`), after the initial capture.
    fn run(&mut self) -> Result<AssemblyResult, AssemblyError> {
        loop {
            self.check_cancellation()?;
            let e = self.size(&self.cur)?;
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

    /// Below the trigger (SPEC ASM-7): no eviction, no reducer.
    fn below_trigger(&mut self, e: i32) -> Result<Exit, AssemblyError> {
        let v = self.verify(&self.cur)?;
        if !v.is_accepted() {
            // SPEC ASM-12 (a): invalid tool structure under the threshold.
            let r = self.req(&self.cur)?;
            return Ok(Exit::Done(self.irreducible(e, r)));
        }
        // SPEC ASM-10: below-trigger success, a restart consumes an attempt.
        self.finalize(true, |run| {
            let cur = run.cur.clone();
            run.success(Outcome::WithinLimit, cur, e, v)
        })
    }

    /// Eviction and the margin-restored rule (SPEC ASM-8). `Continue`: on to the reducer with
    /// the evicted list.
    fn eviction(&mut self) -> Result<ControlFlow<Exit, SizedList>, AssemblyError> {
        let ev = evict(&self.cur);
        let es = self.size(&ev)?;
        let evicted_any = ev.len() != self.cur.len();
        if evicted_any {
            self.stages.push(Stage::RecoverableBodyEviction);
        }
        // Strict: eviction must remove something and land strictly below the threshold.
        if evicted_any && es < self.policy.trigger_threshold() {
            let v = self.verify(&ev)?;
            if v.is_accepted() {
                // SPEC ASM-10: margin-restored success, a restart consumes an attempt.
                let exit = self.finalize(true, |run| run.success(Outcome::Reduced, ev, es, v))?;
                return Ok(ControlFlow::Break(exit));
            }
            // Rejected: fall through to the reducer.
        }
        Ok(ControlFlow::Continue(SizedList {
            entries: ev,
            size: es,
        }))
    }

    /// The bounded reducer loop (SPEC ASM-7, ASM-11). `None`: `return fallback(cur)`.
    fn reducer_loop(&mut self, evicted: SizedList) -> Result<Option<Exit>, AssemblyError> {
        let mut work = evicted;
        while self.attempts < self.policy.maximum_compaction_attempts() {
            self.attempts += 1;
            self.check_cancellation()?;
            self.stages.push(Stage::ReducerAttempt);
            let p = self.reduce(&work.entries)?;
            self.check_cancellation()?;
            // SPEC ASM-10: post-reducer recheck, a restart does not consume an attempt.
            if let Some(exit) = self.recheck(false)? {
                return Ok(Some(exit));
            }
            self.check_cancellation()?;
            let v = self.verify(&p)?;
            let ps = self.size(&p)?;
            if !v.is_accepted() || ps >= work.size {
                return self.preserve_current(work);
            }
            if ps <= self.policy.hard_limit() {
                // SPEC ASM-10: reduced-proposal success, a restart does not consume.
                let exit = self.finalize(false, |run| run.success(Outcome::Reduced, p, ps, v))?;
                return Ok(Some(exit));
            }
            // Valid, strictly smaller, still over the hard limit: try again.
            work = SizedList {
                entries: p,
                size: ps,
            };
        }
        Ok(None)
    }

    /// `p = reducer(Request(work, req(work), policy, attempts))` (SPEC ASM-4): reducer errors
    /// propagate unchanged; returning nothing is an error.
    fn reduce(&mut self, work: &[Entry]) -> Result<Vec<Entry>, AssemblyError> {
        let request_required = self.req(work)?;
        let request = ReductionRequest {
            entries: work,
            required_entry_ids: &request_required,
            policy: self.policy,
            attempt_number: self.attempts,
        };
        self.reducer
            .reduce(&request)?
            .ok_or(AssemblyError::ReducerReturnedNothing)
    }

    /// After an invalid or non-progressing proposal (SPEC ASM-7): preserve the current list if
    /// it fits and verifies. `None`: on to the fallback with the remaining attempts unused.
    fn preserve_current(&mut self, work: SizedList) -> Result<Option<Exit>, AssemblyError> {
        if work.size > self.policy.hard_limit() {
            return Ok(None);
        }
        let pv = self.verify(&work.entries)?;
        if !pv.is_accepted() {
            return Ok(None);
        }
        // SPEC ASM-10: preserve-current, a restart does not consume.
        let exit = self.finalize(false, |run| {
            let outcome = if work.entries.len() == run.cur.len() {
                Outcome::WithinLimit
            } else {
                Outcome::Reduced
            };
            run.success(outcome, work.entries, work.size, pv)
        })?;
        Ok(Some(exit))
    }

    /// The deterministic fallback (SPEC ASM-9). Its restarts loop inside it and never re-run
    /// the trigger, eviction or reducer.
    fn fallback(&mut self) -> Result<AssemblyResult, AssemblyError> {
        self.stages.push(Stage::DeterministicFallback);
        loop {
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
                match self.fallback_candidate(&x)? {
                    ControlFlow::Break(Exit::Done(result)) => return Ok(result),
                    ControlFlow::Break(Exit::Restart) => continue,
                    ControlFlow::Continue(_) => {}
                }
            }
            // Required-only candidate.
            let cs = match self.fallback_candidate(&r)? {
                ControlFlow::Break(Exit::Done(result)) => return Ok(result),
                ControlFlow::Break(Exit::Restart) => continue,
                ControlFlow::Continue(cs) => cs,
            };
            self.check_cancellation()?;
            // SPEC ASM-12 (b): Irreducible reports the required-only size.
            return Ok(self.irreducible(cs, r));
        }
    }

    /// One candidate of SPEC ASM-9: `c` = the entries of `cur` with id in `ids` (by position),
    /// `cs = size(c)`; if `cs <= H` and `Verify(cur, c)` accepts, the finalization site (a
    /// restart consumes an attempt, SPEC ASM-10). `Continue(cs)`: not taken.
    fn fallback_candidate(
        &mut self,
        ids: &[EntryId],
    ) -> Result<ControlFlow<Exit, i32>, AssemblyError> {
        let c: Vec<Entry> = self
            .cur
            .iter()
            .filter(|e| ids.contains(e.id()))
            .cloned()
            .collect();
        let cs = self.size(&c)?;
        if cs <= self.policy.hard_limit() {
            let v = self.verify(&c)?;
            if v.is_accepted() {
                let exit = self.finalize(true, |run| {
                    run.success(Outcome::PreservationFallback, c, cs, v)
                })?;
                return Ok(ControlFlow::Break(exit));
            }
        }
        Ok(ControlFlow::Continue(cs))
    }

    /// A finalization site (SPEC ASM-5, ASM-10): `s = capture(); match check(s, consumes)`,
    /// returning the success `stable` builds when `STABLE`.
    fn finalize(
        &mut self,
        consumes: bool,
        stable: impl FnOnce(&mut Self) -> Result<AssemblyResult, AssemblyError>,
    ) -> Result<Exit, AssemblyError> {
        Ok(match self.recheck(consumes)? {
            Some(exit) => exit,
            None => Exit::Done(stable(self)?),
        })
    }

    /// `s = capture(); match check(s, consumes)` (SPEC ASM-5): `None` on `STABLE`, else
    /// `return churn(s)` (SPEC ASM-6) or a restart.
    fn recheck(&mut self, consumes: bool) -> Result<Option<Exit>, AssemblyError> {
        let s = self.capture()?;
        Ok(match self.check(s, consumes) {
            Check::Stable => None,
            Check::Restarted => Some(Exit::Restart),
            Check::Churn(s) => Some(Exit::Done(self.churn(s)?)),
        })
    }

    /// `check cancellation` (SPEC ASM-16): a cancellation is an error, never an outcome.
    fn check_cancellation(&self) -> Result<(), AssemblyError> {
        self.cancel.check()
    }

    /// `size(L)` = `Evaluate(L)`: check cancellation, sum, check again (SPEC POL-3, ASM-16).
    fn size(&self, entries: &[Entry]) -> Result<i32, AssemblyError> {
        Ok(evaluate(entries, self.policy, self.cancel)?.estimated_size)
    }

    /// `req(L)`: the required selection, which checks cancellation on entry (SPEC PRE-4, ASM-16).
    fn req(&self, entries: &[Entry]) -> Result<Vec<EntryId>, AssemblyError> {
        self.check_cancellation()?;
        required_ids(entries, self.policy.recent_message_retention_count())
    }

    /// `Verify(cur, proposed)`, which checks cancellation on entry (SPEC VER-5, ASM-16).
    fn verify(&self, proposed: &[Entry]) -> Result<VerificationResult, AssemblyError> {
        verify_cancellable(&self.cur, proposed, self.policy, self.cancel)
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
            // SPEC ASM-13: churn reports the newly observed version.
            latest_snapshot_version: s.version(),
            ..self.ended(
                Outcome::ConcurrentMutationLimit,
                final_estimated_size,
                required_entry_ids,
            )
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
        // SPEC ASM-3: a success fits the hard limit and its verification accepted.
        debug_assert!(final_estimated_size <= self.policy.hard_limit());
        debug_assert!(verification.is_accepted());
        Ok(AssemblyResult {
            final_entries: Some(entries),
            final_verification: Some(verification),
            ..self.ended(outcome, final_estimated_size, required_entry_ids)
        })
    }

    /// An `Irreducible` termination judging a list whose required ids are `required`.
    fn irreducible(
        &mut self,
        final_estimated_size: i32,
        required_entry_ids: Vec<EntryId>,
    ) -> AssemblyResult {
        self.ended(
            Outcome::Irreducible,
            final_estimated_size,
            required_entry_ids,
        )
    }

    /// The fields every result shares (SPEC ASM-3); a termination's: no entries, no
    /// verification, the latest consumed version.
    fn ended(
        &mut self,
        outcome: Outcome,
        final_estimated_size: i32,
        required_entry_ids: Vec<EntryId>,
    ) -> AssemblyResult {
        // SPEC ASM-11: AttemptCount <= M always.
        debug_assert!(self.attempts <= self.policy.maximum_compaction_attempts());
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

/// Assembles bounded context for one provider call (SPEC ASM-7).
pub fn assemble(
    policy: &Policy,
    provider: &mut dyn SnapshotProvider,
    reducer: &mut dyn Reducer,
    cancel: &CancellationToken,
) -> Result<AssemblyResult, AssemblyError> {
    // check cancellation
    cancel.check()?;
    // s0 = capture(); anchor = size(s0.entries)
    let stages = vec![Stage::SnapshotCaptured];
    let s0 = provider.capture()?;
    let anchor = evaluate(s0.entries(), policy, cancel)?.estimated_size;
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
