//! `verify`: `Verify(original, proposed)` (SPEC VER-1 .. VER-5).

use std::collections::HashMap;

use hybrid_compaction_model::entry::Entry;
use hybrid_compaction_model::seam::Implementation;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use super::Operation;
use crate::wire::convert;
use crate::wire::error::{typed, CaseError, WireError};
use crate::wire::input::{id_or_object, EntryInput, PolicyInput};
use crate::wire::output::verification_output;
use crate::wire::output::VerificationOutput;

/// Inputs of the `verify` operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerifyCase {
    /// The policy (retention count matters for required ids).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInput>,
    /// The original list (required ids come from it).
    pub original: Vec<EntryInput>,
    /// The proposal: entries, or a string naming an original entry to copy unchanged.
    pub proposed: Vec<ProposedItem>,
    /// Only `before` is meaningful here: the verifier checks the token first (SPEC VER-5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("pattern" = "^before$"))]
    pub cancel: Option<String>,
}

/// One proposed entry: a copy of an original entry (by id) or a new entry.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ProposedItem {
    /// The original entry with this id, unchanged.
    Same(String),
    /// A full entry.
    Entry(EntryInput),
}

impl<'de> Deserialize<'de> for ProposedItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ProposedItem, D::Error> {
        id_or_object::<D, EntryInput, _>(d, "an original entry id (a string) or an entry object")
    }
}

impl From<String> for ProposedItem {
    fn from(id: String) -> ProposedItem {
        ProposedItem::Same(id)
    }
}

impl From<EntryInput> for ProposedItem {
    fn from(e: EntryInput) -> ProposedItem {
        ProposedItem::Entry(e)
    }
}

/// The proposed list of a `verify` case: ids name original entries (the first with that id, as a
/// positional search would find it), objects are new entries. One id index, so linear in the
/// input.
fn proposed_entries(original: &[Entry], items: &[ProposedItem]) -> Result<Vec<Entry>, CaseError> {
    let mut by_id: HashMap<&str, &Entry> = HashMap::with_capacity(original.len());
    for entry in original {
        by_id.entry(entry.id().as_str()).or_insert(entry);
    }
    let mut proposed = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        proposed.push(match item {
            ProposedItem::Same(id) => {
                by_id
                    .get(id.as_str())
                    .map(|e| (*e).clone())
                    .ok_or_else(|| {
                        WireError::new(
                            format!("$.proposed[{i}]"),
                            format!("no original entry with id {id:?}"),
                        )
                    })?
            }
            ProposedItem::Entry(e) => convert::entry(e, &format!("$.proposed[{i}]"))?,
        });
    }
    Ok(proposed)
}

/// The answer of `verify`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerifyAnswer {
    /// The verification result.
    pub verification: VerificationOutput,
}

impl Operation for VerifyCase {
    const ANSWER: &'static str = "verification";
    type Answer = VerifyAnswer;

    fn run(&self, imp: &dyn Implementation) -> Result<VerifyAnswer, CaseError> {
        let point = convert::cancel_point(self.cancel.as_ref(), "$.cancel")?;
        let token = convert::token_for(point, "$.cancel", false)?;
        let p = convert::policy(self.policy.as_ref(), imp, "$.policy")?;
        let original = convert::entries(&self.original, "$.original")?;
        let proposed = proposed_entries(&original, &self.proposed)?;
        let v = match point {
            // SPEC VER-5: with a token, the verifier checks it first.
            Some(_) => imp.verify_cancellable(&original, &proposed, &p, &token),
            None => imp.verify(&original, &proposed, &p),
        }
        .map_err(|e| typed(&e))?;
        Ok(VerifyAnswer {
            verification: verification_output(&v),
        })
    }

    fn policy_slot(&mut self) -> Option<&mut Option<PolicyInput>> {
        Some(&mut self.policy)
    }
}
