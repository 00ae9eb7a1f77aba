//! End-to-end tests of the `hybrid-compaction` binary: every subcommand, every exit code, and
//! more than 40 bad inputs, each of which must end in exit 2 (invalid input, nothing on stdout,
//! one error line on stderr) or exit 0 with a typed error answer, and never in a panic.

use std::io::{Seek, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value as Json};

const BIN: &str = env!("CARGO_BIN_EXE_hybrid-compaction");

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Out {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary spawns");
    {
        let mut sin = child.stdin.take().expect("stdin");
        // The CLI may stop reading early (size cap); a broken pipe is fine.
        let _ = sin.write_all(stdin);
    }
    let o = child.wait_with_output().expect("binary runs");
    let out = Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    assert!(
        !out.stderr.contains("panicked"),
        "panic on stderr: {}",
        out.stderr
    );
    assert!(out.code >= 0, "killed by a signal: {}", out.stderr);
    out
}

fn run(args: &[&str], stdin: &[u8]) -> Out {
    run_in(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
        args,
        stdin,
    )
}

/// A fresh directory removed when the returned guard drops, so a test run leaves nothing behind
/// (one of them copies the whole binary).
fn tmpdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("hc-cli-{name}-"))
        .tempdir()
        .expect("temp dir")
}

fn policy() -> Json {
    json!({"hardLimit": 100, "triggerMargin": 10, "recentMessageRetentionCount": 1, "maximumCompactionAttempts": 2,
        "preservationLabel": "l", "preservationVersion": 1, "estimator": {"kind": "utf8"}})
}

fn assemble_case() -> Json {
    json!({"op": "assemble", "policy": policy(), "entries": [
        {"id": "s", "kind": "SystemInstruction", "text": "be brief"},
        {"id": "u1", "kind": "ConversationalMessage", "text": "x".repeat(80)},
        {"id": "u2", "kind": "ConversationalMessage", "text": "hello"}],
        "reducer": {"kind": "scripted", "steps": [{"propose": ["s", "u2"]}]}})
}

fn assert_invalid(o: &Out, what: &str) {
    assert_eq!(
        o.code, 2,
        "{what}: expected exit 2, got {} (stdout {:?}, stderr {:?})",
        o.code, o.stdout, o.stderr
    );
    assert!(
        o.stdout.is_empty(),
        "{what}: stdout must stay empty, got {:?}",
        o.stdout
    );
    assert!(
        o.stderr.starts_with("hybrid-compaction: error:"),
        "{what}: {:?}",
        o.stderr
    );
    assert_eq!(
        o.stderr.trim_end().lines().count(),
        1,
        "{what}: one line expected: {:?}",
        o.stderr
    );
}

fn assert_typed(o: &Out, kind: &str, what: &str) {
    assert_eq!(
        o.code, 0,
        "{what}: expected exit 0, got {} ({})",
        o.code, o.stderr
    );
    let v: Json = serde_json::from_str(&o.stdout)
        .unwrap_or_else(|e| panic!("{what}: output not JSON ({e}): {}", o.stdout));
    assert_eq!(v["error"]["kind"], json!(kind), "{what}: {v}");
}

// ---------------------------------------------------------------- run

/// SPEC SNAP-5: the empty schedule captures version 0 with no entries, on both implementations.
#[test]
fn snap_5_the_empty_schedule_is_answered() {
    let case = json!({"op": "assemble", "policy": policy(), "snapshots": []});
    let mut answers = Vec::new();
    for imp in ["--model", "--engine"] {
        let o = run(&["run", imp, "-"], case.to_string().as_bytes());
        assert_eq!(o.code, 0, "{}", o.stderr);
        let v: Json = serde_json::from_str(&o.stdout).expect("json");
        assert_eq!(v["assembly"]["outcome"], "WithinLimit", "{v}");
        assert_eq!(v["assembly"]["finalEntryIds"], json!([]));
        assert_eq!(v["assembly"]["latestSnapshotVersion"], 0);
        answers.push(v);
    }
    assert_eq!(answers[0], answers[1]);
}

#[test]
fn run_answers_one_case_on_both_implementations() {
    let input = assemble_case().to_string();
    for flag in ["--model", "--engine"] {
        let o = run(&["run", flag, "-"], input.as_bytes());
        assert_eq!(o.code, 0, "{}", o.stderr);
        let v: Json = serde_json::from_str(&o.stdout).expect("JSON");
        // Hand-computed (SPEC ASM-7): 8 + 80 + 5 = 93 >= 90 (the threshold), proposal [s, u2]
        // = 13 fits.
        assert_eq!(v["assembly"]["outcome"], "Reduced");
        assert_eq!(v["assembly"]["finalEntryIds"], json!(["s", "u2"]));
        assert_eq!(v["assembly"]["originalEstimatedSize"], 93);
        assert_eq!(v["assembly"]["finalEstimatedSize"], 13);
        assert_eq!(v["diagnostics"]["measurementUnit"], "Utf8Bytes");
    }
    // The default implementation answers the same.
    let o = run(&["run", "-"], input.as_bytes());
    assert_eq!(o.code, 0);
    assert!(o.stdout.contains("\"Reduced\""));
}

