//! What `hybrid-compaction check` reads (`docs/TRACE.md`, "Lines" and "Output and exit codes"):
//! every line by the wire's strict reader, so a malformed record is refused naming its line, the
//! column, the JSON path of the value and what was expected in the format's words (never a
//! Rust type name), a repeated key anywhere included (a tool call's `arguments`, a table
//! estimator's `sizes`); a line longer than `--max-line-bytes` is refused without being read
//! whole; counterexample files never share a name; the report counts the runs call records
//! name.

use std::io::{BufReader, Read, Write};
use std::process::{Command, Stdio};

use hybrid_compaction_oracle::trace::{self, Options, Report, Unreadable};
use hybrid_compaction_oracle::Model;
use serde_json::{json, Value as Json};

const BIN: &str = env!("CARGO_BIN_EXE_hybrid-compaction");

fn example_lines() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/trace-example.jsonl");
    std::fs::read_to_string(path)
        .expect("docs/trace-example.jsonl")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The example's first call record (run `r1`, call `c1`: content entries, a reducer step, a
/// result, diagnostics, events, a lease), which checks clean.
fn call() -> Json {
    serde_json::from_str(&example_lines()[1]).expect("a call record")
}

fn bin(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary spawns");
    let _ = child.stdin.take().expect("stdin").write_all(stdin);
    let o = child.wait_with_output().expect("binary runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn check(text: &[u8], opts: &Options) -> Result<Report, Unreadable> {
    trace::check(text, &Model, opts)
}

fn quiet() -> Options {
    Options {
        counterexamples: false,
        ..Options::default()
    }
}

/// Words of serde's and Rust's vocabulary that must never reach a user.
fn rust_words(message: &str) -> Vec<String> {
    let mut found: Vec<String> = message
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            [
                "enum",
                "struct",
                "variant",
                "serde",
                "untagged",
                "tagged",
                "identifier",
                "u8",
                "u16",
                "u32",
                "u64",
                "i8",
                "i16",
                "i32",
                "i64",
                "usize",
                "f64",
                "map",
                "sequence",
            ]
            .contains(&w.to_ascii_lowercase().as_str())
        })
        .map(str::to_owned)
        .collect();
    if message.contains("::") {
        found.push("::".to_owned());
    }
    found
}

/// `v` with the value at `pointer` (a JSON pointer) set to `to`; a member the object lacks is
/// added.
fn with(mut v: Json, pointer: &str, to: Json) -> Json {
    if let Some(slot) = v.pointer_mut(pointer) {
        *slot = to;
        return v;
    }
    let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
    v.pointer_mut(parent)
        .and_then(Json::as_object_mut)
        .unwrap_or_else(|| panic!("{parent} is an object of the record"))
        .insert(key.to_owned(), to);
    v
}

fn without(mut v: Json, member: &str) -> Json {
    v.as_object_mut().expect("an object").remove(member);
    v
}

/// The record's text with the key `"zz"` renamed `"k"`: a repeated key (JSON values cannot hold
/// one).
fn repeat_key(v: &Json, k: &str) -> String {
    v.to_string().replace("\"zz\"", &format!("\"{k}\""))
}

/// A tool-call entry whose arguments are `args` (the record's first snapshot holds it).
fn with_call_arguments(args: Json) -> Json {
    with(
        call(),
        "/snapshots/0/entries/0",
        json!({"id": "t", "kind": "ToolExchange",
               "parts": [{"call": {"callId": "c", "name": "f", "arguments": args}}]}),
    )
}

/// A policy with a table estimator of these `sizes`.
fn with_table_sizes(sizes: Json) -> Json {
    with(
        call(),
        "/policy/estimator",
        json!({"kind": "table", "sizes": sizes, "default": 1}),
    )
}

/// One malformed record: its text, the JSON path of the refusal, and key words.
struct Bad {
    what: &'static str,
    text: String,
    path: &'static str,
    words: &'static str,
}

