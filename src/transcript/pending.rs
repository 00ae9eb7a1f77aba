//! Approval requests awaiting their answer (SPEC TRN-24).
//!
//! A Responses `mcp_approval_request` is a call its `mcp_approval_response` answers (TRN-17), so
//! EXC keeps the two together. Until the user decides, the request has no response, and OpenAI
//! accepts a request so ending (unlike a `function_call` without its output: "No tool output
//! found for function call"). The ADR's rules call an unanswered call a defect (EXC-3), which no
//! proposal can repair (VER-4), so the assembly would end `Irreducible` on a request the provider
//! accepts. An approval request no later item answers is therefore not a call: its part is a
//! block (`ServerTool`, the item's JSON), and a message left with no call or result is an
//! `ApprovalSecurityState`, which every list keeps (PRE-1 rule 1) and no reducer may drop. Its id
//! is the one its call form gave it (TRN-5), so the message keeps its id when its response
//! arrives and it becomes a call again.

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value as Json;

use hybrid_compaction_model::entry::{Entry, EntryKind};
use hybrid_compaction_model::message::{Block, BlockKind, Message, Part};

use super::{Adapted, Source, TranscriptFormat};
use crate::engine::classify::AdaptError;

/// The type of the items this module looks at.
const REQUEST: &str = "mcp_approval_request";

/// Makes every approval request of `adapted` awaiting its answer a block (see the module docs):
/// its message and entry changed, the entry's id kept, the kind it then has recorded as an
/// override (so a host adapting the messages again with the transcript's classifier gets it).
/// Whether any was.
pub(crate) fn apply(
    format: TranscriptFormat,
    entries: &mut [Entry],
    adapted: &mut [Arc<Adapted>],
    overrides: &mut BTreeMap<usize, EntryKind>,
    originals: &FxHashMap<String, String>,
) -> Result<bool, AdaptError> {
    let waiting = pending(format, adapted.iter().map(|a| &**a), originals);
    let any = !waiting.is_empty();
    for (i, message, kind) in waiting {
        let was = entries[i].kind();
        let kind = kind.unwrap_or(was);
        if kind != was {
            overrides.insert(i, kind);
        }
        super::rewrite(entries, adapted, i, kind, message)?;
    }
    Ok(any)
}

/// The messages of `adapted` (in order; call ids paired by TRN-14, `originals` mapping the ids
/// pairing made back to the caller's) that hold an approval request no later message answers,
/// each with its message (the requests' call parts made blocks) and the kind it then has (`None`
/// when it still holds a call or a result).
fn pending<'a>(
    format: TranscriptFormat,
    adapted: impl DoubleEndedIterator<Item = &'a Adapted> + ExactSizeIterator,
    originals: &FxHashMap<String, String>,
) -> Vec<(usize, Message, Option<EntryKind>)> {
    if format != TranscriptFormat::OpenAiResponses {
        return Vec::new();
    }
    let n = adapted.len();
    let mut answered: FxHashSet<&str> = FxHashSet::default();
    let mut out = Vec::new();
    for (k, a) in adapted.rev().enumerate() {
        let requests = requests(&a.source);
        if !requests.is_empty() {
            if let Some(changed) = unanswered(&a.message, &requests, &answered, originals) {
                let kind = (!super::turns::holds_tool_parts(&changed))
                    .then_some(EntryKind::ApprovalSecurityState);
                out.push((n - 1 - k, changed, kind));
            }
        }
        for p in &a.message.parts {
            if let Part::Result(r) = p {
                answered.insert(r.call_id.as_str());
            }
        }
    }
    out.reverse();
    out
}

/// The approval requests among the items of `source`: their id -> their JSON.
fn requests(source: &Source) -> FxHashMap<&str, &Json> {
    let items: &[Json] = match source {
        Source::Message(j) => std::slice::from_ref(j),
        Source::Turn(items) => items,
        Source::System(_) => &[],
    };
    items
        .iter()
        .filter(|j| j.get("type").and_then(Json::as_str) == Some(REQUEST))
        .filter_map(|j| Some((j.get("id")?.as_str()?, j)))
        .collect()
}

/// `message` with each call part answering one of `requests` (by its caller's id) and not in
/// `answered` made the request's block; `None` when there is none.
fn unanswered(
    message: &Message,
    requests: &FxHashMap<&str, &Json>,
    answered: &FxHashSet<&str>,
    originals: &FxHashMap<String, String>,
) -> Option<Message> {
    let mut changed = false;
    let parts = message
        .parts
        .iter()
        .map(|p| match p {
            Part::Call(c) if !answered.contains(c.call_id.as_str()) => {
                let caller = originals.get(&c.call_id).unwrap_or(&c.call_id);
                match requests.get(caller.as_str()) {
                    Some(j) => {
                        changed = true;
                        Part::Block(Block {
                            kind: BlockKind::ServerTool,
                            block_type: REQUEST.to_owned(),
                            json: j.to_string(),
                            tokens: None,
                        })
                    }
                    None => p.clone(),
                }
            }
            _ => p.clone(),
        })
        .collect();
    changed.then(|| Message {
        role: message.role.clone(),
        author: message.author.clone(),
        parts,
    })
}
