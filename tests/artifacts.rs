//! Clause tests of the artifact and configuration material of ADR-0007 (SPEC sections 17-18):
//! reference records (ARF), rehydration (RHY), offload (OFF), attribution (ATR), public
//! configuration (CFG-1 .. CFG-3), and the departures they settle (DEP-15, DEP-16, DEP-18).
//!
//! Spec-only: these functions exist only in the executable specification
//! (`hybrid_compaction_spec::{record, rehydrate, offload, attribution, configuration}`); the
//! library has no implementation of them, so there is nothing to run the tests on twice and they
//! are not part of the per-implementation clause suite (`tests/clauses/`). What the library does
//! implement of ADR-0007 is tested there on both implementations: composition, capability and
//! trust (`tests/clauses/composition.rs`) and the node, including CFG-4's full-history
//! reassembly (`tests/clauses/node.rs`). Expected values come from the SPEC text: byte counts are
//! written out by hand for the multibyte payloads ("é" 2 bytes, "€" 3, "😀" 4), never computed
//! by the code under test.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hybrid_compaction_model::artifact::{ArtifactReference, Digest, REFERENCE_LEN};
use hybrid_compaction_model::artifact_diagnostics::{
    ArtifactContent, ArtifactDiagnostics, ArtifactDiagnosticsError, ArtifactDiagnosticsFields,
    ArtifactDiagnosticsRule, ArtifactEvent, ArtifactOperation, ArtifactOutcome, ArtifactReason,
    Attribution,
};
use hybrid_compaction_model::artifact_record::{
    RecordError, RecordField, RecordFields, ReferenceRecord, DESCRIPTION_LIMIT_UTF16,
};
use hybrid_compaction_model::cancel::CancellationToken;
use hybrid_compaction_model::composition::{ClientChain, ClientComponent, RunCoordination};
use hybrid_compaction_model::configuration::{
    ConfigurationError, DefaultSource, EffectiveState, PublicOptions, RequestedState,
};
use hybrid_compaction_model::entry::RecoverableSegment;
use hybrid_compaction_model::error::ErrorKind;
use hybrid_compaction_model::estimator::MeasurementUnit;
use hybrid_compaction_model::offload::{OffloadError, OffloadInput, OffloadRequest};
use hybrid_compaction_model::policy::{PolicyError, PolicyField};
use hybrid_compaction_model::reducers::MessageCountingReducer;
use hybrid_compaction_model::rehydration::{
    RehydrationError, RehydrationRequest, RehydrationSource, ResolutionStatus,
};
use hybrid_compaction_model::seam::ReporterFields;
use hybrid_compaction_model::trust::{
    BindingAccessor, Owners, TrustBinding, TrustContext, TrustGuard, TrustStatus, WorkspaceId,
};
use hybrid_compaction_model::workspace::ScriptedWorkspace;
use hybrid_compaction_spec as spec;
use proptest::prelude::*;
use spec::offload::{offload, OffloadHost};
use spec::progress::{ReporterScopes, ScopeError};
use spec::record::{create, reconstruct, Creation};
use spec::rehydrate::rehydrate;

// ---------------------------------------------------------------------------------------------
// Fixtures

fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_000)
}

fn owners() -> Owners {
    Owners {
        user_id: "user-1".into(),
        orchestration_id: "orch-1".into(),
        session_id: "session-1".into(),
    }
}

fn binding() -> TrustBinding {
    TrustBinding {
        owners: owners(),
        workspace: WorkspaceId(7),
    }
}

fn good_context() -> Option<TrustContext> {
    Some(TrustContext {
        user_id: "user-1".into(),
        orchestration_id: "orch-1".into(),
        workspace: Some(WorkspaceId(7)),
    })
}

/// Answers `script[k]` at the k-th call (the last one repeated).
struct ScriptedAccessor {
    script: Vec<Option<TrustContext>>,
    calls: Mutex<usize>,
}

impl ScriptedAccessor {
    fn new(script: Vec<Option<TrustContext>>) -> Arc<ScriptedAccessor> {
        Arc::new(ScriptedAccessor {
            script,
            calls: Mutex::new(0),
        })
    }
    fn calls(&self) -> usize {
        *self.calls.lock().unwrap()
    }
}

impl BindingAccessor for ScriptedAccessor {
    fn current(&self) -> Option<TrustContext> {
        let mut calls = self.calls.lock().unwrap();
        let k = (*calls).min(self.script.len() - 1);
        *calls += 1;
        self.script[k].clone()
    }
}

fn guard_with(accessor: Arc<ScriptedAccessor>) -> TrustGuard {
    spec::trust::configure(Some(binding()), Some(accessor), Some("session-1"))
        .unwrap()
        .unwrap()
}

fn guard() -> TrustGuard {
    guard_with(ScriptedAccessor::new(vec![good_context()]))
}

fn record_for(body: &str) -> ReferenceRecord {
    create(
        Creation {
            body,
            description: "a tool result",
            tool_name: "search",
            call_id: "call-1",
        },
        &binding(),
        now(),
    )
    .unwrap()
}

fn workspace_with(body: &str) -> ScriptedWorkspace {
    let mut w = ScriptedWorkspace::default();
    w.files.insert(record_for(body).path(), body.to_owned());
    w
}

fn names<T>(
    all: impl IntoIterator<Item = T>,
    name: impl Fn(T) -> &'static str,
) -> Vec<&'static str> {
    all.into_iter().map(name).collect()
}

// ---------------------------------------------------------------------------------------------
// ARF: reference records

/// SPEC ARF-1, ART-2: the reference id of any body is 82 ASCII bytes; the record derives path and
/// size from the body.
#[test]
fn arf_1_reference_ids_are_82_bytes_and_records_derive_path_and_size() {
    for body in ["x", "é", "€", "😀", "a longer body with é€😀"] {
        let r = record_for(body);
        assert_eq!(r.reference().to_string().len(), 82);
        assert_eq!(REFERENCE_LEN, 82);
        let hex = r.reference().digest().to_hex();
        assert_eq!(
            r.path(),
            format!(".foundry/artifacts/{}/{}/{}", &hex[..2], &hex[2..4], hex)
        );
    }
    assert_eq!(record_for("é").byte_size(), 2);
    assert_eq!(record_for("€").byte_size(), 3);
    assert_eq!(record_for("😀").byte_size(), 4);
}

fn fields_with_description(description: &str) -> RecordFields {
    RecordFields {
        description: description.into(),
        ..record_for("body").fields()
    }
}

/// SPEC ARF-1: the description limit is 500 UTF-16 code units (an astral character counts 2).
#[test]
fn arf_1_the_description_limit_counts_utf16_units() {
    let ok = |d: &str| reconstruct(fields_with_description(d)).is_ok();
    assert_eq!(DESCRIPTION_LIMIT_UTF16, 500);
    assert!(ok(&"a".repeat(500)));
    assert!(!ok(&"a".repeat(501)));
    // "é" and "€" are one unit each (not 2 or 3 bytes).
    assert!(ok(&"é".repeat(500)) && ok(&"€".repeat(500)));
    assert!(!ok(&"€".repeat(501)));
    // "😀" is two units (one char, four bytes).
    assert!(ok(&"😀".repeat(250)));
    assert!(!ok(&format!("{}a", "😀".repeat(250))));
    assert_eq!(
        reconstruct(fields_with_description(&"😀".repeat(251))).unwrap_err(),
        RecordError::OutOfRange(RecordField::Description)
    );
}

