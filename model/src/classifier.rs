//! The message-classifier seam and the adaptation error (SPEC CLS-1).
//!
//! A classifier yields each message's entry id and may override its kind. The default
//! content-hash classifier (SPEC CLS-2) and `adapt` itself are implemented by the specification
//! (`spec::classify`) and the engine; both report failures with the one [`AdaptError`] here.

use crate::entry::{EntryError, EntryKind};
use crate::error::ErrorKind;
use crate::message::Message;

/// Classifies adapted messages (SPEC CLS-1).
pub trait Classifier {
    /// The entry id of `messages[index]` (called first, for every message, in order). A host
    /// classifier may fail (SPEC CLS-3): adaptation stops and the failure propagates unchanged.
    fn entry_id(&mut self, messages: &[Message], index: usize) -> Result<String, ClassifierError>;
    /// An optional kind override for `messages[index]` (consulted per SPEC CLS-1 step 3).
    fn override_kind(&mut self, messages: &[Message], index: usize) -> Option<EntryKind>;
}

/// A classifier's own failure (SPEC CLS-3): the host's error, reduced to its language-neutral
/// kind. It carries no text: a classifier's output and its errors are private (SPEC EVT-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the message classifier failed ({kind})")]
pub struct ClassifierError {
    /// The kind the classifier raised, propagated unchanged.
    pub kind: ErrorKind,
}

/// Why message adaptation failed (SPEC CLS-1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AdaptError {
    /// The classifier override named a kind it may not choose (`ToolExchange`,
    /// `RecoverableContextSegment`, `SystemInstruction`): an invalid-operation error.
    #[error("classifier override {kind} is not allowed (message {index})")]
    ForbiddenOverride {
        /// 0-based index of the message.
        index: usize,
        /// The refused kind.
        kind: EntryKind,
    },
    /// Entry construction (SPEC ENT-5) refused the adapted message.
    #[error("message {index}: {source}")]
    Entry {
        /// 0-based index of the message.
        index: usize,
        /// The construction error.
        source: EntryError,
    },
    /// The classifier itself failed (SPEC CLS-3); its kind propagates unchanged.
    #[error("message {index}: {error}")]
    Classifier {
        /// 0-based index of the message being classified.
        index: usize,
        /// The classifier's error.
        error: ClassifierError,
    },
}

impl AdaptError {
    /// The language-neutral category (SPEC ERR-1).
    pub fn kind(&self) -> ErrorKind {
        match self {
            AdaptError::ForbiddenOverride { .. } => ErrorKind::InvalidOperation,
            AdaptError::Entry { source, .. } => source.kind(),
            AdaptError::Classifier { error, .. } => error.kind,
        }
    }
}

impl From<&AdaptError> for crate::error::TypedError {
    fn from(e: &AdaptError) -> crate::error::TypedError {
        crate::error::TypedError::new(e.kind(), e.to_string())
    }
}

impl<C: Classifier + ?Sized> Classifier for Box<C> {
    fn entry_id(&mut self, messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        (**self).entry_id(messages, index)
    }
    fn override_kind(&mut self, messages: &[Message], index: usize) -> Option<EntryKind> {
        (**self).override_kind(messages, index)
    }
}

impl<C: Classifier + ?Sized> Classifier for &mut C {
    fn entry_id(&mut self, messages: &[Message], index: usize) -> Result<String, ClassifierError> {
        (**self).entry_id(messages, index)
    }
    fn override_kind(&mut self, messages: &[Message], index: usize) -> Option<EntryKind> {
        (**self).override_kind(messages, index)
    }
}
