//! A `Compactor`'s kept conversions: a repeat call on history + k messages converts only the k
//! new ones (the library's [`Adaptation`], `src/transcript/reuse.rs`; the Python binding's
//! `python/src/reuse.rs` does the same for Python objects).
//!
//! ```text
//!  JS (lib/compact.cjs): per message object, WeakMap -> {witness, id, gen}
//!      witness matches (docs/NODE.md, "Repeat calls") and gen is current: its id, nothing written
//!      else: toJson (recording the witness) ---+
//!  Session::adapt(format, indices, [new messages as one JSON array]) -> an id per message
//!  Session::start_adapted(format, ids, system?, overrides?)
//!      the store keeps exactly these ids (the conversions of this call's messages)
//!      worker: Transcript::reassemble (ids, kinds; entries and their digests reused) -> the node
//! ```
//!
//! What counts as unchanged is decided in JavaScript (the witness walk); this side only keeps
//! each message's adaptation, under an id, and reassembles a transcript from them, which is what
//! `Transcript::parse` gives for the same transcript object (the library's
//! `reuse_matches_parse`). The conversions live here, not in JavaScript objects: no object is
//! made per message, and memory is given back deterministically. The [`Store`] keeps the
//! conversions of the last call that used it and those made since, as the Python binding's
//! cache keeps the objects of its last call; the JavaScript layer applies the same rule to its
//! ids (a generation number), so it never names an id the store has dropped, and an id it does
//! not know is refused, never guessed.

use hybrid_compaction::transcript::reuse::Adaptation;
use hybrid_compaction::transcript::{Transcript, TranscriptFormat};
use rustc_hash::FxHashMap;
use serde_json::Value as Json;

use crate::answer::Failure;
use crate::transcript;

/// A session's kept conversions (see the module docs).
#[derive(Default)]
pub(crate) struct Store {
    /// Each id's conversion, about the memory it holds ([`weight`]) and the generation that
    /// last used it (or made it).
    kept: FxHashMap<u32, (Adaptation, i64, u64)>,
    /// About the memory all kept conversions hold (reported to V8 by the session, so that its
    /// collector weighs a dropped `Compactor` by what it holds here too).
    pub(crate) bytes: i64,
    /// The next id (ids are never reused: a stale one is refused, not mistaken).
    next: u32,
    /// The number of calls that used the store so far.
    generation: u64,
}

impl Store {
    /// `messages` (a JSON array of messages) converted one by one in `format`, the `i`-th as
    /// message `indices[i]` of its transcript (so a refusal names `$.messages[index]`), kept
    /// under new ids (answered in order), with about the memory they hold.
    pub(crate) fn adapt(
        &mut self,
        format_name: &str,
        indices: &[u32],
        messages: &str,
    ) -> Result<(Vec<u32>, i64), Failure> {
        let format = format(format_name)?;
        let Json::Array(values) = read(messages, "messages")? else {
            return Err(Failure::invalid("messages", "expected a JSON array"));
        };
        if values.len() != indices.len() {
            return Err(Failure::invalid(
                "indices",
                format!("{} indices for {} messages", indices.len(), values.len()),
            ));
        }
        let adapted = values
            .iter()
            .zip(indices)
            .map(|(m, &i)| Adaptation::message(format, i as usize, m).map(|a| (a, weight(m))))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| transcript::refusal(&e))?;
        let mut ids = Vec::with_capacity(adapted.len());
        let mut added = 0i64;
        for (a, w) in adapted {
            let id = self.next;
            self.next = self.next.checked_add(1).ok_or_else(|| {
                Failure::internal("engine", "a Compactor ran out of conversion ids")
            })?;
            self.kept.insert(id, (a, w, self.generation));
            added = added.saturating_add(w);
            ids.push(id);
        }
        self.bytes = self.bytes.saturating_add(added);
        Ok((ids, added))
    }

    /// The conversions of `ids`, in order, and about the memory dropped: the store then keeps
    /// exactly these (a new generation). An id it does not hold is refused (nothing is dropped
    /// then).
    pub(crate) fn take_call(&mut self, ids: &[u32]) -> Result<(Vec<Adaptation>, i64), Failure> {
        let generation = self.generation + 1;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let Some((a, _, used)) = self.kept.get_mut(id) else {
                return Err(Failure::internal(
                    "engine",
                    format!("conversion {id} is not kept (a stale id)"),
                ));
            };
            *used = generation;
            out.push(a.clone());
        }
        self.generation = generation;
        let mut dropped = 0i64;
        self.kept.retain(|_, (_, w, used)| {
            let keep = *used == generation;
            if !keep {
                dropped = dropped.saturating_add(*w);
            }
            keep
        });
        self.bytes = self.bytes.saturating_sub(dropped);
        Ok((out, dropped))
    }
}