/// SPEC ARF-2 (C# S80 "Reconstruction recomputes the path and rejects mismatches"): each check,
/// in order, with its kind.
#[test]
fn arf_2_reconstruction_checks_in_order() {
    let base = record_for("body").fields();
    assert_eq!(reconstruct(base.clone()).unwrap(), record_for("body"));
    let other = record_for("other").fields();
    let err = |mutate: &dyn Fn(&mut RecordFields)| {
        let mut f = base.clone();
        mutate(&mut f);
        let e = reconstruct(f).unwrap_err();
        (e, e.kind())
    };
    use RecordError::*;
    use RecordField as F;
    let invalid = |f| (Invalid(f), ErrorKind::InvalidArgument);
    assert_eq!(
        err(&|f| {
            f.schema = 2;
            f.path = "x".into();
        }),
        (UnsupportedSchema, ErrorKind::NotSupported)
    );
    assert_eq!(
        err(&|f| f.reference_id = f.reference_id.to_uppercase()),
        invalid(F::ReferenceId)
    );
    assert_eq!(err(&|f| f.reference_id.push(' ')), invalid(F::ReferenceId));
    assert_eq!(
        err(&|f| f.digest = other.digest.clone()),
        invalid(F::Digest)
    );
    assert_eq!(err(&|f| f.digest = "abc".into()), invalid(F::Digest));
    // The path is rechecked against the digest, even when it names another artifact's path.
    assert_eq!(err(&|f| f.path = other.path.clone()), invalid(F::Path));
    assert_eq!(
        err(&|f| {
            f.path = format!("./{}", f.path);
            f.byte_size = 0;
        }),
        invalid(F::Path)
    );
    assert_eq!(
        err(&|f| f.byte_size = 0),
        (OutOfRange(F::ByteSize), ErrorKind::OutOfRange)
    );
    assert_eq!(
        err(&|f| f.byte_size = -1),
        (OutOfRange(F::ByteSize), ErrorKind::OutOfRange)
    );
    assert_eq!(
        err(&|f| f.owners.user_id = " ".into()),
        invalid(F::OwnerUserId)
    );
    assert_eq!(
        err(&|f| f.owners.orchestration_id = "".into()),
        invalid(F::OwnerOrchestrationId)
    );
    assert_eq!(
        err(&|f| f.owners.session_id = "\n".into()),
        invalid(F::OwnerSessionId)
    );
    assert_eq!(err(&|f| f.tool_name = "".into()), invalid(F::ToolName));
    assert_eq!(err(&|f| f.call_id = " ".into()), invalid(F::CallId));
    // Errors name the field, never its value.
    let e = reconstruct(RecordFields {
        tool_name: "  ".into(),
        description: "SECRET-DESCRIPTION".into(),
        ..base
    })
    .unwrap_err();
    assert!(!format!("{e} {e:?}").contains("SECRET"));
}

/// SPEC ARF-3 (C# S80 "fresh creation hashes content and takes owners from the trusted
/// binding").
#[test]
fn arf_3_creation_hashes_the_body_and_takes_owners_from_the_binding() {
    let r = record_for("😀 body");
    assert_eq!(r.reference(), ArtifactReference::to_content("😀 body"));
    assert_eq!(r.byte_size(), 9);
    assert_eq!(r.owners(), &owners());
    assert_eq!((r.tool_name(), r.call_id()), ("search", "call-1"));
    assert_eq!(r.created_at(), now());
    let other_binding = TrustBinding {
        owners: Owners {
            user_id: "user-9".into(),
            ..owners()
        },
        workspace: WorkspaceId(1),
    };
    let creation = Creation {
        body: "b",
        description: "",
        tool_name: "t",
        call_id: "c",
    };
    assert_eq!(
        create(creation, &other_binding, now())
            .unwrap()
            .owners()
            .user_id,
        "user-9"
    );
    let empty = Creation {
        body: "",
        ..creation
    };
    assert_eq!(
        create(empty, &binding(), now()).unwrap_err(),
        RecordError::OutOfRange(RecordField::ByteSize)
    );
}

// ---------------------------------------------------------------------------------------------
// RHY: rehydration

fn request(body: &str, budget: i64) -> RehydrationRequest {
    RehydrationRequest::new(record_for(body), RehydrationSource::ToolRequest, budget).unwrap()
}

/// SPEC RHY-1 (C# S81).
#[test]
fn rhy_1_requests_need_a_positive_budget() {
    for budget in [0, -1] {
        let e = RehydrationRequest::new(
            record_for("b"),
            RehydrationSource::DeterministicPolicy,
            budget,
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::OutOfRange);
    }
    assert_eq!(
        names(RehydrationSource::ALL, RehydrationSource::name),
        ["ToolRequest", "DeterministicPolicy"]
    );
    assert_eq!(request("b", 1).budget(), 1);
}

/// SPEC RHY-2 (C# S81).
#[test]
fn rhy_2_statuses_and_their_outcome_reason_pairs() {
    use ArtifactOutcome as O;
    use ArtifactReason as R;
    assert_eq!(
        names(ResolutionStatus::ALL, ResolutionStatus::name),
        ["Resolved", "Stale", "Missing", "Unauthorized", "OverBudget"]
    );
    let pairs: Vec<_> = ResolutionStatus::ALL
        .iter()
        .map(|s| spec::rehydrate::outcome_of(*s))
        .collect();
    assert_eq!(
        pairs,
        [
            (O::Resolved, R::DigestVerified),
            (O::Stale, R::DigestMismatch),
            (O::Missing, R::Missing),
            (O::Unauthorized, R::OwnerMismatch),
            (O::OverBudget, R::BudgetExceeded)
        ]
    );
}

/// Runs a rehydration; returns the result or error and the events.
fn run_rehydrate(
    req: &RehydrationRequest,
    guard: &TrustGuard,
    workspace: &mut ScriptedWorkspace,
) -> (
    Result<hybrid_compaction_model::rehydration::RehydrationResult, RehydrationError>,
    Vec<ArtifactEvent>,
) {
    let mut events = Vec::new();
    let r = rehydrate(req, guard, workspace, now(), &mut events);
    (r, events)
}

