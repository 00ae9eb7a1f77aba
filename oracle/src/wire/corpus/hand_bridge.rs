//! Hand-written vectors: the upstream reducer bridge (BRG-1 .. BRG-3). Minted ids were computed
//! with an independent SHA-256 of `"{k}:{role}:{text}"`.

use serde_json::{json, Value as Json};

use super::dsl::*;
use super::hand_assemble::{asm, p};
use super::{group, t, HandGroup};

fn up(policy: Json, entries: Vec<Json>, steps: Vec<Json>) -> Json {
    json!({"op": "assemble", "policy": policy, "entries": entries, "reducer": {"kind": "upstream", "steps": steps}})
}

fn ret(messages: Vec<Json>) -> Json {
    json!({"return": messages})
}

fn m(role: &str, text: &str) -> Json {
    json!({"role": role, "text": text})
}

fn a() -> Vec<Json> {
    vec![sys("s", "rules"), conv("u1", "first"), conv("u2", "second")]
}

/// s 10, u1 50, u2 30 = 90.
fn f() -> Json {
    p(3, &[("u1", 50), ("u2", 30)])
}

/// The bridge groups.
pub fn bridge() -> Vec<HandGroup> {
    vec![group(
        "upstream reducer bridge (SPEC BRG-1 .. BRG-3)",
        None,
        vec![
            t("returned messages matching request entries reuse them verbatim", &["BRG-1", "BRG-2", "ENT-7"],
                up(f(), a(), vec![ret(vec![m("system", "rules"), m("user", "second")])]),
                asm("Reduced", Some(&["s", "u2"]), 90, 40, 1, "SRSS", &["s", "u2"])).flags(&["Bridge"]),
            t("the message-counting reducer keeps system messages and the last N others", &["BRG-1", "BRG-2"],
                json!({"op": "assemble", "policy": f(), "entries": a(), "reducer": {"kind": "messageCounting", "targetCount": 1}}),
                asm("Reduced", Some(&["s", "u2"]), 90, 40, 1, "SRSS", &["s", "u2"])).flags(&["Bridge"]),
            t("an unmatched text message becomes a Summary with a minted id", &["BRG-3", "DEP-10"],
                up(f(), a(), vec![ret(vec![m("system", "rules"), m("assistant", "summary"), m("user", "second")])]),
                json!({"assembly": {"outcome": "Reduced", "finalEntryIds": ["s", "upstream-summary-0-d906b746cb1c8ee090bf7872e4527cb7d08f32fb1ec622f2da0c9624e8d3f1a8", "u2"],
                    "finalEstimatedSize": 50}})).flags(&["Bridge"]),
            t("k counts new messages only; h hashes k, role and text", &["BRG-3"],
                up(f(), a(), vec![ret(vec![m("system", "rules"), m("assistant", "summary"), m("assistant", "second"), m("user", "second")])]),
                json!({"assembly": {"finalEntryIds": ["s", "upstream-summary-0-d906b746cb1c8ee090bf7872e4527cb7d08f32fb1ec622f2da0c9624e8d3f1a8",
                    "upstream-summary-1-97286e59527c42dc54ebe4c64333a6b6f60bc00c307cb7eedd6d0fc1a56846d1", "u2"]}})).flags(&["Bridge"]),
            t("a text-only unmatched message with role tool is still a Summary", &["BRG-3"],
                up(f(), a(), vec![ret(vec![m("system", "rules"), m("tool", "note"), m("user", "second")])]),
                json!({"assembly": {"finalEntryIds": ["s", "upstream-summary-0-0770cc40cb7120bdbe65809fcaaaa43dfeb0e35ae75aaa37b7dc79620b35fe77", "u2"]}})).flags(&["Bridge"]),
            t("an unmatched message with no parts mints from the empty text", &["BRG-3"],
                up(f(), a(), vec![ret(vec![m("system", "rules"), json!({"role": "assistant", "parts": []}), m("user", "second")])]),
                json!({"assembly": {"finalEntryIds": ["s", "upstream-summary-0-13c5ec09e288e0df4dca2d13ba2ce75504c385e72e229d8e57bcca1e9bbc2a27", "u2"]}})).flags(&["Bridge"]),
            t("a changed author does not match: the message becomes a Summary and the original is dropped", &["BRG-2", "BRG-3"],
                up(f(), a(), vec![ret(vec![m("system", "rules"), json!({"role": "user", "author": "x", "text": "other"})])]),
                json!({"assembly": {"outcome": "WithinLimit", "finalEntryIds": ["s", "u1", "u2"], "attemptCount": 1}})).flags(&["Bridge"]),
            t("identical request messages match first-unmatched first", &["BRG-2"],
                up(p(3, &[("u1", 30), ("u2", 30), ("u3", 20)]), vec![sys("s", "rules"), conv("u1", "same"), conv("u2", "same"), conv("u3", "x")],
                    vec![ret(vec![m("system", "rules"), m("user", "same"), m("user", "x")])]),
                asm("Reduced", Some(&["s", "u1", "u3"]), 90, 60, 1, "SRSS", &["s", "u3"])).flags(&["Bridge"]),
            t("a second identical returned message matches the next unmatched entry", &["BRG-2"],
                up(p(3, &[("u1", 30), ("u2", 30), ("u3", 20)]), vec![sys("s", "rules"), conv("u1", "same"), conv("u2", "same"), conv("u3", "x")],
                    vec![ret(vec![m("system", "rules"), m("user", "same"), m("user", "same"), m("user", "x")])]),
                asm("WithinLimit", Some(&["s", "u1", "u2", "u3"]), 90, 90, 1, "SRSS", &["s", "u3"])).flags(&["Bridge"]),
            t("the returned order is kept: required entries out of order are rejected", &["BRG-2", "VER-1"],
                up(f(), a(), vec![ret(vec![m("user", "second"), m("system", "rules")])]),
                asm("WithinLimit", Some(&["s", "u1", "u2"]), 90, 90, 1, "SRSS", &["s", "u2"])).flags(&["Bridge"]),
            t("bridge equality ignores the informational flag; the original entry is reused", &["BRG-2", "ENT-7"],
                up(p(3, &[("u1", 60)]), vec![sys("s", "rules"), conv("u1", "old"),
                    json!({"id": "c", "kind": "ToolExchange", "parts": [{"call": {"callId": "k", "name": "f", "informationalOnly": true}}]}),
                    result("r", &["k"]), conv("u2", "last")],
                    vec![ret(vec![m("system", "rules"),
                        json!({"role": "assistant", "parts": [{"call": {"callId": "k", "name": "f"}}]}),
                        json!({"role": "tool", "parts": [{"result": {"callId": "k", "value": "ok"}}]}), m("user", "last")])]),
                asm("Reduced", Some(&["s", "c", "r", "u2"]), 100, 40, 1, "SRSS", &["s", "u2"])).flags(&["Bridge"]),
            t("an unmatched message with a call part is a contract error", &["BRG-3", "ERR-1", "DEP-10"],
                up(f(), a(), vec![ret(vec![m("system", "rules"), json!({"role": "assistant", "parts": [{"call": {"callId": "zz", "name": "f"}}]})])]),
                err("ReducerContract")).flags(&["Bridge"]),
            t("an unmatched message with a result part is a contract error", &["BRG-3"],
                up(f(), a(), vec![ret(vec![json!({"role": "tool", "parts": [{"text": "x"}, {"result": {"callId": "zz", "value": 1}}]})])]),
                err("ReducerContract")).flags(&["Bridge"]),
            t("a result with a changed value does not match and is fabricated", &["BRG-2", "BRG-3"],
                up(p(3, &[("u1", 70)]), vec![sys("s", "x"), conv("u1", "a"), call("c", &["k"]), result("r", &["k"]), conv("u2", "b")],
                    vec![ret(vec![m("system", "x"), json!({"role": "assistant", "parts": [{"call": {"callId": "k", "name": "f"}}]}),
                        json!({"role": "tool", "parts": [{"result": {"callId": "k", "value": "changed"}}]}), m("user", "b")])]),
                err("ReducerContract")).flags(&["Bridge"]),
            t("a null result is a contract error", &["BRG-1", "ERR-1", "DEP-10"], up(f(), a(), vec![json!("null")]), err("ReducerContract")).flags(&["Bridge"]),
            t("an upstream failure propagates as a reducer failure", &["BRG-1", "ASM-4"], up(f(), a(), vec![json!({"fail": "upstream down"})]), err("ReducerFailed")).flags(&["Bridge"]),
            t("an echoing upstream reducer is non-progressing", &["BRG-1", "BRG-2"], up(f(), a(), vec![json!("echo")]),
                asm("WithinLimit", Some(&["s", "u1", "u2"]), 90, 90, 1, "SRSS", &["s", "u2"])).flags(&["Bridge"]),
            t("an empty return drops everything and is rejected", &["BRG-2"], up(f(), a(), vec![ret(vec![])]),
                asm("WithinLimit", Some(&["s", "u1", "u2"]), 90, 90, 1, "SRSS", &["s", "u2"])).flags(&["Bridge"]),
            t("the upstream reducer sees the evicted working list", &["BRG-1", "ASM-8"],
                up(p(3, &[("u1", 40), ("u2", 40)]), vec![artref("x", "doc"), body("b", "doc"), conv("u1", "a"), conv("u2", "b")],
                    vec![ret(vec![m("user", &reference("doc")), m("user", "b")])]),
                asm("Reduced", Some(&["x", "u2"]), 100, 50, 1, "SERSS", &["x", "u2"])).flags(&["Bridge"]),
            t("the second call receives the first proposal, minted summary included", &["BRG-1", "BRG-3"],
                up(p(3, &[("u1", 60), ("u2", 45), ("u3", 50)]),
                    vec![sys("s", "rules"), conv("u1", "a"), conv("u2", "b"), conv("u3", "c")],
                    vec![ret(vec![m("system", "rules"), m("assistant", "summary"), m("user", "b"), m("user", "c")]),
                         ret(vec![m("system", "rules"), m("assistant", "summary"), m("user", "c")])]),
                json!({"assembly": {"outcome": "Reduced", "attemptCount": 2,
                    "finalEntryIds": ["s", "upstream-summary-0-d906b746cb1c8ee090bf7872e4527cb7d08f32fb1ec622f2da0c9624e8d3f1a8", "u3"]}})).flags(&["Bridge"]),
        ],
    )]
}
