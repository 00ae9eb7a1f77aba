//! Where the final entries of a compaction come from, for a binding that hands the caller back
//! its own objects (the Python and Node packages): a run of the caller's own messages, a message
//! a reducer attempt returned, or neither (rendered in the transcript's format, SPEC TRN-6).

use serde_json::Value as Json;

use hybrid_compaction_model::entry::Entry;

use super::Transcript;
use crate::node::CallTrace;

/// Where one item of the final list comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum FinalSource {
    /// `count` of the transcript's own messages from adapted position `position` on.
    Own {
        /// The first one's adapted position.
        position: usize,
        /// How many consecutive ones.
        count: usize,
    },
    /// Message `index` (0-based, after the offset) of reducer attempt `attempt` (0-based).
    Reducer {
        /// The reducer call.
        attempt: usize,
        /// The message in its answer.
        index: usize,
    },
    /// Neither: the entry rendered as one message of the transcript's format (TRN-6).
    New(Json),
}

impl Transcript {
    /// Where each of `finals` (a call's final list) comes from, in order: a kept message is
    /// usually the transcript's entry right after the previous kept one (the same handle), so
    /// that is tried before the id lookup, and a run of them is one item (a call that keeps its
    /// history answers O(1) items). `offset` is 1 when the reducer's answers were given a
    /// top-level system in front (not one of the caller's objects).
    pub fn final_sources(
        &self,
        record: Option<&CallTrace>,
        finals: &[Entry],
        offset: usize,
    ) -> Vec<FinalSource> {
        let mut out = Vec::new();
        // The open run of own messages: (position, count).
        let mut run: Option<(usize, usize)> = None;
        let close = |out: &mut Vec<FinalSource>, run: &mut Option<(usize, usize)>| {
            if let Some((position, count)) = run.take() {
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
                    out.push(self.final_source(record, e, offset));
                }
            }
        }
        close(&mut out, &mut run);
        out
    }

    /// Where a final entry that is not one of the transcript's own messages comes from.
    fn final_source(&self, record: Option<&CallTrace>, e: &Entry, offset: usize) -> FinalSource {
        let calls = record.map(|r| r.reducer.as_slice()).unwrap_or(&[]);
        for (attempt, call) in calls.iter().enumerate().rev() {
            if let Ok(Some(p)) = &call.answer {
                if let Some(j) = p.iter().position(|x| x.id() == e.id() && x == e) {
                    if j >= offset {
                        return FinalSource::Reducer {
                            attempt,
                            index: j - offset,
                        };
                    }
                }
            }
        }
        let rendered = self.render(std::slice::from_ref(e));
        FinalSource::New(rendered["messages"].get(0).cloned().unwrap_or(Json::Null))
    }
}
