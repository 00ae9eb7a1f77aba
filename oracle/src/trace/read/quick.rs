//! A quick reader for the call record as writers write it, beside the strict reader.
//!
//! Most of a compact call record's bytes are its defined entries, snapshot references and
//! reducer steps (about 62 % on runs of 20 calls, 79 % on runs of 6), then its events, result
//! and diagnostics: objects of short strings and integers, which the strict reader reads
//! through its serde layers value by value. This reader scans those members directly from the
//! line, and hands the rest (the policy, a result written out, the error, lease, stream end, a
//! final verification, category contributions, and any defined entry it does not scan: one
//! with content, or with an escape in a string) to the strict reader as the text of the value
//! alone, read as the same type.
//!
//! Objects whose members writers write in one order, without whitespace or `null` (a defined
//! entry, an event, a diagnostics record and its contributions, `resultRefs` and its final
//! verification) are first read in that order, each key matched with its punctuation in one
//! comparison (`Scan::lit`); one written any other way is read member by member, as any object
//! here is (a key scanned, then looked up).
//!
//! It reads a subset of what the strict reader accepts, and gives the same record: whenever it
//! meets anything else (a member out of place or repeated, an unknown member, an escape in a
//! string it scans, a number that is not a plain integer in range, a snapshot written out, a
//! `type` that is not the first member or not `call`, nesting near the parser's limit, any
//! malformed text, a value the strict reader refuses) it gives up on the line, and the strict
//! reader reads the whole line as before: its record, or its refusal with the words, path and
//! position it always had. So what is accepted, what is refused and how, and every value read
//! are the strict reader's; this reader only decides, for the lines it can, faster.

use hybrid_compaction_model::entry::EntryKind;
use hybrid_compaction_model::Named;

use crate::trace::format::{
    self, CallRecord, Defined, Defs, EventKind, NewRef, Phase, Record, ReducerAnswer, ReducerStep,
    RefItem, Settlement, StreamEnd, TraceError, TraceEvent, TraceLease, TraceProposalItem,
    TraceResult, TraceSnapshot, TraceVerification,
};
use crate::trace::read::defined::{self, Flat};
use crate::trace::read::entries::{CallText, ResultText};
use crate::wire::input::{KindInput, PolicyInput};
use crate::wire::names::Name;
use crate::wire::output::{AssemblyOutput, ContributionOutput, DiagnosticsOutput};
use crate::wire::strict::{self, ReadError};

/// Nesting this reader leaves to the strict reader (the parser refuses 128 levels; a member's
/// text read alone would start counting again. No member handed over holds free-form JSON
/// today, so its type refuses deep nesting anyway: this keeps it so if one ever does).
const DEPTH: usize = 100;

/// `None`: the line is left to the strict reader.
type Q<T> = Option<T>;

