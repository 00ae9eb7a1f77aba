//! loom models of the non-retransmission coordinator, the one-call gate, run independence and
//! the lease-filtering provider (SPEC LSE-1 .. LSE-9). See `docs/LOOM.md`.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p hybrid-compaction-loom -- --nocapture`.
//! Without `--cfg loom` this file compiles to nothing.
#![cfg(loom)]

use std::sync::atomic::Ordering::SeqCst;

use hybrid_compaction::lease::{LeaseError, LeaseId, Run, RunScope};
use hybrid_compaction_loom::{explore, recovered_body};
use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::message::Message;
use hybrid_compaction_model::snapshot::{SnapshotProvider, StaticProvider};
use loom::sync::atomic::AtomicUsize as LoomAtomicUsize;
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

fn digest(name: &str) -> Digest {
    Digest::of(name)
}

/// What one racing call did with one digest.
#[derive(Debug, Default, Clone, Copy)]
struct Took {
    /// `try_reserve` returned `true` at least once.
    reserved: bool,
    /// The call committed the digest as forwarded while holding it.
    delivered: bool,
}

/// One call of model (a): reserve `digests` in order with `lease`, reading revisions before and
/// after each step (they must never decrease), then commit forwarding `forward` or release.
fn racing_call(
    run: &Run,
    lease: LeaseId,
    digests: &[Digest],
    forward: Option<&[Digest]>,
) -> Vec<Took> {
    let mut took = vec![Took::default(); digests.len()];
    let mut seen: Vec<u64> = digests.iter().map(|d| run.revision(*d)).collect();
    for (i, d) in digests.iter().enumerate() {
        let ok = run.try_reserve(*d, lease).expect("no overflow");
        took[i].reserved = ok;
        if ok {
            // SPEC LSE-2: once reserved by this lease, reserving again is idempotent.
            assert_eq!(run.try_reserve(*d, lease), Ok(true), "re-reserve by owner");
            assert_eq!(run.reserved_by(*d), Some(lease));
        }
        let now = run.revision(*d);
        assert!(now >= seen[i], "SPEC LSE-5: revision of {d} went back");
        seen[i] = now;
    }
    match forward {
        Some(fwd) => {
            run.complete(lease, fwd).expect("no overflow");
            for (i, d) in digests.iter().enumerate() {
                took[i].delivered = took[i].reserved && fwd.contains(d);
            }
        }
        None => run.release(lease).expect("no overflow"),
    }
    for (i, d) in digests.iter().enumerate() {
        let now = run.revision(*d);
        assert!(now >= seen[i], "SPEC LSE-5: revision of {d} went back");
        if took[i].reserved {
            // The lease no longer holds it after commit/release (SPEC LSE-3, LSE-4).
            assert_ne!(run.reserved_by(*d), Some(lease));
        }
    }
    took
}

/// Model (a): three calls of one run, no gate (the coordinator must be safe on its own: defence
/// in depth, SPEC LSE-7 note), race to reserve overlapping digests; one commits delivering `x`
/// (and releasing `y`, reserved but evicted), one fails (releases), one commits delivering both.
/// Checks: no digest delivered twice (SPEC LSE-9); revisions never decrease and end at exactly
/// 2 x (number of fresh reservations) (every reservation and every unreservation bumps once,
/// none is lost: SPEC LSE-2..LSE-5); no reservation survives; a digest not delivered is
/// reservable again, a delivered one is not (SPEC LSE-2, LSE-9).
#[test]
fn a_coordinator_calls_race_on_overlapping_digests() {
    explore("a_coordinator_race", 3, || {
        let x = digest("x");
        let y = digest("y");
        let run = Run::new();
        let (r1, r2) = (run.clone(), run.clone());
        let t1 = thread::spawn(move || racing_call(&r1, LeaseId(1), &[x, y], Some(&[x])));
        let t2 = thread::spawn(move || racing_call(&r2, LeaseId(2), &[y, x], None));
        let t3 = racing_call(&run, LeaseId(3), &[x, y], Some(&[x, y]));
        let t1 = t1.join().unwrap();
        let t2 = t2.join().unwrap();
        for (i, d) in [x, y].into_iter().enumerate() {
            // t2 reserved in the order [y, x].
            let calls = [t1[i], t2[1 - i], t3[i]];
            let deliveries = calls.iter().filter(|t| t.delivered).count();
            assert!(
                deliveries <= 1,
                "SPEC LSE-9: {d} delivered {deliveries} times"
            );
            assert_eq!(run.is_delivered(d), deliveries == 1);
            let fresh = calls.iter().filter(|t| t.reserved).count() as u64;
            assert_eq!(
                run.revision(d),
                2 * fresh,
                "SPEC LSE-5: lost revision bump on {d}"
            );
            assert_eq!(run.reserved_by(d), None, "reservation survived its lease");
            // Released (never delivered) digests are reservable again; delivered ones never.
            assert_eq!(run.try_reserve(d, LeaseId(9)), Ok(deliveries == 0));
        }
    });
}

