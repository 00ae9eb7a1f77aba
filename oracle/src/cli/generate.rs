//! `hybrid-compaction vectors generate`: topic sources in, vector files (and pins) out.
//!
//! Reads the hand-written topics from `<corpus>/source/`, builds each requested topic with the
//! model ([`crate::corpus`]), checks every vector against the pin ledger (`<corpus>/pins/`), and
//! writes only where it is told: stdout, one file, or a directory. Into the corpus directory
//! itself it writes only the topic files whose bytes change, refuses to drop a published tcId,
//! and pins the new tcIds; so adding one vector to one source rewrites one vector file and adds
//! one line to `PINS.json`, and `--topic` never touches another topic's file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::Args;

use super::{failed, invalid, quietly, Expected, Failure};
use crate::corpus::pins::{self, Ledger, PinStatus};
use crate::corpus::{self, VectorFile};

pub(super) const GENERATE_EXAMPLE: &str = r#"Examples:
  hybrid-compaction vectors generate --topic verify               # one topic to stdout
  hybrid-compaction vectors generate --topic verify --out vectors/  # rewrite vectors/verify.json, pin new tcIds
  hybrid-compaction vectors generate --out vectors/               # every topic (only changed files are written)
  hybrid-compaction vectors generate --out /tmp/v                 # all topics into another directory
  hybrid-compaction vectors generate --topic generated --seed 7 --count 50   # a scratch generated set

Hand-written topics are read from <corpus>/source/<topic>.json (run from the repository root, or
pass --corpus). Expected outputs come from the model; each hand-written case must also match its
hand-computed partial expectation, and no published tcId may change its case or expected output
(<corpus>/pins/PINS.json), or generation is refused (exit 1). Review the diff before committing."#;

#[derive(Debug, Args)]
pub(super) struct GenerateArgs {
    /// Only this topic (to stdout unless --out names a file or a directory).
    #[arg(long)]
    topic: Option<String>,
    /// Output directory (every topic, or --topic's file in it), or file (with --topic); `-` for
    /// stdout. Writing into the corpus directory also pins new tcIds.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The corpus directory: its `source/` holds the hand-written topics, its `pins/` the pinned
    /// and retired tcIds.
    #[arg(long, value_name = "DIR", default_value = "vectors")]
    corpus: PathBuf,
    /// Seed of the generated topic (another seed than the published one makes a scratch set).
    #[arg(long, default_value_t = corpus::DEFAULT_SEED)]
    seed: u64,
    /// Number of generated cases (1 to 100000: the whole corpus is built in memory).
    #[arg(long, default_value_t = corpus::DEFAULT_COUNT, value_parser = generated_count)]
    count: usize,
}

/// `--count`: a bounded number of generated cases, so a typo cannot exhaust memory.
fn generated_count(text: &str) -> Result<usize, Expected> {
    match text.parse::<usize>() {
        Ok(n) if (1..=corpus::MAX_COUNT).contains(&n) => Ok(n),
        _ => Err(Expected::new(format!(
            "a whole number from 1 to {}",
            corpus::MAX_COUNT
        ))),
    }
}

/// Where the generated files go.
enum Destination {
    Stdout,
    File(PathBuf),
    Dir(PathBuf),
}

/// Whether `a` and `b` name the same existing directory.
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The text of a vector file as committed.
fn render(f: &VectorFile) -> String {
    let mut s = serde_json::to_string_pretty(f).unwrap_or_default();
    s.push('\n');
    s
}

/// Writes `text` to `path` unless the file already holds exactly it; true if written.
fn write_if_changed(path: &Path, text: &str) -> Result<bool, Failure> {
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(false);
    }
    std::fs::write(path, text)
        .map_err(|e| invalid(format!("{}: cannot write: {e}", path.display())))?;
    Ok(true)
}

fn refused(problems: &[String]) -> Failure {
    failed(format!("generation refused: {}", problems.join(" | ")))
}

