//! One message's adaptation, kept across calls (a host's repeat call on history + k messages).
//!
//! A host that calls the provider again and again with a history grown by a few messages would
//! adapt every message again on every call ([`Transcript::parse`]): its JSON read, its parts
//! built, its CLS-2 rendering hashed, its entry allocated (and then its content digest computed
//! again for the estimate memo, SPEC EST-7, which keys on the entry). A message's adaptation
//! (TRN-2 .. TRN-4) reads only that message, and its entry depends on the rest of the transcript
//! only through its id (TRN-5: CLS-2's counter `n` counts earlier messages with the same
//! rendering) and its index's kind override (CLS-1 step 3). So a host that knows which messages
//! are unchanged since its previous call keeps their [`Adaptation`]s and rebuilds the transcript
//! with [`Transcript::reassemble`], adapting only the new or changed ones with
//! [`Adaptation::message`]:
//!
//! * an adaptation holds the adapted message, its source JSON, the hex of its CLS-2 rendering
//!   digest and its **base entry** (what CLS-1 gives it alone, with no override: its given id or
//!   `{hex}:0`), all computed once;
//! * reassembly computes every id (the given one, else `{hex}:{n}` with `n` counted over the
//!   cached hexes, one hash-map probe per message) and, where an id or an override's kind differs
//!   from the base entry, adapts that message alone again with exactly that id and override
//!   (the engine's own CLS-1); an entry asked for with the id and override it was built with
//!   before (the base entry, or the last other one) is that same entry, so neither the message's
//!   CLS-2 rendering nor its content digest is computed again.
//!
//! The result is the transcript [`Transcript::parse`] gives for the same transcript object:
//! the same entries (ids, kinds, messages), positions and renderings, and the same refusals
//! (`reuse_matches_parse` below checks both). What counts as "unchanged" is the host's to prove;
//! the Python package's rule is in `docs/PYTHON.md`.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use hybrid_compaction_model::classifier::{Classifier, ClassifierError};
use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::message::Message;
use rustc_hash::FxHashMap;
use serde_json::Value as Json;

use super::{
    parse_ids, parse_overrides, refuse_inapplicable, turns, Adapted, Transcript, TranscriptError,
    TranscriptFormat,
};
use crate::engine::classify::{adapt, AdaptError, ContentHashClassifier};

/// One message adapted on its own, with its base entry (see the module docs). Cloning shares it.
#[derive(Clone)]
pub struct Adaptation(Arc<Inner>);

struct Inner {
    adapted: Arc<Adapted>,
    /// The lowercase hex SHA-256 of the message's CLS-2 rendering.
    hex: String,
    /// CLS-1's entry for the message alone with no override, or its refusal.
    base: Result<Entry, AdaptError>,
    /// The last entry reassembly built for it with another id or an override's kind, with the
    /// id and override it was built from (the same inputs give the same entry).
    other: Mutex<Option<(String, Option<EntryKind>, Entry)>>,
    /// The last turn this message opened (TRN-23): the adaptations that joined it, and the
    /// turn's adaptation (the same items give the same turn).
    turn: Mutex<Option<(Vec<Adaptation>, Adaptation)>>,
}

impl fmt::Debug for Adaptation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Adaptation")
            .field("message", &self.0.adapted.message)
            .field("hex", &self.0.hex)
            .finish_non_exhaustive()
    }
}

impl Adaptation {
    /// `messages[index]` of a `format` transcript adapted alone (TRN-2 .. TRN-4); its refusals
    /// name `$.messages[index]...`, as [`Transcript::parse`] would.
    pub fn message(
        format: TranscriptFormat,
        index: usize,
        message: &Json,
    ) -> Result<Adaptation, TranscriptError> {
        let adapted = super::adapt_one(format, index, message)?;
        Ok(Adaptation::new(adapted))
    }

    /// A `format` transcript's top-level `system` adapted (Anthropic's `system`, TRN-3; the
    /// Responses `instructions`, TRN-17): the first entry of its transcript.
    pub fn system(format: TranscriptFormat, system: &Json) -> Result<Adaptation, TranscriptError> {
        Ok(Adaptation::new(super::adapt_system(format, system)?))
    }

    fn new(adapted: Adapted) -> Adaptation {
        let mut alone = Alone {
            id: adapted.given_id.clone(),
            kind: None,
            derived: Some(String::new()),
        };
        let base = single(&adapted.message, &mut alone);
        let derived = alone.derived.unwrap_or_default();
        let hex = match derived.strip_suffix(":0") {
            Some(h) => h.to_owned(),
            None => derived,
        };
        Adaptation(Arc::new(Inner {
            adapted: Arc::new(adapted),
            hex,
            base,
            other: Mutex::new(None),
            turn: Mutex::new(None),
        }))
    }