#[test]
fn run_reads_files_arrays_and_jsonl_and_keeps_the_shape() {
    let d_dir = tmpdir("shapes");
    let d = d_dir.path();
    let one = json!({"op": "policy", "policy": policy()});
    let bad_policy = json!({"op": "policy", "policy": {"hardLimit": 0, "triggerMargin": 1, "recentMessageRetentionCount": 1,
        "maximumCompactionAttempts": 1, "preservationLabel": "l", "preservationVersion": 1, "estimator": {"kind": "utf8"}}});
    let f = d.join("case.json");
    std::fs::write(&f, one.to_string()).expect("write");
    let o = run(&["run", f.to_str().expect("path")], b"");
    assert_eq!(o.code, 0);
    assert_eq!(
        serde_json::from_str::<Json>(&o.stdout).expect("json")["policy"]["triggerThreshold"],
        90
    );

    let arr = Json::Array(vec![one.clone(), bad_policy.clone()]).to_string();
    let o = run(&["run", "--pretty", "-"], arr.as_bytes());
    assert_eq!(o.code, 0);
    let v: Json = serde_json::from_str(&o.stdout).expect("array");
    assert_eq!(v.as_array().map(Vec::len), Some(2));
    assert_eq!(v[1]["error"]["kind"], "OutOfRange");
    assert_eq!(v[1]["error"]["field"], "HardLimit");

    let jsonl = format!("{one}\n{bad_policy}\n\n{one}\n");
    let o = run(&["run", "-"], jsonl.as_bytes());
    assert_eq!(o.code, 0);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[1].contains("OutOfRange"));
}

#[test]
fn verify_subcommand_takes_the_shorthand() {
    let input = json!({"policy": policy(), "original": [
        {"id": "s", "kind": "SystemInstruction", "text": "rules"}, {"id": "u", "kind": "ConversationalMessage", "text": "hi"}],
        "proposed": ["u"]});
    let o = run(&["verify", "-"], input.to_string().as_bytes());
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Json = serde_json::from_str(&o.stdout).expect("json");
    assert_eq!(v["verification"]["outcome"], "Rejected");
    assert_eq!(
        v["verification"]["rejectionReasons"],
        json!(["MissingRequiredEntry"])
    );
    assert_eq!(v["verification"]["missingRequiredEntryIds"], json!(["s"]));
    // An explicit other op is refused.
    let o = run(&["verify", "-"], assemble_case().to_string().as_bytes());
    assert_invalid(&o, "verify with op assemble");
}

// ---------------------------------------------------------------- vectors

