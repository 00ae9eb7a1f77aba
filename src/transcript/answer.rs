//! A reducer's answer read in its transcript's format (SPEC TRN-14, TRN-23).
//!
//! A reducer (the caller's function) gets the caller's items and returns items. Each returned
//! item that is one of the transcript's own is read as the message the transcript adapted it
//! into: its reused call ids paired as the transcript pairs them (TRN-14), an approval request
//! awaiting its answer as approval state (TRN-24), and, when it is an
//! item of a turn (TRN-23), that whole turn, with the turn's items that follow it in the answer.
//! A provider receives a turn whole, so an answer keeps or drops a turn whole: any of its items
//! keeps it. Every other item is adapted alone ([`parse_messages`](super::parse_messages)), a
//! new message the bridge judges (BRG-3). Equal items are taken in order, the first not yet
//! taken first, as BRG-2 matches.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;
use serde_json::Value as Json;

use super::{adapt_items, Answer, Source, Transcript, TranscriptError};

impl Transcript {
    /// Messages a reducer returned (`values`, this transcript's format, its `messages` only)
    /// read as the transcript reads its own (see the module docs), with the number of items
    /// each message was read from.
    pub fn read_answer(&self, values: &[Json]) -> Result<Answer, TranscriptError> {
        let alone = adapt_items(self.format, None, values)?;
        if self.originals.is_empty() && self.starts.is_none() && !self.rewritten {
            let messages = alone.into_iter().map(|a| a.message).collect();
            return Ok(Answer {
                messages,
                items: vec![1; values.len()],
            });
        }
        let mut own = self.own_items();
        let mut answer = Answer {
            messages: Vec::with_capacity(values.len()),
            items: Vec::with_capacity(values.len()),
        };
        let mut alone = alone.into_iter();
        let mut i = 0;
        while i < values.len() {
            let adapted = alone.next().map(|a| a.message);
            let taken = own
                .get_mut(&item_key(&values[i]))
                .and_then(VecDeque::pop_front);
            let (message, count) = match (taken, adapted) {
                (Some(p), _) => (
                    self.adapted[p].message.clone(),
                    self.turn_run(p, &values[i..]),
                ),
                (None, Some(m)) => (m, 1),
                (None, None) => break,
            };
            // the rest of a turn's items are read with it
            for _ in 1..count {
                alone.next();
            }
            answer.messages.push(message);
            answer.items.push(count);
            i += count;
        }
        Ok(answer)
    }

    /// Every item of the transcript's messages (not its top-level system): its JSON's key ->
    /// the positions of the messages holding it, in order.
    fn own_items(&self) -> FxHashMap<String, VecDeque<usize>> {
        let mut own: FxHashMap<String, VecDeque<usize>> = FxHashMap::default();
        for (p, a) in self.adapted.iter().enumerate() {
            match &a.source {
                Source::Message(j) => own.entry(item_key(j)).or_default().push_back(p),
                Source::Turn(items) => {
                    for j in items {
                        own.entry(item_key(j)).or_default().push_back(p);
                    }
                }
                Source::System(_) => {}
            }
        }
        own
    }

    /// How many of `values` (starting with an item of the message at position `p`) are items of
    /// that message, consecutively: 1 for a message of one item.
    fn turn_run(&self, p: usize, values: &[Json]) -> usize {
        let Source::Turn(items) = &self.adapted[p].source else {
            return 1;
        };
        1 + values[1..].iter().take_while(|v| items.contains(v)).count()
    }
}

/// The key of one item: its JSON text.
fn item_key(j: &Json) -> String {
    j.to_string()
}
