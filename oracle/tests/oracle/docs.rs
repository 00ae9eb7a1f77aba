//! The documents tell the truth: every number, example answer, path and command that `README.md`
//! and `docs/*.md` show is checked here against the repository itself.
//!
//! * The README's sample `vectors` table: every row it shows (it may leave rows out with `...`)
//!   must be the row the CLI prints for the corpus in `vectors/` when every vector passes, and
//!   the summary line must name the corpus size. When vectors are added, the failure message
//!   names the row to change and its new text.
//! * The example `case.json` of the README and of `docs/WIRE.md`: both implementations must answer
//!   exactly what the README shows (abridged: every field shown must be equal) and what
//!   `docs/WIRE.md` shows (in full); the sizes and limits the prose states are recomputed.
//! * The corpus counts of `docs/WIRE.md` (hand-written / generated, the `verify` example).
//! * The lists of the wire operations (the table of the `ops` module docs, the README's, and
//!   `docs/PYTHON.md`'s) name every operation of the `operations!` list.
//! * Every repository path, Rust module path and `cargo test` / `cargo bench` target the
//!   documents name exists.
//! * `docs/SPEC.md` is self-contained (no document outside the repository, a glossary for the
//!   framework terms it uses), and no source or document cites an outside document.

#![allow(clippy::cast_possible_truncation, reason = "small counts")]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use hybrid_compaction_oracle::vectors::{render_table, TopicReport};
use hybrid_compaction_oracle::{run_case, Case, Engine, Implementation, Model};
use serde_json::{json, Value as Json};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("cannot read {rel}: {e}"))
}

/// Collapses every run of whitespace to one space, so prose can be searched across line breaks.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Fails with every message of `errors`, one per line.
fn assert_none(what: &str, errors: &[String]) {
    assert!(errors.is_empty(), "{what}:\n  {}", errors.join("\n  "));
}

// ---------------------------------------------------------------------------------------------
// Markdown

/// A fenced code block: its info string, the 1-based line number of its first content line, and
/// its content lines.
struct Block {
    lang: String,
    line: usize,
    lines: Vec<String>,
}

fn fenced_blocks(md: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in md.lines().enumerate() {
        match (line.trim_start().strip_prefix("```"), open.take()) {
            (Some(info), None) => {
                open = Some(Block {
                    lang: info.trim().to_owned(),
                    line: i + 2,
                    lines: Vec::new(),
                })
            }
            (Some(_), Some(block)) => out.push(block),
            (None, Some(mut block)) => {
                block.lines.push(line.to_owned());
                open = Some(block);
            }
            (None, None) => {}
        }
    }
    out
}

/// The inline code spans of `md` outside fenced blocks, with their line numbers.
fn inline_spans(md: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in md.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let (Some(span), Some(_)) = (parts.next(), parts.next()) {
            out.push((i + 1, span.to_owned()));
        }
    }
    out
}

/// Parses an abridged JSON example: lines that are just `...` are dropped, and so are the commas
/// they leave before a closing bracket.
fn parse_abridged(lines: &[String]) -> Json {
    let kept: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .filter(|l| l.trim() != "...")
        .collect();
    let text = kept.join("\n");
    let mut cleaned = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            in_string = c != '"' || escaped;
            escaped = c == '\\' && !escaped;
        } else if c == '"' {
            in_string = true;
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        cleaned.push(c);
    }
    serde_json::from_str(&cleaned).unwrap_or_else(|e| panic!("abridged JSON does not parse: {e}"))
}

/// Where `shown` differs from `actual`: objects may omit members, everything else is compared
/// whole.
fn abridged_differences(shown: &Json, actual: &Json, path: &str, out: &mut Vec<String>) {
    match (shown, actual) {
        (Json::Object(s), Json::Object(a)) => {
            for (k, v) in s {
                match a.get(k) {
                    Some(av) => abridged_differences(v, av, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k}: shown, but not in the answer")),
                }
            }
        }
        _ if shown == actual => {}
        _ => out.push(format!("{path}: shown {shown}, the answer is {actual}")),
    }
}