/// A position in the line.
struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    fn byte(&self) -> Q<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// The next byte after whitespace.
    fn peek(&mut self) -> Q<u8> {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.byte() {
            self.at += 1;
        }
        self.byte()
    }

    fn eat(&mut self, c: u8) -> Q<()> {
        (self.peek()? == c).then(|| self.at += 1)
    }

    /// Exactly `text` next (no whitespace skipped).
    fn lit(&mut self, text: &[u8]) -> Q<()> {
        let yes = self.text.as_bytes()[self.at..].starts_with(text);
        yes.then(|| self.at += text.len())
    }

    /// A member written exactly as `key` (quotes and punctuation included), its value read by
    /// `f`: `Some(None)` when the next bytes are not `key` (the member is absent), `None` when
    /// the value cannot be read.
    fn member<T>(&mut self, key: &[u8], f: impl FnOnce(&mut Self) -> Q<T>) -> Q<Option<T>> {
        if self.lit(key).is_none() {
            return Some(None);
        }
        f(self).map(Some)
    }

    /// A string without escapes or control characters.
    fn str(&mut self) -> Q<&'a str> {
        self.eat(b'"')?;
        let start = self.at;
        let len = plain_len(&self.text.as_bytes()[start..])?;
        self.at += len + 1;
        Some(&self.text[start..start + len])
    }

    /// `true`, `false` or `null`.
    fn opt_bool(&mut self) -> Q<Option<bool>> {
        for (word, v) in [("null", None), ("true", Some(true)), ("false", Some(false))] {
            if self.peek().is_some() && self.text[self.at..].starts_with(word) {
                self.at += word.len();
                return Some(v);
            }
        }
        None
    }

    fn null(&mut self) -> bool {
        let yes = self.peek() == Some(b'n') && self.text[self.at..].starts_with("null");
        if yes {
            self.at += 4;
        }
        yes
    }

    /// A non-negative integer written plainly (no sign, fraction, exponent or leading zero).
    fn uint(&mut self) -> Q<u64> {
        self.peek()?;
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut n: u64 = 0;
        while let Some(d @ b'0'..=b'9') = bytes.get(self.at).copied() {
            n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            self.at += 1;
        }
        let digits = self.at - start;
        let leading_zero = digits > 1 && bytes[start] == b'0';
        let more = matches!(bytes.get(self.at), Some(b'.' | b'e' | b'E'));
        (digits > 0 && !leading_zero && !more).then_some(n)
    }

    /// An integer written plainly, possibly negative (not `-0`).
    fn int(&mut self) -> Q<i64> {
        if self.peek()? == b'-' {
            self.at += 1;
            let n = self.uint()?;
            return (n != 0).then(|| 0i64.checked_sub_unsigned(n)).flatten();
        }
        i64::try_from(self.uint()?).ok()
    }

    fn i32(&mut self) -> Q<i32> {
        i32::try_from(self.int()?).ok()
    }

    /// A table index (the strict reader's `u32` range).
    fn index(&mut self) -> Q<u32> {
        u32::try_from(self.uint()?).ok()
    }

    /// Any JSON value at nesting `depth`, skipped: its text, read by the strict reader, which
    /// judges it (this only finds where it ends: at the `,` `}` or `]` after it).
    fn raw(&mut self, depth: usize) -> Q<&'a str> {
        self.peek()?;
        let start = self.at;
        let bytes = self.text.as_bytes();
        let mut open = 0usize;
        loop {
            match *bytes.get(self.at)? {
                b'"' => {
                    // To the closing quote, over escaped characters.
                    self.at += 1;
                    loop {
                        let rest = bytes.get(self.at..)?;
                        let i = memchr::memchr2(b'"', b'\\', rest)?;
                        self.at += i + 1;
                        if rest[i] == b'"' {
                            break;
                        }
                        self.at += 1;
                    }
                }
                b'{' | b'[' => {
                    open += 1;
                    if depth + open > DEPTH {
                        return None;
                    }
                    self.at += 1;
                }
                b'}' | b']' | b',' if open == 0 => break,
                b'}' | b']' => {
                    open -= 1;
                    self.at += 1;
                }
                _ => self.at += 1,
            }
        }
        Some(&self.text[start..self.at])
    }

    /// Reads the members of an object, `f` reading each value after its key.
    fn object(&mut self, mut f: impl FnMut(&mut Self, &'a str) -> Q<()>) -> Q<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            let key = self.str()?;
            self.eat(b':')?;
            f(self, key)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Reads the elements of an array; a non-empty one starts with room for 16 (the tables'
    /// reference and index lists run to a hundred or more: their first growth steps, each a
    /// reallocation and a copy, are skipped).
    fn array<T>(&mut self, mut f: impl FnMut(&mut Self) -> Q<T>) -> Q<Vec<T>> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.at += 1;
            return Some(Vec::new());
        }
        let mut out = Vec::with_capacity(16);
        loop {
            out.push(f(self)?);
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(out);
                }
                _ => return None,
            }
        }
    }
}

/// The length of the string body at the start of `rest` up to its closing quote: `None` when a
/// backslash or a control character comes first, or no quote closes it.
///
/// One pass, eight bytes at a time: a word's bytes equal to `"` or `\\`, or below 0x20, are
/// flagged with the classic zero-byte tests. A flag can be spurious only above a true one
/// (borrows run upwards), so the lowest flag is always the first such byte; bytes of 0x80
/// and above (UTF-8 sequences) are never flagged. The ids and digests this reader scans are 64
/// to 70 bytes, where this is about twice as fast as finding the quote (`memchr2`) and then
/// looking for control characters before it.
fn plain_len(rest: &[u8]) -> Q<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const QUOTES: u64 = ONES * b'"' as u64;
    const SLASHES: u64 = ONES * b'\\' as u64;
    const SPACES: u64 = ONES * 0x20;
    let mut words = rest.chunks_exact(8);
    for (k, chunk) in words.by_ref().enumerate() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let (q, b) = (w ^ QUOTES, w ^ SLASHES);
        let flags = ((q.wrapping_sub(ONES) & !q)
            | (b.wrapping_sub(ONES) & !b)
            | (w.wrapping_sub(SPACES) & !w))
            & HIGHS;
        if flags != 0 {
            let at = k * 8 + (flags.trailing_zeros() / 8) as usize;
            return (rest[at] == b'"').then_some(at);
        }
    }
    let tail = words.remainder();
    let i = rest.len() - tail.len();
    let at = tail
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
    (tail[at] == b'"').then_some(i + at)
}

