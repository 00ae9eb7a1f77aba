//! Pinned tcIds: a published tcId never changes its case or its expected output.
//!
//! Implementers file bugs by tcId ("we fail 4017"), so a tcId must mean the same vector in every
//! version of the corpus. Two committed files record that promise, next to the published vectors
//! (in a folder of their own, so that `vectors/*.json` stays exactly the vector files):
//!
//! * `vectors/pins/PINS.json`: `{"<tcId>": "<digest>", ...}`, one line per vector ever published,
//!   in tcId order. The digest ([`digest`]) is the SHA-256 (lowercase hex) of the canonical JSON
//!   ([`canonical_json`]) of `{"case": <effective case>, "expected": <expected output>}`: the case
//!   with its group's policy filled in where a harness fills it in (`docs/WIRE.md`, "Group policy
//!   inheritance"), and the output with `error.message` removed, since messages are informative
//!   and never compared. A comment, a clause list, a flag or a group description may change; what
//!   an implementation is judged on may not.
//! * `vectors/pins/RETIRED.json`: `{"<tcId>": "<reason>", ...}`, initially `{}`. A vector whose
//!   expectation must change (a SPEC change) is retired: its test leaves its source, its tcId goes
//!   here with the reason and is never used again, its pin stays (a record of what it meant), and
//!   the new behaviour is a new test with a new tcId.
//!
//! [`check`] enforces the rules on the committed corpus (`oracle/src/corpus/tests.rs` runs it), and
//! `hybrid-compaction vectors generate` applies them before writing: it refuses a vector whose
//! tcId is pinned with another digest or is retired, and appends the pins of new tcIds when it
//! writes into the corpus directory.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value as Json;
use sha2::{Digest as _, Sha256};

use super::file::{PolicyInput, TestVector, VectorFile};
use super::run::comparable;
use crate::wire::strict;

/// The pin file, relative to the corpus directory.
pub(crate) const PINS_FILE: &str = "pins/PINS.json";
/// The retired tcIds, relative to the corpus directory.
pub(crate) const RETIRED_FILE: &str = "pins/RETIRED.json";

/// The committed promises about tcIds: the pins and the retired ids, with the names of the files
/// they were read from (for messages).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Ledger {
    /// The corpus directory the ledger belongs to (`vectors`), for messages.
    pub dir: String,
    /// Where the pins live (`vectors/pins/PINS.json`).
    pub pins_name: String,
    /// Where the retired tcIds live (`vectors/pins/RETIRED.json`).
    pub retired_name: String,
    /// tcId -> digest of the vector published under it.
    pub pins: BTreeMap<u32, String>,
    /// tcId -> why it was retired.
    pub retired: BTreeMap<u32, String>,
}

/// What the ledger says about a vector built under a tcId.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PinStatus {
    /// Pinned with this very digest: the vector is the published one.
    Pinned,
    /// Not pinned yet: a new vector (pinned when written into the corpus).
    New,
    /// Pinned with another digest: the vector would change what the tcId means.
    Changed {
        /// The pinned digest.
        pinned: String,
    },
    /// The tcId is retired: it may not be used again.
    Retired {
        /// Why it was retired.
        reason: String,
    },
}

/// Why a pin file or a retired-tcId file cannot be read: the file, where in it (`:line:column`
/// or `: $.<tcId>`, when known), and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LedgerError {
    file: String,
    at: String,
    problem: String,
}

impl LedgerError {
    fn new(file: &str, at: impl Into<String>, problem: impl Into<String>) -> LedgerError {
        LedgerError {
            file: file.to_owned(),
            at: at.into(),
            problem: problem.into(),
        }
    }
}

impl std::fmt::Display for LedgerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}: {}", self.file, self.at, self.problem)
    }
}

impl std::error::Error for LedgerError {}

impl Ledger {
    /// Reads `PINS.json` and `RETIRED.json` of the corpus directory `dir`.
    pub(crate) fn load(dir: &Path) -> Result<Ledger, LedgerError> {
        let read = |rel: &str| {
            let path = dir.join(rel);
            let name = path.display().to_string();
            std::fs::read_to_string(&path)
                .map(|text| (name.clone(), text))
                .map_err(|e| LedgerError::new(&name, "", format!("cannot read: {e}")))
        };
        let (pins_name, pins) = read(PINS_FILE)?;
        let (retired_name, retired) = read(RETIRED_FILE)?;
        Ok(Ledger {
            dir: dir.display().to_string(),
            pins: parse_pins(&pins_name, &pins)?,
            retired: parse_retired(&retired_name, &retired)?,
            pins_name,
            retired_name,
        })
    }

