//! Clause tests for tool-exchange analysis, required preservation and the verifier
//! (SPEC EXC-1 .. EXC-3, PRE-1 .. PRE-4, VER-1 .. VER-4; departures DEP-7, DEP-8, DEP-9).
//!
//! Expected values are worked out by hand from the SPEC text (EXC, PRE and VER clauses). The
//! declaration order of rejection reasons (VER-3) is vocabulary, tested in
//! `model/tests/vocabulary.rs`.

use hybrid_compaction_model::integration::durable_digests;
use hybrid_compaction_model::*;
use proptest::prelude::*;

use super::common::*;
use crate::imp;

use RejectionReason::*;

fn req(list: &[Entry], retention: i32) -> Vec<String> {
    id_strs(&imp().required_ids(list, retention).unwrap())
}

fn eid(id: &str) -> EntryId {
    EntryId::new(id).unwrap()
}

fn eids(v: &[&str]) -> Vec<EntryId> {
    v.iter().map(|x| eid(x)).collect()
}

// ---------------------------------------------------------------- EXC ----

#[test]
fn exc_1_owner_is_first_declaration_and_repeats_are_duplicates() {
    // SPEC EXC-1: repeat inside the same message is a duplicate call id.
    let a = imp().analyze(&[call("k", &["a", "a"]), result("r", &["a"])]);
    assert_eq!(a.duplicate_call_entry_ids, eids(&["k"]));
    assert_eq!(a.groups[0].call_ids, s(&["a", "a"]));
    assert!(!a.groups[0].complete);
    // Across entries: every call entry declaring the duplicate id is listed (owner included).
    let a = imp().analyze(&[
        call("k1", &["a"]),
        call("k2", &["a", "b"]),
        result("r", &["a", "b"]),
    ]);
    assert_eq!(a.duplicate_call_entry_ids, eids(&["k1", "k2"]));
    assert!(!a.groups[0].complete && !a.groups[1].complete);
    // Results map to the owner (k1 for `a`, k2 for `b`): r answers two call entries.
    assert_eq!(a.cross_group_result_entry_ids, eids(&["r"]));
}

#[test]
fn exc_1_only_tool_exchange_entries_participate() {
    // SPEC EXC-1: other kinds never form groups (they cannot carry tool parts, ENT-5.1).
    let a = imp().analyze(&[conv("c", "x"), sys("s", "y"), seg("g", "z")]);
    assert_eq!(a, ToolExchangeAnalysis::default());
    assert!(a.is_sequence_valid());
}

#[test]
fn exc_2_duplicate_results_counted_per_occurrence() {
    // SPEC EXC-2: two entries answering the same call id.
    let a = imp().analyze(&[
        call("k", &["a"]),
        result("r1", &["a"]),
        result("r2", &["a"]),
    ]);
    assert_eq!(a.duplicate_result_call_ids, s(&["a"]));
    assert_eq!(a.duplicate_result_entry_ids, eids(&["r1", "r2"]));
    assert!(!a.groups[0].complete);
    // Two parts in one message count twice.
    let a = imp().analyze(&[call("k", &["a"]), result("r", &["a", "a"])]);
    assert_eq!(a.duplicate_result_call_ids, s(&["a"]));
    assert_eq!(a.duplicate_result_entry_ids, eids(&["r"]));
    assert_eq!(a.groups[0].result_entry_ids, eids(&["r"]));
}

#[test]
fn exc_2_duplicate_result_call_ids_by_first_result_occurrence() {
    // SPEC EXC-2 (decision: ordered by first result occurrence; ids without a call owner too).
    let a = imp().analyze(&[
        result("r1", &["b"]),
        result("r2", &["z"]),
        result("r3", &["a"]),
        result("r4", &["a", "b", "z"]),
    ]);
    assert_eq!(a.duplicate_result_call_ids, s(&["b", "z", "a"]));
    assert_eq!(
        a.duplicate_result_entry_ids,
        eids(&["r1", "r2", "r3", "r4"])
    );
    assert_eq!(a.orphan_result_entry_ids, eids(&["r1", "r2", "r3", "r4"]));
}

#[test]
fn exc_2_orphan_results_even_when_other_results_match() {
    // SPEC EXC-2: any result whose call id has no owner makes the entry an orphan.
    let a = imp().analyze(&[call("k", &["a"]), result("r", &["a", "zz"])]);
    assert_eq!(a.orphan_result_entry_ids, eids(&["r"]));
    assert!(
        a.groups[0].complete,
        "the group itself is matched and in order"
    );
    let a = imp().analyze(&[result("r", &["zz"])]);
    assert_eq!(a.orphan_result_entry_ids, eids(&["r"]));
    assert!(a.groups.is_empty());
}

