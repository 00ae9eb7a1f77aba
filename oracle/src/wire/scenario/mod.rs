//! # Scenario operations: diagnostics records, the bridge, leases and the node on the wire
//!
//! Four operations that make every stateful clause checkable by another implementation:
//!
//! * `diagnostics`: a record given field by field, categorical values by name or ordinal so
//!   that undefined values are expressible; the answer is the record or the DIA-3 / DIA-4 typed
//!   error.
//! * `bridge`: the upstream-reducer bridge on its own (BRG-1 .. BRG-3), one call per scripted
//!   upstream answer, including an upstream that throws cancellation.
//! * `leases`: a scenario of run scopes, gate entries, reservations, commits, releases and
//!   filtered captures (LSE-1 .. LSE-10) with the observable state of the run after each step.
//! * `node`: a node driven through provider calls and run steps (NODE-1 .. NODE-6, EVT-1 ..
//!   EVT-6), answered with each call's event stream, dispatched messages, forwarded digests,
//!   typed errors and the run's state.
//!
//! ```text
//!  case (scenario::case) --exec--> Scenarios (Model | Engine) --worlds--> records --exec--> output
//!                                   |  model: hybrid_compaction_spec (lease, assemble, bridge,
//!                                   |         classify, diagnostics) composed per NODE-2/3
//!                                   |  engine: hybrid_compaction::lease / ::node
//! ```
//!
//! The seam is [`Scenarios`], a supertrait of [`crate::wire::exec::Implementation`]: each
//! implementation hands out its own worlds ([`leases::LeaseWorld`], [`node::NodeWorld`]); the
//! driver in [`exec`] owns names, placeholders and rendering, so two answers differ only where
//! the implementations do.

pub mod case;
pub mod drive_leases;
pub mod drive_node;
pub mod exec;
pub mod leases;
pub mod node;
pub mod output;
pub mod records;

use hybrid_compaction_model::assembly::AssemblyError;
use hybrid_compaction_model::diagnostics::RecordFields;
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::policy::Policy;

use self::case::ReporterInput;
use self::leases::{LeaseWorld, LibraryLeases, SpecLeases};
use self::node::{LibraryNode, LibrarySelection, NodeWorld, SpecNode};
use super::convert::answer;
use super::exec::{Engine, Model, WireUpstream};
use super::output::ErrorOutput;

/// What an implementation contributes to the scenario operations.
pub trait Scenarios {
    /// The record's constructor checks (SPEC DIA-3, DIA-4). Both implementations build their
    /// records through the one vocabulary type, so both answer with its checks.
    fn validate_record(&self, fields: &RecordFields) -> Result<(), AssemblyError> {
        fields.validate()
    }
    /// A fresh lease world: one flow (`main`), no run (SPEC LSE-6).
    fn lease_world(&self) -> Box<dyn LeaseWorld>;
    /// Node selection (SPEC NODE-1): `Ok(None)` is `Disabled`; an argument error when the switch
    /// and the options disagree.
    fn node_world(
        &self,
        enabled: bool,
        options: Option<(Policy, WireUpstream)>,
        reporter: Option<&ReporterInput>,
    ) -> Result<Option<Box<dyn NodeWorld>>, ErrorOutput>;
}

impl Scenarios for Model {
    fn lease_world(&self) -> Box<dyn LeaseWorld> {
        Box::new(SpecLeases::default())
    }

    fn node_world(
        &self,
        enabled: bool,
        options: Option<(Policy, WireUpstream)>,
        reporter: Option<&ReporterInput>,
    ) -> Result<Option<Box<dyn NodeWorld>>, ErrorOutput> {
        // SPEC NODE-1: the switch and the options must agree.
        match (enabled, options) {
            (true, Some((policy, reducer))) => Ok(Some(Box::new(SpecNode::new(
                policy,
                reducer,
                reporter.cloned(),
            )))),
            (false, None) => Ok(None),
            (true, None) => Err(answer(
                ErrorKind::InvalidArgument,
                None,
                None,
                "hybrid compaction is enabled but no compaction options were supplied",
            )),
            (false, Some(_)) => Err(answer(
                ErrorKind::InvalidArgument,
                None,
                None,
                "compaction options were supplied but hybrid compaction is not enabled",
            )),
        }
    }
}

impl Scenarios for Engine {
    fn lease_world(&self) -> Box<dyn LeaseWorld> {
        Box::new(LibraryLeases::default())
    }

    fn node_world(
        &self,
        enabled: bool,
        options: Option<(Policy, WireUpstream)>,
        reporter: Option<&ReporterInput>,
    ) -> Result<Option<Box<dyn NodeWorld>>, ErrorOutput> {
        Ok(match LibraryNode::select(enabled, options, reporter)? {
            LibrarySelection::Installed(n) => Some(Box::new(n)),
            LibrarySelection::Disabled => None,
        })
    }
}
