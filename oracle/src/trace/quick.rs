//! A quick reader for the call record as writers write it, beside the strict reader.
//!
//! Most of a compact call record's bytes are its defined entries, snapshot references and
//! reducer steps (about 62 % on runs of 20 calls, 79 % on runs of 6): flat objects of short
//! strings and integers, which the strict reader reads through its serde layers value by value.
//! This reader scans those members directly from the line, and hands every other member (the
//! policy, the result, diagnostics, events, error, lease, stream end) to the strict reader as
//! the text of its value alone, read as the same type.
//!
//! It reads a subset of what the strict reader accepts, and gives the same record: whenever it
//! meets anything else (a member it does not scan itself out of place or repeated, an unknown
//! member, an escape in a string, a number that is not a plain integer in range, content or
//! call parts in an entry, a `type` that is not the first member or not `call`, nesting near the
//! parser's limit, any malformed text) it gives up on the line, and the strict reader reads the
//! whole line as before: its record, or its refusal with the words, path and position it
//! always had. So what is accepted, what is refused and how, and every value read are the
//! strict reader's; this reader only decides, for the lines it can, faster.

use hybrid_compaction_model::entry::EntryKind;
use hybrid_compaction_model::Named;

use super::defined::flat;
use super::format::{
    self, CallRecord, Defined, Defs, EventKind, NewRef, Record, ReducerAnswer, ReducerStep,
    RefItem, StreamEnd, TraceError, TraceEvent, TraceLease, TraceProposalItem, TraceResult,
    TraceSnapshot, TraceToolCall, TraceToolResult,
};
use crate::wire::input::{KindInput, PolicyInput};
use crate::wire::names::Name;
use crate::wire::output::{AssemblyOutput, DiagnosticsOutput};
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

    /// A string without escapes or control characters.
    fn str(&mut self) -> Q<&'a str> {
        self.eat(b'"')?;
        let start = self.at;
        let rest = &self.text.as_bytes()[start..];
        let len = memchr::memchr2(b'"', b'\\', rest)?;
        if rest[len] != b'"' || rest[..len].iter().any(|&b| b < 0x20) {
            return None;
        }
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

    /// Reads the elements of an array.
    fn array<T>(&mut self, mut f: impl FnMut(&mut Self) -> Q<T>) -> Q<Vec<T>> {
        self.eat(b'[')?;
        let mut out = Vec::new();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(out);
        }
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

/// Members seen in one object (a repeated one leaves the line to the strict reader).
#[derive(Default)]
struct Seen(u32);

impl Seen {
    fn first(&mut self, bit: u32) -> Q<()> {
        let fresh = self.0 & (1 << bit) == 0;
        self.0 |= 1 << bit;
        fresh.then_some(())
    }
}

/// A value the strict reader reads from its own text.
fn strictly<T: serde::de::DeserializeOwned>(s: &mut Scan, depth: usize) -> Q<T> {
    strict::read(s.raw(depth)?).ok()
}

/// `null` or a string.
fn opt_str<'a>(s: &mut Scan<'a>) -> Q<Option<&'a str>> {
    if s.null() {
        return Some(None);
    }
    s.str().map(Some)
}

/// A redacted call part.
fn tool_call(s: &mut Scan) -> Q<TraceToolCall> {
    let (mut call_id, mut name) = (None, None);
    s.object(|s, key| {
        match key {
            "callId" if call_id.is_none() => call_id = Some(s.str()?.to_owned()),
            "name" if name.is_none() => name = Some(s.str()?.to_owned()),
            _ => return None,
        }
        Some(())
    })?;
    Some(TraceToolCall {
        call_id: call_id?,
        name: name?,
    })
}

/// A redacted result part.
fn tool_result(s: &mut Scan) -> Q<TraceToolResult> {
    let (mut call_id, mut reference) = (None, None);
    s.object(|s, key| {
        match key {
            "callId" if call_id.is_none() => call_id = Some(s.str()?.to_owned()),
            "reference" if reference.is_none() => reference = Some(opt_str(s)?.map(str::to_owned)),
            _ => return None,
        }
        Some(())
    })?;
    Some(TraceToolResult {
        call_id: call_id?,
        reference: reference.flatten(),
    })
}

