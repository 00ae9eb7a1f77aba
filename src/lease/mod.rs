//! Non-retransmission leases: run scopes, the per-run coordinator, the one-call gate and the
//! lease-filtering snapshot provider (SPEC LSE-1 .. LSE-10; C# S55-S63).
//!
//! ## What it guarantees
//! A rehydrated artifact body (a `RecoverableContextSegment` entry) reaches the provider at most
//! once per outer run; a failed or cancelled call gives its reservations back so a later call can
//! still deliver the body; reserved-but-evicted bodies are released at commit, not delivered
//! (SPEC LSE-9).
//!
//! ## How the pieces fit
//! ```text
//!  RunScope (one logical call flow)         Run (Arc; one per outer run, shared by nested calls)
//!  ----------------------------------      ----------------------------------------------------
//!  begin_run()  -> fresh Run, restored      Mutex<RunInner> { ledger: delivered / reserved /
//!                  when the guard drops                        per-lease index / revisions,
//!  ensure_run() -> reuse or call-local                        gate_occupied, next_lease }
//!  fork()       -> child flow, same Run     Condvar gate_cv (waiters of the one-call gate)
//!
//!  one provider call (SPEC LSE-10):
//!    scope.ensure_run() -> run.enter(&cancel) -> CallSlot { lease }     (gate, SPEC LSE-7)
//!      -> slot.filtering_provider(inner)  (reserves bodies per capture, SPEC LSE-8)
//!      -> assemble -> dispatch
//!      -> slot.complete(forwarded) | slot.release() | drop(slot)        (SPEC LSE-3, LSE-4)
//!    leaving the gate happens in the same critical section as the commit or release.
//! ```
//!
//! ## Run scopes without thread-locals (SPEC LSE-6)
//! The reference implementation keeps the current run in an `AsyncLocal`, which flows into child
//! tasks and is restored when a scope ends. Here the flow is explicit: a [`RunScope`] value is the
//! "current logical call flow". [`RunScope::begin_run`] / [`RunScope::ensure_run`] return a
//! [`ScopeGuard`] whose drop restores the previous run (the `using` block of the reference);
//! [`RunScope::fork`] is what an `AsyncLocal` does when a child task starts: the child flow sees
//! the same [`Run`], so nested calls of one run share state, while flows that began their own
//! runs are independent. Operations that need a run and find none return
//! [`LeaseError::NoActiveRun`] (invalid-operation); [`RunScope::release`] is a no-op instead.
//!
//! ## Concurrency design
//! Everything a run owns sits behind **one** lock ([`crate::sync::Mutex`]): the ledger and the gate
//! flag. There is no lock ordering to get wrong, every coordinator operation is one critical
//! section (so it is linearizable to the sequential model `hybrid_compaction_spec::lease`),
//! and commit-then-leave is atomic. The gate's waiters sleep on a condition variable and
//! re-check, on every wake-up and under the lock, first the caller's cancellation token and then
//! the slot. Cancellation needs a wake-up: [`Run::cancel_and_wake`] sets the token and
//! notifies inside the run's critical section, so a waiter either sees the token before it
//! sleeps or is woken after it was set (no lost wake-up, no timeout needed, which is what lets
//! loom model it; loom cannot see the plain atomic inside the token, but it sees the lock that
//! orders every access that matters). Leaving and cancelling use `notify_all`, so a cancelled
//! waiter that consumes a wake-up cannot strand another waiter (a seeded `notify_one` is caught
//! by loom model (b), see `docs/LOOM.md`).
//!
//! Runs never share a lock, so runs never block each other. The lease ids come from a per-run
//! counter (the reference uses random GUIDs; uniqueness within the run is all that matters).
//!
//! The module is written against [`crate::sync`], so `RUSTFLAGS="--cfg loom"` model-checks this
//! exact code (see `docs/LOOM.md`).

mod filter;
mod run;
mod scope;

pub use filter::FilteringProvider;
pub use hybrid_compaction_model::lease::{LeaseError, LeaseId, Revision};
pub use run::{CallSlot, Run};
pub use scope::{RunScope, ScopeGuard};