fn bad(
    what: &'static str,
    record: impl Into<Record>,
    path: &'static str,
    words: &'static str,
) -> Bad {
    Bad {
        what,
        text: record.into().0,
        path,
        words,
    }
}

/// A record line: a JSON value, or raw text.
struct Record(String);

/// A record written as writers write it: `type` first (the reader streams the rest), the other
/// members after it.
impl From<Json> for Record {
    fn from(mut v: Json) -> Record {
        let Some(t) = v.as_object_mut().and_then(|o| o.remove("type")) else {
            return Record(v.to_string());
        };
        let rest = v.to_string();
        let rest = rest.strip_prefix('{').expect("an object");
        let sep = if rest == "}" { "" } else { "," };
        Record(format!("{{\"type\":{t}{sep}{rest}"))
    }
}

impl From<String> for Record {
    fn from(t: String) -> Record {
        Record(t)
    }
}

impl From<&str> for Record {
    fn from(t: &str) -> Record {
        Record(t.to_owned())
    }
}

#[allow(clippy::too_many_lines, reason = "the table")]
fn table() -> Vec<Bad> {
    let c = call;
    let truncated = {
        let t = c().to_string();
        t[..t.find("\"the latest").expect("the text") + 8].to_owned()
    };
    vec![
        // ---- the record object
        bad("not JSON", "hello", "$: invalid JSON", "expected value"),
        bad("truncated in a string", truncated, "$.snapshots[0].entries[2].text: invalid JSON", "EOF while parsing a string"),
        bad("a bare array", "[1]", "$", "expected an object with `type`, got an array"),
        bad("no type", without(c(), "type"), "$", "missing member `type` (the record type: one of call, observed, runEnd)"),
        bad("unknown type", with(c(), "/type", json!("cal")), "$.type", "unknown record type \"cal\", expected one of `call`, `observed`, `runEnd`"),
        bad("type a number", with(c(), "/type", json!(1)), "$.type", "expected a string, got the number 1"),
        bad("type last, a bad member before it", r#"{"run":"r","call":"c","policy":5,"type":"call"}"#, "$.policy", "expected an object, got the number 5"),
        bad("duplicate type", example_lines()[1].replacen("{\"type\":\"call\",", "{\"type\":\"call\",\"type\":\"call\",", 1), "$.type", "duplicate key \"type\": an object may name each member once"),
        bad("type last, a duplicate inside", c().to_string().replacen("\"hardLimit\":100,", "\"hardLimit\":100,\"hardLimit\":100,", 1), "$.diagnostics.hardLimit", "duplicate key \"hardLimit\""),
        bad("run a number", with(c(), "/run", json!(5)), "$.run", "expected a string, got the number 5"),
        bad("duplicate run", example_lines()[1].replacen("\"run\":\"r1\",", "\"run\":\"r1\",\"run\":\"r2\",", 1), "$.run", "duplicate key \"run\""),
        bad("no call", without(c(), "call"), "$", "missing member `call`"),
        bad("unknown member", with(c(), "/extra", json!(1)), "$.extra", "unknown member `extra`, expected one of `type`, `run`, `call`, `admitted`, `policy`"),
        // ---- the policy
        bad("hard limit a string", with(c(), "/policy/hardLimit", json!("100")), "$.policy.hardLimit", "expected a signed 32-bit integer (-2147483648 to 2147483647), got the string \"100\""),
        bad("hard limit 2^31", with(c(), "/policy/hardLimit", json!(2_147_483_648u64)), "$.policy.hardLimit", "got the number 2147483648"),
        bad("unknown estimator kind", with(c(), "/policy/estimator/kind", json!("words")), "$.policy.estimator.kind", "unknown estimator kind \"words\""),
        bad("recorded unit unknown", with(c(), "/policy/estimator", json!({"kind": "recorded", "unit": "Words"})), "$.policy.estimator.unit", "unknown MeasurementUnit \"Words\""),
        bad("duplicate key in a table's sizes", repeat_key(&with_table_sizes(json!({"s": 1, "zz": 2})), "s"), "$.policy.estimator.sizes.s", "duplicate key \"s\""),
        bad("a table size a string", with_table_sizes(json!({"s": "1"})), "$.policy.estimator.sizes.s", "expected a signed 32-bit integer"),
        // ---- snapshots and entries
        bad("snapshots an object", with(c(), "/snapshots", json!({})), "$.snapshots", "expected an array, got an object"),
        bad("version a string", with(c(), "/snapshots/0/version", json!("0")), "$.snapshots[0].version", "expected a signed 64-bit integer"),
        bad("unknown entry kind", with(c(), "/snapshots/0/entries/0/kind", json!("Chat")), "$.snapshots[0].entries[0].kind", "unknown entry kind \"Chat\""),
        bad("unknown part", with(c(), "/snapshots/0/entries/1/parts", json!([{"image": "x"}])), "$.snapshots[0].entries[1].parts[0]", "unknown message part `image`, expected one of `text`, `call`, `result`, `unsupported`"),
        bad("entry size a fraction", with(c(), "/snapshots/0/entries/2/size", json!(1.5)), "$.snapshots[0].entries[2].size", "got the number 1.5"),
        bad("duplicate key in call arguments", repeat_key(&with_call_arguments(json!({"q": 1, "zz": 2})), "q"), "$.snapshots[0].entries[0].parts[0].call.arguments.q", "duplicate key \"q\""),
        bad("duplicate key deep in call arguments", repeat_key(&with_call_arguments(json!({"q": {"map": {"a": 1, "zz": 2}}})), "a"), "$.snapshots[0].entries[0].parts[0].call.arguments.q.map.a", "duplicate key \"a\""),
        bad("redacted call id a number", with(c(), "/snapshots/0/entries/0", json!({"id": "t", "kind": "ToolExchange", "digest": "d", "calls": [{"callId": 1, "name": "f"}]})), "$.snapshots[0].entries[0].calls[0].callId", "expected a string, got the number 1"),
        // ---- reducer steps
        bad("attempt a fraction", with(c(), "/reducer/0/attempt", json!(1.5)), "$.reducer[0].attempt", "got the number 1.5"),
        bad("unknown answer", with(c(), "/reducer/0/answer", json!("maybe")), "$.reducer[0].answer", "unknown reducer answer `maybe`, expected one of `propose`, `nothing`, `error`"),
        bad("answer a number", with(c(), "/reducer/0/answer", json!(3)), "$.reducer[0].answer", "expected a reducer answer: `propose`, `nothing` or `error`"),
        bad("proposal item true", with(c(), "/reducer/0/answer", json!({"propose": [true]})), "$.reducer[0].answer.propose[0]", "expected a kept entry id, a table index, or {\"new\": entry or table index}, got true"),
        bad("proposal item with another member", with(c(), "/reducer/0/answer", json!({"propose": [{"keep": "s"}]})), "$.reducer[0].answer.propose[0].keep", "unknown member `keep`, expected `new`"),
        bad("new entry without kind", with(c(), "/reducer/0/answer", json!({"propose": [{"new": {"id": "n"}}]})), "$.reducer[0].answer.propose[0].new", "missing member `kind`"),
        bad("error answer a number", with(c(), "/reducer/0/answer", json!({"error": 5})), "$.reducer[0].answer.error", "expected a string, got the number 5"),
        bad("request ids an object", with(c(), "/reducer/0/requestIds", json!({})), "$.reducer[0].requestIds", "expected an array, got an object"),
        // ---- result, diagnostics, events, lease, error
        bad("unknown outcome", with(c(), "/result/outcome", json!("Great")), "$.result.outcome", "unknown Outcome \"Great\""),
        bad("final ids a string", with(c(), "/result/finalEntryIds", json!("s")), "$.result.finalEntryIds", "expected an array, got the string \"s\""),
        bad("result without stages", without(c()["result"].clone(), "stages").pipe(|r| with(c(), "/result", r)), "$.result", "missing member `stages`"),
        bad("unknown rejection reason", with(c(), "/result/finalVerification/rejectionReasons", json!(["Nope"])), "$.result.finalVerification.rejectionReasons[0]", "unknown RejectionReason \"Nope\""),
        bad("contribution size a string", with(c(), "/diagnostics/categoryContributions/0/size", json!("8")), "$.diagnostics.categoryContributions[0].size", "expected a signed 32-bit integer"),
        bad("unknown event kind", with(c(), "/events/0/kind", json!("Begun")), "$.events[0].kind", "unknown event kind `Begun`, expected one of `Started`, `Completed`, `Terminated`, `Composed`"),
        bad("sequence negative", with(c(), "/events/0/sequence", json!(-1)), "$.events[0].sequence", "expected an unsigned 64-bit integer (0 to 18446744073709551615), got the number -1"),
        bad("assembly id null", with(c(), "/events/1/assemblyId", Json::Null), "$.events[1].assemblyId", "expected a string, got null"),
        bad("unknown settlement", with(c(), "/lease/settled", json!("maybe")), "$.lease.settled", "unknown lease settlement `maybe`, expected one of `committed`, `released`, `none`"),
        bad("forwarded a string", with(c(), "/lease/forwarded", json!("d")), "$.lease.forwarded", "expected an array, got the string \"d\""),
        bad("unknown phase", with(c(), "/error", json!({"kind": "Cancelled", "phase": "later"})), "$.error.phase", "unknown phase `later`, expected one of `gate`, `prepare`"),
        bad("unknown stream ending", with(c(), "/streamed", json!("done")), "$.streamed", "unknown stream ending `done`, expected one of `completed`, `failed`, `abandoned`"),
        bad("cancel a number", with(c(), "/cancel", json!(3)), "$.cancel", "expected a string, got the number 3"),
        // ---- the compact profile
        bad("a reversed range", with(c(), "/snapshots/1", json!({"version": 0, "refs": [[5, 2]]})), "$.snapshots[1].refs[0]", "a range [first, last] needs first <= last, got [5, 2]"),
        bad("a range of three", with(c(), "/snapshots/1", json!({"version": 0, "refs": [[1, 2, 3]]})), "$.snapshots[1].refs[0]", "a range is [first, last], two table indices; got 3 element(s)"),
        bad("a negative index", with(c(), "/snapshots/1", json!({"version": 0, "refs": [-1]})), "$.snapshots[1].refs[0]", "expected a table index, a range [first, last] or an entry id, got the number -1"),
        bad("an index past 32 bits", with(c(), "/snapshots/1", json!({"version": 0, "refs": [4_294_967_296u64]})), "$.snapshots[1].refs[0]", "table index 4294967296 is too large (at most 4294967295)"),
        bad("a range bound a string", with(c(), "/snapshots/1", json!({"version": 0, "refs": [[0, "x"]]})), "$.snapshots[1].refs[0][1]", "expected an unsigned 32-bit integer (0 to 4294967295), got the string \"x\""),
        bad("an index past the table", with(c(), "/snapshots/1", json!({"version": 0, "refs": [99]})), "$.snapshots[1].refs", "table index 99 is not defined yet"),
        bad("a def of an unknown kind", with(c(), "/defs", json!([{"id": "d", "kind": "Note"}])), "$.defs[0].kind", "unknown entry kind \"Note\""),
        // ---- a run's end
        bad("run end with another member", r#"{"type":"runEnd","run":"r1","at":1}"#, "$.at", "unknown member `at`, expected `run`"),
        bad("run end without run", r#"{"type":"runEnd"}"#, "$", "missing member `run`"),
        bad("run end run a list", r#"{"type":"runEnd","run":["r1"]}"#, "$.run", "expected a string, got an array"),
    ]
}

/// `x.pipe(f)` is `f(x)` (keeps the table rows one expression each).
trait Pipe: Sized {
    fn pipe<T>(self, f: impl FnOnce(Self) -> T) -> T {
        f(self)
    }
}

impl<T> Pipe for T {}

/// A refusal without its place (`...: $.path: `): the words (a path may hold a member named
/// `map` or `sequence`).
fn words_of(message: &str) -> &str {
    message
        .find(": $")
        .map_or(message, |i| &message[i + 2..])
        .split_once(": ")
        .map_or(message, |(_, w)| w)
}

/// The trace of a malformed record: a version-2 header (version 1 records are version 2
/// records too), a blank line and a run end, then the record on line 4.
fn trace_with(record: &str) -> String {
    format!("{{\"trace\": 2}}\n\n{{\"type\":\"runEnd\",\"run\":\"other\"}}\n{record}\n")
}

/// Every malformed record is refused, by the library and the command, naming line 4, the JSON
/// path and what was expected, without a Rust word.
#[test]
fn every_refusal_names_the_line_and_the_path_in_the_format_words() {
    let rows = table();
    assert!(rows.len() >= 30, "only {} rows", rows.len());
    let mut problems = Vec::new();
    for row in &rows {
        let text = trace_with(&row.text);
        // The library.
        match check(text.as_bytes(), &quiet()) {
            Ok(_) => problems.push(format!("{}: accepted", row.what)),
            Err(e) => {
                let ok = e.line == 4
                    && e.message.starts_with(row.path)
                    && e.message.contains(row.words)
                    && rust_words(words_of(&e.message)).is_empty();
                if !ok {
                    problems.push(format!(
                        "{}: {e} (want line 4, {:?}, {:?})",
                        row.what, row.path, row.words
                    ));
                }
            }
        }
        // The command: exit 2, nothing on stdout, one line `NAME:LINE[:COLUMN]: PATH: WHAT`.
        let (code, out, err) = bin(&["check", "-"], text.as_bytes());
        let line = err.trim_end();
        let ok = code == 2
            && out.is_empty()
            && line.lines().count() == 1
            && line.starts_with("hybrid-compaction: error: <stdin>:4")
            && line.contains(&format!(": {}", row.path))
            && line.contains(row.words)
            && rust_words(words_of(line)).is_empty();
        if !ok {
            problems.push(format!(
                "{}: exit {code}, stdout {out:?}, stderr {line:?}",
                row.what
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The vocabulary check catches what it must.
    assert_eq!(
        rust_words("invalid type: map, expected u64"),
        ["map", "u64"]
    );
    assert_eq!(
        rust_words("internally tagged enum Record"),
        ["tagged", "enum"]
    );
}

/// The compact profile's own refusals (resolved against the run's table, after reading) name
/// the line and a path too.
#[test]
fn compact_refusals_name_the_line_and_the_path() {
    let refs = with(call(), "/snapshots/1", json!({"version": 0, "refs": [0]}));
    let e = check(format!("{{\"trace\": 1}}\n{refs}\n").as_bytes(), &quiet())
        .expect_err("a compact member under version 1");
    assert_eq!(e.line, 2);
    assert!(e.message.starts_with("$: `defs`, `refs`"), "{e}");
    let both = with(call(), "/resultRefs", call()["result"].clone());
    let e = check(trace_with(&both.to_string()).as_bytes(), &quiet()).expect_err("both");
    assert_eq!(e.line, 4);
    assert!(
        e.message
            .starts_with("$.resultRefs: a record has `result` or `resultRefs`, not both"),
        "{e}"
    );
}

/// The base record checks clean, so each row fails for its one change.
#[test]
fn the_base_record_is_readable() {
    let text = trace_with(&call().to_string());
    let r = check(text.as_bytes(), &quiet()).expect("readable");
    assert_eq!((r.calls, r.violations.len()), (1, 0), "{:?}", r.violations);
}

/// A repeated key inside a value map is refused (docs/WIRE.md: "also inside values"), and the
/// same record with distinct keys is read: a tool call's `arguments`, a table's `sizes`, a
/// provider transcript's message has no place in a trace, an `arguments` map nested in a value.
#[test]
fn duplicate_keys_inside_arguments_and_sizes_are_refused() {
    for (distinct, repeated, path) in [
        (
            with_call_arguments(json!({"q": 1, "zz": 2})),
            "q",
            "$.snapshots[0].entries[0].parts[0].call.arguments.q",
        ),
        (
            with_call_arguments(json!({"q": {"map": {"a": 1, "zz": 2}}})),
            "a",
            "$.snapshots[0].entries[0].parts[0].call.arguments.q.map.a",
        ),
        (
            with_table_sizes(json!({"s": 1, "zz": 2})),
            "s",
            "$.policy.estimator.sizes.s",
        ),
    ] {
        check(trace_with(&distinct.to_string()).as_bytes(), &quiet())
            .unwrap_or_else(|e| panic!("distinct keys are read: {e}"));
        let e = check(
            trace_with(&repeat_key(&distinct, repeated)).as_bytes(),
            &quiet(),
        )
        .expect_err("a repeated key is refused");
        assert_eq!(e.line, 4);
        assert!(
            e.message
                .starts_with(&format!("{path}: duplicate key \"{repeated}\"")),
            "{e}"
        );
        assert!(e.column.is_some(), "{e}");
    }
}

/// A repeated key is refused whatever its position in an object and however many members
/// came before it: the reader checks the first members of an object in place and spills the
/// rest into a hash set, so repeats are tried on both sides of that boundary (objects of 1 to
/// 40 members, each member repeated as the last one).
#[test]
fn a_repeated_key_is_refused_at_every_position_of_a_large_object() {
    for n in 1..=40 {
        let args: serde_json::Map<String, Json> = (0..n)
            .map(|i| (format!("k{i:02}"), json!(i)))
            .chain([("zz".to_owned(), json!(-1))])
            .collect();
        let distinct = with_call_arguments(Json::Object(args));
        check(trace_with(&distinct.to_string()).as_bytes(), &quiet())
            .unwrap_or_else(|e| panic!("{n} distinct keys are read: {e}"));
        for j in 0..n {
            let k = format!("k{j:02}");
            let e = check(trace_with(&repeat_key(&distinct, &k)).as_bytes(), &quiet())
                .expect_err("a repeated key is refused");
            let path = format!("$.snapshots[0].entries[0].parts[0].call.arguments.{k}");
            assert!(
                e.message
                    .starts_with(&format!("{path}: duplicate key \"{k}\"")),
                "{n} members, {k} repeated: {e}"
            );
        }
    }
}

/// The longest line of a trace, in bytes.
fn longest(text: &str) -> usize {
    text.lines().map(str::len).max().unwrap_or(0)
}

/// `--max-line-bytes`: a line of exactly the cap is read, one byte more is refused naming the
/// line and the cap; the line break (`\n` or `\r\n`) does not count.
#[test]
fn the_line_cap_admits_its_length_and_refuses_one_byte_more() {
    let lines = example_lines();
    let text = format!("{}\n", lines.join("\n"));
    let max = longest(&text);
    let at_line = text.lines().position(|l| l.len() == max).expect("a line") + 1;
    let crlf = text.replace('\n', "\r\n");
    for t in [&text, &crlf] {
        for cap in [max, max + 1, max + 1000] {
            let opts = Options {
                max_line_bytes: cap,
                ..quiet()
            };
            let r = check(t.as_bytes(), &opts).unwrap_or_else(|e| panic!("cap {cap}: {e}"));
            assert_eq!(r.calls, 4);
        }
        let opts = Options {
            max_line_bytes: max - 1,
            ..quiet()
        };
        let e = check(t.as_bytes(), &opts).expect_err("a line over the cap");
        assert_eq!(e.line, at_line, "{e}");
        assert!(
            e.message
                .contains(&format!("longer than {} bytes", max - 1))
                && e.message.contains("--max-line-bytes"),
            "{e}"
        );
    }
    // The command: the flag, the same refusal; the default reads the example.
    let (code, _, err) = bin(
        &["check", "--max-line-bytes", &(max - 1).to_string(), "-"],
        text.as_bytes(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.trim_end()
            .ends_with(&format!("<stdin>:{at_line}: the line is longer than {} bytes, the cap on a line (raise it with --max-line-bytes)", max - 1)),
        "{err}"
    );
    let (code, out, err) = bin(
        &["check", "--max-line-bytes", &max.to_string(), "-"],
        text.as_bytes(),
    );
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = bin(&["check", "-"], text.as_bytes());
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = bin(&["check", "--max-line-bytes", "ten", "-"], text.as_bytes());
    assert_eq!(code, 2, "{err}");
}

/// Counts the bytes read through it.
struct Counting<R> {
    inner: R,
    read: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// A line over the cap is refused after reading at most the cap and a buffer more, not the
/// whole line: here a line that never ends.
#[test]
fn a_line_over_the_cap_is_not_read_whole() {
    let cap = 1 << 20;
    let read = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let endless = std::io::Cursor::new(b"{\"trace\": 2}\n{\"type\":\"call\",\"run\":\"".to_vec())
        .chain(std::io::repeat(b'x'));
    let input = BufReader::new(Counting {
        inner: endless,
        read: std::sync::Arc::clone(&read),
    });
    let opts = Options {
        max_line_bytes: cap,
        ..quiet()
    };
    let e = trace::check(input, &Model, &opts).expect_err("refused");
    assert_eq!(e.line, 2, "{e}");
    let n = read.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        n <= cap + 2 * 8192 + 64,
        "{n} bytes read for a cap of {cap}"
    );
}

/// Bytes that are not UTF-8 are refused naming the line and the column of the first bad byte.
#[test]
fn a_line_that_is_not_utf8_names_its_column() {
    let mut text = b"{\"trace\": 2}\n{\"type\":\"runEnd\",\"run\":\"r\xff\"}\n".to_vec();
    let e = check(&text, &quiet()).expect_err("refused");
    assert_eq!((e.line, e.column), (2, Some(26)), "{e}");
    assert!(
        e.message.starts_with("$: invalid JSON: invalid UTF-8"),
        "{e}"
    );
    text.truncate(13);
    check(&text, &quiet()).expect("the header alone");
}

/// `--counterexamples DIR` writes one file per disagreeing call, and distinct (run, call) pairs
/// never share one: `a-b`/`c` and `a`/`b-c`, `r/1`/`x` and `r_1`/`x` (which a name cleaning
/// `-` and `/` would merge) give four files, the same pair twice a numbered fifth; every file is
/// a case `run` answers.
#[test]
fn counterexample_files_never_collide() {
    let disagreeing = |run: &str, call: &str| {
        let mut v = with(call_record(), "/result/outcome", json!("WithinLimit"));
        v["run"] = json!(run);
        v["call"] = json!(call);
        v.to_string()
    };
    let pairs = [("a-b", "c"), ("a", "b-c"), ("r/1", "x"), ("r_1", "x")];
    let mut text = String::from("{\"trace\": 2}\n");
    for (run, call) in pairs {
        text.push_str(&disagreeing(run, call));
        text.push('\n');
    }
    text.push_str(&disagreeing("a-b", "c"));
    text.push('\n');
    // The checker creates the directory itself; the guard removes it when the test ends.
    let scratch = tempfile::Builder::new()
        .prefix("hc-cex-")
        .tempdir()
        .expect("temp dir");
    let dir = scratch.path().join("counterexamples");
    let (code, out, err) = bin(
        &[
            "check",
            "--counterexamples",
            dir.to_str().expect("path"),
            "-",
        ],
        text.as_bytes(),
    );
    assert_eq!(code, 1, "{out}{err}");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the directory")
        .map(|f| f.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "a-b.c.json",
            "a-b.c~2.json",
            "a.b-c.json",
            "r%2F1.x.json",
            "r_1.x.json"
        ],
        "{out}"
    );
    for n in &names {
        let (code, out, err) = bin(
            &["run", "--model", dir.join(n).to_str().expect("path")],
            b"",
        );
        assert_eq!(code, 0, "{n}: {out}{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn call_record() -> Json {
    call()
}

/// The report counts the runs that call records name: a run only a `runEnd` names is not one
/// (a run named again after its `runEnd` counts again, as TRACE.md says).
#[test]
fn runs_are_counted_when_a_call_names_them() {
    let end = |run: &str| json!({"type": "runEnd", "run": run}).to_string();
    let call_in = |run: &str, call: &str| {
        let mut v = call_record();
        v["run"] = json!(run);
        v["call"] = json!(call);
        v.to_string()
    };
    let text = [
        "{\"trace\": 2}".to_owned(),
        end("never-called"),
        call_in("r1", "c1"),
        call_in("r1", "c2"),
        end("r1"),
        end("r1"),
        call_in("r2", "c1"),
        end("ghost"),
    ]
    .join("\n");
    let r = check(text.as_bytes(), &quiet()).expect("readable");
    assert_eq!((r.calls, r.runs), (3, 2));
    let (code, out, err) = bin(&["check", "-"], text.as_bytes());
    assert!(out.contains(": 3 call(s) in 2 run(s)"), "{code} {out}{err}");
    // Only run ends: no run.
    let r = check(
        format!("{{\"trace\": 2}}\n{}\n", end("r")).as_bytes(),
        &quiet(),
    )
    .expect("readable");
    assert_eq!((r.calls, r.runs), (0, 0));
}

/// Entry lists of every length read whole and in order (`defs`, a snapshot's `entries`, an
/// observed record's history and sent entries: each entry is built in place and moved into
/// its list), and each entry exactly as written: the record read back equals the record
/// serialized from it.
#[test]
fn entry_lists_of_every_length_read_whole_and_in_order() {
    use hybrid_compaction_trace::format::{parse_record, Record};
    let entry = |i: usize| {
        json!({"id": format!("e-{i}-é"), "kind": "ConversationalMessage", "role": "user", "size": i,
               "digest": format!("{i:064x}")})
    };
    for n in [0usize, 1, 2, 7, 64, 65, 300] {
        let list: Vec<Json> = (0..n).map(entry).collect();
        let ids: Vec<String> = (0..n).map(|i| format!("e-{i}-é")).collect();
        let mut compact = call();
        compact["defs"] = json!(list);
        let mut expanded = call();
        expanded["snapshots"] = json!([{"version": 0, "entries": list}]);
        let observed = json!({"type": "observed", "run": "r", "call": "c",
            "policy": {"hardLimit": 10, "recentMessageRetentionCount": 1, "estimator": {"kind": "recorded"}},
            "history": {"entries": list}, "sent": {"entries": list}});
        for rec in [compact, expanded, observed] {
            let line = rec.to_string();
            let parsed = parse_record(&line).unwrap_or_else(|e| panic!("{n}: {e}"));
            let lists: Vec<Vec<String>> = match &parsed {
                Record::Call(c) => c
                    .defs
                    .iter()
                    .map(|l| l.0.iter().map(|d| d.recorded().id.clone()).collect())
                    .chain(
                        c.snapshots
                            .iter()
                            .filter_map(|s| s.entries.as_ref())
                            .map(|l| l.iter().map(|e| e.id.clone()).collect()),
                    )
                    .collect(),
                Record::Observed(o) => [&o.history, o.sent.as_ref().unwrap()]
                    .iter()
                    .filter_map(|l| l.entries.as_ref())
                    .map(|l| l.iter().map(|e| e.id.clone()).collect())
                    .collect(),
                Record::RunEnd(_) => unreachable!(),
            };
            assert!(lists.contains(&ids), "{n}: {lists:?}");
            let again = parse_record(&serde_json::to_string(&parsed).unwrap()).unwrap();
            assert_eq!(again, parsed, "{n}");
        }
    }
}
