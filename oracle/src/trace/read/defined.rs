//! A record's `defs` (`docs/TRACE.md`, "Compact records"), read straight into vocabulary.
//!
//! Defined entries are most of a compact trace's bytes (a run's first record defines its whole
//! history, every later one what was appended). Read as [`TraceEntry`] values, each cost a
//! heap copy of every string it holds, a second copy kept for counterexamples, and a third
//! moved into the built entry. The common entry, *redacted* (a digest, a size, an optional
//! role or reference, call ids and names, result call ids and references), is instead read
//! with its strings borrowed from the line and built as it is read, copying each string once,
//! into the entry: [`Defined::Built`]. Its recorded form is not kept, because it can be given
//! back exactly from the built entry and a few bits of [`Shape`] (which optional members were
//! written): the shapes this holds for are the ones [`Defined::Built`] is used for, and every
//! other entry (with content, with a member the built entry drops, one the SPEC refuses) is
//! kept as recorded, [`Defined::Recorded`], and built when its run's table takes it, as before.
//!
//! What is accepted and every refusal (its words and its JSON path) are those of a list of
//! [`TraceEntry`]: the same strict reader reads the same members through the same serde
//! requests (`deserialize_string` for a string, `Option` for an optional member, the same
//! member names and the same missing-member order), only into borrowed text.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use hybrid_compaction_model::artifact::Digest;
use hybrid_compaction_model::entry::{Entry, EntryKind};

use crate::trace::format::{
    Defined, Shape, TraceEntry, TraceToolCall, TraceToolResult, TRACE_ENTRY_FIELDS,
};
use crate::trace::read::entries::{redacted, CallText, Redacted, ResultText};
use crate::wire::input::{KindInput, PartInput, SegmentInput};
use crate::wire::strict::Text;

/// A record's `defs` read with each redacted entry built as it is read: what the quick reader
/// gives for a `defs` member (the trace format's own `Defs` reader keeps every entry as
/// recorded, for its run's table to build).
#[cfg(test)]
struct ReadDefs(Vec<Defined>);

#[cfg(test)]
impl<'de> Deserialize<'de> for ReadDefs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ReadDefs, D::Error> {
        let read = Vec::<Read>::deserialize(d)?;
        Ok(ReadDefs(read.into_iter().map(|Read(e)| e).collect()))
    }
}

/// One defined entry, read.
struct Read(Defined);

/// One defined entry read by the strict reader from its own text, as [`Defs`] reads each
/// (`None` if it refuses it).
pub(super) fn read(text: &str) -> Option<Defined> {
    crate::wire::strict::read::<Read>(text)
        .ok()
        .map(|Read(d)| d)
}

/// A [`TraceEntry`]'s member names, as its derived reader reads them.
enum Field {
    Id,
    Kind,
    Role,
    Author,
    Size,
    Text,
    Parts,
    Segment,
    Digest,
    Calls,
    Results,
    Reference,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("field identifier")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "id" => Field::Id,
                    "kind" => Field::Kind,
                    "role" => Field::Role,
                    "author" => Field::Author,
                    "size" => Field::Size,
                    "text" => Field::Text,
                    "parts" => Field::Parts,
                    "segment" => Field::Segment,
                    "digest" => Field::Digest,
                    "calls" => Field::Calls,
                    "results" => Field::Results,
                    "reference" => Field::Reference,
                    _ => return Err(E::unknown_field(v, TRACE_ENTRY_FIELDS)),
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

/// An entry's members as read: strings borrowed from the line where they have no escapes.
#[derive(Default)]
struct Members<'de> {
    id: Option<Text<'de>>,
    kind: Option<KindInput>,
    role: Option<Option<Text<'de>>>,
    author: Option<Option<Text<'de>>>,
    size: Option<Option<i32>>,
    text: Option<Option<String>>,
    parts: Option<Option<Vec<PartInput>>>,
    segment: Option<Option<SegmentInput>>,
    digest: Option<Option<Text<'de>>>,
    calls: Option<Option<Vec<TraceToolCall>>>,
    results: Option<Option<Vec<TraceToolResult>>>,
    reference: Option<Option<Text<'de>>>,
}

/// Reads the value of a member into its slot, refusing a member written twice as the derived
/// reader does (the strict reader has refused the repeated key already).
fn once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    slot: &mut Option<T>,
    name: &'static str,
    a: &mut A,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(name));
    }
    *slot = Some(a.next_value()?);
    Ok(())
}