#[test]
fn vectors_runs_the_shipped_corpus_and_prints_the_table() {
    let o = run(&["vectors"], b"");
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("TOTAL"));
    assert!(o.stdout.contains("model ok"));
    assert!(o.stdout.contains("engine ok"));
    assert!(o.stdout.contains("all passed"));
    // One file is a corpus of one.
    let o = run(&["vectors", "vectors/bridge.json"], b"");
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("bridge"));
    // From another working directory (no vectors/ there, the binary copied elsewhere) the
    // embedded corpus runs: the same table as the files on disk.
    let d_dir = tmpdir("elsewhere");
    let d = d_dir.path();
    let copied = d.join("hybrid-compaction");
    std::fs::copy(BIN, &copied).expect("copy the binary");
    let o = run_in(d, &["vectors", "--implementation", "model"], b"");
    assert_eq!(o.code, 0, "{}", o.stderr);
    let from_disk = run(&["vectors", "vectors", "--implementation", "model"], b"");
    let table = |s: &str| {
        s.lines()
            .filter(|l| !l.contains(" in "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(table(&o.stdout), table(&from_disk.stdout));
    let moved = Command::new(&copied)
        .args(["vectors", "--implementation", "engine"])
        .current_dir(d)
        .output()
        .expect("the copied binary runs");
    assert!(
        moved.status.success(),
        "{}",
        String::from_utf8_lossy(&moved.stderr)
    );
    assert!(String::from_utf8_lossy(&moved.stdout).contains("all passed"));
}

#[test]
fn vectors_exits_1_and_names_the_failing_tc_id() {
    let d_dir = tmpdir("broken");
    let d = d_dir.path();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/policy.json");
    let mut v: Json =
        serde_json::from_str(&std::fs::read_to_string(src).expect("read")).expect("json");
    let t = &mut v["testGroups"][0]["tests"][0];
    let tc = t["tcId"].as_u64().expect("tcId");
    t["expected"]["policy"]["triggerThreshold"] = json!(91);
    std::fs::write(d.join("policy.json"), v.to_string()).expect("write");
    let o = run(&["vectors", d.to_str().expect("path")], b"");
    assert_eq!(o.code, 1);
    assert!(o.stdout.contains(&format!("tcId {tc}")), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("$.policy.triggerThreshold: expected 91, got 90"),
        "{}",
        o.stdout
    );
}

#[test]
fn vectors_refuses_malformed_corpora_with_exit_2() {
    let d_dir = tmpdir("malformed");
    let d = d_dir.path();
    std::fs::write(d.join("x.json"), "{\"schema\": 1").expect("write");
    assert_invalid(
        &run(&["vectors", d.to_str().expect("path")], b""),
        "truncated vector file",
    );
    let e_dir = tmpdir("empty-corpus");
    let e = e_dir.path();
    assert_invalid(
        &run(&["vectors", e.to_str().expect("path")], b""),
        "no vector files",
    );
    assert_invalid(&run(&["vectors", "/nonexistent/dir"], b""), "missing dir");
    // numberOfTests must match.
    let f_dir = tmpdir("count");
    let f = f_dir.path();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/policy.json");
    let mut v: Json =
        serde_json::from_str(&std::fs::read_to_string(src).expect("read")).expect("json");
    v["numberOfTests"] = json!(1);
    std::fs::write(f.join("policy.json"), v.to_string()).expect("write");
    assert_invalid(
        &run(&["vectors", f.to_str().expect("path")], b""),
        "wrong numberOfTests",
    );
}

#[test]
fn vectors_generate_reproduces_the_committed_files() {
    let o = run(&["vectors", "generate", "--topic", "policy"], b"");
    assert_eq!(o.code, 0, "{}", o.stderr);
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/policy.json"),
    )
    .expect("read");
    assert_eq!(o.stdout, shipped);
    let d_dir = tmpdir("gen");
    let d = d_dir.path();
    let o = run(
        &[
            "vectors",
            "generate",
            "--out",
            d.to_str().expect("path"),
            "--count",
            "20",
            "--seed",
            "3",
        ],
        b"",
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(d.join("generated.json").exists());
    let g: Json =
        serde_json::from_str(&std::fs::read_to_string(d.join("generated.json")).expect("read"))
            .expect("json");
    assert_eq!(g["numberOfTests"], 20);
    assert_invalid(
        &run(&["vectors", "generate"], b""),
        "generate without a destination",
    );
    assert_invalid(
        &run(&["vectors", "generate", "--topic", "nope"], b""),
        "unknown topic",
    );
}

/// A corpus directory of two topics (policy, verify) copied from the repository's, with the
/// whole pin ledger.
fn corpus_copy(name: &str) -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    let dir = tmpdir(name);
    let d = dir.path();
    for sub in ["source", "pins"] {
        std::fs::create_dir_all(d.join(sub)).expect("mkdir");
    }
    for rel in [
        "policy.json",
        "verify.json",
        "source/policy.json",
        "source/verify.json",
        "pins/PINS.json",
        "pins/RETIRED.json",
    ] {
        std::fs::copy(repo.join(rel), d.join(rel)).expect("copy");
    }
    dir
}

fn read_json(path: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
}

fn write_json(path: &Path, v: &Json) {
    std::fs::write(path, serde_json::to_string_pretty(v).expect("json")).expect("write");
}

fn tc_ids(vector_file: &Json) -> Vec<u64> {
    vector_file["testGroups"]
        .as_array()
        .expect("groups")
        .iter()
        .flat_map(|g| g["tests"].as_array().expect("tests").iter())
        .map(|t| t["tcId"].as_u64().expect("tcId"))
        .collect()
}

#[test]
fn vectors_generate_pins_new_tc_ids_and_never_changes_a_published_one() {
    let d_dir = corpus_copy("pins");
    let d = d_dir.path();
    let at = |rel: &str| d.join(rel);
    let generate = |extra: &[&str]| {
        let mut args = vec!["vectors", "generate", "--corpus", d.to_str().expect("path")];
        args.extend_from_slice(extra);
        run(&args, b"")
    };
    let into_corpus = ["--topic", "policy", "--out", d.to_str().expect("path")];
    let pins_before = std::fs::read_to_string(at("pins/PINS.json")).expect("pins");
    let verify_before = std::fs::read(at("verify.json")).expect("verify");
    let verify_mtime = std::fs::metadata(at("verify.json"))
        .and_then(|m| m.modified())
        .expect("mtime");
    let policy_before = read_json(&at("policy.json"));

    // Nothing changed: nothing is written.
    let o = generate(&into_corpus);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("0 of 1 topic files"), "{}", o.stderr);

    // A test inserted in the middle of the source: one new vector, one new pin, nothing renumbered.
    let mut source = read_json(&at("source/policy.json"));
    let mut inserted = source["testGroups"][0]["tests"][0].clone();
    let limit = inserted["case"]["policy"]["hardLimit"]
        .as_i64()
        .expect("hardLimit")
        + 1;
    inserted["tcId"] = json!(2999);
    inserted["comment"] = json!("an inserted test");
    inserted["case"]["policy"]["hardLimit"] = json!(limit);
    inserted["expect"] = json!({"policy": {"hardLimit": limit}});
    assert!(!pins_before.contains("\"2999\""), "2999 is already pinned");
    source["testGroups"][0]["tests"]
        .as_array_mut()
        .expect("tests")
        .insert(1, inserted);
    write_json(&at("source/policy.json"), &source);
    let o = generate(&into_corpus);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr.contains("pinned 1 new tcId(s): 2999"),
        "{}",
        o.stderr
    );
    let policy_after = read_json(&at("policy.json"));
    let mut ids = tc_ids(&policy_before);
    ids.insert(1, 2999);
    assert_eq!(tc_ids(&policy_after), ids);
    let mut tests_after: Vec<Json> = policy_after["testGroups"][0]["tests"]
        .as_array()
        .expect("tests")
        .clone();
    tests_after.remove(1);
    assert_eq!(
        Json::Array(tests_after),
        policy_before["testGroups"][0]["tests"],
        "an existing vector changed"
    );
    let pins_after = std::fs::read_to_string(at("pins/PINS.json")).expect("pins");
    let added: Vec<&str> = pins_after
        .lines()
        .filter(|l| {
            !pins_before
                .lines()
                .any(|b| b.trim_end_matches(',') == l.trim_end_matches(','))
        })
        .collect();
    assert_eq!(added.len(), 1, "{added:?}");
    assert!(added[0].contains("\"2999\""));
    assert_eq!(
        std::fs::read(at("verify.json")).expect("verify"),
        verify_before
    );
    assert_eq!(
        std::fs::metadata(at("verify.json"))
            .and_then(|m| m.modified())
            .expect("mtime"),
        verify_mtime,
        "--topic policy rewrote verify.json"
    );

    // A published vector whose case (and so its expected output) changes: refused, nothing written.
    let mut changed = source.clone();
    let t = &mut changed["testGroups"][0]["tests"][0];
    let limit = t["case"]["policy"]["hardLimit"]
        .as_i64()
        .expect("hardLimit")
        + 5;
    t["case"]["policy"]["hardLimit"] = json!(limit);
    t["expect"] = json!({"policy": {"hardLimit": limit}});
    let tc = t["tcId"].as_u64().expect("tcId");
    write_json(&at("source/policy.json"), &changed);
    let written = std::fs::read(at("policy.json")).expect("policy");
    let o = generate(&into_corpus);
    assert_eq!(o.code, 1, "{}", o.stderr);
    for needle in [
        &format!("tcId {tc} [policy]"),
        "changed",
        "retire",
        "RETIRED.json",
    ] {
        assert!(o.stderr.contains(needle), "{needle:?}: {}", o.stderr);
    }
    assert_eq!(std::fs::read(at("policy.json")).expect("policy"), written);
    // The same to stdout: refused too.
    assert_eq!(generate(&["--topic", "policy"]).code, 1);

    // A test dropped without being retired: refused.
    let mut dropped = source.clone();
    dropped["testGroups"][0]["tests"]
        .as_array_mut()
        .expect("tests")
        .remove(0);
    write_json(&at("source/policy.json"), &dropped);
    let o = generate(&into_corpus);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr
            .contains(&format!("tcId {tc} [policy]: would disappear")),
        "{}",
        o.stderr
    );

    // Retired: its test leaves the source, its tcId goes into RETIRED.json, its pin stays.
    write_json(
        &at("pins/RETIRED.json"),
        &json!({tc.to_string(): "a SPEC change (test)"}),
    );
    let o = generate(&into_corpus);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!tc_ids(&read_json(&at("policy.json"))).contains(&tc));
    assert!(std::fs::read_to_string(at("pins/PINS.json"))
        .expect("pins")
        .contains(&format!("\"{tc}\"")));
    // ... and is never used again.
    write_json(&at("source/policy.json"), &source);
    let o = generate(&into_corpus);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr
            .contains(&format!("tcId {tc} [policy]: the tcId is retired")),
        "{}",
        o.stderr
    );

    // A bad source is invalid input (exit 2), named by file, tcId and JSON path.
    let mut bad = source.clone();
    bad["testGroups"][0]["tests"][1]["clauses"] = json!("POL-1");
    write_json(&at("source/policy.json"), &bad);
    let o = generate(&into_corpus);
    assert_invalid(&o, "a malformed source");
    assert!(o.stderr.contains("source/policy.json:"), "{}", o.stderr);
    assert!(
        o.stderr
            .contains("tcId 2999: $.testGroups[0].tests[1].clauses: expected an array"),
        "{}",
        o.stderr
    );

    // The generated topic with another seed is a scratch set: never into the corpus directory.
    assert_invalid(
        &generate(&[
            "--topic",
            "generated",
            "--seed",
            "3",
            "--out",
            d.to_str().expect("path"),
        ]),
        "a scratch generated topic into the corpus",
    );
}

