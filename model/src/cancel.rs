//! Cooperative cancellation (SPEC ASM-16).
//!
//! A [`CancellationToken`] is a shared flag. Spec functions observe it only at the check points
//! their clauses name (ASM-16 lists them); once set it stays set. Scripted providers and reducers may set it at a
//! chosen capture or attempt, which is how vectors name a cancellation point.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::assembly::AssemblyError;

/// A shared, monotone cancellation flag. Clones observe the same flag.
#[derive(Debug, Clone, Default)]
pub struct CancellationToken(Arc<AtomicBool>);

impl CancellationToken {
    /// A token that is not cancelled.
    pub fn new() -> CancellationToken {
        CancellationToken::default()
    }

    /// A token that is already cancelled.
    pub fn cancelled() -> CancellationToken {
        let t = CancellationToken::new();
        t.cancel();
        t
    }

    /// Requests cancellation; idempotent.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// `check cancellation` (SPEC ASM-16): the `Cancelled` error once cancellation was requested.
    pub fn check(&self) -> Result<(), AssemblyError> {
        if self.is_cancelled() {
            Err(AssemblyError::Cancelled)
        } else {
            Ok(())
        }
    }
}