    /// The adaptation of the turn `first` and `rest` make (TRN-23; no `rest`: `first`): a turn
    /// built before from the same adaptations (the same allocations) is that same adaptation.
    fn turn(first: &Adaptation, rest: &[Adaptation]) -> Adaptation {
        if rest.is_empty() {
            return first.clone();
        }
        let mut cached = first.0.turn.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((joined, turn)) = &*cached {
            if joined.len() == rest.len()
                && joined
                    .iter()
                    .zip(rest)
                    .all(|(a, b)| Arc::ptr_eq(&a.0, &b.0))
            {
                return turn.clone();
            }
        }
        let mut adapted = (*first.0.adapted).clone();
        for a in rest {
            turns::extend(&mut adapted, (*a.0.adapted).clone());
        }
        let turn = Adaptation::new(adapted);
        *cached = Some((rest.to_vec(), turn.clone()));
        turn
    }

    /// The adapted message.
    pub fn adapted_message(&self) -> &Message {
        &self.0.adapted.message
    }

    /// The entry at `index` with `id` and the override `kind` (see the module docs).
    fn entry(&self, index: usize, id: &str, kind: Option<EntryKind>) -> Result<Entry, AdaptError> {
        if kind.is_none() {
            if let Ok(base) = &self.0.base {
                if base.id().as_str() == id {
                    return Ok(base.clone());
                }
            }
        }
        let mut other = self.0.other.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((built_id, built_kind, e)) = &*other {
            if built_id == id && *built_kind == kind {
                return Ok(e.clone());
            }
        }
        // The id is given: the message's CLS-2 rendering is not hashed again.
        let mut alone = Alone {
            id: Some(id.to_owned()),
            kind,
            derived: None,
        };
        let fresh = single(&self.0.adapted.message, &mut alone).map_err(|e| at(e, index))?;
        *other = Some((id.to_owned(), kind, fresh.clone()));
        Ok(fresh)
    }
}

/// CLS-1 on `message` alone (the engine's adaptation of a one-message list).
fn single(message: &Message, classifier: &mut Alone) -> Result<Entry, AdaptError> {
    let mut entries = adapt(std::slice::from_ref(message), classifier)?;
    Ok(entries.remove(0))
}

/// The index of an adaptation error of a one-message list moved to `index`.
fn at(e: AdaptError, index: usize) -> AdaptError {
    match e {
        AdaptError::ForbiddenOverride { kind, .. } => AdaptError::ForbiddenOverride { index, kind },
        AdaptError::Entry { source, .. } => AdaptError::Entry { index, source },
        AdaptError::Classifier { error, .. } => AdaptError::Classifier { index, error },
        other => other,
    }
}

/// The classifier of one message alone: `id` answered if given, `kind` the override; CLS-2's id
/// is derived when `derived` asks for it (kept there) or no id is given.
struct Alone {
    id: Option<String>,
    kind: Option<EntryKind>,
    derived: Option<String>,
}

impl Classifier for Alone {
    fn entry_id(&mut self, messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        if self.derived.is_none() {
            if let Some(id) = &self.id {
                return Ok(id.clone());
            }
        }
        let derived = ContentHashClassifier::new().entry_id(messages, index)?;
        let id = self.id.clone().unwrap_or_else(|| derived.clone());
        self.derived = Some(derived);
        Ok(id)
    }

    fn override_kind(&mut self, _messages: &[Message], _index: usize) -> Option<EntryKind> {
        self.kind
    }
}

impl Transcript {
    /// The transcript of `adaptations` (in transcript order, Anthropic's system first) with
    /// `ids` and `overrides` as a transcript object's members (TRN-1): what [`Transcript::parse`]
    /// gives for that transcript, reusing each adaptation's entries (see the module docs).
    pub fn reassemble(
        format: TranscriptFormat,
        adaptations: &[Adaptation],
        ids: Option<&Json>,
        overrides: Option<&Json>,
    ) -> Result<Transcript, TranscriptError> {
        let runs = turns::runs(format, adaptations.iter().map(|a| &*a.0.adapted));
        let mut at = 0;
        let units: Vec<Adaptation> = runs
            .iter()
            .map(|&k| {
                at += k;
                Adaptation::turn(&adaptations[at - k], &adaptations[at - k + 1..at])
            })
            .collect();
        let adaptations = units.as_slice();
        let n = adaptations.len();
        let ids = parse_ids(ids, n)?;
        let overrides: BTreeMap<usize, EntryKind> = parse_overrides(overrides, n)?;
        refuse_inapplicable(&overrides, |i| adaptations[i].adapted_message())?;
        let mut seen: FxHashMap<&str, u32> = FxHashMap::default();
        seen.reserve(n);
        let mut entries = Vec::with_capacity(n);
        for (i, a) in adaptations.iter().enumerate() {
            let count = seen.entry(a.0.hex.as_str()).or_insert(0);
            let earlier = *count;
            *count += 1;
            let given = match &ids {
                Some(ids) => Some(ids[i].as_str()),
                None => a.0.adapted.given_id.as_deref(),
            };
            let id: Cow<'_, str> = match (given, &a.0.base) {
                (Some(g), _) => Cow::Borrowed(g),
                // the first of its rendering: the base entry's own id, `{hex}:0`
                (None, Ok(base)) if earlier == 0 => Cow::Borrowed(base.id().as_str()),
                (None, _) => Cow::Owned(format!("{}:{earlier}", a.0.hex)),
            };
            let entry = a
                .entry(i, &id, overrides.get(&i).copied())
                .map_err(TranscriptError::Adapt)?;
            entries.push(entry);
        }
        let adapted = adaptations.iter().map(|a| a.0.adapted.clone()).collect();
        Transcript::new(format, entries, adapted, overrides)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Reassembles `t` (a transcript object) from per-message adaptations, reusing `cache`'s
    /// adaptations of equal messages.
    fn reassembled(
        t: &Json,
        cache: &mut Vec<(Json, Adaptation)>,
    ) -> Result<Transcript, TranscriptError> {
        let format = TranscriptFormat::from_name(t["format"].as_str().unwrap()).unwrap();
        let mut out = Vec::new();
        if let Some(s) = t.get("system") {
            out.push(Adaptation::system(format, s)?);
        }
        for (i, m) in t["messages"].as_array().unwrap().iter().enumerate() {
            let a = match cache.iter().find(|(j, _)| j == m) {
                Some((_, a)) => a.clone(),
                None => {
                    let a = Adaptation::message(format, i, m)?;
                    cache.push((m.clone(), a.clone()));
                    a
                }
            };
            out.push(a);
        }
        Transcript::reassemble(format, &out, t.get("ids"), t.get("overrides"))
    }