/// A value read as writers write it by `written`, else (from the same place) by `general`.
fn either<'a, T>(
    s: &mut Scan<'a>,
    written: impl FnOnce(&mut Scan<'a>) -> Q<T>,
    general: impl FnOnce(&mut Scan<'a>) -> Q<T>,
) -> Q<T> {
    s.peek()?;
    let start = s.at;
    if let Some(v) = written(s) {
        return Some(v);
    }
    s.at = start;
    general(s)
}

/// Reads a member's value into its slot: a member already read leaves the line to the strict
/// reader (which refuses the repeated key).
fn set<T>(slot: &mut Option<T>, value: Q<T>) -> Q<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value?);
    Some(())
}

/// `null`, or a value read by `f`.
fn nullable<'a, T>(s: &mut Scan<'a>, f: impl FnOnce(&mut Scan<'a>) -> Q<T>) -> Q<Option<T>> {
    if s.null() {
        return Some(None);
    }
    f(s).map(Some)
}

/// A value the strict reader reads from its own text.
fn strictly<T: serde::de::DeserializeOwned>(s: &mut Scan, depth: usize) -> Q<T> {
    strict::read(s.raw(depth)?).ok()
}

/// `null` or a string.
fn opt_str<'a>(s: &mut Scan<'a>) -> Q<Option<&'a str>> {
    nullable(s, Scan::str)
}

fn owned(s: &mut Scan) -> Q<String> {
    s.str().map(str::to_owned)
}

/// A name of the vocabulary, by its stable name.
fn name<T: Named>(s: &mut Scan) -> Q<Name<T>> {
    T::from_name(s.str()?).map(Name)
}

/// An object written as writers write it, every member present: `{"k1":v1,"k2":v2,...}` in
/// the order given, no whitespace. Each key is matched with its quotes, colon and comma in one
/// comparison ([`Scan::lit`]), then its value read by its expression; the struct is built from
/// the members' values by field name. Any difference makes it answer `None` (the caller then
/// reads the object member by member).
macro_rules! in_order {
    ($s:ident => $ty:ident {
        $first:ident: $first_key:literal = $first_read:expr
        $(, $field:ident: $key:literal = $read:expr)* $(,)?
    }) => {{
        $s.lit(concat!("{\"", $first_key, "\":").as_bytes())?;
        let $first = $first_read?;
        $(
            $s.lit(concat!(",\"", $key, "\":").as_bytes())?;
            let $field = $read?;
        )*
        $s.lit(b"}")?;
        Some($ty { $first $(, $field)* })
    }};
}

/// A redacted call part, its texts borrowed: written as the recorder writes it, else member
/// by member.
fn tool_call<'a>(s: &mut Scan<'a>) -> Q<CallText<'a>> {
    either(
        s,
        |s| {
            in_order!(s => CallText {
                call_id: "callId" = s.str(),
                name: "name" = s.str(),
            })
        },
        |s| {
            let (mut call_id, mut name) = (None, None);
            s.object(|s, key| match key {
                "callId" => set(&mut call_id, s.str()),
                "name" => set(&mut name, s.str()),
                _ => None,
            })?;
            Some(CallText {
                call_id: call_id?,
                name: name?,
            })
        },
    )
}

/// A redacted result part, its texts borrowed.
fn tool_result<'a>(s: &mut Scan<'a>) -> Q<ResultText<'a>> {
    let (mut call_id, mut reference) = (None, None);
    s.object(|s, key| match key {
        "callId" => set(&mut call_id, s.str()),
        "reference" => set(&mut reference, nullable(s, Scan::str)),
        _ => None,
    })?;
    Some(ResultText {
        call_id: call_id?,
        reference: reference.flatten(),
    })
}

/// One defined entry: scanned when it is redacted and plainly written; any other (with
/// content, an escape, ...) read as `defs` reads each entry, by the strict reader from its own
/// text.
fn def(s: &mut Scan) -> Q<Defined> {
    either(s, written_def, |s| {
        either(s, redacted_def, |s| defined::read(s.raw(3)?))
    })
}