#[test]
fn exc_2_cross_group_results() {
    // SPEC EXC-2: a result entry whose results map to >= 2 distinct call entries.
    let list = [
        call("k1", &["a"]),
        call("k2", &["b"]),
        result("r", &["a", "b"]),
    ];
    let a = imp().analyze(&list);
    assert_eq!(a.cross_group_result_entry_ids, eids(&["r"]));
    assert!(a.groups.iter().all(|g| !g.complete));
    assert!(a.orphaned_call_entry_ids.is_empty() && a.reordered_call_entry_ids.is_empty());
    // One call entry with two calls answered by one entry is not cross-group.
    let a = imp().analyze(&[call("k", &["a", "b"]), result("r", &["a", "b"])]);
    assert!(a.cross_group_result_entry_ids.is_empty());
    assert!(a.groups[0].complete);
}

#[test]
fn exc_3_group_fields_several_calls_results_span_messages() {
    // SPEC EXC-3: one group per call entry; results may span several tool messages;
    // ResultEntryIds are sorted by position, not by call-id order.
    let list = [
        conv("c", "hi"),
        call("k", &["a", "b", "c"]),
        result("rb", &["b"]),
        result("rac", &["a", "c"]),
    ];
    let a = imp().analyze(&list);
    assert_eq!(a.groups.len(), 1);
    let g = &a.groups[0];
    assert_eq!(g.call_entry_id, eid("k"));
    assert_eq!(g.call_ids, s(&["a", "b", "c"]));
    assert_eq!(g.result_entry_ids, eids(&["rb", "rac"]));
    assert_eq!(g.all_entry_ids, eids(&["k", "rb", "rac"]));
    assert!(g.all_matched && g.all_in_order && g.complete);
    assert!(a.is_sequence_valid());
}

#[test]
fn exc_3_orphaned_and_reordered_groups() {
    // SPEC EXC-3: not allMatched → orphaned; allMatched but not allInOrder → reordered.
    let a = imp().analyze(&[call("k", &["a", "b"]), result("r", &["a"])]);
    assert_eq!(a.orphaned_call_entry_ids, eids(&["k"]));
    assert!(!a.groups[0].all_matched && !a.groups[0].complete);
    assert_eq!(a.groups[0].all_entry_ids, eids(&["k", "r"]));
    assert!(a.reordered_call_entry_ids.is_empty());

    let a = imp().analyze(&[result("r", &["a"]), call("k", &["a"])]);
    assert_eq!(a.reordered_call_entry_ids, eids(&["k"]));
    assert!(a.orphaned_call_entry_ids.is_empty());
    assert!(
        a.orphan_result_entry_ids.is_empty(),
        "the call id has an owner"
    );
    assert!(!a.groups[0].all_in_order && !a.groups[0].complete);
    // The first owner decides order: a later answer does not fix an earlier one.
    let a = imp().analyze(&[
        result("r1", &["a"]),
        call("k", &["a"]),
        result("r2", &["a"]),
    ]);
    assert_eq!(a.reordered_call_entry_ids, eids(&["k"]));
    assert_eq!(a.groups[0].result_entry_ids, eids(&["r1"]));
    // An orphaned (unmatched) group is never also reported as reordered.
    let a = imp().analyze(&[result("r", &["a"]), call("k", &["a", "b"])]);
    assert_eq!(a.orphaned_call_entry_ids, eids(&["k"]));
    assert!(a.reordered_call_entry_ids.is_empty());
}

// ---------------------------------------------------------------- PRE ----

#[test]
fn pre_1_1_required_kinds_and_never_required_kinds() {
    // SPEC PRE-1.1 / PRE-4: SI, ASS, ApprovalSecurityState, ArtifactReference always;
    // Summary and OptionalContext never; conversation only through retention.
    let list = [
        sys("s", "x"),
        of_kind("a", EntryKind::AuthoritativeSessionState, "x"),
        of_kind("p", EntryKind::ApprovalSecurityState, "x"),
        aref("r", "body"),
        summary("sum", "x"),
        opt("o", "x"),
        conv("c1", "x"),
        conv("c2", "x"),
    ];
    assert_eq!(req(&list, 1), s(&["s", "a", "p", "r", "c2"]));
}

#[test]
fn pre_1_2_dep_7_reference_less_recovered_bodies_are_required() {
    // SPEC PRE-1.2 (DEP-7): a body whose digest is not durable is required; a durable one not.
    let list = [
        aref("r", "durable"),
        seg("d", "durable"),
        seg("l", "lonely"),
        conv("c", "x"),
    ];
    assert_eq!(req(&list, 1), s(&["r", "l", "c"]));
}