    /// What the ledger says about `digest` built under `tc_id`.
    pub(crate) fn status(&self, tc_id: u32, digest: &str) -> PinStatus {
        if let Some(reason) = self.retired.get(&tc_id) {
            return PinStatus::Retired {
                reason: reason.clone(),
            };
        }
        match self.pins.get(&tc_id) {
            None => PinStatus::New,
            Some(d) if d == digest => PinStatus::Pinned,
            Some(d) => PinStatus::Changed { pinned: d.clone() },
        }
    }

    /// Where the tests of `topic` are written: its source, or the generator.
    pub(crate) fn source_of(&self, topic: &str) -> String {
        if topic == super::GENERATED_TOPIC {
            "oracle/src/corpus/generated.rs".to_owned()
        } else {
            Path::new(&self.dir)
                .join(super::SOURCE_DIR)
                .join(format!("{topic}.json"))
                .display()
                .to_string()
        }
    }

    /// The refusal for a vector of `topic` whose status is neither `Pinned` nor `New`.
    pub(crate) fn refusal(
        &self,
        topic: &str,
        tc_id: u32,
        status: &PinStatus,
        digest: &str,
    ) -> String {
        match status {
            PinStatus::Changed { pinned } => format!(
                "tcId {tc_id} [{topic}]: its case or expected output changed (pinned {}, now {}): \
                 a published tcId never changes meaning. If the change is a mistake, undo it; if \
                 the behaviour must change (a SPEC change), retire tcId {tc_id} (remove its test \
                 from {}, add \"{tc_id}\": \"<why>\" to {}) and add the new behaviour as a new \
                 test under a new, unused tcId",
                abbreviated(pinned),
                abbreviated(digest),
                self.source_of(topic),
                self.retired_name
            ),
            PinStatus::Retired { reason } => format!(
                "tcId {tc_id} [{topic}]: the tcId is retired ({reason}; {}): a retired tcId is \
                 never used again; give the test in {} a new, unused tcId",
                self.retired_name,
                self.source_of(topic)
            ),
            PinStatus::Pinned | PinStatus::New => String::new(),
        }
    }
}

fn abbreviated(digest: &str) -> String {
    format!("sha256 {}...", &digest[..digest.len().min(12)])
}

/// The canonical JSON text of `v`: no whitespace, every object's members sorted by key (Unicode
/// code point order), strings and numbers as `serde_json` writes them (UTF-8, only `"`, `\\`
/// and control characters escaped; integers in decimal; floats in their shortest round-trip
/// form, `1e-7`). Python's `json.dumps(v, sort_keys=True, separators=(",", ":"),
/// ensure_ascii=False)` writes the same text for every published vector except those with a
/// float written with an exponent (Python writes `1e-07`).
pub(crate) fn canonical_json(v: &Json) -> String {
    fn write(v: &Json, out: &mut String) {
        match v {
            Json::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Json::String(k.clone()).to_string());
                    out.push(':');
                    write(&m[k], out);
                }
                out.push('}');
            }
            Json::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(x, out);
                }
                out.push(']');
            }
            leaf => out.push_str(&leaf.to_string()),
        }
    }
    let mut out = String::new();
    write(v, &mut out);
    out
}

