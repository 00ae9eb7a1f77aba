//! The ADR-0007 vectors (SPEC sections 16-18) cover what those sections require, checked on the committed
//! files independently of the generator: every composition status and trust status is expected
//! somewhere; every offload and rehydration outcome has an attribution vector, and one with a
//! multibyte payload; and every attribution in the corpus is exactly SPEC ATR-1's table, its
//! bytes recomputed here from the case's own text as UTF-8 (`str::len`), never characters.

use std::collections::BTreeSet;
use std::path::Path;

use hybrid_compaction_model::artifact_diagnostics::ArtifactOutcome;
use hybrid_compaction_model::composition::CompositionStatus;
use hybrid_compaction_model::trust::TrustStatus;
use serde_json::Value as Json;

/// Every test of the committed corpus: (flags, case, expected).
fn tests() -> Vec<(Vec<String>, Json, Json)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("vectors/") {
        let path = entry.expect("entry").path();
        let file: Json =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        for g in file["testGroups"].as_array().expect("groups") {
            for t in g["tests"].as_array().expect("tests") {
                let flags = t["flags"]
                    .as_array()
                    .expect("flags")
                    .iter()
                    .map(|f| f.as_str().expect("flag").to_owned())
                    .collect();
                out.push((flags, t["case"].clone(), t["expected"].clone()));
            }
        }
    }
    out
}

/// The artifact diagnostics of an expected output, if any.
fn artifact(expected: &Json) -> Option<&Json> {
    ["offload", "rehydration"]
        .iter()
        .find_map(|k| expected.get(*k))
        .map(|d| &d["diagnostics"])
}

#[test]
fn cmp_2_tru_2_every_composition_and_trust_status_is_expected() {
    let mut seen = BTreeSet::new();
    for (_, _, e) in tests() {
        if let Some(s) = e["composition"]["status"].as_str() {
            seen.insert(s.to_owned());
        }
        if let Some(s) = e["trust"]["failure"]["status"].as_str() {
            seen.insert(s.to_owned());
        }
    }
    let wanted = CompositionStatus::NAMES
        .iter()
        .chain(TrustStatus::NAMES.iter());
    let missing: Vec<&&str> = wanted.filter(|w| !seen.contains(**w)).collect();
    assert!(missing.is_empty(), "never expected: {missing:?}");
}

#[test]
fn atr_1_every_outcome_has_an_attribution_vector_and_a_multibyte_one() {
    let mut seen = BTreeSet::new();
    let mut multibyte = BTreeSet::new();
    for (flags, _, e) in tests() {
        if let Some(d) = artifact(&e) {
            let outcome = d["outcome"].as_str().expect("outcome").to_owned();
            assert!(d["attribution"].is_object(), "{outcome}: no attribution");
            if flags.iter().any(|f| f == "Multibyte") {
                multibyte.insert(outcome.clone());
            }
            seen.insert(outcome);
        }
    }
    for o in ArtifactOutcome::NAMES {
        assert!(seen.contains(o), "no attribution vector for {o}");
        assert!(
            multibyte.contains(o),
            "no multibyte attribution vector for {o}"
        );
    }
}

/// The UTF-8 bytes the case observed: the serialized tool result, the segment, or (rehydration)
/// what the workspace holds; `None` where nothing is read.
fn observed_bytes(case: &Json, outcome: &str) -> Option<i64> {
    let text = match case["op"].as_str() {
        Some("offload") => case["toolResult"]["serialized"]
            .as_str()
            .or(case["segment"].as_str()),
        _ if matches!(outcome, "Missing" | "Unauthorized") => None,
        _ => case["stored"].as_str(),
    }?;
    Some(i64::try_from(text.len()).expect("small"))
}

#[test]
fn atr_1_every_attribution_is_the_table_in_utf8_bytes() {
    let mut checked = 0;
    for (_, case, e) in tests() {
        let Some(d) = artifact(&e) else { continue };
        let outcome = d["outcome"].as_str().expect("outcome");
        let observed = observed_bytes(&case, outcome);
        assert_eq!(d["observedUtf8ByteSize"].as_i64(), observed, "{case}");
        // SPEC ATR-1's table, written out.
        let (input, output) = match outcome {
            "Inline" => (observed, observed),
            "Offloaded" | "ExistingReference" => (observed, Some(82)),
            "Failed" | "RecoveryRequired" => (observed, None),
            "Resolved" => (Some(82), observed),
            _ => (Some(82), None),
        };
        let a = &d["attribution"];
        assert_eq!(a["inputUtf8Bytes"].as_i64(), input, "{case}");
        assert_eq!(a["outputUtf8Bytes"].as_i64(), output, "{case}");
        assert_eq!(a["operation"], d["operation"]);
        if output == Some(82) {
            let reference = d["referenceId"].as_str().expect("reference");
            assert_eq!(reference.len(), 82, "ART-2: the reference id is 82 bytes");
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} attribution vectors");
}

#[test]
fn atr_3_every_artifact_decision_shares_one_value_with_its_one_event() {
    for (_, _, e) in tests() {
        for k in ["offload", "rehydration"] {
            if let Some(o) = e.get(k) {
                assert_eq!(o["events"], 1, "{o}");
                assert_eq!(o["sharedWithEvent"], true, "{o}");
            }
        }
    }
}
