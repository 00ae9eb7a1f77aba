//! Hand-written vectors: entries (ENT, CLS, SNAP-4), artifacts (ART), policy (POL-1, POL-2),
//! estimation and evaluation (EST, POL-3, POL-4).
//!
//! Expected values are computed by hand from the SPEC: byte counts of the UTF-8
//! estimator (EST-2), the validation order of POL-2, the known SHA-256 answers of `"abc"` and `""`,
//! and content-hash ids computed from the CLS-2 rendering with an independent SHA-256 (Python
//! `hashlib`), written here as constants.

use serde_json::{json, Value as Json};

use super::dsl::*;
use super::{group, t, HandGroup};

const SHA_ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
const SHA_EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

fn entry_case(entries: Vec<Json>) -> Json {
    json!({"op": "entry", "entries": entries})
}

fn one(e: Json) -> Json {
    entry_case(vec![e])
}

fn ok_entry(id: &str, kind: &str, role: &str, text: &str, digests: &[&str]) -> Json {
    let digest = if digests.len() == 1 {
        json!(digests[0])
    } else {
        Json::Null
    };
    json!({"entries": [{"id": id, "kind": kind, "role": role, "text": text,
        "artifactReferenceDigests": digests, "artifactReferenceDigest": digest}]})
}

/// Entries, adaptation, augmentation.
pub fn entries() -> Vec<HandGroup> {
    let reference_x = reference("x");
    let dx = digest("x");
    let all_kinds = entry_case(vec![
        sys("k1", "s"),
        auth("k2", "a"),
        approval("k3", "p"),
        call("k4", &["c"]),
        artref("k5", "x"),
        conv("k6", "m"),
        summary("k7", "sum"),
        body("k8", "x"),
        opt("k9", "o"),
    ]);
    let kinds_expect = json!({"entries": [
        {"id": "k1", "kind": "SystemInstruction", "role": "system"},
        {"id": "k2", "kind": "AuthoritativeSessionState", "role": "user"},
        {"id": "k3", "kind": "ApprovalSecurityState"},
        {"id": "k4", "kind": "ToolExchange", "role": "assistant", "text": ""},
        {"id": "k5", "kind": "ArtifactReference", "artifactReferenceDigests": [dx]},
        {"id": "k6", "kind": "ConversationalMessage"},
        {"id": "k7", "kind": "Summary"},
        {"id": "k8", "kind": "RecoverableContextSegment", "role": "user", "text": "x", "artifactReferenceDigests": [dx]},
        {"id": "k9", "kind": "OptionalContext", "artifactReferenceDigests": []}
    ]});
    let generic = group(
        "generic construction (SPEC ENT-1 .. ENT-5)",
        None,
        vec![
            t("all nine kinds in declaration order; roles default per kind", &["ENT-1", "ENT-2", "ENT-5", "ENT-6"], all_kinds, kinds_expect),
            t("a conversational message: role user, text, no digests", &["ENT-2", "ENT-3", "ENT-5"], one(conv("u1", "hello")), ok_entry("u1", "ConversationalMessage", "user", "hello", &[])),
            t("text is the concatenation of text parts without separator", &["ENT-3"],
                one(json!({"id": "u", "kind": "ConversationalMessage", "parts": [{"text": "ab"}, {"text": "cd"}]})),
                ok_entry("u", "ConversationalMessage", "user", "abcd", &[])),
            t("a message with no parts has text \"\"", &["ENT-3"], one(json!({"id": "u", "kind": "Summary", "parts": []})), ok_entry("u", "Summary", "user", "", &[])),
            t("explicit role and author are kept; any role string is allowed", &["ENT-3"],
                one(json!({"id": "u", "kind": "ConversationalMessage", "role": "narrator", "author": "ann", "text": "t"})),
                ok_entry("u", "ConversationalMessage", "narrator", "t", &[])),
            t("blank id is an argument error", &["ENT-2", "ERR-1"], one(conv("", "x")), err_field("InvalidArgument", "EntryId")),
            t("whitespace-only id is an argument error", &["ENT-2"], one(conv(" \t\n", "x")), err_field("InvalidArgument", "EntryId")),
            t("an id with inner spaces is fine", &["ENT-2"], one(conv(" a b ", "x")), ok_entry(" a b ", "ConversationalMessage", "user", "x", &[])),
            t("ConversationalMessage with a call part is refused", &["ENT-5"],
                one(json!({"id": "m", "kind": "ConversationalMessage", "parts": [{"call": {"callId": "c", "name": "f"}}]})),
                err_entry("InvalidArgument", "m")),
            t("Summary with a result part is refused", &["ENT-5"],
                one(json!({"id": "m", "kind": "Summary", "role": "tool", "parts": [{"result": {"callId": "c", "value": "v"}}]})),
                err_entry("InvalidArgument", "m")),
            t("SystemInstruction with a call part is refused", &["ENT-5"],
                one(json!({"id": "m", "kind": "SystemInstruction", "parts": [{"text": "x"}, {"call": {"callId": "c", "name": "f"}}]})),
                err_entry("InvalidArgument", "m")),
            t("ToolExchange with only text is refused", &["ENT-5"], one(entry("m", "ToolExchange", "x")), err_entry("InvalidArgument", "m")),
            t("ToolExchange with no parts is refused", &["ENT-5"], one(json!({"id": "m", "kind": "ToolExchange", "role": "assistant", "parts": []})), err_entry("InvalidArgument", "m")),
            t("ToolExchange mixing call and result parts is refused", &["ENT-5"],
                one(json!({"id": "m", "kind": "ToolExchange", "role": "assistant", "parts": [{"call": {"callId": "c", "name": "f"}}, {"result": {"callId": "c", "value": 1}}]})),
                err_entry("InvalidArgument", "m")),
            t("call parts require role assistant", &["ENT-5"],
                one(json!({"id": "m", "kind": "ToolExchange", "role": "user", "parts": [{"call": {"callId": "c", "name": "f"}}]})),
                err_entry("InvalidArgument", "m")),
            t("result parts require role tool", &["ENT-5"],
                one(json!({"id": "m", "kind": "ToolExchange", "role": "assistant", "parts": [{"result": {"callId": "c", "value": "v"}}]})),
                err_entry("InvalidArgument", "m")),
            t("a call entry may carry text parts too; call entries have no digests even with a reference argument", &["ENT-5"],
                one(json!({"id": "m", "kind": "ToolExchange", "parts": [{"text": "calling"}, {"call": {"callId": "c", "name": "f", "arguments": {"r": reference_x}}}]})),
                ok_entry("m", "ToolExchange", "assistant", "calling", &[])),
            t("a result whose string value is a canonical reference yields its digest", &["ENT-5", "ART-2"],
                one(result_ref("r", "c", "x")), ok_entry("r", "ToolExchange", "tool", "", &[&dx])),
            t("a result whose raw JSON string is a canonical reference yields its digest", &["ENT-5", "ENT-4"],
                one(result_value("r", "c", json!({"raw": format!("\"{reference_x}\"")}))), ok_entry("r", "ToolExchange", "tool", "", &[&dx])),
            t("one digest per reference-bearing result part, duplicates kept; singular digest absent", &["ENT-2", "ENT-5"],
                one(json!({"id": "r", "kind": "ToolExchange", "parts": [
                    {"result": {"callId": "a", "value": reference_x}}, {"result": {"callId": "b", "value": "plain"}}, {"result": {"callId": "c", "value": reference_x}}]})),
                ok_entry("r", "ToolExchange", "tool", "", &[&dx, &dx])),
            t("a reference nested in a map or list is not a digest", &["ENT-5"],
                one(json!({"id": "r", "kind": "ToolExchange", "parts": [
                    {"result": {"callId": "a", "value": {"map": {"ref": reference_x}}}}, {"result": {"callId": "b", "value": [reference_x]}}]})),
                ok_entry("r", "ToolExchange", "tool", "", &[])),
            t("a reference with surrounding whitespace is not canonical: no digest", &["ENT-5", "ART-2"],
                one(result_value("r", "c", json!(format!(" {reference_x}")))), ok_entry("r", "ToolExchange", "tool", "", &[])),
            t("raw JSON that is not a string (a number) yields no digest", &["ENT-5"],
                one(result_value("r", "c", json!({"raw": "12"}))), ok_entry("r", "ToolExchange", "tool", "", &[])),
            t("RecoverableContextSegment is refused by generic construction", &["ENT-5"],
                one(entry("b", "RecoverableContextSegment", "body")), err_entry("InvalidArgument", "b")),
            t("other kinds carry no digests even when their text is a reference", &["ENT-5"],
                one(conv("u", &reference_x)), ok_entry("u", "ConversationalMessage", "user", &reference_x, &[])),
            t("the first failing entry of a list is the answer", &["ENT-5"],
                entry_case(vec![conv("ok", "x"), entry("bad1", "ToolExchange", "x"), entry("bad2", "ToolExchange", "y")]),
                err_entry("InvalidArgument", "bad1")),
        ],
    );
    let factory = group(
        "recoverable-segment factory (SPEC ENT-6)",
        None,
        vec![
            t(
                "body verbatim as the only text part, role user, digests = [reference digest]",
                &["ENT-6", "ART-1"],
                one(body("b", "abc")),
                ok_entry("b", "RecoverableContextSegment", "user", "abc", &[SHA_ABC]),
            ),
            t(
                "the digest is the reference's, not the body's",
                &["ENT-6"],
                one(
                    json!({"id": "b", "kind": "RecoverableContextSegment", "segment": {"reference": reference("abc"), "body": "other text"}}),
                ),
                ok_entry(
                    "b",
                    "RecoverableContextSegment",
                    "user",
                    "other text",
                    &[SHA_ABC],
                ),
            ),
            t(
                "empty body: text \"\", digest of the empty string",
                &["ENT-6", "ART-1"],
                one(body("b", "")),
                ok_entry("b", "RecoverableContextSegment", "user", "", &[SHA_EMPTY]),
            ),
            t(
                "a malformed segment reference is an argument error",
                &["ENT-6", "ART-2"],
                one(
                    json!({"id": "b", "kind": "RecoverableContextSegment", "segment": {"reference": "artifact://sha256/abc", "body": "x"}}),
                ),
                json!({"error": {"kind": "InvalidArgument", "entryId": "b", "field": "Reference"}}),
            ),
            t(
                "blank id is refused by the factory too",
                &["ENT-6", "ENT-2"],
                one(body("  ", "x")),
                err_field("InvalidArgument", "EntryId"),
            ),
        ],
    );
    let content = group(
        "closed content and value model (SPEC ENT-3, ENT-4)",
        None,
        vec![
            t("a content shape outside text/call/result is NotSupported", &["ENT-3", "ERR-1", "DEP-19"],
                one(json!({"id": "m", "kind": "ConversationalMessage", "parts": [{"text": "x"}, {"unsupported": "ImageContent"}]})),
                err_entry("NotSupported", "m")).flags(&["Deviation"]),
            t("a value outside the closed set is NotSupported", &["ENT-4", "ERR-1"],
                one(result_value("r", "c", json!({"list": [1, {"unsupported": "System.DateTime"}]}))),
                err_entry("NotSupported", "r")),
            t("every value variant constructs", &["ENT-4"],
                one(json!({"id": "r", "kind": "ToolExchange", "parts": [{"result": {"callId": "c", "value": {"map": {
                    "null": null, "s": {"string": "x"}, "b": {"bool": true}, "i16": {"i16": -32768}, "i32": {"i32": 2147483647},
                    "i64": {"i64": -9223372036854775807i64}, "u8": {"u8": 255}, "u32": {"u32": 4294967295u32}, "u64": {"u64": 18446744073709551615u64},
                    "f32": {"f32": 1.5}, "f64": {"f64": "NaN"}, "d": {"decimal": "-1.50"}, "raw": {"raw": "{\"a\":[1,2]}"},
                    "m": {"map": {}}, "l": {"list": []}}}}}]})),
                ok_entry("r", "ToolExchange", "tool", "", &[])),
        ],
    );
    let cls = group(
        "message adaptation and the default content-hash classifier (SPEC CLS-1, CLS-2)",
        None,
        vec![
            t("role system becomes SystemInstruction; id = sha256(rendering):0", &["CLS-1", "CLS-2"],
                json!({"op": "entry", "messages": [{"role": "system", "text": "be brief"}]}),
                json!({"entries": [{"id": "92e1d1c887ad306c4b410b7576975b4a65f771f6557af3bcc5d62a583c88ba6f:0", "kind": "SystemInstruction"}]})),
            t("identical renderings are numbered by earlier occurrences; author is ignored", &["CLS-2"],
                json!({"op": "entry", "messages": [{"role": "user", "text": "hi"}, {"role": "user", "author": "bob", "text": "hi"}, {"role": "user", "text": "hi"}]}),
                json!({"entries": [
                    {"id": "fffded22a0546e9f125f49064f310fc69832fdfcc4749c2c13ca76e09500ebb0:0", "kind": "ConversationalMessage"},
                    {"id": "fffded22a0546e9f125f49064f310fc69832fdfcc4749c2c13ca76e09500ebb0:1"},
                    {"id": "fffded22a0546e9f125f49064f310fc69832fdfcc4749c2c13ca76e09500ebb0:2"}]})),
            t("a call message is a ToolExchange; arguments are excluded from the rendering", &["CLS-1", "CLS-2"],
                json!({"op": "entry", "messages": [{"role": "assistant", "parts": [{"call": {"callId": "c1", "name": "f", "arguments": {"a": 1}}}]}]}),
                json!({"entries": [{"id": "7979cca8ceaa5995c2c44a833c1a49006a34a4c8769cc7cc5540aa102607211c:0", "kind": "ToolExchange"}]})),
            t("result values render: string as-is", &["CLS-2"],
                json!({"op": "entry", "messages": [{"role": "tool", "parts": [{"result": {"callId": "c1", "value": "ok"}}]}]}),
                json!({"entries": [{"id": "ad15c36c401e251054491de3aebcd099045f9150e5d973bea9b8c3202a7caee2:0", "kind": "ToolExchange"}]})),
            t("result values render: null as empty", &["CLS-2"],
                json!({"op": "entry", "messages": [{"role": "tool", "parts": [{"result": {"callId": "c1", "value": null}}]}]}),
                json!({"entries": [{"id": "b7cfc58101bbe90c306fc9cee38c14b0847c161cb32e10ec96dab17b3d76ebf8:0"}]})),
            t("result values render: a JSON string decoded", &["CLS-2"],
                json!({"op": "entry", "messages": [{"role": "tool", "parts": [{"result": {"callId": "c1", "value": {"raw": "\"x\""}}}]}]}),
                json!({"entries": [{"id": "217bd0e482dbf71258f7951674c104e46e06380ec7b60d613547573b9063cba8:0"}]})),
            t("result values render: a JSON object as its raw text", &["CLS-2"],
                json!({"op": "entry", "messages": [{"role": "tool", "parts": [{"result": {"callId": "c1", "value": {"raw": "{\"a\":1}"}}}]}]}),
                json!({"entries": [{"id": "026973f24978f8338a29aea5fce40bf011653ef64212609ef8a76f345f6a3f32:0"}]})),
            t("parts are each followed by U+001E: two text parts differ from one concatenated part", &["CLS-2"],
                json!({"op": "entry", "messages": [{"role": "user", "parts": [{"text": "a"}, {"text": "b"}]}, {"role": "user", "text": "ab"}, {"role": "user", "parts": []}]}),
                json!({"entries": [
                    {"id": "0544c79d3381dc6906c2c73c453d142d0025b9a0faa8d1faff367df3c23eaa69:0", "text": "ab"},
                    {"id": "7baab32c85064da7538b623460554e21fd3e0815c493ccdc66cab490df176730:0", "text": "ab"},
                    {"id": "da2c4896a671232dea352c5a827be25bba858424718bb7958d7b1141a67b011b:0", "text": ""}]})),
            t("text that is exactly one canonical reference becomes ArtifactReference", &["CLS-1", "ART-2"],
                json!({"op": "entry", "messages": [{"role": "user", "text": reference_x}]}),
                json!({"entries": [{"kind": "ArtifactReference", "artifactReferenceDigest": dx}]})),
            t("the override is the third voice: Summary for a user message", &["CLS-1"],
                json!({"op": "entry", "messages": [{"role": "user", "text": "a"}, {"role": "user", "text": "b"}], "overrides": {"1": "Summary"}}),
                json!({"entries": [{"kind": "ConversationalMessage"}, {"kind": "Summary"}]})),
            t("the override wins over reference detection (step 3 before step 4)", &["CLS-1", "DEP-20"],
                json!({"op": "entry", "messages": [{"role": "user", "text": reference_x}], "overrides": {"0": "OptionalContext"}}),
                json!({"entries": [{"kind": "OptionalContext", "artifactReferenceDigests": []}]})).flags(&["Deviation"]),
            t("role system is never overridden", &["CLS-1"],
                json!({"op": "entry", "messages": [{"role": "system", "text": "s"}], "overrides": {"0": "Summary"}}),
                json!({"entries": [{"kind": "SystemInstruction"}]})),
            t("tool content is never overridden", &["CLS-1"],
                json!({"op": "entry", "messages": [{"role": "assistant", "parts": [{"call": {"callId": "c", "name": "f"}}]}], "overrides": {"0": "Summary"}}),
                json!({"entries": [{"kind": "ToolExchange"}]})),
            t("override SystemInstruction is an invalid operation", &["CLS-1", "ERR-1"],
                json!({"op": "entry", "messages": [{"role": "user", "text": "a"}], "overrides": {"0": "SystemInstruction"}}),
                err("InvalidOperation")),
            t("override ToolExchange is an invalid operation", &["CLS-1"],
                json!({"op": "entry", "messages": [{"role": "user", "text": "a"}], "overrides": {"0": "ToolExchange"}}),
                err("InvalidOperation")),
            t("override RecoverableContextSegment is an invalid operation", &["CLS-1"],
                json!({"op": "entry", "messages": [{"role": "user", "text": "a"}], "overrides": {"0": "RecoverableContextSegment"}}),
                err("InvalidOperation")),
            t("override ArtifactReference on plain text fails entry construction (ENT-5 applies)", &["CLS-1", "ENT-5"],
                json!({"op": "entry", "messages": [{"role": "user", "text": "not a reference"}], "overrides": {"0": "ArtifactReference"}}),
                err("InvalidArgument")),
            t("a result message with role assistant fails construction", &["CLS-1", "ENT-5"],
                json!({"op": "entry", "messages": [{"role": "assistant", "parts": [{"result": {"callId": "c", "value": "v"}}]}]}),
                err("InvalidArgument")),
        ],
    );
    let augment = group(
        "snapshot integration: the augmentation helper (SPEC SNAP-4)",
        None,
        vec![
            t(
                "a durable segment is appended at the end",
                &["SNAP-4", "PRE-2"],
                json!({"op": "entry", "entries": [artref("a", "x"), conv("u", "hi")], "augment": {"id": "b", "segment": {"body": "x"}}}),
                json!({"entries": [{"id": "a"}, {"id": "u"}, {"id": "b", "kind": "RecoverableContextSegment", "text": "x", "artifactReferenceDigests": [dx]}]}),
            ),
            t(
                "durable through a tool result reference",
                &["SNAP-4", "PRE-2", "DEP-8"],
                json!({"op": "entry", "entries": [call("c", &["k"]), result_ref("r", "k", "x")], "augment": {"id": "b", "segment": {"body": "x"}}}),
                json!({"entries": [{"id": "c"}, {"id": "r"}, {"id": "b"}]}),
            ),
            t(
                "an id already in the baseline is refused",
                &["SNAP-4"],
                json!({"op": "entry", "entries": [artref("a", "x")], "augment": {"id": "a", "segment": {"body": "x"}}}),
                err_entry("InvalidArgument", "a"),
            ),
            t(
                "a segment whose digest is not durable is refused",
                &["SNAP-4"],
                json!({"op": "entry", "entries": [artref("a", "x")], "augment": {"id": "b", "segment": {"body": "y"}}}),
                err("InvalidArgument"),
            ),
            t(
                "a recoverable segment never makes itself durable",
                &["SNAP-4", "PRE-2"],
                json!({"op": "entry", "entries": [body("r1", "x")], "augment": {"id": "r2", "segment": {"body": "x"}}}),
                err("InvalidArgument"),
            ),
        ],
    );
    vec![generic, factory, content, cls, augment]
}