/// One defined entry, redacted (no content).
fn def(s: &mut Scan) -> Q<Defined> {
    let (mut id, mut kind, mut role, mut author, mut size, mut digest, mut reference) =
        (None, None, None, None, None, None, None);
    let (mut calls, mut results) = (None, None);
    let mut seen = Seen::default();
    s.object(|s, key| {
        match key {
            "id" => {
                seen.first(0)?;
                id = Some(s.str()?);
            }
            "kind" => {
                seen.first(1)?;
                kind = Some(KindInput(EntryKind::from_name(s.str()?)?));
            }
            "role" => {
                seen.first(2)?;
                role = opt_str(s)?;
            }
            "author" => {
                seen.first(3)?;
                author = opt_str(s)?;
            }
            "size" => {
                seen.first(4)?;
                size = if s.null() { None } else { Some(s.i32()?) };
            }
            "digest" => {
                seen.first(5)?;
                digest = opt_str(s)?;
            }
            "reference" => {
                seen.first(6)?;
                reference = opt_str(s)?;
            }
            "calls" => {
                seen.first(7)?;
                calls = if s.null() {
                    None
                } else {
                    Some(s.array(tool_call)?)
                };
            }
            "results" => {
                seen.first(8)?;
                results = if s.null() {
                    None
                } else {
                    Some(s.array(tool_result)?)
                };
            }
            _ => return None,
        }
        Some(())
    })?;
    let tools = (calls, results);
    Some(flat(
        id?, kind?, role, author, size, digest, reference, tools,
    ))
}

/// A table reference: an index, a range `[first, last]` or an id.
fn ref_item(s: &mut Scan) -> Q<RefItem> {
    match s.peek()? {
        b'[' => {
            let r = s.array(Scan::index)?;
            match r[..] {
                [a, b] if a <= b => Some(RefItem::Range([a, b])),
                _ => None,
            }
        }
        b'"' => s.str().map(|id| RefItem::Id(id.to_owned())),
        _ => s.index().map(RefItem::Index),
    }
}

fn snapshot(s: &mut Scan) -> Q<TraceSnapshot> {
    let (mut version, mut refs) = (None, None);
    let mut seen = Seen::default();
    s.object(|s, key| {
        match key {
            "version" => {
                seen.first(0)?;
                version = Some(s.int()?);
            }
            "refs" => {
                seen.first(1)?;
                refs = if s.null() {
                    None
                } else {
                    Some(s.array(ref_item)?)
                };
            }
            _ => return None,
        }
        Some(())
    })?;
    Some(TraceSnapshot {
        version: version?,
        entries: None,
        refs,
    })
}

