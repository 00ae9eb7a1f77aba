//! `hc.Compactor`'s conversion cache: a repeat call converts only its new or changed messages.
//!
//! ```text
//! call k:   objects ──per message──> cached under the object's address, witness matches?
//!                                      yes: its Adaptation (no read of its content)
//!                                      no:  the writer (+ witness) -> pyvalue -> Adaptation
//!           system, overrides: written every call (small)
//!           Transcript::reassemble (ids, kinds; entries reused) -> the node, call_adapted
//! ```
//!
//! The cache holds, for each message object of the previous call whose conversion can be proven
//! unchanged ([`Witness`]), the witness and the message's [`Adaptation`] (the library's
//! adapted message, its CLS-2 digest and its entries, so the estimate memo finds their content
//! digests computed). It is keyed by the object's address (kept alive by the witness), so a
//! message moved to another index, or given again in a shorter or reordered list, is reused too;
//! it keeps only the objects of the last successful call. The format, and the ABC registry's
//! cache token (`isinstance(m, Mapping)` decides how a LangChain value is written), must be the
//! previous call's, else the cache starts empty. A message is written exactly as the package's
//! `transcript()` writes it: the LangChain writer itself (`_langchain_json`) for every value but a
//! message object, whose fields (`type` first, then `_LANGCHAIN_FIELDS`) are read here once, into
//! the witness, and written from what was read. Any refusal or exception is not answered here:
//! the caller converts the whole transcript the old way, which raises it with its path.

use hybrid_compaction::transcript::reuse::Adaptation;
use hybrid_compaction::transcript::{Transcript, TranscriptFormat};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyMapping, PyString, PyTuple};
use rustc_hash::FxHashMap;
use serde_json::Value as Json;

use crate::pyvalue;
use crate::witness::{Reads, Witness};

/// What the previous call converted (see the module docs).
#[derive(Default)]
pub struct Cache {
    format: Option<TranscriptFormat>,
    token: Option<i64>,
    by_object: FxHashMap<usize, Cached>,
    /// The number of calls so far: which call last used each cached conversion.
    calls: u64,
}

/// One message object's conversion, and the call that last used it.
struct Cached {
    witness: Witness,
    adaptation: Adaptation,
    call: u64,
}

/// What converting one call needs from the Python layer.
pub struct Inputs<'a, 'py> {
    /// The transcript format.
    pub format: TranscriptFormat,
    /// The caller's messages.
    pub objects: &'a Bound<'py, PyList>,
    /// The top-level system (Anthropic's, the Responses instructions), if given.
    pub system: Option<&'a Bound<'py, PyAny>>,
    /// The overrides as the transcript object's member (`{"3": "Summary"}`), if any.
    pub overrides: Option<&'a Bound<'py, PyAny>>,
    /// The package's LangChain writer (`_langchain_json`).
    pub writer: &'a Bound<'py, PyAny>,
    /// How it reads a message object's attributes (`type`, then `_LANGCHAIN_FIELDS`).
    pub reads: Reads<'py>,
    /// `abc.get_cache_token()`.
    pub token: i64,
}

/// A value written at `depth` levels below the transcript object, as JSON (`None`: refused).
fn json_at(value: &Bound<'_, PyAny>, depth: usize) -> Option<Json> {
    let text = pyvalue::to_json_exact_at(value, depth).ok()?;
    serde_json::from_str(&text).ok()
}

impl Cache {
    /// The transcript of this call, or `None` when the caller must convert it the old way (a
    /// refusal, an exception; see the module docs).
    pub fn transcript(&mut self, inputs: &Inputs<'_, '_>) -> Option<Transcript> {
        if self.format != Some(inputs.format) || self.token != Some(inputs.token) {
            self.by_object.clear();
            self.format = Some(inputs.format);
            self.token = Some(inputs.token);
        }
        self.calls += 1;
        let built = self.adaptations(inputs, self.calls);
        if built.is_some() {
            // only the objects of the last successful call are kept
            let call = self.calls;
            self.by_object.retain(|_, c| c.call == call);
        }
        let adaptations = built?;
        let overrides = match inputs.overrides {
            Some(o) => Some(json_at(o, 1)?),
            None => None,
        };
        Transcript::reassemble(inputs.format, &adaptations, None, overrides.as_ref()).ok()
    }

    /// Every message's adaptation (the system first), marking each reused or new cached one as
    /// used by `call` (one map, updated in place: no map is rebuilt per call).
    fn adaptations(&mut self, inputs: &Inputs<'_, '_>, call: u64) -> Option<Vec<Adaptation>> {
        let mut out = Vec::with_capacity(inputs.objects.len() + 1);
        if let Some(s) = inputs.system {
            out.push(Adaptation::system(inputs.format, &json_at(s, 1)?).ok()?);
        }
        for (i, m) in inputs.objects.iter().enumerate() {
            let key = m.as_ptr() as usize;
            let hit = match self.by_object.get_mut(&key) {
                Some(c) if c.witness.matches(&m, &inputs.reads) => {
                    c.call = call;
                    Some(c.adaptation.clone())
                }
                Some(_) => {
                    self.by_object.remove(&key);
                    None
                }
                None => None,
            };
            if let Some(a) = hit {
                out.push(a);
                continue;
            }
            let (witness, written) = write(&m, inputs)?;
            let a = Adaptation::message(inputs.format, i, &json_at(&written, 2)?).ok()?;
            if let Some(witness) = witness {
                let adaptation = a.clone();
                self.by_object.insert(
                    key,
                    Cached {
                        witness,
                        adaptation,
                        call,
                    },
                );
            }
            out.push(a);
        }
        Some(out)
    }
}

/// One message as the package's `transcript()` writes it, with its witness if it has one
/// (`None`: an exception, left to the old path).
fn write<'py>(
    m: &Bound<'py, PyAny>,
    inputs: &Inputs<'_, 'py>,
) -> Option<(Option<Witness>, Bound<'py, PyAny>)> {
    if inputs.format != TranscriptFormat::LangChain
        || m.is_instance_of::<PyString>()
        || m.is_exact_instance_of::<PyTuple>()
    {
        // Written as itself (a tuple as a list, whose JSON text is the same).
        return Some((Witness::record(m), m.clone()));
    }
    let by_writer = |w: Option<Witness>| inputs.writer.call1((m,)).ok().map(|j| (w, j));
    if m.is_exact_instance_of::<PyDict>() {
        return by_writer(Witness::record(m));
    }
    if m.is_instance_of::<PyTuple>() || m.cast::<PyMapping>().is_ok() {
        return by_writer(None);
    }
    let witness = Witness::record_object(m, &inputs.reads).ok()?;
    let Some(Witness::Object(_, _, read)) = &witness else {
        return by_writer(None);
    };
    let py = m.py();
    let kind = read.first()?.object().bind(py);
    if !kind.is_instance_of::<PyString>() {
        return by_writer(None); // not a message: the writer hands it on, and it is refused
    }
    let out = PyDict::new(py);
    for (name, w) in inputs.reads.names.iter().zip(read) {
        let value = w.object().bind(py);
        if !value.is_none() {
            out.set_item(name, value).ok()?;
        }
    }
    Some((witness, out.into_any()))
}