#[test]
fn run_stream_answers_line_by_line_and_a_bad_line_does_not_stop_the_rest() {
    let good = json!({"op": "policy", "policy": policy()}).to_string();
    let long = format!("{{\"op\": \"policy\", \"pad\": \"{}\"}}", "x".repeat(300));
    let input = format!("{good}\n\n{{\"op\": \"nope\"}}\nnot json\n{long}\n\u{e9}\n{good}\n");
    let o = run(
        &["run", "--stream", "--max-input-bytes", "200", "-"],
        input.as_bytes(),
    );
    assert_eq!(
        o.code, 2,
        "invalid lines give exit 2 after the whole stream: {}",
        o.stderr
    );
    let lines: Vec<Json> = o
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("every output line is JSON"))
        .collect();
    assert_eq!(
        lines.len(),
        6,
        "one answer per non-blank line: {}",
        o.stdout
    );
    assert!(lines[0].get("policy").is_some());
    for (i, n) in [(1, 3), (2, 4), (3, 5), (4, 6)] {
        assert_eq!(lines[i]["invalid"]["line"], n, "{}", lines[i]);
    }
    assert!(lines[3]["invalid"]["message"]
        .as_str()
        .unwrap()
        .contains("exceeds the limit of 200 bytes"));
    assert_eq!(lines[5], lines[0], "the stream goes on after bad lines");
    assert_eq!(o.stderr.trim_end().lines().count(), 1, "{}", o.stderr);
    // A clean stream exits 0.
    let o = run(
        &["run", "--stream", "-"],
        format!("{good}\n{good}").as_bytes(),
    );
    assert_eq!((o.code, o.stdout.lines().count()), (0, 2), "{}", o.stderr);
}

