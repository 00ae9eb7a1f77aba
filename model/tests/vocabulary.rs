//! Clause tests of the shared vocabulary: entry construction (SPEC ENT-1 .. ENT-7; ENT-4's
//! structural equality is the implementations' and lives in the clause suite), snapshots and
//! providers (SNAP-1, SNAP-3 .. SNAP-5), policy validation (POL-2), the host-defined estimators
//! (EST-5), digests and references (ART-1, ART-2) and the declaration orders of outcomes, stages,
//! rejection reasons, the capability enums and the composition statuses (ASM-1, ASM-2, VER-3,
//! CAP-2, CMP-2).
//!
//! These tests call no implementation function: the executable spec and the engine share every
//! type exercised here, so they run once, in this crate, instead of once per implementation in
//! the clause suite (`tests/clauses/` at the workspace root). Policies here measure with a
//! vocabulary estimator (`ConstantEstimator`), since this crate knows neither implementation.
//! Expected values come from the SPEC text, never from running the code under test.

use std::collections::BTreeMap;
use std::sync::Arc;

use hybrid_compaction_model::integration::{augment, AugmentError};
use hybrid_compaction_model::*;

/// A `ConversationalMessage` with role `user` and one text part.
fn conv(id: &str, text: &str) -> Entry {
    Entry::new(
        id,
        EntryKind::ConversationalMessage,
        Message::text("user", text),
    )
    .unwrap()
}

/// A `SystemInstruction`.
fn sys(id: &str, text: &str) -> Entry {
    Entry::new(
        id,
        EntryKind::SystemInstruction,
        Message::text("system", text),
    )
    .unwrap()
}

/// A `ToolExchange` call entry (role `assistant`, function `f`, no arguments).
fn call(id: &str, call_ids: &[&str]) -> Entry {
    let parts = call_ids.iter().map(|c| Part::call(*c, "f")).collect();
    Entry::new(
        id,
        EntryKind::ToolExchange,
        Message::new("assistant", parts),
    )
    .unwrap()
}

/// A result entry whose single result value is the canonical reference to `content`.
fn ref_result(id: &str, call_id: &str, content: &str) -> Entry {
    let r = ArtifactReference::to_content(content).to_string();
    Entry::new(
        id,
        EntryKind::ToolExchange,
        Message::new("tool", vec![Part::result(call_id, Value::String(r))]),
    )
    .unwrap()
}

/// An `ArtifactReference` entry naming `content`.
fn aref(id: &str, content: &str) -> Entry {
    let r = ArtifactReference::to_content(content).to_string();
    Entry::new(id, EntryKind::ArtifactReference, Message::text("user", r)).unwrap()
}

/// A `RecoverableContextSegment` whose body is `content`.
fn seg(id: &str, content: &str) -> Entry {
    Entry::recoverable(
        id,
        RecoverableSegment {
            reference: ArtifactReference::to_content(content),
            body: content.to_owned(),
        },
    )
    .unwrap()
}

/// A policy spec with the given numbers, label `test`, version 1 and `estimator`.
fn spec(
    h: i32,
    margin: i32,
    retention: i32,
    attempts: i32,
    estimator: Arc<dyn Estimator>,
) -> PolicySpec {
    PolicySpec {
        hard_limit: h,
        trigger_margin: margin,
        recent_message_retention_count: retention,
        maximum_compaction_attempts: attempts,
        preservation_label: Some("test".into()),
        preservation_version: 1,
        estimator: Some(estimator),
    }
}

/// A table estimator.
fn table(sizes: &[(&str, i32)], default: i32) -> TableEstimator {
    TableEstimator {
        sizes: sizes
            .iter()
            .map(|(k, v)| ((*k).to_owned(), *v))
            .collect::<BTreeMap<_, _>>(),
        default,
    }
}

/// The ids of a list, as strings.
fn ids(entries: &[Entry]) -> Vec<String> {
    entries.iter().map(|e| e.id().as_str().to_owned()).collect()
}

/// Owned strings from literals.
fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_owned()).collect()
}

const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const ABC_SHA256: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

