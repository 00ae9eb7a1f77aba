//! Reporting artifact decisions through a progress accessor (SPEC EVT-7, ATR-6).
//!
//! ```text
//! no progress accessor            -> nothing reported, the decision unchanged
//! accessor, no active scope       -> nothing reported, the decision unchanged
//! accessor, innermost scope R     -> one event: R's envelope (workflow id, agent id?,
//!                                    parent agent id?, depth) and the next number of R's
//!                                    sequence source, with the decision's diagnostics value
//! child of R for agent A          -> R's workflow id and sequence source, agent A, parent
//!                                    agent R's agent id, depth R's + 1
//! ```
//!
//! Scopes nest as a stack: entering pushes a reporter, leaving pops it, and the accessor always
//! answers the top. Sequence sources are counters from 1, identified by index; a root reporter
//! takes a fresh one unless it names one already used (several reporters sharing one source).

use std::sync::Arc;

use hybrid_compaction_model::artifact_diagnostics::{ArtifactDiagnostics, ArtifactEvent};
use hybrid_compaction_model::seam::ReporterFields;

/// One active reporter scope: the reporter's identity and its sequence source.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Scope {
    identity: ReporterFields,
    source: usize,
}

/// An artifact event as the progress accessor's reporter emitted it (SPEC ATR-6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportedArtifactEvent {
    /// The number taken from the reporter's sequence source at emission.
    pub sequence: u64,
    /// The reporter's identity.
    pub identity: ReporterFields,
    /// The decision's diagnostics value (the same allocation as the result's, ATR-3).
    pub diagnostics: Arc<ArtifactDiagnostics>,
}

/// Why a scope step cannot be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// A child reporter needs a current reporter to be the child of.
    #[error("a child reporter needs an active reporter scope")]
    NoParent,
    /// Leaving needs an active scope.
    #[error("no active reporter scope to leave")]
    NothingToLeave,
}

/// The reporter scopes of one logical flow and the progress accessor answering them.
#[derive(Debug, Default)]
pub struct ReporterScopes {
    stack: Vec<Scope>,
    /// The next number of each sequence source, by index.
    sources: Vec<u64>,
    /// The source of each named sharing group.
    named: Vec<(String, usize)>,
}

impl ReporterScopes {
    /// No scope active.
    pub fn new() -> ReporterScopes {
        ReporterScopes::default()
    }

    /// Enters a root reporter's scope (SPEC EVT-3): its own sequence source, or the one of the
    /// reporters entered earlier under the same `shared` name.
    pub fn enter(&mut self, identity: ReporterFields, shared: Option<&str>) {
        let existing = shared.and_then(|n| self.named.iter().find(|(m, _)| m == n));
        let source = match existing {
            Some(&(_, s)) => s,
            None => {
                self.sources.push(1);
                let s = self.sources.len() - 1;
                if let Some(n) = shared {
                    self.named.push((n.to_owned(), s));
                }
                s
            }
        };
        self.stack.push(Scope { identity, source });
    }

    /// Enters the scope of a child of the current reporter for `agent_id` (SPEC EVT-7).
    pub fn enter_child(&mut self, agent_id: &str) -> Result<(), ScopeError> {
        let parent = self.stack.last().ok_or(ScopeError::NoParent)?;
        let identity = ReporterFields {
            workflow_id: parent.identity.workflow_id.clone(),
            agent_id: Some(agent_id.to_owned()),
            parent_agent_id: parent.identity.agent_id.clone(),
            depth: parent.identity.depth.saturating_add(1),
        };
        let source = parent.source;
        self.stack.push(Scope { identity, source });
        Ok(())
    }

    /// Leaves the innermost scope.
    pub fn leave(&mut self) -> Result<(), ScopeError> {
        self.stack
            .pop()
            .map(|_| ())
            .ok_or(ScopeError::NothingToLeave)
    }

    /// The progress accessor reports `event` through the current reporter (SPEC ATR-6): `None`
    /// outside every scope, where nothing is reported.
    pub fn report(&mut self, event: ArtifactEvent) -> Option<ReportedArtifactEvent> {
        let scope = self.stack.last()?;
        let next = self.sources.get_mut(scope.source)?;
        let sequence = *next;
        *next = next.saturating_add(1);
        Some(ReportedArtifactEvent {
            sequence,
            identity: scope.identity.clone(),
            diagnostics: event.diagnostics,
        })
    }
}
