//! Hand-written vectors: reference records (ARF), rehydration (RHY), offload (OFF) and their
//! UTF-8 byte attribution (ATR) — SPEC section 17. Byte counts are written out by hand: "é" is 2
//! UTF-8 bytes (1 UTF-16 unit), "€" 3 (1), "😀" 4 (2); a reference id is 82 bytes.

use hybrid_compaction_model::artifact::ArtifactReference;
use serde_json::{json, Value as Json};

use super::dsl::{digest, err_field, reference};
use super::{group, t, HandGroup};

/// "é€😀": 9 UTF-8 bytes, 3 characters, 4 UTF-16 units.
const MB: &str = "é€😀";

fn path(content: &str) -> String {
    ArtifactReference::to_content(content).path()
}

fn owners(user: &str, orch: &str, session: &str) -> Json {
    json!({"userId": user, "orchestrationId": orch, "sessionId": session})
}

fn default_owners() -> Json {
    owners("user-1", "orch-1", "session-1")
}

fn create(body: &str, description: &str) -> Json {
    json!({"op": "record", "create": {"body": body, "description": description, "toolName": "search", "callId": "call-1"}})
}

fn reconstruct(fields: Json) -> Json {
    json!({"op": "record", "reconstruct": fields})
}

fn record_of(body: &str, bytes: i64, utf16: u32) -> Json {
    json!({"record": {"schema": 1, "referenceId": reference(body), "referenceUtf8Bytes": 82, "path": path(body),
        "digest": digest(body), "byteSize": bytes, "descriptionUtf16Units": utf16}})
}

/// The record groups (ARF-1 .. ARF-3).
pub fn records() -> Vec<HandGroup> {
    let d500 = format!("{}😀", "a".repeat(498));
    let d501 = format!("{}😀", "a".repeat(499));
    let e500 = "é".repeat(500);
    vec![
        group(
            "fresh creation: digest, derived path, UTF-8 size, owners from the trusted binding (SPEC ARF-1, ARF-3)",
            None,
            vec![
                t("a record of \"hello\": schema 1, the 82-byte reference, the path derived from the digest, 5 bytes",
                    &["ARF-1", "ARF-3"],
                    create("hello", "greeting"),
                    record_of("hello", 5, 8)),
                t("the owners come from the trusted binding, never from the caller", &["ARF-3"],
                    json!({"op": "record", "create": {"body": "x", "toolName": "t", "callId": "c"},
                        "binding": {"owners": owners("alice", "flow-9", "s-9"), "workspace": 3}}),
                    json!({"record": {"owners": owners("alice", "flow-9", "s-9"), "byteSize": 1}})),
                t("a multibyte body's size is its UTF-8 bytes (9), not characters (3)", &["ARF-1", "ARF-3"],
                    create(MB, MB),
                    record_of(MB, 9, 4)).flags(&["Multibyte"]),
                t("an empty body is refused: byte size must be > 0", &["ARF-1", "ARF-3"],
                    create("", ""),
                    err_field("OutOfRange", "ByteSize")),
                t("a description of 500 UTF-16 units (498 + a surrogate pair) is accepted", &["ARF-1"],
                    create("x", &d500),
                    json!({"record": {"descriptionUtf16Units": 500}})).flags(&["Multibyte", "Boundary"]),
                t("501 UTF-16 units (499 + a surrogate pair, 500 characters) is out of range", &["ARF-1", "ARF-2"],
                    create("x", &d501),
                    err_field("OutOfRange", "Description")).flags(&["Multibyte", "Boundary"]),
                t("500 'é' are 1000 UTF-8 bytes but 500 UTF-16 units: accepted", &["ARF-1"],
                    create("x", &e500),
                    json!({"record": {"descriptionUtf16Units": 500}})).flags(&["Multibyte", "Boundary"]),
                t("a blank tool name is refused", &["ARF-1", "ARF-3"],
                    json!({"op": "record", "create": {"body": "x", "toolName": " ", "callId": "c"}}),
                    err_field("InvalidArgument", "ToolName")),
                t("a blank call id is refused", &["ARF-1", "ARF-3"],
                    json!({"op": "record", "create": {"body": "x", "toolName": "t", "callId": ""}}),
                    err_field("InvalidArgument", "CallId")),
                t("blank binding owners are refused", &["ARF-1", "ARF-3"],
                    json!({"op": "record", "create": {"body": "x", "toolName": "t", "callId": "c"},
                        "binding": {"owners": owners("u", "", "s"), "workspace": 1}}),
                    err_field("InvalidArgument", "OwnerOrchestrationId")),
            ],
        ),
        group(
            "reconstruction from stored fields: checks in order, the path recomputed (SPEC ARF-2)",
            None,
            vec![
                t("consistent stored fields rebuild the record", &["ARF-2"],
                    reconstruct(json!({"body": "hello"})),
                    record_of("hello", 5, 0)),
                t("schema version 2 is NotSupported", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "schema": 2})),
                    err_field("NotSupported", "Schema")),
                t("a malformed reference id (uppercase hex) is refused", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "referenceId": reference("hello").to_uppercase()})),
                    err_field("InvalidArgument", "ReferenceId")),
                t("a stored digest that is not the reference's is refused", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "digest": digest("other")})),
                    err_field("InvalidArgument", "Digest")),
                t("a malformed stored digest is refused", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "digest": "abc"})),
                    err_field("InvalidArgument", "Digest")),
                t("a stored path that is not the one derived from the digest is refused", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "path": path("other")})),
                    err_field("InvalidArgument", "Path")),
                t("a stored path with a different prefix is refused", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "path": path("hello").replace(".foundry/", "")})),
                    err_field("InvalidArgument", "Path")),
                t("byte size 0 is out of range", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "byteSize": 0})),
                    err_field("OutOfRange", "ByteSize")).flags(&["Boundary"]),
                t("a description of 501 UTF-16 units is out of range", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "description": d501})),
                    err_field("OutOfRange", "Description")).flags(&["Multibyte"]),
                t("a blank owner user id is refused", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "owners": owners("\u{3000}", "o", "s")})),
                    err_field("InvalidArgument", "OwnerUserId")).flags(&["Multibyte"]),
                t("a blank owner session id is refused", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "owners": owners("u", "o", " ")})),
                    err_field("InvalidArgument", "OwnerSessionId")),
                t("a blank tool name is refused", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "toolName": ""})),
                    err_field("InvalidArgument", "ToolName")),
                t("order: the schema before a bad path", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "schema": 0, "path": "x"})),
                    err_field("NotSupported", "Schema")),
                t("order: the path before the byte size", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "path": "x", "byteSize": 0})),
                    err_field("InvalidArgument", "Path")),
                t("order: the byte size before the owners", &["ARF-2"],
                    reconstruct(json!({"body": "hello", "byteSize": -1, "owners": owners("", "", "")})),
                    err_field("OutOfRange", "ByteSize")),
            ],
        ),
    ]
}

