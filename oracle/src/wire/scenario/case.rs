//! Case types of the scenario operations (`diagnostics`, `bridge`, `leases`, `node`): the serde
//! image of their JSON objects in `docs/WIRE.md`. Syntax only; [`super::exec`] checks what serde
//! cannot (named flows, calls and leases, one waiter per run) with path-precise wire errors.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::wire::case::{EntryInput, MessageInput, PolicyInput, ReducerInput, SnapshotInput};

/// A categorical value of a diagnostics record: its name, or its ordinal (declaration order,
/// 0-based). A name that is no member, or an ordinal out of range, is an *undefined* value,
/// which the record's checks reject (SPEC DIA-3, DIA-4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum EnumValueInput {
    /// The ordinal.
    Ordinal(i64),
    /// The name.
    Name(String),
}

impl<'de> Deserialize<'de> for EnumValueInput {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(s) => Ok(EnumValueInput::Name(s)),
            serde_json::Value::Number(n) if n.as_i64().is_some() => {
                Ok(EnumValueInput::Ordinal(n.as_i64().unwrap_or_default()))
            }
            other => Err(serde::de::Error::custom(format!(
                "expected a name (string) or an ordinal (integer), got {other}"
            ))),
        }
    }
}

/// Inputs of the `diagnostics` operation: a record given field by field (SPEC DIA-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiagnosticsCase {
    /// The outcome (SPEC ASM-1 names).
    pub outcome: EnumValueInput,
    /// The measurement unit (SPEC EST-1 names).
    pub measurement_unit: EnumValueInput,
    /// `OriginalSize`.
    pub original_size: i32,
    /// `FinalSize`.
    pub final_size: i32,
    /// `TriggerThreshold`.
    pub trigger_threshold: i32,
    /// `HardLimit`.
    pub hard_limit: i32,
    /// `AttemptCount`.
    pub attempt_count: i32,
    /// Stage categories (SPEC ASM-2 names); not checked by the record (echoed).
    #[serde(default)]
    pub stages: Vec<EnumValueInput>,
    /// The contributions, in the given order.
    #[serde(default)]
    pub category_contributions: Vec<ContributionInput>,
    /// `FinalSequenceValid`: `true`, `false`, or absent / null.
    #[serde(default)]
    pub final_sequence_valid: Option<bool>,
}

/// One contribution given field by field (SPEC DIA-6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContributionInput {
    /// The category (SPEC ENT-1 names).
    pub category: EnumValueInput,
    /// The size.
    pub size: i32,
    /// The entry count.
    pub entry_count: i32,
}

/// Inputs of the `bridge` operation: the upstream-reducer bridge on its own (SPEC BRG-1 ..
/// BRG-3). The bridge is called once per step; the first call receives `entries`, every later
/// call the previous call's result entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BridgeCase {
    /// The request entries of the first call.
    pub entries: Vec<EntryInput>,
    /// The upstream reducer's answers, one per call (at least one).
    pub steps: Vec<BridgeStepInput>,
}

/// One upstream answer of the `bridge` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum BridgeStepInput {
    /// Return the input messages unchanged.
    Echo,
    /// Return null (a `ReducerContract` error, SPEC BRG-1).
    Null,
    /// Fail with this message (a `ReducerFailed` error, SPEC BRG-1).
    Fail(String),
    /// Observe the call's cancellation (the token is set during the call) and throw: a
    /// `Cancelled` error.
    Cancel,
    /// Return these messages.
    Return(Vec<MessageInput>),
}

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

/// Inputs of the `node` operation: one node (SPEC NODE-1 .. NODE-6) driven through a sequence
/// of provider calls and run steps on one logical flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeCase {
    /// The policy of the options (may be inherited from the vector test group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// The enabled switch (default `true`, SPEC NODE-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Whether options (policy and reducer) are supplied (default `true`, SPEC NODE-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<bool>,
    /// The upstream reducer of the options (`upstream` or `messageCounting`; absent: an upstream
    /// reducer that always echoes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reducer: Option<ReducerInput>,
    /// The reporter (absent: no reporter, no events, SPEC EVT-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reporter: Option<ReporterInput>,
    /// The steps, in order.
    pub steps: Vec<NodeStepInput>,
}

/// The reporter's identity (SPEC EVT-3); its sequence source counts from 1 and it has no clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReporterInput {
    /// The workflow id.
    pub workflow_id: String,
    /// The agent id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The parent agent id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_agent_id: Option<String>,
    /// The depth.
    #[serde(default)]
    pub depth: u32,
}

/// One step of a `node` scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum NodeStepInput {
    /// One provider call through the node (SPEC NODE-2).
    Call(NodeCallInput),
    /// `BeginRun` on the node's flow: later calls share this run (SPEC LSE-6).
    BeginRun(NoFields),
    /// Ends the run begun by the latest unmatched `beginRun`.
    EndRun(NoFields),
    /// Another call of the run holds a reservation of this body with lease `lease` (SPEC
    /// LSE-2; needs an active run).
    Reserve(NodeLeaseInput),
    /// That other lease is released (SPEC LSE-4).
    Release(NodeLeaseInput),
}

/// A step without fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoFields {}

/// `reserve` / `release` of a node scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeLeaseInput {
    /// The body (for `reserve`; ignored by `release`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The lease name.
    pub lease: String,
}

/// One provider call of a `node` scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeCallInput {
    /// The call's messages (adapted with the content-hash classifier, SPEC CLS-2).
    pub messages: Vec<MessageInput>,
    /// The snapshot integration's schedule for this call (SPEC SNAP-5): a step without
    /// `entries` repeats the previous one, the first the adapted baseline. Absent: the static
    /// integration over the baseline (SPEC SNAP-3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<Vec<SnapshotInput>>,
    /// The integration returns no provider (an `InvalidOperation` error, SPEC NODE-3 step 4).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_provider: bool,
    /// Cancellation: `before` (token set before the call) or `capture:K` (set during the K-th
    /// capture of the integration's provider).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<String>,
    /// The real provider fails with this message (after `Composed`, SPEC NODE-5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_fails: Option<String>,
    /// A streaming call (SPEC NODE-2): the provider streams updates and the caller reads them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamInput>,
}

/// A streaming provider call (SPEC NODE-2, NODE-5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StreamInput {
    /// How many updates the provider streams (0 is a stream that ends at once).
    pub updates: u32,
    /// The update at this 0-based position is an error item instead (`< updates`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_at: Option<u32>,
    /// How many times the caller asks for the next item before dropping the stream (absent:
    /// until the stream ends). Reading the end is one ask: `updates + 1` reads to the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<u32>,
}