// ---------------------------------------------------------------------------------------------
// The corpus

/// Per topic (in file-name order, as the CLI runs them): the number of tests; per topic, its
/// `tcId`s; and the number of tests per flag across the corpus.
struct Corpus {
    topics: Vec<(String, usize)>,
    ids: BTreeMap<String, Vec<u64>>,
    flags: BTreeMap<String, usize>,
}

fn corpus() -> Corpus {
    let mut files: Vec<PathBuf> = fs::read_dir(root().join("vectors"))
        .expect("vectors/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut corpus = Corpus {
        topics: Vec::new(),
        ids: BTreeMap::new(),
        flags: BTreeMap::new(),
    };
    for file in files {
        let text = fs::read_to_string(&file).expect("vector file");
        let v: Json = serde_json::from_str(&text).expect("vector file is JSON");
        let topic = v["topic"].as_str().expect("topic").to_owned();
        let n = v["numberOfTests"].as_u64().expect("numberOfTests") as usize;
        corpus.topics.push((topic.clone(), n));
        let ids = corpus.ids.entry(topic).or_default();
        for group in v["testGroups"].as_array().expect("testGroups") {
            for test in group["tests"].as_array().expect("tests") {
                ids.push(test["tcId"].as_u64().expect("tcId"));
                for flag in test["flags"].as_array().expect("flags") {
                    let flag = flag.as_str().expect("flag").to_owned();
                    *corpus.flags.entry(flag).or_default() += 1;
                }
            }
        }
    }
    corpus
}

impl Corpus {
    fn total(&self) -> usize {
        self.topics.iter().map(|(_, n)| n).sum()
    }

    fn count(&self, topic: &str) -> usize {
        self.topics
            .iter()
            .find(|(t, _)| t == topic)
            .map_or(0, |(_, n)| *n)
    }
}

const IMPLEMENTATIONS: [&dyn Implementation; 2] = [&Model, &Engine];

#[test]
fn readme_table_shows_what_the_cli_prints_for_the_corpus() {
    let readme = read("README.md");
    let corpus = corpus();
    let reports: Vec<TopicReport> = corpus
        .topics
        .iter()
        .map(|(topic, n)| TopicReport {
            topic: topic.clone(),
            total: *n,
            passed: vec![*n; IMPLEMENTATIONS.len()],
            failures: Vec::new(),
        })
        .collect();
    let printed = render_table(&reports, &IMPLEMENTATIONS);
    let row_of = |key: &str| {
        printed
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))
    };
    let block = fenced_blocks(&readme)
        .into_iter()
        .find(|b| b.lang == "text" && b.lines.first().is_some_and(|l| l.starts_with("topic")))
        .expect("README.md shows the vectors table in a ```text block starting with `topic`");
    let mut errors = Vec::new();
    let mut shown = Vec::new();
    for (i, line) in block.lines.iter().enumerate() {
        let at = block.line + i;
        let Some(key) = line.split_whitespace().next() else {
            continue;
        };
        if key == "..." {
            continue;
        }
        if let Some(n) = line
            .strip_suffix(": all passed")
            .and(key.parse::<usize>().ok())
        {
            if n != corpus.total() || !line.contains(" vectors x 2 implementation(s) in ") {
                errors.push(format!(
                    "README.md line {at}: the summary must read `{} vectors x 2 \
                     implementation(s) in <time>: all passed`",
                    corpus.total()
                ));
            }
            continue;
        }
        shown.push(key.to_owned());
        match row_of(key) {
            Some(row) if row == line => {}
            Some(row) => errors.push(format!("README.md line {at}: change the row to `{row}`")),
            None => errors.push(format!(
                "README.md line {at}: topic `{key}` is not in vectors/: remove the row"
            )),
        }
    }
    for required in ["topic", "TOTAL"] {
        if !shown.iter().any(|k| k == required) {
            errors.push(format!(
                "README.md: the table must show the `{required}` row"
            ));
        }
    }
    assert_none(
        "the README's vectors table is not what `cargo run --release -- vectors` prints",
        &errors,
    );
}

