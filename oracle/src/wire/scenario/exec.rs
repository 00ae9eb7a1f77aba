//! Running the scenario operations: converting their inputs (with path-precise wire errors),
//! driving an implementation's worlds, and rendering the answers with placeholders for runs
//! (`R1`, ...) and `AssemblyId`s (`A1`, ...) in order of first appearance. One module per
//! operation family: [`super::records`] (`diagnostics`, `bridge`), [`super::drive_leases`]
//! (`leases`), [`super::drive_node`] (`node`); this module holds what they share.

use std::collections::{BTreeSet, HashMap};

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::lease::LeaseId;

use super::leases::RunView;
use super::output::RunOutput;
use crate::wire::convert::{self, CaseError, WireError};
use crate::wire::output::ErrorOutput;

pub use super::drive_leases::leases;
pub use super::drive_node::node;
pub use super::records::{bridge, diagnostics};

pub(super) fn wire<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, CaseError> {
    Err(CaseError::Wire(WireError::new(path, message)))
}

// ---------------------------------------------------------------------------------------------
// placeholders and run views

/// Placeholder names in order of first appearance.
#[derive(Debug, Default)]
pub(super) struct Placeholders {
    prefix: &'static str,
    seen: HashMap<String, String>,
}

impl Placeholders {
    pub(super) fn new(prefix: &'static str) -> Placeholders {
        Placeholders {
            prefix,
            seen: HashMap::new(),
        }
    }

    pub(super) fn name(&mut self, key: &str) -> String {
        let next = self.seen.len() + 1;
        self.seen
            .entry(key.to_owned())
            .or_insert_with(|| format!("{}{next}", self.prefix))
            .clone()
    }
}

/// Base of the lease ids of leases a scenario names without a call.
pub(super) const RAW_LEASE_BASE: u64 = 1 << 40;

pub(super) fn run_output(
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

pub(super) fn lease_error(e: &hybrid_compaction_model::lease::LeaseError) -> ErrorOutput {
    convert::answer(e.kind(), None, None, e.to_string())
}