/// A redacted entry's members (no content) as they are read elsewhere (`crate::trace::read::quick`):
/// every string, call and result part borrowed from the line.
pub(super) struct Flat<'de> {
    /// `id`.
    pub id: &'de str,
    /// `kind`.
    pub kind: KindInput,
    /// `role`, if written (not `null`).
    pub role: Option<&'de str>,
    /// `author`, if written.
    pub author: Option<&'de str>,
    /// `size`, if written.
    pub size: Option<i32>,
    /// `digest`, if written.
    pub digest: Option<&'de str>,
    /// `reference`, if written.
    pub reference: Option<&'de str>,
    /// `calls`, if written.
    pub calls: Option<Vec<CallText<'de>>>,
    /// `results`, if written.
    pub results: Option<Vec<ResultText<'de>>>,
}

impl<'de> Flat<'de> {
    /// The entry, as [`Defs`] would hold it: built now, each string copied once (into the
    /// entry), when its shape allows; else as recorded.
    pub(super) fn defined(self) -> Defined {
        let view = Redacted {
            id: self.id,
            kind: self.kind,
            role: self.role,
            author: self.author,
            digest: self.digest,
            reference: self.reference,
            calls: self.calls.as_deref().unwrap_or_default(),
            results: self.results.as_deref().unwrap_or_default(),
        };
        let written = [
            self.role.is_some(),
            self.digest.is_some(),
            self.calls.is_some(),
            self.results.is_some(),
        ];
        if let Some((entry, shape)) = built(&view, written) {
            return Defined::Built {
                entry,
                size: self.size,
                shape,
            };
        }
        // Not built (an entry the SPEC refuses, a shape not given back): kept as recorded, as
        // the strict reader keeps it.
        let text = |t: Option<&'de str>| Some(t.map(|t| Text(Cow::Borrowed(t))));
        let m = Members {
            role: text(self.role),
            author: text(self.author),
            size: Some(self.size),
            digest: text(self.digest),
            reference: text(self.reference),
            calls: Some(
                self.calls
                    .map(|c| c.iter().map(TraceToolCall::from).collect()),
            ),
            results: Some(
                self.results
                    .map(|r| r.iter().map(TraceToolResult::from).collect()),
            ),
            ..Members::default()
        };
        m.recorded(Text(Cow::Borrowed(self.id)), self.kind)
    }
}

/// The entry `r` (redacted, no content) built now, with the shape its recorded form is given
/// back from, when it is one [`Defined::Built`] is used for (`written`: whether `role`,
/// `digest`, `calls` and `results` were written); `None` when it is kept as recorded.
fn built(r: &Redacted<'_>, written: [bool; 4]) -> Option<(Entry, Shape)> {
    let tools = written[2] || written[3];
    // An ArtifactReference's text is its reference: a digest it was recorded with is kept in
    // its shape, when it is one (64 lowercase hex digits, given back as written).
    let reference_digest = match (r.kind.0, r.digest) {
        (EntryKind::ArtifactReference, Some(d)) => Some(Digest::parse(d).ok()),
        _ => None,
    };
    let shaped = match r.kind.0 {
        EntryKind::ArtifactReference => {
            r.reference.is_some() && reference_digest.is_none_or(|d| d.is_some())
        }
        // Built with the factory's role, no author and no call or result parts.
        EntryKind::RecoverableContextSegment => {
            r.role.is_none() && r.author.is_none() && !tools && r.reference.is_some()
        }
        // A reference is only checked, then dropped.
        _ => (r.digest.is_some() || tools) && r.reference.is_none(),
    };
    if !shaped {
        return None;
    }
    let entry = redacted(r, &String::new).ok()?;
    let shape = match reference_digest.flatten() {
        Some(d) => Shape::new(r.kind, written).with_digest(d),
        None => Shape::new(r.kind, written),
    };
    Some((entry, shape))
}

impl<'de> Members<'de> {
    fn read<A: MapAccess<'de>>(mut a: A) -> Result<Members<'de>, A::Error> {
        let mut m = Members::default();
        while let Some(f) = a.next_key::<Field>()? {
            match f {
                Field::Id => once(&mut m.id, "id", &mut a)?,
                Field::Kind => once(&mut m.kind, "kind", &mut a)?,
                Field::Role => once(&mut m.role, "role", &mut a)?,
                Field::Author => once(&mut m.author, "author", &mut a)?,
                Field::Size => once(&mut m.size, "size", &mut a)?,
                Field::Text => once(&mut m.text, "text", &mut a)?,
                Field::Parts => once(&mut m.parts, "parts", &mut a)?,
                Field::Segment => once(&mut m.segment, "segment", &mut a)?,
                Field::Digest => once(&mut m.digest, "digest", &mut a)?,
                Field::Calls => once(&mut m.calls, "calls", &mut a)?,
                Field::Results => once(&mut m.results, "results", &mut a)?,
                Field::Reference => once(&mut m.reference, "reference", &mut a)?,
            }
        }
        Ok(m)
    }