/// SPEC RHY-3, RHY-4 (C# S81): every status, with multibyte bodies.
#[test]
fn rhy_3_rhy_4_rehydration_steps_decide_each_status() {
    use ResolutionStatus::*;
    let body = "é€😀"; // 2 + 3 + 4 = 9 bytes, 3 chars, 4 UTF-16 units
                       // Resolved: the exact body, the time, skip eager re-offload.
    let (r, events) = run_rehydrate(&request(body, 9), &guard(), &mut workspace_with(body));
    let r = r.unwrap();
    assert_eq!(r.status, Resolved);
    let seg = r.segment.as_ref().unwrap();
    assert_eq!(seg.segment.body, body);
    assert_eq!(seg.segment.reference, ArtifactReference::to_content(body));
    assert_eq!(seg.resolved_at, now());
    assert!(seg.skip_eager_reoffload);
    assert_eq!(r.diagnostics.observed_utf8_byte_size(), Some(9));
    assert_eq!(events.len(), 1);
    // OverBudget: 9 bytes > 8 (the budget counts bytes, not chars or UTF-16 units).
    let (r, _) = run_rehydrate(&request(body, 8), &guard(), &mut workspace_with(body));
    let r = r.unwrap();
    assert_eq!((r.status, r.segment.is_none()), (OverBudget, true));
    assert_eq!(r.diagnostics.observed_utf8_byte_size(), Some(9));
    // Stale: another body at the path.
    let mut w = ScriptedWorkspace::default();
    w.files.insert(record_for(body).path(), "tampered".into());
    let (r, _) = run_rehydrate(&request(body, 100), &guard(), &mut w);
    let r = r.unwrap();
    assert_eq!(
        (r.status, r.diagnostics.observed_utf8_byte_size()),
        (Stale, Some(8))
    );
    // Missing: nothing stored.
    let (r, _) = run_rehydrate(
        &request(body, 100),
        &guard(),
        &mut ScriptedWorkspace::default(),
    );
    let r = r.unwrap();
    assert_eq!(
        (r.status, r.diagnostics.observed_utf8_byte_size()),
        (Missing, None)
    );
    // Unauthorized: the record's owners are not the binding's; the workspace is not read.
    let foreign = RecordFields {
        owners: Owners {
            orchestration_id: "orch-9".into(),
            ..owners()
        },
        ..record_for(body).fields()
    };
    let req = RehydrationRequest::new(
        reconstruct(foreign).unwrap(),
        RehydrationSource::ToolRequest,
        100,
    )
    .unwrap();
    let mut w = workspace_with(body);
    let (r, events) = run_rehydrate(&req, &guard(), &mut w);
    let r = r.unwrap();
    assert_eq!(
        (r.status, r.diagnostics.observed_utf8_byte_size()),
        (Unauthorized, None)
    );
    assert_eq!((w.reads, events.len()), (0, 1));
}

/// SPEC RHY-3 steps 1, 3 and 6, RHY-4: raising paths produce no diagnostics and no event.
#[test]
fn rhy_3_rhy_4_revalidation_and_read_failures_raise_without_events() {
    let body = "body";
    // Step 1.
    let bad_first = guard_with(ScriptedAccessor::new(vec![None]));
    let mut w = workspace_with(body);
    let (r, events) = run_rehydrate(&request(body, 100), &bad_first, &mut w);
    let e = r.unwrap_err();
    assert_eq!(
        (e, e.kind()),
        (
            RehydrationError::Trust(hybrid_compaction_model::trust::TrustError {
                status: TrustStatus::MissingContext
            }),
            ErrorKind::InvalidOperation
        )
    );
    assert_eq!((events.len(), w.reads), (0, 0));
    // Step 6: the second revalidation sees another workspace.
    let accessor = ScriptedAccessor::new(vec![
        good_context(),
        Some(TrustContext {
            workspace: Some(WorkspaceId(8)),
            ..good_context().unwrap()
        }),
    ]);
    let second = guard_with(Arc::clone(&accessor));
    let (r, events) = run_rehydrate(&request(body, 100), &second, &mut workspace_with(body));
    assert!(
        matches!(r, Err(RehydrationError::Trust(t)) if t.status == TrustStatus::WorkspaceMismatch)
    );
    assert_eq!((events.len(), accessor.calls()), (0, 2));
    // Step 3: a read failure raises (no text).
    let mut w = workspace_with(body);
    w.fail_read = true;
    let (r, events) = run_rehydrate(&request(body, 100), &guard(), &mut w);
    let e = r.unwrap_err();
    assert_eq!(
        (e, e.kind(), events.len()),
        (
            RehydrationError::WorkspaceRead,
            ErrorKind::InvalidOperation,
            0
        )
    );
    // A decision before step 6 needs one revalidation only.
    let accessor = ScriptedAccessor::new(vec![good_context()]);
    let (r, _) = run_rehydrate(
        &request(body, 1),
        &guard_with(Arc::clone(&accessor)),
        &mut workspace_with(body),
    );
    assert_eq!(
        (r.unwrap().status, accessor.calls()),
        (ResolutionStatus::OverBudget, 1)
    );
}

// ---------------------------------------------------------------------------------------------
// OFF: offload

fn tool_result(serialized: &str) -> OffloadInput {
    OffloadInput::ToolResult {
        tool_name: "search".into(),
        call_id: "call-1".into(),
        serialized: serialized.into(),
        description: "a tool result".into(),
    }
}

struct OffloadRun {
    result: Result<hybrid_compaction_model::offload::OffloadResult, OffloadError>,
    events: Vec<ArtifactEvent>,
    workspace: ScriptedWorkspace,
}

fn run_offload(
    input: OffloadInput,
    threshold: i64,
    guard: Option<&TrustGuard>,
    workspace: Option<ScriptedWorkspace>,
    cancelled: bool,
) -> OffloadRun {
    let request = OffloadRequest::new(input, threshold).unwrap();
    let cancel = CancellationToken::new();
    if cancelled {
        cancel.cancel();
    }
    let mut events = Vec::new();
    let mut ws = workspace.clone().unwrap_or_default();
    let host = OffloadHost {
        guard,
        workspace: workspace
            .is_some()
            .then_some(&mut ws as &mut dyn hybrid_compaction_model::workspace::Workspace),
        cancel: &cancel,
        now: now(),
    };
    let result = offload(&request, host, &mut events);
    OffloadRun {
        result,
        events,
        workspace: ws,
    }
}

/// SPEC OFF-1 (C# S82).
#[test]
fn off_1_requests_need_a_positive_threshold() {
    for t in [0, -5] {
        assert_eq!(
            OffloadRequest::new(tool_result("x"), t).unwrap_err().kind(),
            ErrorKind::OutOfRange
        );
    }
}

