//! Context entries: ids, kinds and the construction rules (SPEC ENT-1, ENT-2, ENT-5, ENT-6, ENT-7).
//!
//! An [`Entry`] is an immutable value: id, kind, one message, the ordered artifact-reference
//! digests derived at construction, and (only for `RecoverableContextSegment`) the recovered
//! segment. Entries share their contents behind an `Arc`, so cloning one is O(1); every
//! "independent deep copy" of the reference implementation (SPEC ENT-7) is an owned value here.

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::artifact::{ArtifactReference, Digest};
use crate::content_digest::ContentDigest;
use crate::error::ErrorKind;
use crate::message::{Message, Part, ROLE_ASSISTANT, ROLE_TOOL, ROLE_USER};
use crate::value::Value;

/// Why an entry (or an entry id) could not be constructed (SPEC ENT-2, ENT-5, ENT-6).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryError {
    /// The id is empty or whitespace-only (SPEC ENT-2).
    #[error("entry id is empty or whitespace-only")]
    BlankId,
    /// A kind other than `ToolExchange` carries a call or result part (SPEC ENT-5.1).
    #[error("entry `{id}`: kind {kind} may not carry call or result parts")]
    ToolContentOutsideToolExchange {
        /// The offending entry id.
        id: String,
        /// Its kind.
        kind: EntryKind,
    },
    /// An `ArtifactReference` entry's text is not exactly one canonical reference (SPEC ENT-5.2).
    #[error(
        "entry `{id}`: ArtifactReference text must be exactly one canonical artifact reference"
    )]
    InvalidArtifactReferenceText {
        /// The offending entry id.
        id: String,
    },
    /// A `ToolExchange` entry has no call and no result part (SPEC ENT-5.3).
    #[error("entry `{id}`: ToolExchange needs at least one call or result part")]
    ToolExchangeWithoutToolContent {
        /// The offending entry id.
        id: String,
    },
    /// A `ToolExchange` entry mixes call and result parts (SPEC ENT-5.3).
    #[error("entry `{id}`: ToolExchange may not mix call and result parts")]
    ToolExchangeMixesCallsAndResults {
        /// The offending entry id.
        id: String,
    },
    /// Call parts require role `assistant` (SPEC ENT-5.3).
    #[error("entry `{id}`: call parts require role `assistant`")]
    CallRequiresAssistantRole {
        /// The offending entry id.
        id: String,
    },
    /// Result parts require role `tool` (SPEC ENT-5.3).
    #[error("entry `{id}`: result parts require role `tool`")]
    ResultRequiresToolRole {
        /// The offending entry id.
        id: String,
    },
    /// `RecoverableContextSegment` entries are built only by [`Entry::recoverable`] (SPEC ENT-5.4).
    #[error("entry `{id}`: RecoverableContextSegment entries come only from the recoverable-segment factory")]
    RecoverableRequiresFactory {
        /// The offending entry id.
        id: String,
    },
}

impl EntryError {
    /// The language-neutral category: every construction failure is an argument error.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidArgument
    }

    /// The offending entry id, when the error names one.
    pub fn entry_id(&self) -> Option<&str> {
        match self {
            EntryError::BlankId => None,
            EntryError::ToolContentOutsideToolExchange { id, .. }
            | EntryError::InvalidArtifactReferenceText { id }
            | EntryError::ToolExchangeWithoutToolContent { id }
            | EntryError::ToolExchangeMixesCallsAndResults { id }
            | EntryError::CallRequiresAssistantRole { id }
            | EntryError::ResultRequiresToolRole { id }
            | EntryError::RecoverableRequiresFactory { id } => Some(id),
        }
    }
}

/// An entry id: non-empty, not whitespace-only; the only identity used to compare entry sets
/// (SPEC ENT-2). Comparison is ordinal. Cloning is O(1).
#[derive(Clone, Eq, PartialOrd, Ord)]
pub struct EntryId(Arc<str>);

impl std::hash::Hash for EntryId {
    /// The text's hash (as `str` hashes it: an id is looked up by its text, `Borrow<str>`).
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl PartialEq for EntryId {
    /// Equal texts; two handles of one id are equal without reading the text, and two texts
    /// of one length that differ in their first eight bytes are told apart without a call to
    /// compare memory (ids are often hex digests of one length: a search over a list's ids
    /// compares many unequal ones).
    fn eq(&self, other: &EntryId) -> bool {
        if Arc::ptr_eq(&self.0, &other.0) {
            return true;
        }
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        a.len() == b.len() && a.first_chunk::<8>() == b.first_chunk::<8>() && a == b
    }
}

impl EntryId {
    /// Validates and wraps an id (SPEC ENT-2).
    pub fn new(id: impl AsRef<str>) -> Result<EntryId, EntryError> {
        let id = id.as_ref();
        if id.chars().all(char::is_whitespace) {
            return Err(EntryError::BlankId);
        }
        Ok(EntryId(Arc::from(id)))
    }