// ---------------------------------------------------------------------------------------------
// The example case

/// The `case.json` heredoc of `md` and the index of its block.
fn example_case(md: &str, name: &str) -> (Json, usize) {
    let blocks = fenced_blocks(md);
    for (index, block) in blocks.iter().enumerate() {
        if let Some(start) = block
            .lines
            .iter()
            .position(|l| l.starts_with("cat > case.json <<'JSON'"))
        {
            let body: Vec<&str> = block.lines[start + 1..]
                .iter()
                .map(String::as_str)
                .take_while(|l| *l != "JSON")
                .collect();
            let case = serde_json::from_str(&body.join("\n"))
                .unwrap_or_else(|e| panic!("{name}: the example case.json does not parse: {e}"));
            return (case, index);
        }
    }
    panic!("{name}: no `cat > case.json <<'JSON'` example");
}

/// The answer of `imp` to `case`, as JSON.
fn answer(case: &Json, imp: &dyn Implementation) -> Json {
    let case: Case = serde_json::from_value(case.clone()).expect("the example is a valid case");
    let out = run_case(&case, imp).expect("the example runs");
    serde_json::to_value(out).expect("outputs serialize")
}

/// What the prose around the example states, recomputed: per-entry sizes, limits, the proposal.
struct Facts {
    sizes: Vec<String>,
    total: i64,
    hard_limit: i64,
    margin: i64,
    proposal: Vec<String>,
}

fn facts(case: &Json) -> Facts {
    let evaluate = json!({"op": "evaluate", "policy": case["policy"], "entries": case["entries"]});
    let evaluation = &answer(&evaluate, &Model)["evaluation"];
    let sizes = evaluation["entrySizes"].as_array().expect("entrySizes");
    Facts {
        sizes: sizes.iter().map(Json::to_string).collect(),
        total: evaluation["estimatedSize"].as_i64().expect("estimatedSize"),
        hard_limit: case["policy"]["hardLimit"].as_i64().expect("hardLimit"),
        margin: case["policy"]["triggerMargin"]
            .as_i64()
            .expect("triggerMargin"),
        proposal: case["reducer"]["steps"][0]["propose"]
            .as_array()
            .expect("the example's reducer proposes once")
            .iter()
            .map(|id| format!("`{}`", id.as_str().expect("an id")))
            .collect(),
    }
}

/// The sentences of `md` that must appear (whitespace-insensitive) but do not.
fn missing_sentences(md: &str, name: &str, sentences: &[String]) -> Vec<String> {
    let text = flat(md);
    sentences
        .iter()
        .filter(|s| !text.contains(s.as_str()))
        .map(|s| format!("{name}: the prose must say \"{s}\""))
        .collect()
}

#[test]
fn readme_example_answers_as_shown() {
    let readme = read("README.md");
    let (case, index) = example_case(&readme, "README.md");
    let blocks = fenced_blocks(&readme);
    let shown_block = blocks[index + 1..]
        .iter()
        .find(|b| b.lang == "json")
        .expect("README.md shows the example's answer in a ```json block after the case");
    let shown = parse_abridged(&shown_block.lines);
    let mut errors = Vec::new();
    for imp in IMPLEMENTATIONS {
        let mut diffs = Vec::new();
        abridged_differences(&shown, &answer(&case, imp), "$", &mut diffs);
        errors.extend(diffs.into_iter().map(|d| {
            format!(
                "README.md answer (line {}), {}: {d}",
                shown_block.line,
                imp.name()
            )
        }));
    }
    let f = facts(&case);
    errors.extend(missing_sentences(
        &readme,
        "README.md",
        &[format!(
            "a history of {} UTF-8 bytes against a hard limit of {} and a trigger margin of {}, \
             with a reducer that proposes keeping {}",
            f.sizes.join(" + "),
            f.hard_limit,
            f.margin,
            f.proposal.join(" and ")
        )],
    ));
    let (wire_case, _) = example_case(&read("docs/WIRE.md"), "docs/WIRE.md");
    if wire_case != case {
        errors.push(
            "README.md says the full output is in docs/WIRE.md, but the two example cases differ"
                .to_owned(),
        );
    }
    assert_none(
        "the README's example is not what the oracle answers",
        &errors,
    );
}

