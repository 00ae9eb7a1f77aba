//! Clause tests for the data model, snapshots, policy, estimators, artifacts and error kinds
//! (SPEC ENT-1 .. ENT-7, SNAP-1 .. SNAP-5, POL-1 .. POL-4, EST-1 .. EST-5, ART-1, ART-2, ERR-1).
//!
//! Expected values come from the SPEC text (and REFERENCE-SEMANTICS S1-S19, S78-S79), never from
//! running the code under test.

mod common;

use std::sync::Arc;

use common::*;
use hybrid_compaction_model::integration::{augment, AugmentError};
use hybrid_compaction_model::*;
use hybrid_compaction_spec::classify::AdaptError;
use hybrid_compaction_spec::estimate::{
    dotnet_f32, dotnet_f64, evaluate, size, value_size, Utf8ContextEstimator, Utf8TextEstimator,
};
use hybrid_compaction_spec::verify::structurally_equal;

const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const ABC_SHA256: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

// ---------------------------------------------------------------- ENT ----

#[test]
fn ent_1_kinds_in_declaration_order() {
    // SPEC ENT-1: nine kinds, in this order (order drives DIA-6).
    let names: Vec<&str> = EntryKind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(
        names,
        [
            "SystemInstruction",
            "AuthoritativeSessionState",
            "ApprovalSecurityState",
            "ToolExchange",
            "ArtifactReference",
            "ConversationalMessage",
            "Summary",
            "RecoverableContextSegment",
            "OptionalContext"
        ]
    );
    for w in EntryKind::ALL.windows(2) {
        assert!(w[0] < w[1]);
    }
    assert_eq!(EntryKind::from_name("Summary"), Some(EntryKind::Summary));
    assert_eq!(
        EntryKind::from_name("summary"),
        None,
        "ordinal, case-sensitive"
    );
}