    fn same(a: &Transcript, b: &Transcript) {
        assert_eq!(a.entries(), b.entries());
        for e in b.entries() {
            assert_eq!(a.position(e), b.position(e));
        }
        assert_eq!(a.render(a.entries()), b.render(b.entries()));
    }

    #[test]
    fn reuse_matches_parse() {
        let user = |t: &str| json!({"role": "user", "content": t});
        let call = json!({"role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1.5}"}}]});
        let result = json!({"role": "tool", "tool_call_id": "c1", "content": "ok"});
        let mut cache = Vec::new();
        let cases = [
            json!({"format": "openai-chat", "messages": [user("hi"), user("hi"), call, result]}),
            // a duplicate's counter moves when an earlier equal message is inserted
            json!({"format": "openai-chat", "messages": [user("hi"), user("x"), user("hi"), user("hi")],
                   "overrides": {"1": "Summary"}}),
            json!({"format": "openai-chat", "messages": [user("x"), user("hi"), user("hi")],
                   "overrides": {"0": "Summary", "2": "Summary"}}),
            json!({"format": "openai-chat", "messages": [user("hi"), user("x")], "ids": ["a", "b"]}),
            // the same given id with and without an override, one after the other: each call's
            // kind is its own (the kept other entry answers only its own id and override)
            json!({"format": "openai-chat", "messages": [user("hi"), user("x")], "ids": ["a", "b"],
                   "overrides": {"0": "Summary"}}),
            json!({"format": "openai-chat", "messages": [user("hi"), user("x")], "ids": ["a", "b"]}),
            json!({"format": "anthropic-messages", "system": "be brief",
                   "messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "hi"}]}),
            json!({"format": "langchain", "messages": [
                {"type": "human", "content": "hi", "id": "h1"}, {"type": "human", "content": "hi"},
                {"type": "ai", "content": "", "tool_calls": [{"id": "c", "name": "f", "args": {}}]}]}),
            // a run of assistant messages is one turn (TRN-23), its id by the turn's rendering
            json!({"format": "anthropic-messages", "messages": [
                {"role": "user", "content": "hi"}, {"role": "assistant", "content": "a"},
                {"role": "assistant", "content": "b"}, {"role": "user", "content": "hi"}],
                "overrides": {"1": "Summary"}}),
        ];
        for t in &cases {
            let parsed = Transcript::parse(t).unwrap();
            same(&reassembled(t, &mut cache).unwrap(), &parsed);
            // again, now from the cache: the same entries, the same allocations
            let again = reassembled(t, &mut cache).unwrap();
            same(&again, &parsed);
        }
        let refused = [
            // an override of a tool message (TRN-13), a forbidden override kind (CLS-1 step 3)
            json!({"format": "openai-chat", "messages": [user("a"), result], "overrides": {"1": "Summary"}}),
            json!({"format": "openai-chat", "messages": [user("a")], "overrides": {"0": "ToolExchange"}}),
            json!({"format": "openai-chat", "messages": [user("a")], "overrides": {"3": "Summary"}}),
            json!({"format": "openai-chat", "messages": [user("a")], "ids": ["a", "b"]}),
        ];
        for t in &refused {
            let expected = Transcript::parse(t).unwrap_err();
            assert_eq!(reassembled(t, &mut cache).unwrap_err(), expected, "{t}");
        }
    }

    #[test]
    fn reuse_keeps_the_entry_and_its_digest() {
        let t = json!({"format": "openai-chat", "messages": [{"role": "user", "content": "hi"}]});
        let mut cache = Vec::new();
        let first = reassembled(&t, &mut cache).unwrap();
        let second = reassembled(&t, &mut cache).unwrap();
        assert!(first.entries()[0].ptr_eq(&second.entries()[0]));
    }
}
