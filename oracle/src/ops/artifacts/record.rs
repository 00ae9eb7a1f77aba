//! `record`: reference-record creation under the trusted binding (SPEC ARF-3) or reconstruction
//! from stored fields (SPEC ARF-1, ARF-2).

use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::artifact_record::{RecordFields, SCHEMA_VERSION};
use hybrid_compaction_model::seam::composition::{default_binding, default_owners};
use hybrid_compaction_model::seam::Implementation;
use hybrid_compaction_spec as spec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::super::Operation;
use super::{record_error, record_output, RecordOutput};
use crate::wire::error::{wire, CaseError};
use crate::wire::host::{binding, fixed_now, owners, BindingInput, OwnersInput};

/// A reference record's stored fields (SPEC ARF-1, ARF-2); every absent field defaults to the
/// consistent value for `body` (owners: the default binding's; tool `tool`, call `call-1`,
/// description empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordFieldsInput {
    /// The referenced body (defaults derive from it).
    pub body: String,
    /// Schema version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<i32>,
    /// Reference id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_id: Option<String>,
    /// Workspace path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Lowercase hex digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Byte size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_size: Option<i64>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Owners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owners: Option<OwnersInput>,
    /// Creating tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Creating tool call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

/// What a record is created from (SPEC ARF-3): owners come from the binding, never from here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreationInput {
    /// The body.
    pub body: String,
    /// The description.
    #[serde(default)]
    pub description: String,
    /// The creating tool's name.
    pub tool_name: String,
    /// The creating tool call's id.
    pub call_id: String,
}

/// Inputs of `record`: exactly one of `create` (SPEC ARF-3) and `reconstruct` (SPEC ARF-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordCase {
    /// Fresh creation under `binding`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<CreationInput>,
    /// Reconstruction from stored fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconstruct: Option<RecordFieldsInput>,
    /// The trusted binding of a creation (default: owners `user-1` / `orch-1` / `session-1`,
    /// workspace 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<BindingInput>,
}

/// The answer of `record`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordAnswer {
    /// The result.
    pub record: RecordOutput,
}

impl Operation for RecordCase {
    const ANSWER: &'static str = "record";
    type Answer = RecordAnswer;

    fn run(&self, _imp: &dyn Implementation) -> Result<RecordAnswer, CaseError> {
        let c = self;
        let made = match (&c.create, &c.reconstruct) {
            (Some(cr), None) => {
                let binding = c.binding.as_ref().map_or_else(default_binding, binding);
                let creation = spec::record::Creation {
                    body: &cr.body,
                    description: &cr.description,
                    tool_name: &cr.tool_name,
                    call_id: &cr.call_id,
                };
                spec::record::create(creation, &binding, fixed_now())
            }
            (None, Some(r)) => {
                if c.binding.is_some() {
                    return wire("$.binding", "a reconstruction takes no binding");
                }
                let reference = ArtifactReference::to_content(&r.body);
                spec::record::reconstruct(RecordFields {
                    schema: r.schema.unwrap_or(SCHEMA_VERSION),
                    reference_id: r.reference_id.clone().unwrap_or(reference.to_string()),
                    path: r.path.clone().unwrap_or_else(|| reference.path()),
                    digest: r
                        .digest
                        .clone()
                        .unwrap_or_else(|| reference.digest().to_hex()),
                    byte_size: r.byte_size.unwrap_or(r.body.len() as i64),
                    description: r.description.clone().unwrap_or_default(),
                    owners: r.owners.as_ref().map_or_else(default_owners, owners),
                    tool_name: r.tool_name.clone().unwrap_or_else(|| "tool".to_owned()),
                    call_id: r.call_id.clone().unwrap_or_else(|| "call-1".to_owned()),
                    created_at: fixed_now(),
                })
            }
            _ => {
                return wire(
                    "$",
                    "a record case needs exactly one of `create` and `reconstruct`",
                )
            }
        }
        .map_err(|e| record_error(&e))?;
        Ok(RecordAnswer {
            record: record_output(&made),
        })
    }
}