#[test]
fn ent_2_blank_ids_are_argument_errors() {
    // SPEC ENT-2: non-empty, not whitespace-only.
    for bad in ["", " ", "\t", "\n \r", "\u{3000}"] {
        let e = Entry::new(
            bad,
            EntryKind::ConversationalMessage,
            Message::text("user", "x"),
        );
        assert_eq!(e.unwrap_err(), EntryError::BlankId, "id {bad:?}");
        assert_eq!(
            EntryId::new(bad).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }
    // Surrounding whitespace is kept verbatim, not trimmed; ids compare ordinally.
    let id = EntryId::new(" a ").unwrap();
    assert_eq!(id.as_str(), " a ");
    assert_ne!(EntryId::new("A").unwrap(), EntryId::new("a").unwrap());
}

#[test]
fn ent_2_singular_digest_only_when_exactly_one() {
    // SPEC ENT-2: ArtifactReferenceDigest = the element when the list has exactly one.
    let one = ref_result("r", "c1", "body");
    assert_eq!(one.artifact_reference_digests().len(), 1);
    assert_eq!(one.artifact_reference_digest(), Some(Digest::of("body")));
    let r = ArtifactReference::to_content("x").to_string();
    let two = Entry::new(
        "r2",
        EntryKind::ToolExchange,
        Message::new(
            "tool",
            vec![
                Part::result("a", Value::String(r.clone())),
                Part::result("b", Value::String(r)),
            ],
        ),
    )
    .unwrap();
    assert_eq!(two.artifact_reference_digests().len(), 2);
    assert_eq!(two.artifact_reference_digest(), None);
    assert_eq!(conv("c", "hi").artifact_reference_digest(), None);
}

#[test]
fn ent_3_message_text_concatenates_text_parts_without_separator() {
    // SPEC ENT-3 (DEP-19: the closed content model; `Part` has exactly three shapes, so no
    // other shape is representable in the model, and the wire format refuses unknown ones).
    let m = Message::new(
        "assistant",
        vec![Part::text("ab"), Part::call("c", "f"), Part::text("cd")],
    );
    assert_eq!(m.text_content(), "abcd");
    assert_eq!(Message::new("user", vec![]).text_content(), "");
    assert_eq!(
        Message::new("tool", vec![Part::result("c", Value::String("zz".into()))]).text_content(),
        ""
    );
}

#[test]
fn ent_4_numeric_variants_are_distinct() {
    // SPEC ENT-4: i32 1 != i64 1 (and every other pair of numeric variants).
    let nums = [
        Value::I16(1),
        Value::I32(1),
        Value::I64(1),
        Value::U8(1),
        Value::U32(1),
        Value::U64(1),
        Value::F32(1.0),
        Value::F64(1.0),
        Value::Decimal(Decimal::new(1, 0).unwrap()),
    ];
    for (i, a) in nums.iter().enumerate() {
        for (j, b) in nums.iter().enumerate() {
            let ma = Message::new("tool", vec![Part::result("c", a.clone())]);
            let mb = Message::new("tool", vec![Part::result("c", b.clone())]);
            assert_eq!(structurally_equal(&ma, &mb), i == j, "{a:?} vs {b:?}");
        }
    }
}

#[test]
fn ent_4_raw_json_and_decimal_construction_errors() {
    // SPEC ENT-4: raw JSON is kept verbatim; only a single valid JSON value is accepted.
    assert_eq!(RawJson::new("{\"a\": 1}").unwrap().as_str(), "{\"a\": 1}");
    assert_eq!(RawJson::new("1e400").unwrap().as_str(), "1e400");
    for bad in ["", " 1", "1 ", "{", "nul", "1 2"] {
        assert_eq!(
            RawJson::new(bad).unwrap_err(),
            ValueError::InvalidRawJson,
            "{bad:?}"
        );
    }
    assert_eq!(
        RawJson::new("\"x\"").unwrap().as_json_string().as_deref(),
        Some("x")
    );
    assert_eq!(RawJson::new("1").unwrap().as_json_string(), None);
    // Decimals: scale 0..=28, |mantissa| < 2^96.
    assert!(Decimal::new(1, 28).is_ok());
    assert_eq!(
        Decimal::new(1, 29).unwrap_err(),
        ValueError::DecimalOutOfRange
    );
    assert_eq!(
        Decimal::new(1i128 << 96, 0).unwrap_err(),
        ValueError::DecimalOutOfRange
    );
    assert_eq!(Decimal::parse("1.50").unwrap().to_string(), "1.50");
    assert!(Decimal::parse("1.").is_err());
    assert!(Decimal::parse("abc").is_err());
}

#[test]
fn ent_5_1_tool_parts_only_in_tool_exchange() {
    // SPEC ENT-5.1.
    for kind in EntryKind::ALL {
        if matches!(
            kind,
            EntryKind::ToolExchange | EntryKind::RecoverableContextSegment
        ) {
            continue;
        }
        let e = Entry::new(
            "x",
            kind,
            Message::new("assistant", vec![Part::call("c", "f")]),
        );
        assert!(
            matches!(e, Err(EntryError::ToolContentOutsideToolExchange { .. })),
            "{kind}"
        );
        let e = Entry::new(
            "x",
            kind,
            Message::new("tool", vec![Part::result("c", Value::Null)]),
        );
        assert!(matches!(
            e,
            Err(EntryError::ToolContentOutsideToolExchange { .. })
        ));
    }
}

#[test]
fn ent_5_2_artifact_reference_text_must_be_exactly_one_reference() {
    // SPEC ENT-5.2.
    let r = ArtifactReference::to_content("abc").to_string();
    let ok = Entry::new(
        "a",
        EntryKind::ArtifactReference,
        Message::text("user", r.clone()),
    )
    .unwrap();
    assert_eq!(
        ok.artifact_reference_digests(),
        &[Digest::parse(ABC_SHA256).unwrap()]
    );
    // Split over two text parts still forms the text (ENT-3).
    let (h, t) = r.split_at(10);
    let split = Entry::new(
        "a",
        EntryKind::ArtifactReference,
        Message::new("user", vec![Part::text(h), Part::text(t)]),
    );
    assert!(split.is_ok());
    for bad in [
        String::new(),
        format!(" {r}"),
        format!("{r}\n"),
        format!("{r}{r}"),
        r.to_uppercase(),
        "see artifact".to_owned(),
    ] {
        let e = Entry::new(
            "a",
            EntryKind::ArtifactReference,
            Message::text("user", bad.clone()),
        );
        assert!(
            matches!(e, Err(EntryError::InvalidArtifactReferenceText { .. })),
            "{bad:?}"
        );
    }
}

#[test]
fn ent_5_3_tool_exchange_shape_and_roles() {
    // SPEC ENT-5.3: >= 1 call or result part, never both; calls need `assistant`, results `tool`.
    let none = Entry::new(
        "t",
        EntryKind::ToolExchange,
        Message::text("assistant", "hi"),
    );
    assert!(matches!(
        none,
        Err(EntryError::ToolExchangeWithoutToolContent { .. })
    ));
    let mixed = Entry::new(
        "t",
        EntryKind::ToolExchange,
        Message::new(
            "assistant",
            vec![Part::call("c", "f"), Part::result("c", Value::Null)],
        ),
    );
    assert!(matches!(
        mixed,
        Err(EntryError::ToolExchangeMixesCallsAndResults { .. })
    ));
    let call_role = Entry::new(
        "t",
        EntryKind::ToolExchange,
        Message::new("user", vec![Part::call("c", "f")]),
    );
    assert!(matches!(
        call_role,
        Err(EntryError::CallRequiresAssistantRole { .. })
    ));
    let result_role = Entry::new(
        "t",
        EntryKind::ToolExchange,
        Message::new("assistant", vec![Part::result("c", Value::Null)]),
    );
    assert!(matches!(
        result_role,
        Err(EntryError::ResultRequiresToolRole { .. })
    ));
    // Text parts next to tool parts are allowed.
    assert!(Entry::new(
        "t",
        EntryKind::ToolExchange,
        Message::new(
            "assistant",
            vec![Part::text("thinking"), Part::call("c", "f")]
        ),
    )
    .is_ok());
}

#[test]
fn ent_5_3_result_digests_in_part_order_duplicates_kept() {
    // SPEC ENT-5.3: one digest per result whose value is a canonical reference as a plain string
    // or a JSON string value; in part order; duplicates kept; call entries have none.
    let ra = ArtifactReference::to_content("a").to_string();
    let rb = ArtifactReference::to_content("b").to_string();
    let json_b = RawJson::new(format!("\"{rb}\"")).unwrap();
    let e = Entry::new(
        "t",
        EntryKind::ToolExchange,
        Message::new(
            "tool",
            vec![
                Part::result("1", Value::String(ra.clone())),
                Part::result("2", Value::RawJson(json_b)),
                Part::result("3", Value::String("not a ref".into())),
                Part::result("4", Value::List(vec![Value::String(ra.clone())])),
                Part::result("5", Value::String(ra.to_uppercase())),
                Part::result(
                    "6",
                    Value::RawJson(RawJson::new(format!("[\"{ra}\"]")).unwrap()),
                ),
                Part::result("7", Value::String(ra)),
            ],
        ),
    )
    .unwrap();
    assert_eq!(
        e.artifact_reference_digests(),
        &[Digest::of("a"), Digest::of("b"), Digest::of("a")]
    );
    assert!(call("c", &["1"]).artifact_reference_digests().is_empty());
}

#[test]
fn ent_5_4_recoverable_refused_by_generic_construction() {
    // SPEC ENT-5.4.
    let e = Entry::new(
        "r",
        EntryKind::RecoverableContextSegment,
        Message::text("user", "body"),
    );
    assert!(matches!(
        e,
        Err(EntryError::RecoverableRequiresFactory { .. })
    ));
    assert_eq!(e.unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn ent_5_5_other_kinds_carry_no_digests() {
    // SPEC ENT-5.5: even a conversational message whose text is a reference has no digests.
    let r = ArtifactReference::to_content("abc").to_string();
    for kind in [
        EntryKind::SystemInstruction,
        EntryKind::AuthoritativeSessionState,
        EntryKind::ApprovalSecurityState,
        EntryKind::ConversationalMessage,
        EntryKind::Summary,
        EntryKind::OptionalContext,
    ] {
        let e = Entry::new("x", kind, Message::text("user", r.clone())).unwrap();
        assert!(e.artifact_reference_digests().is_empty(), "{kind}");
    }
}

#[test]
fn ent_6_recoverable_factory() {
    // SPEC ENT-6: kind RecoverableContextSegment, role user, one text part = body verbatim,
    // digests = [the reference's digest].
    let body = "  body with spaces\n";
    let reference = ArtifactReference::new(Digest::parse(ABC_SHA256).unwrap());
    let e = Entry::recoverable(
        "seg",
        RecoverableSegment {
            reference,
            body: body.to_owned(),
        },
    )
    .unwrap();
    assert_eq!(e.kind(), EntryKind::RecoverableContextSegment);
    assert_eq!(e.message().role, "user");
    assert_eq!(e.message().parts, vec![Part::Text(body.to_owned())]);
    assert_eq!(
        e.artifact_reference_digests(),
        &[Digest::parse(ABC_SHA256).unwrap()]
    );
    assert_eq!(e.recoverable_segment().unwrap().body, body);
    // The factory validates the id too.
    let blank = Entry::recoverable(
        " ",
        RecoverableSegment {
            reference,
            body: "b".into(),
        },
    );
    assert_eq!(blank.unwrap_err(), EntryError::BlankId);
}

#[test]
fn ent_7_entries_are_immutable_values() {
    // SPEC ENT-7: an entry never observes later changes to the message it was built from.
    let mut m = Message::text("user", "before");
    let e = Entry::new("x", EntryKind::ConversationalMessage, m.clone()).unwrap();
    m.parts.push(Part::text("after"));
    m.role = "assistant".into();
    assert_eq!(e.message().text_content(), "before");
    assert_eq!(e.message().role, "user");
    let copy = e.clone();
    assert_eq!(copy, e);
}

// --------------------------------------------------------------- SNAP ----

#[test]
fn snap_1_snapshot_validation() {
    // SPEC SNAP-1: version >= 0, unique ids.
    let e = Snapshot::new(-1, vec![]).unwrap_err();
    assert_eq!(e, SnapshotError::NegativeVersion(-1));
    assert!(matches!(
        e.kind(),
        ErrorKind::OutOfRange | ErrorKind::InvalidArgument
    ));
    let e = Snapshot::new(0, vec![conv("a", "1"), conv("b", "2"), conv("a", "3")]).unwrap_err();
    assert_eq!(e, SnapshotError::DuplicateEntryId("a".into()));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let s = Snapshot::new(i64::MAX, vec![conv("a", "1")]).unwrap();
    assert_eq!(s.version(), i64::MAX);
    assert_eq!(ids(s.entries()), s_(&["a"]));
}

fn s_(v: &[&str]) -> Vec<String> {
    s(v)
}

#[test]
fn snap_3_static_provider_is_always_version_zero() {
    // SPEC SNAP-3.
    let mut p = StaticProvider::new(vec![conv("a", "1"), conv("b", "2")]);
    for _ in 0..3 {
        let snap = p.capture().unwrap();
        assert_eq!(snap.version(), 0);
        assert_eq!(ids(snap.entries()), s(&["a", "b"]));
    }
    // Duplicate ids surface at capture (SPEC SNAP-1).
    let mut dup = StaticProvider::new(vec![conv("a", "1"), conv("a", "2")]);
    assert!(dup.capture().is_err());
}

#[test]
fn snap_4_augmentation_helper() {
    // SPEC SNAP-4: (a) id in baseline rejected, (b) digest not durable rejected, (c) appended.
    let baseline = vec![sys("s", "x"), aref("ref", "body"), conv("c", "hi")];
    let segment = |content: &str| RecoverableSegment {
        reference: ArtifactReference::to_content(content),
        body: content.to_owned(),
    };
    assert_eq!(
        augment(&baseline, "c", segment("body")).unwrap_err(),
        AugmentError::DuplicateId("c".into())
    );
    assert_eq!(
        augment(&baseline, "new", segment("other")).unwrap_err(),
        AugmentError::NotDurable
    );
    assert_eq!(
        augment(&baseline, "new", segment("other"))
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
    let out = augment(&baseline, "new", segment("body")).unwrap();
    assert_eq!(ids(&out), s(&["s", "ref", "c", "new"]));
    assert_eq!(out[3].kind(), EntryKind::RecoverableContextSegment);
    // A tool result carrying the reference also makes it durable (SPEC PRE-2, DEP-8).
    let via_tool = vec![call("k", &["c1"]), ref_result("r", "c1", "tool-body")];
    assert!(augment(&via_tool, "n", segment("tool-body")).is_ok());
    // A recoverable segment never makes itself durable.
    let only_seg = vec![seg("old", "x")];
    assert_eq!(
        augment(&only_seg, "n", segment("x")).unwrap_err(),
        AugmentError::NotDurable
    );
}

#[test]
fn snap_5_scripted_provider_plays_and_repeats_last() {
    // SPEC SNAP-5 (ours): the k-th capture returns step k; past the end the last step repeats.
    let token = CancellationToken::new();
    let mut p = ScriptedProvider::new(vec![(0, vec![conv("a", "1")]), (3, vec![conv("b", "2")])])
        .cancel_at_capture(1, token.clone());
    let s0 = p.capture().unwrap();
    assert_eq!((s0.version(), ids(s0.entries())), (0, s(&["a"])));
    assert!(!token.is_cancelled());
    let s1 = p.capture().unwrap();
    assert_eq!((s1.version(), ids(s1.entries())), (3, s(&["b"])));
    assert!(token.is_cancelled());
    let s2 = p.capture().unwrap();
    assert_eq!(s2.version(), 3);
    assert_eq!(p.captures(), 3);
    let mut empty = ScriptedProvider::new(vec![]);
    let e = empty.capture().unwrap();
    assert_eq!((e.version(), e.entries().len()), (0, 0));
}

// ---------------------------------------------------------------- POL ----

#[test]
fn pol_1_threshold_is_hard_limit_minus_margin() {
    // SPEC POL-1.
    let p = text_policy(100, 30, 2, 3);
    assert_eq!(p.trigger_threshold(), 70);
    assert_eq!(p.hard_limit(), 100);
    assert_eq!(p.trigger_margin(), 30);
    assert_eq!(p.recent_message_retention_count(), 2);
    assert_eq!(p.maximum_compaction_attempts(), 3);
    assert_eq!(p.preservation_label(), "test");
    assert_eq!(p.preservation_version(), 1);
    assert_eq!(p.estimator().unit(), MeasurementUnit::Utf8Bytes);
    // Smallest legal policy: threshold 1.
    assert_eq!(text_policy(2, 1, 1, 1).trigger_threshold(), 1);
    assert_eq!(
        text_policy(i32::MAX, i32::MAX - 1, 1, 1).trigger_threshold(),
        1
    );
}

fn base_spec() -> PolicySpec {
    spec(100, 10, 1, 1, Arc::new(Utf8TextEstimator))
}

/// A change applied to a valid policy spec.
type Mutation = Box<dyn Fn(&mut PolicySpec)>;

#[test]
fn pol_2_each_check_and_its_error_kind() {
    // SPEC POL-2: each rule, its field and error kind.
    let cases: Vec<(Mutation, PolicyField, ErrorKind)> = vec![
        (
            Box::new(|s| s.hard_limit = 0),
            PolicyField::HardLimit,
            ErrorKind::OutOfRange,
        ),
        (
            Box::new(|s| s.hard_limit = -5),
            PolicyField::HardLimit,
            ErrorKind::OutOfRange,
        ),
        (
            Box::new(|s| s.trigger_margin = 0),
            PolicyField::TriggerMargin,
            ErrorKind::OutOfRange,
        ),
        (
            Box::new(|s| s.trigger_margin = 100),
            PolicyField::TriggerMargin,
            ErrorKind::OutOfRange,
        ),
        (
            Box::new(|s| s.trigger_margin = 101),
            PolicyField::TriggerMargin,
            ErrorKind::OutOfRange,
        ),
        (
            Box::new(|s| s.recent_message_retention_count = 0),
            PolicyField::RecentMessageRetentionCount,
            ErrorKind::OutOfRange,
        ),
        (
            Box::new(|s| s.maximum_compaction_attempts = 0),
            PolicyField::MaximumCompactionAttempts,
            ErrorKind::OutOfRange,
        ),
        (
            Box::new(|s| s.preservation_label = None),
            PolicyField::PreservationLabel,
            ErrorKind::NullArgument,
        ),
        (
            Box::new(|s| s.preservation_label = Some(" \t".into())),
            PolicyField::PreservationLabel,
            ErrorKind::InvalidArgument,
        ),
        (
            Box::new(|s| s.preservation_label = Some(String::new())),
            PolicyField::PreservationLabel,
            ErrorKind::InvalidArgument,
        ),
        (
            Box::new(|s| s.preservation_version = 0),
            PolicyField::PreservationVersion,
            ErrorKind::OutOfRange,
        ),
        (
            Box::new(|s| s.estimator = None),
            PolicyField::SizeEstimator,
            ErrorKind::NullArgument,
        ),
    ];
    for (mutate, field, kind) in cases {
        let mut sp = base_spec();
        mutate(&mut sp);
        let err = Policy::new(sp).unwrap_err();
        assert_eq!((err.field(), err.kind()), (field, kind), "{err}");
    }
    assert!(Policy::new(base_spec()).is_ok());
}

#[test]
fn pol_2_validation_order_reports_the_first_failure() {
    // SPEC POL-2: in order HardLimit, TriggerMargin (>0, <HardLimit), Retention, Attempts,
    // label (missing / blank), PreservationVersion, estimator.
    let mut all_bad = base_spec();
    all_bad.hard_limit = 0;
    all_bad.trigger_margin = 0;
    all_bad.recent_message_retention_count = 0;
    all_bad.maximum_compaction_attempts = 0;
    all_bad.preservation_label = None;
    all_bad.preservation_version = 0;
    all_bad.estimator = None;
    let order = [
        PolicyField::HardLimit,
        PolicyField::TriggerMargin,
        PolicyField::RecentMessageRetentionCount,
        PolicyField::MaximumCompactionAttempts,
        PolicyField::PreservationLabel,
        PolicyField::PreservationVersion,
        PolicyField::SizeEstimator,
    ];
    let fixes: [fn(&mut PolicySpec); 7] = [
        |s| s.hard_limit = 100,
        |s| s.trigger_margin = 10,
        |s| s.recent_message_retention_count = 1,
        |s| s.maximum_compaction_attempts = 1,
        |s| s.preservation_label = Some("l".into()),
        |s| s.preservation_version = 1,
        |s| s.estimator = Some(Arc::new(Utf8TextEstimator)),
    ];
    let mut sp = all_bad;
    for (field, fix) in order.iter().zip(fixes) {
        assert_eq!(Policy::new(sp.clone()).unwrap_err().field(), *field);
        fix(&mut sp);
    }
    assert!(Policy::new(sp).is_ok());
    // margin >= hard limit is checked before retention.
    let mut sp = base_spec();
    sp.trigger_margin = 100;
    sp.recent_message_retention_count = 0;
    assert_eq!(
        Policy::new(sp).unwrap_err().field(),
        PolicyField::TriggerMargin
    );
}

/// An estimator that sets a cancellation token when it runs (to probe the "after" check).
#[derive(Debug)]
struct CancellingEstimator(CancellationToken);

impl Estimator for CancellingEstimator {
    fn unit(&self) -> MeasurementUnit {
        MeasurementUnit::HostDefinedUnits
    }
    fn estimate(&self, _entry: &Entry) -> i32 {
        self.0.cancel();
        1
    }
}

#[test]
fn pol_3_evaluate_sums_and_reports() {
    // SPEC POL-3: Σ estimator over entries; result fields.
    let p = text_policy(10, 4, 1, 1);
    let list = vec![conv("a", "abc"), conv("b", "de")];
    let ev = evaluate(&list, &p, &CancellationToken::new()).unwrap();
    assert_eq!(
        ev,
        TriggerEvaluation {
            estimated_size: 5,
            hard_limit: 10,
            trigger_margin: 4,
            trigger_threshold: 6,
            triggered: false
        }
    );
    assert_eq!(
        evaluate(&[], &p, &CancellationToken::new())
            .unwrap()
            .estimated_size,
        0
    );
}

#[test]
fn pol_3_negative_estimate_is_invalid_operation_no_clamping() {
    // SPEC POL-3: negative per-entry estimate → invalid-operation error, naming the entry.
    let p = table_policy(10, 1, 1, 1, &[("a", 5), ("b", -1)]);
    let err = evaluate(
        &[conv("a", ""), conv("b", "")],
        &p,
        &CancellationToken::new(),
    )
    .unwrap_err();
    assert_eq!(
        err,
        AssemblyError::NegativeEstimate {
            entry_id: "b".into()
        }
    );
    assert_eq!(err.kind(), ErrorKind::InvalidOperation);
    assert_eq!(err.entry_id(), Some("b"));
}

#[test]
fn pol_3_checked_32_bit_sum() {
    // SPEC POL-3: overflow-checked signed 32-bit sum.
    let est = table(&[("a", i32::MAX - 1), ("b", 1), ("c", 1)], 0);
    let two = [conv("a", ""), conv("b", "")];
    assert_eq!(size(&two, &est).unwrap(), i32::MAX);
    let three = [conv("a", ""), conv("b", ""), conv("c", "")];
    let err = size(&three, &est).unwrap_err();
    assert_eq!(err, AssemblyError::SizeOverflow);
    assert_eq!(err.kind(), ErrorKind::Overflow);
}

#[test]
fn pol_3_cancellation_before_and_after_evaluation() {
    // SPEC POL-3 / ASM-16: cancellation checked before and after the sum.
    let p = text_policy(10, 1, 1, 1);
    let err = evaluate(&[conv("a", "x")], &p, &CancellationToken::cancelled()).unwrap_err();
    assert_eq!(err, AssemblyError::Cancelled);
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    let token = CancellationToken::new();
    let p2 = Policy::new(spec(
        10,
        1,
        1,
        1,
        Arc::new(CancellingEstimator(token.clone())),
    ))
    .unwrap();
    assert_eq!(
        evaluate(&[conv("a", "x")], &p2, &token).unwrap_err(),
        AssemblyError::Cancelled
    );
    // Nothing to estimate: no cancellation arises during the sum.
    let token = CancellationToken::new();
    let p3 = Policy::new(spec(
        10,
        1,
        1,
        1,
        Arc::new(CancellingEstimator(token.clone())),
    ))
    .unwrap();
    assert!(evaluate(&[], &p3, &token).is_ok());
}

#[test]
fn pol_4_triggered_at_exactly_the_threshold() {
    // SPEC POL-4 (DEP-20: the code's `>=`, not "exceeds").
    let p = text_policy(10, 4, 1, 1); // threshold 6
    let c = CancellationToken::new();
    assert!(!evaluate(&[conv("a", "12345")], &p, &c).unwrap().triggered);
    assert!(evaluate(&[conv("a", "123456")], &p, &c).unwrap().triggered);
    assert!(evaluate(&[conv("a", "1234567")], &p, &c).unwrap().triggered);
}

// ---------------------------------------------------------------- EST ----

#[test]
fn est_1_units_and_their_order() {
    // SPEC EST-1.
    assert!(MeasurementUnit::Utf8Bytes < MeasurementUnit::EstimatedTokens);
    assert!(MeasurementUnit::EstimatedTokens < MeasurementUnit::HostDefinedUnits);
    assert_eq!(Utf8ContextEstimator.unit(), MeasurementUnit::Utf8Bytes);
    assert_eq!(Utf8TextEstimator.unit(), MeasurementUnit::Utf8Bytes);
    assert_eq!(
        ConstantEstimator(3).unit(),
        MeasurementUnit::HostDefinedUnits
    );
    assert_eq!(table(&[], 0).unit(), MeasurementUnit::HostDefinedUnits);
    assert_eq!(MeasurementUnit::EstimatedTokens.name(), "EstimatedTokens");
}

#[test]
fn est_2_text_parts_measure_utf8_bytes_not_role_or_author() {
    // SPEC EST-2: text → UTF-8 bytes; role, author, separators not counted.
    let mut m = Message::new("user", vec![Part::text("héllo"), Part::text("€")]);
    m.author = Some("a-very-long-author-name".into());
    let e = Entry::new("x", EntryKind::ConversationalMessage, m).unwrap();
    assert_eq!(Utf8ContextEstimator.estimate(&e), 6 + 3);
    assert_eq!(Utf8ContextEstimator.estimate(&conv("y", "")), 0);
    assert_eq!(Utf8ContextEstimator.estimate(&conv("z", "🙂")), 4);
}

#[test]
fn est_2_call_and_result_parts() {
    // SPEC EST-2: call → id + name + (absent ? 0 : size(map)); result → id + size(value).
    let mut args = ValueMap::new();
    args.insert("path".into(), Value::String("/tmp/x".into())); // 4 + 6
    args.insert("n".into(), Value::I32(-12)); // 1 + 3
    let with_args = Part::Call(FunctionCall {
        call_id: "call_1".into(), // 6
        name: "read_file".into(), // 9
        arguments: Some(args),
        informational_only: true,
    });
    let e = Entry::new(
        "c",
        EntryKind::ToolExchange,
        Message::new(
            "assistant",
            vec![Part::text("ok"), with_args, Part::call("c2", "f")],
        ),
    )
    .unwrap();
    assert_eq!(
        Utf8ContextEstimator.estimate(&e),
        2 + (6 + 9 + 10 + 4) + (2 + 1)
    );
    let r = Entry::new(
        "r",
        EntryKind::ToolExchange,
        Message::new(
            "tool",
            vec![
                Part::result("call_1", Value::String("done".into())), // 6 + 4
                Part::result("c2", Value::Null),                      // 2 + 0
            ],
        ),
    )
    .unwrap();
    assert_eq!(Utf8ContextEstimator.estimate(&r), 10 + 2);
}

#[test]
fn est_2_value_sizes() {
    // SPEC EST-2: size(value) for every variant of the closed set.
    let dec = |t: &str| Value::Decimal(Decimal::parse(t).unwrap());
    let raw = |t: &str| Value::RawJson(RawJson::new(t).unwrap());
    let cases: Vec<(Value, i32)> = vec![
        (Value::Null, 0),
        (Value::String(String::new()), 0),
        (Value::String("日本".into()), 6),
        (Value::Bool(true), 4),
        (Value::Bool(false), 5),
        (Value::I16(i16::MIN), 6),
        (Value::I32(-1), 2),
        (Value::I64(i64::MAX), 19),
        (Value::U8(255), 3),
        (Value::U32(0), 1),
        (Value::U64(u64::MAX), 20),
        (Value::F64(1.0), 1),
        (Value::F64(0.1), 3),
        (Value::F64(1e21), 5),
        (Value::F64(1e-7), 5),
        (Value::F32(0.1), 3),
        (dec("1.50"), 4),
        (dec("-0.001"), 6),
        (raw("{\"a\": [1, 2]}"), 13),
        (raw("\"x\""), 3),
        (raw("true"), 4),
        (
            Value::List(vec![Value::Bool(true), Value::Null, Value::I32(10)]),
            6,
        ),
        (Value::List(vec![]), 0),
    ];
    for (v, expected) in cases {
        assert_eq!(value_size(&v), expected, "{v:?}");
    }
    let mut inner = ValueMap::new();
    inner.insert("k".into(), Value::Bool(false)); // 1 + 5
    let mut outer = ValueMap::new();
    outer.insert("key".into(), Value::Map(inner)); // 3 + 6
    outer.insert("é".into(), Value::Null); // 2 + 0
    assert_eq!(value_size(&Value::Map(outer)), 11);
}

#[test]
fn est_2_dotnet_double_rendering() {
    // SPEC EST-2: shortest round-trip digits; scientific iff scale > max(digits, 17) or < -3;
    // `d[.ddd]E+XX` with >= 2 exponent digits and an explicit sign.
    let cases: &[(f64, &str)] = &[
        (0.0, "0"),
        (-0.0, "-0"),
        (1.0, "1"),
        (-60.0, "-60"),
        (0.1, "0.1"),
        (1.5, "1.5"),
        (100.0, "100"),
        (0.0001, "0.0001"),
        (0.00012, "0.00012"),
        (1e-5, "1E-05"),
        (1e-7, "1E-07"),
        (-1.5e-10, "-1.5E-10"),
        (1e15, "1000000000000000"),
        (1e16, "10000000000000000"),
        (1e17, "1E+17"),
        (1e21, "1E+21"),
        (123456789012345680000.0, "1.2345678901234568E+20"),
        (0.30000000000000004, "0.30000000000000004"),
        (12345678901234567.0, "12345678901234568"),
        (f64::MAX, "1.7976931348623157E+308"),
        (5e-324, "5E-324"),
        (1e100, "1E+100"),
        (f64::NAN, "NaN"),
        (f64::INFINITY, "Infinity"),
        (f64::NEG_INFINITY, "-Infinity"),
    ];
    for (x, expected) in cases {
        assert_eq!(dotnet_f64(*x), *expected, "{x:e}");
        assert_eq!(value_size(&Value::F64(*x)), expected.len() as i32);
    }
}

#[test]
fn est_2_dotnet_float_rendering() {
    // SPEC EST-2: as for double, with 9 in place of 17.
    let cases: &[(f32, &str)] = &[
        (0.0, "0"),
        (-0.0, "-0"),
        (0.1, "0.1"),
        (1.0e8, "100000000"),
        (1.0e9, "1E+09"),
        (16777216.0, "16777216"),
        (1.0e-4, "0.0001"),
        (1.0e-5, "1E-05"),
        (f32::MAX, "3.4028235E+38"),
        (f32::NAN, "NaN"),
        (f32::NEG_INFINITY, "-Infinity"),
    ];
    for (x, expected) in cases {
        assert_eq!(dotnet_f32(*x), *expected, "{x:e}");
    }
}

#[test]
fn est_3_artifact_reference_measures_82_and_segment_its_body() {
    // SPEC EST-3.
    assert_eq!(Utf8ContextEstimator.estimate(&aref("a", "anything")), 82);
    assert_eq!(artifact::REFERENCE_LEN, 82);
    assert_eq!(Utf8ContextEstimator.estimate(&seg("s", "body ü")), 7);
}

#[test]
fn est_4_text_estimator_ignores_tool_parts() {
    // SPEC EST-4: bytes of the message text; call/result parts 0.
    assert_eq!(Utf8TextEstimator.estimate(&call("c", &["x", "y"])), 0);
    assert_eq!(Utf8TextEstimator.estimate(&result("r", &["x"])), 0);
    assert_eq!(Utf8TextEstimator.estimate(&call_t("c", "ab", &["x"])), 2);
    assert_eq!(Utf8TextEstimator.estimate(&conv("m", "ñ")), 2);
    // The context estimator counts the call id and name as well.
    assert_eq!(
        Utf8ContextEstimator.estimate(&call_t("c", "ab", &["x"])),
        2 + 1 + 1
    );
}

#[test]
fn est_5_host_defined_estimators() {
    // SPEC EST-5: constant and per-entry-table estimators, labelled HostDefinedUnits.
    let c = ConstantEstimator(7);
    assert_eq!(c.estimate(&conv("a", "long text")), 7);
    let t = table(&[("a", 3)], 11);
    assert_eq!(t.estimate(&conv("a", "")), 3);
    assert_eq!(t.estimate(&conv("b", "")), 11);
    let p = Policy::new(spec(10, 1, 1, 1, Arc::new(c))).unwrap();
    assert_eq!(p.estimator().unit(), MeasurementUnit::HostDefinedUnits);
}

// ---------------------------------------------------------------- ART ----

#[test]
fn art_1_digest_is_lowercase_sha256_hex() {
    // SPEC ART-1.
    assert_eq!(Digest::of("").to_hex(), EMPTY_SHA256);
    assert_eq!(Digest::of("abc").to_hex(), ABC_SHA256);
    assert_eq!(Digest::parse(ABC_SHA256).unwrap(), Digest::of("abc"));
    let upper = ABC_SHA256.to_uppercase();
    for bad in [
        &ABC_SHA256[..63],
        &format!("{ABC_SHA256}0")[..],
        &upper[..],
        "g".repeat(64).as_str(),
        "",
    ] {
        assert_eq!(
            Digest::parse(bad).unwrap_err(),
            ArtifactError::MalformedDigest,
            "{bad:?}"
        );
    }
}

#[test]
fn art_2_reference_identity_parse_and_format() {
    // SPEC ART-2: `artifact://sha256/` + digest, 82 ASCII bytes, exact parse, path layout.
    let r = ArtifactReference::to_content("abc");
    let text = r.to_string();
    assert_eq!(text, format!("artifact://sha256/{ABC_SHA256}"));
    assert_eq!(text.len(), 82);
    assert_eq!(ArtifactReference::parse(&text).unwrap(), r);
    assert_eq!(r.path(), format!(".foundry/artifacts/ba/78/{ABC_SHA256}"));
    for bad in [
        format!(" {text}"),
        format!("{text} "),
        format!("{text}\n"),
        text.replace("artifact", "ARTIFACT"),
        text.replace("sha256", "sha512"),
        format!("artifact://sha256/{}", ABC_SHA256.to_uppercase()),
        "artifact://sha256/".to_owned(),
        format!("artifact:/sha256/{ABC_SHA256}"),
        format!("x{text}"),
    ] {
        assert_eq!(
            ArtifactReference::parse(&bad).unwrap_err(),
            ArtifactError::MalformedReference,
            "{bad:?}"
        );
    }
}

// ---------------------------------------------------------------- ERR ----

#[test]
fn err_1_every_error_maps_to_one_kind() {
    // SPEC ERR-1.
    use hybrid_compaction_model::assembly::ContractViolation;
    let cases = [
        (AssemblyError::Cancelled.kind(), ErrorKind::Cancelled),
        (
            AssemblyError::NegativeEstimate {
                entry_id: "a".into(),
            }
            .kind(),
            ErrorKind::InvalidOperation,
        ),
        (AssemblyError::SizeOverflow.kind(), ErrorKind::Overflow),
        (
            AssemblyError::DuplicateEntryId {
                entry_id: "a".into(),
            }
            .kind(),
            ErrorKind::InvalidArgument,
        ),
        (
            AssemblyError::ReducerReturnedNothing.kind(),
            ErrorKind::InvalidOperation,
        ),
        (
            AssemblyError::Reducer(ReducerError::Failed("x".into())).kind(),
            ErrorKind::ReducerFailed,
        ),
        (
            AssemblyError::Reducer(ReducerError::Contract(ContractViolation::NullResult)).kind(),
            ErrorKind::ReducerContract,
        ),
        (
            AssemblyError::DiagnosticsInvariant("x").kind(),
            ErrorKind::InvalidOperation,
        ),
        (
            AssemblyError::Snapshot(SnapshotError::DuplicateEntryId("a".into())).kind(),
            ErrorKind::InvalidArgument,
        ),
        (EntryError::BlankId.kind(), ErrorKind::InvalidArgument),
        (
            AdaptError::ForbiddenOverride {
                index: 0,
                kind: EntryKind::ToolExchange,
            }
            .kind(),
            ErrorKind::InvalidOperation,
        ),
        (
            AdaptError::Entry {
                index: 0,
                source: EntryError::BlankId,
            }
            .kind(),
            ErrorKind::InvalidArgument,
        ),
        (AugmentError::NotDurable.kind(), ErrorKind::InvalidArgument),
    ];
    for (got, expected) in cases {
        assert_eq!(got, expected);
    }
    assert_eq!(ErrorKind::ALL.len(), 9);
    // Error messages never panic to format.
    let _ = AssemblyError::Reducer(ReducerError::Failed("x".into())).to_string();
}
