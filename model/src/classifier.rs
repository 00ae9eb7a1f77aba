//! The message-classifier seam used by message adaptation (SPEC CLS-1).
//!
//! A classifier yields each message's entry id and may override its kind. The default
//! content-hash classifier (SPEC CLS-2) lives in `spec::classify`.

use crate::entry::EntryKind;
use crate::message::Message;

/// Classifies adapted messages (SPEC CLS-1).
pub trait Classifier {
    /// The entry id of `messages[index]` (called first, for every message, in order).
    fn entry_id(&mut self, messages: &[Message], index: usize) -> String;
    /// An optional kind override for `messages[index]` (consulted per SPEC CLS-1 step 3).
    fn override_kind(&mut self, messages: &[Message], index: usize) -> Option<EntryKind>;
}