fn rehydrate(body: &str, stored: Option<&str>, budget: i64) -> Json {
    let mut c = json!({"op": "rehydrate", "body": body, "budget": budget});
    if let Some(s) = stored {
        c["stored"] = json!(s);
    }
    c
}

/// Expected rehydration diagnostics: outcome, reason, observed bytes, budget, output bytes.
fn rdiag(
    body: &str,
    outcome: &str,
    reason: &str,
    observed: Option<i64>,
    budget: i64,
    output: Option<i64>,
) -> Json {
    json!({"operation": "Rehydration", "outcome": outcome, "content": "RecoverableContextSegment", "reason": reason,
        "observedUtf8ByteSize": observed, "configuredThresholdOrBudget": budget, "referenceId": reference(body),
        "attribution": {"operation": "Rehydration", "inputUtf8Bytes": 82, "outputUtf8Bytes": output}})
}

fn resolved(body: &str, budget: i64, bytes: i64) -> Json {
    json!({"rehydration": {"status": "Resolved",
        "segment": {"referenceId": reference(body), "body": body, "skipEagerReoffload": true},
        "diagnostics": rdiag(body, "Resolved", "DigestVerified", Some(bytes), budget, Some(bytes)),
        "events": 1, "sharedWithEvent": true, "workspaceReads": 1}})
}

fn unresolved(
    body: &str,
    status: &str,
    reason: &str,
    observed: Option<i64>,
    budget: i64,
    reads: u32,
) -> Json {
    json!({"rehydration": {"status": status, "segment": null,
        "diagnostics": rdiag(body, status, reason, observed, budget, None),
        "events": 1, "sharedWithEvent": true, "workspaceReads": reads}})
}

