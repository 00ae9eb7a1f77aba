//! The CLI's `--estimator` flag (SPEC EST-6, EST-7): every case of the input is measured with the
//! named estimator; an unknown name is a usage error (exit 2).

use std::io::{ErrorKind, Write};
use std::process::{Child, ChildStdin, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_hybrid-compaction");

const CASE: &str = r#"{"op":"evaluate","policy":{"hardLimit":100,"triggerMargin":10,
  "recentMessageRetentionCount":1,"maximumCompactionAttempts":1,"preservationLabel":"l",
  "preservationVersion":1,"estimator":{"kind":"utf8"}},
  "transcript":{"format":"openai-chat","messages":[{"role":"user","content":"hello world"}]}}"#;

fn spawn(args: &[&str]) -> Child {
    Command::new(BIN)
        .args(args)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn")
}

/// Writes the case to the command's stdin and closes it. A usage error is decided from the
/// arguments alone, so the command may exit without reading its input: whether the write then
/// lands in the pipe or fails with a broken pipe depends only on which process the scheduler
/// runs first (on a loaded machine the command wins a few spawns in a hundred). Neither is an
/// error of the test; any other write error is.
fn feed(mut stdin: ChildStdin) {
    if let Err(e) = stdin.write_all(CASE.as_bytes()) {
        assert_eq!(e.kind(), ErrorKind::BrokenPipe, "write: {e}");
    }
}

fn run(args: &[&str]) -> (i32, String) {
    let mut child = spawn(args);
    feed(child.stdin.take().expect("stdin"));
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

/// The order a loaded machine produces: the command has refused an unknown estimator and
/// exited before the test writes the case to its stdin (the write fails with a broken pipe).
/// The refusal is still exit 2 with nothing on stdout, and the write's failure is not the
/// test's.
#[test]
fn an_unknown_estimator_is_refused_before_the_input_is_read() {
    let mut child = spawn(&["run", "--estimator", "tiktoken"]);
    let stdin = child.stdin.take().expect("stdin");
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(2));
    feed(stdin);
    let out = child.wait_with_output().expect("output");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("tiktoken"), "{err}");
}