#[test]
fn wire_example_is_the_full_answer() {
    let wire = read("docs/WIRE.md");
    let (case, index) = example_case(&wire, "docs/WIRE.md");
    let blocks = fenced_blocks(&wire);
    let shown_block = blocks[index + 1..]
        .iter()
        .find(|b| b.lang == "json")
        .expect("docs/WIRE.md shows the example's answer in a ```json block after the case");
    let shown: Json = serde_json::from_str(&shown_block.lines.join("\n")).expect("full JSON");
    let mut errors = Vec::new();
    for imp in IMPLEMENTATIONS {
        let actual = answer(&case, imp);
        if shown != actual {
            errors.push(format!(
                "docs/WIRE.md line {}: {} answers\n{}",
                shown_block.line,
                imp.name(),
                serde_json::to_string_pretty(&actual).expect("JSON")
            ));
        }
    }
    let f = facts(&case);
    let final_size = answer(&case, &Model)["assembly"]["finalEstimatedSize"].clone();
    errors.extend(missing_sentences(
        &wire,
        "docs/WIRE.md",
        &[
            format!(
                "The history measures {} = {} UTF-8 bytes, at or above the trigger threshold \
                 {} - {} = {}",
                f.sizes.join(" + "),
                f.total,
                f.hard_limit,
                f.margin,
                f.hard_limit - f.margin
            ),
            format!("fits ({final_size} <= {})", f.hard_limit),
        ],
    ));
    assert_none(
        "docs/WIRE.md's example is not what the oracle answers",
        &errors,
    );
}

#[test]
fn wire_counts_match_the_corpus() {
    let wire = read("docs/WIRE.md");
    let corpus = corpus();
    let verify = corpus.count("verify");
    let flag = |f: &str| corpus.flags.get(f).copied().unwrap_or(0);
    let errors = missing_sentences(
        &wire,
        "docs/WIRE.md",
        &[
            format!(
                "{} vectors: {} hand-written and {} generated.",
                corpus.total(),
                flag("HandWritten"),
                flag("Generated")
            ),
            format!("\"topic\": \"verify\", \"numberOfTests\": {verify},"),
            format!("which prints `verify: {verify}/{verify} passed, failed tcIds: []`"),
        ],
    );
    assert_none("docs/WIRE.md's corpus counts are stale", &errors);
}

/// The text of `flat_text` between `start` and the next `end`.
fn between<'a>(flat_text: &'a str, start: &str, end: char) -> &'a str {
    let (_, rest) = flat_text
        .split_once(start)
        .unwrap_or_else(|| panic!("docs/WIRE.md no longer says \"{start}\""));
    rest.split(end).next().unwrap_or_default()
}

/// The backticked words of `text`.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

