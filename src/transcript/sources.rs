//! Where the final entries of a compaction come from, for a binding that hands the caller back
//! its own objects (the Python and Node packages): a run of the caller's own messages, a message
//! a reducer attempt returned, or neither (rendered in the transcript's format, SPEC TRN-6).

use serde_json::{json, Value as Json};

use hybrid_compaction_model::entry::Entry;

use super::Transcript;
use crate::node::CallTrace;

/// Where one item of the final list comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum FinalSource {
    /// `count` of the caller's own items (the top-level system first) from item `position` on:
    /// a run of kept messages, each a message or a turn of several items (TRN-23).
    Own {
        /// The first item's position among the caller's items.
        position: usize,
        /// How many consecutive items.
        count: usize,
    },
    /// Items `index .. index + count` (0-based, after the offset) reducer attempt `attempt`
    /// (0-based) returned: one message, or one turn of several items (TRN-23).
    Reducer {
        /// The reducer call.
        attempt: usize,
        /// The first item in its answer.
        index: usize,
        /// How many items.
        count: usize,
    },
    /// Neither: the entry rendered as one message of the transcript's format (TRN-6).
    New(Json),
}

impl FinalSource {
    /// The source as the bindings hand it to their language: `["o", position, count]`,
    /// `["r", attempt, index, count]` or `["n", message JSON]`.
    pub fn into_json(self) -> Json {
        match self {
            FinalSource::Own { position, count } => json!(["o", position, count]),
            FinalSource::Reducer {
                attempt,
                index,
                count,
            } => json!(["r", attempt, index, count]),
            FinalSource::New(message) => json!(["n", message]),
        }
    }
}

impl Transcript {
    /// Where each of `finals` (a call's final list) comes from, in order: a kept message is
    /// usually the transcript's entry right after the previous kept one (the same handle), so
    /// that is tried before the id lookup, and a run of them is one item (a call that keeps its
    /// history answers O(1) items). `offset` is 1 when the reducer's answers were given a
    /// top-level system in front (not one of the caller's objects). `answers[k]` is the
    /// [`Answer::items`](super::Answer::items) of reducer attempt `k`'s answer.
    pub fn final_sources(
        &self,
        record: Option<&CallTrace>,
        finals: &[Entry],
        offset: usize,
        answers: &[Vec<usize>],
    ) -> Vec<FinalSource> {
        let mut out = Vec::new();
        // The open run of own messages: (position, count).
        let mut run: Option<(usize, usize)> = None;
        let close = |out: &mut Vec<FinalSource>, run: &mut Option<(usize, usize)>| {
            if let Some((position, count)) = run.take() {
                let (position, count) = self.items(position, count);
                out.push(FinalSource::Own { position, count });
            }
        };
        for e in finals {
            let next = run.map_or(0, |(i, k)| i + k);
            let own = match self.entries().get(next) {
                Some(x) if x.ptr_eq(e) => Some(next),
                _ => self.position(e),
            };
            match (own, &mut run) {
                (Some(i), Some((_, k))) if i == next => *k += 1,
                (Some(i), _) => {
                    close(&mut out, &mut run);
                    run = Some((i, 1));
                }
                (None, _) => {
                    close(&mut out, &mut run);
                    out.push(self.final_source(record, e, offset, answers));
                }
            }
        }
        close(&mut out, &mut run);
        out
    }

    /// Where a final entry that is not one of the transcript's own messages comes from.
    fn final_source(
        &self,
        record: Option<&CallTrace>,
        e: &Entry,
        offset: usize,
        answers: &[Vec<usize>],
    ) -> FinalSource {
        let calls = record.map(|r| r.reducer.as_slice()).unwrap_or(&[]);
        for (attempt, call) in calls.iter().enumerate().rev() {
            if let Ok(Some(p)) = &call.answer {
                if let Some(j) = p.iter().position(|x| x.id() == e.id() && x == e) {
                    if j >= offset {
                        let items = answers.get(attempt).map_or(&[][..], Vec::as_slice);
                        let at = |k: usize| items.get(k).copied().unwrap_or(1);
                        return FinalSource::Reducer {
                            attempt,
                            index: (0..j - offset).map(at).sum(),
                            count: at(j - offset),
                        };
                    }
                }
            }
        }
        let rendered = self.render(std::slice::from_ref(e));
        FinalSource::New(rendered["messages"].get(0).cloned().unwrap_or(Json::Null))
    }
}
