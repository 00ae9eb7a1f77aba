//! Call ids reused across turns (SPEC TRN-14).
//!
//! Providers pair a tool call with the results that follow it, so a conversation may use one call
//! id for several calls (tau-bench's GPT-4o agent answers `call_X`, and in a later turn calls a
//! new `call_X`). The ADR's rules pair calls and results by id alone (EXC-1: a second call with an
//! id is a duplicate call), and would refuse such a conversation even unchanged. Where the
//! provider's pairing is unambiguous, adaptation gives the k-th call with an id (k >= 2) and the
//! results that answer it a distinct id, [`reused`] (`<id>` U+001F `<k>`), so the rules see
//! distinct exchanges; rendering gives the caller's ids back ([`restore`]): a kept message is its
//! own JSON anyway (TRN-6), a new one is rendered with its parts' ids mapped back.
//!
//! The pairing is unambiguous when every call with a reused id comes after a result answered the
//! previous call with that id. Two refusals keep it so (`InvalidArgument`, naming the message):
//! one id twice among the calls of one message, and a call whose id's previous call has no result
//! yet (a result after it could answer either).
//!
//! A message's renaming depends only on the messages before it, so a transcript extended at its
//! end keeps its prefix's messages, as TRN-5 keeps their ids.

use rustc_hash::FxHashMap;

use hybrid_compaction_model::message::{Message, Part};

use super::{malformed, TranscriptError};

/// What separates a reused id from its ordinal: a control character no provider puts in a call
/// id (an id that held it anyway would at worst meet an id of its own as a duplicate, which the
/// verifier refuses: never a wrong pairing).
const MARK: char = '\u{1f}';

/// The id the `k`-th call with `id` (k >= 2) and its results have in the messages the rules see.
pub(crate) fn reused(id: &str, k: usize) -> String {
    format!("{id}{MARK}{k}")
}

/// The calls seen so far with one id: how many, and whether the latest has a result.
#[derive(Clone, Copy)]
struct Calls {
    count: usize,
    answered: bool,
}

/// The messages whose reused call ids are renamed (by position), and every id made -> the caller's.
pub(crate) type Paired = (Vec<(usize, Message)>, FxHashMap<String, String>);

/// The messages of a transcript (in order; `path(i)` names message `i`) whose reused call ids
/// are renamed (SPEC TRN-14), each with its renamed message, and the map from every id made back
/// to the caller's. Empty when no id is reused.
pub(crate) fn pair<'m>(
    messages: impl IntoIterator<Item = &'m Message>,
    path: impl Fn(usize) -> String,
) -> Result<Paired, TranscriptError> {
    let mut calls: FxHashMap<&'m str, Calls> = FxHashMap::default();
    let mut renamed = Vec::new();
    let mut originals = FxHashMap::default();
    for (i, m) in messages.into_iter().enumerate() {
        let mut ids: Vec<Option<String>> = Vec::with_capacity(m.parts.len());
        for (j, part) in m.parts.iter().enumerate() {
            ids.push(match part {
                Part::Call(c) => {
                    let own = m.parts[..j]
                        .iter()
                        .any(|p| matches!(p, Part::Call(e) if e.call_id == c.call_id));
                    if own {
                        return Err(malformed(
                            path(i),
                            format!("the call id {:?} names two calls of one message: a result could answer either", c.call_id),
                        ));
                    }
                    call(&mut calls, &c.call_id, &|| path(i))?
                }
                Part::Result(r) => calls.get_mut(r.call_id.as_str()).and_then(|seen| {
                    seen.answered = true;
                    (seen.count >= 2).then(|| reused(&r.call_id, seen.count))
                }),
                _ => None,
            });
        }
        if ids.iter().any(Option::is_some) {
            let mut m = m.clone();
            for (part, id) in m.parts.iter_mut().zip(ids) {
                let Some(id) = id else { continue };
                let slot = match part {
                    Part::Call(c) => &mut c.call_id,
                    Part::Result(r) => &mut r.call_id,
                    Part::Text(_) | Part::Block(_) => continue,
                };
                originals.insert(id.clone(), std::mem::replace(slot, id));
            }
            renamed.push((i, m));
        }
    }
    Ok((renamed, originals))
}