/// SPEC OFF-2, OFF-3 (C# S82): every row of the table, in order.
#[test]
fn off_2_off_3_the_decision_table_row_by_row() {
    use ArtifactOutcome as O;
    use ArtifactReason as R;
    let g = guard();
    let big = "😀".repeat(5); // 20 bytes > threshold 10 (5 chars, 10 UTF-16 units)
    let decided = |run: &OffloadRun| {
        let r = run.result.as_ref().unwrap();
        (
            r.diagnostics.outcome(),
            r.diagnostics.reason(),
            r.record.is_some(),
        )
    };
    // Row 1: a recovered segment inlines whatever its size, even with no workspace.
    let seg = OffloadInput::RecoveredSegment(RecoverableSegment {
        reference: ArtifactReference::to_content(&big),
        body: big.clone(),
    });
    let run = run_offload(seg, 1, None, None, false);
    assert_eq!(
        decided(&run),
        (O::Inline, R::RecoverableSegmentBypass, false)
    );
    assert_eq!(
        run.result.as_ref().unwrap().diagnostics.content(),
        ArtifactContent::RecoverableContextSegment
    );
    // Row 2: below (9 bytes) and at (10 bytes) the threshold inline; 11 bytes ("€€€" + "é",
    // 4 chars) is above.
    for inline in ["€€€", "0123456789", "€€€a"] {
        let run = run_offload(tool_result(inline), 10, None, None, false);
        assert_eq!(decided(&run), (O::Inline, R::BelowThreshold, false));
    }
    let run = run_offload(tool_result("€€€é"), 10, None, None, false);
    assert_eq!(decided(&run), (O::Failed, R::NoAuthorizedWorkspace, false));
    // Row 3: above, without a binding or without a workspace.
    let run = run_offload(
        tool_result(&big),
        10,
        None,
        Some(ScriptedWorkspace::default()),
        false,
    );
    assert_eq!(decided(&run), (O::Failed, R::NoAuthorizedWorkspace, false));
    let run = run_offload(tool_result(&big), 10, Some(&g), None, false);
    assert_eq!(decided(&run), (O::Failed, R::NoAuthorizedWorkspace, false));
    // Row 5: read failure, identical body, different body.
    let w = ScriptedWorkspace {
        fail_read: true,
        ..ScriptedWorkspace::default()
    };
    let run = run_offload(tool_result(&big), 10, Some(&g), Some(w), false);
    assert_eq!(decided(&run), (O::Failed, R::WorkspaceReadFailed, false));
    let run = run_offload(
        tool_result(&big),
        10,
        Some(&g),
        Some(workspace_with(&big)),
        false,
    );
    assert_eq!(
        decided(&run),
        (O::ExistingReference, R::ExistingContentMatch, true)
    );
    assert_eq!(run.workspace.writes, 0);
    let mut w = ScriptedWorkspace::default();
    w.files
        .insert(record_for(&big).path(), "something else".into());
    let run = run_offload(tool_result(&big), 10, Some(&g), Some(w), false);
    assert_eq!(decided(&run), (O::Failed, R::ContentAddressMismatch, false));
    // Row 6: write failure.
    let w = ScriptedWorkspace {
        fail_write: true,
        ..ScriptedWorkspace::default()
    };
    let run = run_offload(tool_result(&big), 10, Some(&g), Some(w), false);
    assert_eq!(decided(&run), (O::Failed, R::WorkspaceWriteFailed, false));
    // Row 7: cancellation after the write (the body was written).
    let run = run_offload(
        tool_result(&big),
        10,
        Some(&g),
        Some(ScriptedWorkspace::default()),
        true,
    );
    assert_eq!(
        decided(&run),
        (O::RecoveryRequired, R::CanceledAfterWrite, false)
    );
    assert_eq!(run.workspace.writes, 1);
    // Row 8: checkpoint failure.
    let w = ScriptedWorkspace {
        fail_checkpoint: true,
        ..ScriptedWorkspace::default()
    };
    let run = run_offload(tool_result(&big), 10, Some(&g), Some(w), false);
    assert_eq!(
        decided(&run),
        (O::RecoveryRequired, R::CheckpointFailed, false)
    );
    // Row 9: offloaded; the body is stored at the record's path, the record's owners are the
    // binding's (OFF-3, ARF-3).
    let run = run_offload(
        tool_result(&big),
        10,
        Some(&g),
        Some(ScriptedWorkspace::default()),
        false,
    );
    assert_eq!(decided(&run), (O::Offloaded, R::ThresholdExceeded, true));
    let r = run.result.as_ref().unwrap();
    let record = r.record.as_ref().unwrap();
    assert_eq!(run.workspace.files.get(&record.path()), Some(&big));
    assert_eq!(record.owners(), &owners());
    assert_eq!(r.diagnostics.reference(), Some(record.reference()));
    assert_eq!(run.events.len(), 1);
}

/// SPEC OFF-2 row 4: a failed revalidation or an invalid record raises before the workspace is
/// touched, with no event.
#[test]
fn off_2_revalidation_and_record_errors_raise_before_the_workspace_is_touched() {
    let big = "x".repeat(20);
    let bad = guard_with(ScriptedAccessor::new(vec![None]));
    let run = run_offload(
        tool_result(&big),
        10,
        Some(&bad),
        Some(ScriptedWorkspace::default()),
        false,
    );
    assert!(matches!(run.result, Err(OffloadError::Trust(_))));
    assert_eq!(
        (run.events.len(), run.workspace.reads, run.workspace.writes),
        (0, 0, 0)
    );
    let input = OffloadInput::ToolResult {
        tool_name: " ".into(),
        call_id: "c".into(),
        serialized: big.clone(),
        description: String::new(),
    };
    let run = run_offload(
        input,
        10,
        Some(&guard()),
        Some(ScriptedWorkspace::default()),
        false,
    );
    let e = run.result.unwrap_err();
    assert_eq!(
        (e.kind(), run.events.len(), run.workspace.reads),
        (ErrorKind::InvalidArgument, 0, 0)
    );
    let input = OffloadInput::ToolResult {
        tool_name: "t".into(),
        call_id: "c".into(),
        serialized: big,
        description: "😀".repeat(251),
    };
    let run = run_offload(
        input,
        10,
        Some(&guard()),
        Some(ScriptedWorkspace::default()),
        false,
    );
    assert_eq!(run.result.unwrap_err().kind(), ErrorKind::OutOfRange);
}

// ---------------------------------------------------------------------------------------------
// ATR: attribution and artifact diagnostics

/// Every offload and rehydration decision for `body` (threshold 1 so tool results are offload
/// candidates), with the decision's result diagnostics and its one event.
fn every_decision(body: &str) -> Vec<(Arc<ArtifactDiagnostics>, Vec<ArtifactEvent>)> {
    let g = guard();
    let mut out = Vec::new();
    let mut push_offload = |run: OffloadRun| {
        out.push((run.result.unwrap().diagnostics, run.events));
    };
    let seg = OffloadInput::RecoveredSegment(RecoverableSegment {
        reference: ArtifactReference::to_content(body),
        body: body.into(),
    });
    push_offload(run_offload(seg, 1, None, None, false));
    push_offload(run_offload(tool_result(body), 1_000, None, None, false));
    push_offload(run_offload(tool_result(body), 1, None, None, false));
    let fail_read = ScriptedWorkspace {
        fail_read: true,
        ..ScriptedWorkspace::default()
    };
    push_offload(run_offload(
        tool_result(body),
        1,
        Some(&g),
        Some(fail_read),
        false,
    ));
    push_offload(run_offload(
        tool_result(body),
        1,
        Some(&g),
        Some(workspace_with(body)),
        false,
    ));
    let mut other = ScriptedWorkspace::default();
    other.files.insert(record_for(body).path(), "other".into());
    push_offload(run_offload(
        tool_result(body),
        1,
        Some(&g),
        Some(other),
        false,
    ));
    let fail_write = ScriptedWorkspace {
        fail_write: true,
        ..ScriptedWorkspace::default()
    };
    push_offload(run_offload(
        tool_result(body),
        1,
        Some(&g),
        Some(fail_write),
        false,
    ));
    push_offload(run_offload(
        tool_result(body),
        1,
        Some(&g),
        Some(ScriptedWorkspace::default()),
        true,
    ));
    let fail_checkpoint = ScriptedWorkspace {
        fail_checkpoint: true,
        ..ScriptedWorkspace::default()
    };
    push_offload(run_offload(
        tool_result(body),
        1,
        Some(&g),
        Some(fail_checkpoint),
        false,
    ));
    push_offload(run_offload(
        tool_result(body),
        1,
        Some(&g),
        Some(ScriptedWorkspace::default()),
        false,
    ));
    // Rehydration: Resolved, OverBudget, Stale, Missing, Unauthorized.
    let mut push_rehydrate = |req: &RehydrationRequest, w: &mut ScriptedWorkspace| {
        let (r, events) = run_rehydrate(req, &g, w);
        out.push((r.unwrap().diagnostics, events));
    };
    push_rehydrate(&request(body, 1_000), &mut workspace_with(body));
    push_rehydrate(&request(body, 1), &mut workspace_with(body));
    let mut stale = ScriptedWorkspace::default();
    stale
        .files
        .insert(record_for(body).path(), format!("{body}!"));
    push_rehydrate(&request(body, 1_000), &mut stale);
    push_rehydrate(&request(body, 1_000), &mut ScriptedWorkspace::default());
    let foreign = RecordFields {
        owners: Owners {
            user_id: "user-9".into(),
            ..owners()
        },
        ..record_for(body).fields()
    };
    let req = RehydrationRequest::new(
        reconstruct(foreign).unwrap(),
        RehydrationSource::ToolRequest,
        1_000,
    )
    .unwrap();
    push_rehydrate(&req, &mut workspace_with(body));
    out
}