// --------------------------------------------------------------------- ENT ----

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
fn ent_3_dep_19_message_text_concatenates_text_parts_without_separator() {
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

// -------------------------------------------------------------------- SNAP ----

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

// --------------------------------------------------------------------- POL ----

fn base_spec() -> PolicySpec {
    spec(100, 10, 1, 1, Arc::new(ConstantEstimator(1)))
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
        |s| s.estimator = Some(Arc::new(ConstantEstimator(1))),
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

// --------------------------------------------------------------------- EST ----

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

// --------------------------------------------------------------------- ART ----

#[test]
fn art_1_digest_is_lowercase_sha256_hex() {
    // SPEC ART-1.
    assert_eq!(Digest::of("").to_hex(), EMPTY_SHA256);
    assert_eq!(Digest::of("abc").to_hex(), ABC_SHA256);
    assert_eq!(Digest::parse(ABC_SHA256).unwrap(), Digest::of("abc"));
    // Every byte value renders as its two lowercase digits, by to_hex, Display and
    // to_lower_hex alike, and parses back.
    for k in 0..8u32 {
        let hex: String = (0..32).map(|i| format!("{:02x}", k * 32 + i)).collect();
        let d = Digest::parse(&hex).unwrap();
        assert_eq!(d.to_hex(), hex);
        assert_eq!(d.to_string(), hex);
        assert_eq!(
            hybrid_compaction_model::artifact::to_lower_hex(d.as_bytes()),
            hex
        );
    }
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
    // Every ASCII byte at every position: accepted exactly when it is a lowercase hex digit,
    // with that digit's value; a two-byte character in place of two digits is refused.
    let zeros = "0".repeat(64);
    for at in 0..64 {
        for b in 0..128u8 {
            let mut hex = zeros.clone().into_bytes();
            hex[at] = b;
            let hex = String::from_utf8(hex).unwrap();
            let value = (b as char).to_digit(16).filter(|_| !b.is_ascii_uppercase());
            match (Digest::parse(&hex), value) {
                (Ok(d), Some(v)) => {
                    let nibble = d.as_bytes()[at / 2] >> if at % 2 == 0 { 4 } else { 0 };
                    assert_eq!(u32::from(nibble & 0x0f), v, "{hex:?}");
                }
                (Err(e), None) => assert_eq!(e, ArtifactError::MalformedDigest),
                (got, want) => panic!("{hex:?}: parsed {got:?}, expected digit {want:?}"),
            }
        }
        if at < 63 {
            let hex = format!("{}\u{e9}{}", &zeros[..at], &zeros[at + 2..]);
            assert!(Digest::parse(&hex).is_err(), "{hex:?}");
        }
    }
}

#[test]
fn art_2_reference_identity_parse_and_format() {
    // SPEC ART-2: `artifact://sha256/` + digest, 82 ASCII bytes, exact parse, path layout.
    let r = ArtifactReference::to_content("abc");
    let text = r.to_string();
    assert_eq!(text, format!("artifact://sha256/{ABC_SHA256}"));
    assert_eq!(text.len(), 82);
    // `text` is the same text, in one allocation, for every byte value of a digest.
    assert_eq!(r.text(), text);
    assert_eq!(r.text().capacity(), 82);
    for k in 0..8u32 {
        let hex: String = (0..32).map(|i| format!("{:02x}", k * 32 + i)).collect();
        let other = ArtifactReference::new(Digest::parse(&hex).unwrap());
        assert_eq!(other.text(), format!("artifact://sha256/{hex}"));
        assert_eq!(other.text(), other.to_string());
    }
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

// ------------------------------------------------------- declaration orders --

#[test]
fn asm_1_and_asm_2_declaration_orders() {
    // SPEC ASM-1 / ASM-2.
    let o: Vec<&str> = Outcome::ALL.iter().map(|o| o.name()).collect();
    assert_eq!(
        o,
        [
            "WithinLimit",
            "Reduced",
            "PreservationFallback",
            "Irreducible",
            "ConcurrentMutationLimit"
        ]
    );
    assert_eq!(
        Outcome::ALL.map(|o| o.is_success()),
        [true, true, true, false, false]
    );
    let s: Vec<&str> = Stage::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(
        s,
        [
            "SnapshotCaptured",
            "RecoverableBodyEviction",
            "ReducerAttempt",
            "RestartedAfterMutation",
            "DeterministicFallback"
        ]
    );
}

#[test]
fn ver_3_reason_declaration_order() {
    // SPEC VER-3.
    let names: Vec<&str> = RejectionReason::ALL.iter().map(|r| r.name()).collect();
    assert_eq!(
        names,
        [
            "MissingRequiredEntry",
            "RequiredEntryOutOfOrder",
            "RequiredEntryContentMismatch",
            "OrphanedToolCall",
            "OrphanedToolResult",
            "DuplicateToolCall",
            "DuplicateToolResult",
            "ReorderedToolGroup",
            "CrossGroupToolResult",
            "ForgedStructuralEntry",
            "RetainedOriginalEntryMutated"
        ]
    );
    assert!(VerificationOutcome::Accepted < VerificationOutcome::Rejected);
}

fn names<T>(
    all: impl IntoIterator<Item = T>,
    name: impl Fn(T) -> &'static str,
) -> Vec<&'static str> {
    all.into_iter().map(name).collect()
}

#[test]
fn cap_2_capability_enums_are_declared_in_order() {
    // SPEC CAP-2 (C# S75): declaration orders and phase values.
    use hybrid_compaction_model::capability::{
        Acceptance, AotStatus, BundleLane, CapabilityState, DeliveryPhase, DiagnosticsStatus,
        Stability, TrustBoundary,
    };
    assert_eq!(
        names(CapabilityState::ALL, CapabilityState::name),
        ["Disabled", "Enabled", "Deferred", "Unsupported"]
    );
    assert_eq!(
        names(TrustBoundary::ALL, TrustBoundary::name),
        [
            "None",
            "HostIdentity",
            "FileSystem",
            "ExternalContent",
            "Approval"
        ]
    );
    assert_eq!(
        names(AotStatus::ALL, AotStatus::name),
        ["Verified", "Compatible", "Unverified", "Unsupported"]
    );
    assert_eq!(
        names(DiagnosticsStatus::ALL, DiagnosticsStatus::name),
        ["Available", "Partial", "Unavailable"]
    );
    assert_eq!(
        DeliveryPhase::ALL
            .iter()
            .map(|p| (p.name(), p.value()))
            .collect::<Vec<_>>(),
        [
            ("G2", 2),
            ("G3", 3),
            ("G4", 4),
            ("G5", 5),
            ("G6", 6),
            ("G7", 7)
        ]
    );
    assert_eq!(
        names(Stability::ALL, Stability::name),
        ["Stable", "Experimental", "ProviderDependent"]
    );
    assert_eq!(
        names(Acceptance::ALL, Acceptance::name),
        ["StableOnly", "StableAndExperimental"]
    );
    assert_eq!(
        names(BundleLane::ALL, BundleLane::name),
        ["SelectedProviders", "CompleteBundle"]
    );
}

#[test]
fn cmp_2_composition_statuses_are_declared_in_order() {
    // SPEC CMP-2 (C# S74).
    use hybrid_compaction_model::composition::CompositionStatus;
    assert_eq!(
        names(CompositionStatus::ALL, CompositionStatus::name),
        [
            "Disabled",
            "Success",
            "CapabilityEnabledWithoutProfile",
            "ProfileSuppliedWithoutCapabilityEnabled",
            "ProfileNotExecutable",
            "ExistingCompactionComponent"
        ]
    );
}

/// The scripted reducer's `KeepIdOf(entry)` keeps exactly what `Keep(id)` of that entry's id
/// keeps (the first request entry with the id, even when the entry given is another value with
/// that id), through the per-id scan (few kept ids) and the id index (many), and fails as
/// `Keep` does for an id the request lacks.
#[test]
fn scripted_keep_id_of_is_keep_of_the_id() {
    use hybrid_compaction_model::reducers::{ProposalItem, ScriptStep, ScriptedReducer};
    let policy = Policy::new(spec(1000, 10, 1, 1, Arc::new(ConstantEstimator(1)))).unwrap();
    let request: Vec<Entry> = (0..12)
        .map(|i| conv(&format!("e{}", i % 11), &format!("text {i}")))
        .collect();
    let play = |items: Vec<ProposalItem>| {
        let mut r = ScriptedReducer::new(vec![ScriptStep::Propose(items)]);
        r.reduce(&ReductionRequest {
            entries: &request,
            required_entry_ids: &[],
            policy: &policy,
            attempt_number: 1,
        })
    };
    // Another value with a request id: the request's first entry with that id is kept.
    let other = conv("e0", "other text");
    for n in [3, 12] {
        let picks: Vec<Entry> = request
            .iter()
            .rev()
            .take(n)
            .cloned()
            .chain([other.clone()])
            .collect();
        let by_id = play(
            picks
                .iter()
                .map(|e| ProposalItem::Keep(e.id().as_str().to_owned()))
                .collect(),
        );
        let by_entry = play(picks.iter().cloned().map(ProposalItem::KeepIdOf).collect());
        assert_eq!(by_entry, by_id, "{n} kept");
        let kept = by_entry.unwrap().unwrap();
        assert!(kept.last().unwrap().ptr_eq(&request[0]), "{n} kept");
        assert!(
            kept[0].ptr_eq(&request[0]),
            "e0 is first kept as request[0], {n} kept"
        );
    }
    let missing = conv("absent", "x");
    assert_eq!(
        play(vec![ProposalItem::KeepIdOf(missing)]),
        play(vec![ProposalItem::Keep("absent".to_owned())])
    );
    assert!(play(vec![ProposalItem::Keep("absent".to_owned())]).is_err());
}

/// Every stable name finds its value and nothing else finds one (`from_name` is a `match` on
/// the names; the names and values are `NAMES` and `ALL`, in one order).
fn names_round_trip<T: Named + PartialEq + std::fmt::Debug>(all: &[T]) {
    let names = T::names();
    assert_eq!(names.len(), all.len());
    for (name, value) in names.iter().zip(all) {
        assert_eq!(T::from_name(name), Some(*value), "{name}");
        assert_eq!(value.name(), *name);
        let near = [
            name.to_lowercase(),
            name.to_uppercase(),
            format!("{name} "),
            format!(" {name}"),
            format!("{name}s"),
            name[..name.len() - 1].to_owned(),
        ];
        for other in near.iter().filter(|n| !names.contains(&n.as_str())) {
            assert_eq!(T::from_name(other), None, "{other:?}");
        }
    }
    assert_eq!(T::from_name(""), None);
}

#[test]
fn named_enums_read_their_names_and_only_them() {
    names_round_trip(&EntryKind::ALL);
    names_round_trip(&Category::ALL);
    names_round_trip(&Outcome::ALL);
    names_round_trip(&CompactionOutcome::ALL);
    names_round_trip(&Stage::ALL);
    names_round_trip(&StageCategory::ALL);
    names_round_trip(&ErrorKind::ALL);
    names_round_trip(&MeasurementUnit::ALL);
    names_round_trip(&hybrid_compaction_model::verification::RejectionReason::ALL);
    names_round_trip(&hybrid_compaction_model::verification::VerificationOutcome::ALL);
}

/// Ids compare by their text (SPEC ENT-2: ordinal): two ids made from one text are equal as
/// two handles of one id are, hash alike, and are found by their text.
#[test]
fn ent_2_ids_equal_by_text_whatever_their_handles() {
    use std::collections::HashMap;
    let a = EntryId::new("m-\u{e9}").unwrap();
    let twin = EntryId::new("m-\u{e9}").unwrap();
    let other = EntryId::new("m-e").unwrap();
    assert_eq!(a, a.clone());
    assert_eq!(a, twin);
    assert_ne!(a, other);
    let mut by_id = HashMap::new();
    by_id.insert(a.clone(), 1);
    assert_eq!(by_id.get(&twin), Some(&1));
    assert_eq!(by_id.get("m-\u{e9}"), Some(&1));
    assert_eq!(by_id.get(&other), None);
}

/// Two ids are equal exactly when their texts are, whichever byte differs: ids of 1 to 20
/// characters (around the eight bytes equality reads before comparing the rest), differing in
/// one character at every position (by an ASCII or a two-byte character) or in length.
#[test]
fn ent_2_ids_equal_exactly_when_their_texts_are() {
    let mut texts: Vec<String> = Vec::new();
    for len in 1..=20 {
        let base: Vec<char> = "0123456789abcdefghij".chars().take(len).collect();
        texts.push(base.iter().collect());
        for at in 0..len {
            for c in ['x', '\u{e9}'] {
                let mut t = base.clone();
                t[at] = c;
                texts.push(t.iter().collect());
            }
        }
    }
    // Each text twice, as two handles of their own.
    let ids: Vec<(EntryId, &String)> = texts
        .iter()
        .chain(&texts)
        .map(|t| (EntryId::new(t).unwrap(), t))
        .collect();
    let mut equal = 0;
    for (a, ta) in &ids {
        for (b, tb) in &ids {
            assert_eq!(a == b, ta == tb, "{ta:?} vs {tb:?}");
            equal += usize::from(ta == tb);
        }
    }
    assert!(equal >= 2 * ids.len(), "each text's two handles are equal");
}