pub(super) fn cmd_generate(g: &GenerateArgs, out: &mut Vec<u8>) -> Result<(), Failure> {
    const CHOOSE: &str =
        "choose --topic NAME (printed to stdout) or --out DIR (every topic written there)";
    let destination = match (&g.topic, &g.out) {
        (None, None) => return Err(invalid(CHOOSE)),
        (None, Some(p)) if p.as_os_str() == "-" => {
            return Err(invalid(
                "--out - (stdout) prints one topic: add --topic NAME",
            ))
        }
        (None, Some(p)) => Destination::Dir(p.clone()),
        (Some(_), None) => Destination::Stdout,
        (Some(_), Some(p)) if p.as_os_str() == "-" => Destination::Stdout,
        (Some(_), Some(p)) if p.is_dir() => Destination::Dir(p.clone()),
        (Some(_), Some(p)) => Destination::File(p.clone()),
    };
    let into_corpus = match &destination {
        Destination::Stdout => false,
        Destination::Dir(d) => same_dir(d, &g.corpus),
        Destination::File(f) => {
            let parent = f.parent().filter(|p| !p.as_os_str().is_empty());
            same_dir(parent.unwrap_or(Path::new(".")), &g.corpus)
        }
    };
    let published_generated = g.seed == corpus::DEFAULT_SEED && g.count == corpus::DEFAULT_COUNT;
    let generated_included = g
        .topic
        .as_deref()
        .is_none_or(|t| t == corpus::GENERATED_TOPIC);
    if into_corpus && generated_included && !published_generated {
        return Err(invalid(format!(
            "{}: the published generated topic uses --seed {} --count {}; write a scratch set \
             outside the corpus directory",
            g.corpus.display(),
            corpus::DEFAULT_SEED,
            corpus::DEFAULT_COUNT
        )));
    }

    // The sources (not needed for the generated topic alone).
    let sources = if g.topic.as_deref() == Some(corpus::GENERATED_TOPIC) {
        Vec::new()
    } else {
        let dir = g.corpus.join(corpus::SOURCE_DIR);
        corpus::load_sources(&dir).map_err(|problems| {
            let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
            let hint = if dir.is_dir() {
                String::new()
            } else {
                " (generation reads the hand-written topics from <corpus>/source/: run it from the \
                 repository root, or pass --corpus DIR)"
                    .to_owned()
            };
            invalid(format!("{}{hint}", lines.join(" | ")))
        })?
    };
    if let Some(t) = &g.topic {
        let names = corpus::topic_names(&sources);
        if t != corpus::GENERATED_TOPIC && !names.contains(t) {
            return Err(invalid(format!(
                "unknown topic {t:?}; topics: {}",
                names.join(", ")
            )));
        }
    }
    if let (Destination::File(f), true, Some(t)) = (&destination, into_corpus, &g.topic) {
        let expected = format!("{t}.json");
        if f.file_name().is_none_or(|n| n != expected.as_str()) {
            return Err(invalid(format!(
                "{}: in the corpus directory, the file of topic {t} is {expected}",
                f.display()
            )));
        }
    }

    let files = quietly(|| corpus::build_all(&sources, g.seed, g.count, g.topic.as_deref()))
        .map_err(|problems| refused(&problems))?;

    // The pins: every published vector keeps its digest; new tcIds are collected.
    let checks_pins = g.topic.as_deref() != Some(corpus::GENERATED_TOPIC) || published_generated;
    let mut ledger = if checks_pins {
        Some(Ledger::load(&g.corpus).map_err(|e| {
            invalid(format!(
                "{e} (generation checks every tcId against <corpus>/pins/: run it from the \
                 repository root, or pass --corpus DIR)"
            ))
        })?)
    } else {
        None
    };
    let mut new_pins: BTreeMap<u32, String> = BTreeMap::new();
    if let Some(ledger) = &ledger {
        let mut problems = Vec::new();
        for f in &files {
            if f.topic == corpus::GENERATED_TOPIC && !published_generated {
                continue; // a scratch set: not the published vectors
            }
            for (tc_id, digest) in pins::digests(f) {
                match ledger.status(tc_id, &digest) {
                    PinStatus::Pinned => {}
                    PinStatus::New => {
                        new_pins.insert(tc_id, digest);
                    }
                    status => problems.push(ledger.refusal(&f.topic, tc_id, &status, &digest)),
                }
            }
        }
        if into_corpus {
            problems.extend(dropped_tc_ids(&g.corpus, &files, ledger));
        }
        if !problems.is_empty() {
            return Err(refused(&problems));
        }
    }

    let mut written_any = false;
    match &destination {
        Destination::Stdout => out.extend(render(&files[0]).as_bytes()),
        Destination::File(p) => {
            written_any = write_if_changed(p, &render(&files[0]))?;
            eprintln!(
                "{}: {}",
                p.display(),
                if written_any { "written" } else { "up to date" }
            );
        }
        Destination::Dir(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| invalid(format!("{}: cannot create: {e}", dir.display())))?;
            let mut written = Vec::new();
            for f in &files {
                let name = format!("{}.json", f.topic);
                if write_if_changed(&dir.join(&name), &render(f))? {
                    written.push(name);
                }
            }
            written_any = !written.is_empty();
            let n: usize = files.iter().map(|f| f.number_of_tests).sum();
            eprintln!(
                "{}: {} of {} topic files ({n} vectors) written{}",
                dir.display(),
                written.len(),
                files.len(),
                if written.is_empty() {
                    " (every file was up to date)".to_owned()
                } else {
                    format!(": {}", written.join(", "))
                }
            );
        }
    }
    match (&mut ledger, into_corpus) {
        (Some(ledger), true) => {
            if !new_pins.is_empty() {
                written_any = true;
                let ids: Vec<String> = new_pins.keys().map(u32::to_string).collect();
                let shown = if ids.len() <= 10 {
                    ids.join(", ")
                } else {
                    format!("{} ... {}", ids[..5].join(", "), ids[ids.len() - 1])
                };
                ledger.pins.extend(new_pins);
                write_if_changed(
                    &g.corpus.join(pins::PINS_FILE),
                    &pins::render_pins(&ledger.pins),
                )?;
                eprintln!(
                    "{}: pinned {} new tcId(s): {shown}",
                    ledger.pins_name,
                    ids.len()
                );
            }
            if written_any {
                eprintln!("review the diff before committing");
            }
        }
        (_, false) if !matches!(destination, Destination::Stdout) => {
            eprintln!(
                "not the corpus directory ({}): no pins written",
                g.corpus.display()
            );
        }
        _ => {}
    }
    Ok(())
}

/// The published tcIds (in the corpus directory's current files of the topics being written)
/// that the new files would drop without their being retired.
fn dropped_tc_ids(corpus_dir: &Path, files: &[VectorFile], ledger: &Ledger) -> Vec<String> {
    let mut problems = Vec::new();
    for f in files {
        let path = corpus_dir.join(format!("{}.json", f.topic));
        let Ok(old) = corpus::load_file(&path) else {
            continue; // a new topic, or a file the vectors test will refuse anyway
        };
        let kept: BTreeSet<u32> = f
            .test_groups
            .iter()
            .flat_map(|g| g.tests.iter().map(|t| t.tc_id))
            .collect();
        for tc_id in old
            .test_groups
            .iter()
            .flat_map(|g| g.tests.iter().map(|t| t.tc_id))
        {
            if !kept.contains(&tc_id) && !ledger.retired.contains_key(&tc_id) {
                problems.push(format!(
                    "tcId {tc_id} [{}]: would disappear from {}: a published tcId is never \
                     removed. Keep its test in the topic's source, or retire it (add \
                     \"{tc_id}\": \"<why>\" to {}) if its behaviour must change",
                    f.topic,
                    path.display(),
                    ledger.retired_name
                ));
            }
        }
    }
    problems
}
