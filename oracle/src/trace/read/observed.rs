//! An observed record's entry lists (SPEC TRC-13), built in line order: its `defs` defined in
//! its run's table (version 2's compact profile), its history and sent entries built or
//! resolved against that table, and what the record must say for them to be judged (a
//! `refused` record sent nothing, every sent entry has a size under the `recorded` estimator,
//! no history id is recorded twice). Judging them is [`crate::trace::judge::observed`]'s.

use std::collections::HashMap;

use hybrid_compaction_model::entry::Entry;

use super::entries::entry_at;
use super::tables::{defs, Def, Tables};
use super::Malformed;
use crate::trace::format::{Dispatch, ObservedRecord, TraceEntries, TraceEntry, OBSERVED_VERSION};
use crate::wire::input::EstimatorInput;

/// Entries with their recorded sizes.
pub(crate) type SizedEntries = Vec<(Entry, Option<i32>)>;

/// The table entries of a list written as `refs`, kept for counterexamples (their recorded
/// forms are rebuilt only for one).
pub(crate) type Sources = Option<Vec<Def>>;

/// An observed record's entry lists, built.
#[derive(Debug, Default)]
pub(crate) struct ObservedEntries {
    /// The history, in order.
    pub history: SizedEntries,
    /// The sent entries, in order (absent when nothing was sent).
    pub sent: Option<SizedEntries>,
    /// For counterexamples, the recorded entries of the lists written as `refs` (history, then
    /// sent); lists written out are read from the record itself.
    pub(crate) sources: (Sources, Sources),
}

/// Builds the entries written out in a record, each distinct one once: a sent entry recorded
/// as its history entry was (same id, same recorded form) shares that entry.
#[derive(Default)]
struct Builder<'r> {
    built: HashMap<&'r str, Vec<(&'r TraceEntry, Entry)>>,
}

impl<'r> Builder<'r> {
    fn build(&mut self, t: &'r TraceEntry, path: impl Fn() -> String) -> Result<Entry, Malformed> {
        let slot = self.built.entry(t.id.as_str()).or_default();
        if let Some((_, e)) = slot.iter().find(|(s, _)| *s == t) {
            return Ok(e.clone());
        }
        let e = entry_at(t, path)?;
        slot.push((t, e.clone()));
        Ok(e)
    }
}

/// One entry list: written out, or as references to the run's table (whose recorded entries
/// are kept in `sources` when it is `Some`).
fn list<'r>(
    l: &'r TraceEntries,
    member: &str,
    table: &[Def],
    builder: &mut Builder<'r>,
    sources: &mut Sources,
) -> Result<SizedEntries, Malformed> {
    match (&l.entries, &l.refs) {
        (Some(_), Some(_)) => Err(Malformed::new(format!(
            "$.{member}: a list has `entries` or `refs`, not both"
        ))),
        (None, None) => Err(Malformed::new(format!(
            "$.{member}: expected `entries` or `refs`"
        ))),
        (Some(ts), None) => ts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let e = builder.build(t, || format!("$.{member}.entries[{i}]"))?;
                Ok((e, t.size))
            })
            .collect(),
        (None, Some(refs)) => {
            let ds = defs(table, refs, &|| format!("$.{member}.refs"))?;
            if let Some(s) = sources {
                s.extend(ds.iter().map(|&(_, d)| d.clone()));
            }
            Ok(ds
                .into_iter()
                .map(|(_, d)| (d.entry.clone(), d.size))
                .collect())
        }
    }
}

/// Defines the record's `defs` in its run's table and builds its history and sent entries, in
/// line order (SPEC TRC-13); `sources` keeps what counterexamples need. Errors are
/// unreadable-trace messages (paths relative to `$`).
pub(crate) fn resolve(
    tables: &mut Tables,
    rec: &mut ObservedRecord,
    version: u32,
    sources: bool,
) -> Result<ObservedEntries, Malformed> {
    if version < OBSERVED_VERSION {
        return Err(Malformed::new(format!(
            "$.type: observed records need the header {{\"trace\": {OBSERVED_VERSION}}}"
        )));
    }
    match (rec.dispatch, &rec.sent) {
        (Some(Dispatch::Refused), Some(_)) => {
            return Err(Malformed::new(
                "$.dispatch: `refused` means nothing was sent, but the record has `sent`",
            ))
        }
        (Some(d @ (Dispatch::Answered | Dispatch::Failed)), None) => {
            let word = if d == Dispatch::Answered {
                "answered"
            } else {
                "failed"
            };
            return Err(Malformed::new(format!(
                "$.dispatch: `{word}` means the entries were sent, but the record has no `sent`"
            )));
        }
        _ => {}
    }
    let table = tables.define(&rec.run, rec.defs.take(), sources)?;
    let mut builder = Builder::default();
    let keep = |l: &TraceEntries| (sources && l.refs.is_some()).then(Vec::new);
    let mut kept = (keep(&rec.history), rec.sent.as_ref().and_then(keep));
    let history = list(&rec.history, "history", table, &mut builder, &mut kept.0)?;
    let sent = match &rec.sent {
        Some(s) => Some(list(s, "sent", table, &mut builder, &mut kept.1)?),
        None => None,
    };
    let mut ids = std::collections::HashSet::with_capacity(history.len());
    if let Some((e, _)) = history.iter().find(|(e, _)| !ids.insert(e.id().as_str())) {
        return Err(Malformed::new(format!(
            "$.history: the entry id {:?} is recorded twice; an id names one entry of the history",
            e.id().as_str()
        )));
    }
    if matches!(rec.policy.estimator, EstimatorInput::Recorded(_)) {
        if let Some(i) = sent.iter().flatten().position(|(_, s)| s.is_none()) {
            return Err(Malformed::new(format!(
                "$.sent: entry {i} has no `size`; the `recorded` estimator needs one on every sent entry"
            )));
        }
    }
    Ok(ObservedEntries {
        history,
        sent,
        sources: kept,
    })
}
