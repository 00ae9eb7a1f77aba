//! `leases`: a scenario of run scopes, gate entries, reservations, commits, releases and filtered
//! captures (SPEC LSE-1 .. LSE-10), answered with the observable state of the run after each
//! step. Flows, calls and leases are named by the case; bodies stand for their digests
//! (SHA-256 of the UTF-8 body, SPEC ART-1). The case and answer types are here; [`drive`]
//! checks the names and steps the implementation's lease world.

use std::collections::BTreeMap;

use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::error::{CaseError, ErrorOutput};
use crate::wire::input::EntryInput;
use crate::wire::runs::RunOutput;

pub(crate) mod drive;

/// Inputs of the `leases` operation: a scenario over the non-retransmission coordinator (SPEC
/// LSE-1 .. LSE-10). Flows, calls and leases are named by the case; bodies stand for their
/// digests (SHA-256 of the UTF-8 body, SPEC ART-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeasesCase {
    /// The steps, in order.
    pub steps: Vec<LeaseStepInput>,
}

/// One step of a `leases` scenario. `flow` defaults to `main` (the one flow that exists at the
/// start, with no active run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum LeaseStepInput {
    /// `BeginRun` on the flow (SPEC LSE-6): a fresh run (`R1`, `R2`, ... in creation order).
    BeginRun(BeginRunInput),
    /// `EnsureRunScope` on the flow (SPEC LSE-6).
    EnsureRun(FlowInput),
    /// Ends the flow's innermost scope (SPEC LSE-6).
    EndScope(FlowInput),
    /// A new flow `into` that sees the flow's active run (SPEC LSE-6, a child task).
    Fork(ForkInput),
    /// `TryReserve(digest(body), lease)` on the flow's run (SPEC LSE-2).
    Reserve(ReserveInput),
    /// `Complete(lease, forwarded)` on the flow's run (SPEC LSE-3).
    Complete(CompleteInput),
    /// `Release(lease)` on the flow's run (SPEC LSE-4).
    Release(LeaseRefInput),
    /// `GetRevision(digest(body))` on the flow's run (SPEC LSE-5).
    Revision(BodyRefInput),
    /// A provider call enters the flow's run gate and takes a fresh lease named `call` (SPEC
    /// LSE-7): `admitted`, or `waiting` while another call holds the gate.
    Enter(EnterInput),
    /// Cancels a waiting call and wakes it (SPEC LSE-7).
    CancelWaiter(CallRefInput),
    /// The call commits its lease with the forwarded bodies and leaves the gate (SPEC LSE-3,
    /// LSE-10).
    Commit(CommitInput),
    /// The call releases its lease and leaves the gate (SPEC LSE-4, LSE-10).
    ReleaseCall(CallRefInput),
    /// The call is abandoned unfinished: its lease is released and the gate left (SPEC LSE-10).
    Abandon(CallRefInput),
    /// One capture of the call's lease-filtering provider over this inner snapshot (SPEC
    /// LSE-8).
    Capture(CaptureInput),
}

/// A flow name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FlowInput {
    /// The flow (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
}

/// `beginRun`: a flow and optional starting revision counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BeginRunInput {
    /// The flow (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// Starting revision per body (a seam to reach the overflow rule of SPEC LSE-5; a real run
    /// starts every counter at 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revisions: Option<BTreeMap<String, u64>>,
}

/// `fork`: the parent flow and the new flow's name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForkInput {
    /// The parent flow (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// The new flow's name (not used before).
    pub into: String,
}

/// `reserve`: a body and a lease.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReserveInput {
    /// The flow (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// The body whose digest is reserved.
    pub body: String,
    /// The lease: a call's name (its lease) or any other name (a lease of its own).
    pub lease: String,
}

/// `complete`: a lease and the forwarded bodies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompleteInput {
    /// The flow (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// The lease.
    pub lease: String,
    /// The forwarded bodies.
    #[serde(default)]
    pub forwarded: Vec<String>,
}

/// `release`: a lease.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaseRefInput {
    /// The flow (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// The lease.
    pub lease: String,
}

/// `revision`: a body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BodyRefInput {
    /// The flow (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// The body.
    pub body: String,
}

/// `enter`: a new call on a flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnterInput {
    /// The flow (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// The call's name (not used before); also its lease's name.
    pub call: String,
    /// The call's token is already cancelled on arrival.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
}

/// A call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallRefInput {
    /// The call's name.
    pub call: String,
}

/// `commit`: a call and its forwarded bodies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommitInput {
    /// The call's name.
    pub call: String,
    /// The forwarded bodies.
    #[serde(default)]
    pub forwarded: Vec<String>,
}

/// `capture`: the inner snapshot one capture of the call's filtering provider sees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CaptureInput {
    /// The call's name.
    pub call: String,
    /// The inner snapshot's version.
    pub version: i64,
    /// The inner snapshot's entries.
    pub entries: Vec<EntryInput>,
}

/// One capture of a filtering provider (SPEC LSE-8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CaptureOutput {
    /// The effective version.
    pub version: i64,
    /// The kept entry ids, in order.
    pub entry_ids: Vec<String>,
}

/// The answer of one `leases` step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaseStepOutput {
    /// The step's typed error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorOutput>,
    /// `reserve`: whether the reservation succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved: Option<bool>,
    /// `revision`: the counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
    /// `enter`: `admitted` or `waiting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// A waiting call admitted because this step left the gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admitted: Option<String>,
    /// `capture`: the filtered snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<CaptureOutput>,
    /// The step's run after the step (null: the flow has no active run).
    pub run: Option<RunOutput>,
}

/// The answer of `leases`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeasesAnswer {
    /// One answer per step.
    pub leases: Vec<LeaseStepOutput>,
}

impl Operation for LeasesCase {
    const ANSWER: &'static str = "leases";
    type Answer = LeasesAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<LeasesAnswer, CaseError> {
        Ok(LeasesAnswer {
            leases: drive::run(self, imp)?,
        })
    }
}
