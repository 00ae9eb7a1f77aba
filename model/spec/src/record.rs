//! Reference records: fresh creation and reconstruction (SPEC ARF-1 .. ARF-3; C# S80).
//!
//! Reconstruction's checks live once, in the vocabulary's validated constructor
//! ([`ReferenceRecord::reconstruct`], SPEC ARF-2); [`create`] is ARF-3: hash the body, derive
//! the reference and path, take the owners from the trusted binding, then the same checks.

use std::time::SystemTime;

use hybrid_compaction_model::artifact::ArtifactReference;
use hybrid_compaction_model::artifact_record::{
    RecordError, RecordFields, ReferenceRecord, SCHEMA_VERSION,
};
use hybrid_compaction_model::trust::TrustBinding;

pub use hybrid_compaction_model::artifact_record::utf16_len;

/// Rebuilds a record from stored fields (SPEC ARF-2).
pub fn reconstruct(fields: RecordFields) -> Result<ReferenceRecord, RecordError> {
    ReferenceRecord::reconstruct(fields)
}

/// What the creator of a record supplies (SPEC ARF-3); owners are not among them.
#[derive(Debug, Clone, Copy)]
pub struct Creation<'a> {
    /// The body to reference.
    pub body: &'a str,
    /// The description (at most 500 UTF-16 units).
    pub description: &'a str,
    /// The creating tool's name.
    pub tool_name: &'a str,
    /// The creating tool call's id.
    pub call_id: &'a str,
}

/// Creates the record of a body (SPEC ARF-3): the digest of its UTF-8 bytes, the path derived
/// from it, its UTF-8 length, the owners of the trusted `binding`, the time `now`.
pub fn create(
    creation: Creation<'_>,
    binding: &TrustBinding,
    now: SystemTime,
) -> Result<ReferenceRecord, RecordError> {
    let reference = ArtifactReference::to_content(creation.body);
    reconstruct(RecordFields {
        schema: SCHEMA_VERSION,
        reference_id: reference.to_string(),
        path: reference.path(),
        digest: reference.digest().to_hex(),
        byte_size: creation.body.len() as i64,
        description: creation.description.to_owned(),
        owners: binding.owners.clone(),
        tool_name: creation.tool_name.to_owned(),
        call_id: creation.call_id.to_owned(),
        created_at: now,
    })
}
