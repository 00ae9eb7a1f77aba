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
    // The vector files only: `vectors/` also holds the sources, the pins and the crate that
    // embeds the files.
    for path in hybrid_compaction_oracle::vectors::corpus_files(&dir).expect("vectors/") {
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

// ---------------------------------------------------------------------------------------------
// Model == engine on generated ADR-0007 cases: the library's node and composition against the
// executable specification, through the wire.

mod differential {
    use hybrid_compaction_oracle::{run_case, Case, Engine, Model};
    use proptest::prelude::*;
    use serde_json::{json, Value as Json};

    fn context() -> impl Strategy<Value = Json> {
        prop_oneof![
            1 => Just(Json::Null),
            4 => Just(json!({"userId": "user-1", "orchestrationId": "orch-1", "workspace": 1})),
            3 => (
                prop::sample::select(vec!["user-1", "user-2"]),
                prop::sample::select(vec!["orch-1", "orch-2"]),
                prop::option::of(prop::sample::select(vec![1u64, 2])),
            )
                .prop_map(|(u, o, w)| match w {
                    Some(w) => json!({"userId": u, "orchestrationId": o, "workspace": w}),
                    None => json!({"userId": u, "orchestrationId": o}),
                }),
        ]
    }

    fn trust_case() -> impl Strategy<Value = Json> {
        (
            prop::bool::weighted(0.9),
            prop::option::weighted(0.9, prop::collection::vec(context(), 1..4)),
            prop::option::weighted(
                0.9,
                prop::sample::select(vec!["session-1", "session-1", "session-1", "session-2", " "]),
            ),
            prop::sample::select(vec!["Success", "Success", "Terminated", "Failed"]),
        )
            .prop_map(|(binding, accessor, session, assembly)| {
                let mut c = json!({"op": "trust", "assembly": assembly});
                if binding {
                    c["binding"] = json!({"owners": {"userId": "user-1", "orchestrationId": "orch-1",
                        "sessionId": "session-1"}, "workspace": 1});
                }
                if let Some(a) = accessor {
                    c["accessor"] = json!(a);
                }
                if let Some(s) = session {
                    c["sessionId"] = json!(s);
                }
                c
            })
    }

    fn capability() -> impl Strategy<Value = Json> {
        (
            any::<bool>(),
            prop::option::of(prop::sample::select(vec!["G2", "G4", "G5", "G6", "G7"])),
            any::<bool>(),
        )
            .prop_map(|(requested, evidence, other)| {
                let mut c = if other {
                    json!({"name": "Memory", "stability": "Stable", "deliveryPhase": "G3"})
                } else {
                    json!({"name": "Compaction"})
                };
                c["requested"] = json!(requested);
                if let Some(e) = evidence {
                    c["evidence"] = json!(e);
                }
                c
            })
    }

    fn compose_case() -> impl Strategy<Value = Json> {
        (
            prop::sample::select(vec!["SelectedProviders", "CompleteBundle"]),
            prop::sample::select(vec!["StableOnly", "StableAndExperimental"]),
            any::<bool>(),
            prop::collection::vec(capability(), 0..3),
            prop::collection::vec(prop::sample::select(vec!["Other", "Compaction"]), 0..3),
            any::<bool>(),
        )
            .prop_map(|(lane, acceptance, coherent, mut caps, client, hybrid)| {
                // Capability names must be distinct: keep the first of each.
                let mut seen = Vec::new();
                caps.retain(|c| {
                    let n = c["name"].clone();
                    !seen.contains(&n) && {
                        seen.push(n);
                        true
                    }
                });
                json!({"op": "compose", "client": client, "hybridProfile": hybrid,
                    "profile": {"lane": lane, "acceptance": acceptance, "historyCoherent": coherent,
                        "capabilities": caps}})
            })
    }

    fn same_answer(case: Json) -> Result<(), TestCaseError> {
        let case: Case = serde_json::from_value(case).expect("generated cases parse");
        let m = run_case(&case, &Model).expect("valid case");
        let e = run_case(&case, &Engine).expect("valid case");
        prop_assert_eq!(m, e);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// SPEC TRU-1 .. TRU-3, NODE-3: a real library node call answers as the specification.
        #[test]
        fn tru_3_node_3_the_library_node_revalidates_as_the_spec(c in trust_case()) {
            same_answer(c)?;
        }

        /// SPEC CMP-3, CAP-3, CAP-4: the library's composition answers as the specification.
        #[test]
        fn cmp_3_cap_3_the_library_composition_answers_as_the_spec(c in compose_case()) {
            same_answer(c.clone())?;
            let mut resolve = c;
            resolve["op"] = json!("resolve");
            let profile = resolve["profile"].take();
            same_answer(json!({"op": "resolve", "profile": profile}))?;
        }
    }
}
