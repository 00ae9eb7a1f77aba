//! Rendering what stateful operations observe: runs are written `R1`, `R2`, ... in creation
//! order and attempts' `AssemblyId`s `A1`, `A2`, ... in order of first appearance
//! ([`Placeholders`]), so two answers are equal exactly when their runs and ids pair up the
//! same way, whatever the underlying values (SPEC EVT-5). Digests are 64 lowercase hex digits
//! (SPEC ART-1).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::lease::LeaseId;
use hybrid_compaction_model::seam::RunView;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Placeholder names in order of first appearance.
#[derive(Debug, Default)]
pub(crate) struct Placeholders {
    prefix: &'static str,
    seen: HashMap<String, String>,
}

impl Placeholders {
    /// Names `{prefix}1`, `{prefix}2`, ...
    pub(crate) fn new(prefix: &'static str) -> Placeholders {
        Placeholders {
            prefix,
            seen: HashMap::new(),
        }
    }

    /// The placeholder of `key` (a new one on first sight).
    pub(crate) fn name(&mut self, key: &str) -> String {
        let next = self.seen.len() + 1;
        self.seen
            .entry(key.to_owned())
            .or_insert_with(|| format!("{}{next}", self.prefix))
            .clone()
    }
}

/// Base of the lease ids of leases a scenario names without a call.
pub(crate) const RAW_LEASE_BASE: u64 = 1 << 40;

/// The observable state of one run after a step (SPEC LSE-1, LSE-7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunOutput {
    /// `R1`, `R2`, ... in creation order.
    pub run: String,
    /// Delivered digests, sorted.
    pub delivered: Vec<String>,
    /// Reserved digest -> the name of the lease holding it.
    pub reserved: BTreeMap<String, String>,
    /// Non-zero revision counters of the digests the scenario names.
    pub revisions: BTreeMap<String, u64>,
    /// Whether a call holds the run's gate.
    pub gate_occupied: bool,
}

/// Renders a run view: its placeholder, digests, lease names (`lease_name(run, lease)`) and the
/// non-zero counters of the `named` digests.
pub(crate) fn run_output(
    view: Option<RunView>,
    runs: &mut Placeholders,
    lease_name: impl Fn(usize, LeaseId) -> String,
    revision: impl Fn(Digest) -> u64,
    named: &BTreeSet<Digest>,
) -> Option<RunOutput> {
    let v = view?;
    Some(RunOutput {
        run: runs.name(&v.run.to_string()),
        delivered: v.delivered.iter().map(Digest::to_hex).collect(),
        reserved: v
            .reserved
            .iter()
            .map(|(d, l)| (d.to_hex(), lease_name(v.run, *l)))
            .collect(),
        revisions: named
            .iter()
            .map(|d| (d.to_hex(), revision(*d)))
            .filter(|(_, r)| *r != 0)
            .collect(),
        gate_occupied: v.gate_occupied,
    })
}
