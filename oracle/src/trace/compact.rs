//! The compact profile of trace format version 2 (`docs/TRACE.md`, "Compact records"): each
//! run's entry table, and resolving a record's table references against it.
//!
//! A run's table is the list of every entry its records defined (`defs`), in order. An entry is
//! built into vocabulary once, when it is defined, and every later reference (a snapshot's
//! `refs`, a proposal's `{"new": i}` or kept index, a result id list) shares that one value: a
//! run of calls over a growing conversation parses and builds each entry once per run, not once
//! per snapshot of every call. That, with index lists instead of 66-byte ids, is what the
//! profile is for (`docs/PERFORMANCE.md`, "Trace checking").
//!
//! Tables are advanced sequentially, in line order ([`Tables::resolve`]), before the per-call
//! checks of a batch run in parallel: a record only ever refers to entries defined by itself or
//! by earlier records of its run. A `runEnd` drops the run's table.

use std::collections::HashMap;
use std::sync::Arc;

use hybrid_compaction_model::entry::Entry;

use super::entries::entry_at;
use super::format::{
    CallRecord, ReducerAnswer, RefItem, TraceEntry, TraceProposalItem, TraceResult,
    TraceVerification,
};
use crate::wire::output::{AssemblyOutput, VerificationOutput};

/// One table entry: the entry as recorded, and built.
#[derive(Debug, Clone)]
pub struct Def {
    /// As recorded (counterexamples are written from it).
    pub source: Arc<TraceEntry>,
    /// As vocabulary (shared by every reference).
    pub entry: Entry,
}

impl Def {
    /// The recorded size (for the `recorded` estimator).
    pub fn size(&self) -> Option<i32> {
        self.source.size
    }
}

/// A snapshot written as `refs`, resolved: its entries with their recorded sizes.
pub type Sized = Vec<(Entry, Option<i32>)>;

/// A record's table references, resolved (per snapshot and per proposal item, `None` where the
/// record wrote no reference).
#[derive(Debug, Default)]
pub struct Resolved {
    /// Per snapshot: its entries when it was written as `refs` (taken by
    /// [`super::replay::prepare`]).
    pub snapshots: Vec<Option<Sized>>,
    /// Per snapshot written as `refs`: the recorded entries, kept only for counterexamples.
    pub sources: Vec<Option<Vec<Arc<TraceEntry>>>>,
    /// Per reducer step, per proposal item: the table entry of a `KeepRef` / `NewRef` item.
    pub items: Vec<Vec<Option<Def>>>,
    /// Whether any reference was resolved (the record used the compact profile).
    pub compact: bool,
}

/// The entry tables of the open runs.
#[derive(Debug, Default)]
pub struct Tables {
    runs: HashMap<String, Vec<Def>>,
}

/// Whether a record uses any version-2 member.
pub fn is_compact(rec: &CallRecord) -> bool {
    let indexed = |i: &TraceProposalItem| {
        matches!(
            i,
            TraceProposalItem::KeepRef(_) | TraceProposalItem::NewRef(_)
        )
    };
    rec.defs.is_some()
        || rec.result_refs.is_some()
        || rec.snapshots.iter().any(|s| s.refs.is_some())
        || rec.reducer.iter().any(|r| {
            r.request.is_some()
                || matches!(&r.answer, ReducerAnswer::Propose(items) if items.iter().any(indexed))
        })
}

fn get<'a>(table: &'a [Def], i: u32, path: &dyn Fn() -> String) -> Result<&'a Def, String> {
    table.get(i as usize).ok_or_else(|| {
        format!(
            "{}: table index {i} is not defined yet (the run's table holds {} entries)",
            path(),
            table.len()
        )
    })
}