fn ctx(user: &str, workspace: Option<u64>) -> Json {
    match workspace {
        Some(w) => json!({"userId": user, "orchestrationId": "orch-1", "workspace": w}),
        None => json!({"userId": user, "orchestrationId": "orch-1"}),
    }
}

/// The rehydration groups (RHY-1 .. RHY-4, ATR-1 .. ATR-3).
pub fn rehydration() -> Vec<HandGroup> {
    let mb_body = format!("{MB} body"); // 9 + 5 = 14 bytes
    let two = "😀😀"; // 8 bytes, 2 characters, 4 UTF-16 units
    vec![
        group(
            "the five statuses, their (outcome, reason) pairs and their attribution (SPEC RHY-2, RHY-3, ATR-1)",
            None,
            vec![
                t("the stored body matches: Resolved / DigestVerified; input 82, output the body's bytes; one shared value",
                    &["RHY-2", "RHY-3", "RHY-4", "ATR-1", "ATR-2", "ATR-3", "ATR-4"],
                    rehydrate("hello", Some("hello"), 1000),
                    resolved("hello", 1000, 5)),
                t("a multibyte body resolves with output = its 14 UTF-8 bytes", &["RHY-3", "RHY-4", "ATR-1"],
                    rehydrate(&mb_body, Some(&mb_body), 1000),
                    resolved(&mb_body, 1000, 14)).flags(&["Multibyte"]),
                t("a different stored body: Stale / DigestMismatch, observed = the stored bytes, output null", &["RHY-2", "RHY-3", "ATR-1"],
                    rehydrate("hello", Some("héllo!"), 1000),
                    unresolved("hello", "Stale", "DigestMismatch", Some(7), 1000, 1)).flags(&["Multibyte"]),
                t("nothing stored: Missing / Missing, observed null, output null", &["RHY-2", "RHY-3", "ATR-1", "ATR-2"],
                    rehydrate("hello", None, 1000),
                    unresolved("hello", "Missing", "Missing", None, 1000, 1)),
                t("the record's owners differ: Unauthorized / OwnerMismatch, the workspace is not read", &["RHY-2", "RHY-3", "ATR-1", "ATR-2"],
                    json!({"op": "rehydrate", "body": "hello", "stored": "hello", "budget": 1000,
                        "recordOwners": owners("user-2", "orch-1", "session-1")}),
                    unresolved("hello", "Unauthorized", "OwnerMismatch", None, 1000, 0)),
                t("over budget: OverBudget / BudgetExceeded, observed = the body's bytes, output null", &["RHY-2", "RHY-3", "ATR-1"],
                    rehydrate("hello", Some("hello"), 4),
                    unresolved("hello", "OverBudget", "BudgetExceeded", Some(5), 4, 1)).flags(&["Boundary"]),
                t("a body exactly at the budget resolves", &["RHY-3"],
                    rehydrate("hello", Some("hello"), 5),
                    resolved("hello", 5, 5)).flags(&["Boundary"]),
                t("budgets count UTF-8 bytes: \"😀😀\" is 8 bytes (2 characters), over a budget of 7", &["RHY-3", "ATR-1"],
                    rehydrate(two, Some(two), 7),
                    unresolved(two, "OverBudget", "BudgetExceeded", Some(8), 7, 1)).flags(&["Multibyte", "Boundary"]),
                t("\"😀😀\" at a budget of 8 resolves with output 8", &["RHY-3", "ATR-1"],
                    rehydrate(two, Some(two), 8),
                    resolved(two, 8, 8)).flags(&["Multibyte", "Boundary"]),
                t("the deterministic-policy source resolves the same way", &["RHY-1"],
                    json!({"op": "rehydrate", "body": "hello", "stored": "hello", "budget": 10, "source": "DeterministicPolicy"}),
                    resolved("hello", 10, 5)),
            ],
        ),
        group(
            "rehydration steps in order; raising paths produce no diagnostics (SPEC RHY-1, RHY-3, RHY-4)",
            None,
            vec![
                t("owners are checked before the read: Unauthorized even when nothing is stored", &["RHY-3"],
                    json!({"op": "rehydrate", "body": "hello", "budget": 1000, "recordOwners": owners("user-1", "orch-2", "session-1")}),
                    unresolved("hello", "Unauthorized", "OwnerMismatch", None, 1000, 0)),
                t("the digest is checked before the budget: a large different body is Stale", &["RHY-3"],
                    rehydrate("hello", Some("a much longer different body"), 3),
                    unresolved("hello", "Stale", "DigestMismatch", Some(28), 3, 1)),
                t("a Stale decision does not revalidate a second time", &["RHY-3", "TRU-3"],
                    json!({"op": "rehydrate", "body": "hello", "stored": "other", "budget": 1000,
                        "accessor": [ctx("user-1", Some(1)), null]}),
                    unresolved("hello", "Stale", "DigestMismatch", Some(5), 1000, 1)),
                t("the first revalidation fails: an InvalidOperation naming only the status", &["RHY-3", "TRU-2"],
                    json!({"op": "rehydrate", "body": "hello", "stored": "hello", "budget": 1000, "accessor": [null]}),
                    err_field("InvalidOperation", "MissingContext")),
                t("the second revalidation fails before Resolved", &["RHY-3", "TRU-2", "TRU-3"],
                    json!({"op": "rehydrate", "body": "hello", "stored": "hello", "budget": 1000,
                        "accessor": [ctx("user-1", Some(1)), ctx("user-1", Some(2))]}),
                    err_field("InvalidOperation", "WorkspaceMismatch")),
                t("a read failure raises an InvalidOperation with no text", &["RHY-3", "ATR-4"],
                    json!({"op": "rehydrate", "body": "hello", "stored": "hello", "budget": 1000, "failRead": true}),
                    err_field("InvalidOperation", "Workspace")),
                t("a budget of 0 is out of range", &["RHY-1"],
                    rehydrate("hello", Some("hello"), 0),
                    err_field("OutOfRange", "Budget")).flags(&["Boundary"]),
                t("a multibyte body that is not stored: Missing, input 82, output null", &["RHY-2", "ATR-1"],
                    rehydrate(&mb_body, None, 1000),
                    unresolved(&mb_body, "Missing", "Missing", None, 1000, 1)).flags(&["Multibyte"]),
                t("a multibyte body of other owners: Unauthorized, input 82, output null", &["RHY-2", "ATR-1"],
                    json!({"op": "rehydrate", "body": mb_body, "stored": mb_body, "budget": 1000,
                        "recordOwners": owners("usér-😀", "orch-1", "session-1")}),
                    unresolved(&mb_body, "Unauthorized", "OwnerMismatch", None, 1000, 0)).flags(&["Multibyte"]),
            ],
        ),
    ]
}