    /// The entry: built now when it is redacted with a shape its recorded form is given back
    /// from, else as recorded.
    fn entry<E: de::Error>(mut self) -> Result<Defined, E> {
        let id = self.id.take().ok_or_else(|| E::missing_field("id"))?;
        let kind = self.kind.take().ok_or_else(|| E::missing_field("kind"))?;
        Ok(self.shaped(id, kind))
    }

    /// [`Members::entry`] of the entry with `id` and `kind`.
    fn shaped(self, id: Text<'de>, kind: KindInput) -> Defined {
        fn text<'a>(t: &'a Option<Option<Text<'_>>>) -> Option<&'a str> {
            t.as_ref().and_then(|t| t.as_deref())
        }
        let content = self.text.as_ref().is_some_and(Option::is_some)
            || self.parts.as_ref().is_some_and(Option::is_some)
            || self.segment.as_ref().is_some_and(Option::is_some);
        if !content {
            let calls = self.calls.as_ref().and_then(Option::as_ref);
            let results = self.results.as_ref().and_then(Option::as_ref);
            let call_texts: Vec<CallText> =
                calls.into_iter().flatten().map(CallText::from).collect();
            let result_texts: Vec<ResultText> = results
                .into_iter()
                .flatten()
                .map(ResultText::from)
                .collect();
            let view = Redacted {
                id: &id,
                kind,
                role: text(&self.role),
                author: text(&self.author),
                digest: text(&self.digest),
                reference: text(&self.reference),
                calls: &call_texts,
                results: &result_texts,
            };
            let written = [
                view.role.is_some(),
                view.digest.is_some(),
                calls.is_some(),
                results.is_some(),
            ];
            if let Some((entry, shape)) = built(&view, written) {
                let size = self.size.flatten();
                return Defined::Built { entry, size, shape };
            }
        }
        self.recorded(id, kind)
    }

    /// The entry with `id` and `kind` kept as recorded (built when its run's table takes it).
    fn recorded(self, id: Text<'de>, kind: KindInput) -> Defined {
        let owned = |t: Option<Option<Text>>| t.flatten().map(Text::into_owned);
        Defined::Recorded(Box::new(TraceEntry {
            id: id.into_owned(),
            kind,
            role: owned(self.role),
            author: owned(self.author),
            size: self.size.flatten(),
            text: self.text.flatten(),
            parts: self.parts.flatten(),
            segment: self.segment.flatten(),
            digest: owned(self.digest),
            calls: self.calls.flatten(),
            results: self.results.flatten(),
            reference: owned(self.reference),
        }))
    }
}

