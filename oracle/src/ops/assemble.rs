//! `assemble`: a full assembly (SPEC ASM-7) over a snapshot schedule (SPEC SNAP-3, SNAP-5)
//! with a scripted or upstream reducer (SPEC ASM-4, BRG-1) and optional cancellation (SPEC
//! ASM-16), followed by diagnostics (SPEC DIA-5); with a transcript, the final list rendered
//! back (SPEC TRN-6).

use hybrid_compaction::transcript::Transcript;
use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::reducers::CancelAtCall;
use hybrid_compaction_model::seam::Implementation;
use hybrid_compaction_model::snapshot::ScriptedProvider;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::Operation;
use crate::wire::convert::{self, CancelPoint};
use crate::wire::error::{typed, wire, CaseError};
use crate::wire::input::{EntryInput, PolicyInput, ReducerInput, SnapshotInput, TranscriptInput};
use crate::wire::output::{assembly_output, diagnostics_output, AssemblyOutput, DiagnosticsOutput};

/// Inputs of the `assemble` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("allOf" = [
    {"not": {"required": ["entries", "transcript"]}},
    {"anyOf": [{"required": ["entries"]}, {"required": ["transcript"]}, {"required": ["snapshots"]}]},
    {"if": {"required": ["snapshots"], "properties": {"snapshots": {"maxItems": 0}}},
     "then": {"not": {"anyOf": [{"required": ["entries"]}, {"required": ["transcript"]}]}}},
    {"if": {"not": {"anyOf": [{"required": ["entries"]}, {"required": ["transcript"]}]}},
     "then": {"properties": {"snapshots": {"prefixItems": [{"required": ["entries"]}]}}}}
]))]
pub struct AssembleCase {
    /// The policy (may be inherited from the vector test group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// Static history (version 0 at every capture, SPEC SNAP-3); also the base of `snapshots`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryInput>>,
    /// The static history as a provider / framework transcript (SPEC TRN-1); exclusive with
    /// `entries`. A successful output then carries `finalTranscript` (SPEC TRN-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptInput>,
    /// Snapshot schedule: the k-th capture (0-based) sees step k; captures past the end repeat
    /// the last step. A step without `entries` repeats the previous step's entries (the first
    /// step: the case's `entries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<Vec<SnapshotInput>>,
    /// The reducer; absent means a scripted reducer that always echoes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reducer: Option<ReducerInput>,
    /// Cancellation point: `before`, `capture:K` or `reducer:K` (K 0-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = "^(before|capture:[0-9]+|reducer:[0-9]+)$"))]
    pub cancel: Option<String>,
}

/// The answer of `assemble`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssembleAnswer {
    /// The assembly result (SPEC ASM-3).
    pub assembly: AssemblyOutput,
    /// The diagnostics record built from the result (SPEC DIA-5).
    pub diagnostics: DiagnosticsOutput,
    /// With a `transcript`: the final list rendered in its format (SPEC TRN-6), on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_transcript: Option<Json>,
}

/// A snapshot schedule: one `(version, entries)` per capture.
type Schedule = Vec<(i64, Vec<Entry>)>;

impl AssembleCase {
    /// The snapshot schedule (SPEC SNAP-3 for plain `entries`, SNAP-5 for `snapshots`) and the
    /// transcript the static history came from, if any.
    fn schedule(&self) -> Result<(Schedule, Option<Transcript>), CaseError> {
        let (base, transcript) = match (&self.entries, &self.transcript) {
            (None, None) => (None, None),
            (es, t) => {
                let (es, t) = convert::entries_or_transcript(es.as_deref(), t.as_ref())?;
                (Some(es), t)
            }
        };
        let Some(snaps) = &self.snapshots else {
            return match base {
                Some(es) => Ok((vec![(0, es)], transcript)),
                None => wire("$", "an assemble case needs `entries` or `snapshots`"),
            };
        };
        // SPEC SNAP-5: the empty schedule captures version 0 with no entries, so a base list
        // would never be seen.
        if snaps.is_empty() && base.is_some() {
            return wire(
                "$.snapshots",
                "an empty schedule captures no entries: drop `entries` / `transcript`, or give a snapshot",
            );
        }
        let mut steps = Vec::with_capacity(snaps.len());
        let mut prev = base;
        for (i, s) in snaps.iter().enumerate() {
            let path = format!("$.snapshots[{i}]");
            let es = match (&s.entries, &prev) {
                (Some(es), _) => convert::entries(es, &format!("{path}.entries"))?,
                (None, Some(es)) => es.clone(),
                (None, None) => {
                    return wire(
                        &path,
                        "the first snapshot needs `entries` when the case has none",
                    )
                }
            };
            prev = Some(es.clone());
            steps.push((s.version, es));
        }
        Ok((steps, transcript))
    }
}

impl Operation for AssembleCase {
    const ANSWER: &'static str = "assembly";
    type Answer = AssembleAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<AssembleAnswer, CaseError> {
        let point = convert::cancel_point(self.cancel.as_ref(), "$.cancel")?;
        let token = convert::token_for(point, "$.cancel", true)?;
        let p = convert::policy(self.policy.as_ref(), imp, "$.policy")?;
        let (steps, transcript) = self.schedule()?;
        let mut provider = ScriptedProvider::new(steps);
        if let Some(CancelPoint::Capture(k)) = point {
            provider = provider.cancel_at_capture(k, token.clone());
        }
        let inner = convert::reducer(self.reducer.as_ref(), imp)?;
        let mut reducer = match point {
            Some(CancelPoint::Reducer(k)) => CancelAtCall::at(inner, k, token.clone()),
            _ => CancelAtCall::never(inner),
        };
        let result = imp
            .assemble(&p, &mut provider, &mut reducer, &token)
            .map_err(|e| typed(&e))?;
        let diagnostics = imp.diagnostics(&result, &p).map_err(|e| typed(&e))?;
        let final_transcript = transcript
            .zip(result.final_entries.as_deref())
            .map(|(t, es)| t.render(es));
        Ok(AssembleAnswer {
            assembly: assembly_output(&result),
            diagnostics: diagnostics_output(&diagnostics),
            final_transcript,
        })
    }

    fn policy_slot(&mut self) -> Option<&mut Option<PolicyInput>> {
        Some(&mut self.policy)
    }
}