/// The digest of a vector (see the module docs): what its tcId is pinned to.
pub(crate) fn digest(test: &TestVector, group_policy: Option<&PolicyInput>) -> String {
    let pinned = serde_json::json!({
        "case": serde_json::to_value(test.effective_case(group_policy)).unwrap_or(Json::Null),
        "expected": comparable(&test.expected),
    });
    Sha256::digest(canonical_json(&pinned).as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every vector of `file` with its digest, in file order.
pub(crate) fn digests(file: &VectorFile) -> Vec<(u32, String)> {
    file.test_groups
        .iter()
        .flat_map(|g| {
            g.tests
                .iter()
                .map(|t| (t.tc_id, digest(t, g.policy.as_ref())))
        })
        .collect()
}

/// Reads a `{"<tcId>": "<text>"}` object strictly (a repeated tcId is refused), checking each
/// key and each value with `value_ok`.
fn parse_ledger_file(
    name: &str,
    text: &str,
    value_ok: impl Fn(&str) -> Result<(), &'static str>,
) -> Result<BTreeMap<u32, String>, LedgerError> {
    let raw: BTreeMap<String, String> = strict::read(text).map_err(|e| {
        let at = e
            .position
            .map(|(l, c)| format!(":{l}:{c}"))
            .unwrap_or_default();
        if e.syntax {
            LedgerError::new(name, at, format!("invalid JSON: {}", e.message))
        } else {
            LedgerError::new(name, at, format!("{}: {}", e.path, e.message))
        }
    })?;
    let mut out = BTreeMap::new();
    for (key, value) in raw {
        let at = format!(": ${}", strict::key_segment(&key));
        let tc_id = key
            .parse::<u32>()
            .ok()
            .filter(|n| *n > 0 && n.to_string() == key)
            .ok_or_else(|| {
                LedgerError::new(
                    name,
                    at.clone(),
                    "a key is a tcId, a positive whole number written without sign or leading zeros",
                )
            })?;
        value_ok(&value).map_err(|what| LedgerError::new(name, at, what))?;
        out.insert(tc_id, value);
    }
    Ok(out)
}

/// Reads the text of a pin file.
pub(crate) fn parse_pins(name: &str, text: &str) -> Result<BTreeMap<u32, String>, LedgerError> {
    parse_ledger_file(name, text, |v| {
        if v.len() == 64
            && v.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            Ok(())
        } else {
            Err("a pin is a SHA-256 digest: 64 lowercase hexadecimal digits")
        }
    })
}

/// Reads the text of a retired-tcId file.
pub(crate) fn parse_retired(name: &str, text: &str) -> Result<BTreeMap<u32, String>, LedgerError> {
    parse_ledger_file(name, text, |v| {
        if v.trim().is_empty() {
            Err("say why the tcId was retired")
        } else {
            Ok(())
        }
    })
}

/// The text of a pin file: one `"tcId": "digest"` line per pin, in tcId order, so that adding a
/// vector adds one line.
pub(crate) fn render_pins(pins: &BTreeMap<u32, String>) -> String {
    if pins.is_empty() {
        return "{}\n".to_owned();
    }
    let lines: Vec<String> = pins
        .iter()
        .map(|(tc, d)| format!("  \"{tc}\": \"{d}\""))
        .collect();
    format!("{{\n{}\n}}\n", lines.join(",\n"))
}

/// Every broken promise of a corpus: `files` (the published vector files), `sources` (the
/// hand-written topics) and `ledger`. Empty when
///
/// * every published tcId is pinned, with its vector's digest;
/// * every pin names a published or a retired vector;
/// * no retired tcId is in a vector file or a source;
/// * no tcId is used twice (in the vector files, or in the sources).
///
/// The corpus tests hold the committed corpus to it; `generate` keeps each promise as it writes.
#[cfg(test)]
pub(crate) fn check(
    files: &[VectorFile],
    sources: &[super::source::Source],
    ledger: &Ledger,
) -> Vec<String> {
    use std::collections::BTreeSet;
    let mut problems = super::check_corpus(files).err().unwrap_or_default();
    problems.extend(
        super::source::repeated_tc_ids(sources)
            .iter()
            .map(ToString::to_string),
    );
    let mut published = BTreeSet::new();
    for file in files {
        for (tc_id, d) in digests(file) {
            published.insert(tc_id);
            match ledger.status(tc_id, &d) {
                PinStatus::Pinned => {}
                PinStatus::New => problems.push(format!(
                    "tcId {tc_id} [{}]: published but not pinned in {}: regenerate the topic into \
                     the corpus (`hybrid-compaction vectors generate --topic {} --out vectors/`), \
                     which pins new tcIds",
                    file.topic, ledger.pins_name, file.topic
                )),
                status => problems.push(ledger.refusal(&file.topic, tc_id, &status, &d)),
            }
        }
    }
    for source in sources {
        for (_, test, path) in source.tests() {
            if let Some(reason) = ledger.retired.get(&test.tc_id) {
                problems.push(
                    source
                        .error(
                            Some(test.tc_id),
                            Some(format!("{path}.tcId")),
                            format!(
                                "the tcId is retired ({reason}, {}): a retired tcId is never used \
                                 again; give the test an unused tcId",
                                ledger.retired_name
                            ),
                        )
                        .to_string(),
                );
            }
        }
    }
    for tc_id in ledger.pins.keys() {
        if !published.contains(tc_id) && !ledger.retired.contains_key(tc_id) {
            problems.push(format!(
                "{}: the pin of tcId {tc_id} names no published and no retired vector: a published \
                 tcId is never deleted. Restore its test, or retire it in {} (with the reason)",
                ledger.pins_name, ledger.retired_name
            ));
        }
    }
    problems
}