/// Artifact digests and references.
pub fn artifacts() -> Vec<HandGroup> {
    let good = format!("artifact://sha256/{SHA_ABC}");
    let art = |text: &str| one(entry("a", "ArtifactReference", text));
    let bad = |comment: &str, text: String| {
        t(
            comment,
            &["ART-2", "ENT-5"],
            art(&text),
            err_entry("InvalidArgument", "a"),
        )
    };
    vec![
        group(
            "digests and canonical references (SPEC ART-1, ART-2)",
            None,
            vec![
                t("the known SHA-256 of \"abc\"", &["ART-1", "ART-2", "ENT-5"], art(&good),
                    ok_entry("a", "ArtifactReference", "user", &good, &[SHA_ABC])),
                t("the known SHA-256 of the empty string", &["ART-1"], one(artref("a", "")),
                    ok_entry("a", "ArtifactReference", "user", &format!("artifact://sha256/{SHA_EMPTY}"), &[SHA_EMPTY])),
                t("digest of non-ASCII content hashes its UTF-8 bytes", &["ART-1"], one(body("b", "é")),
                    json!({"entries": [{"artifactReferenceDigest": "4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c"}]})),
                t("a reference split over two text parts is still one reference (text concatenation)", &["ART-2", "ENT-3"],
                    one(json!({"id": "a", "kind": "ArtifactReference", "parts": [{"text": "artifact://sha256/"}, {"text": SHA_ABC}]})),
                    ok_entry("a", "ArtifactReference", "user", &good, &[SHA_ABC])),
                bad("uppercase hex digits are refused", format!("artifact://sha256/{}", SHA_ABC.to_uppercase())),
                bad("one uppercase hex digit is refused", format!("artifact://sha256/B{}", &SHA_ABC[1..])),
                bad("63 hex digits are refused", format!("artifact://sha256/{}", &SHA_ABC[1..])),
                bad("65 hex digits are refused", format!("artifact://sha256/{SHA_ABC}0")),
                bad("a non-hex digit is refused", format!("artifact://sha256/g{}", &SHA_ABC[1..])),
                bad("a leading space is refused (no trimming)", format!(" {good}")),
                bad("a trailing newline is refused (no trimming)", format!("{good}\n")),
                bad("another algorithm prefix is refused", format!("artifact://sha512/{SHA_ABC}")),
                bad("an uppercase scheme is refused", format!("ARTIFACT://sha256/{SHA_ABC}")),
                bad("two references in one text are refused", format!("{good}{good}")),
                bad("empty text is refused", String::new()),
                bad("the digest alone is not a reference", SHA_ABC.to_owned()),
            ],
        ),
        group(
            "reference size (SPEC EST-3, ART-2)",
            Some(policy_utf8(1000, 10, 1, 1)),
            vec![t("an ArtifactReference entry measures 82 UTF-8 bytes", &["EST-3", "ART-2"],
                json!({"op": "evaluate", "entries": [artref("a", "anything")]}),
                json!({"evaluation": {"entrySizes": [82], "estimatedSize": 82}}))],
        ),
    ]
}