fn tool(serialized: &str) -> Json {
    json!({"toolName": "search", "callId": "call-7", "serialized": serialized, "description": "results"})
}

fn offload(serialized: &str, threshold: i64, workspace: Option<Json>) -> Json {
    let mut c = json!({"op": "offload", "toolResult": tool(serialized), "threshold": threshold});
    if let Some(w) = workspace {
        c["workspace"] = w;
    }
    c
}

fn ws() -> Option<Json> {
    Some(json!({}))
}

/// Expected offload output: outcome, reason, observed, threshold, reference present, output bytes.
fn odiag(
    body: &str,
    outcome: &str,
    reason: &str,
    observed: i64,
    threshold: i64,
    output: Option<i64>,
) -> Json {
    let with_ref = matches!(outcome, "Offloaded" | "ExistingReference");
    let content = if reason == "RecoverableSegmentBypass" {
        "RecoverableContextSegment"
    } else {
        "ToolResult"
    };
    json!({"operation": "Offload", "outcome": outcome, "content": content, "reason": reason,
        "observedUtf8ByteSize": observed, "configuredThresholdOrBudget": threshold,
        "referenceId": if with_ref { json!(reference(body)) } else { Json::Null },
        "attribution": {"operation": "Offload", "inputUtf8Bytes": observed, "outputUtf8Bytes": output}})
}

fn decided(
    body: &str,
    outcome: &str,
    reason: &str,
    observed: i64,
    threshold: i64,
    output: Option<i64>,
    writes: u32,
) -> Json {
    let with_ref = matches!(outcome, "Offloaded" | "ExistingReference");
    json!({"offload": {
        "record": if with_ref { json!({"referenceId": reference(body), "referenceUtf8Bytes": 82, "path": path(body),
            "byteSize": observed, "toolName": "search", "callId": "call-7", "owners": default_owners()}) } else { Json::Null },
        "diagnostics": odiag(body, outcome, reason, observed, threshold, output),
        "events": 1, "sharedWithEvent": true, "workspaceWrites": writes}})
}