/// Every table entry a reference list names, in order.
pub fn defs<'t>(
    table: &'t [Def],
    refs: &[RefItem],
    path: &dyn Fn() -> String,
) -> Result<Vec<&'t Def>, String> {
    let mut out = Vec::with_capacity(refs.len());
    for r in refs {
        match r {
            RefItem::Index(i) => out.push(get(table, *i, path)?),
            RefItem::Range([a, b]) => {
                get(table, *b, path)?;
                out.extend(table[*a as usize..=*b as usize].iter());
            }
            RefItem::Id(id) => {
                return Err(format!(
                    "{}: expected table indices, got the id {id:?}",
                    path()
                ))
            }
        }
    }
    Ok(out)
}

/// The ids a reference list stands for.
fn ids(table: &[Def], refs: &[RefItem], path: &dyn Fn() -> String) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(refs.len());
    for r in refs {
        match r {
            RefItem::Id(id) => out.push(id.clone()),
            RefItem::Index(i) => out.push(get(table, *i, path)?.entry.id().as_str().to_owned()),
            RefItem::Range([a, b]) => {
                get(table, *b, path)?;
                out.extend(
                    table[*a as usize..=*b as usize]
                        .iter()
                        .map(|d| d.entry.id().as_str().to_owned()),
                );
            }
        }
    }
    Ok(out)
}

fn verification(table: &[Def], v: TraceVerification) -> Result<VerificationOutput, String> {
    let p = |m: &'static str| move || format!("$.resultRefs.finalVerification.{m}");
    Ok(VerificationOutput {
        outcome: v.outcome,
        rejection_reasons: v.rejection_reasons,
        missing_required_entry_ids: ids(
            table,
            &v.missing_required_entry_ids,
            &p("missingRequiredEntryIds"),
        )?,
        invalid_entry_ids: ids(table, &v.invalid_entry_ids, &p("invalidEntryIds"))?,
        preservation_only_fallback_entry_ids: ids(
            table,
            &v.preservation_only_fallback_entry_ids,
            &p("preservationOnlyFallbackEntryIds"),
        )?,
    })
}

fn result(table: &[Def], r: TraceResult) -> Result<AssemblyOutput, String> {
    Ok(AssemblyOutput {
        outcome: r.outcome,
        final_entry_ids: match r.final_entry_ids {
            Some(f) => Some(ids(table, &f, &|| "$.resultRefs.finalEntryIds".to_owned())?),
            None => None,
        },
        original_estimated_size: r.original_estimated_size,
        final_estimated_size: r.final_estimated_size,
        hard_limit: r.hard_limit,
        attempt_count: r.attempt_count,
        stages: r.stages,
        required_entry_ids: ids(table, &r.required_entry_ids, &|| {
            "$.resultRefs.requiredEntryIds".to_owned()
        })?,
        latest_snapshot_version: r.latest_snapshot_version,
        final_verification: match r.final_verification {
            Some(v) => Some(verification(table, v)?),
            None => None,
        },
    })
}

impl Tables {
    /// Drops the table of a run that ended.
    pub fn end(&mut self, run: &str) {
        self.runs.remove(run);
    }

    /// Appends a record's `defs` to its run's table, each built into vocabulary once, and
    /// returns the table. Errors are unreadable-trace messages (`$.defs[i]: ...`).
    pub fn define(
        &mut self,
        run: &str,
        defs: Option<Vec<TraceEntry>>,
    ) -> Result<&mut Vec<Def>, String> {
        let table = self.runs.entry(run.to_owned()).or_default();
        for (i, t) in defs.into_iter().flatten().enumerate() {
            let entry = entry_at(&t, || format!("$.defs[{i}]")).map_err(|e| e.to_string())?;
            table.push(Def {
                source: Arc::new(t),
                entry,
            });
        }
        Ok(table)
    }

