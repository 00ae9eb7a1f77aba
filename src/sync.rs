//! Synchronization shim: `std` normally, `loom` under `--cfg loom`.
//!
//! The lease coordinator ([`crate::lease`]) is written once against these names. A normal build
//! re-exports the `std` primitives; a build with `RUSTFLAGS="--cfg loom"` re-exports loom's
//! instrumented ones, so the loom models (package `hybrid-compaction-loom`, `tests/loom/`)
//! explore every interleaving of the very code that ships (the pattern tokio and bytes use). The
//! switch is plain `cfg(loom)`, not `cfg(test)`, because integration tests build the library
//! without `cfg(test)`; the cfg is declared in the workspace `[lints.rust] unexpected_cfgs` table.
//!
//! Only what the lease module needs is re-exported: `Arc`, `Mutex`, `MutexGuard`, `Condvar`
//! and `thread` (for tests). Lock poisoning is mapped away by [`lock`] and [`wait`]: the state a
//! lock protects is always left consistent before any call that could panic, so a poisoned lock
//! still guards valid data and recovering its guard is sound.

#[cfg(loom)]
pub use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub use loom::thread;

#[cfg(not(loom))]
pub use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub use std::thread;

/// Locks `m`, recovering the guard if a previous holder panicked (see the module docs).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Waits on `cv`, recovering the guard if a previous holder panicked (see the module docs).
pub fn wait<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    match cv.wait(guard) {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}