/// `{"tcId": N, "output": expected}` for every vector of the corpus on disk.
fn reference_outputs() -> Vec<Json> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    let mut lines = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("vectors/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for f in files {
        let file: Json =
            serde_json::from_str(&std::fs::read_to_string(f).expect("read")).expect("json");
        for g in file["testGroups"].as_array().expect("groups") {
            for t in g["tests"].as_array().expect("tests") {
                lines.push(json!({"tcId": t["tcId"], "output": t["expected"]}));
            }
        }
    }
    lines
}

fn jsonl(lines: &[Json]) -> Vec<u8> {
    lines
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn vectors_check_judges_another_implementations_outputs_strictly() {
    let mut outputs = reference_outputs();
    let o = run(&["vectors", "check", "-"], &jsonl(&outputs));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .contains(&format!("{n} of {n} vectors", n = outputs.len())),
        "{}",
        o.stdout
    );
    // A boolean answered as 1 differs (strict), a dropped vector is "not answered", an unknown
    // tcId is reported; the informative error message is ignored.
    let bool_at = outputs
        .iter()
        .position(|l| l["output"]["evaluation"]["triggered"].is_boolean())
        .expect("an evaluation vector");
    outputs[bool_at]["output"]["evaluation"]["triggered"] = json!(1);
    let dropped = outputs.remove(0)["tcId"].clone();
    let err_at = outputs
        .iter()
        .position(|l| l["output"]["error"].is_object())
        .expect("an error vector");
    outputs[err_at]["output"]["error"]["message"] = json!("any wording");
    outputs.push(json!({"tcId": 999_999, "output": {}}));
    let o = run(&["vectors", "check", "-"], &jsonl(&outputs));
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains(".triggered: expected"), "{}", o.stdout);
    assert!(
        o.stdout.contains(&format!("tcId {dropped} ")),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("not answered"), "{}", o.stdout);
    assert!(o.stdout.contains("tcId 999999: not in"), "{}", o.stdout);
    assert_eq!(
        o.stdout.lines().filter(|l| l.starts_with("  tcId")).count(),
        3,
        "{}",
        o.stdout
    );
    // Unreadable outputs: exit 2, one line naming the line.
    assert_invalid(
        &run(&["vectors", "check", "-"], b"{\"tcId\": 1}\n"),
        "no output member",
    );
    let twice = jsonl(&[
        json!({"tcId": 1, "output": {}}),
        json!({"tcId": 1, "output": {}}),
    ]);
    let o = run(&["vectors", "check", "-"], &twice);
    assert_invalid(&o, "tcId twice");
    assert!(o.stderr.contains("<stdin>:2"), "{}", o.stderr);
}

#[test]
fn vectors_generate_bounds_the_count() {
    for count in ["18446744073709551615", "100001", "0", "-1", "ten"] {
        let flag = format!("--count={count}");
        let o = run(&["vectors", "generate", &flag, "--out", "-"], b"");
        assert_invalid(&o, count);
        assert!(o.stderr.contains("--count"), "{count}: {}", o.stderr);
        assert!(o.stderr.contains("1 to 100000"), "{count}: {}", o.stderr);
    }
}

#[test]
fn usage_errors_are_one_line() {
    for args in [
        vec!["bogus"],
        vec!["run"],
        vec!["run", "--bogus", "-"],
        vec!["verify"],
        vec!["verify", "--nope", "-"],
        vec!["vectors", "--nope"],
        vec!["vectors", "check"],
        vec!["vectors", "generate", "--count"],
        vec!["check"],
        vec!["check", "--bogus", "x"],
        vec!["schema", "nope"],
        vec!["schema", "--x"],
        vec![],
    ] {
        assert_invalid(&run(&args, b""), &format!("{args:?}"));
    }
    // The one line still says what is missing.
    let o = run(&["run"], b"");
    assert!(o.stderr.contains("<INPUT>"), "{}", o.stderr);
}

// ---------------------------------------------------------------- schema, help

#[test]
fn schema_prints_the_three_schemas() {
    let o = run(&["schema"], b"");
    assert_eq!(o.code, 0);
    let v: Json = serde_json::from_str(&o.stdout).expect("json");
    for k in ["case", "output", "vectorFile"] {
        assert!(v[k].is_object(), "{k}");
    }
    let o = run(&["schema", "case"], b"");
    assert_eq!(o.code, 0);
    assert!(o.stdout.contains("assemble"));
}