/// One redacted entry written as the recorder writes it: its members in declaration order,
/// no whitespace, none `null`. Each key is matched with its punctuation in one comparison
/// instead of being scanned and looked up; anything else (another order, a `null`, a member
/// with content) is read by [`redacted_def`], or by the strict reader.
fn written_def(s: &mut Scan) -> Q<Defined> {
    s.lit(b"{\"id\":")?;
    let id = s.str()?;
    s.lit(b",\"kind\":")?;
    let kind = KindInput(s.str().and_then(EntryKind::from_name)?);
    let role = s.member(b",\"role\":", Scan::str)?;
    let author = s.member(b",\"author\":", Scan::str)?;
    let size = s.member(b",\"size\":", Scan::i32)?;
    let digest = s.member(b",\"digest\":", Scan::str)?;
    let calls = s.member(b",\"calls\":", |s| s.array(tool_call))?;
    let results = s.member(b",\"results\":", |s| s.array(tool_result))?;
    let reference = s.member(b",\"reference\":", Scan::str)?;
    s.lit(b"}")?;
    Some(
        Flat {
            id,
            kind,
            role,
            author,
            size,
            digest,
            reference,
            calls,
            results,
        }
        .defined(),
    )
}

/// One redacted entry (no content).
fn redacted_def(s: &mut Scan) -> Q<Defined> {
    let (mut id, mut kind, mut role, mut author, mut size) = (None, None, None, None, None);
    let (mut digest, mut reference, mut calls, mut results) = (None, None, None, None);
    s.object(|s, key| match key {
        "id" => set(&mut id, s.str()),
        "kind" => set(
            &mut kind,
            s.str().and_then(EntryKind::from_name).map(KindInput),
        ),
        "role" => set(&mut role, opt_str(s)),
        "author" => set(&mut author, opt_str(s)),
        "size" => set(&mut size, nullable(s, Scan::i32)),
        "digest" => set(&mut digest, opt_str(s)),
        "reference" => set(&mut reference, opt_str(s)),
        "calls" => set(&mut calls, nullable(s, |s| s.array(tool_call))),
        "results" => set(&mut results, nullable(s, |s| s.array(tool_result))),
        _ => None,
    })?;
    Some(
        Flat {
            id: id?,
            kind: kind?,
            role: role.flatten(),
            author: author.flatten(),
            size: size.flatten(),
            digest: digest.flatten(),
            reference: reference.flatten(),
            calls: calls.flatten(),
            results: results.flatten(),
        }
        .defined(),
    )
}

/// A table reference: an index, a range `[first, last]` or an id.
fn ref_item(s: &mut Scan) -> Q<RefItem> {
    match s.peek()? {
        b'[' => match s.array(Scan::index)?[..] {
            [a, b] if a <= b => Some(RefItem::Range([a, b])),
            _ => None,
        },
        b'"' => owned(s).map(RefItem::Id),
        _ => s.index().map(RefItem::Index),
    }
}

/// `null` or a list of table references.
fn opt_refs(s: &mut Scan) -> Q<Option<Vec<RefItem>>> {
    nullable(s, |s| s.array(ref_item))
}

fn snapshot(s: &mut Scan) -> Q<TraceSnapshot> {
    let (mut version, mut refs) = (None, None);
    s.object(|s, key| match key {
        "version" => set(&mut version, s.int()),
        "refs" => set(&mut refs, opt_refs(s)),
        _ => None,
    })?;
    Some(TraceSnapshot {
        version: version?,
        entries: None,
        refs: refs.flatten(),
    })
}

fn proposal_item(s: &mut Scan) -> Q<TraceProposalItem> {
    match s.peek()? {
        b'"' => owned(s).map(TraceProposalItem::Keep),
        b'{' => {
            let mut new = None;
            s.object(|s, key| match key {
                "new" => set(&mut new, s.index()),
                _ => None,
            })?;
            Some(TraceProposalItem::NewRef(NewRef { new: new? }))
        }
        _ => s.index().map(TraceProposalItem::KeepRef),
    }
}

fn answer(s: &mut Scan) -> Q<ReducerAnswer> {
    if s.peek()? == b'"' {
        return (s.str()? == "nothing").then_some(ReducerAnswer::Nothing);
    }
    let mut out = None;
    s.object(|s, key| match key {
        "propose" => set(&mut out, s.array(proposal_item).map(ReducerAnswer::Propose)),
        "error" => set(&mut out, owned(s).map(ReducerAnswer::Error)),
        _ => None,
    })?;
    out
}

