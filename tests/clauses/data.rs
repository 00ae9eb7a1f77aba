//! Clause tests for values, policy evaluation, estimators and error kinds (SPEC ENT-4, POL-1,
//! POL-3, POL-4, EST-1 .. EST-4, ERR-1), on the implementation under test. The pure vocabulary
//! clauses of this area (ENT, SNAP, POL-2, EST-5, ART) are tested once, in
//! `model/tests/vocabulary.rs`.
//!
//! Expected values come from the SPEC text (ENT, SNAP, POL, EST and ART clauses), never from
//! running the code under test.

#![allow(
    clippy::cast_possible_truncation,
    reason = "test values chosen in range"
)]

use std::sync::Arc;

use hybrid_compaction_model::integration::AugmentError;
use hybrid_compaction_model::*;

use super::common::*;
use crate::imp;

// ---------------------------------------------------------------- ENT ----

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
            assert_eq!(imp().structurally_equal(&ma, &mb), i == j, "{a:?} vs {b:?}");
        }
    }
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
    let ev = imp()
        .evaluate(&list, &p, &CancellationToken::new())
        .unwrap();
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
        imp()
            .evaluate(&[], &p, &CancellationToken::new())
            .unwrap()
            .estimated_size,
        0
    );
}

#[test]
fn pol_3_negative_estimate_is_invalid_operation_no_clamping() {
    // SPEC POL-3: negative per-entry estimate → invalid-operation error, naming the entry.
    let p = table_policy(10, 1, 1, 1, &[("a", 5), ("b", -1)]);
    let err = imp()
        .evaluate(
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
    assert_eq!(imp().size(&two, &est).unwrap(), i32::MAX);
    let three = [conv("a", ""), conv("b", ""), conv("c", "")];
    let err = imp().size(&three, &est).unwrap_err();
    assert_eq!(err, AssemblyError::SizeOverflow);
    assert_eq!(err.kind(), ErrorKind::Overflow);
}

#[test]
fn pol_3_cancellation_before_and_after_evaluation() {
    // SPEC POL-3 / ASM-16: cancellation checked before and after the sum.
    let p = text_policy(10, 1, 1, 1);
    let err = imp()
        .evaluate(&[conv("a", "x")], &p, &CancellationToken::cancelled())
        .unwrap_err();
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
        imp().evaluate(&[conv("a", "x")], &p2, &token).unwrap_err(),
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
    assert!(imp().evaluate(&[], &p3, &token).is_ok());
}

#[test]
fn pol_4_dep_20_triggered_at_exactly_the_threshold() {
    // SPEC POL-4 (DEP-20: the code's `>=`, not "exceeds").
    let p = text_policy(10, 4, 1, 1); // threshold 6
    let c = CancellationToken::new();
    assert!(
        !imp()
            .evaluate(&[conv("a", "12345")], &p, &c)
            .unwrap()
            .triggered
    );
    assert!(
        imp()
            .evaluate(&[conv("a", "123456")], &p, &c)
            .unwrap()
            .triggered
    );
    assert!(
        imp()
            .evaluate(&[conv("a", "1234567")], &p, &c)
            .unwrap()
            .triggered
    );
}

// ---------------------------------------------------------------- EST ----

#[test]
fn est_1_units_and_their_order() {
    // SPEC EST-1.
    assert!(MeasurementUnit::Utf8Bytes < MeasurementUnit::EstimatedTokens);
    assert!(MeasurementUnit::EstimatedTokens < MeasurementUnit::HostDefinedUnits);
    assert_eq!(imp().context_estimator().unit(), MeasurementUnit::Utf8Bytes);
    assert_eq!(imp().text_estimator().unit(), MeasurementUnit::Utf8Bytes);
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
    assert_eq!(imp().context_estimator().estimate(&e), 6 + 3);
    assert_eq!(imp().context_estimator().estimate(&conv("y", "")), 0);
    assert_eq!(imp().context_estimator().estimate(&conv("z", "🙂")), 4);
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
        imp().context_estimator().estimate(&e),
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
    assert_eq!(imp().context_estimator().estimate(&r), 10 + 2);
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
        assert_eq!(imp().value_size(&v).expect("value size"), expected, "{v:?}");
    }
    let mut inner = ValueMap::new();
    inner.insert("k".into(), Value::Bool(false)); // 1 + 5
    let mut outer = ValueMap::new();
    outer.insert("key".into(), Value::Map(inner)); // 3 + 6
    outer.insert("é".into(), Value::Null); // 2 + 0
    assert_eq!(
        imp().value_size(&Value::Map(outer)).expect("value size"),
        11
    );
}

#[test]
fn est_2_dotnet_double_rendering() {
    // SPEC EST-2: shortest round-trip digits; scientific iff scale > max(digits, 17) or < -3;
    // `d[.ddd]E+XX` with >= 2 exponent digits and an explicit sign. The rendering is checked as
    // the CLS-2 value-text of a number (the same rendering) and its length as the EST-2 size.
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
        assert_value_text(&Value::F64(*x), expected);
        assert_eq!(
            imp().value_size(&Value::F64(*x)).expect("value size"),
            expected.len() as i32
        );
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
        assert_value_text(&Value::F32(*x), expected);
        assert_eq!(
            imp().value_size(&Value::F32(*x)).expect("value size"),
            expected.len() as i32
        );
    }
}

#[test]
fn est_3_artifact_reference_measures_82_and_segment_its_body() {
    // SPEC EST-3.
    assert_eq!(
        imp().context_estimator().estimate(&aref("a", "anything")),
        82
    );
    assert_eq!(artifact::REFERENCE_LEN, 82);
    assert_eq!(imp().context_estimator().estimate(&seg("s", "body ü")), 7);
}

#[test]
fn est_4_text_estimator_ignores_tool_parts() {
    // SPEC EST-4: bytes of the message text; call/result parts 0.
    assert_eq!(imp().text_estimator().estimate(&call("c", &["x", "y"])), 0);
    assert_eq!(imp().text_estimator().estimate(&result("r", &["x"])), 0);
    assert_eq!(
        imp().text_estimator().estimate(&call_t("c", "ab", &["x"])),
        2
    );
    assert_eq!(imp().text_estimator().estimate(&conv("m", "ñ")), 2);
    // The context estimator counts the call id and name as well.
    assert_eq!(
        imp()
            .context_estimator()
            .estimate(&call_t("c", "ab", &["x"])),
        2 + 1 + 1
    );
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
            AssemblyError::Reducer(ReducerError::Failed(reducers::UpstreamError::msg("x"))).kind(),
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
    let _ =
        AssemblyError::Reducer(ReducerError::Failed(reducers::UpstreamError::msg("x"))).to_string();
}
