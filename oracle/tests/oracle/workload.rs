//! The seeded workload generator (`oracle/src/workload.rs`, `hybrid-compaction workload`):
//! deterministic for a seed, every shape it promises is reached, every format round-trips
//! through the transcript parser (SPEC TRN-1 .. TRN-6) with stable ids (TRN-5).

use std::collections::BTreeSet;
use std::process::Command;

use hybrid_compaction::transcript::{Transcript, TranscriptFormat};
use hybrid_compaction_model::entry::EntryKind;
use hybrid_compaction_oracle::workload::{generate, Conversation, Ending, Turn};
use serde_json::Value as Json;

const BIN: &str = env!("CARGO_BIN_EXE_hybrid-compaction");

#[test]
fn the_same_seed_gives_the_same_conversation_and_another_seed_another() {
    for n in [7, 100, 1000] {
        let a = generate(n, 7, None).expect("generates");
        let b = generate(n, 7, None).expect("generates");
        assert_eq!(a, b);
        assert_eq!(a.turns.len(), n, "exactly n messages");
        for f in TranscriptFormat::ALL {
            assert_eq!(a.transcript(f).to_string(), b.transcript(f).to_string());
        }
        assert_ne!(a.turns, generate(n, 8, None).expect("generates").turns);
    }
}

#[test]
fn every_ending_is_reached_and_is_what_it_says() {
    for seed in 0..40u64 {
        for n in [7, 8, 9, 10, 11, 12, 13, 57, 100, 1000] {
            let c = generate(n, seed, None).expect("generates");
            assert_eq!(c.turns.len(), n, "n = {n}, seed = {seed}");
            assert_eq!(c.ending, Ending::of_seed(seed));
            check_structure(&c);
        }
    }
    let seen: BTreeSet<&str> = (0..4u64)
        .map(|s| generate(100, s, None).expect("generates").ending.name())
        .collect();
    assert_eq!(seen.len(), 4, "seeds 0..4 cycle through the four endings");
    for e in Ending::ALL {
        let c = generate(50, 3, Some(e)).expect("generates");
        assert_eq!(c.ending, e);
        check_structure(&c);
    }
}

/// System first and only there; every call answered right after its assistant message except
/// the pending call of the ending; the last message has the ending's shape.
fn check_structure(c: &Conversation) {
    assert!(matches!(c.turns[0], Turn::System(_)));
    let mut open: Vec<String> = Vec::new();
    for (i, t) in c.turns.iter().enumerate().skip(1) {
        match t {
            Turn::System(_) => panic!("second system message at {i}"),
            Turn::Tool { call_id, .. } => {
                assert_eq!(
                    open.first(),
                    Some(call_id),
                    "result {i} answers the next open call"
                );
                open.remove(0);
            }
            Turn::Assistant { calls, .. } => {
                assert!(open.is_empty(), "calls left unanswered before {i}");
                assert!(calls.len() <= 3);
                open = calls.iter().map(|k| k.id.clone()).collect();
            }
            _ => assert!(open.is_empty(), "calls left unanswered before {i}"),
        }
    }
    let last = c.turns.last().expect("non-empty");
    match c.ending {
        Ending::UserQuestion => assert!(matches!(last, Turn::User(_))),
        Ending::ToolResults => assert!(matches!(last, Turn::Tool { .. }) && open.is_empty()),
        Ending::PendingCall => {
            assert!(matches!(last, Turn::Assistant { calls, .. } if !calls.is_empty()));
        }
        Ending::FinalAnswer => {
            assert!(matches!(last, Turn::Assistant { calls, .. } if calls.is_empty()));
        }
    }
    if c.ending != Ending::PendingCall {
        assert!(open.is_empty());
    }
}