/// A call with `id`: `None` for the first with its id, else the id its reuse is given; refused
/// when the previous call with the id has no result yet.
fn call<'m>(
    calls: &mut FxHashMap<&'m str, Calls>,
    id: &'m str,
    path: &dyn Fn() -> String,
) -> Result<Option<String>, TranscriptError> {
    let seen = calls.entry(id).or_insert(Calls {
        count: 0,
        answered: true,
    });
    if !seen.answered {
        return Err(malformed(
            path(),
            format!("the call id {id:?} is used again before the call that used it last has a result: a result could answer either"),
        ));
    }
    seen.count += 1;
    seen.answered = false;
    Ok((seen.count >= 2).then(|| reused(id, seen.count)))
}

/// `message` with every call and result id this transcript made given back as the caller's.
pub(crate) fn restore(originals: &FxHashMap<String, String>, message: &Message) -> Message {
    let mut m = message.clone();
    for part in &mut m.parts {
        let slot = match part {
            Part::Call(c) => &mut c.call_id,
            Part::Result(r) => &mut r.call_id,
            Part::Text(_) | Part::Block(_) => continue,
        };
        if let Some(o) = originals.get(slot.as_str()) {
            slot.clone_from(o);
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use hybrid_compaction_model::value::Value;

    fn call(id: &str) -> Message {
        Message::new("assistant", vec![Part::call(id, "f")])
    }

    fn result(id: &str) -> Message {
        Message::new("tool", vec![Part::result(id, Value::Null)])
    }

    fn ids(m: &Message) -> Vec<&str> {
        m.parts
            .iter()
            .filter_map(|p| match p {
                Part::Call(c) => Some(c.call_id.as_str()),
                Part::Result(r) => Some(r.call_id.as_str()),
                Part::Text(_) | Part::Block(_) => None,
            })
            .collect()
    }

    fn paired(ms: &[Message]) -> Result<Vec<Vec<String>>, TranscriptError> {
        let (renamed, originals) = pair(ms, |i| format!("$.messages[{i}]"))?;
        let mut out: Vec<Vec<String>> = ms
            .iter()
            .map(|m| ids(m).into_iter().map(str::to_owned).collect())
            .collect();
        for (i, m) in renamed {
            out[i] = ids(&m).into_iter().map(str::to_owned).collect();
            assert_eq!(restore(&originals, &m), ms[i], "the caller's ids come back");
        }
        Ok(out)
    }

    /// Each call after the first with an id, and the results after it, get the id and its
    /// ordinal; a transcript without reuse is untouched.
    #[test]
    fn a_reused_id_answered_in_between_is_paired_by_position() {
        let ms = [
            call("x"),
            result("x"),
            call("x"),
            result("x"),
            call("x"),
            result("x"),
        ];
        let got = paired(&ms).unwrap();
        let x2 = reused("x", 2);
        let x3 = reused("x", 3);
        assert_eq!(
            got,
            [
                vec!["x"],
                vec!["x"],
                vec![&*x2],
                vec![&*x2],
                vec![&*x3],
                vec![&*x3]
            ]
            .map(|v| v.into_iter().map(str::to_owned).collect::<Vec<_>>())
        );
        let plain = [call("a"), result("a"), call("b"), result("b")];
        assert!(pair(&plain, |i| i.to_string()).unwrap().0.is_empty());
        // A result before any call with its id is an orphan, left as given.
        assert_eq!(
            paired(&[result("o"), call("o"), result("o")]).unwrap()[2],
            ["o"]
        );
    }

    /// Ambiguous reuse is refused with the message's path.
    #[test]
    fn an_ambiguous_reuse_is_refused_where_it_is() {
        let twice = Message::new(
            "assistant",
            vec![Part::call("x", "f"), Part::call("x", "g")],
        );
        let e = paired(&[twice]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("$.messages[0]: the call id \"x\" names two calls"),
            "{e}"
        );
        let e = paired(&[call("x"), call("x"), result("x")]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("$.messages[1]: the call id \"x\" is used again"),
            "{e}"
        );
    }
}