fn step(s: &mut Scan) -> Q<ReducerStep> {
    let (mut attempt, mut request_ids, mut request, mut ans) = (None, None, None, None);
    s.object(|s, key| match key {
        "attempt" => set(&mut attempt, s.i32()),
        "requestIds" => set(&mut request_ids, s.array(owned)),
        "request" => set(&mut request, opt_refs(s)),
        "answer" => set(&mut ans, answer(s)),
        _ => None,
    })?;
    Some(ReducerStep {
        attempt: attempt?,
        request_ids: request_ids.unwrap_or_default(),
        request: request.flatten(),
        answer: ans?,
    })
}

/// A `resultRefs` object (its final verification, when there is one, read strictly).
fn result_refs(s: &mut Scan) -> Q<TraceResult> {
    either(s, written_result_refs, any_result_refs)
}

/// A `resultRefs` object as writers write it: members in declaration order, every one written.
fn written_result_refs(s: &mut Scan) -> Q<TraceResult> {
    in_order!(s => TraceResult {
        outcome: "outcome" = name(s),
        final_entry_ids: "finalEntryIds" = opt_refs(s),
        original_estimated_size: "originalEstimatedSize" = s.i32(),
        final_estimated_size: "finalEstimatedSize" = s.i32(),
        hard_limit: "hardLimit" = s.i32(),
        attempt_count: "attemptCount" = s.i32(),
        stages: "stages" = s.array(name),
        required_entry_ids: "requiredEntryIds" = s.array(ref_item),
        latest_snapshot_version: "latestSnapshotVersion" = s.int(),
        final_verification: "finalVerification" =
            either(s, |s| nullable(s, written_verification), |s| strictly(s, 2)),
    })
}

/// A final verification as writers write it (members in declaration order), its id lists
/// table references.
fn written_verification(s: &mut Scan) -> Q<TraceVerification> {
    in_order!(s => TraceVerification {
        outcome: "outcome" = name(s),
        rejection_reasons: "rejectionReasons" = s.array(name),
        missing_required_entry_ids: "missingRequiredEntryIds" = s.array(ref_item),
        invalid_entry_ids: "invalidEntryIds" = s.array(ref_item),
        preservation_only_fallback_entry_ids: "preservationOnlyFallbackEntryIds" =
            s.array(ref_item),
    })
}

/// A `resultRefs` object, its members in any order.
fn any_result_refs(s: &mut Scan) -> Q<TraceResult> {
    let (mut outcome, mut finals, mut original, mut final_size, mut limit, mut attempts) =
        (None, None, None, None, None, None);
    let (mut stages, mut required, mut latest, mut verification) = (None, None, None, None);
    s.object(|s, key| match key {
        "outcome" => set(&mut outcome, name(s)),
        "finalEntryIds" => set(&mut finals, opt_refs(s)),
        "originalEstimatedSize" => set(&mut original, s.i32()),
        "finalEstimatedSize" => set(&mut final_size, s.i32()),
        "hardLimit" => set(&mut limit, s.i32()),
        "attemptCount" => set(&mut attempts, s.i32()),
        "stages" => set(&mut stages, s.array(name)),
        "requiredEntryIds" => set(&mut required, s.array(ref_item)),
        "latestSnapshotVersion" => set(&mut latest, s.int()),
        "finalVerification" => set(&mut verification, strictly(s, 2)),
        _ => None,
    })?;
    Some(TraceResult {
        outcome: outcome?,
        final_entry_ids: finals.flatten(),
        original_estimated_size: original?,
        final_estimated_size: final_size?,
        hard_limit: limit?,
        attempt_count: attempts?,
        stages: stages?,
        required_entry_ids: required?,
        latest_snapshot_version: latest?,
        final_verification: verification.flatten(),
    })
}

/// A diagnostics record at nesting `depth`.
fn diagnostics(s: &mut Scan, depth: usize) -> Q<DiagnosticsOutput> {
    either(s, written_diagnostics, |s| any_diagnostics(s, depth))
}

/// A diagnostics record as writers write it: members in declaration order, every one written.
fn written_diagnostics(s: &mut Scan) -> Q<DiagnosticsOutput> {
    in_order!(s => DiagnosticsOutput {
        outcome: "outcome" = name(s),
        measurement_unit: "measurementUnit" = name(s),
        original_size: "originalSize" = s.i32(),
        final_size: "finalSize" = s.i32(),
        trigger_threshold: "triggerThreshold" = s.i32(),
        hard_limit: "hardLimit" = s.i32(),
        attempt_count: "attemptCount" = s.i32(),
        stages: "stages" = s.array(name),
        category_contributions: "categoryContributions" = s.array(written_contribution),
        final_sequence_valid: "finalSequenceValid" = s.opt_bool(),
    })
}