fn policy_case(p: Json) -> Json {
    json!({"op": "policy", "policy": p})
}

fn pol(h: i32, m: i32, r: i32, a: i32, label: Json, v: i32, est: Json) -> Json {
    let mut p = json!({"hardLimit": h, "triggerMargin": m, "recentMessageRetentionCount": r,
        "maximumCompactionAttempts": a, "preservationVersion": v});
    if !label.is_null() {
        p["preservationLabel"] = label;
    }
    if !est.is_null() {
        p["estimator"] = est;
    }
    policy_case(p)
}

/// Policy construction and validation order.
pub fn policy() -> Vec<HandGroup> {
    let u = || json!({"kind": "utf8"});
    let l = || json!("label");
    let oor = |f: &str| err_field("OutOfRange", f);
    vec![group(
        "policy fields and validation order (SPEC POL-1, POL-2)",
        None,
        vec![
            t(
                "a valid policy: threshold = hard limit - margin",
                &["POL-1"],
                pol(100, 10, 2, 3, l(), 1, u()),
                json!({"policy": {"hardLimit": 100, "triggerMargin": 10, "triggerThreshold": 90, "recentMessageRetentionCount": 2,
                        "maximumCompactionAttempts": 3, "preservationLabel": "label", "preservationVersion": 1, "measurementUnit": "Utf8Bytes"}}),
            ),
            t(
                "margin = hard limit - 1 gives threshold 1",
                &["POL-1", "POL-2"],
                pol(5, 4, 1, 1, l(), 1, u()),
                json!({"policy": {"triggerThreshold": 1}}),
            )
            .flags(&["Boundary"]),
            t(
                "hard limit i32::MAX",
                &["POL-1"],
                pol(i32::MAX, 1, 1, 1, l(), 1, u()),
                json!({"policy": {"triggerThreshold": 2147483646}}),
            )
            .flags(&["Boundary"]),
            t(
                "hard limit 0",
                &["POL-2", "ERR-1"],
                pol(0, 1, 1, 1, l(), 1, u()),
                oor("HardLimit"),
            )
            .flags(&["Boundary"]),
            t(
                "hard limit negative",
                &["POL-2"],
                pol(-1, 1, 1, 1, l(), 1, u()),
                oor("HardLimit"),
            ),
            t(
                "hard limit i32::MIN",
                &["POL-2"],
                pol(i32::MIN, 1, 1, 1, l(), 1, u()),
                oor("HardLimit"),
            ),
            t(
                "margin 0",
                &["POL-2"],
                pol(10, 0, 1, 1, l(), 1, u()),
                oor("TriggerMargin"),
            )
            .flags(&["Boundary"]),
            t(
                "margin negative",
                &["POL-2"],
                pol(10, -3, 1, 1, l(), 1, u()),
                oor("TriggerMargin"),
            ),
            t(
                "margin equal to the hard limit",
                &["POL-2"],
                pol(10, 10, 1, 1, l(), 1, u()),
                oor("TriggerMargin"),
            )
            .flags(&["Boundary"]),
            t(
                "margin above the hard limit",
                &["POL-2"],
                pol(10, 11, 1, 1, l(), 1, u()),
                oor("TriggerMargin"),
            ),
            t(
                "retention 0",
                &["POL-2"],
                pol(10, 1, 0, 1, l(), 1, u()),
                oor("RecentMessageRetentionCount"),
            ),
            t(
                "retention negative",
                &["POL-2"],
                pol(10, 1, -1, 1, l(), 1, u()),
                oor("RecentMessageRetentionCount"),
            ),
            t(
                "attempts 0",
                &["POL-2"],
                pol(10, 1, 1, 0, l(), 1, u()),
                oor("MaximumCompactionAttempts"),
            ),
            t(
                "attempts negative",
                &["POL-2"],
                pol(10, 1, 1, -7, l(), 1, u()),
                oor("MaximumCompactionAttempts"),
            ),
            t(
                "label absent is a null argument",
                &["POL-2", "ERR-1"],
                pol(10, 1, 1, 1, Json::Null, 1, u()),
                err_field("NullArgument", "PreservationLabel"),
            ),
            t(
                "label explicitly null is a null argument",
                &["POL-2"],
                policy_case(
                    json!({"hardLimit": 10, "triggerMargin": 1, "recentMessageRetentionCount": 1, "maximumCompactionAttempts": 1,
                        "preservationLabel": null, "preservationVersion": 1, "estimator": {"kind": "utf8"}}),
                ),
                err_field("NullArgument", "PreservationLabel"),
            ),
            t(
                "label empty is an argument error",
                &["POL-2"],
                pol(10, 1, 1, 1, json!(""), 1, u()),
                err_field("InvalidArgument", "PreservationLabel"),
            ),
            t(
                "label whitespace-only is an argument error",
                &["POL-2"],
                pol(10, 1, 1, 1, json!(" \t "), 1, u()),
                err_field("InvalidArgument", "PreservationLabel"),
            ),
            t(
                "version 0",
                &["POL-2"],
                pol(10, 1, 1, 1, l(), 0, u()),
                oor("PreservationVersion"),
            ),
            t(
                "version negative",
                &["POL-2"],
                pol(10, 1, 1, 1, l(), -1, u()),
                oor("PreservationVersion"),
            ),
            t(
                "estimator absent is a null argument",
                &["POL-2"],
                pol(10, 1, 1, 1, l(), 1, Json::Null),
                err_field("NullArgument", "SizeEstimator"),
            ),
            t(
                "order: hard limit before margin",
                &["POL-2"],
                pol(0, 0, 0, 0, Json::Null, 0, Json::Null),
                oor("HardLimit"),
            ),
            t(
                "order: margin before retention",
                &["POL-2"],
                pol(10, 10, 0, 0, Json::Null, 0, Json::Null),
                oor("TriggerMargin"),
            ),
            t(
                "order: retention before attempts",
                &["POL-2"],
                pol(10, 1, 0, 0, Json::Null, 0, Json::Null),
                oor("RecentMessageRetentionCount"),
            ),
            t(
                "order: attempts before label",
                &["POL-2"],
                pol(10, 1, 1, 0, Json::Null, 0, Json::Null),
                oor("MaximumCompactionAttempts"),
            ),
            t(
                "order: label before version",
                &["POL-2"],
                pol(10, 1, 1, 1, Json::Null, 0, Json::Null),
                err_field("NullArgument", "PreservationLabel"),
            ),
            t(
                "order: blank label before version",
                &["POL-2"],
                pol(10, 1, 1, 1, json!(" "), 0, Json::Null),
                err_field("InvalidArgument", "PreservationLabel"),
            ),
            t(
                "order: version before estimator",
                &["POL-2"],
                pol(10, 1, 1, 1, l(), 0, Json::Null),
                oor("PreservationVersion"),
            ),
            t(
                "utf8-text estimator declares Utf8Bytes",
                &["POL-1", "EST-1", "EST-4"],
                pol(10, 1, 1, 1, l(), 1, json!({"kind": "utf8-text"})),
                json!({"policy": {"measurementUnit": "Utf8Bytes"}}),
            ),
            t(
                "constant estimator declares HostDefinedUnits",
                &["POL-1", "EST-1", "EST-5"],
                pol(10, 1, 1, 1, l(), 1, json!({"kind": "constant", "size": 1})),
                json!({"policy": {"measurementUnit": "HostDefinedUnits"}}),
            ),
            t(
                "table estimator declares HostDefinedUnits",
                &["POL-1", "EST-5"],
                pol(
                    10,
                    1,
                    1,
                    1,
                    l(),
                    1,
                    json!({"kind": "table", "sizes": {}, "default": 0}),
                ),
                json!({"policy": {"measurementUnit": "HostDefinedUnits"}}),
            ),
            t(
                "a non-ASCII label is kept",
                &["POL-1"],
                pol(10, 1, 1, 1, json!("ラベル"), 1, u()),
                json!({"policy": {"preservationLabel": "ラベル"}}),
            ),
        ],
    )]
}