#[test]
fn pre_1_3_complete_reference_bearing_exchange_required_regardless_of_recency() {
    // SPEC PRE-1.3 (DEP-7, DEP-8).
    let list = [
        call("k1", &["a"]),
        ref_result("r1", "a", "body"),
        call("k2", &["b"]),
        result("r2", &["b"]),
        conv("c1", "x"),
        conv("c2", "x"),
    ];
    assert_eq!(req(&list, 1), s(&["k1", "r1", "c2"]));
}

#[test]
fn pre_1_4_incomplete_exchanges_required_regardless_of_recency() {
    // SPEC PRE-1.4 (DEP-7): incomplete groups, orphan results, duplicate-result entries.
    let list = [
        call("orph", &["a"]),
        result("stray", &["zz"]),
        call("k", &["b"]),
        result("d1", &["b"]),
        result("d2", &["b"]),
        call("ok", &["c"]),
        result("okr", &["c"]),
        conv("c1", "x"),
        conv("c2", "x"),
    ];
    assert_eq!(req(&list, 1), s(&["orph", "stray", "k", "d1", "d2", "c2"]));
    // Duplicate results of an owner-less call id are required too.
    let list = [result("x1", &["q"]), result("x2", &["q"]), conv("c", "x")];
    assert_eq!(req(&list, 1), s(&["x1", "x2", "c"]));
}

#[test]
fn pre_1_5_last_retention_units_all_if_fewer() {
    // SPEC PRE-1.5.
    let list = [conv("a", "1"), conv("b", "2"), conv("c", "3")];
    assert_eq!(req(&list, 1), s(&["c"]));
    assert_eq!(req(&list, 2), s(&["b", "c"]));
    assert_eq!(req(&list, 3), s(&["a", "b", "c"]));
    assert_eq!(req(&list, 50), s(&["a", "b", "c"]));
    assert!(req(&[], 3).is_empty());
}

