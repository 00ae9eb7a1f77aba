//! `hybrid-compaction bench` on generated transcripts: the table's shape and the JSON document's
//! fields (never timings), the policy it derives, and one-line refusals of bad input.

use std::process::{Command, Output};

use hybrid_compaction::estimators::TokenEncoding;
use hybrid_compaction::transcript::TranscriptFormat;
use hybrid_compaction_oracle::workload::generate;
use serde_json::{json, Value as Json};

const BIN: &str = env!("CARGO_BIN_EXE_hybrid-compaction");

/// The value in a fresh temporary file, removed when the returned path drops.
fn write(name: &str, value: &Json) -> tempfile::TempPath {
    let file = tempfile::Builder::new()
        .prefix(&format!("hc-bench-{name}-"))
        .suffix(".json")
        .tempfile()
        .expect("tmp file");
    std::fs::write(file.path(), value.to_string()).expect("write");
    file.into_temp_path()
}

fn bench(args: &[&str]) -> Output {
    let o = Command::new(BIN)
        .arg("bench")
        .args(args)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    o
}

const ROWS: [&str; 3] = ["verify accepted", "verify rejected", "assemble utf8"];

#[test]
fn a_10k_message_transcript_gets_the_table_and_the_json_document() {
    // Seed 3 ends with a final answer: the history verifies, so the assembly compacts it.
    let conv = generate(10_000, 3, None).expect("generates");
    let path = write("c10k.json", &conv.transcript(TranscriptFormat::OpenAiChat));
    let p = path.to_str().expect("utf-8 path");
    let o = bench(&[p, "--iterations", "1", "--estimators", "utf8,utf8-text"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let table = String::from_utf8(o.stdout).expect("utf-8");
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].contains("10000 entries") && lines[0].contains("hard limit"),
        "{table}"
    );
    assert!(lines[1].starts_with("assembly: "), "{table}");
    let header = lines
        .iter()
        .position(|l| l.starts_with("| measure"))
        .expect("header");
    for col in ["runs", "median", "p99", "per entry", "per byte"] {
        assert!(lines[header].contains(col), "{col}");
    }
    let rows: Vec<&str> = lines[header + 2..].to_vec();
    let want = [
        "estimate utf8 cold",
        "estimate utf8 memoized",
        "estimate utf8-text cold",
        "estimate utf8-text memoized",
    ]
    .into_iter()
    .chain(ROWS)
    .collect::<Vec<_>>();
    assert_eq!(rows.len(), want.len(), "{table}");
    for (row, name) in rows.iter().zip(want) {
        assert!(row.starts_with(&format!("| {name} ")), "{row}");
        assert_eq!(row.matches('|').count(), 7, "{row}");
        assert!(row.ends_with("ns |"), "{row}");
    }
    // Progress: one line per measure on a non-terminal stderr.
    let progress = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        progress
            .lines()
            .filter(|l| l.starts_with("bench: ["))
            .count(),
        7
    );

    let o = bench(&[p, "--iterations", "2", "--estimators", "utf8", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let doc: Json = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(doc["entries"], 10_000);
    assert!(doc["utf8Bytes"].as_i64().expect("bytes") > 1_000_000);
    assert_eq!(doc["iterations"], 2);
    let bytes = doc["utf8Bytes"].as_i64().expect("bytes");
    assert_eq!(
        doc["policy"]["hardLimit"],
        bytes / 2,
        "default: half the UTF-8 size"
    );
    assert_eq!(doc["assembly"]["outcome"], "PreservationFallback");
    assert!(doc["assembly"]["finalEstimatedSize"].as_i64() <= doc["policy"]["hardLimit"].as_i64());
    let rows = doc["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 5);
    for r in rows {
        for k in [
            "measure",
            "runs",
            "medianNs",
            "p99Ns",
            "perEntryNs",
            "perByteNs",
        ] {
            assert!(r.get(k).is_some(), "{k} in {r}");
        }
        assert_eq!(r["runs"], 2);
        assert!(r["p99Ns"].as_u64() >= r["medianNs"].as_u64());
    }
}

#[test]
fn every_estimator_row_and_the_budget_options() {
    let conv = generate(100, 7, None).expect("generates");
    let path = write("c100.json", &conv.transcript(TranscriptFormat::LangChain));
    let p = path.to_str().expect("utf-8 path");
    let o = bench(&[
        p,
        "--iterations",
        "1",
        "--json",
        "--estimator",
        "tokens:o200k_base",
        "--budget-percent",
        "30",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Json = serde_json::from_slice(&o.stdout).expect("JSON");
    let measures: Vec<&str> = doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["measure"].as_str().expect("name"))
        .collect();
    assert_eq!(measures.len(), 11);
    for e in [
        "utf8",
        "utf8-text",
        "tokens:o200k_base",
        "tokens:cl100k_base",
    ] {
        assert!(measures.contains(&format!("estimate {e} cold").as_str()));
        assert!(measures.contains(&format!("estimate {e} memoized").as_str()));
    }
    assert_eq!(measures.last(), Some(&"assemble tokens:o200k_base"));
    assert_eq!(
        doc["policy"]["estimator"],
        json!({"kind": "tokens", "encoding": "o200k_base"})
    );
}

#[test]
fn a_wire_case_brings_its_policy() {
    let case = json!({"op": "assemble", "policy": {"hardLimit": 100, "triggerMargin": 10,
        "recentMessageRetentionCount": 1, "maximumCompactionAttempts": 1,
        "preservationLabel": "l", "preservationVersion": 1, "estimator": {"kind": "utf8"}},
        "entries": [{"id": "s", "kind": "SystemInstruction", "text": "be brief"},
                    {"id": "u", "kind": "ConversationalMessage", "text": "hello"}]});
    let path = write("case.json", &case);
    let o = bench(&[
        path.to_str().expect("path"),
        "--iterations",
        "3",
        "--estimators",
        "utf8",
        "--json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Json = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(doc["policy"]["hardLimit"], 100);
    assert_eq!(doc["assembly"]["outcome"], "WithinLimit");
    assert_eq!(doc["entries"], 2);

    // --policy replaces the case's; --budget-percent its hard limit.
    let o = bench(&[
        path.to_str().expect("path"),
        "--iterations",
        "1",
        "--estimators",
        "utf8",
        "--json",
        "--budget-percent",
        "50",
        "--policy",
        r#"{"hardLimit": 7, "triggerMargin": 1, "recentMessageRetentionCount": 2,
            "maximumCompactionAttempts": 1, "preservationLabel": "x", "preservationVersion": 2,
            "estimator": {"kind": "utf8-text"}}"#,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Json = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(doc["policy"]["recentMessageRetentionCount"], 2);
    assert_eq!(doc["policy"]["hardLimit"], 6, "half of 8 + 5 text bytes");
    assert!(doc["rows"][4]["measure"]
        .as_str()
        .expect("name")
        .ends_with("utf8-text"));
}

#[test]
fn texts_writes_what_the_token_estimator_counts_per_entry() {
    let conv = generate(60, 1, None).expect("generates");
    let path = write("c60.json", &conv.transcript(TranscriptFormat::OpenAiChat));
    let texts = tempfile::Builder::new()
        .prefix("hc-bench-texts-")
        .suffix(".json")
        .tempfile()
        .expect("tmp file")
        .into_temp_path();
    let (p, t) = (path.to_str().expect("p"), texts.to_str().expect("p"));
    let o = bench(&[p, "--iterations", "1", "--estimators", "utf8", "--texts", t]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Json = serde_json::from_slice(&std::fs::read(t).expect("written")).expect("JSON");
    let entries = doc["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 60);
    // SPEC EST-6: an entry's chat count is its overhead plus the counts of its texts.
    for (i, e) in entries.iter().enumerate() {
        let texts = e["texts"].as_array().expect("texts");
        assert!(!texts.is_empty(), "entry {i}: {e}");
        for encoding in TokenEncoding::ALL {
            let counted: u64 = texts
                .iter()
                .map(|t| encoding.count(t.as_str().expect("a text")) as u64)
                .sum();
            let overhead = e["overhead"].as_u64().expect("overhead");
            let chat = e[encoding.name()].as_u64().expect("count");
            assert_eq!(overhead + counted, chat, "entry {i}, {encoding}: {e}");
        }
    }
}

#[test]
fn bad_input_is_one_line_naming_where() {
    let bad_case = write(
        "bad.json",
        &json!({"op": "assemble", "entries": [{"id": "x"}]}),
    );
    let bad_transcript = write(
        "badt.json",
        &json!({"format": "openai-chat", "messages": [{"content": 1}]}),
    );
    let empty = write(
        "empty.json",
        &json!({"format": "openai-chat", "messages": []}),
    );
    let small = write(
        "small.json",
        &generate(20, 1, None)
            .expect("generates")
            .transcript(TranscriptFormat::OpenAiChat),
    );
    for (args, needle) in [
        (vec![bad_case.to_str().expect("p")], "$.entries"),
        (vec![bad_transcript.to_str().expect("p")], "$.messages[0]"),
        (vec![empty.to_str().expect("p")], "no entries"),
        (vec!["/nonexistent/x.json"], "cannot open"),
        (
            vec![small.to_str().expect("p"), "--texts", "/nonexistent/t.json"],
            "/nonexistent/t.json: cannot write",
        ),
        (
            vec![empty.to_str().expect("p"), "--estimators", "bytes"],
            "expected some of",
        ),
        (
            vec![empty.to_str().expect("p"), "--budget-percent", "0"],
            "budget-percent",
        ),
    ] {
        let o = bench(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