fn ev(entries: Vec<Json>) -> Json {
    json!({"op": "evaluate", "entries": entries})
}

fn sizes(s: &[i32], total: i32) -> Json {
    json!({"evaluation": {"entrySizes": s, "estimatedSize": total}})
}

fn rv(v: Json) -> Json {
    result_value("r", "c1", v)
}

/// Estimators and evaluation.
pub fn estimate() -> Vec<HandGroup> {
    let num = |comment: &str, v: Json, text_len: i32| {
        // result part: call id "c1" (2 bytes) + the rendered number
        t(
            comment,
            &["EST-2"],
            ev(vec![rv(v)]),
            sizes(&[2 + text_len], 2 + text_len),
        )
        .flags(&["NumberRendering"])
    };
    let utf8 = group(
        "UTF-8 context estimator (SPEC EST-1, EST-2, EST-3)",
        Some(policy_utf8(1000, 100, 1, 1)),
        vec![
            t(
                "text bytes: ASCII",
                &["EST-1", "EST-2"],
                ev(vec![conv("u", "hello")]),
                sizes(&[5], 5),
            ),
            t(
                "text bytes: two-byte and four-byte characters",
                &["EST-2"],
                ev(vec![conv("u", "é😀")]),
                sizes(&[6], 6),
            ),
            t(
                "role, author and separators are not counted",
                &["EST-2"],
                ev(vec![
                    json!({"id": "u", "kind": "ConversationalMessage", "role": "a-long-role", "author": "an author", "parts": [{"text": "ab"}, {"text": "c"}]}),
                ]),
                sizes(&[3], 3),
            ),
            t(
                "empty text and no parts measure 0",
                &["EST-2"],
                ev(vec![
                    conv("u", ""),
                    json!({"id": "v", "kind": "Summary", "parts": []}),
                ]),
                sizes(&[0, 0], 0),
            ),
            t(
                "call: id + name, absent arguments 0",
                &["EST-2"],
                ev(vec![
                    json!({"id": "c", "kind": "ToolExchange", "parts": [{"call": {"callId": "c1", "name": "fn"}}]}),
                ]),
                sizes(&[4], 4),
            ),
            t(
                "call: empty argument map adds 0",
                &["EST-2"],
                ev(vec![
                    json!({"id": "c", "kind": "ToolExchange", "parts": [{"call": {"callId": "c1", "name": "fn", "arguments": {}}}]}),
                ]),
                sizes(&[4], 4),
            ),
            t(
                "call: arguments add key bytes + value sizes",
                &["EST-2"],
                ev(vec![
                    json!({"id": "c", "kind": "ToolExchange", "parts": [{"call": {"callId": "c1", "name": "fn", "arguments": {"ab": "xyz", "k": 7}}}]}),
                ]),
                sizes(&[4 + 2 + 3 + 1 + 1], 11),
            ),
            t(
                "text parts and call parts add up",
                &["EST-2"],
                ev(vec![
                    json!({"id": "c", "kind": "ToolExchange", "parts": [{"text": "go"}, {"call": {"callId": "a", "name": "b"}}, {"call": {"callId": "cc", "name": "d"}}]}),
                ]),
                sizes(&[2 + 2 + 3], 7),
            ),
            t(
                "result: id + string value bytes",
                &["EST-2"],
                ev(vec![rv(json!("ok"))]),
                sizes(&[4], 4),
            ),
            t(
                "result: null measures 0",
                &["EST-2"],
                ev(vec![rv(Json::Null)]),
                sizes(&[2], 2),
            ),
            t(
                "result: true measures 4, false 5",
                &["EST-2"],
                ev(vec![
                    rv(json!(true)),
                    result_value("r2", "c1", json!({"bool": false})),
                ]),
                sizes(&[6, 7], 13),
            ),
            num("i32 1 renders as 1", json!({"i32": 1}), 1),
            num("i32 -12 renders as -12", json!(-12), 3),
            num("i16 -32768", json!({"i16": -32768}), 6),
            num("u8 255", json!({"u8": 255}), 3),
            num("u32 4294967295", json!({"u32": 4294967295u32}), 10),
            num("i64 max", json!({"i64": 9223372036854775807i64}), 19),
            num("i64 min", json!({"i64": -9223372036854775807i64 - 1}), 20),
            num("u64 max", json!({"u64": 18446744073709551615u64}), 20),
            num("f64 0.1 renders as 0.1", json!(0.1), 3),
            num("f64 1.5", json!({"f64": 1.5}), 3),
            num("f64 123.456", json!(123.456), 7),
            num("f64 1e21 renders as 1E+21", json!({"f64": 1e21}), 5),
            num("f64 1e-7 renders as 1E-07", json!({"f64": 1e-7}), 5),
            num("f64 0.0001 stays positional", json!({"f64": 0.0001}), 6),
            num("f64 1e-5 renders as 1E-05", json!({"f64": 1e-5}), 5),
            num(
                "f64 1e16 renders as 10000000000000000",
                json!({"f64": 1e16}),
                17,
            ),
            num("f64 1e17 renders as 1E+17", json!({"f64": 1e17}), 5),
            num(
                "f64 1.2345678901234568E+20",
                json!({"f64": 1.2345678901234568e20}),
                22,
            ),
            num("f64 -2.5E-10", json!({"f64": -2.5e-10}), 8),
            num("f64 integral 3.0 renders as 3", json!({"f64": 3.0}), 1),
            num("f64 NaN", json!({"f64": "NaN"}), 3),
            num("f64 Infinity", json!({"f64": "Infinity"}), 8),
            num("f64 -Infinity", json!({"f64": "-Infinity"}), 9),
            num("f64 negative zero renders as -0", json!({"f64": "-0"}), 2),
            num(
                "f32 0.1 renders as 0.1 (shortest for f32)",
                json!({"f32": 0.1}),
                3,
            ),
            num("f32 1e9 renders as 1E+09", json!({"f32": 1e9}), 5),
            num("f32 16777216 stays positional", json!({"f32": 16777216}), 8),
            num(
                "decimal keeps its scale: 1.50",
                json!({"decimal": "1.50"}),
                4,
            ),
            num("decimal -0.001", json!({"decimal": "-0.001"}), 6),
            num("decimal integer 42", json!({"decimal": "42"}), 2),
            t(
                "raw JSON measures its exact raw text",
                &["EST-2", "ENT-4"],
                ev(vec![rv(json!({"raw": "{\"a\": [1, 2]}"}))]),
                sizes(&[2 + 13], 15),
            ),
            t(
                "raw JSON string measures its quotes too",
                &["EST-2"],
                ev(vec![rv(json!({"raw": "\"x\""}))]),
                sizes(&[5], 5),
            ),
            t(
                "map: sum of key bytes + value sizes",
                &["EST-2"],
                ev(vec![rv(
                    json!({"map": {"ab": "c", "d": {"map": {"e": true}}}}),
                )]),
                sizes(&[2 + 3 + 1 + 1 + 4], 11),
            ),
            t(
                "list: sum of item sizes: c1 (2) + a (1) + bc (2) + null (0) + 1 (1) + 22 (2)",
                &["EST-2"],
                ev(vec![rv(json!(["a", "bc", null, [1, 22]]))]),
                sizes(&[8], 8),
            ),
            t(
                "empty map and list measure 0",
                &["EST-2"],
                ev(vec![
                    rv(json!({"map": {}})),
                    result_value("r2", "c1", json!([])),
                ]),
                sizes(&[2, 2], 4),
            ),
            t(
                "an ArtifactReference entry measures 82",
                &["EST-3"],
                ev(vec![artref("a", "x")]),
                sizes(&[82], 82),
            ),
            t(
                "a recoverable segment measures its body's bytes",
                &["EST-3"],
                ev(vec![body("b", "héllo")]),
                sizes(&[6], 6),
            ),
            t(
                "the list size is the sum of entry sizes",
                &["EST-2", "POL-3"],
                ev(vec![conv("a", "12"), conv("b", "345"), artref("c", "x")]),
                sizes(&[2, 3, 82], 87),
            ),
        ],
    );
    let text_only = group(
        "UTF-8 text-only estimator (SPEC EST-4)",
        Some(
            json!({"hardLimit": 1000, "triggerMargin": 100, "recentMessageRetentionCount": 1, "maximumCompactionAttempts": 1,
            "preservationLabel": "vectors", "preservationVersion": 1, "estimator": {"kind": "utf8-text"}}),
        ),
        vec![
            t(
                "call and result parts measure 0",
                &["EST-4"],
                ev(vec![call("c", &["c1"]), result("r", &["c1"])]),
                sizes(&[0, 0], 0),
            ),
            t(
                "only the text parts of a tool message count",
                &["EST-4"],
                ev(vec![
                    json!({"id": "c", "kind": "ToolExchange", "parts": [{"text": "abc"}, {"call": {"callId": "c1", "name": "f"}}]}),
                ]),
                sizes(&[3], 3),
            ),
            t(
                "text bytes as with the context estimator",
                &["EST-4"],
                ev(vec![conv("u", "é"), artref("a", "x")]),
                sizes(&[2, 82], 84),
            ),
        ],
    );
    let host = group(
        "host-defined estimators (SPEC EST-5)",
        None,
        vec![
            t(
                "constant 7 over three entries",
                &["EST-5", "EST-1"],
                json!({"op": "evaluate", "policy": policy_const(100, 10, 1, 1, 7), "entries": [conv("a", "x"), conv("b", "y"), opt("c", "z")]}),
                json!({"evaluation": {"measurementUnit": "HostDefinedUnits", "entrySizes": [7, 7, 7], "estimatedSize": 21, "triggered": false}}),
            ),
            t(
                "table sizes with a default",
                &["EST-5"],
                json!({"op": "evaluate", "policy": policy_table(100, 10, 1, 1, &[("a", 40), ("c", 3)], 5), "entries": [conv("a", "x"), conv("b", "y"), opt("c", "z")]}),
                json!({"evaluation": {"entrySizes": [40, 5, 3], "estimatedSize": 48}}),
            ),
        ],
    );
    let p = |size: i32| policy_const(100, 10, 1, 1, size);
    let pt = |sizes_: &[(&str, i32)]| policy_table(100, 10, 1, 1, sizes_, 0);
    let evaluate = group(
        "evaluate: trigger, negative estimates, checked sum, cancellation (SPEC POL-3, POL-4)",
        None,
        vec![
            t("exactly at the threshold triggers", &["POL-4", "POL-3", "DEP-20"],
                json!({"op": "evaluate", "policy": pt(&[("a", 90)]), "entries": [conv("a", "x")]}),
                json!({"evaluation": {"estimatedSize": 90, "hardLimit": 100, "triggerMargin": 10, "triggerThreshold": 90, "triggered": true}})).flags(&["Boundary", "Deviation"]),
            t("one below the threshold does not trigger", &["POL-4"],
                json!({"op": "evaluate", "policy": pt(&[("a", 89)]), "entries": [conv("a", "x")]}),
                json!({"evaluation": {"estimatedSize": 89, "triggered": false}})).flags(&["Boundary"]),
            t("above the hard limit triggers", &["POL-4"],
                json!({"op": "evaluate", "policy": pt(&[("a", 500)]), "entries": [conv("a", "x")]}),
                json!({"evaluation": {"estimatedSize": 500, "triggered": true}})),
            t("the empty list measures 0", &["POL-3"], json!({"op": "evaluate", "policy": p(5), "entries": []}),
                json!({"evaluation": {"entrySizes": [], "estimatedSize": 0, "triggered": false}})),
            t("a negative estimate is an invalid operation naming the entry", &["POL-3", "ERR-1"],
                json!({"op": "evaluate", "policy": pt(&[("b", -1)]), "entries": [conv("a", "x"), conv("b", "y")]}),
                err_entry("InvalidOperation", "b")),
            t("a negative constant fails at the first entry", &["POL-3"],
                json!({"op": "evaluate", "policy": p(-5), "entries": [conv("a", "x"), conv("b", "y")]}),
                err_entry("InvalidOperation", "a")),
            t("a negative estimate is not clamped even if the sum would be positive", &["POL-3"],
                json!({"op": "evaluate", "policy": pt(&[("a", 50), ("b", -1)]), "entries": [conv("a", "x"), conv("b", "y")]}),
                err_entry("InvalidOperation", "b")),
            t("sum reaching i32::MAX is fine", &["POL-3"],
                json!({"op": "evaluate", "policy": pt(&[("a", 2147483647)]), "entries": [conv("a", "x"), conv("b", "y")]}),
                json!({"evaluation": {"estimatedSize": 2147483647, "triggered": true}})).flags(&["Boundary"]),
            t("sum exceeding i32::MAX is an overflow error", &["POL-3", "ERR-1"],
                json!({"op": "evaluate", "policy": pt(&[("a", 2147483647), ("b", 1)]), "entries": [conv("a", "x"), conv("b", "y")]}),
                err("Overflow")).flags(&["Boundary"]),
            t("2^30 twice overflows", &["POL-3"],
                json!({"op": "evaluate", "policy": p(1073741824), "entries": [conv("a", "x"), conv("b", "y")]}),
                err("Overflow")).flags(&["Boundary"]),
            t("(2^30 - 1) twice does not", &["POL-3"],
                json!({"op": "evaluate", "policy": p(1073741823), "entries": [conv("a", "x"), conv("b", "y")]}),
                json!({"evaluation": {"estimatedSize": 2147483646}})).flags(&["Boundary"]),
            t("cancellation before evaluation", &["POL-3", "ASM-16", "ERR-1"],
                json!({"op": "evaluate", "policy": p(1), "entries": [conv("a", "x")], "cancel": "before"}),
                err("Cancelled")).flags(&["Cancellation"]),
            t("cancellation wins over a negative estimate (checked first)", &["POL-3", "ASM-16"],
                json!({"op": "evaluate", "policy": p(-1), "entries": [conv("a", "x")], "cancel": "before"}),
                err("Cancelled")).flags(&["Cancellation"]),
            t("duplicate ids are not evaluate's concern", &["POL-3"],
                json!({"op": "evaluate", "policy": p(2), "entries": [conv("a", "x"), conv("a", "y")]}),
                json!({"evaluation": {"estimatedSize": 4}})),
        ],
    );
    vec![utf8, text_only, host, evaluate, non_ascii()]
}