/// One category contribution as writers write it.
fn written_contribution(s: &mut Scan) -> Q<ContributionOutput> {
    in_order!(s => ContributionOutput {
        category: "category" = name(s),
        size: "size" = s.i32(),
        entry_count: "entryCount" = s.i32(),
    })
}

/// A diagnostics record at nesting `depth`, its members in any order (its contributions read
/// strictly).
fn any_diagnostics(s: &mut Scan, depth: usize) -> Q<DiagnosticsOutput> {
    let (mut outcome, mut unit, mut original, mut final_size, mut threshold, mut limit) =
        (None, None, None, None, None, None);
    let (mut attempts, mut stages, mut contributions, mut valid) = (None, None, None, None);
    s.object(|s, key| match key {
        "outcome" => set(&mut outcome, name(s)),
        "measurementUnit" => set(&mut unit, name(s)),
        "originalSize" => set(&mut original, s.i32()),
        "finalSize" => set(&mut final_size, s.i32()),
        "triggerThreshold" => set(&mut threshold, s.i32()),
        "hardLimit" => set(&mut limit, s.i32()),
        "attemptCount" => set(&mut attempts, s.i32()),
        "stages" => set(&mut stages, s.array(name)),
        "categoryContributions" => set(&mut contributions, s.array(|s| strictly(s, depth + 2))),
        "finalSequenceValid" => set(&mut valid, s.opt_bool()),
        _ => None,
    })?;
    Some(DiagnosticsOutput {
        outcome: outcome?,
        measurement_unit: unit?,
        original_size: original?,
        final_size: final_size?,
        trigger_threshold: threshold?,
        hard_limit: limit?,
        attempt_count: attempts?,
        stages: stages?,
        category_contributions: contributions?,
        final_sequence_valid: valid.flatten(),
    })
}

/// One progress event.
fn event(s: &mut Scan) -> Q<TraceEvent> {
    either(s, written_event, any_event)
}

/// One progress event as writers write it: members in declaration order, the optional ones
/// left out rather than `null`.
fn written_event(s: &mut Scan) -> Q<TraceEvent> {
    s.lit(b"{\"kind\":")?;
    let kind = s.str().and_then(event_kind)?;
    s.lit(b",\"assemblyId\":")?;
    let assembly_id = owned(s)?;
    s.lit(b",\"sequence\":")?;
    let sequence = s.uint()?;
    let measurement_unit = s.member(b",\"measurementUnit\":", owned)?;
    let hard_limit = s.member(b",\"hardLimit\":", Scan::i32)?;
    let trigger_threshold = s.member(b",\"triggerThreshold\":", Scan::i32)?;
    let diagnostics = s.member(b",\"diagnostics\":", |s| self::diagnostics(s, 3))?;
    s.lit(b"}")?;
    Some(TraceEvent {
        kind,
        assembly_id,
        sequence,
        measurement_unit,
        hard_limit,
        trigger_threshold,
        diagnostics,
    })
}

/// One progress event, its members in any order.
fn any_event(s: &mut Scan) -> Q<TraceEvent> {
    let (mut kind, mut id, mut sequence, mut unit) = (None, None, None, None);
    let (mut limit, mut threshold, mut diagnostics) = (None, None, None);
    s.object(|s, key| match key {
        "kind" => set(&mut kind, s.str().and_then(event_kind)),
        "assemblyId" => set(&mut id, owned(s)),
        "sequence" => set(&mut sequence, s.uint()),
        "measurementUnit" => set(&mut unit, nullable(s, owned)),
        "hardLimit" => set(&mut limit, nullable(s, Scan::i32)),
        "triggerThreshold" => set(&mut threshold, nullable(s, Scan::i32)),
        "diagnostics" => set(&mut diagnostics, nullable(s, |s| self::diagnostics(s, 3))),
        _ => None,
    })?;
    Some(TraceEvent {
        kind: kind?,
        assembly_id: id?,
        sequence: sequence?,
        measurement_unit: unit.flatten(),
        hard_limit: limit.flatten(),
        trigger_threshold: threshold.flatten(),
        diagnostics: diagnostics.flatten(),
    })
}

/// A call's error.
fn error(s: &mut Scan) -> Q<TraceError> {
    let (mut kind, mut phase) = (None, None);
    s.object(|s, key| match key {
        "kind" => set(&mut kind, owned(s)),
        "phase" => set(&mut phase, s.str().and_then(phase_named)),
        _ => None,
    })?;
    Some(TraceError {
        kind: kind?,
        phase: phase?,
    })
}