/// SPEC ATR-1 (ADR "artifact attribution tests covering every offload and rehydration outcome,
/// including multibyte payload and reference-byte-count correctness"; C# S83), DEP-18.
#[test]
fn atr_1_dep_18_attribution_covers_every_outcome_with_multibyte_payloads() {
    use ArtifactOutcome as O;
    // (body, its UTF-8 bytes written out by hand; chars and UTF-16 units differ).
    let bodies: [(&str, i64); 5] = [("é", 2), ("€", 3), ("😀", 4), ("aé€😀", 10), ("plain", 5)];
    for (body, bytes) in bodies {
        let decisions = every_decision(body);
        let mut outcomes: Vec<O> = decisions.iter().map(|(d, _)| d.outcome()).collect();
        outcomes.sort();
        outcomes.dedup();
        assert_eq!(outcomes, O::ALL, "every outcome is reached for {body:?}");
        for (d, _) in &decisions {
            let a = d.attribution();
            assert_eq!(a.operation, d.operation());
            let expected = match d.outcome() {
                // Stale reads "{body}!" (one more byte) and reports that observation, but the
                // attribution input is the reference id.
                O::Inline => (bytes, Some(bytes)),
                O::Offloaded | O::ExistingReference => (bytes, Some(82)),
                O::Failed | O::RecoveryRequired => (bytes, None),
                O::Resolved => (82, Some(bytes)),
                O::Stale | O::Missing | O::Unauthorized | O::OverBudget => (82, None),
            };
            assert_eq!(
                (a.input_utf8_bytes, a.output_utf8_bytes),
                expected,
                "{:?} for {body:?}",
                d.outcome()
            );
        }
    }
}

/// SPEC ATR-3 (ADR "no second, independently-computed attribution value can ever diverge"): one
/// value shared by the result and its one event, by identity, for every decision.
#[test]
fn atr_3_the_result_and_its_event_share_one_diagnostics_value() {
    for (diagnostics, events) in every_decision("é€😀") {
        assert_eq!(events.len(), 1);
        assert!(Arc::ptr_eq(&diagnostics, &events[0].diagnostics));
    }
}

fn reporter(workflow: &str, agent: Option<&str>, depth: u32) -> ReporterFields {
    ReporterFields {
        workflow_id: workflow.into(),
        agent_id: agent.map(Into::into),
        parent_agent_id: None,
        depth,
    }
}

/// SPEC ATR-6 (ADR "when the accessor is absent, nothing is reported"; C# S81 "One event per
/// decision"): outside every scope nothing is reported; inside, the innermost scope's reporter
/// numbers every decision's one event from its source, holding the decision's very value; leaving
/// makes the enclosing scope current again.
#[test]
fn atr_6_decisions_report_through_the_innermost_scope_or_not_at_all() {
    let decisions = every_decision("é€😀");
    let mut scopes = ReporterScopes::new();
    for (_, events) in &decisions {
        assert_eq!(scopes.report(events[0].clone()), None, "no active scope");
    }
    scopes.enter(reporter("wf", Some("outer"), 0), None);
    scopes.enter(reporter("wf-2", None, 3), None);
    for (k, (diagnostics, events)) in decisions.iter().enumerate() {
        let r = scopes
            .report(events[0].clone())
            .expect("a current reporter");
        assert_eq!(r.sequence, k as u64 + 1);
        assert_eq!(r.identity, reporter("wf-2", None, 3));
        assert!(Arc::ptr_eq(&r.diagnostics, diagnostics));
    }
    scopes.leave().unwrap();
    let (_, events) = &decisions[0];
    let r = scopes.report(events[0].clone()).unwrap();
    assert_eq!(
        (r.sequence, r.identity),
        (1, reporter("wf", Some("outer"), 0))
    );
    scopes.leave().unwrap();
    assert_eq!(scopes.report(events[0].clone()), None);
    assert_eq!(scopes.leave(), Err(ScopeError::NothingToLeave));
}

/// SPEC EVT-7: a child has its parent's workflow id and source, the parent's agent id as its
/// parent agent id (absent when the parent has none) and one more depth; root reporters share a
/// source only when the host says so (EVT-3).
#[test]
fn evt_7_child_reporters_share_their_parents_sequence_source() {
    let (_, events) = &every_decision("x")[0];
    let event = || events[0].clone();
    let mut scopes = ReporterScopes::new();
    assert_eq!(scopes.enter_child("a"), Err(ScopeError::NoParent));
    scopes.enter(reporter("wf", None, 0), Some("s"));
    assert_eq!(scopes.report(event()).unwrap().sequence, 1);
    scopes.enter_child("kid").unwrap();
    let r = scopes.report(event()).unwrap();
    let kid = ReporterFields {
        workflow_id: "wf".into(),
        agent_id: Some("kid".into()),
        parent_agent_id: None,
        depth: 1,
    };
    assert_eq!((r.sequence, &r.identity), (2, &kid));
    scopes.enter_child("grandkid").unwrap();
    let r = scopes.report(event()).unwrap();
    assert_eq!(r.sequence, 3);
    assert_eq!(r.identity.parent_agent_id.as_deref(), Some("kid"));
    assert_eq!(
        (r.identity.depth, r.identity.workflow_id.as_str()),
        (2, "wf")
    );
    // A second root naming the same source continues it; a third with its own starts at 1.
    scopes.enter(reporter("other", Some("b"), 0), Some("s"));
    assert_eq!(scopes.report(event()).unwrap().sequence, 4);
    scopes.enter(reporter("third", None, 0), None);
    assert_eq!(scopes.report(event()).unwrap().sequence, 1);
    scopes.enter_child("third's").unwrap();
    assert_eq!(
        scopes.report(event()).unwrap().sequence,
        2,
        "the parent's own source"
    );
    scopes.leave().unwrap();
    scopes.leave().unwrap();
    scopes.leave().unwrap();
    assert_eq!(
        scopes.report(event()).unwrap().sequence,
        5,
        "back in the grandchild"
    );
}

fn valid_fields() -> ArtifactDiagnosticsFields {
    ArtifactDiagnosticsFields {
        operation: ArtifactOperation::Offload,
        outcome: ArtifactOutcome::Offloaded,
        content: ArtifactContent::ToolResult,
        reason: ArtifactReason::ThresholdExceeded,
        observed_utf8_byte_size: Some(20),
        configured_threshold_or_budget: 10,
        reference: Some(ArtifactReference::to_content("b")),
        attribution: Attribution {
            operation: ArtifactOperation::Offload,
            input_utf8_bytes: 20,
            output_utf8_bytes: Some(82),
        },
    }
}