#[test]
fn help_on_every_subcommand_shows_an_example() {
    for args in [
        vec!["run", "--help"],
        vec!["verify", "--help"],
        vec!["vectors", "--help"],
        vec!["vectors", "generate", "--help"],
        vec!["schema", "--help"],
    ] {
        let o = run(&args, b"");
        assert_eq!(o.code, 0, "{args:?}");
        assert!(o.stdout.contains("Example"), "{args:?}: {}", o.stdout);
    }
    let o = run(&["--help"], b"");
    assert_eq!(o.code, 0);
    assert!(o.stdout.contains("Exit codes"));
    assert_eq!(run(&["--version"], b"").code, 0);
    assert_eq!(run(&["frobnicate"], b"").code, 2);
    assert_eq!(run(&[], b"").code, 2);
    assert_eq!(run(&["run", "--model", "--engine", "-"], b"").code, 2);
}

// ---------------------------------------------------------------- bad inputs

/// A policy case whose hard limit is the literal JSON number text `n`.
fn policy_text(n: &str) -> Vec<u8> {
    format!(
        r#"{{"op":"policy","policy":{{"hardLimit":{n},"triggerMargin":1,"recentMessageRetentionCount":1,"maximumCompactionAttempts":1,"preservationLabel":"l","preservationVersion":1,"estimator":{{"kind":"utf8"}}}}}}"#
    )
    .into_bytes()
}

