//! `hc.TraceWriter`'s native half: the trace crate's writer (`hybrid_compaction_trace::Writer`,
//! the one whose output `hybrid-compaction check` reads) turning the node's
//! call records into trace lines (`docs/TRACE.md`). The Python object owns the file or stream
//! and writes the lines; this object names runs and calls and keeps each run's entry table
//! (the compact profile of version 2).
//!
//! Observed records (version 3, SPEC TRC-13) come from the recorders of frameworks that do not
//! implement the ADR (`hc.TraceWriter.observe`, the LangChain and Agent Framework middleware):
//! the history and the sent messages arrive as transcript objects, are read by the library's
//! converter (the ids of TRN-5: a message's own id, else the content hash of CLS-2; a sent
//! message that is the history's carries the history's id, TRC-13) and written
//! by the oracle's writer, measured by the policy's estimator, redacted unless `content`.

use hybrid_compaction::lease::Run;
use hybrid_compaction::node::CallTrace;
use hybrid_compaction::transcript::Transcript;
use hybrid_compaction_trace::format::{Dispatch, Header, Record, OBSERVED_VERSION};
use hybrid_compaction_trace::write::Writer;
use pyo3::prelude::*;

use crate::compact::read_policy;
use crate::errors::{self, Failure};
use crate::transcript;

/// A transcript object read by the library's converter, or its refusal (`TranscriptError`)
/// with `member.` before its path.
fn read(value: &Bound<'_, PyAny>, member: &str) -> PyResult<Transcript> {
    transcript::read(value).map_err(|(kind, path, reason)| {
        let path = if path.is_empty() {
            member.to_owned()
        } else {
            format!("{member}.{path}")
        };
        errors::transcript(kind, path, reason)
    })
}

/// The writer of one trace (see the module docs).
#[pyclass(module = "hybrid_compaction._native")]
pub struct TraceRecorder {
    writer: Writer,
}

impl TraceRecorder {
    /// The line of one call record.
    pub fn line(&mut self, call: &CallTrace) -> String {
        let record = Record::Call(Box::new(self.writer.record(call)));
        serde_json::to_string(&record).unwrap_or_default()
    }

    /// The `runEnd` line of `run`, if this trace named it.
    pub fn end_run(&mut self, run: &Run) -> Option<String> {
        let end = self.writer.end_run(run)?;
        serde_json::to_string(&Record::RunEnd(end)).ok()
    }
}

#[pymethods]
impl TraceRecorder {
    /// A recorder writing message content (`content`) or only digests, sizes and structure.
    #[new]
    fn new(content: bool) -> TraceRecorder {
        TraceRecorder {
            writer: if content {
                Writer::with_content()
            } else {
                Writer::new()
            },
        }
    }

    /// The header line naming `producer`: version 3 (call records in the compact profile and
    /// observed records).
    #[staticmethod]
    fn header_line(producer: &str) -> String {
        let h = Header {
            trace: OBSERVED_VERSION,
            producer: Some(producer.to_owned()),
        };
        serde_json::to_string(&h).unwrap_or_default()
    }

    /// The observed record line (SPEC TRC-13) of call `call` of run `run`: `policy` a wire
    /// policy, `history` and `sent` transcript objects (`sent` `None`: nothing was sent),
    /// `dispatch` `"answered"`, `"failed"`, `"refused"` or `None` (the default). Raises
    /// `InvalidCaseError` for a policy that is not wire input (path `policy...`) or an unknown
    /// `dispatch`, `SpecError` for a policy the SPEC refuses (POL-2), `TranscriptError` for a
    /// message the converter refuses (the path starts with `history.` or `sent.`). Nothing is
    /// written to this recorder's tables unless the line is.
    #[pyo3(signature = (run, call, policy, history, sent, dispatch=None, note=None))]
    #[allow(clippy::too_many_arguments)]
    fn observed(
        &mut self,
        run: &str,
        call: &str,
        policy: &Bound<'_, PyAny>,
        history: &Bound<'_, PyAny>,
        sent: Option<&Bound<'_, PyAny>>,
        dispatch: Option<&str>,
        note: Option<String>,
    ) -> PyResult<String> {
        let policy = read_policy(policy).map_err(|r| r.raise(policy.py()))?;
        let dispatch = match dispatch {
            None => None,
            Some("answered") => Some(Dispatch::Answered),
            Some("failed") => Some(Dispatch::Failed),
            Some("refused") => Some(Dispatch::Refused),
            Some(other) => {
                return Err(Failure::invalid(
                    "dispatch",
                    format!("expected \"answered\", \"failed\" or \"refused\", got {other:?}"),
                )
                .into())
            }
        };
        let held = read(history, "history")?;
        let history = held.entries().to_vec();
        // SPEC TRC-13: the sent messages that are the history's carry the history's ids.
        let sent = sent
            .map(|s| read(s, "sent").map(|t| held.sent_entries(&t)))
            .transpose()?;
        let mut record =
            self.writer
                .observed(run, call, &policy, &history, sent.as_deref(), dispatch);
        record.note = note;
        Ok(serde_json::to_string(&Record::Observed(Box::new(record))).unwrap_or_default())
    }

    /// The `runEnd` line of the observed run `run` (its entry table is dropped).
    fn end_observed_run(&mut self, run: &str) -> String {
        let end = self.writer.end_named_run(run);
        serde_json::to_string(&Record::RunEnd(end)).unwrap_or_default()
    }
}
