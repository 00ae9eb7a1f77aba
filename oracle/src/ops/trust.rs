//! `trust`: trust configuration and the revalidations of one guarded provider call (SPEC TRU-1 ..
//! TRU-3): where the attempt ends, its events, whether it was dispatched, its failure and its
//! diagnostics. The call is the fixed one of `assembly`, or a chosen history (`messages`), policy
//! and reducer, plain or streaming; each implementation answers with its own guarded node.

use std::sync::Arc;

use hybrid_compaction_model::seam::{AssemblyScript, Implementation, TrustInput, TrustReport};
use hybrid_compaction_model::trust::BindingAccessor;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Operation;
use crate::wire::convert;
use crate::wire::dispatch::{sent, stream_plan, SentOutput, StreamInput};
use crate::wire::error::{answer, wire, CaseError};
use crate::wire::host::{accessor, binding, BindingInput, ContextInput};
use crate::wire::input::{MessageInput, PolicyInput, ReducerInput};
use crate::wire::output::{diagnostics_output, DiagnosticsOutput};

/// Inputs of `trust`: configuration and the revalidations of one provider call (SPEC TRU-1 ..
/// TRU-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustCase {
    /// The binding; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<BindingInput>,
    /// The accessor's answers to successive revalidations (`null`: no context), the last one
    /// repeating; absent: no accessor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessor: Option<Vec<Option<ContextInput>>>,
    /// The configured session id; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// How the assembly between the two revalidations ends: `Success` (default),
    /// `Terminated` (an irreducible history) or `Failed` (the reducer fails): the fixed policy
    /// and reducer. Not with `policy` or `reducer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assembly: Option<String>,
    /// The chosen history (adapted with the content-hash classifier, SPEC CLS-2); absent: the
    /// fixed one (one user message of 20 bytes, 200 unless `assembly` is `Success`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<MessageInput>>,
    /// The chosen policy; absent: the fixed one of `assembly`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// The chosen upstream reducer (as for `node`); absent: the one of `assembly`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reducer: Option<ReducerInput>,
    /// A streaming call (as for `node`, SPEC NODE-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamInput>,
}

/// A failure that names only its status (SPEC TRU-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttemptFailureOutput {
    /// The error kind.
    pub kind: String,
    /// The trust status, for a revalidation failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// `trust`: one provider call's revalidations and events (SPEC TRU-1 .. TRU-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustOutput {
    /// Whether calls revalidate (SPEC TRU-1).
    pub guarded: bool,
    /// Where the attempt ended (`BeforeStarted`, `DuringAssembly`, `Terminated`,
    /// `RevalidationAfterAssembly`, `Success`).
    pub end: String,
    /// The progress events, in order.
    pub events: Vec<String>,
    /// Whether the bounded messages were dispatched.
    pub dispatched: bool,
    /// The error the call raised, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<AttemptFailureOutput>,
    /// A chosen call: the attempt's diagnostics (SPEC EVT-4), its last event's that carries
    /// them; absent when it ended before or during assembly, and for the fixed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<DiagnosticsOutput>,
    /// A chosen call: the messages the real provider received; absent when it was not called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<Vec<SentOutput>>,
    /// A streaming call: the updates the caller read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streamed: Option<u32>,
}

/// Renders a guarded call's report; the fixed call (`chosen` false) answers as it always has,
/// without diagnostics and messages.
fn trust_output(r: &TrustReport, chosen: bool) -> TrustOutput {
    TrustOutput {
        guarded: r.guarded,
        end: r.end.name().to_owned(),
        events: r.events.iter().map(|e| e.name().to_owned()).collect(),
        dispatched: r.dispatched,
        failure: r.failure.map(|f| AttemptFailureOutput {
            kind: f.kind.name().to_owned(),
            status: f.status.map(|s| s.name().to_owned()),
        }),
        diagnostics: r
            .diagnostics
            .as_ref()
            .filter(|_| chosen)
            .map(diagnostics_output),
        sent: r.sent.as_deref().filter(|_| chosen).map(sent),
        streamed: r.streamed.map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
    }
}

/// The answer of `trust`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustAnswer {
    /// The guarded call.
    pub trust: TrustOutput,
}

impl TrustCase {
    /// How the fixed call's assembly ends; `assembly` excludes a chosen policy and reducer.
    fn assembly(&self) -> Result<AssemblyScript, CaseError> {
        if self.assembly.is_some() && (self.policy.is_some() || self.reducer.is_some()) {
            let member = if self.policy.is_some() {
                "policy"
            } else {
                "reducer"
            };
            return wire(
                format!("$.{member}"),
                "`assembly` chooses the fixed policy and reducer; it is mutually exclusive with \
                 `policy` and `reducer`",
            );
        }
        match self.assembly.as_deref() {
            None | Some("Success") => Ok(AssemblyScript::Success),
            Some("Terminated") => Ok(AssemblyScript::Terminated),
            Some("Failed") => Ok(AssemblyScript::Failed),
            Some(other) => wire(
                "$.assembly",
                format!("unknown assembly end {other:?}; expected Success, Terminated or Failed"),
            ),
        }
    }

    /// `fixed` with the chosen history, policy, reducer and stream (SPEC TRU-4).
    fn chosen(&self, imp: &dyn Implementation, fixed: TrustInput) -> Result<TrustInput, CaseError> {
        let mut messages = None;
        if let Some(ms) = &self.messages {
            let mut out = Vec::with_capacity(ms.len());
            for (i, m) in ms.iter().enumerate() {
                out.push(convert::message(m, &format!("$.messages[{i}]"))?);
            }
            messages = Some(out);
        }
        let policy = match &self.policy {
            None => None,
            Some(p) => Some(convert::policy(Some(p), imp, "$.policy")?),
        };
        let reducer = match &self.reducer {
            None => None,
            Some(r) => Some(convert::upstream(Some(r))?),
        };
        let stream = match &self.stream {
            None => None,
            Some(x) => Some(stream_plan(x, "$.stream")?),
        };
        Ok(TrustInput {
            messages,
            policy,
            reducer,
            stream,
            ..fixed
        })
    }

    /// Whether the case chooses its call (the answer then adds diagnostics and messages).
    fn chooses(&self) -> bool {
        self.messages.is_some()
            || self.policy.is_some()
            || self.reducer.is_some()
            || self.stream.is_some()
    }
}

impl Operation for TrustCase {
    const ANSWER: &'static str = "trust";
    type Answer = TrustAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<TrustAnswer, CaseError> {
        let accessor = match &self.accessor {
            None => None,
            Some(a) => Some(Arc::new(accessor(a, "$.accessor")?) as Arc<dyn BindingAccessor>),
        };
        let fixed = TrustInput::fixed(
            self.binding.as_ref().map(binding),
            accessor,
            self.session_id.clone(),
            self.assembly()?,
        );
        let input = self.chosen(imp, fixed)?;
        let report = imp
            .trust(input)
            .map_err(|e| CaseError::Answer(answer(e.kind(), None, None, e.to_string())))?;
        Ok(TrustAnswer {
            trust: trust_output(&report, self.chooses()),
        })
    }
}