/// Inputs that must be refused as invalid (exit 2).
fn invalid_inputs() -> Vec<(&'static str, Vec<u8>)> {
    let p = policy();
    let entry_case = |e: Json| {
        json!({"op": "entry", "entries": [e]})
            .to_string()
            .into_bytes()
    };
    let value_case = |v: Json| {
        entry_case(
            json!({"id": "r", "kind": "ToolExchange", "parts": [{"result": {"callId": "c", "value": v}}]}),
        )
    };
    let policy_with = |k: &str, v: Json| {
        let mut q = policy();
        q[k] = v;
        json!({"op": "policy", "policy": q})
            .to_string()
            .into_bytes()
    };
    let assemble_with = |k: &str, v: Json| {
        let mut c = assemble_case();
        c[k] = v;
        c.to_string().into_bytes()
    };
    let mut nested = String::new();
    for _ in 0..100_000 {
        nested.push('[');
    }
    vec![
        ("empty input", b"".to_vec()),
        ("whitespace only", b"  \n\t ".to_vec()),
        ("truncated JSON", br#"{"op":"policy","policy":{"hardLimit":1"#.to_vec()),
        ("not JSON", b"hello".to_vec()),
        ("a bare number", b"42".to_vec()),
        ("a bare string", b"\"case\"".to_vec()),
        ("null", b"null".to_vec()),
        ("trailing garbage", format!("{} x", json!({"op": "policy", "policy": p})).into_bytes()),
        ("byte order mark", [b"\xEF\xBB\xBF".to_vec(), json!({"op": "policy", "policy": p}).to_string().into_bytes()].concat()),
        ("invalid UTF-8", b"{\"op\":\"entry\",\"entries\":[{\"id\":\"\xff\xfe\",\"kind\":\"Summary\"}]}".to_vec()),
        ("unknown op", json!({"op": "compact", "entries": []}).to_string().into_bytes()),
        ("missing op", json!({"entries": []}).to_string().into_bytes()),
        ("unknown field in a case", json!({"op": "analyze", "entries": [], "extra": true}).to_string().into_bytes()),
        ("unknown field in a policy", policy_with("hardlimit", json!(5))),
        ("unknown field in an entry", entry_case(json!({"id": "a", "kind": "Summary", "txt": "x"}))),
        ("duplicate JSON key", br#"{"op":"analyze","entries":[],"entries":[]}"#.to_vec()),
        ("wrong type: string hard limit", policy_with("hardLimit", json!("100"))),
        ("wrong type: fractional hard limit", policy_with("hardLimit", json!(1.5))),
        ("32-bit overflow: hard limit 2^31", policy_with("hardLimit", json!(2147483648u64))),
        ("32-bit underflow: margin -2^31-1", policy_with("triggerMargin", json!(-2147483649i64))),
        ("huge number 1e400", policy_text("1e400")),
        ("unknown entry kind", entry_case(json!({"id": "a", "kind": "Chat", "text": "x"}))),
        ("lowercase entry kind", entry_case(json!({"id": "a", "kind": "summary", "text": "x"}))),
        ("unknown estimator kind", policy_with("estimator", json!({"kind": "tokens"}))),
        ("estimator parameter of the wrong kind", policy_with("estimator", json!({"kind": "utf8", "size": 3}))),
        ("unknown part shape", entry_case(json!({"id": "a", "kind": "Summary", "parts": [{"image": "x"}]}))),
        ("text and parts together", entry_case(json!({"id": "a", "kind": "Summary", "text": "x", "parts": []}))),
        ("segment on a non-segment kind", entry_case(json!({"id": "a", "kind": "Summary", "segment": {"body": "x"}}))),
        ("u8 out of range", value_case(json!({"u8": 300}))),
        ("i16 out of range", value_case(json!({"i16": 40000}))),
        ("i32 tag out of range", value_case(json!({"i32": 2147483648u64}))),
        ("negative u64", value_case(json!({"u64": -1}))),
        ("malformed decimal", value_case(json!({"decimal": "1.2.3"}))),
        ("decimal scale 29", value_case(json!({"decimal": format!("0.{}", "1".repeat(29))}))),
        ("decimal over 96 bits", value_case(json!({"decimal": "99999999999999999999999999999"}))),
        ("invalid raw JSON", value_case(json!({"raw": "{"}))),
        ("raw JSON with surrounding whitespace", value_case(json!({"raw": " 1"}))),
        ("value object with two tags", value_case(json!({"i32": 1, "i64": 2}))),
        ("untagged value object", value_case(json!({"a": 1}))),
        ("unknown value tag", value_case(json!({"int": 1}))),
        ("lowercase nan", value_case(json!({"f64": "nan"}))),
        ("f32 overflow", value_case(json!({"f32": 1e39}))),
        ("deeply nested values", format!("{{\"op\":\"entry\",\"entries\":[{{\"id\":\"r\",\"kind\":\"ToolExchange\",\"parts\":[{{\"result\":{{\"callId\":\"c\",\"value\":{nested}").into_bytes()),
        ("bad cancellation point", assemble_with("cancel", json!("middle"))),
        ("non-numeric cancellation index", assemble_with("cancel", json!("capture:x"))),
        ("negative cancellation index", assemble_with("cancel", json!("reducer:-1"))),
        ("capture cancellation on evaluate", json!({"op": "evaluate", "policy": p, "entries": [], "cancel": "capture:0"}).to_string().into_bytes()),
        ("empty snapshot schedule", assemble_with("snapshots", json!([]))),
        ("snapshot version beyond i64", format!(r#"{{"op":"assemble","policy":{p},"snapshots":[{{"version":9223372036854775808,"entries":[]}}]}}"#).into_bytes()),
        ("negative target count", assemble_with("reducer", json!({"kind": "messageCounting", "targetCount": -1}))),
        ("unknown reducer kind", assemble_with("reducer", json!({"kind": "smart"}))),
        ("unknown reducer step", assemble_with("reducer", json!({"kind": "scripted", "steps": ["shrink"]}))),
        ("policy missing", json!({"op": "select", "entries": []}).to_string().into_bytes()),
        ("verify naming an unknown original", json!({"op": "verify", "policy": p, "original": [], "proposed": ["ghost"]}).to_string().into_bytes()),
        ("overrides without messages", json!({"op": "entry", "entries": [], "overrides": {"0": "Summary"}}).to_string().into_bytes()),
        ("override index out of range", json!({"op": "entry", "messages": [{"role": "user", "text": "x"}], "overrides": {"5": "Summary"}}).to_string().into_bytes()),
        ("one bad case in an array", Json::Array(vec![json!({"op": "policy", "policy": p}), json!({"op": "nope"})]).to_string().into_bytes()),
        ("one bad line in JSONL", format!("{}\n{{\"op\":\n", json!({"op": "policy", "policy": p})).into_bytes()),
    ]
}

#[test]
fn bad_inputs_exit_2_with_one_line_and_nothing_on_stdout() {
    let cases = invalid_inputs();
    assert!(cases.len() >= 40, "only {} invalid inputs", cases.len());
    for (what, bytes) in cases {
        let o = run(&["run", "--model", "-"], &bytes);
        assert_invalid(&o, what);
    }
}

/// Inputs the SPEC rejects: answered with a typed error (exit 0).
#[test]
fn spec_rejections_are_typed_answers_not_failures() {
    let p = policy();
    let upper = format!("artifact://sha256/{}", "AB".repeat(32));
    let cases: Vec<(&str, Json, &str)> = vec![
        (
            "negative hard limit",
            json!({"op": "policy", "policy": {"hardLimit": -5, "triggerMargin": 1, "recentMessageRetentionCount": 1,
            "maximumCompactionAttempts": 1, "preservationLabel": "l", "preservationVersion": 1, "estimator": {"kind": "utf8"}}}),
            "OutOfRange",
        ),
        (
            "null label",
            json!({"op": "policy", "policy": {"hardLimit": 5, "triggerMargin": 1, "recentMessageRetentionCount": 1,
            "maximumCompactionAttempts": 1, "preservationLabel": null, "preservationVersion": 1, "estimator": {"kind": "utf8"}}}),
            "NullArgument",
        ),
        (
            "duplicate ids in selection",
            json!({"op": "select", "policy": p, "entries": [
            {"id": "a", "kind": "Summary", "text": "x"}, {"id": "a", "kind": "Summary", "text": "y"}]}),
            "InvalidArgument",
        ),
        (
            "duplicate ids in a snapshot",
            json!({"op": "assemble", "policy": p, "entries": [
            {"id": "a", "kind": "Summary", "text": "x"}, {"id": "a", "kind": "Summary", "text": "y"}]}),
            "InvalidArgument",
        ),
        (
            "malformed digest in a reference",
            json!({"op": "entry", "entries": [{"id": "a", "kind": "ArtifactReference", "text": "artifact://sha256/123"}]}),
            "InvalidArgument",
        ),
        (
            "uppercase digest in a reference",
            json!({"op": "entry", "entries": [{"id": "a", "kind": "ArtifactReference", "text": upper}]}),
            "InvalidArgument",
        ),
        (
            "uppercase digest in a segment",
            json!({"op": "entry", "entries": [{"id": "b", "kind": "RecoverableContextSegment",
            "segment": {"reference": upper, "body": "x"}}]}),
            "InvalidArgument",
        ),
        (
            "unsupported content",
            json!({"op": "entry", "entries": [{"id": "a", "kind": "Summary", "parts": [{"unsupported": "ImageContent"}]}]}),
            "NotSupported",
        ),
        (
            "32-bit size overflow",
            json!({"op": "evaluate", "policy": {"hardLimit": 5, "triggerMargin": 1, "recentMessageRetentionCount": 1,
            "maximumCompactionAttempts": 1, "preservationLabel": "l", "preservationVersion": 1, "estimator": {"kind": "constant", "size": 2147483647}},
            "entries": [{"id": "a", "kind": "Summary"}, {"id": "b", "kind": "Summary"}]}),
            "Overflow",
        ),
        (
            "negative snapshot version",
            json!({"op": "assemble", "policy": p, "snapshots": [{"version": -1, "entries": []}]}),
            "OutOfRange",
        ),
        (
            "blank id",
            json!({"op": "entry", "entries": [{"id": "   ", "kind": "Summary"}]}),
            "InvalidArgument",
        ),
        (
            "cancelled",
            json!({"op": "evaluate", "policy": p, "entries": [], "cancel": "before"}),
            "Cancelled",
        ),
    ];
    for (what, case, kind) in cases {
        let o = run(&["run", "--engine", "-"], case.to_string().as_bytes());
        assert_typed(&o, kind, what);
    }
}

#[test]
fn nesting_within_the_parser_limit_is_answered() {
    let mut v = json!("leaf");
    for _ in 0..100 {
        v = json!([v]);
    }
    let case = json!({"op": "evaluate", "policy": policy(), "entries": [{"id": "r", "kind": "ToolExchange",
        "parts": [{"result": {"callId": "c", "value": v}}]}]});
    let o = run(&["run", "-"], case.to_string().as_bytes());
    assert_eq!(o.code, 0, "{}", o.stderr);
    // "c" (1 byte) + "leaf" (4 bytes): lists add nothing (SPEC EST-2).
    assert!(o.stdout.contains("\"estimatedSize\":5"), "{}", o.stdout);
}

#[test]
fn oversized_inputs_are_refused_cleanly() {
    let d_dir = tmpdir("big");
    let d = d_dir.path();
    let big = d.join("big.json");
    {
        // 100 MiB and then `{}`, over the default cap of 100 MiB: written sparse (the first
        // 100 MiB are the file's length, never written, read as NUL bytes), so the test needs
        // no 100 MiB of room in the temporary directory; the refusal must be by size (its
        // message names `--max-input-bytes`), as NUL bytes are no JSON either.
        let mut f = std::fs::File::create(&big).expect("create");
        f.set_len(100 << 20).expect("extend");
        f.seek(std::io::SeekFrom::End(0)).expect("seek");
        f.write_all(b"{}").expect("write");
    }
    let o = run(&["run", big.to_str().expect("path")], b"");
    assert_invalid(&o, "100 MiB file");
    assert!(o.stderr.contains("--max-input-bytes"), "{}", o.stderr);
    let _ = std::fs::remove_file(&big);
    // Through stdin, with a small configured cap.
    let input = json!({"op": "analyze", "entries": [{"id": "u", "kind": "Summary", "text": "x".repeat(5000)}]}).to_string();
    assert_invalid(
        &run(&["run", "--max-input-bytes", "1000", "-"], input.as_bytes()),
        "over the configured cap",
    );
    assert_eq!(
        run(
            &["run", "--max-input-bytes", "100000", "-"],
            input.as_bytes()
        )
        .code,
        0
    );
    // Unreadable paths.
    assert_invalid(
        &run(&["run", "/nonexistent/case.json"], b""),
        "missing file",
    );
    assert_invalid(
        &run(&["run", d.to_str().expect("path")], b""),
        "a directory",
    );
}

#[test]
fn errors_name_the_position_or_path() {
    let o = run(
        &["run", "-"],
        b"{\"op\": \"policy\",\n \"policy\": {\"hardLimit\": tru}}",
    );
    assert_invalid(&o, "bad literal");
    assert!(o.stderr.contains("<stdin>:2:"), "{}", o.stderr);
    let case = json!({"op": "entry", "entries": [{"id": "r", "kind": "ToolExchange", "parts": [{"result": {"callId": "c", "value": {"u8": 256}}}]}]});
    let o = run(&["run", "-"], case.to_string().as_bytes());
    assert_invalid(&o, "u8 256");
    assert!(
        o.stderr.contains("$.entries[0].parts[0].result.value.u8"),
        "{}",
        o.stderr
    );
}