/// Non-ASCII text in every place the UTF-8 context estimator measures (SPEC EST-2): each size is
/// the UTF-8 byte count, which differs from the character (and UTF-16 unit) count: 2-byte
/// (`é`), 3-byte (`漢`), astral 4-byte (`😀`, `𝄞`: one character, two UTF-16 units) and
/// combining marks (`e` + U+0301: two characters, one glyph).
fn non_ascii() -> HandGroup {
    let tool = |part: Json| json!({"id": "c", "kind": "ToolExchange", "parts": [part]});
    group(
        "UTF-8 bytes, not characters, in every measured string (SPEC EST-2)",
        Some(policy_utf8(1000, 100, 1, 1)),
        vec![
            t(
                "text: combining mark and astral character: e (1) + U+0301 (2) + 𝄞 (4)",
                &["EST-2"],
                ev(vec![conv("u", "e\u{301}𝄞")]),
                sizes(&[7], 7),
            ),
            t(
                "entry ids are not measured, whatever their script",
                &["EST-2", "ENT-2"],
                ev(vec![conv("идентификатор", "ab")]),
                sizes(&[2], 2),
            ),
            t(
                "call id: 呼 (3) + 1 (1), name f (1)",
                &["EST-2"],
                ev(vec![tool(json!({"call": {"callId": "呼1", "name": "f"}}))]),
                sizes(&[5], 5),
            ),
            t(
                "function name: c1 (2) + outil_é (8)",
                &["EST-2"],
                ev(vec![tool(json!({"call": {"callId": "c1", "name": "outil_é"}}))]),
                sizes(&[10], 10),
            ),
            t(
                "argument key and string value: c1 f (3) + clé (4) + 日本 (6)",
                &["EST-2"],
                ev(vec![tool(
                    json!({"call": {"callId": "c1", "name": "f", "arguments": {"clé": "日本"}}}),
                )]),
                sizes(&[13], 13),
            ),
            t(
                "result call id: 呼1 (4) + x (1)",
                &["EST-2"],
                ev(vec![result_value("r", "呼1", json!("x"))]),
                sizes(&[5], 5),
            ),
            t(
                "result string value: c1 (2) + 😀 (4) + é (2)",
                &["EST-2"],
                ev(vec![rv(json!("😀é"))]),
                sizes(&[8], 8),
            ),
            t(
                "result string value of combining marks only: c1 (2) + a (1) + U+0301 (2) + U+0302 (2)",
                &["EST-2"],
                ev(vec![rv(json!("a\u{301}\u{302}"))]),
                sizes(&[7], 7),
            ),
            t(
                "raw JSON string: c1 (2) + quotes (2) + é (2) + 𝄞 (4)",
                &["EST-2", "ENT-4"],
                ev(vec![rv(json!({"raw": "\"é𝄞\""}))]),
                sizes(&[10], 10),
            ),
            t(
                "map key and value: c1 (2) + ключ (8) + ü (2)",
                &["EST-2"],
                ev(vec![rv(json!({"map": {"ключ": "ü"}}))]),
                sizes(&[12], 12),
            ),
            t(
                "list of strings: c1 (2) + ü (2) + 漢字 (6)",
                &["EST-2"],
                ev(vec![rv(json!(["ü", "漢字"]))]),
                sizes(&[10], 10),
            ),
            t(
                "bytes decide the trigger: 30 characters of é are 60 bytes, at the threshold 60",
                &["EST-2", "POL-4"],
                json!({"op": "evaluate", "policy": policy_utf8(100, 40, 1, 1), "entries": [conv("u", &"é".repeat(30))]}),
                json!({"evaluation": {"entrySizes": [60], "estimatedSize": 60, "triggerThreshold": 60, "triggered": true}}),
            )
            .flags(&["Boundary"]),
            t(
                "text-only estimator: bytes of the text, non-ASCII too: 漢 (3) + 😀 (4)",
                &["EST-4"],
                json!({"op": "evaluate", "policy": {"hardLimit": 1000, "triggerMargin": 100, "recentMessageRetentionCount": 1,
                    "maximumCompactionAttempts": 1, "preservationLabel": "vectors", "preservationVersion": 1,
                    "estimator": {"kind": "utf8-text"}}, "entries": [conv("u", "漢😀")]}),
                sizes(&[7], 7),
            ),
        ],
    )
}