/// Model (b): the one-call gate (SPEC LSE-7). The main call holds the slot; two more calls of the
/// same run arrive; one of them is cancelled (set and woken by the main thread, still holding the
/// slot) while it waits or before it arrives. Checks: at most one call is ever inside (an atomic
/// occupancy counter); the cancelled call is never admitted (the slot was busy from before it
/// arrived until after its token was set) and returns `Cancelled` having taken no slot, no lease
/// and no reservation; the other waiter is always admitted (no lost wake-up: loom reports a
/// deadlock otherwise); at the end the gate is free, no reservation remains and exactly two
/// leases were handed out.
#[test]
fn b_gate_admits_one_call_and_cancelled_waiter_leaves_no_trace() {
    explore("b_gate_cancel", 3, || {
        let d = digest("body");
        let run = Run::new();
        let inside = Arc::new(LoomAtomicUsize::new(0));
        let call =
            move |run: &Run, inside: &LoomAtomicUsize, slot: hybrid_compaction::lease::CallSlot| {
                assert_eq!(
                    inside.fetch_add(1, SeqCst),
                    0,
                    "SPEC LSE-7: two calls inside the gate"
                );
                let lease = slot.lease();
                let got = run.try_reserve(d, lease).unwrap();
                // Only one call is inside, and every earlier call finished: nobody else holds d.
                assert!(got || run.is_delivered(d));
                assert_eq!(inside.fetch_sub(1, SeqCst), 1);
                slot.release().unwrap();
            };
        let main_slot = run.enter(&CancellationToken::new()).unwrap();
        inside.fetch_add(1, SeqCst);
        // The main call holds the body too; it must be released before the gate is left.
        assert_eq!(run.try_reserve(d, main_slot.lease()), Ok(true));

        let (run_b, inside_b) = (run.clone(), inside.clone());
        let waiter = thread::spawn(move || {
            let slot = run_b
                .enter(&CancellationToken::new())
                .expect("never cancelled");
            call(&run_b, &inside_b, slot);
        });
        let token = CancellationToken::new();
        let (run_c, inside_c, token_c) = (run.clone(), inside.clone(), token.clone());
        let cancelled = thread::spawn(move || match run_c.enter(&token_c) {
            Ok(slot) => {
                call(&run_c, &inside_c, slot);
                true
            }
            Err(e) => {
                assert_eq!(e, LeaseError::Cancelled);
                false
            }
        });

        run.cancel_and_wake(&token);
        inside.fetch_sub(1, SeqCst);
        main_slot.release().unwrap();

        waiter.join().unwrap();
        let c_admitted = cancelled.join().unwrap();
        // The slot was held from before c arrived until after c's token was set, so c can
        // only ever observe the cancellation: it must never be admitted.
        assert!(
            !c_admitted,
            "SPEC LSE-7: a waiter cancelled while waiting was admitted"
        );
        assert!(!run.gate_occupied(), "gate left occupied");
        assert_eq!(run.reserved_by(d), None, "a reservation survived");
        // main + waiter + (c if admitted) leases were handed out, nothing for a cancelled c.
        let expected = 2 + u64::from(c_admitted);
        assert_eq!(
            run.new_lease(),
            LeaseId(expected),
            "a cancelled waiter took a lease"
        );
        // Every admitted call (main and the waiter) reserved d fresh and released it.
        assert_eq!(run.revision(d), 2 * expected);
    });
}