    /// The id text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::borrow::Borrow<str> for EntryId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

crate::names::named_enum_with_mirror! {
    /// Entry kinds, in declaration order; the order is used by contributions (SPEC ENT-1, DIA-6).
    /// `EntryKind::ALL` is the one list of every kind.
    pub enum EntryKind {
        /// System instructions; always required.
        SystemInstruction,
        /// Authoritative session state; always required.
        AuthoritativeSessionState,
        /// Approval / security state; always required.
        ApprovalSecurityState,
        /// A tool call or tool result message.
        ToolExchange,
        /// A message whose text is exactly one artifact reference; always required.
        ArtifactReference,
        /// Ordinary conversation; one recency unit each.
        ConversationalMessage,
        /// A reducer-produced summary; never required.
        Summary,
        /// A rehydrated artifact body; evictable when its reference is durable.
        RecoverableContextSegment,
        /// Optional context; never required, kept all-or-nothing by the fallback.
        OptionalContext,
    }
    /// Mirror of the entry kind (SPEC DIA-2); order drives contribution order (SPEC DIA-6).
    mirror pub enum Category;
}

/// A rehydrated artifact body together with the reference it was resolved from (SPEC ENT-6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoverableSegment {
    /// The durable reference the body was recovered from.
    pub reference: ArtifactReference,
    /// The exact recovered body.
    pub body: String,
}

#[derive(PartialEq)]
struct EntryData {
    id: EntryId,
    kind: EntryKind,
    message: Message,
    digests: Vec<Digest>,
    segment: Option<RecoverableSegment>,
    /// A value of the message is a NaN float (see [`Entry::holds_nan`]); derived from
    /// `message` at construction.
    holds_nan: bool,
    content_digest: ContentDigestCell,
}

impl fmt::Debug for EntryData {
    /// The entry's value; the cached content digest is not part of it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EntryData")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("digests", &self.digests)
            .field("segment", &self.segment)
            .finish()
    }
}

/// The content digest (SPEC EST-7), computed on first use. A cache, not part of the entry's
/// value: two entries compare equal whether or not either has computed it.
#[derive(Default)]
struct ContentDigestCell(OnceLock<ContentDigest>);

impl PartialEq for ContentDigestCell {
    fn eq(&self, _: &ContentDigestCell) -> bool {
        true
    }
}

/// One context entry (SPEC ENT-2). Immutable; cloning shares the contents.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry(Arc<EntryData>);

impl Entry {
    /// Generic construction with the rules of SPEC ENT-5 (all kinds but
    /// `RecoverableContextSegment`, which only [`Entry::recoverable`] builds).
    pub fn new(
        id: impl AsRef<str>,
        kind: EntryKind,
        message: Message,
    ) -> Result<Entry, EntryError> {
        let id = EntryId::new(id)?;
        let has_call = message.has_call();
        let has_result = message.has_result();
        let err_id = || id.as_str().to_owned();
        // SPEC ENT-5.4: recoverable segments only through the factory.
        if kind == EntryKind::RecoverableContextSegment {
            return Err(EntryError::RecoverableRequiresFactory { id: err_id() });
        }
        // SPEC ENT-5.1: only ToolExchange may carry call/result parts.
        if kind != EntryKind::ToolExchange && (has_call || has_result) {
            return Err(EntryError::ToolContentOutsideToolExchange { id: err_id(), kind });
        }
        let digests = match kind {
            // SPEC ENT-5.2: text is exactly one canonical reference; digests = [its digest].
            EntryKind::ArtifactReference => {
                // One text part (as built from a reference) is parsed in place.
                let text = match message.parts.as_slice() {
                    [Part::Text(t)] => std::borrow::Cow::Borrowed(t.as_str()),
                    _ => std::borrow::Cow::Owned(message.text_content()),
                };
                let reference = ArtifactReference::parse(&text)
                    .map_err(|_| EntryError::InvalidArtifactReferenceText { id: err_id() })?;
                vec![reference.digest()]
            }
            // SPEC ENT-5.3: calls xor results, role rules, digests from result values.
            EntryKind::ToolExchange => {
                if !has_call && !has_result {
                    return Err(EntryError::ToolExchangeWithoutToolContent { id: err_id() });
                }
                if has_call && has_result {
                    return Err(EntryError::ToolExchangeMixesCallsAndResults { id: err_id() });
                }
                if has_call && message.role != ROLE_ASSISTANT {
                    return Err(EntryError::CallRequiresAssistantRole { id: err_id() });
                }
                if has_result && message.role != ROLE_TOOL {
                    return Err(EntryError::ResultRequiresToolRole { id: err_id() });
                }
                result_reference_digests(&message)
            }
            // SPEC ENT-5.5: other kinds carry no digests.
            _ => Vec::new(),
        };
        // Values live only in call and result parts, which only ToolExchange carries (ENT-5.1).
        let holds_nan = kind == EntryKind::ToolExchange && message_holds_nan(&message);
        Ok(Entry(Arc::new(EntryData {
            id,
            kind,
            message,
            digests,
            segment: None,
            holds_nan,
            content_digest: ContentDigestCell::default(),
        })))
    }

