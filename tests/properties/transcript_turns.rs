//! Structure a provider binds beyond a call and its results (SPEC TRN-23, TRN-24, DEP-24): turns
//! of several items kept or dropped whole, by the assembly's fallback and in a reducer's answer,
//! and Responses approval requests awaiting their answer kept as approval state.

use std::sync::Arc;

use hybrid_compaction::engine;
use hybrid_compaction::engine::estimate::Utf8ContextEstimator;
use hybrid_compaction::model::assembly::Outcome;
use hybrid_compaction::model::cancel::CancellationToken;
use hybrid_compaction::model::entry::EntryKind;
use hybrid_compaction::model::message::Part;
use hybrid_compaction::model::policy::{Policy, PolicySpec};
use hybrid_compaction::model::reducers::{ProposalItem, ScriptStep, ScriptedReducer};
use hybrid_compaction::model::snapshot::StaticProvider;
use hybrid_compaction::transcript::reuse::Adaptation;
use hybrid_compaction::transcript::{Transcript, TranscriptFormat};
use proptest::prelude::*;
use serde_json::{json, Value as Json};

fn policy(hard: i32, recent: i32) -> Policy {
    Policy::new(PolicySpec {
        hard_limit: hard,
        trigger_margin: 1,
        recent_message_retention_count: recent,
        maximum_compaction_attempts: 1,
        preservation_label: Some("turns".into()),
        preservation_version: 1,
        estimator: Some(Arc::new(Utf8ContextEstimator)),
    })
    .unwrap()
}

/// The final list of an assembly of `t` under `p` whose reducer keeps everything (so the
/// fallback decides), rendered; `None` when it terminates.
fn assembled(t: &Transcript, p: &Policy) -> Option<Vec<Json>> {
    let keep = t
        .entries()
        .iter()
        .map(|e| ProposalItem::Keep(e.id().as_str().to_owned()))
        .collect();
    let mut reducer = ScriptedReducer::new(vec![ScriptStep::Propose(keep)]);
    let mut provider = StaticProvider::new(t.entries().to_vec());
    let r = engine::assemble::assemble(p, &mut provider, &mut reducer, &CancellationToken::new())
        .unwrap();
    let finals = r.final_entries.as_deref()?;
    assert_ne!(r.outcome, Outcome::Irreducible);
    let rendered = t.render(finals);
    Some(rendered["messages"].as_array().unwrap().clone())
}

/// Anthropic's shape the C# rules called a cross-group result: two consecutive assistant
/// messages, each with a `tool_use`, answered by one user message.
fn anthropic_run() -> Json {
    json!({"format": "anthropic-messages", "messages": [
        {"role": "user", "content": "Refund order 123, bitte."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "search", "input": {}}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c2", "name": "load", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "refund"},
            {"type": "tool_result", "tool_use_id": "c2", "content": "loaded"}]},
        {"role": "assistant", "content": "Erstattet."},
        {"role": "user", "content": "Danke!"}
    ]})
}

/// SPEC TRN-23: a run of Anthropic assistant messages is one turn: one complete exchange with
/// its results, rendered back as its messages; its items map back to the caller's positions.
#[test]
fn trn_23_anthropic_assistant_runs_are_one_turn() {
    let input = anthropic_run();
    let t = Transcript::parse(&input).unwrap();
    assert_eq!(t.entries().len(), 5);
    let calls = t.entries()[1]
        .message()
        .parts
        .iter()
        .filter(|p| matches!(p, Part::Call(_)))
        .count();
    assert_eq!(calls, 2);
    let analysis = engine::exchange::analyze(t.entries());
    assert!(analysis.is_sequence_valid());
    assert_eq!(t.render(t.entries()), input);
    assert_eq!(t.items(0, 1), (0, 1));
    assert_eq!(t.items(1, 1), (1, 2));
    assert_eq!(t.items(1, 3), (1, 4));
    assert_eq!(t.items(4, 1), (5, 1));
    // Under a limit only the last message fits: the turn goes with its results.
    let kept = assembled(&t, &policy(40, 1)).unwrap();
    assert_eq!(kept, [json!({"role": "user", "content": "Danke!"})]);
}

/// SPEC TRN-23: a reducer's answer holding part of a turn keeps the whole turn (the provider
/// receives a turn whole), read from as many of the answer's items as are the turn's.
#[test]
fn trn_23_a_reducer_answer_keeps_or_drops_a_turn_whole() {
    let input = anthropic_run();
    let ms = input["messages"].as_array().unwrap();
    let t = Transcript::parse(&input).unwrap();
    let turn = t.entries()[1].message().clone();
    let part = t.read_answer(&[ms[2].clone(), ms[3].clone()]).unwrap();
    assert_eq!(
        part.messages,
        [turn.clone(), t.entries()[2].message().clone()]
    );
    assert_eq!(part.items, [1, 1]);
    let whole = t.read_answer(&ms[1..4]).unwrap();
    assert_eq!(whole.messages, [turn, t.entries()[2].message().clone()]);
    assert_eq!(whole.items, [2, 1]);
    let new = t
        .read_answer(&[json!({"role": "assistant", "content": "so far"})])
        .unwrap();
    assert_eq!(new.items, [1]);
}