/// Model (c): concurrent runs never affect each other (SPEC LSE-6, LSE-7). The root flow has an
/// active run; two child flows each begin their own run and make a call delivering the same
/// digest. Call 1 keeps its gate slot until call 2 has finished its whole call (so a gate or lock
/// shared between runs deadlocks, which loom reports). Checks: both calls reserve and deliver the
/// digest in their own run; the root run is untouched; each flow's run is restored on scope end.
#[test]
fn c_concurrent_runs_are_independent() {
    explore("c_runs_independent", 3, || {
        let d = digest("shared body");
        let mut root = RunScope::new();
        let root_guard = root.begin_run();
        let root_run = root_guard.current().unwrap().clone();
        let done2 = Arc::new((Mutex::new(false), Condvar::new()));

        let flow1 = root_guard.fork();
        let done = done2.clone();
        let root_run1 = root_run.clone();
        let t1 = thread::spawn(move || {
            let mut flow = flow1;
            let g = flow.begin_run();
            let slot = g.enter(&CancellationToken::new()).unwrap();
            assert_eq!(
                g.try_reserve(d, slot.lease()),
                Ok(true),
                "run 1 blocked by run 2"
            );
            // Hold the slot until run 2 finished a whole call.
            let (lock, cv) = &*done;
            let mut finished = lock.lock().unwrap();
            while !*finished {
                finished = cv.wait(finished).unwrap();
            }
            drop(finished);
            slot.complete(&[d]).unwrap();
            assert!(g.current().unwrap().is_delivered(d));
            assert!(!g.current().unwrap().same_run(&root_run1));
            drop(g);
            // SPEC LSE-6: ending the scope restores the flow's previous (root) run.
            assert!(flow.current().unwrap().same_run(&root_run1));
        });
        let flow2 = root_guard.fork();
        let done = done2.clone();
        let t2 = thread::spawn(move || {
            let mut flow = flow2;
            let g = flow.begin_run();
            let slot = g.enter(&CancellationToken::new()).unwrap();
            assert_eq!(
                g.try_reserve(d, slot.lease()),
                Ok(true),
                "run 2 saw run 1's lease"
            );
            slot.complete(&[d]).unwrap();
            assert!(g.current().unwrap().is_delivered(d));
            let (lock, cv) = &*done;
            *lock.lock().unwrap() = true;
            cv.notify_all();
        });
        t1.join().unwrap();
        t2.join().unwrap();
        assert_eq!(root_run.revision(d), 0, "a child run touched the root run");
        assert!(!root_run.is_delivered(d));
        assert!(root_guard.current().unwrap().same_run(&root_run));
    });
}

/// Model (e): two calls of one run capture the same recoverable body through their filtering
/// providers, concurrently and without the gate (SPEC LSE-8, defence in depth). Call A captures
/// and then fails (releases); call B captures twice. Checks: the body is kept by at most one
/// provider at any time; a capture that kept the body is followed by one with the same effective
/// version if nothing else changed (own reservations never restart); if B's two captures
/// disagree on whether the body is kept, B's effective version changed (a released body forces
/// a restart that picks it up); B commits what it kept, so the body is delivered at most once.
#[test]
fn e_filtering_provider_release_forces_restart() {
    explore("e_filter_release", 3, || {
        let seg = recovered_body("seg", "the body");
        let d = Digest::of("the body");
        let other = Entry::new(
            "m",
            EntryKind::ConversationalMessage,
            Message::text("user", "hi"),
        )
        .unwrap();
        let run = Run::new();
        let history = vec![other, seg];

        let run_a = run.clone();
        let hist_a = history.clone();
        let a = thread::spawn(move || {
            let lease = run_a.new_lease();
            let mut p = hybrid_compaction::lease::FilteringProvider::new(
                StaticProvider::new(hist_a),
                run_a.clone(),
                lease,
            );
            let s = p.capture().unwrap();
            let kept = s.entries().len() == 2;
            run_a.release(lease).unwrap();
            kept
        });
        let lease_b = run.new_lease();
        let mut p = hybrid_compaction::lease::FilteringProvider::new(
            StaticProvider::new(history),
            run.clone(),
            lease_b,
        );
        let s1 = p.capture().unwrap();
        let s2 = p.capture().unwrap();
        let kept1 = s1.entries().len() == 2;
        let kept2 = s2.entries().len() == 2;
        assert_eq!(s1.version(), 0, "SPEC LSE-8: first capture is version 0");
        if kept1 {
            // Held by B since capture 1: capture 2 sees the same signature, no restart.
            assert!(kept2);
            assert_eq!(
                s2.version(),
                0,
                "SPEC LSE-8: own reservation caused a restart"
            );
        }
        if kept1 != kept2 {
            assert_eq!(
                s2.version(),
                1,
                "SPEC LSE-8: released body did not force a restart"
            );
        }
        let forwarded: Vec<Digest> = if kept2 { vec![d] } else { vec![] };
        run.complete(lease_b, &forwarded).unwrap();
        let a_kept = a.join().unwrap();
        // Every fresh reservation (A's, B's) and every unreservation bumped exactly once; B
        // reserved at most once because it holds what it reserved until its commit.
        let fresh = u64::from(a_kept) + u64::from(kept2);
        assert_eq!(
            run.revision(d),
            2 * fresh,
            "SPEC LSE-5: lost or extra revision bump"
        );
        assert_eq!(run.is_delivered(d), kept2, "delivered iff B forwarded it");
        assert_eq!(run.reserved_by(d), None);
    });
}
