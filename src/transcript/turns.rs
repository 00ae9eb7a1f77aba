//! Turns a provider receives whole (SPEC TRN-23): consecutive items of a transcript that one
//! adapted message holds, so that the ADR's rules keep or drop them together.
//!
//! * Anthropic combines consecutive messages of one role into one turn: the `tool_use` blocks of
//!   consecutive `assistant` messages are answered by the one `user` turn after them, and a
//!   turn's `thinking` comes first in it. A run of `assistant` messages is one message.
//! * OpenAI Responses binds a `reasoning` item to the items it was produced with: a
//!   `function_call` sent without its `reasoning` item, or a `reasoning` item without the item
//!   after it, is refused. A `reasoning` item and the model's items after it (role `assistant`,
//!   up to an item the model did not produce or a `compaction` item) are one message.
//!
//! A run is joined in the order given: the message's role is the run's, its parts every item's
//! parts in order, and its source the items (a kept turn renders as the items, TRN-6). Joining
//! reads only the adapted items, so a transcript extended at its end keeps its prefix's turns
//! except the last, which may grow.

use std::sync::Arc;

use hybrid_compaction_model::message::{Message, Part, ROLE_ASSISTANT};
use serde_json::Value as Json;

use super::{Adapted, Source, TranscriptFormat};

/// Whether `item` opens a turn that later items may join, in `format`.
pub(crate) fn opens(format: TranscriptFormat, item: &Adapted) -> bool {
    match format {
        TranscriptFormat::AnthropicMessages => is_assistant_item(item),
        TranscriptFormat::OpenAiResponses => is_item_of(item, "reasoning"),
        _ => false,
    }
}

/// Whether `item` joins the open turn (one that [`opens`] opened), in `format`.
pub(crate) fn continues(format: TranscriptFormat, item: &Adapted) -> bool {
    match format {
        TranscriptFormat::AnthropicMessages => is_assistant_item(item),
        TranscriptFormat::OpenAiResponses => {
            is_assistant_item(item) && !is_item_of(item, "compaction")
        }
        _ => false,
    }
}

/// `adapted` with every run [`opens`] and [`continues`] make joined into one message.
pub(crate) fn join(format: TranscriptFormat, adapted: Vec<Adapted>) -> Vec<Adapted> {
    let mut out: Vec<Adapted> = Vec::with_capacity(adapted.len());
    let mut open = false;
    for a in adapted {
        if open && continues(format, &a) {
            if let Some(last) = out.last_mut() {
                extend(last, a);
                continue;
            }
        }
        open = opens(format, &a);
        out.push(a);
    }
    out
}

/// The lengths of the runs of `items` (given as the adapted items), in order: each run one
/// adapted message after [`join`].
pub(crate) fn runs<'a>(
    format: TranscriptFormat,
    items: impl IntoIterator<Item = &'a Adapted>,
) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    let mut open = false;
    for a in items {
        if open && continues(format, a) {
            if let Some(last) = out.last_mut() {
                *last += 1;
                continue;
            }
        }
        open = opens(format, a);
        out.push(1);
    }
    out
}

/// `turn` with `next` appended: its parts after the turn's, its source item after the turn's.
pub(crate) fn extend(turn: &mut Adapted, next: Adapted) {
    turn.message.parts.extend(next.message.parts);
    let first = std::mem::replace(&mut turn.source, Source::Turn(Vec::new()));
    let mut items = match first {
        Source::Turn(items) => items,
        Source::Message(j) | Source::System(j) => vec![j],
    };
    match next.source {
        Source::Turn(more) => items.extend(more),
        Source::Message(j) | Source::System(j) => items.push(j),
    }
    turn.source = Source::Turn(items);
}

/// One of the caller's messages (not a top-level system) adapted with role `assistant`.
fn is_assistant_item(item: &Adapted) -> bool {
    matches!(item.source, Source::Message(_)) && item.message.role == ROLE_ASSISTANT
}

/// One of the caller's messages (not a top-level system) of JSON `type` `ty`.
fn is_item_of(item: &Adapted, ty: &str) -> bool {
    match &item.source {
        Source::Message(j) => j.get("type").and_then(Json::as_str) == Some(ty),
        _ => false,
    }
}

/// The number of the caller's items a message adapted from `source` holds.
pub(crate) fn items_of(source: &Source) -> usize {
    match source {
        Source::Turn(items) => items.len(),
        Source::Message(_) | Source::System(_) => 1,
    }
}

/// When a message of `adapted` holds several items: the first item of each, then the number of
/// items (the top-level system counts as one); else `None`.
pub(crate) fn starts(adapted: &[Arc<Adapted>]) -> Option<Vec<usize>> {
    if !adapted.iter().any(|a| matches!(a.source, Source::Turn(_))) {
        return None;
    }
    let mut at = 0;
    let mut starts: Vec<usize> = Vec::with_capacity(adapted.len() + 1);
    for a in adapted {
        starts.push(at);
        at += items_of(&a.source);
    }
    starts.push(at);
    Some(starts)
}

/// Whether `message` holds a call or result part (CLS-1 step 1).
pub(crate) fn holds_tool_parts(message: &Message) -> bool {
    message
        .parts
        .iter()
        .any(|p| matches!(p, Part::Call(_) | Part::Result(_)))
}