/// SPEC ATR-2 (C# S83): each validation rule rejects its violation, in the order listed, with
/// the rule's kind: `OutOfRange` for a value outside its field, `InvalidArgument` for the
/// reference id and for contradicting fields (DEP-22).
#[test]
fn atr_2_artifact_diagnostics_are_validated_per_operation() {
    use ArtifactDiagnosticsRule as Rule;
    assert!(ArtifactDiagnostics::new(valid_fields()).is_ok());
    let rule = |mutate: &dyn Fn(&mut ArtifactDiagnosticsFields)| {
        let mut f = valid_fields();
        mutate(&mut f);
        let e = ArtifactDiagnostics::new(f).unwrap_err();
        assert_eq!(e.kind(), e.rule.kind());
        e.rule
    };
    let out_of_range = [
        Rule::OutcomeFamily,
        Rule::ReasonFamily,
        Rule::ObservedSize,
        Rule::ThresholdOrBudget,
        Rule::ObservedPresence,
    ];
    for r in ArtifactDiagnosticsRule::ALL {
        let expected = if out_of_range.contains(&r) {
            ErrorKind::OutOfRange
        } else {
            ErrorKind::InvalidArgument
        };
        assert_eq!(r.kind(), expected, "{r}");
    }
    assert_eq!(
        rule(&|f| f.operation = ArtifactOperation::Rehydration),
        Rule::OutcomeFamily
    );
    assert_eq!(
        rule(&|f| f.reason = ArtifactReason::DigestVerified),
        Rule::ReasonFamily
    );
    // A reason of the right family but another outcome's pair (DEP-22).
    assert_eq!(
        rule(&|f| f.reason = ArtifactReason::BelowThreshold),
        Rule::ReasonPair
    );
    assert_eq!(
        rule(&|f| f.content = ArtifactContent::RecoverableContextSegment),
        Rule::Content
    );
    assert_eq!(
        rule(&|f| f.observed_utf8_byte_size = None),
        Rule::ObservedPresence
    );
    assert_eq!(
        rule(&|f| f.observed_utf8_byte_size = Some(-1)),
        Rule::ObservedSize
    );
    assert_eq!(
        rule(&|f| f.configured_threshold_or_budget = 0),
        Rule::ThresholdOrBudget
    );
    assert_eq!(rule(&|f| f.reference = None), Rule::ReferencePresence);
    assert_eq!(
        rule(&|f| f.attribution.operation = ArtifactOperation::Rehydration),
        Rule::AttributionOperation
    );
    assert_eq!(
        rule(&|f| f.attribution.output_utf8_bytes = Some(20)),
        Rule::AttributionBytes
    );
    assert_eq!(
        rule(&|f| f.attribution.input_utf8_bytes = 82),
        Rule::AttributionBytes
    );
    // The order: a negative size is reported before a missing reference, a missing reference
    // before a contradicting reason.
    assert_eq!(
        rule(&|f| {
            f.observed_utf8_byte_size = Some(-1);
            f.reference = None;
        }),
        Rule::ObservedSize
    );
    assert_eq!(
        rule(&|f| {
            f.reference = None;
            f.reason = ArtifactReason::BelowThreshold;
        }),
        Rule::ReferencePresence
    );
    // Rehydration: Missing has no observed size and always a reference.
    let missing = ArtifactDiagnosticsFields {
        operation: ArtifactOperation::Rehydration,
        outcome: ArtifactOutcome::Missing,
        content: ArtifactContent::RecoverableContextSegment,
        reason: ArtifactReason::Missing,
        observed_utf8_byte_size: None,
        configured_threshold_or_budget: 5,
        reference: Some(ArtifactReference::to_content("b")),
        attribution: Attribution {
            operation: ArtifactOperation::Rehydration,
            input_utf8_bytes: 82,
            output_utf8_bytes: None,
        },
    };
    assert!(ArtifactDiagnostics::new(missing).is_ok());
    let e = ArtifactDiagnostics::new(ArtifactDiagnosticsFields {
        observed_utf8_byte_size: Some(3),
        ..missing
    })
    .unwrap_err();
    assert_eq!(e.rule, Rule::ObservedPresence);
    let e = ArtifactDiagnostics::new(ArtifactDiagnosticsFields {
        reference: None,
        ..missing
    })
    .unwrap_err();
    assert_eq!(e.rule, Rule::ReferencePresence);
    // An inline offload carries no reference.
    let inline = ArtifactDiagnosticsFields {
        outcome: ArtifactOutcome::Inline,
        reason: ArtifactReason::BelowThreshold,
        attribution: Attribution {
            output_utf8_bytes: Some(20),
            ..valid_fields().attribution
        },
        ..valid_fields()
    };
    assert_eq!(
        ArtifactDiagnostics::new(inline).unwrap_err().rule,
        Rule::ReferencePresence
    );
}