#[test]
fn wire_topics_and_tc_id_ranges_match_the_corpus() {
    let wire = flat(&read("docs/WIRE.md"));
    let corpus = corpus();
    let mut errors = Vec::new();
    let mut listed = backticked(between(&wire, "One file per topic: ", '.'));
    let mut topics: Vec<&str> = corpus.topics.iter().map(|(t, _)| t.as_str()).collect();
    listed.sort_unstable();
    topics.sort_unstable();
    if listed != topics {
        errors.push(format!(
            "docs/WIRE.md lists the topics {listed:?}; vectors/ has {topics:?}"
        ));
    }
    // "`entries` 1001+, `artifacts` 1501+, ...": each topic's ids lie in [its start, next start).
    let ranges = between(&wire, "each topic owns a range (", ')');
    let mut starts: Vec<(u64, &str)> = ranges
        .split(',')
        .filter_map(|item| {
            let topic = *backticked(item).first()?;
            let start = item.rsplit('`').next()?.trim().strip_suffix('+')?;
            Some((start.parse().ok()?, topic))
        })
        .collect();
    starts.sort_unstable();
    for (i, (start, topic)) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(u64::MAX, |(next, _)| *next);
        let ids = corpus
            .ids
            .get(*topic)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for id in ids.iter().filter(|id| !(*start..end).contains(*id)) {
            errors.push(format!(
                "tcId {id} of `{topic}` is outside the range docs/WIRE.md gives it ({start}..{end})"
            ));
        }
    }
    if starts.len() != topics.len() {
        errors.push(format!(
            "docs/WIRE.md gives {} tcId ranges for {} topics",
            starts.len(),
            topics.len()
        ));
    }
    assert_none("docs/WIRE.md's topics and tcId ranges are stale", &errors);
}

/// The backticked words of `flat_text` between `start` and the next `end`, in `file`.
fn listed_after<'a>(flat_text: &'a str, file: &str, start: &str, end: char) -> Vec<&'a str> {
    let (_, rest) = flat_text
        .split_once(start)
        .unwrap_or_else(|| panic!("{file} no longer says \"{start}\""));
    backticked(rest.split(end).next().unwrap_or_default())
}

/// Every list of the wire operations names each operation of the `operations!` list
/// (`ops::OPERATIONS`, the names the `Case` enum reads) once: the table of the `ops` module
/// docs in the same order, the README's and `docs/PYTHON.md`'s lists in any order.
#[test]
fn operation_lists_name_every_operation() {
    let truth: Vec<&str> = hybrid_compaction_oracle::OPERATIONS.to_vec();
    let mut sorted_truth = truth.clone();
    sorted_truth.sort_unstable();
    let mut errors = Vec::new();
    let ops = read("oracle/src/ops/mod.rs");
    let table: Vec<&str> = ops
        .lines()
        .filter_map(|l| l.strip_prefix("//! | `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    if table != truth {
        errors.push(format!(
            "oracle/src/ops/mod.rs: the module docs' table lists {table:?}; the operations are, in order, {truth:?}"
        ));
    }
    let readme = flat(&read("README.md"));
    let python = flat(&read("docs/PYTHON.md"));
    for (file, mut listed) in [
        (
            "README.md",
            listed_after(&readme, "README.md", "A case names an operation (", ')'),
        ),
        (
            "docs/PYTHON.md",
            listed_after(&python, "docs/PYTHON.md", "any wire case (", ')'),
        ),
    ] {
        listed.sort_unstable();
        if listed != sorted_truth {
            errors.push(format!(
                "{file} lists the operations {listed:?}; they are {sorted_truth:?}"
            ));
        }
    }
    assert_none("a list of the operations is stale", &errors);
}

// ---------------------------------------------------------------------------------------------
// Paths, module paths and cargo targets named by the documents

/// The documents checked: the README and every `docs/*.md`.
fn documents() -> Vec<String> {
    let mut docs: Vec<String> = fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| format!("docs/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    docs.sort();
    docs.insert(0, "README.md".to_owned());
    docs
}

/// The spans and shell lines of a document that may name paths or commands, with line numbers.
fn code_snippets(md: &str) -> Vec<(usize, String)> {
    let mut out = inline_spans(md);
    for block in fenced_blocks(md) {
        if block.lang == "sh" {
            out.extend(
                block
                    .lines
                    .iter()
                    .enumerate()
                    .map(|(i, l)| (block.line + i, l.clone())),
            );
        }
    }
    out
}

/// Top-level entries a repository path in a document starts with.
const TOP: &[&str] = &[
    ".ci", "benches", "docs", "fuzz", "model", "oracle", "src", "tests", "vectors",
];

/// Build and fuzzing outputs, not in the repository.
const GENERATED: &[&str] = &["fuzz/target", "fuzz/corpus", "fuzz/artifacts"];

/// Whether `rel` (possibly with one `*` in its last segment) names something in the repository.
fn exists(rel: &str) -> bool {
    let rel = rel.trim_end_matches('/');
    let Some((dir, pattern)) = rel.rsplit_once('/').filter(|(_, last)| last.contains('*')) else {
        return root().join(rel).exists();
    };
    let (prefix, suffix) = pattern.split_once('*').expect("a star");
    fs::read_dir(root().join(dir)).is_ok_and(|rd| {
        rd.flatten().any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.len() >= prefix.len() + suffix.len()
                && name.starts_with(prefix)
                && name.ends_with(suffix)
        })
    })
}