#[test]
fn pre_1_duplicate_ids_are_argument_errors() {
    // SPEC PRE-1: duplicate ids → argument error.
    let err = imp()
        .required_ids(&[conv("a", "1"), conv("a", "2")], 1)
        .unwrap_err();
    assert_eq!(
        err,
        AssemblyError::DuplicateEntryId {
            entry_id: "a".into()
        }
    );
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn pre_2_dep_8_durable_set_from_references_and_tool_results_only() {
    // SPEC PRE-2 (DEP-8): ArtifactReference + ToolExchange digests; a segment never makes
    // itself durable.
    let list = [
        aref("r", "one"),
        call("k", &["c"]),
        ref_result("t", "c", "two"),
        seg("g", "three"),
        conv("m", &ArtifactReference::to_content("four").to_string()),
    ];
    let d = durable_digests(&list);
    assert_eq!(d.into_iter().collect::<Vec<_>>(), {
        let mut v = vec![Digest::of("one"), Digest::of("two")];
        v.sort();
        v
    });
    // The implementation's eviction (SPEC ASM-8) removes exactly the bodies of durable digests.
    let mut with_bodies = list.to_vec();
    with_bodies.extend([seg("g1", "one"), seg("g2", "two"), seg("g4", "four")]);
    assert_eq!(
        ids(&imp().evict(&with_bodies)),
        s(&["r", "k", "t", "g", "m", "g4"])
    );
}

#[test]
fn pre_2_every_digest_of_a_source_counts_not_only_the_first() {
    // SPEC PRE-2 (ENT-5.4): a tool result entry answering several calls carries one digest per
    // referencing result, in part order, and every one of them is in the durable set. Here the
    // first digest names no body and the second part is no reference: each body `g<i>` is
    // durable through a later digest only, so it is not required (PRE-1.2) and eviction
    // (ASM-8) removes it; the lonely body stays. With 2 bodies named and with 12 (an
    // implementation may judge a few bodies and many differently).
    for n in [2usize, 12] {
        let docs: Vec<String> = (0..n).map(|i| format!("doc {i}")).collect();
        let calls: Vec<String> = (0..n + 2).map(|i| format!("c{i}")).collect();
        let mut answers: Vec<(&str, Option<&str>)> =
            vec![(&calls[0], Some("no body")), (&calls[1], None)];
        answers.extend((0..n).map(|i| (calls[i + 2].as_str(), Some(docs[i].as_str()))));
        let call_ids: Vec<&str> = calls.iter().map(String::as_str).collect();
        let t = refs_result("t", &answers);
        assert_eq!(t.artifact_reference_digests().len(), n + 1);
        let mut list = vec![call("k", &call_ids), t];
        list.extend((0..n).map(|i| seg(&format!("g{i}"), &docs[i])));
        list.extend([seg("lonely", "lonely"), conv("m", "x")]);
        assert_eq!(
            req(&list, 1),
            s(&["k", "t", "lonely", "m"]),
            "{n} bodies named"
        );
        assert_eq!(
            ids(&imp().evict(&list)),
            s(&["k", "t", "lonely", "m"]),
            "{n} bodies named"
        );
        // The same bodies before the result entry, and a reference entry naming none of them
        // in between: position does not matter.
        let mut before: Vec<Entry> = list[2..2 + n].to_vec();
        before.extend([aref("r", "elsewhere"), list[0].clone(), list[1].clone()]);
        before.extend(list[2 + n..].iter().cloned());
        assert_eq!(req(&before, 1), s(&["r", "k", "t", "lonely", "m"]));
        assert_eq!(
            ids(&imp().evict(&before)),
            s(&["r", "k", "t", "lonely", "m"])
        );
    }
}

/// The recency units of `list` as id strings, if the implementation exposes them (the engine
/// keeps them internal; its units are then seen through the required ids they imply).
fn units(list: &[Entry]) -> Option<Vec<Vec<String>>> {
    imp()
        .recency_units(list)
        .map(|units| units.iter().map(|u| id_strs(u)).collect())
}

#[test]
fn pre_3_recency_units() {
    // SPEC PRE-3: conversation = one unit; a group = one unit when first met; a pure orphan
    // result = one-entry unit; other kinds are no unit.
    let list = [
        sys("s", "x"),
        conv("a", "x"),
        call("k", &["c1"]),
        conv("b", "x"),
        result("r", &["c1"]),
        result("o", &["zz"]),
        opt("opt", "x"),
        summary("sum", "x"),
    ];
    if let Some(units) = units(&list) {
        assert_eq!(units, vec![s(&["a"]), s(&["k", "r"]), s(&["b"]), s(&["o"])]);
    }
    // Retention counts units, not messages (DEP-20): 2 units = [b], [o].
    assert_eq!(req(&list, 2), s(&["s", "b", "o"]));
    // 3 units pull in the whole group, although `k` is older than `b`.
    assert_eq!(req(&list, 3), s(&["s", "k", "b", "r", "o"]));
}

#[test]
fn pre_3_entry_in_several_groups_maps_to_the_last_group() {
    // SPEC PRE-3: r sits in the groups of k1 and k2; it maps to k2's (already met) unit.
    let list = [
        conv("x", "1"),
        call("k1", &["a"]),
        call("k2", &["b"]),
        result("r", &["a", "b"]),
    ];
    if let Some(units) = units(&list) {
        assert_eq!(units, vec![s(&["x"]), s(&["k1", "r"]), s(&["k2", "r"])]);
    }
    // Three units, not four (r joins a group's unit): retention 3 reaches `x`, 2 does not. The
    // tool entries are required anyway (cross-group result, PRE-1.4).
    assert_eq!(req(&list, 2), s(&["k1", "k2", "r"]));
    assert_eq!(req(&list, 3), s(&["x", "k1", "k2", "r"]));
    // Met first through r (before both calls): r's unit is the *last* group's, k2's.
    let list = [
        result("r", &["a", "b"]),
        call("k1", &["a"]),
        call("k2", &["b"]),
    ];
    if let Some(units) = units(&list) {
        assert_eq!(units, vec![s(&["k2", "r"]), s(&["k1", "r"])]);
    }
}

#[test]
fn pre_4_selection_output() {
    // SPEC PRE-4: ids sorted by original position, label and version of the policy.
    let p = text_policy(100, 10, 1, 1);
    let list = [conv("c", "x"), sys("s", "x")];
    let sel = imp()
        .select_required(&list, &p, &CancellationToken::new())
        .unwrap();
    assert_eq!(
        sel,
        PreservationSelection {
            required_entry_ids: eids(&["c", "s"]),
            preservation_label: "test".into(),
            preservation_version: 1,
        }
    );
    assert_eq!(
        imp()
            .select_required(&list, &p, &CancellationToken::cancelled())
            .unwrap_err(),
        AssemblyError::Cancelled
    );
}

// ---------------------------------------------------------------- VER ----

fn p1() -> Policy {
    text_policy(1000, 10, 1, 1)
}

fn check(original: &[Entry], proposed: &[Entry]) -> VerificationResult {
    imp().verify(original, proposed, &p1()).unwrap()
}

fn invalid(v: &VerificationResult) -> Vec<String> {
    v.invalid_entry_ids
        .iter()
        .map(|i| i.as_str().to_owned())
        .collect()
}

#[test]
fn ver_1_accepts_required_plus_optional_subset() {
    let original = [
        sys("s", "x"),
        conv("old", "x"),
        opt("o", "x"),
        conv("new", "x"),
    ];
    let v = check(&original, &[sys("s", "x"), conv("new", "x")]);
    assert!(v.is_accepted());
    assert_eq!(v.outcome, VerificationOutcome::Accepted);
    assert!(v.rejection_reasons.is_empty());
    // SPEC VER-3: fallback ids are the original's required ids, always.
    assert_eq!(v.preservation_only_fallback_entry_ids, eids(&["s", "new"]));
}

#[test]
fn ver_1_missing_required_entry() {
    let original = [sys("s1", "x"), sys("s2", "y"), conv("c", "z")];
    let v = check(&original, &[sys("s2", "y")]);
    assert_eq!(v.rejection_reasons, vec![MissingRequiredEntry]);
    assert_eq!(v.missing_required_entry_ids, eids(&["s1", "c"]));
    assert!(
        v.invalid_entry_ids.is_empty(),
        "missing ids are not invalid ids"
    );
    assert_eq!(v.outcome, VerificationOutcome::Rejected);
}

#[test]
fn ver_1_required_entry_out_of_order() {
    let original = [sys("s1", "x"), sys("s2", "y"), conv("c", "z")];
    let v = check(&original, &[sys("s2", "y"), sys("s1", "x"), conv("c", "z")]);
    assert_eq!(v.rejection_reasons, vec![RequiredEntryOutOfOrder]);
    assert!(v.missing_required_entry_ids.is_empty());
}

#[test]
fn ver_1_required_entry_content_mismatch() {
    let original = [sys("s", "x"), conv("c", "z")];
    let v = check(&original, &[sys("s", "CHANGED"), conv("c", "z")]);
    assert_eq!(v.rejection_reasons, vec![RequiredEntryContentMismatch]);
    assert_eq!(invalid(&v), s(&["s"]));
}

#[test]
fn ver_1_dep_9_forged_structural_entry() {
    // SPEC VER-1 check 2 (DEP-9): new ids may only be ConversationalMessage or Summary.
    let original = [conv("c", "z")];
    assert!(check(
        &original,
        &[summary("new-sum", "s"), conv("new-c", "t"), conv("c", "z")]
    )
    .is_accepted());
    for forged in [
        sys("f", "x"),
        opt("f", "x"),
        aref("f", "x"),
        of_kind("f", EntryKind::ApprovalSecurityState, "x"),
        seg("f", "x"),
    ] {
        let v = check(&original, &[forged.clone(), conv("c", "z")]);
        assert_eq!(
            v.rejection_reasons,
            vec![ForgedStructuralEntry],
            "{:?}",
            forged.kind()
        );
        assert_eq!(invalid(&v), s(&["f"]));
    }
}

#[test]
fn ver_1_retained_original_entry_mutated() {
    // SPEC VER-1 check 3 (DEP-9): kind changed, or non-required content changed.
    let original = [conv("old", "a"), opt("o", "b"), conv("c", "z")];
    let v = check(&original, &[conv("old", "A"), conv("c", "z")]);
    assert_eq!(v.rejection_reasons, vec![RetainedOriginalEntryMutated]);
    assert_eq!(invalid(&v), s(&["old"]));
    let v = check(&original, &[conv("o", "b"), conv("c", "z")]);
    assert_eq!(v.rejection_reasons, vec![RetainedOriginalEntryMutated]);
    // A required entry whose kind changed (same message): no content mismatch, but mutated.
    let original = [
        of_kind("a", EntryKind::AuthoritativeSessionState, "x"),
        conv("c", "z"),
    ];
    let v = check(
        &original,
        &[
            of_kind("a", EntryKind::ApprovalSecurityState, "x"),
            conv("c", "z"),
        ],
    );
    assert_eq!(v.rejection_reasons, vec![RetainedOriginalEntryMutated]);
    assert_eq!(invalid(&v), s(&["a"]));
}

#[test]
fn ver_1_orphaned_tool_call_and_result() {
    let original = [
        call("k", &["a"]),
        result("r", &["a"]),
        conv("c1", "x"),
        conv("c2", "y"),
    ];
    let v = check(&original, &[call("k", &["a"]), conv("c2", "y")]);
    assert_eq!(v.rejection_reasons, vec![OrphanedToolCall]);
    assert_eq!(invalid(&v), s(&["k"]));
    let v = check(&original, &[result("r", &["a"]), conv("c2", "y")]);
    assert_eq!(v.rejection_reasons, vec![OrphanedToolResult]);
    assert_eq!(invalid(&v), s(&["r"]));
}

#[test]
fn ver_1_duplicate_tool_call() {
    let original = [call("k1", &["a"]), call("k2", &["a"]), result("r", &["a"])];
    let v = check(&original, &original);
    assert_eq!(v.rejection_reasons, vec![DuplicateToolCall]);
    assert_eq!(invalid(&v), s(&["k1", "k2"]));
}

#[test]
fn ver_1_duplicate_tool_result() {
    let original = [
        call("k", &["a"]),
        result("r1", &["a"]),
        result("r2", &["a"]),
    ];
    let v = check(&original, &original);
    assert_eq!(v.rejection_reasons, vec![DuplicateToolResult]);
    assert_eq!(invalid(&v), s(&["r1", "r2"]));
}

#[test]
fn ver_1_reordered_tool_group() {
    let original = [result("r", &["a"]), call("k", &["a"])];
    let v = check(&original, &original);
    assert_eq!(v.rejection_reasons, vec![ReorderedToolGroup]);
    assert_eq!(invalid(&v), s(&["k"]));
}

#[test]
fn ver_1_cross_group_tool_result() {
    let original = [
        call("k1", &["a"]),
        call("k2", &["b"]),
        result("r", &["a", "b"]),
    ];
    let v = check(&original, &original);
    assert_eq!(v.rejection_reasons, vec![CrossGroupToolResult]);
    assert_eq!(invalid(&v), s(&["r"]));
}

#[test]
fn ver_1_reasons_in_check_order_not_declaration_order() {
    // SPEC VER-1: check 1 (missing), 2 (forged), 3 (mutated), 4 (tool) — while the declaration
    // order (VER-3) puts the tool reasons before Forged / Mutated.
    let original = [
        sys("s", "x"),
        conv("old", "a"),
        call("k", &["a"]),
        result("r", &["a"]),
        conv("c", "z"),
    ];
    let proposed = [
        conv("old", "MUT"),
        opt("forged", "x"),
        call("k", &["a"]),
        conv("c", "z"),
    ];
    let v = check(&original, &proposed);
    assert_eq!(
        v.rejection_reasons,
        vec![
            MissingRequiredEntry,
            ForgedStructuralEntry,
            RetainedOriginalEntryMutated,
            OrphanedToolCall
        ]
    );
    assert_eq!(invalid(&v), s(&["forged", "k", "old"]), "ordinal set order");
    assert_eq!(v.missing_required_entry_ids, eids(&["s"]));
}

#[test]
fn ver_1_content_mismatch_reported_during_the_required_walk() {
    // SPEC VER-1 check 1: a mismatch is added while walking; Missing / OutOfOrder after it.
    let original = [
        sys("s1", "x"),
        sys("s2", "y"),
        sys("s3", "w"),
        conv("c", "z"),
    ];
    let v = check(
        &original,
        &[sys("s3", "w"), sys("s1", "CHANGED"), conv("c", "z")],
    );
    assert_eq!(
        v.rejection_reasons,
        vec![
            RequiredEntryContentMismatch,
            MissingRequiredEntry,
            RequiredEntryOutOfOrder
        ]
    );
    assert_eq!(v.missing_required_entry_ids, eids(&["s2"]));
    assert_eq!(invalid(&v), s(&["s1"]));
}

#[test]
fn ver_1_reasons_deduplicated_and_no_size_check() {
    let original = [sys("s1", "x"), sys("s2", "y"), conv("c", "z")];
    let v = check(&original, &[sys("s1", "X"), sys("s2", "Y"), conv("c", "z")]);
    assert_eq!(v.rejection_reasons, vec![RequiredEntryContentMismatch]);
    assert_eq!(invalid(&v), s(&["s1", "s2"]));
    // A proposal larger than the original is still accepted: no size check.
    let bigger = [
        sys("s1", "x"),
        sys("s2", "y"),
        summary("sum", &"z".repeat(5000)),
        conv("c", "z"),
    ];
    assert!(check(&original, &bigger).is_accepted());
}

#[test]
fn ver_1_duplicate_ids_are_errors_not_rejections() {
    let ok = [conv("a", "1")];
    let dup = [conv("a", "1"), conv("a", "2")];
    assert_eq!(
        imp().verify(&dup, &ok, &p1()).unwrap_err(),
        AssemblyError::DuplicateEntryId {
            entry_id: "a".into()
        }
    );
    assert_eq!(
        imp().verify(&ok, &dup, &p1()).unwrap_err(),
        AssemblyError::DuplicateEntryId {
            entry_id: "a".into()
        }
    );
}

#[test]
fn ver_1_required_ids_come_from_the_original() {
    // The retention units are those of the original: a proposal that keeps only its own
    // "latest" message but drops the original's latest one is missing it.
    let original = [conv("a", "1"), conv("b", "2")];
    let v = check(&original, &[conv("a", "1")]);
    assert_eq!(v.missing_required_entry_ids, eids(&["b"]));
}

#[test]
fn ver_2_structural_equality() {
    // SPEC VER-2.
    let m = |role: &str, parts: Vec<Part>| Message::new(role, parts);
    let base = m("user", vec![Part::text("ab")]);
    assert!(imp().structurally_equal(&base, &base.clone()));
    assert!(!imp().structurally_equal(&base, &m("assistant", vec![Part::text("ab")])));
    let mut authored = base.clone();
    authored.author = Some("bob".into());
    assert!(!imp().structurally_equal(&base, &authored));
    // Same text but different part count / split.
    assert!(!imp().structurally_equal(&base, &m("user", vec![Part::text("a"), Part::text("b")])));
    // Shapes differ.
    assert!(!imp().structurally_equal(
        &m("tool", vec![Part::result("a", Value::Null)]),
        &m("tool", vec![Part::text("a")])
    ));
    // Calls: id, name, informational flag, arguments (absent != empty).
    let call_with = |args: Option<ValueMap>, info: bool| {
        m(
            "assistant",
            vec![Part::Call(FunctionCall {
                call_id: "c".into(),
                name: "f".into(),
                arguments: args,
                informational_only: info,
            })],
        )
    };
    assert!(imp().structurally_equal(&call_with(None, false), &call_with(None, false)));
    assert!(!imp().structurally_equal(&call_with(None, false), &call_with(None, true)));
    assert!(!imp().structurally_equal(
        &call_with(None, false),
        &call_with(Some(ValueMap::new()), false)
    ));
    let mut m1 = ValueMap::new();
    m1.insert("x".into(), Value::I32(1));
    m1.insert("y".into(), Value::Null);
    let mut m2 = ValueMap::new();
    m2.insert("y".into(), Value::Null);
    m2.insert("x".into(), Value::I32(1));
    assert!(imp().structurally_equal(
        &call_with(Some(m1.clone()), false),
        &call_with(Some(m2), false)
    ));
    let mut m3 = m1.clone();
    m3.insert("x".into(), Value::I64(1));
    assert!(!imp().structurally_equal(&call_with(Some(m1), false), &call_with(Some(m3), false)));
    assert!(!imp().structurally_equal(
        &m("assistant", vec![Part::call("c", "f")]),
        &m("assistant", vec![Part::call("c", "g")])
    ));
    assert!(!imp().structurally_equal(
        &m("assistant", vec![Part::call("c", "f")]),
        &m("assistant", vec![Part::call("d", "f")])
    ));
}

#[test]
fn ver_2_value_equality() {
    // SPEC VER-2: NaN != NaN; raw JSON by exact text; decimals by value; lists element-wise.
    let r = |v: Value| Message::new("tool", vec![Part::result("c", v)]);
    let eq = |a: Value, b: Value| imp().structurally_equal(&r(a), &r(b));
    assert!(!eq(Value::F64(f64::NAN), Value::F64(f64::NAN)));
    assert!(!eq(Value::F32(f32::NAN), Value::F32(f32::NAN)));
    assert!(eq(Value::F64(0.5), Value::F64(0.5)));
    assert!(eq(Value::F64(0.0), Value::F64(-0.0)), "0.0 equals -0.0");
    assert!(eq(Value::Null, Value::Null));
    assert!(!eq(Value::Null, Value::String(String::new())));
    assert!(!eq(
        Value::RawJson(RawJson::new("1.0").unwrap()),
        Value::RawJson(RawJson::new("1").unwrap())
    ));
    assert!(eq(
        Value::RawJson(RawJson::new("{\"a\":1}").unwrap()),
        Value::RawJson(RawJson::new("{\"a\":1}").unwrap())
    ));
    assert!(eq(
        Value::Decimal(Decimal::parse("1.50").unwrap()),
        Value::Decimal(Decimal::parse("1.5").unwrap())
    ));
    assert!(!eq(
        Value::List(vec![Value::I32(1), Value::I32(2)]),
        Value::List(vec![Value::I32(2), Value::I32(1)])
    ));
    assert!(!eq(Value::List(vec![Value::I32(1)]), Value::List(vec![])));
    assert!(!eq(Value::String("a".into()), Value::String("A".into())));
    // A NaN inside a retained message makes it "mutated" (SPEC VER-2 consequence).
    let e = Entry::new(
        "r",
        EntryKind::ToolExchange,
        Message::new("tool", vec![Part::result("c", Value::F64(f64::NAN))]),
    )
    .unwrap();
    let original = [call("k", &["c"]), e];
    let v = imp().verify(&original, &original, &p1()).unwrap();
    assert_eq!(v.rejection_reasons, vec![RequiredEntryContentMismatch]);
}

#[test]
fn ver_4_no_proposal_repairs_a_tool_defect() {
    // SPEC VER-4: Verify(x, x) and any required(+optional) subset reject iff x is defective.
    let defective = [
        result("r", &["a"]),
        call("k", &["a"]),
        conv("c", "x"),
        opt("o", "y"),
    ];
    assert!(!check(&defective, &defective).is_accepted());
    let r = imp().required_ids(&defective, 1).unwrap();
    let subset: Vec<Entry> = defective
        .iter()
        .filter(|e| r.contains(e.id()))
        .cloned()
        .collect();
    assert!(!check(&defective, &subset).is_accepted());
    let good = [
        call("k", &["a"]),
        result("r", &["a"]),
        conv("c", "x"),
        opt("o", "y"),
    ];
    assert!(check(&good, &good).is_accepted());
    let r = imp().required_ids(&good, 1).unwrap();
    let subset: Vec<Entry> = good
        .iter()
        .filter(|e| r.contains(e.id()))
        .cloned()
        .collect();
    assert!(check(&good, &subset).is_accepted());
}

// ------------------------------------------------------------ properties --

/// A small random list of tool / conversation entries with unique ids.
fn arb_list() -> impl Strategy<Value = Vec<Entry>> {
    let item = prop_oneof![
        (0u8..4).prop_map(|_| ('m', vec![])),
        proptest::collection::vec(0u8..4, 1..3).prop_map(|c| ('k', c)),
        proptest::collection::vec(0u8..5, 1..3).prop_map(|c| ('r', c)),
        Just(('o', vec![])),
        Just(('s', vec![])),
    ];
    proptest::collection::vec(item, 0..9).prop_map(|items| {
        items
            .into_iter()
            .enumerate()
            .map(|(i, (tag, calls))| {
                let id = format!("e{i}");
                let cids: Vec<String> = calls.iter().map(|c| format!("c{c}")).collect();
                let cref: Vec<&str> = cids.iter().map(|c| c.as_str()).collect();
                match tag {
                    'k' => call(&id, &cref),
                    'r' => result(&id, &cref),
                    'o' => opt(&id, "o"),
                    's' => sys(&id, "s"),
                    _ => conv(&id, "m"),
                }
            })
            .collect()
    })
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// SPEC VER-4: Verify(x, x) is accepted exactly when x has no tool-structure defect, and so
    /// is its required-only subset.
    #[test]
    fn ver_4_self_verification_iff_sequence_valid(list in arb_list(), retention in 1i32..4) {
        let p = text_policy(1000, 10, retention, 1);
        let valid = imp().analyze(&list).is_sequence_valid();
        prop_assert_eq!(imp().verify(&list, &list, &p).unwrap().is_accepted(), valid);
        let r = imp().required_ids(&list, retention).unwrap();
        let sub: Vec<Entry> = list.iter().filter(|e| r.contains(e.id())).cloned().collect();
        prop_assert_eq!(imp().verify(&list, &sub, &p).unwrap().is_accepted(), valid);
    }

    /// SPEC PRE-4 / EXC-3: required ids are in list order, unique, and contain every incomplete
    /// group; analysis lists hold each id once.
    #[test]
    fn pre_4_required_ids_sorted_unique(list in arb_list(), retention in 1i32..4) {
        let r = imp().required_ids(&list, retention).unwrap();
        let positions: Vec<usize> = r
            .iter()
            .map(|id| list.iter().position(|e| e.id() == id).unwrap())
            .collect();
        prop_assert!(positions.windows(2).all(|w| w[0] < w[1]));
        let a = imp().analyze(&list);
        for g in a.groups.iter().filter(|g| !g.complete) {
            for id in &g.all_entry_ids {
                prop_assert!(r.contains(id));
            }
        }
        for l in [&a.orphan_result_entry_ids, &a.duplicate_call_entry_ids, &a.duplicate_result_entry_ids] {
            let mut seen = std::collections::BTreeSet::new();
            prop_assert!(l.iter().all(|id| seen.insert(id.clone())));
        }
    }
}
