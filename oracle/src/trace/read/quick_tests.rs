//! The quick call-record reader ([`super`]) against the strict reader: on every line it
//! reads, the record the strict reader reads; on every line the strict reader refuses, nothing
//! (so the strict reader's refusal is the one given). Over the lines the node's recorder
//! writes (compact and self-contained, redacted and with content) and over mutations of them
//! (bytes deleted, inserted and replaced with JSON's significant characters, members repeated,
//! moved and renamed, strings escaped, numbers out of range).

#[path = "../../../tests/support/trace.rs"]
mod trace_support;

use super::call_record;
use hybrid_compaction_trace::format::{parse_record as parse_record_strictly, Record};

/// The record lines of generated runs and of the bench traces.
fn lines() -> Vec<String> {
    let mut texts = Vec::new();
    for seed in 0..40 {
        texts.push(trace_support::run_trace(seed, seed % 2 == 0));
    }
    texts.push(trace_support::bench_trace(3, 100, Some(20), true).0);
    texts.push(trace_support::bench_trace(6, 100, Some(6), true).0);
    texts.push(trace_support::bench_trace(3, 30, None, false).0);
    texts
        .iter()
        .flat_map(|t| t.lines().skip(1).map(str::to_owned))
        .collect()
}

/// The soundness property: a line the quick reader reads is read so by the strict reader.
fn agrees(line: &str) -> bool {
    let Some(quick) = call_record(line) else {
        return false;
    };
    match parse_record_strictly(line) {
        Ok(Record::Call(strict)) => {
            assert_eq!(*strict, quick, "{line}");
            true
        }
        other => {
            panic!("the quick reader read a line the strict reader reads as {other:?}:\n{line}")
        }
    }
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }
}

/// Every call line the recorder writes in the compact profile is read quickly, and each line
/// read so is the strict reader's record.
#[test]
fn recorded_lines_read_quickly_as_strictly() {
    let lines = lines();
    let (mut quick, mut calls) = (0, 0);
    for line in &lines {
        calls += usize::from(line.starts_with("{\"type\":\"call\""));
        quick += usize::from(agrees(line));
    }
    // The bench traces' call lines (redacted, compact) are all read quickly.
    let bench = trace_support::bench_trace(3, 100, Some(20), true).0;
    for line in bench
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("{\"type\":\"call\""))
    {
        assert!(call_record(line).is_some(), "{line}");
    }
    // So are the compact call lines of traces with content (entries with content read by the
    // strict reader, one by one).
    let mut content = 0;
    for seed in 0..40 {
        let text = trace_support::run_trace(seed, true);
        for line in text
            .lines()
            .skip(1)
            .filter(|l| l.starts_with("{\"type\":\"call\""))
        {
            assert!(call_record(line).is_some(), "{line}");
            content += usize::from(line.contains("\"text\":") || line.contains("\"parts\":"));
        }
    }
    assert!(content > 40, "{content} call lines with content");
    // Self-contained lines (snapshots with `entries`) are left to the strict reader.
    assert!(
        quick > calls / 3,
        "{quick} of {calls} call lines read quickly"
    );
    assert!(quick < calls, "{quick} of {calls} call lines read quickly");
}