    /// The recoverable-segment factory (SPEC ENT-6): kind `RecoverableContextSegment`, role
    /// `user`, one text part holding the body verbatim, digests = [the reference's digest].
    pub fn recoverable(
        id: impl AsRef<str>,
        segment: RecoverableSegment,
    ) -> Result<Entry, EntryError> {
        let id = EntryId::new(id)?;
        let message = Message::text(ROLE_USER, segment.body.clone());
        Ok(Entry(Arc::new(EntryData {
            id,
            kind: EntryKind::RecoverableContextSegment,
            message,
            digests: vec![segment.reference.digest()],
            segment: Some(segment),
            holds_nan: false,
            content_digest: ContentDigestCell::default(),
        })))
    }

    /// The entry id.
    pub fn id(&self) -> &EntryId {
        &self.0.id
    }

    /// The entry kind.
    pub fn kind(&self) -> EntryKind {
        self.0.kind
    }

    /// The message.
    pub fn message(&self) -> &Message {
        &self.0.message
    }

    /// The ordered artifact-reference digests (possibly empty, duplicates kept; SPEC ENT-2).
    pub fn artifact_reference_digests(&self) -> &[Digest] {
        &self.0.digests
    }

    /// The single digest when the list has exactly one element (SPEC ENT-2).
    pub fn artifact_reference_digest(&self) -> Option<Digest> {
        match self.0.digests.as_slice() {
            [d] => Some(*d),
            _ => None,
        }
    }

    /// The recovered segment (only for `RecoverableContextSegment`).
    pub fn recoverable_segment(&self) -> Option<&RecoverableSegment> {
        self.0.segment.as_ref()
    }

    /// The SHA-256 of everything an estimator can read from the entry (SPEC EST-7): computed on
    /// the first call (one pass over the content), then read from the entry.
    pub fn content_digest(&self) -> &ContentDigest {
        self.0
            .content_digest
            .0
            .get_or_init(|| ContentDigest::compute(self))
    }

    /// Whether a value of the message (a call argument or a result value, at any depth) is a
    /// NaN float: then the message is not structurally equal to itself (SPEC VER-2, NaN != NaN).
    /// Derived from the message once, at construction (only `ToolExchange` entries carry
    /// values, SPEC ENT-5.1), so that a verifier comparing an entry with itself need not walk it.
    pub fn holds_nan(&self) -> bool {
        self.0.holds_nan
    }

    /// Whether two handles share the same allocation (a cheap pre-check before deep equality).
    pub fn ptr_eq(&self, other: &Entry) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Whether any call argument or result value of `message` is a NaN float, at any depth.
fn message_holds_nan(message: &Message) -> bool {
    fn value(v: &Value) -> bool {
        match v {
            Value::F32(x) => x.is_nan(),
            Value::F64(x) => x.is_nan(),
            Value::Map(m) => m.values().any(value),
            Value::List(items) => items.iter().any(value),
            _ => false,
        }
    }
    message.parts.iter().any(|p| match p {
        Part::Text(_) | Part::Block(_) => false,
        Part::Call(c) => c.arguments.as_ref().is_some_and(|m| m.values().any(value)),
        Part::Result(r) => value(&r.value),
    })
}

/// SPEC ENT-5.3: one digest per result part whose value is a canonical reference given as a plain
/// string or a raw-JSON string, in part order, duplicates kept.
fn result_reference_digests(message: &Message) -> Vec<Digest> {
    let mut digests = Vec::new();
    for part in &message.parts {
        if let Part::Result(result) = part {
            let text = match &result.value {
                Value::String(s) => Some(std::borrow::Cow::Borrowed(s.as_str())),
                Value::RawJson(raw) => raw.as_json_string().map(std::borrow::Cow::Owned),
                _ => None,
            };
            if let Some(reference) = text.and_then(|t| ArtifactReference::parse(&t).ok()) {
                digests.push(reference.digest());
            }
        }
    }
    digests
}