/// SPEC ATR-5 (C# S83, the factories `ForOffload` / `ForRehydration`): a value from given
/// fields, the attribution computed; the reference implementation's own test cases (a missing,
/// malformed, forbidden, wrong-prefix or uppercase reference id is `InvalidArgument`, a valid one
/// succeeds), and the value equals the one a decision with the same facts builds.
#[test]
fn atr_5_artifact_diagnostics_from_given_fields() {
    use ArtifactDiagnosticsRule as Rule;
    use ArtifactOutcome as O;
    use ArtifactReason as R;
    let valid = ArtifactReference::to_content("valid reference content").to_string();
    let digest = Digest::of("valid reference content").to_hex();
    let offload = |outcome, reason, reference: Option<&str>| {
        ArtifactDiagnostics::for_offload(
            outcome,
            ArtifactContent::ToolResult,
            reason,
            200,
            100,
            reference,
        )
    };
    let refused = |r: Result<ArtifactDiagnostics, ArtifactDiagnosticsError>| {
        let e = r.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        e.rule
    };
    assert_eq!(
        refused(offload(O::Offloaded, R::ThresholdExceeded, None)),
        Rule::ReferencePresence
    );
    assert_eq!(
        refused(offload(
            O::ExistingReference,
            R::ExistingContentMatch,
            Some("artifact://sha256/not-actually-hex")
        )),
        Rule::ReferenceMalformed
    );
    for (outcome, reason) in [
        (O::Inline, R::BelowThreshold),
        (O::Failed, R::NoAuthorizedWorkspace),
        (O::RecoveryRequired, R::CanceledAfterWrite),
    ] {
        assert_eq!(
            refused(offload(outcome, reason, Some(&valid))),
            Rule::ReferencePresence
        );
    }
    let rehydration = |outcome, reason, observed, reference: &str| {
        ArtifactDiagnostics::for_rehydration(outcome, reason, observed, 100, reference)
    };
    for bad in [
        "not-a-canonical-reference-id".to_owned(),
        format!("artifact://sha1/{digest}"),
        format!("artifact://sha256/{}", digest.to_uppercase()),
        String::new(),
        format!(" {valid}"),
    ] {
        assert_eq!(
            refused(rehydration(O::Resolved, R::DigestVerified, Some(50), &bad)),
            Rule::ReferenceMalformed,
            "{bad:?}"
        );
    }
    assert_eq!(
        refused(rehydration(
            O::Missing,
            R::Missing,
            None,
            "artifact://sha1/x"
        )),
        Rule::ReferenceMalformed
    );
    // A valid value: the attribution is ATR-1's, the value a decision builds.
    let made = offload(O::Offloaded, R::ThresholdExceeded, Some(&valid)).unwrap();
    assert_eq!(made.reference().map(|r| r.to_string()), Some(valid.clone()));
    assert_eq!(
        made.attribution(),
        &spec::attribution::attribute(O::Offloaded, Some(200))
    );
    let decided = spec::attribution::decide(spec::attribution::Decision {
        outcome: O::Offloaded,
        reason: R::ThresholdExceeded,
        content: ArtifactContent::ToolResult,
        observed: Some(200),
        threshold_or_budget: 100,
        reference: Some(ArtifactReference::to_content("valid reference content")),
    })
    .unwrap();
    assert_eq!(*decided, made);
    let resolved = rehydration(O::Resolved, R::DigestVerified, Some(12), &valid).unwrap();
    assert_eq!(
        resolved.content(),
        ArtifactContent::RecoverableContextSegment
    );
    assert_eq!(resolved.attribution().input_utf8_bytes, 82);
    assert_eq!(resolved.attribution().output_utf8_bytes, Some(12));
    // Kinds the reference implementation raises as out-of-range: a family, a number, a
    // resolved body without its size.
    let out_of_range = |r: Result<ArtifactDiagnostics, ArtifactDiagnosticsError>| {
        let e = r.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::OutOfRange);
        e.rule
    };
    assert_eq!(
        out_of_range(offload(O::Resolved, R::ThresholdExceeded, Some(&valid))),
        Rule::OutcomeFamily
    );
    assert_eq!(
        out_of_range(offload(O::Offloaded, R::DigestVerified, Some(&valid))),
        Rule::ReasonFamily
    );
    assert_eq!(
        out_of_range(ArtifactDiagnostics::for_offload(
            O::Inline,
            ArtifactContent::ToolResult,
            R::BelowThreshold,
            -1,
            100,
            None
        )),
        Rule::ObservedSize
    );
    assert_eq!(
        out_of_range(ArtifactDiagnostics::for_rehydration(
            O::Stale,
            R::DigestMismatch,
            Some(3),
            0,
            &valid
        )),
        Rule::ThresholdOrBudget
    );
    assert_eq!(
        out_of_range(rehydration(O::Resolved, R::DigestVerified, None, &valid)),
        Rule::ObservedPresence
    );
    // DEP-22: what the reference implementation's factories accept and no decision builds.
    assert_eq!(
        refused(offload(O::Inline, R::ThresholdExceeded, None)),
        Rule::ReasonPair
    );
    assert_eq!(
        refused(ArtifactDiagnostics::for_offload(
            O::Inline,
            ArtifactContent::RecoverableContextSegment,
            R::BelowThreshold,
            3,
            100,
            None
        )),
        Rule::Content
    );
}

/// SPEC DEP-22: the values the reference implementation's factories accept but no decision
/// builds are refused, and every value a decision builds is accepted by the factory with the
/// same facts.
#[test]
fn dep_22_factories_accept_exactly_the_values_decisions_build() {
    for (diagnostics, _) in every_decision("é€😀") {
        let d = *diagnostics;
        let reference = d.reference().map(|r| r.to_string());
        let rebuilt = match d.operation() {
            ArtifactOperation::Offload => ArtifactDiagnostics::for_offload(
                d.outcome(),
                d.content(),
                d.reason(),
                d.observed_utf8_byte_size().unwrap(),
                d.configured_threshold_or_budget(),
                reference.as_deref(),
            ),
            ArtifactOperation::Rehydration => ArtifactDiagnostics::for_rehydration(
                d.outcome(),
                d.reason(),
                d.observed_utf8_byte_size(),
                d.configured_threshold_or_budget(),
                reference.as_deref().unwrap(),
            ),
        };
        assert_eq!(rebuilt, Ok(d));
    }
    let missing_with_size = ArtifactDiagnostics::for_rehydration(
        ArtifactOutcome::Missing,
        ArtifactReason::Missing,
        Some(4),
        10,
        &ArtifactReference::to_content("b").to_string(),
    );
    assert_eq!(
        missing_with_size.unwrap_err().rule,
        ArtifactDiagnosticsRule::ObservedPresence
    );
}

/// SPEC ATR-2: the enums' declaration orders and the outcome families.
#[test]
fn atr_2_artifact_enums_are_declared_in_order() {
    assert_eq!(
        names(ArtifactOperation::ALL, ArtifactOperation::name),
        ["Offload", "Rehydration"]
    );
    assert_eq!(
        names(ArtifactOutcome::ALL, ArtifactOutcome::name),
        [
            "Inline",
            "Offloaded",
            "ExistingReference",
            "Failed",
            "RecoveryRequired",
            "Resolved",
            "Stale",
            "Missing",
            "Unauthorized",
            "OverBudget"
        ]
    );
    assert_eq!(
        names(ArtifactReason::ALL, ArtifactReason::name),
        [
            "BelowThreshold",
            "RecoverableSegmentBypass",
            "ThresholdExceeded",
            "ExistingContentMatch",
            "NoAuthorizedWorkspace",
            "WorkspaceReadFailed",
            "ContentAddressMismatch",
            "WorkspaceWriteFailed",
            "CanceledAfterWrite",
            "CheckpointFailed",
            "DigestVerified",
            "DigestMismatch",
            "Missing",
            "OwnerMismatch",
            "BudgetExceeded"
        ]
    );
    assert_eq!(
        names(ArtifactContent::ALL, ArtifactContent::name),
        ["ToolResult", "RecoverableContextSegment"]
    );
    let offload: Vec<_> = ArtifactOutcome::ALL
        .iter()
        .filter(|o| o.operation() == ArtifactOperation::Offload)
        .collect();
    assert_eq!(offload.len(), 5);
}

/// SPEC ATR-4 (C# S72): renderings of diagnostics and events carry no content, path, owner, tool
/// name, call id or description.
#[test]
fn atr_4_artifact_renderings_carry_no_content() {
    let body = "SECRET-BODY é€😀";
    let path = record_for(body).path();
    let mut rendered = String::new();
    for (d, events) in every_decision(body) {
        rendered.push_str(&format!("{d:?}{d:#?}{:?}{events:?}", d.attribution()));
    }
    for secret in [
        "SECRET",
        &path,
        "user-1",
        "orch-1",
        "session-1",
        "search",
        "call-1",
        "a tool result",
        ".foundry",
    ] {
        assert!(!rendered.contains(secret), "{secret} leaked");
    }
}