#[test]
fn the_promised_shapes_occur_in_a_1000_message_conversation() {
    let c = generate(1000, 11, None).expect("generates");
    let calls: BTreeSet<usize> = c
        .turns
        .iter()
        .filter_map(|t| match t {
            Turn::Assistant { calls, .. } if !calls.is_empty() => Some(calls.len()),
            _ => None,
        })
        .collect();
    assert_eq!(calls, BTreeSet::from([1, 2, 3]), "1-3 parallel calls");
    let results: Vec<usize> = c
        .turns
        .iter()
        .filter_map(|t| match t {
            Turn::Tool { text, .. } => Some(text.len()),
            _ => None,
        })
        .collect();
    assert!(
        results.iter().any(|&b| (2048..=20_480 + 200).contains(&b)),
        "large results"
    );
    assert!(results.iter().all(|&b| b <= 20_480 + 200));
    assert!(results.iter().filter(|&&b| b < 2048).count() > results.len() / 2);
    assert!(
        c.turns.iter().any(|t| matches!(t, Turn::Summary(_))),
        "summaries"
    );
    assert!(c.turns.iter().any(|t| matches!(t, Turn::User(_))));
    let text = format!("{:?}", c.turns);
    assert!(
        text.contains("上下文") && text.contains('é'),
        "non-ASCII text"
    );
    let json = c.transcript(TranscriptFormat::OpenAiChat).to_string();
    assert!(json.contains('🚀'), "emoji survive the export");
}

#[test]
fn every_format_round_trips_through_the_transcript_parser_trn_1_to_6() {
    for seed in 0..4u64 {
        let c = generate(300, seed, None).expect("generates");
        for f in TranscriptFormat::ALL {
            let t = c.transcript(f);
            let parsed = Transcript::parse(&t).unwrap_or_else(|e| panic!("{f}: {e}"));
            let entries = parsed.entries();
            // TRN-5: the given ids, in order; Anthropic merges parallel results, Responses
            // splits an assistant turn into its text and one item per call (`m{i}.{k}`).
            let ids: Vec<&str> = entries.iter().map(|e| e.id().as_str()).collect();
            if matches!(
                f,
                TranscriptFormat::AnthropicMessages
                    | TranscriptFormat::PydanticAi
                    | TranscriptFormat::Gemini
                    | TranscriptFormat::AiSdk
            ) {
                assert!(ids.len() < c.turns.len());
            } else if f == TranscriptFormat::OpenAiResponses {
                let turns: Vec<String> = ids.iter().map(|id| turn_id(id).to_owned()).collect();
                let mut distinct = turns.clone();
                distinct.dedup();
                let want: Vec<String> = (0..c.turns.len()).map(Conversation::id).collect();
                assert_eq!(distinct, want, "{f}");
                assert!(ids.len() > c.turns.len(), "{f}: parallel calls are items");
            } else {
                let want: Vec<String> = (0..c.turns.len()).map(Conversation::id).collect();
                assert_eq!(ids, want, "{f}");
            }
            // CLS-1: kinds follow the turn shapes, summaries by override.
            for e in entries {
                let i: usize = turn_id(e.id().as_str())[1..].parse().expect("m{i}");
                let want = match &c.turns[i] {
                    Turn::System(_) => EntryKind::SystemInstruction,
                    Turn::Summary(_) => EntryKind::Summary,
                    Turn::User(_) => EntryKind::ConversationalMessage,
                    Turn::Assistant { calls, .. } if calls.is_empty() => {
                        EntryKind::ConversationalMessage
                    }
                    // a Responses turn's text is an item of its own
                    Turn::Assistant { .. } if !e.message().has_call() => {
                        assert_eq!(f, TranscriptFormat::OpenAiResponses);
                        EntryKind::ConversationalMessage
                    }
                    _ => EntryKind::ToolExchange,
                };
                assert_eq!(e.kind(), want, "{f} {}", e.id().as_str());
            }
            // TRN-6: rendering the whole list gives the messages back verbatim.
            let back = parsed.render(entries);
            assert_eq!(back["messages"], t["messages"], "{f}");
            if f.has_system() {
                assert_eq!(back["system"], t["system"], "{f}");
            }
        }
    }
}

/// The turn an entry id names: `m{i}`, of `m{i}` or `m{i}.{k}`.
fn turn_id(id: &str) -> &str {
    id.split('.').next().unwrap_or(id)
}

#[test]
fn the_cli_prints_the_same_transcript_and_refuses_bad_counts() {
    let out = Command::new(BIN)
        .args([
            "workload",
            "--messages",
            "100",
            "--seed",
            "7",
            "--format",
            "openai",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let printed: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    let want = generate(100, 7, None)
        .expect("generates")
        .transcript(TranscriptFormat::OpenAiChat);
    assert_eq!(printed, want);
    for bad in [
        vec!["workload", "--messages", "6"],
        vec!["workload", "--messages", "ten"],
        vec!["workload", "--messages", "10", "--format", "xml"],
        vec!["workload", "--messages", "10", "--ending", "never"],
    ] {
        let out = Command::new(BIN).args(&bad).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{bad:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("enum"), "{err}");
    }
}
