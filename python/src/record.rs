//! `hc.TraceWriter`'s native half: the oracle's trace writer (`hybrid_compaction_oracle::trace::
//! record::Writer`, the one `hybrid-compaction check` reads the output of) turning the node's
//! call records into trace lines (`docs/TRACE.md`). The Python object owns the file or stream
//! and writes the lines; this object names runs and calls and keeps each run's entry table
//! (the compact profile of version 2).

use hybrid_compaction::lease::Run;
use hybrid_compaction::node::CallTrace;
use hybrid_compaction_oracle::trace::format::Record;
use hybrid_compaction_oracle::trace::record::{header, Writer};
use pyo3::prelude::*;

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

    /// The header line naming `producer`.
    #[staticmethod]
    fn header_line(producer: &str) -> String {
        serde_json::to_string(&header(producer)).unwrap_or_default()
    }
}