fn proposal_item(s: &mut Scan) -> Q<TraceProposalItem> {
    match s.peek()? {
        b'"' => s.str().map(|id| TraceProposalItem::Keep(id.to_owned())),
        b'{' => {
            let mut new = None;
            s.object(|s, key| {
                (key == "new" && new.is_none()).then_some(())?;
                new = Some(s.index()?);
                Some(())
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
    s.object(|s, key| {
        out.is_none().then_some(())?;
        out = Some(match key {
            "propose" => ReducerAnswer::Propose(s.array(proposal_item)?),
            "error" => ReducerAnswer::Error(s.str()?.to_owned()),
            _ => return None,
        });
        Some(())
    })?;
    out
}

fn step(s: &mut Scan) -> Q<ReducerStep> {
    let (mut attempt, mut request_ids, mut request, mut ans) = (None, None, None, None);
    let mut seen = Seen::default();
    s.object(|s, key| {
        match key {
            "attempt" => {
                seen.first(0)?;
                attempt = Some(s.i32()?);
            }
            "requestIds" => {
                seen.first(1)?;
                request_ids = Some(s.array(|s| s.str().map(str::to_owned))?);
            }
            "request" => {
                seen.first(2)?;
                request = if s.null() {
                    None
                } else {
                    Some(s.array(ref_item)?)
                };
            }
            "answer" => {
                seen.first(3)?;
                ans = Some(answer(s)?);
            }
            _ => return None,
        }
        Some(())
    })?;
    Some(ReducerStep {
        attempt: attempt?,
        request_ids: request_ids.unwrap_or_default(),
        request,
        answer: ans?,
    })
}

/// Parses one record line as [`format::parse_record`] does (the same record, or the same
/// refusal), a call record as writers write it by this reader.
pub fn parse_record(line: &str) -> Result<Record, ReadError> {
    match call_record(line) {
        Some(rec) => Ok(Record::Call(Box::new(rec))),
        None => format::parse_record(line),
    }
}

/// A name of the vocabulary, by its stable name.
fn name<T: Named>(s: &mut Scan) -> Q<Name<T>> {
    T::from_name(s.str()?).map(Name)
}

/// `null` or a list of table references.
fn opt_refs(s: &mut Scan) -> Q<Option<Vec<RefItem>>> {
    if s.null() {
        return Some(None);
    }
    s.array(ref_item).map(Some)
}

/// A `resultRefs` object (its final verification, when there is one, read strictly).
fn result_refs(s: &mut Scan) -> Q<TraceResult> {
    let (mut outcome, mut finals, mut original, mut final_size, mut limit, mut attempts) =
        (None, None, None, None, None, None);
    let (mut stages, mut required, mut latest, mut verification) = (None, None, None, None);
    let mut seen = Seen::default();
    s.object(|s, key| {
        match key {
            "outcome" => {
                seen.first(0)?;
                outcome = Some(name(s)?);
            }
            "finalEntryIds" => {
                seen.first(1)?;
                finals = Some(opt_refs(s)?);
            }
            "originalEstimatedSize" => {
                seen.first(2)?;
                original = Some(s.i32()?);
            }
            "finalEstimatedSize" => {
                seen.first(3)?;
                final_size = Some(s.i32()?);
            }
            "hardLimit" => {
                seen.first(4)?;
                limit = Some(s.i32()?);
            }
            "attemptCount" => {
                seen.first(5)?;
                attempts = Some(s.i32()?);
            }
            "stages" => {
                seen.first(6)?;
                stages = Some(s.array(name)?);
            }
            "requiredEntryIds" => {
                seen.first(7)?;
                required = Some(s.array(ref_item)?);
            }
            "latestSnapshotVersion" => {
                seen.first(8)?;
                latest = Some(s.int()?);
            }
            "finalVerification" => {
                seen.first(9)?;
                verification = if s.null() {
                    Some(None)
                } else {
                    Some(strictly(s, 2)?)
                };
            }
            _ => return None,
        }
        Some(())
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

/// A diagnostics record at nesting `depth` (its contributions read strictly).
fn diagnostics(s: &mut Scan, depth: usize) -> Q<DiagnosticsOutput> {
    let (mut outcome, mut unit, mut original, mut final_size, mut threshold, mut limit) =
        (None, None, None, None, None, None);
    let (mut attempts, mut stages, mut contributions, mut valid) = (None, None, None, None);
    let mut seen = Seen::default();
    s.object(|s, key| {
        match key {
            "outcome" => {
                seen.first(0)?;
                outcome = Some(name(s)?);
            }
            "measurementUnit" => {
                seen.first(1)?;
                unit = Some(name(s)?);
            }
            "originalSize" => {
                seen.first(2)?;
                original = Some(s.i32()?);
            }
            "finalSize" => {
                seen.first(3)?;
                final_size = Some(s.i32()?);
            }
            "triggerThreshold" => {
                seen.first(4)?;
                threshold = Some(s.i32()?);
            }
            "hardLimit" => {
                seen.first(5)?;
                limit = Some(s.i32()?);
            }
            "attemptCount" => {
                seen.first(6)?;
                attempts = Some(s.i32()?);
            }
            "stages" => {
                seen.first(7)?;
                stages = Some(s.array(name)?);
            }
            "categoryContributions" => {
                seen.first(8)?;
                contributions = Some(s.array(|s| strictly(s, depth + 2))?);
            }
            "finalSequenceValid" => {
                seen.first(9)?;
                valid = Some(s.opt_bool()?);
            }
            _ => return None,
        }
        Some(())
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

/// `null` or a diagnostics record.
fn opt_diagnostics(s: &mut Scan, depth: usize) -> Q<Option<DiagnosticsOutput>> {
    if s.null() {
        return Some(None);
    }
    diagnostics(s, depth).map(Some)
}

/// One progress event.
fn event(s: &mut Scan) -> Q<TraceEvent> {
    let (mut kind, mut id, mut sequence, mut unit) = (None, None, None, None);
    let (mut limit, mut threshold, mut diagnostics) = (None, None, None);
    let mut seen = Seen::default();
    s.object(|s, key| {
        match key {
            "kind" => {
                seen.first(0)?;
                kind = Some(match s.str()? {
                    "Started" => EventKind::Started,
                    "Completed" => EventKind::Completed,
                    "Terminated" => EventKind::Terminated,
                    "Composed" => EventKind::Composed,
                    _ => return None,
                });
            }
            "assemblyId" => {
                seen.first(1)?;
                id = Some(s.str()?.to_owned());
            }
            "sequence" => {
                seen.first(2)?;
                sequence = Some(s.uint()?);
            }
            "measurementUnit" => {
                seen.first(3)?;
                unit = opt_str(s)?.map(str::to_owned);
            }
            "hardLimit" => {
                seen.first(4)?;
                limit = if s.null() { None } else { Some(s.i32()?) };
            }
            "triggerThreshold" => {
                seen.first(5)?;
                threshold = if s.null() { None } else { Some(s.i32()?) };
            }
            "diagnostics" => {
                seen.first(6)?;
                diagnostics = opt_diagnostics(s, 3)?;
            }
            _ => return None,
        }
        Some(())
    })?;
    Some(TraceEvent {
        kind: kind?,
        assembly_id: id?,
        sequence: sequence?,
        measurement_unit: unit,
        hard_limit: limit,
        trigger_threshold: threshold,
        diagnostics,
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
    let text = s.raw(1)?;
    POLICY.with_borrow_mut(|last| match last {
        Some((t, p)) if t == text => Some(p.clone()),
        _ => {
            let p: PolicyInput = strict::read(text).ok()?;
            *last = Some((text.to_owned(), p.clone()));
            Some(p)
        }
    })
}

/// The call record on `line`, when this reader reads it (else the strict reader does).
pub fn call_record(line: &str) -> Option<CallRecord> {
    let mut s = Scan { text: line, at: 0 };
    s.eat(b'{')?;
    (s.str()? == "type").then_some(())?;
    s.eat(b':')?;
    (s.str()? == "call").then_some(())?;
    let (mut run, mut call, mut policy) = (None, None, None);
    let mut rec = Members::default();
    let mut seen = Seen::default();
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
        let bit = MEMBERS.iter().position(|m| *m == key)?;
        seen.first(u32::try_from(bit).ok()?)?;
        let s = &mut s;
        match key {
            "run" => run = Some(s.str()?.to_owned()),
            "call" => call = Some(s.str()?.to_owned()),
            "admitted" => rec.admitted = if s.null() { None } else { Some(s.uint()?) },
            "policy" => policy = Some(self::policy(s)?),
            "defs" => {
                rec.defs = if s.null() {
                    None
                } else {
                    Some(Defs(s.array(def)?))
                }
            }
            "snapshots" => rec.snapshots = s.array(snapshot)?,
            "reducer" => rec.reducer = s.array(step)?,
            "cancel" => rec.cancel = opt_str(s)?.map(str::to_owned),
            "result" => rec.result = strictly(s, 1)?,
            "resultRefs" => {
                rec.result_refs = if s.null() {
                    None
                } else {
                    Some(result_refs(s)?)
                }
            }
            "diagnostics" => rec.diagnostics = opt_diagnostics(s, 1)?,
            "error" => rec.error = strictly(s, 1)?,
            "events" => {
                rec.events = if s.null() {
                    None
                } else {
                    Some(s.array(event)?)
                }
            }
            "lease" => rec.lease = strictly(s, 1)?,
            _ => rec.streamed = strictly(s, 1)?,
        }
    }
    if s.peek().is_some() {
        return None;
    }
    Some(CallRecord {
        record_type: None,
        run: run?,
        call: call?,
        admitted: rec.admitted,
        policy: policy?,
        defs: rec.defs,
        snapshots: rec.snapshots,
        reducer: rec.reducer,
        cancel: rec.cancel,
        result: rec.result,
        result_refs: rec.result_refs,
        diagnostics: rec.diagnostics,
        error: rec.error,
        events: rec.events,
        lease: rec.lease,
        streamed: rec.streamed,
    })
}

/// The members of a call record after its `type`, as the strict reader names them.
const MEMBERS: [&str; 15] = [
    "run",
    "call",
    "admitted",
    "policy",
    "defs",
    "snapshots",
    "reducer",
    "cancel",
    "result",
    "resultRefs",
    "diagnostics",
    "error",
    "events",
    "lease",
    "streamed",
];

/// The optional members of a call record, as read so far.
#[derive(Default)]
struct Members {
    admitted: Option<u64>,
    defs: Option<Defs>,
    snapshots: Vec<TraceSnapshot>,
    reducer: Vec<ReducerStep>,
    cancel: Option<String>,
    result: Option<AssemblyOutput>,
    result_refs: Option<TraceResult>,
    diagnostics: Option<DiagnosticsOutput>,
    error: Option<TraceError>,
    events: Option<Vec<TraceEvent>>,
    lease: Option<TraceLease>,
    streamed: Option<StreamEnd>,
}