/// SPEC TRN-24, DEP-24: an approval request awaiting its response is approval state, kept in
/// every list, with the id its call form has; answered, it is a call with that id again.
#[test]
fn trn_24_dep_24_a_pending_approval_request_is_kept_approval_state() {
    let request = json!({"type": "mcp_approval_request", "id": "mcpr_1", "name": "deploy",
        "arguments": "{}", "server_label": "ops"});
    let filler = "lorem ipsum ".repeat(20);
    let pending = json!({"format": "openai-responses", "messages": [
        {"role": "user", "content": filler}, {"role": "user", "content": "Deploy it"}, request]});
    let t = Transcript::parse(&pending).unwrap();
    assert_eq!(t.entries()[2].kind(), EntryKind::ApprovalSecurityState);
    let kept = assembled(&t, &policy(130, 1)).unwrap();
    assert_eq!(kept.last(), Some(&request));
    assert!(!kept.contains(&pending["messages"][0]));
    let mut answered = pending.clone();
    answered["messages"].as_array_mut().unwrap().push(
        json!({"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": true}),
    );
    // A reducer's answer holding the request reads it as the transcript does.
    let read = t
        .read_answer(&pending["messages"].as_array().unwrap()[1..])
        .unwrap();
    assert_eq!(read.messages[1], *t.entries()[2].message());
    let a = Transcript::parse(&answered).unwrap();
    assert_eq!(a.entries()[2].kind(), EntryKind::ToolExchange);
    assert_eq!(a.entries()[2].id(), t.entries()[2].id());
    // A function call without its output stays an unanswered call: Irreducible.
    let call = json!({"format": "openai-responses", "messages": [{"role": "user", "content": "x"},
        {"type": "function_call", "call_id": "k", "name": "f", "arguments": "{}"}]});
    let c = Transcript::parse(&call).unwrap();
    let mut provider = StaticProvider::new(c.entries().to_vec());
    let r = engine::assemble::assemble(
        &policy(100_000, 1),
        &mut provider,
        &mut ScriptedReducer::new(vec![]),
        &CancellationToken::new(),
    )
    .unwrap();
    assert_eq!(r.outcome, Outcome::Irreducible);
}

/// One Responses turn of the generated transcripts, its items' ids unique by `k`: a user
/// message; a reasoning item before parallel calls, then their outputs; a reasoning item before
/// an assistant message; a call without reasoning, then its output.
fn responses_turn(k: usize, kind: u8, calls: usize) -> Vec<Json> {
    let rs = json!({"type": "reasoning", "id": format!("rs_{k}"), "summary": [], "encrypted_content": "gAAAA"});
    let call = |j: usize| json!({"type": "function_call", "id": format!("fc_{k}_{j}"), "call_id": format!("call_{k}_{j}"), "name": "lookup", "arguments": "{\"q\": \"ü\"}"});
    let output = |j: usize| json!({"type": "function_call_output", "call_id": format!("call_{k}_{j}"), "output": "found ".repeat(j + 1)});
    match kind {
        0 => vec![json!({"role": "user", "content": format!("Frage {k}")})],
        1 => std::iter::once(rs)
            .chain((0..calls).map(call))
            .chain((0..calls).map(output))
            .collect(),
        2 => vec![
            rs,
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": format!("Antwort {k}")}]}),
        ],
        _ => vec![call(0), output(0)],
    }
}

/// The broken rules of a Responses request (OpenAI's, for reasoning items): every reasoning
/// item of `input` is sent exactly when the item after it is, and right before it.
fn reasoning_broken(input: &[Json], sent: &[Json]) -> Option<String> {
    for (i, item) in input.iter().enumerate() {
        if item["type"] != "reasoning" {
            continue;
        }
        let next = &input[i + 1];
        let at = sent.iter().position(|s| s == item);
        let next_at = sent.iter().position(|s| s == next);
        match (at, next_at) {
            (None, None) => {}
            (Some(a), Some(b)) if b == a + 1 => {}
            _ => return Some(format!("{} sent without {}", item["id"], next)),
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// SPEC TRN-23: at any limit, the fallback sends a reasoning item exactly with the item it
    /// precedes, and the reassembly of kept adaptations joins the same turns as parsing.
    #[test]
    fn trn_23_reasoning_stays_with_what_it_precedes(
        kinds in prop::collection::vec((0u8..4, 1usize..3), 1..8),
        limit in 40i32..900,
        recent in 1i32..3,
    ) {
        let mut items = vec![json!({"role": "user", "content": "Los."})];
        for (k, (kind, calls)) in kinds.into_iter().enumerate() {
            items.extend(responses_turn(k, kind, calls));
        }
        let input = json!({"format": "openai-responses", "messages": items});
        let t = Transcript::parse(&input).unwrap();
        if let Some(sent) = assembled(&t, &policy(limit, recent)) {
            prop_assert_eq!(reasoning_broken(&items, &sent), None);
        }
        let adaptations: Vec<Adaptation> = items
            .iter()
            .enumerate()
            .map(|(i, m)| Adaptation::message(TranscriptFormat::OpenAiResponses, i, m).unwrap())
            .collect();
        let again = Transcript::reassemble(TranscriptFormat::OpenAiResponses, &adaptations, None, None).unwrap();
        prop_assert_eq!(again.entries(), t.entries());
        let twice = Transcript::reassemble(TranscriptFormat::OpenAiResponses, &adaptations, None, None).unwrap();
        for (a, b) in twice.entries().iter().zip(again.entries()) {
            prop_assert!(a.ptr_eq(b), "a turn built from the same adaptations is reused");
        }
    }
}