/// A phase by its name.
fn phase_named(name: &str) -> Q<Phase> {
    Some(match name {
        "gate" => Phase::Gate,
        "prepare" => Phase::Prepare,
        "assembly" => Phase::Assembly,
        "terminated" => Phase::Terminated,
        "provider" => Phase::Provider,
        "commit" => Phase::Commit,
        _ => return None,
    })
}

/// A call's lease (its forwarded digests may be left out: none).
fn lease(s: &mut Scan) -> Q<TraceLease> {
    let (mut settled, mut forwarded) = (None, None);
    s.object(|s, key| match key {
        "settled" => set(&mut settled, s.str().and_then(settlement_named)),
        "forwarded" => set(&mut forwarded, s.array(owned)),
        _ => None,
    })?;
    Some(TraceLease {
        settled: settled?,
        forwarded: forwarded.unwrap_or_default(),
    })
}

/// A lease settlement by its name.
fn settlement_named(name: &str) -> Q<Settlement> {
    Some(match name {
        "committed" => Settlement::Committed,
        "released" => Settlement::Released,
        "none" => Settlement::None,
        _ => return None,
    })
}

/// An event kind by its name.
fn event_kind(name: &str) -> Q<EventKind> {
    Some(match name {
        "Started" => EventKind::Started,
        "Completed" => EventKind::Completed,
        "Terminated" => EventKind::Terminated,
        "Composed" => EventKind::Composed,
        _ => return None,
    })
}

thread_local! {
    /// The last policy read on this thread, with its text: the calls of a run name the same
    /// policy, written the same way.
    static POLICY: std::cell::RefCell<Option<(String, PolicyInput)>> =
        const { std::cell::RefCell::new(None) };
}

/// The policy, read strictly from its text unless it is the text of the last policy read.
fn policy(s: &mut Scan) -> Q<PolicyInput> {
    s.peek()?;
    POLICY.with_borrow_mut(|last| {
        // The last policy's text, then the end of the value (what `raw` stops at): the same
        // value, found without scanning it. (Anything else after it is left to `raw`, which
        // reads it into the value's text, or to the record's own reading, which refuses it.)
        if let Some((t, p)) = last.as_ref() {
            let rest = &s.text.as_bytes()[s.at..];
            if rest.starts_with(t.as_bytes())
                && matches!(rest.get(t.len()), Some(b',' | b'}' | b']'))
            {
                s.at += t.len();
                return Some(p.clone());
            }
        }
        let text = s.raw(1)?;
        let p: PolicyInput = strict::read(text).ok()?;
        *last = Some((text.to_owned(), p.clone()));
        Some(p)
    })
}

/// Parses one record line as [`format::parse_record`] does (the same record, or the same
/// refusal), a call record as writers write it by this reader.
pub(crate) fn parse_record(line: &str) -> Result<Record, ReadError> {
    match call_record(line) {
        Some(rec) => Ok(Record::Call(Box::new(rec))),
        None => format::parse_record(line),
    }
}

/// The call record on `line`, when this reader reads it (else the strict reader does).
pub(crate) fn call_record(line: &str) -> Option<CallRecord> {
    let mut s = Scan { text: line, at: 0 };
    s.eat(b'{')?;
    (s.str()? == "type").then_some(())?;
    s.eat(b':')?;
    (s.str()? == "call").then_some(())?;
    let mut m = Members::default();
    loop {
        match s.peek()? {
            b',' => s.at += 1,
            b'}' => {
                s.at += 1;
                break;
            }
            _ => return None,
        }
        let key = s.str()?;
        s.eat(b':')?;
        let s = &mut s;
        match key {
            "run" => set(&mut m.run, owned(s)),
            "call" => set(&mut m.call, owned(s)),
            "admitted" => set(&mut m.admitted, nullable(s, Scan::uint)),
            "policy" => set(&mut m.policy, self::policy(s)),
            "defs" => set(&mut m.defs, nullable(s, |s| s.array(def).map(Defs))),
            "snapshots" => set(&mut m.snapshots, s.array(snapshot)),
            "reducer" => set(&mut m.reducer, s.array(step)),
            "cancel" => set(&mut m.cancel, nullable(s, owned)),
            "result" => set(&mut m.result, strictly(s, 1)),
            "resultRefs" => set(&mut m.result_refs, nullable(s, result_refs)),
            "diagnostics" => set(&mut m.diagnostics, nullable(s, |s| diagnostics(s, 1))),
            "error" => set(&mut m.error, nullable(s, error)),
            "events" => set(&mut m.events, nullable(s, |s| s.array(event))),
            "lease" => set(&mut m.lease, nullable(s, lease)),
            "streamed" => set(&mut m.streamed, strictly(s, 1)),
            _ => None,
        }?;
    }
    if s.peek().is_some() {
        return None;
    }
    Some(CallRecord {
        record_type: None,
        run: m.run?,
        call: m.call?,
        admitted: m.admitted.flatten(),
        policy: m.policy?,
        defs: m.defs.flatten(),
        snapshots: m.snapshots.unwrap_or_default(),
        reducer: m.reducer.unwrap_or_default(),
        cancel: m.cancel.flatten(),
        result: m.result.flatten(),
        result_refs: m.result_refs.flatten(),
        diagnostics: m.diagnostics.flatten(),
        error: m.error.flatten(),
        events: m.events.flatten(),
        lease: m.lease.flatten(),
        streamed: m.streamed.flatten(),
    })
}

