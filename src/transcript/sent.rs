//! The messages a system sent for a provider call, identified against the history it held
//! (SPEC TRC-13): an observed record (TRC-13) compares the two by entry id, and a message given
//! without an id has a content-hash id counted among its equal predecessors (CLS-2), which a
//! compaction that dropped an earlier equal message would renumber.

use rustc_hash::FxHashMap;

use hybrid_compaction_model::entry::Entry;

use super::{Source, Transcript};

impl Transcript {
    /// The entries of `sent` (the transcript a system sent, same format) with the history's
    /// ids where they are the history's messages (SPEC TRC-13): walking `sent` from its end, a
    /// message whose JSON is exactly that of a history message before the one matched last is
    /// the last such history entry (its id, kind and adaptation); any other message keeps its
    /// own entry (a new message: a summary). Linear in the two transcripts (each message's JSON
    /// written once).
    pub fn sent_entries(&self, sent: &Transcript) -> Vec<Entry> {
        let mut positions: FxHashMap<String, Vec<usize>> = FxHashMap::default();
        for (i, a) in self.adapted.iter().enumerate() {
            positions.entry(key(&a.source)).or_default().push(i);
        }
        let mut bound = self.entries.len();
        let mut out = sent.entries.clone();
        for (j, a) in sent.adapted.iter().enumerate().rev() {
            let Some(ps) = positions.get(&key(&a.source)) else {
                continue;
            };
            let below = ps.partition_point(|&p| p < bound);
            if let Some(&p) = below.checked_sub(1).and_then(|k| ps.get(k)) {
                out[j] = self.entries[p].clone();
                bound = p;
            }
        }
        out
    }
}

/// A message's JSON text, tagged by where it was given (a message, the top-level system, or a
/// turn of several messages, TRN-23).
pub(crate) fn key(source: &Source) -> String {
    match source {
        Source::Message(j) => format!("m{j}"),
        Source::System(j) => format!("s{j}"),
        Source::Turn(items) => {
            let mut k = String::from("t");
            for j in items {
                k.push_str(&j.to_string());
                k.push('\u{1e}');
            }
            k
        }
    }
}
