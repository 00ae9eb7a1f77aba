//! The injected workspace (SPEC section 17; ADR-0006 "IWorkspace is Foundry's sole
//! authoritative store for bulk artifact bytes").
//!
//! Three operations: read the body at a path (present, absent, failed), write, checkpoint.
//! Failures are opaque ([`WorkspaceFailure`] carries no text, SPEC ATR-4), so a host's error
//! message can never reach a diagnostics value, an event or an error rendering. Tests script
//! every failure with [`ScriptedWorkspace`] (crate feature `testing`).

#[cfg(feature = "testing")]
use std::collections::BTreeMap;

/// A workspace operation failed. Deliberately textless (SPEC ATR-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkspaceFailure;

/// The host's artifact store (SPEC RHY-3, OFF-2).
pub trait Workspace {
    /// The body stored at `path`: `Ok(None)` when absent.
    fn read(&mut self, path: &str) -> Result<Option<String>, WorkspaceFailure>;
    /// Stores `body` at `path`.
    fn write(&mut self, path: &str, body: &str) -> Result<(), WorkspaceFailure>;
    /// Makes the writes so far durable.
    fn checkpoint(&mut self) -> Result<(), WorkspaceFailure>;
}

#[cfg(feature = "testing")]
/// An in-memory workspace whose operations can be told to fail (the test seam).
#[derive(Debug, Clone, Default)]
pub struct ScriptedWorkspace {
    /// Stored bodies by path.
    pub files: BTreeMap<String, String>,
    /// Every read fails.
    pub fail_read: bool,
    /// Every write fails.
    pub fail_write: bool,
    /// Every checkpoint fails.
    pub fail_checkpoint: bool,
    /// Number of reads performed.
    pub reads: usize,
    /// Number of writes performed.
    pub writes: usize,
}

#[cfg(feature = "testing")]
impl Workspace for ScriptedWorkspace {
    fn read(&mut self, path: &str) -> Result<Option<String>, WorkspaceFailure> {
        self.reads += 1;
        if self.fail_read {
            return Err(WorkspaceFailure);
        }
        Ok(self.files.get(path).cloned())
    }

    fn write(&mut self, path: &str, body: &str) -> Result<(), WorkspaceFailure> {
        self.writes += 1;
        if self.fail_write {
            return Err(WorkspaceFailure);
        }
        self.files.insert(path.to_owned(), body.to_owned());
        Ok(())
    }

    fn checkpoint(&mut self) -> Result<(), WorkspaceFailure> {
        if self.fail_checkpoint {
            return Err(WorkspaceFailure);
        }
        Ok(())
    }
}