proptest! {
    /// SPEC ATR-1, ATR-2: the validator accepts exactly the table's attribution (a second,
    /// independent statement of the table agrees with the spec's `attribute`).
    #[test]
    fn atr_1_atr_2_the_validator_accepts_exactly_the_table(
        outcome in proptest::sample::select(ArtifactOutcome::ALL.to_vec()),
        observed in 0i64..1_000,
        input in 0i64..200,
        output in proptest::option::of(0i64..200),
    ) {
        let operation = outcome.operation();
        let rehydration = operation == ArtifactOperation::Rehydration;
        let observed = (!matches!(outcome, ArtifactOutcome::Missing | ArtifactOutcome::Unauthorized))
            .then_some(observed);
        let reference = (rehydration
            || matches!(outcome, ArtifactOutcome::Offloaded | ArtifactOutcome::ExistingReference))
            .then(|| ArtifactReference::to_content("x"));
        let fields = |attribution| ArtifactDiagnosticsFields {
            operation,
            outcome,
            content: if rehydration {
                ArtifactContent::RecoverableContextSegment
            } else {
                ArtifactContent::ToolResult
            },
            reason: outcome.reasons()[0],
            observed_utf8_byte_size: observed,
            configured_threshold_or_budget: 1,
            reference,
            attribution,
        };
        let table = spec::attribution::attribute(outcome, observed);
        prop_assert!(ArtifactDiagnostics::new(fields(table)).is_ok());
        let other = Attribution { operation, input_utf8_bytes: input, output_utf8_bytes: output };
        prop_assert_eq!(ArtifactDiagnostics::new(fields(other)).is_ok(), other == table);
    }
}

// ---------------------------------------------------------------------------------------------
// CFG: public configuration

fn public_options<U>(reducer: Option<U>) -> PublicOptions<U> {
    PublicOptions {
        hard_limit_bytes: 100,
        trigger_margin_bytes: 10,
        recent_message_retention_count: 2,
        maximum_compaction_attempts: 3,
        upstream_reducer: reducer,
    }
}

fn reducer() -> Option<MessageCountingReducer> {
    Some(MessageCountingReducer { target_count: 3 })
}

/// SPEC CFG-1, CFG-2 (C# S84): five required members, the checks in order, before any agent.
#[test]
fn cfg_1_cfg_2_the_public_switch_and_options_are_checked_in_order() {
    use spec::configuration::configure;
    let chain = ClientChain::default();
    let with_node = ClientChain {
        components: vec![ClientComponent::Compaction],
    };
    let err =
        |enabled, options: Option<PublicOptions<MessageCountingReducer>>, chain: &ClientChain| {
            let e = configure(enabled, options, chain).unwrap_err();
            let kind = e.kind();
            (e, kind)
        };
    assert_eq!(
        err(true, None, &with_node),
        (
            ConfigurationError::EnabledWithoutOptions,
            ErrorKind::InvalidArgument
        )
    );
    assert_eq!(
        err(false, Some(public_options(None)), &with_node),
        (
            ConfigurationError::OptionsWithoutEnabled,
            ErrorKind::InvalidArgument
        )
    );
    assert_eq!(
        err(true, Some(public_options(None)), &with_node),
        (ConfigurationError::MissingReducer, ErrorKind::NullArgument)
    );
    let bad_numbers = PublicOptions {
        hard_limit_bytes: 0,
        ..public_options(reducer())
    };
    assert_eq!(
        err(true, Some(bad_numbers.clone()), &with_node),
        (
            ConfigurationError::ExistingCompactionComponent,
            ErrorKind::InvalidArgument
        )
    );
    assert_eq!(
        err(true, Some(bad_numbers), &chain),
        (
            ConfigurationError::Policy(PolicyError::OutOfRange {
                field: PolicyField::HardLimit,
                requirement: "must be > 0"
            }),
            ErrorKind::OutOfRange
        )
    );
    let margin = PublicOptions {
        trigger_margin_bytes: 100,
        recent_message_retention_count: 0,
        ..public_options(reducer())
    };
    assert!(matches!(
        err(true, Some(margin), &chain).0,
        ConfigurationError::Policy(e) if e.field() == PolicyField::TriggerMargin
    ));
    // Neither: no compaction, the client unchanged (a chain that already has a node is fine).
    let off = configure::<MessageCountingReducer>(false, None, &with_node).unwrap();
    assert!(off.compaction.is_none());
}

/// SPEC CFG-3 (C# S85), DEP-15, DEP-16: the defaults of the public path and its report.
#[test]
fn cfg_3_dep_15_dep_16_the_public_path_defaults() {
    let on = spec::configuration::configure(
        true,
        Some(public_options(reducer())),
        &ClientChain::default(),
    )
    .unwrap();
    assert_eq!(
        (on.report.requested, on.report.effective, on.report.source),
        (
            RequestedState::RequestedEnabled,
            EffectiveState::Enabled,
            DefaultSource::CallerSupplied
        )
    );
    let c = on.compaction.unwrap();
    let p = &c.profile.policy;
    assert_eq!(p.estimator().unit(), MeasurementUnit::Utf8Bytes);
    assert_eq!(
        (p.preservation_label(), p.preservation_version()),
        ("foundry-harness-bundle", 1)
    );
    assert_eq!(
        (p.hard_limit(), p.trigger_margin(), p.trigger_threshold()),
        (100, 10, 90)
    );
    assert_eq!(
        (
            p.recent_message_retention_count(),
            p.maximum_compaction_attempts()
        ),
        (2, 3)
    );
    let _cls_2: &spec::classify::ContentHashClassifier = &c.profile.classifier;
    // DEP-15: no trust binding; DEP-16: call-local runs; no capability resolution.
    assert!(!c.trust_binding && !c.capability_resolver_consulted);
    assert_eq!(c.runs, RunCoordination::CallLocal);
    // SPEC CFG-4: inside the per-call history decorator.
    assert_eq!(
        c.placement,
        hybrid_compaction_model::configuration::HistoryPlacement::InsidePerCallHistory
    );
    // The estimator is EST-2's: a 2-byte "é" text measures 2.
    let e = hybrid_compaction_model::entry::Entry::new(
        "e",
        hybrid_compaction_model::entry::EntryKind::ConversationalMessage,
        hybrid_compaction_model::message::Message::text("user", "é"),
    )
    .unwrap();
    assert_eq!(p.estimator().estimate(&e), 2);
    let off = spec::configuration::configure::<MessageCountingReducer>(
        false,
        None,
        &ClientChain::default(),
    )
    .unwrap();
    assert_eq!(
        (
            off.report.requested,
            off.report.effective,
            off.report.source
        ),
        (
            RequestedState::RequestedDisabled,
            EffectiveState::Disabled,
            DefaultSource::NotApplicable
        )
    );
}

proptest! {
    /// SPEC OFF-2, ATR-1: for any text, the observed size and the attribution count UTF-8 bytes
    /// (never chars or UTF-16 units), whichever row decides.
    #[test]
    fn off_2_atr_1_observed_sizes_are_utf8_bytes_for_any_text(
        text in "\\PC{1,40}",
        threshold in 1i64..120,
        offloadable in any::<bool>(),
    ) {
        let g = guard();
        let run = run_offload(
            tool_result(&text),
            threshold,
            offloadable.then_some(&g),
            offloadable.then(ScriptedWorkspace::default),
            false,
        );
        let d = run.result.unwrap().diagnostics;
        let bytes = text.len() as i64;
        prop_assert_eq!(d.observed_utf8_byte_size(), Some(bytes));
        prop_assert_eq!(d.attribution().input_utf8_bytes, bytes);
        let expected_output = match d.outcome() {
            ArtifactOutcome::Inline => Some(bytes),
            ArtifactOutcome::Offloaded => Some(82),
            _ => None,
        };
        prop_assert_eq!(d.attribution().output_utf8_bytes, expected_output);
        prop_assert_eq!(d.outcome() == ArtifactOutcome::Inline, bytes <= threshold);
    }
}
