//! `TraceWriter`'s native half, as the Python binding's `python/src/record.rs`: the trace
//! crate's writer (`hybrid_compaction_trace::write::Writer`, whose output `hybrid-compaction
//! check` reads) turning the node's call records and observed provider calls (SPEC TRC-13) into
//! trace lines (`docs/TRACE.md`). The JavaScript object owns the file and writes the lines;
//! this object names runs and calls and keeps each run's entry table (the compact profile).

use hybrid_compaction::transcript::Transcript;
use hybrid_compaction_trace::format::{Dispatch, Header, Record, OBSERVED_VERSION};
use hybrid_compaction_trace::write::Writer;
use napi_derive::napi;

use crate::answer::{envelope, Answer, Failure};
use crate::compact::read_policy;
use crate::transcript;

/// A transcript (JSON text), a refusal's path under `member`.
fn read(text: &str, member: &str) -> Result<Transcript, Failure> {
    transcript::parse(text).map_err(|f| match f {
        Failure::Transcript { kind, path, reason } => Failure::Transcript {
            kind,
            path: if path.is_empty() {
                member.to_owned()
            } else {
                format!("{member}.{path}")
            },
            reason,
        },
        other => other,
    })
}

/// The trace writer's state (see the module docs).
#[napi]
pub struct TraceRecorder {
    pub(crate) writer: Writer,
}

#[napi]
impl TraceRecorder {
    /// A recorder; `content`: write the messages too (else sizes, digests and structure only).
    #[napi(constructor)]
    pub fn new(content: bool) -> TraceRecorder {
        TraceRecorder {
            writer: if content {
                Writer::with_content()
            } else {
                Writer::new()
            },
        }
    }

    /// The header line of a trace written by `producer`.
    #[napi]
    pub fn header_line(producer: String) -> String {
        let h = Header {
            trace: OBSERVED_VERSION,
            producer: Some(producer),
        };
        serde_json::to_string(&h).unwrap_or_default()
    }

    /// The observed record (SPEC TRC-13) of call `call` of run `run`, judged against `policy`
    /// (JSON text): `history` and `sent` transcript objects (JSON text; `sent` absent: nothing
    /// was sent), `dispatch` `"answered"`, `"failed"` or `"refused"`. The envelope of the line
    /// (as a JSON string: its text is written as it is).
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn observed(
        &mut self,
        run: String,
        call: String,
        policy: String,
        history: String,
        sent: Option<String>,
        dispatch: Option<String>,
        note: Option<String>,
    ) -> String {
        envelope(self.observed_line(
            &run,
            &call,
            &policy,
            &history,
            sent.as_deref(),
            dispatch.as_deref(),
            note,
        ))
    }

    /// The `runEnd` line of the observed run `run` (its entry table is dropped).
    #[napi]
    pub fn end_observed_run(&mut self, run: String) -> String {
        let end = self.writer.end_named_run(&run);
        serde_json::to_string(&Record::RunEnd(end)).unwrap_or_default()
    }
}

impl TraceRecorder {
    #[allow(clippy::too_many_arguments)]
    fn observed_line(
        &mut self,
        run: &str,
        call: &str,
        policy: &str,
        history: &str,
        sent: Option<&str>,
        dispatch: Option<&str>,
        note: Option<String>,
    ) -> Answer {
        let policy = read_policy(policy)?;
        let dispatch = match dispatch {
            None => None,
            Some("answered") => Some(Dispatch::Answered),
            Some("failed") => Some(Dispatch::Failed),
            Some("refused") => Some(Dispatch::Refused),
            Some(other) => {
                return Err(Failure::invalid(
                    "dispatch",
                    format!("expected \"answered\", \"failed\" or \"refused\", got {other:?}"),
                ))
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
        serde_json::to_string(&Record::Observed(Box::new(record)))
            .map(|line| serde_json::Value::String(line).to_string())
            .map_err(|e| Failure::internal("engine", e.to_string()))
    }
}