/// The crates of the workspace: (Rust name, package name, directory).
const CRATES: &[(&str, &str, &str)] = &[
    ("hybrid_compaction", "hybrid-compaction", "."),
    (
        "hybrid_compaction_model",
        "hybrid-compaction-model",
        "model",
    ),
    (
        "hybrid_compaction_spec",
        "hybrid-compaction-spec",
        "model/spec",
    ),
    (
        "hybrid_compaction_oracle",
        "hybrid-compaction-oracle",
        "oracle",
    ),
    (
        "hybrid_compaction_loom",
        "hybrid-compaction-loom",
        "tests/loom",
    ),
    (
        "hybrid_compaction_vectors",
        "hybrid-compaction-vectors",
        "vectors",
    ),
];

/// Why the module path `token` (`crate::module::...`) does not resolve to a source file, if it
/// names one of our crates.
fn module_path_error(token: &str) -> Option<String> {
    let mut segments = token.split("::");
    let krate = segments.next()?;
    let (_, _, dir) = CRATES.iter().find(|(name, _, _)| *name == krate)?;
    let mut dir = root().join(dir).join("src");
    for (depth, seg) in segments.enumerate() {
        let is_module = !seg.is_empty() && seg.chars().all(|c| c.is_ascii_lowercase() || c == '_');
        if !is_module {
            return None;
        }
        if dir.join(seg).join("mod.rs").exists() {
            dir = dir.join(seg);
        } else if dir.join(format!("{seg}.rs")).exists() || depth > 0 {
            return None; // a file module (its items are not checked) or an item of `dir`
        } else {
            return Some(format!("`{token}`: crate `{krate}` has no module `{seg}`"));
        }
    }
    None
}

/// The test and bench targets of a package directory.
fn targets(dir: &str, kind: &str) -> Vec<String> {
    let Ok(rd) = fs::read_dir(root().join(dir).join(kind)) else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "rs") {
                Some(p.file_stem()?.to_string_lossy().into_owned())
            } else if p.join("main.rs").exists() {
                Some(p.file_name()?.to_string_lossy().into_owned())
            } else {
                None
            }
        })
        .collect()
}

fn glob_match(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((prefix, suffix)) => {
            name.len() >= prefix.len() + suffix.len()
                && name.starts_with(prefix)
                && name.ends_with(suffix)
        }
    }
}