/// The offload groups (OFF-1 .. OFF-3, ATR-1 .. ATR-3).
pub fn offload_table() -> Vec<HandGroup> {
    let big = "0123456789abcdef"; // 16 bytes
    let euros = "€€€€"; // 12 bytes, 4 characters
    let two = "😀😀"; // 8 bytes
    let present = |body: &str, stored: &str| Some(json!({"files": {path(body): stored}}));
    vec![
        group(
            "the offload decision table, row by row, with its attribution (SPEC OFF-2, OFF-3, ATR-1)",
            None,
            vec![
                t("row 1: a recovered segment always inlines (RecoverableSegmentBypass), input = output = its bytes",
                    &["OFF-1", "OFF-2", "OFF-3", "ATR-1", "ATR-2", "ATR-3"],
                    json!({"op": "offload", "segment": MB, "threshold": 1, "workspace": {}}),
                    decided(MB, "Inline", "RecoverableSegmentBypass", 9, 1, Some(9), 0)).flags(&["Multibyte"]),
                t("row 2: at or below the threshold inlines (BelowThreshold), input = output", &["OFF-2", "ATR-1", "DEP-18"],
                    offload("short", 5, ws()),
                    decided("short", "Inline", "BelowThreshold", 5, 5, Some(5), 0)).flags(&["Boundary", "Deviation"]),
                t("row 2 counts UTF-8 bytes: \"😀😀\" (8 bytes) at threshold 8 inlines", &["OFF-2", "ATR-1"],
                    offload(two, 8, ws()),
                    decided(two, "Inline", "BelowThreshold", 8, 8, Some(8), 0)).flags(&["Multibyte", "Boundary"]),
                t("\"😀😀\" (8 bytes, 2 characters) over threshold 7 is offloaded: output the 82-byte reference",
                    &["OFF-2", "OFF-3", "ATR-1"],
                    offload(two, 7, ws()),
                    decided(two, "Offloaded", "ThresholdExceeded", 8, 7, Some(82), 1)).flags(&["Multibyte", "Boundary"]),
                t("row 3: above the threshold without a trust binding: Failed / NoAuthorizedWorkspace, output null",
                    &["OFF-2", "ATR-1"],
                    json!({"op": "offload", "toolResult": tool(big), "threshold": 10, "binding": false, "workspace": {}}),
                    decided(big, "Failed", "NoAuthorizedWorkspace", 16, 10, None, 0)),
                t("row 3: above the threshold without a workspace: Failed / NoAuthorizedWorkspace", &["OFF-2", "ATR-1"],
                    offload(big, 10, None),
                    decided(big, "Failed", "NoAuthorizedWorkspace", 16, 10, None, 0)),
                t("row 9: written and checkpointed: Offloaded / ThresholdExceeded, the record replaces the body",
                    &["OFF-2", "OFF-3", "ATR-1", "ATR-3", "ARF-3"],
                    offload(big, 10, ws()),
                    decided(big, "Offloaded", "ThresholdExceeded", 16, 10, Some(82), 1)),
                t("a multibyte result offloads with input 12 bytes (4 characters) and output 82", &["OFF-2", "ATR-1"],
                    offload(euros, 10, ws()),
                    decided(euros, "Offloaded", "ThresholdExceeded", 12, 10, Some(82), 1)).flags(&["Multibyte"]),
                t("row 5: the identical body is already stored: ExistingReference / ExistingContentMatch, no write",
                    &["OFF-2", "OFF-3", "ATR-1"],
                    offload(big, 10, present(big, big)),
                    decided(big, "ExistingReference", "ExistingContentMatch", 16, 10, Some(82), 0)),
                t("row 5: a different body at the content address: Failed / ContentAddressMismatch", &["OFF-2", "ATR-1"],
                    offload(big, 10, present(big, "tampered")),
                    decided(big, "Failed", "ContentAddressMismatch", 16, 10, None, 0)),
                t("row 5: the read fails: Failed / WorkspaceReadFailed", &["OFF-2", "ATR-1", "ATR-4"],
                    offload(big, 10, Some(json!({"failRead": true}))),
                    decided(big, "Failed", "WorkspaceReadFailed", 16, 10, None, 0)),
                t("row 6: the write fails: Failed / WorkspaceWriteFailed", &["OFF-2", "ATR-1"],
                    offload(big, 10, Some(json!({"failWrite": true}))),
                    decided(big, "Failed", "WorkspaceWriteFailed", 16, 10, None, 1)),
                t("row 7: cancellation after the write: RecoveryRequired / CanceledAfterWrite, output null",
                    &["OFF-2", "ATR-1"],
                    json!({"op": "offload", "toolResult": tool(big), "threshold": 10, "workspace": {}, "cancelled": true}),
                    decided(big, "RecoveryRequired", "CanceledAfterWrite", 16, 10, None, 1)),
                t("row 8: the checkpoint fails: RecoveryRequired / CheckpointFailed", &["OFF-2", "ATR-1"],
                    offload(big, 10, Some(json!({"failCheckpoint": true}))),
                    decided(big, "RecoveryRequired", "CheckpointFailed", 16, 10, None, 1)),
                t("a multibyte RecoveryRequired keeps input = observed bytes", &["OFF-2", "ATR-1"],
                    offload(euros, 10, Some(json!({"failCheckpoint": true}))),
                    decided(euros, "RecoveryRequired", "CheckpointFailed", 12, 10, None, 1)).flags(&["Multibyte"]),
                t("a multibyte Failed keeps input = observed bytes", &["OFF-2", "ATR-1"],
                    offload(euros, 10, Some(json!({"failWrite": true}))),
                    decided(euros, "Failed", "WorkspaceWriteFailed", 12, 10, None, 1)).flags(&["Multibyte"]),
                t("a multibyte ExistingReference outputs the 82-byte reference", &["OFF-2", "ATR-1"],
                    offload(euros, 10, present(euros, euros)),
                    decided(euros, "ExistingReference", "ExistingContentMatch", 12, 10, Some(82), 0)).flags(&["Multibyte"]),
            ],
        ),
        group(
            "offload order and raising paths (SPEC OFF-1, OFF-2)",
            None,
            vec![
                t("order: a read failure comes before the write", &["OFF-2"],
                    offload(big, 10, Some(json!({"failRead": true, "failWrite": true}))),
                    decided(big, "Failed", "WorkspaceReadFailed", 16, 10, None, 0)),
                t("order: a write failure comes before cancellation", &["OFF-2"],
                    json!({"op": "offload", "toolResult": tool(big), "threshold": 10, "workspace": {"failWrite": true}, "cancelled": true}),
                    decided(big, "Failed", "WorkspaceWriteFailed", 16, 10, None, 1)),
                t("order: cancellation comes before the checkpoint", &["OFF-2"],
                    json!({"op": "offload", "toolResult": tool(big), "threshold": 10, "workspace": {"failCheckpoint": true}, "cancelled": true}),
                    decided(big, "RecoveryRequired", "CanceledAfterWrite", 16, 10, None, 1)),
                t("below the threshold nothing is revalidated: Inline despite a failing accessor", &["OFF-2"],
                    json!({"op": "offload", "toolResult": tool("tiny"), "threshold": 10, "workspace": {}, "accessor": [null]}),
                    decided("tiny", "Inline", "BelowThreshold", 4, 10, Some(4), 0)),
                t("above the threshold the binding is revalidated: a failure raises, naming only the status", &["OFF-2", "TRU-2"],
                    json!({"op": "offload", "toolResult": tool(big), "threshold": 10, "workspace": {},
                        "accessor": [ctx("user-2", Some(1))]}),
                    err_field("InvalidOperation", "IdentityMismatch")),
                t("the record is built before the workspace is touched: a blank tool name raises", &["OFF-2", "ARF-3"],
                    json!({"op": "offload", "toolResult": {"toolName": "", "callId": "c", "serialized": big}, "threshold": 10,
                        "workspace": {"failRead": true}}),
                    err_field("InvalidArgument", "ToolName")),
                t("a description over 500 UTF-16 units raises", &["OFF-2", "ARF-1"],
                    json!({"op": "offload", "toolResult": {"toolName": "t", "callId": "c", "serialized": big,
                        "description": "😀".repeat(251)}, "threshold": 10, "workspace": {}}),
                    err_field("OutOfRange", "Description")).flags(&["Multibyte"]),
                t("a threshold of 0 is out of range", &["OFF-1"],
                    offload(big, 0, ws()),
                    err_field("OutOfRange", "Threshold")).flags(&["Boundary"]),
            ],
        ),
    ]
}