/// The bytes a random mutation inserts or writes: JSON's significant characters, digits,
/// letters of its literals, whitespace.
const BYTES: &[u8] = b"\"\\,:{}[]0159-.eE nlu\t";
/// Edits of a recorded line (the first occurrence of the left text replaced by the right):
/// members repeated, moved, renamed and retyped, numbers out of range, escapes, whitespace.
const EDITS: &[(&str, &str)] = &[
    ("{\"type\":\"call\",", "{\"type\":\"call\",\"run\":\"x\","),
    ("{\"type\":\"call\",", "{\"type\":\"call\",\"extra\":1,"),
    ("{\"type\":\"call\",", "{\"type\": \"call\" , "),
    ("{\"type\":\"call\",", "{\"type\":\"observed\","),
    ("{\"type\":\"call\",", "{"),
    ("\"kind\":", "\"kind\":\"SystemInstruction\",\"kind\":"),
    ("\"size\":", "\"size\":7,\"size\":"),
    ("\"size\":28", "\"size\":2147483648"),
    ("\"size\":28", "\"size\":-28"),
    ("\"size\":28", "\"size\":28.0"),
    ("\"size\":28", "\"size\":028"),
    ("\"size\":28", "\"size\":null"),
    ("\"role\":\"user\"", "\"role\":\"us\\u0065r\""),
    ("\"role\":\"user\"", "\"role\":null"),
    (
        "\"role\":\"user\"",
        "\"author\":\"\u{e9}\",\"role\":\"user\"",
    ),
    ("\"digest\":", "\"text\":\"x\",\"digest\":"),
    (
        "\"role\":\"user\"",
        "\"role\":\"user\",\"author\":\"\u{e9}\"",
    ),
    ("\"size\":", "\"size\":7,\"size\":"),
    ("\"digest\":\"", "\"digest\":null,\"x\":\""),
    ("\"version\":0", "\"version\":-0"),
    ("\"version\":0", "\"version\":9223372036854775808"),
    ("\"refs\":[[", "\"refs\":[[5,1],["),
    ("\"refs\":[[", "\"refs\":[[1,2,3],["),
    ("\"refs\":[[", "\"refs\":[4294967296,["),
    ("\"refs\":[[", "\"refs\":[\"an-id\",["),
    ("\"propose\":[", "\"propose\":[{\"new\":3},\"k\","),
    ("\"propose\":[", "\"propose\":[{\"new\":3,\"new\":4},"),
    ("\"answer\":{", "\"answer\":\"nothing\",\"x\":{"),
    ("\"attempt\":1", "\"attempt\":1,\"requestIds\":null"),
    ("\"policy\":{", "\"policy\":{\"hardLimit\":1,"),
    (
        "\"events\":[",
        "\"events\":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]],",
    ),
    ("\"lease\":", "\"lease\":null,\"lease\":"),
    ("\"forwarded\":[]", "\"forwarded\":null"),
    ("\"forwarded\":[]", "\"forwarded\":{}"),
    ("\"forwarded\":[", "\"forwarded\":[5,"),
    ("\"forwarded\":[", "\"forwarded\":[\"d\",\"d\","),
    (",\"forwarded\":[", ",\"x\":["),
    ("\"settled\":\"", "\"settled\":\"Released\",\"x\":\""),
    ("\"settled\":\"released\"", "\"settled\":\"none\""),
    ("\"settled\":\"released\"", "\"settled\":\"committed\",\"settled\":\"released\""),
    ("\"phase\":\"", "\"phase\":\"Terminated\",\"x\":\""),
    ("\"phase\":\"terminated\"", "\"phase\":\"provider\""),
    ("\"phase\":\"terminated\"", "\"phase\":\"terminated\",\"phase\":\"gate\""),
    ("\"error\":{\"kind\":", "\"error\":{\"kind\":7,\"x\":"),
    ("\"error\":{\"kind\":", "\"error\":{\"note\":\"n\",\"kind\":"),
    ("\"error\":{", "\"error\":null,\"x\":{"),
    ("\"phase\":\"terminated\"}", "\"phase\":\"terminated\",\"kind\":\"Cancelled\"}"),
    ("\"phase\":\"terminated\"}", "\"phase\":null}"),
    ("\"defs\":[", "\"defs\":null,\"x\":["),
    ("\"outcome\":\"Irreducible\"", "\"outcome\":\"Nope\""),
    ("\"stages\":[", "\"stages\":[\"Bogus\","),
    ("\"stages\":[", "\"stages\":null,\"x\":["),
    ("\"attemptCount\":", "\"attemptCount\":1,\"attemptCount\":"),
    ("\"latestSnapshotVersion\":", "\"latestSnapshotVersion\":1.5,\"x\":"),
    ("\"requiredEntryIds\":[", "\"requiredEntryIds\":[[3,3],"),
    ("\"finalEntryIds\":null", "\"finalEntryIds\":[1,[2,4]]"),
    ("\"finalVerification\":null", "\"finalVerification\":{\"outcome\":\"Accepted\",\"rejectionReasons\":[],\"missingRequiredEntryIds\":[],\"invalidEntryIds\":[],\"preservationOnlyFallbackEntryIds\":[]}"),
    ("\"resultRefs\":{", "\"resultRefs\":null,\"x\":{"),
    ("\"policy\":{", "\"policy\": {"),
    ("}},\"defs\":", "}}x,\"defs\":"),
    ("}},\"defs\":", "}} ,\"defs\":"),
    ("}},\"defs\":", "}}}],\"defs\":"),
    ("\"preservationVersion\":1", "\"preservationVersion\":2"),
    ("\"hardLimit\":", "\"hardLimit\":-1,\"x\":"),
    ("\"kind\":\"Started\"", "\"kind\":\"Begun\""),
    ("\"kind\":\"Started\"", "\"kind\":\"Composed\""),
    ("\"sequence\":", "\"sequence\":1,\"sequence\":"),
    ("\"sequence\":", "\"sequence\":-1,\"x\":"),
    ("\"assemblyId\":", "\"assemblyId\":5,\"x\":"),
    ("\"triggerThreshold\":", "\"triggerThreshold\":null,\"x\":"),
    ("\"finalSequenceValid\":null", "\"finalSequenceValid\":true"),
    ("\"finalSequenceValid\":null", "\"finalSequenceValid\":1"),
    ("\"finalSequenceValid\":null", "\"finalSequenceValid\":nul"),
    ("\"finalSequenceValid\":null", "\"finalSequenceValid\":falsey"),
    ("\"categoryContributions\":[]", "\"categoryContributions\":[{\"category\":\"Nope\",\"size\":1,\"entryCount\":1}]"),
    ("\"measurementUnit\":\"HostDefinedUnits\"", "\"measurementUnit\":\"Bytes\""),
    ("\"diagnostics\":{", "\"diagnostics\":null,\"x\":{"),
    ("\"events\":[", "\"events\":null,\"x\":["),
    ("{\"callId\":", "{ \"callId\":"),
    ("{\"callId\":", "{\"name\":\"n\",\"callId\":"),
    ("{\"callId\":\"", "{\"callId\":\"\\u0063"),
    ("\"name\":\"", "\"name\":null,\"x\":\""),
];