/// Why the `cargo test` / `cargo bench` command `line` names a target its package does not have.
/// Without `-p`, cargo builds the default member (the oracle); `--workspace` means every package.
fn cargo_command_errors(line: &str) -> Vec<String> {
    let Some(start) = line.find("cargo test").or_else(|| line.find("cargo bench")) else {
        return Vec::new();
    };
    if line.contains("cd fuzz") {
        return Vec::new(); // the fuzz workspace
    }
    let words: Vec<&str> = line[start..]
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"'))
        .take_while(|w| *w != "--")
        .collect();
    let value_of = |flag: &str| {
        words
            .windows(2)
            .filter(|w| w[0] == flag)
            .map(|w| w[1])
            .collect::<Vec<_>>()
    };
    let packages: Vec<&str> = if words.contains(&"--workspace") {
        CRATES.iter().map(|(_, p, _)| *p).collect()
    } else {
        let named = [value_of("-p"), value_of("--package")].concat();
        if named.is_empty() {
            vec!["hybrid-compaction-oracle"]
        } else {
            named
        }
    };
    let mut errors = Vec::new();
    for (flag, kind) in [("--test", "tests"), ("--bench", "benches")] {
        for pattern in value_of(flag) {
            let found = packages.iter().any(|p| {
                CRATES
                    .iter()
                    .filter(|(_, name, _)| name == p)
                    .any(|(_, _, dir)| targets(dir, kind).iter().any(|t| glob_match(pattern, t)))
            });
            if !found {
                errors.push(format!(
                    "`{flag} {pattern}` matches no target of {packages:?} (add `-p <package>`)"
                ));
            }
        }
    }
    errors
}

#[test]
fn documents_name_only_paths_modules_and_targets_that_exist() {
    let mut errors = Vec::new();
    for doc in documents() {
        for (line, snippet) in code_snippets(&read(&doc)) {
            for e in cargo_command_errors(&snippet) {
                errors.push(format!("{doc} line {line}: {e}"));
            }
            for word in snippet.split(|c: char| c.is_whitespace() || "()\"',;`".contains(c)) {
                let token = word.trim_end_matches(['.', ':']);
                if let Some(e) = module_path_error(token) {
                    errors.push(format!("{doc} line {line}: {e}"));
                }
                let is_path = token.contains('/')
                    && TOP.contains(&token.split('/').next().unwrap_or(""))
                    && !token.contains(['<', '{', '$', '=', '…'])
                    && !token.contains("...")
                    && !GENERATED.iter().any(|g| token.starts_with(g));
                if is_path && !exists(token) {
                    errors.push(format!("{doc} line {line}: `{token}` does not exist"));
                }
            }
        }
    }
    assert_none("documents name things that do not exist", &errors);
}

// ---------------------------------------------------------------------------------------------
// Self-containment

/// Citations of documents that are not in the repository, found in `text`.
fn outside_citations(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for marker in [
        "REFERENCE-SEMANTICS",
        "SPEC-NODE",
        "../shared",
        "/work/",
        "issue #",
    ] {
        if text.contains(marker) {
            found.push(marker.to_owned());
        }
    }
    let chars: Vec<char> = text.chars().collect();
    for (i, w) in chars.windows(7).enumerate() {
        let issue: String = w[..6].iter().collect();
        if issue.eq_ignore_ascii_case("issue ") && w[6].is_ascii_digit() {
            found.push(chars[i..(i + 8).min(chars.len())].iter().collect());
        }
    }
    // A sub-clause of the C# digest (`S27.4`): the digest's own numbering, not a SPEC clause.
    for (i, c) in chars.iter().enumerate() {
        let starts = *c == 'S' && (i == 0 || !chars[i - 1].is_alphanumeric());
        if !starts {
            continue;
        }
        let digits = chars[i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let after = i + 1 + digits;
        if digits > 0
            && chars.get(after) == Some(&'.')
            && chars.get(after + 1).is_some_and(char::is_ascii_digit)
        {
            found.push(chars[i..after + 2].iter().collect());
        }
    }
    found
}

/// Terms of the host framework the SPEC uses, each of which its glossary must define.
const GLOSSARY_TERMS: &[&str] = &[
    "Bundle lane",
    "Capability",
    "Check site",
    "Delivery phase",
    "Durable reference",
    "Outer run",
    "Profile",
    "Provider",
    "Recovered body",
    "Trust binding",
];

#[test]
fn spec_is_self_contained() {
    let spec = read("docs/SPEC.md");
    let mut errors: Vec<String> = outside_citations(&spec)
        .into_iter()
        .map(|c| format!("docs/SPEC.md cites `{c}`, which is outside the repository"))
        .collect();
    let glossary = spec
        .split_once("## Appendix B. Glossary")
        .map(|(_, g)| g)
        .unwrap_or_default();
    for term in GLOSSARY_TERMS {
        if !glossary.contains(&format!("\n**{term}")) {
            errors.push(format!(
                "docs/SPEC.md: the glossary does not define `{term}`"
            ));
        }
    }
    assert_none("docs/SPEC.md is not self-contained", &errors);
}

/// Source files that still cite an outside document, to be rewritten to cite SPEC clauses. Each
/// entry must still contain a citation: delete it when the file is fixed.
const PENDING: &[&str] = &[];

/// Every `.rs`, `.md`, `.json` and `.toml` file of the repository (build outputs excluded).
fn repository_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for entry in rd.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != ".git" && name != "corpus" && name != "artifacts" {
                repository_files(&path, out);
            }
        } else if path
            .extension()
            .is_some_and(|x| ["rs", "md", "json", "toml"].iter().any(|e| x == *e))
        {
            out.push(path);
        }
    }
}