/// A call record's members after its `type`, as read so far (`None`: not read; `Some(None)`
/// for an optional one: read as `null`).
#[derive(Default)]
struct Members {
    run: Option<String>,
    call: Option<String>,
    admitted: Option<Option<u64>>,
    policy: Option<PolicyInput>,
    defs: Option<Option<Defs>>,
    snapshots: Option<Vec<TraceSnapshot>>,
    reducer: Option<Vec<ReducerStep>>,
    cancel: Option<Option<String>>,
    result: Option<Option<AssemblyOutput>>,
    result_refs: Option<Option<TraceResult>>,
    diagnostics: Option<Option<DiagnosticsOutput>>,
    error: Option<Option<TraceError>>,
    events: Option<Option<Vec<TraceEvent>>>,
    lease: Option<Option<TraceLease>>,
    streamed: Option<Option<StreamEnd>>,
}

#[cfg(test)]
mod tests {
    use super::{event_kind, phase_named, plain_len, settlement_named};
    use crate::trace::format::{EventKind, Phase, Settlement};

    /// The names this reader maps are the names the records' types are written with, every
    /// variant's.
    #[test]
    fn names_are_read_as_written() {
        let name = |v: serde_json::Value| v.as_str().unwrap().to_owned();
        for p in [
            Phase::Gate,
            Phase::Prepare,
            Phase::Assembly,
            Phase::Terminated,
            Phase::Provider,
            Phase::Commit,
        ] {
            assert_eq!(
                phase_named(&name(serde_json::to_value(p).unwrap())),
                Some(p)
            );
        }
        for k in [
            Settlement::Committed,
            Settlement::Released,
            Settlement::None,
        ] {
            assert_eq!(
                settlement_named(&name(serde_json::to_value(k).unwrap())),
                Some(k)
            );
        }
        for k in [
            EventKind::Started,
            EventKind::Completed,
            EventKind::Terminated,
            EventKind::Composed,
        ] {
            assert_eq!(event_kind(&name(serde_json::to_value(k).unwrap())), Some(k));
        }
    }

    /// What [`plain_len`] computes, byte by byte.
    fn reference(rest: &[u8]) -> Option<usize> {
        let at = rest.iter().position(|&c| c == b'"' || c == b'\\')?;
        (rest[at] == b'"' && rest[..at].iter().all(|&c| c >= 0x20)).then_some(at)
    }

    /// Every byte value at every position of strings of 0 to 40 bytes (so in every lane of a
    /// word and in the tail), over backgrounds of ASCII, multi-byte UTF-8 and bytes just above
    /// the flagged ones, with and without a closing quote further on.
    #[test]
    fn plain_len_finds_the_first_quote_backslash_or_control_byte() {
        let backgrounds: [&[u8]; 4] = [
            b"a",
            "\u{e9}".as_bytes(),
            &[0x21, 0x7f, 0x80, 0xff],
            b" #]^",
        ];
        let mut checked = 0;
        for bg in backgrounds {
            for len in 0..40usize {
                for at in 0..len.max(1) {
                    for byte in 0..=255u8 {
                        for closed in [false, true] {
                            let mut s: Vec<u8> = bg.iter().copied().cycle().take(len).collect();
                            if at < len {
                                s[at] = byte;
                            }
                            if closed {
                                s.extend_from_slice(b"\"xyz");
                            }
                            assert_eq!(plain_len(&s), reference(&s), "{s:?}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 1_000_000);
    }
}

/// The quick reader against the strict one, over recorded lines and mutations of them.
#[cfg(test)]
#[path = "quick_tests.rs"]
mod agreement;