    /// Appends `rec`'s `defs` to its run's table and resolves its references; `resultRefs`
    /// becomes `result`. `compact` is false for a version-1 trace, where version-2 members are
    /// refused; `sources` keeps the recorded entries (for counterexamples). Errors are
    /// unreadable-trace messages (paths relative to the record, `$`).
    pub fn resolve(
        &mut self,
        rec: &mut CallRecord,
        compact: bool,
        sources: bool,
    ) -> Result<Resolved, String> {
        if !is_compact(rec) {
            return Ok(Resolved::default());
        }
        if !compact {
            return Err(
                "$: `defs`, `refs`, `request`, table indices and `resultRefs` need the header {\"trace\": 2}"
                    .to_owned(),
            );
        }
        let table = self.define(&rec.run, rec.defs.take())?;
        let mut out = Resolved {
            compact: true,
            ..Resolved::default()
        };
        for (i, s) in rec.snapshots.iter().enumerate() {
            let refs = match &s.refs {
                Some(_) if s.entries.is_some() => {
                    return Err(format!(
                        "$.snapshots[{i}]: a snapshot has `entries` or `refs`, not both"
                    ))
                }
                Some(r) => Some(defs(table, r, &|| format!("$.snapshots[{i}].refs"))?),
                None => None,
            };
            out.sources.push(match &refs {
                Some(ds) if sources => Some(ds.iter().map(|d| Arc::clone(&d.source)).collect()),
                _ => None,
            });
            out.snapshots.push(refs.map(|ds| {
                ds.into_iter()
                    .map(|d| (d.entry.clone(), d.size()))
                    .collect()
            }));
        }
        for (i, st) in rec.reducer.iter().enumerate() {
            if let Some(r) = &st.request {
                defs(table, r, &|| format!("$.reducer[{i}].request"))?;
            }
            let mut items = Vec::new();
            if let ReducerAnswer::Propose(ps) = &st.answer {
                for (j, p) in ps.iter().enumerate() {
                    let path = || format!("$.reducer[{i}].answer.propose[{j}]");
                    items.push(match p {
                        TraceProposalItem::KeepRef(k) => Some(get(table, *k, &path)?.clone()),
                        TraceProposalItem::NewRef(n) => Some(get(table, n.new, &path)?.clone()),
                        _ => None,
                    });
                }
            }
            out.items.push(items);
        }
        if let Some(r) = rec.result_refs.take() {
            if rec.result.is_some() {
                return Err(
                    "$.resultRefs: a record has `result` or `resultRefs`, not both".to_owned(),
                );
            }
            rec.result = Some(result(table, r)?);
        }
        Ok(out)
    }
}

/// `rec` with its table references written out as version-1 members (`entries`, kept ids,
/// `{"new": entry}`), for counterexamples: the shrinker works on self-contained records.
pub fn expand(rec: &CallRecord, resolved: &Resolved) -> CallRecord {
    let mut out = rec.clone();
    for (s, r) in out.snapshots.iter_mut().zip(&resolved.sources) {
        if let Some(ds) = r {
            s.entries = Some(ds.iter().map(|d| (**d).clone()).collect());
            s.refs = None;
        }
    }
    for (st, items) in out.reducer.iter_mut().zip(&resolved.items) {
        st.request = None;
        if let ReducerAnswer::Propose(ps) = &mut st.answer {
            for (p, d) in ps.iter_mut().zip(items) {
                match (&*p, d) {
                    (TraceProposalItem::KeepRef(_), Some(d)) => {
                        *p = TraceProposalItem::Keep(d.entry.id().as_str().to_owned())
                    }
                    (TraceProposalItem::NewRef(_), Some(d)) => {
                        *p = TraceProposalItem::New(Box::new(super::format::NewTraceEntry {
                            new: (*d.source).clone(),
                        }))
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// Index lists as references: runs of three or more consecutive indices become ranges.
pub fn compress(indices: &[u32]) -> Vec<RefItem> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let mut j = i;
        while j + 1 < indices.len() && indices[j + 1] == indices[j] + 1 {
            j += 1;
        }
        if j - i >= 2 {
            out.push(RefItem::Range([indices[i], indices[j]]));
        } else {
            out.extend(indices[i..=j].iter().map(|&k| RefItem::Index(k)));
        }
        i = j + 1;
    }
    out
}