#[test]
fn no_file_cites_an_outside_document() {
    let root = root();
    let mut files = Vec::new();
    repository_files(&root, &mut files);
    let mut errors = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(&root)
            .expect("below the root")
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "oracle/tests/oracle/docs.rs" {
            continue; // names the markers it looks for
        }
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        let found = outside_citations(&text);
        let pending = PENDING.contains(&rel.as_str());
        if !found.is_empty() && !pending {
            errors.push(format!(
                "{rel} cites {found:?}: cite the SPEC clause instead"
            ));
        }
        if found.is_empty() && pending {
            errors.push(format!(
                "{rel} is fixed: remove it from PENDING in oracle/tests/oracle/docs.rs"
            ));
        }
    }
    assert_none("sources cite documents outside the repository", &errors);
}

/// The install commands of the README and `docs/ANY-LANGUAGE.md` build with `--profile dist`:
/// the workspace defines that profile, as the release profile optimized across crates
/// (`docs/PERFORMANCE.md`, "Trace checking", measures what it gains).
#[test]
fn install_commands_name_the_dist_profile_the_workspace_defines() {
    for doc in ["README.md", "docs/ANY-LANGUAGE.md"] {
        assert!(
            read(doc).contains("cargo install --path oracle --profile dist"),
            "{doc} installs without the dist profile"
        );
    }
    assert_profile(
        "Cargo.toml",
        "dist",
        &[
            "inherits = \"release\"",
            "lto = \"fat\"",
            "codegen-units = 1",
        ],
    );
}

/// The Python wheel's own workspace optimizes its release builds across crates too (the wheels
/// workflow and the documented source build use `maturin build --release`).
#[test]
fn release_wheels_are_optimized_across_crates() {
    assert!(read("docs/PYTHON.md").contains("maturin build --release -m python/Cargo.toml"));
    assert_profile(
        "python/Cargo.toml",
        "release",
        &["lto = \"fat\"", "codegen-units = 1"],
    );
}

/// `manifest` defines `[profile.<name>]` with every one of `lines`.
fn assert_profile(manifest: &str, name: &str, lines: &[&str]) {
    let text = read(manifest);
    let profile = text
        .split_once(&format!("\n[profile.{name}]\n"))
        .map(|(_, rest)| rest.split("\n[").next().unwrap_or(rest))
        .unwrap_or_else(|| panic!("{manifest} defines no [profile.{name}]"));
    for line in lines {
        assert!(
            profile.lines().any(|l| l.trim() == *line),
            "{manifest}: [profile.{name}] lacks `{line}`"
        );
    }
}