/// Mutations of recorded lines: what the quick reader reads is what the strict reader reads,
/// and nothing the strict reader refuses is read.
#[test]
fn mutated_lines_are_read_as_strictly_or_left_to_it() {
    let lines: Vec<String> = lines()
        .into_iter()
        .filter(|l| l.starts_with("{\"type\":\"call\""))
        .collect();
    // Nesting around the parser's limit inside a member handed to the strict reader.
    let deep = |n: usize| format!("\"events\":[{}{}],", "[".repeat(n), "]".repeat(n));
    let deep_edits: Vec<(&str, String)> = [120, 126, 127, 130]
        .into_iter()
        .map(|n| {
            (
                "\"events\":[",
                deep(n).trim_end_matches("],").to_owned() + ",",
            )
        })
        .collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut read, mut left) = (0, 0);
    let mut check = |m: &str| {
        if agrees(m) {
            read += 1;
        } else {
            left += 1;
        }
    };
    for line in &lines {
        for (from, to) in EDITS
            .iter()
            .map(|(f, t)| (*f, (*t).to_owned()))
            .chain(deep_edits.clone())
        {
            if line.contains(from) {
                check(&line.replacen(from, &to, 1));
            }
        }
        for _ in 0..40 {
            let mut b = line.clone().into_bytes();
            let at = rng.below(b.len());
            let c = BYTES[rng.below(BYTES.len())];
            match rng.below(3) {
                0 => {
                    b.remove(at);
                }
                1 => b.insert(at, c),
                _ => b[at] = c,
            }
            if let Ok(m) = String::from_utf8(b) {
                check(&m);
            }
        }
    }
    assert!(read > 1000 && left > 1000, "{read} read, {left} left");
}

/// A call part written with its members in another order, or with whitespace, is read member
/// by member (not left to the strict reader), as the strict reader reads it.
#[test]
fn tool_parts_written_otherwise_are_read_quickly_as_strictly() {
    let mut reordered = 0;
    // The lines read quickly as written (self-contained ones are left to the strict reader).
    for line in lines().into_iter().filter(|l| call_record(l).is_some()) {
        let Some(at) = line.find("{\"callId\":\"") else {
            continue;
        };
        let end = at + line[at..].find('}').unwrap() + 1;
        let object = &line[at..end];
        let Some((call_id, name)) = object
            .strip_prefix("{\"callId\":")
            .and_then(|o| o.strip_suffix('}'))
            .and_then(|o| o.split_once(",\"name\":"))
        else {
            continue;
        };
        for written in [
            format!("{{\"name\":{name},\"callId\":{call_id}}}"),
            format!("{{ \"callId\" : {call_id} , \"name\" : {name} }}"),
        ] {
            let other = format!("{}{written}{}", &line[..at], &line[end..]);
            assert!(agrees(&other), "left to the strict reader: {other}");
            reordered += 1;
        }
    }
    assert!(
        reordered > 100,
        "{reordered} lines with a call part written otherwise"
    );
}