/// About the memory a message's conversion holds: its strings' bytes (the adapted message, its
/// source and its entry each hold them: three times) and a small cost per value.
fn weight(v: &Json) -> i64 {
    fn walk(v: &Json) -> usize {
        match v {
            Json::String(s) => s.len() + 32,
            Json::Array(a) => 32 + a.iter().map(walk).sum::<usize>(),
            Json::Object(m) => 32 + m.iter().map(|(k, v)| k.len() + 32 + walk(v)).sum::<usize>(),
            _ => 16,
        }
    }
    i64::try_from(walk(v).saturating_mul(3)).unwrap_or(i64::MAX)
}

/// The transcript format named `name`, or invalid input naming `format`.
pub(crate) fn format(name: &str) -> Result<TranscriptFormat, Failure> {
    TranscriptFormat::from_name(name)
        .ok_or_else(|| Failure::invalid("format", format!("unknown transcript format {name:?}")))
}

fn read(text: &str, what: &str) -> Result<Json, Failure> {
    serde_json::from_str(text).map_err(|e| Failure::invalid(what, format!("not JSON: {e}")))
}

/// A transcript to compact: its JSON text (converted whole), or kept conversions (see the
/// module docs).
pub(crate) enum Input {
    /// A transcript object as JSON text.
    Text(String),
    /// The messages' kept conversions, with the top-level system and the overrides as JSON
    /// text (converted on every call: small).
    Adapted {
        /// The transcript format's name.
        format: String,
        /// One conversion per message, in order.
        messages: Vec<Adaptation>,
        /// The top-level system (Anthropic's, the Responses instructions), if given.
        system: Option<String>,
        /// The transcript object's `overrides` member, if given.
        overrides: Option<String>,
    },
}

impl Input {
    /// The transcript, or the converter's refusal (the same as `Transcript::parse`'s).
    pub(crate) fn transcript(self) -> Result<Transcript, Failure> {
        match self {
            Input::Text(text) => transcript::parse(&text),
            Input::Adapted {
                format: name,
                messages,
                system,
                overrides,
            } => {
                let format = format(&name)?;
                let overrides = overrides.map(|o| read(&o, "overrides")).transpose()?;
                let mut all = Vec::with_capacity(messages.len() + 1);
                if let Some(s) = system {
                    let s = read(&s, "system")?;
                    all.push(Adaptation::system(format, &s).map_err(|e| transcript::refusal(&e))?);
                }
                all.extend(messages);
                Transcript::reassemble(format, &all, None, overrides.as_ref())
                    .map_err(|e| transcript::refusal(&e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_keeps_the_last_calls_conversions_and_refuses_stale_ids() {
        let mut store = Store::default();
        let two = r#"[{"role":"user","content":"a"},{"role":"user","content":"b"}]"#;
        let (ids, added) = store.adapt("openai-chat", &[0, 1], two).unwrap();
        assert_eq!(ids, vec![0, 1]);
        assert_eq!(store.bytes, added);
        let (kept, dropped) = store.take_call(&[ids[1], ids[1]]).unwrap();
        assert_eq!(kept.len(), 2);
        assert!(dropped > 0 && dropped < added);
        assert_eq!(store.bytes, added - dropped);
        // the call that did not name it dropped it; a new conversion gets a new id
        assert!(store.take_call(&[ids[0]]).is_err());
        let again = store.adapt("openai-chat", &[0], r#"[{"role":"user","content":"a"}]"#);
        assert_eq!(again.unwrap().0, vec![2]);
        assert_eq!(store.take_call(&[2, 1]).unwrap().0.len(), 2);
    }

    #[test]
    fn refusals_name_the_message_and_keep_nothing() {
        let mut store = Store::default();
        let bad = r#"[{"role":"user","content":"a"},{"role":"user","content":42}]"#;
        match store.adapt("openai-chat", &[3, 4], bad) {
            Err(Failure::Transcript { path, .. }) => {
                assert!(path.starts_with("messages[4]"), "{path}")
            }
            _ => panic!("not refused"),
        }
        assert!(store.kept.is_empty());
        assert!(store.adapt("openai-chat", &[0], "[]").is_err());
        assert!(store.adapt("xml", &[], "[]").is_err());
    }
}
