//! The CLI's `--estimator` flag (SPEC EST-6, EST-7): every case of the input is measured with the
//! named estimator; an unknown name is a usage error (exit 2).

use std::io::Write;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_hybrid-compaction");

const CASE: &str = r#"{"op":"evaluate","policy":{"hardLimit":100,"triggerMargin":10,
  "recentMessageRetentionCount":1,"maximumCompactionAttempts":1,"preservationLabel":"l",
  "preservationVersion":1,"estimator":{"kind":"utf8"}},
  "transcript":{"format":"openai-chat","messages":[{"role":"user","content":"hello world"}]}}"#;

fn run(args: &[&str]) -> (i32, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(CASE.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn sizes(stdout: &str) -> (String, i64) {
    let v: serde_json::Value = serde_json::from_str(stdout).expect("json output");
    let e = &v["evaluation"];
    (
        e["measurementUnit"].as_str().unwrap_or_default().to_owned(),
        e["estimatedSize"].as_i64().unwrap_or(-1),
    )
}

#[test]
fn the_estimator_flag_overrides_the_case_policy() {
    let (code, out) = run(&["run"]);
    assert_eq!(code, 0);
    assert_eq!(sizes(&out), ("Utf8Bytes".to_owned(), 11));
    // 3 + T("user") + T("hello world") = 3 + 1 + 2 under both encodings (SPEC EST-6).
    for flag in [
        "tokens:o200k_base",
        "tokens:cl100k_base",
        "memo:tokens:o200k_base",
    ] {
        let (code, out) = run(&["run", "--estimator", flag]);
        assert_eq!(code, 0, "{flag}");
        assert_eq!(sizes(&out), ("EstimatedTokens".to_owned(), 6), "{flag}");
    }
    let (code, out) = run(&["run", "--estimator", "tiktoken"]);
    assert_eq!((code, out.as_str()), (2, ""));
}
