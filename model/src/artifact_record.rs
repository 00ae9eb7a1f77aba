//! Artifact reference records (SPEC ARF-1 .. ARF-3; C# S80).
//!
//! A [`ReferenceRecord`] exists only validated: [`ReferenceRecord::reconstruct`] applies the
//! checks of SPEC ARF-2 in order (schema, reference id, digest, path recheck, byte size,
//! description length in UTF-16 units, owners, tool name and call id). Fresh creation (ARF-3:
//! hash the body, owners from the trusted binding) is `hybrid_compaction_spec::record::create`,
//! which goes through the same checks. The path is never stored: it is recomputed from the
//! digest (ART-2), so a record cannot name a path its digest does not derive.
//!
//! Errors name the field, never its value; `Debug` shows the reference and the byte size only
//! (owners, tool name, call id and description are private, SPEC ATR-4).

use std::fmt;
use std::time::SystemTime;

use crate::artifact::{ArtifactReference, Digest};
use crate::error::ErrorKind;
use crate::names::named_enum;
use crate::trust::Owners;

/// The only schema version (SPEC ARF-1).
pub const SCHEMA_VERSION: i32 = 1;

/// The description limit in UTF-16 code units (SPEC ARF-1).
pub const DESCRIPTION_LIMIT_UTF16: usize = 500;

/// A record's stored fields before validation (SPEC ARF-2).
#[derive(Clone)]
pub struct RecordFields {
    /// Schema version; must be [`SCHEMA_VERSION`].
    pub schema: i32,
    /// The reference id text (ART-2).
    pub reference_id: String,
    /// The stored workspace path; must equal the path derived from the digest.
    pub path: String,
    /// The stored digest (ART-1); must be the reference's.
    pub digest: String,
    /// The body's UTF-8 byte size; must be `> 0`.
    pub byte_size: i64,
    /// At most [`DESCRIPTION_LIMIT_UTF16`] UTF-16 units.
    pub description: String,
    /// Owner ids; each non-blank.
    pub owners: Owners,
    /// The creating tool's name; non-blank.
    pub tool_name: String,
    /// The creating tool call's id; non-blank.
    pub call_id: String,
    /// Creation time.
    pub created_at: SystemTime,
}

impl fmt::Debug for RecordFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RecordFields(<redacted>)")
    }
}

named_enum! {
    /// The record field an error names (SPEC ARF-2).
    pub enum RecordField {
        /// Schema version.
        Schema,
        /// Reference id.
        ReferenceId,
        /// Digest.
        Digest,
        /// Path.
        Path,
        /// Byte size.
        ByteSize,
        /// Description.
        Description,
        /// Owner user id.
        OwnerUserId,
        /// Owner orchestration id.
        OwnerOrchestrationId,
        /// Owner session id.
        OwnerSessionId,
        /// Creating tool name.
        ToolName,
        /// Creating tool call id.
        CallId,
    }
}

/// Why a record was refused (SPEC ARF-2). Names the field, never its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The schema version is not 1 (`NotSupported`).
    #[error("artifact record schema version is not supported")]
    UnsupportedSchema,
    /// A field is malformed, blank or inconsistent (`InvalidArgument`).
    #[error("artifact record field {0} is invalid")]
    Invalid(RecordField),
    /// A size or length is out of range (`OutOfRange`).
    #[error("artifact record field {0} is out of range")]
    OutOfRange(RecordField),
}

impl RecordError {
    /// The language-neutral category (SPEC ERR-1, ARF-2).
    pub fn kind(&self) -> ErrorKind {
        match self {
            RecordError::UnsupportedSchema => ErrorKind::NotSupported,
            RecordError::Invalid(_) => ErrorKind::InvalidArgument,
            RecordError::OutOfRange(_) => ErrorKind::OutOfRange,
        }
    }
}

/// A validated reference record (SPEC ARF-1).
#[derive(Clone, PartialEq, Eq)]
pub struct ReferenceRecord {
    reference: ArtifactReference,
    byte_size: i64,
    description: String,
    owners: Owners,
    tool_name: String,
    call_id: String,
    created_at: SystemTime,
}

impl fmt::Debug for ReferenceRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReferenceRecord")
            .field("reference", &self.reference)
            .field("byte_size", &self.byte_size)
            .finish_non_exhaustive()
    }
}

/// Unicode `White_Space` only (or empty), as SPEC ENT-2 defines blank.
fn blank(s: &str) -> bool {
    s.chars().all(char::is_whitespace)
}

/// The length of `s` in UTF-16 code units (SPEC ARF-1): a character outside the BMP counts 2.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

impl ReferenceRecord {
    /// Rebuilds a record from stored fields with the checks of SPEC ARF-2, in order.
    pub fn reconstruct(fields: RecordFields) -> Result<ReferenceRecord, RecordError> {
        use RecordField as F;
        let invalid = RecordError::Invalid;
        // SPEC ARF-2: schema 1, else NotSupported.
        if fields.schema != SCHEMA_VERSION {
            return Err(RecordError::UnsupportedSchema);
        }
        // The reference id parses (ART-2).
        let reference =
            ArtifactReference::parse(&fields.reference_id).map_err(|_| invalid(F::ReferenceId))?;
        // The stored digest is well-formed and is the reference's.
        let digest = Digest::parse(&fields.digest).map_err(|_| invalid(F::Digest))?;
        if digest != reference.digest() {
            return Err(invalid(F::Digest));
        }
        // The stored path equals the path recomputed from the digest.
        if fields.path != reference.path() {
            return Err(invalid(F::Path));
        }
        if fields.byte_size <= 0 {
            return Err(RecordError::OutOfRange(F::ByteSize));
        }
        if utf16_len(&fields.description) > DESCRIPTION_LIMIT_UTF16 {
            return Err(RecordError::OutOfRange(F::Description));
        }
        let owners = &fields.owners;
        for (value, field) in [
            (&owners.user_id, F::OwnerUserId),
            (&owners.orchestration_id, F::OwnerOrchestrationId),
            (&owners.session_id, F::OwnerSessionId),
            (&fields.tool_name, F::ToolName),
            (&fields.call_id, F::CallId),
        ] {
            if blank(value) {
                return Err(invalid(field));
            }
        }
        Ok(ReferenceRecord {
            reference,
            byte_size: fields.byte_size,
            description: fields.description,
            owners: fields.owners,
            tool_name: fields.tool_name,
            call_id: fields.call_id,
            created_at: fields.created_at,
        })
    }

    /// The stored fields of this record (the inverse of [`ReferenceRecord::reconstruct`]).
    pub fn fields(&self) -> RecordFields {
        RecordFields {
            schema: SCHEMA_VERSION,
            reference_id: self.reference.to_string(),
            path: self.path(),
            digest: self.reference.digest().to_hex(),
            byte_size: self.byte_size,
            description: self.description.clone(),
            owners: self.owners.clone(),
            tool_name: self.tool_name.clone(),
            call_id: self.call_id.clone(),
            created_at: self.created_at,
        }
    }

    /// The reference (ART-2).
    pub fn reference(&self) -> ArtifactReference {
        self.reference
    }

    /// The workspace path, derived from the digest (ART-2).
    pub fn path(&self) -> String {
        self.reference.path()
    }

    /// The body's UTF-8 byte size.
    pub fn byte_size(&self) -> i64 {
        self.byte_size
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The owners.
    pub fn owners(&self) -> &Owners {
        &self.owners
    }

    /// The creating tool's name.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// The creating tool call's id.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Creation time.
    pub fn created_at(&self) -> SystemTime {
        self.created_at
    }
}