impl<'de> Deserialize<'de> for Read {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Read, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Read;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an entry (an object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Read, A::Error> {
                Members::read(a)?.entry().map(Read)
            }
        }
        d.deserialize_struct("TraceEntry", TRACE_ENTRY_FIELDS, V)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map, Value as Json};

    use super::{Defined, ReadDefs};
    use crate::trace::format::Defs;
    use crate::trace::format::TraceEntry;
    use crate::trace::read::entries::entry_at;
    use crate::wire::strict;
    use hybrid_compaction_model::entry::EntryKind;

    /// The choices of one member: `None` leaves it out.
    fn choices() -> Vec<(&'static str, Vec<Option<Json>>)> {
        let hex = "ab".repeat(32);
        let mut kinds: Vec<Option<Json>> =
            EntryKind::NAMES.iter().map(|k| Some(json!(k))).collect();
        kinds.extend([None, Some(json!("Bogus")), Some(Json::Null)]);
        vec![
            (
                "id",
                vec![
                    Some(json!("a")),
                    Some(json!("e-\u{e9}")),
                    Some(json!("q\"x")),
                    None,
                    Some(json!(5)),
                ],
            ),
            ("kind", kinds),
            (
                "role",
                vec![
                    None,
                    Some(Json::Null),
                    Some(json!("user")),
                    Some(json!("assistant")),
                    Some(json!("tool")),
                    Some(json!("system")),
                    Some(json!(3)),
                ],
            ),
            (
                "author",
                vec![None, Some(json!("b\u{f6}b")), Some(Json::Null)],
            ),
            (
                "size",
                vec![
                    None,
                    Some(json!(7)),
                    Some(Json::Null),
                    Some(json!(-1)),
                    Some(json!("x")),
                    Some(json!(1e12)),
                ],
            ),
            (
                "digest",
                vec![
                    Some(json!("d1")),
                    None,
                    Some(json!(hex.clone())),
                    Some(json!("t\\u00e9")),
                    Some(json!(9)),
                    Some(Json::Null),
                ],
            ),
            (
                "reference",
                vec![None, Some(json!(hex)), Some(json!("ABC")), Some(Json::Null)],
            ),
            ("text", vec![None, None, None, Some(json!("hi"))]),
            (
                "parts",
                vec![
                    None,
                    None,
                    None,
                    Some(json!([{"text": "p"}])),
                    Some(json!([{"call": {"callId": "c", "name": "f"}}])),
                ],
            ),
            (
                "segment",
                vec![None, None, None, Some(json!({"body": "s"}))],
            ),
            (
                "calls",
                vec![
                    None,
                    None,
                    Some(json!([{"callId": "c", "name": "f"}])),
                    Some(json!([])),
                ],
            ),
            (
                "results",
                vec![
                    None,
                    None,
                    Some(json!([{"callId": "c", "reference": "ab".repeat(32)}])),
                    Some(json!([{"callId": "c"}])),
                ],
            ),
            (
                "zzz",
                vec![None, None, None, None, None, None, None, Some(json!(1))],
            ),
        ]
    }

    /// The `n`th combination of member choices (mixed radix), as an entry object's text; a
    /// few repeat a member or are not objects at all.
    fn case(n: u64, cs: &[(&'static str, Vec<Option<Json>>)]) -> String {
        let mut m = Map::new();
        let mut rest = n;
        for (name, opts) in cs {
            let k = opts.len() as u64;
            if let Some(v) = &opts[usize::try_from(rest % k).unwrap()] {
                m.insert((*name).to_owned(), v.clone());
            }
            rest /= k;
        }
        let text = Json::Object(m).to_string();
        match n % 97 {
            0 => text.replacen('{', "{\"id\":\"again\",", 1),
            1 => "[1, 2]".to_owned(),
            _ => text,
        }
    }

    /// Read with entries built as read ([`ReadDefs`]), as the format's [`Defs`] or as a list of
    /// [`TraceEntry`] (the derived reader), from text and
    /// from a parsed JSON value (a tagged union's buffered members): the same entries (recorded
    /// forms) or the same refusal (words, path, position); a built entry is the entry its
    /// recorded form builds. Every kind is built as read somewhere, and many entries are kept
    /// as recorded or refused.
    #[test]
    fn defs_read_as_trace_entries_do() {
        let cs = choices();
        let total: u64 = cs.iter().map(|(_, o)| o.len() as u64).product();
        let (mut built, mut recorded, mut refused) = (Vec::new(), 0, 0);
        let mut reference_with_digest = false;
        // A stride prime to the total walks the whole space in a spread-out order.
        let stride = 1_000_003;
        for i in 0..30_000u64 {
            let n = (i * stride) % total;
            let text = format!("[{}]", case(n, &cs));
            let ours = strict::read::<ReadDefs>(&text);
            let theirs = strict::read::<Vec<TraceEntry>>(&text);
            let value: Json = serde_json::from_str(&text).unwrap();
            let ours_v = strict::read_value::<ReadDefs>(value.clone());
            let theirs_v = strict::read_value::<Vec<TraceEntry>>(value.clone());
            let format = strict::read::<Defs>(&text).map(|d| d.0);
            let format_v = strict::read_value::<Defs>(value).map(|d| d.0);
            let read = |r: Result<ReadDefs, _>| r.map(|d| d.0);
            for (o, t) in [
                (read(ours), theirs.clone()),
                (read(ours_v), theirs_v.clone()),
                (format, theirs),
                (format_v, theirs_v),
            ] {
                match (o, t) {
                    (Ok(o), Ok(t)) => {
                        let got: Vec<TraceEntry> =
                            o.iter().map(|d| d.recorded().into_owned()).collect();
                        assert_eq!(got, t, "{text}");
                        for (d, t) in o.iter().zip(&t) {
                            match d {
                                Defined::Built { entry, .. } => {
                                    let again = entry_at(t, String::new).expect("builds");
                                    assert_eq!(entry, &again, "{text}");
                                    built.push(entry.kind());
                                    reference_with_digest |= entry.kind()
                                        == EntryKind::ArtifactReference
                                        && t.digest.is_some();
                                }
                                Defined::Recorded(_) => recorded += 1,
                            }
                        }
                    }
                    (Err(o), Err(t)) => {
                        assert_eq!(o, t, "{text}");
                        refused += 1;
                    }
                    (o, t) => panic!("{text}: {o:?} against {t:?}"),
                }
            }
        }
        // A tool exchange has call or result parts: it is always kept as recorded.
        for k in EntryKind::ALL
            .into_iter()
            .filter(|&k| k != EntryKind::ToolExchange)
        {
            assert!(built.contains(&k), "no {k:?} entry was built as read");
        }
        assert!(recorded > 1000 && refused > 1000, "{recorded} {refused}");
        assert!(
            reference_with_digest,
            "no ArtifactReference recorded with a digest was built as read"
        );
    }
}
