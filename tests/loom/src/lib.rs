//! # hybrid-compaction-loom: the loom models and their harness
//!
//! The loom models of the lease coordinator, the one-call gate, run independence, the
//! lease-filtering provider and mutation-restart (`tests/loom_lease.rs`, `tests/loom_restart.rs`
//! of this package; `docs/LOOM.md`). They are a package of their own so that a loom build, which
//! recompiles every crate in release with `--cfg loom`, compiles only what they use: the library
//! without default features, the vocabulary, the executable spec and loom. Run them with
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release -p hybrid-compaction-loom
//! ```
//!
//! This library is the harness both model files import. Without `--cfg loom` it is empty, and
//! so are the models (`#![cfg(loom)]`).
//!
//! [`explore`] runs one model under loom: it applies the model's preemption bound unless
//! `LOOM_MAX_PREEMPTIONS` overrides it, counts the interleavings, prints
//! `loom model <name>: N interleavings explored (preemption bound B) in T`, and, when an
//! interleaving fails, `loom model <name>: failing interleaving found after N interleavings`
//! before the panic (the "caught after N" figures of the seeded bugs in `docs/LOOM.md`).
//! [`recovered_body`] builds the `RecoverableContextSegment` entry both files put in a history.
//!
//! cargo runs the tests of one file on several threads at once, so every count lives in the
//! [`Explored`] of its own model rather than in a static.

// The docs above link the harness's items, which exist only under `--cfg loom`; a docs build
// without it sees an empty crate and those links dangle.
#![cfg_attr(not(loom), allow(rustdoc::broken_intra_doc_links))]
#![cfg(loom)]

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::entry::{Entry, RecoverableSegment};

/// What one model explored.
#[derive(Debug, Clone, Copy)]
pub struct Explored {
    /// Interleavings run to completion (every one passed).
    pub interleavings: usize,
    /// The preemption bound in force (`None`: unbounded, or set by `LOOM_MAX_PREEMPTIONS`).
    pub bound: Option<usize>,
    /// Wall-clock time of the whole exploration.
    pub elapsed: Duration,
}

/// Runs `f` once per interleaving loom explores, with preemption bound `bound` unless
/// `LOOM_MAX_PREEMPTIONS` overrides it; prints and returns what was explored. A failing
/// interleaving panics (after naming the model and the count so far).
pub fn explore(name: &'static str, bound: usize, f: impl Fn() + Sync + Send + 'static) -> Explored {
    let mut builder = loom::model::Builder::new();
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_none() {
        builder.preemption_bound = Some(bound);
    }
    let counter = Arc::new(AtomicUsize::new(0));
    failure_report::set(name, counter.clone());
    let started = Instant::now();
    let count = counter.clone();
    builder.check(move || {
        count.fetch_add(1, SeqCst);
        f();
    });
    failure_report::clear();
    let explored = Explored {
        interleavings: counter.load(SeqCst),
        bound: builder.preemption_bound,
        elapsed: started.elapsed(),
    };
    eprintln!(
        "loom model {name}: {} interleavings explored (preemption bound {:?}) in {:.1?}",
        explored.interleavings, explored.bound, explored.elapsed
    );
    explored
}

/// A `RecoverableContextSegment` entry `id` holding `body`, with the canonical reference of the
/// body's own digest (SPEC ENT-6).
pub fn recovered_body(id: &str, body: &str) -> Entry {
    Entry::recoverable(
        id,
        RecoverableSegment {
            reference: ArtifactReference::to_content(body),
            body: body.to_owned(),
        },
    )
    .expect("a well-formed recovered segment")
}

/// Names the model a failing interleaving belongs to. loom runs every thread of an execution as
/// a coroutine on the thread that called `check`, so a thread-local identifies the model even
/// while several models run on parallel test threads.
mod failure_report {
    use std::cell::RefCell;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::{Arc, Once};

    thread_local! {
        static CURRENT: RefCell<Option<(&'static str, Arc<AtomicUsize>)>> =
            const { RefCell::new(None) };
    }

    /// Names the model this test thread is checking; installs the panic hook once.
    pub fn set(name: &'static str, counter: Arc<AtomicUsize>) {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                let _ = CURRENT.try_with(|c| {
                    if let Ok(current) = c.try_borrow() {
                        if let Some((name, counter)) = current.as_ref() {
                            eprintln!(
                                "loom model {name}: failing interleaving found after {} \
                                 interleavings",
                                counter.load(SeqCst)
                            );
                        }
                    }
                });
                previous(info);
            }));
        });
        CURRENT.with(|c| *c.borrow_mut() = Some((name, counter)));
    }

    /// Forgets the model once its exploration passed.
    pub fn clear() {
        CURRENT.with(|c| *c.borrow_mut() = None);
    }
}
