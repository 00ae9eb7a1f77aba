"""Bad input through the Python boundary: one clear error naming where and what.

Every row is a Python value that is not a valid case. ``hc.run`` must raise
:class:`hc.InvalidCaseError` whose ``path`` is the JSON path of the offending value and whose
``reason`` says what was expected, in the wire format's words (never a Rust type name). Rows that
JSON can express are also fed to the ``hybrid-compaction run`` command as JSON text: its one
stderr line must end with the very same ``path: reason`` (the CLI and the package share the
oracle's strict reader, ``oracle/src/wire/strict/``; the rows mirror
``oracle/tests/oracle/bad_input.rs``). The Python-only rows (NaN, bytes, a set, a non-string key, ...)
have no JSON text; JSON's duplicate-key rows have no dict.
"""

import io
import json
import re
import subprocess
import sys

import pytest

import hybrid_compaction as hc


def policy(**changes):
    p = {"hardLimit": 100, "triggerMargin": 10, "recentMessageRetentionCount": 1,
         "maximumCompactionAttempts": 2, "preservationLabel": "l", "preservationVersion": 1,
         "estimator": {"kind": "utf8"}}
    for k, v in changes.items():
        if v is ...:
            del p[k]
        else:
            p[k] = v
    return p


def policy_case(**changes):
    return {"op": "policy", "policy": policy(**changes)}


def entry(e):
    return {"op": "entry", "entries": [e]}


def parts(ps):
    return entry({"id": "a", "kind": "ToolExchange", "parts": ps})


def value(v):
    return parts([{"result": {"callId": "c", "value": v}}])


def assemble(**extra):
    c = {"op": "assemble", "policy": policy(),
         "entries": [{"id": "u", "kind": "ConversationalMessage", "text": "hi"}]}
    c.update(extra)
    return c


def reducer(r):
    return assemble(reducer=r)


def verify(proposed):
    return {"op": "verify", "policy": policy(),
            "original": [{"id": "u", "kind": "ConversationalMessage", "text": "hi"}],
            "proposed": proposed}


def nested(depth):
    v = []
    for _ in range(depth - 1):
        v = [v]
    return v


# (what, case, path, words that the reason must contain)
JSON_ROWS = [
    ("unknown op", {"op": "compact", "entries": []}, "$.op",
     'unknown operation "compact", expected one of `assemble`'),
    ("missing op", {"entries": []}, "$", "missing member `op`"),
    ("op not a string", {"op": 5}, "$.op", "expected a string, got the number 5"),
    ("unknown member in a case", {"op": "analyze", "entries": [], "extra": True}, "$.extra",
     "unknown member `extra`, expected `entries` or `transcript`"),
    ("policy on analyze", {"op": "analyze", "entries": [], "policy": policy()}, "$.policy",
     "unknown member `policy`"),
    ("unknown policy member", policy_case(hardlimit=5), "$.policy.hardlimit",
     "unknown member `hardlimit`"),
    ("string hard limit", policy_case(hardLimit="100"), "$.policy.hardLimit",
     'expected a signed 32-bit integer (-2147483648 to 2147483647), got the string "100"'),
    ("fractional hard limit", policy_case(hardLimit=1.5), "$.policy.hardLimit",
     "got the number 1.5"),
    ("a float 1.0 is not an integer", policy_case(hardLimit=1.0), "$.policy.hardLimit",
     "got the number 1.0"),
    ("hard limit 2^31", policy_case(hardLimit=2**31), "$.policy.hardLimit",
     "signed 32-bit integer"),
    ("margin -2^31-1", policy_case(triggerMargin=-(2**31) - 1), "$.policy.triggerMargin",
     "signed 32-bit integer"),
    ("version 2^63", policy_case(preservationVersion=2**63), "$.policy.preservationVersion",
     "signed 32-bit integer"),
    ("attempts 2^80 (past 64 bits)", policy_case(maximumCompactionAttempts=2**80),
     "$.policy.maximumCompactionAttempts", "signed 32-bit integer"),
    ("retention True is not 1", policy_case(recentMessageRetentionCount=True),
     "$.policy.recentMessageRetentionCount", "got true"),
    ("missing version", policy_case(preservationVersion=...), "$.policy",
     "missing member `preservationVersion`"),
    ("policy a list", {"op": "policy", "policy": [100, 10]}, "$.policy",
     "expected an object, got an array"),
    ("unknown estimator kind", policy_case(estimator={"kind": "tokenz"}),
     "$.policy.estimator.kind", 'unknown estimator kind "tokenz", expected one of `utf8`'),
    ("estimator a string", policy_case(estimator="utf8"), "$.policy.estimator",
     "expected an object with `kind`"),
    ("constant size 2^31", policy_case(estimator={"kind": "constant", "size": 2**31}),
     "$.policy.estimator.size", "signed 32-bit integer"),
    ("unknown encoding", policy_case(estimator={"kind": "tokens", "encoding": "p50k_base"}),
     "$.policy.estimator.encoding", "unknown encoding `p50k_base`"),
    ("entries a dict", {"op": "analyze", "entries": {}}, "$.entries",
     "expected an array, got an object"),
    ("entry a string", entry("u1"), "$.entries[0]", 'expected an object, got the string "u1"'),
    ("entry id a number", entry({"id": 5, "kind": "Summary"}), "$.entries[0].id",
     "expected a string, got the number 5"),
    ("unknown entry kind", entry({"id": "a", "kind": "Chat"}), "$.entries[0].kind",
     'unknown entry kind "Chat", expected one of SystemInstruction'),
    ("text and parts", entry({"id": "a", "kind": "Summary", "text": "x", "parts": []}),
     "$.entries[0]", "`text` and `parts` are mutually exclusive"),
    ("part a string", parts(["hi"]), "$.entries[0].parts[0]",
     "unknown message part `hi`, expected one of `text`, `call`, `result`, `unsupported`"),
    ("part with two keys", parts([{"text": "x", "call": {"callId": "c", "name": "f"}}]),
     "$.entries[0].parts[0].text", 'exactly one key, got another key "call"'),
    ("unknown value tag", value({"int": 1}), "$.entries[0].parts[0].result.value",
     "unknown value tag `int`"),
    ("bad value inside a map", value({"map": {"k": {"u8": -1}}}),
     "$.entries[0].parts[0].result.value.map.k.u8", "u8 out of range"),
    ("unknown cancellation point", assemble(cancel="middle"), "$.cancel",
     "expected `before`, `capture:K` or `reducer:K`"),
    ("unknown reducer kind", reducer({"kind": "smart"}), "$.reducer.kind",
     'unknown reducer kind "smart"'),
    ("unknown reducer step", reducer({"kind": "scripted", "steps": ["shrink"]}),
     "$.reducer.steps[0]", "unknown reducer step `shrink`"),
    ("propose item a number", reducer({"kind": "scripted", "steps": [{"propose": [1]}]}),
     "$.reducer.steps[0].propose[0]", 'expected a request entry id (a string) or {"new": entry}'),
    ("proposed item a number", verify([1]), "$.proposed[0]",
     "expected an original entry id (a string) or an entry object, got the number 1"),
    ("proposed names no original", verify(["ghost"]), "$.proposed[0]",
     'no original entry with id "ghost"'),
    ("override key 00", {"op": "entry", "messages": [{"role": "user", "text": "x"}],
                         "overrides": {"00": "Summary"}}, '$.overrides["00"]',
     "without sign or leading zeros"),
    ("unknown transcript format", {"op": "entry",
                                   "transcript": {"format": "bedrock-converse", "messages": []}},
     "$.transcript.format", "unknown transcript format `bedrock-converse`"),
    ("nesting over 128", value(nested(200)), "$.entries[0].parts[0].result.value" + "[0]" * 121,  # the 128th container
     "nested deeper than 128 levels"),
]

# Values a Python caller can write and JSON text cannot hold (so no CLI counterpart).
PYTHON_ROWS = [
    ("a float NaN", policy_case(hardLimit=float("nan")), "$.policy.hardLimit",
     'expected a finite number, got the float NaN: JSON has no NaN or infinities '
     '(a wire value spells it {"f64": "NaN"})'),
    ("a float -inf in a value", value([1, float("-inf")]),
     "$.entries[0].parts[0].result.value[1]", "got the float -Infinity"),
    ("bytes", entry({"id": b"a", "kind": "Summary"}), "$.entries[0].id",
     "expected a JSON value (a dict, list, tuple, str, int, float, bool or None), "
     "got a Python bytes"),
    ("a set", {"op": "analyze", "entries": {1, 2}}, "$.entries", "got a Python set"),
    ("a non-string key", value({"map": {1: {"u8": 1}}}), "$.entries[0].parts[0].result.value.map",
     "expected string keys (JSON object member names), got the key 1 (a Python int)"),
    ("a non-string key at the top", {"op": "analyze", "entries": [], None: 1}, "$",
     "got the key None (a Python NoneType)"),
    ("an object", entry({"id": "a", "kind": "Summary", "text": object()}), "$.entries[0].text",
     "got a Python object"),
    ("a complex number", policy_case(hardLimit=1j), "$.policy.hardLimit",
     "got a Python complex"),
    ("a lone surrogate", entry({"id": "a\udc00", "kind": "Summary"}), "$.entries[0].id",
     "lone surrogate"),
    ("a deeply nested dict", value(json.loads('{"map":' * 130 + "{}" + "}" * 130)),
     "$.entries[0].parts[0].result.value" + ".map" * 121, "nested deeper than 128 levels"),
    ("not a dict at all", [{"op": "analyze", "entries": []}], "$",
     "expected an object with `op`, got a Python list"),
]

ROWS = JSON_ROWS + PYTHON_ROWS


def refusal(case):
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.run(case)
    return e.value


def test_the_table_is_large():
    assert len(ROWS) >= 30 and len(JSON_ROWS) >= 30


@pytest.mark.parametrize("implementation", hc.IMPLEMENTATIONS)
@pytest.mark.parametrize("what, case, path, words", ROWS, ids=[r[0] for r in ROWS])
def test_a_bad_input_names_where_and_what(what, case, path, words, implementation):
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.run(case, implementation)
    assert (e.value.path, str(e.value)) == (path, f"{path}: {e.value.reason}")
    assert words in e.value.reason, what
    assert "\n" not in str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, hc.HybridCompactionError)


@pytest.mark.parametrize("what, case, path, words", JSON_ROWS, ids=[r[0] for r in JSON_ROWS])
def test_the_cli_says_the_same(what, case, path, words):
    err = refusal(case)
    cli = subprocess.run(
        [sys.executable, "-m", "hybrid_compaction", "run", "--model", "-"],
        input=json.dumps(case).encode(), capture_output=True, check=False,
    )
    line = cli.stderr.decode().rstrip("\n")
    assert cli.returncode == 2 and cli.stdout == b"" and "\n" not in line, line
    if what == "nesting over 128":  # JSON text: refused by the parser, at a line and column
        assert line.endswith(f"invalid JSON: {err.reason}"), line
    else:
        assert line.endswith(f": {err}"), (line, str(err))


RUST_WORDS = re.compile(r"\b(enum|struct|variant|serde|untagged)\b|::", re.IGNORECASE)


def test_no_message_names_a_rust_type():
    found = []
    for what, case, _, _ in ROWS:
        for implementation in hc.IMPLEMENTATIONS:
            with pytest.raises(hc.InvalidCaseError) as e:
                hc.run(case, implementation)
            if RUST_WORDS.search(str(e.value)):
                found.append(f"{what}: {e.value}")
    assert found == []


def test_the_rust_word_filter_can_fail():
    assert RUST_WORDS.search("invalid type: map, expected struct EntryInput")
    assert RUST_WORDS.search("unknown variant `hi`")
    assert RUST_WORDS.search("wire::case::Case")


@pytest.mark.parametrize("wrapper", ["verify", "assemble", "evaluate"])
def test_the_wrappers_raise_the_same(wrapper):
    bad = policy(hardLimit="100")
    with pytest.raises(hc.InvalidCaseError) as e:
        if wrapper == "verify":
            hc.verify([], [], bad)
        elif wrapper == "assemble":
            hc.assemble(bad, [])
        else:
            hc.evaluate([], bad)
    assert e.value.path == "$.policy.hardLimit"
    assert e.value.reason.startswith("expected a signed 32-bit integer")


def test_a_trace_given_as_records_names_the_bad_record():
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.check([{"trace": 1}, {"x": float("nan")}])
    assert e.value.path == "$[1].x"
    assert "got the float NaN" in e.value.reason


def test_nesting_is_refused_where_the_cli_refuses_it():
    # serde_json's limit: 127 nested containers pass the parser, the 128th does not.
    # 6 containers above the value: the case, entries, the entry, parts, the part, result.
    ok, over = value(nested(121)), value(nested(122))
    for case, refused in [(ok, False), (over, True)]:
        text = json.dumps(case).encode()
        cli = subprocess.run([sys.executable, "-m", "hybrid_compaction", "run", "-"],
                             input=text, capture_output=True, check=False)
        assert ("nested deeper" in cli.stderr.decode()) == refused
        try:
            hc.run(case)
            python_refused = False
        except hc.InvalidCaseError as e:
            python_refused = "nested deeper" in e.reason
        assert python_refused == refused


def test_any_mapping_and_tuples_are_json_too():
    import types

    case = types.MappingProxyType(
        {"op": "analyze", "entries": ({"id": "a", "kind": "Summary", "text": "x"},)})
    as_dict = {"op": "analyze", "entries": [{"id": "a", "kind": "Summary", "text": "x"}]}
    assert hc.run(case) == hc.run(as_dict)
    assert hc.run(as_dict)["analysis"]["sequenceValid"] is True


def test_big_integers_read_as_their_json_text():
    # 2^64 is not a 64-bit integer: JSON text reads it as a float, and so does the package.
    err = refusal(policy_case(hardLimit=2**64))
    assert err.reason == ("expected a signed 32-bit integer (-2147483648 to 2147483647), "
                          "got the number 1.8446744073709552e19")
    assert refusal(policy_case(hardLimit=10**400)).reason == "number out of range"


def test_an_unknown_format_is_refused_where_it_is_given(demo_policy):
    # At construction, naming the parameter and the formats there are (never a KeyError).
    with pytest.raises(ValueError, match="format must be .* got 'openai-responsez'"):
        hc.Compactor(demo_policy, format="openai-responsez")
    with pytest.raises(ValueError, match="format must be .* got 'nope'"):
        hc.compact([{"role": "user", "content": "hi"}], demo_policy, format="nope")
    with hc.TraceWriter(io.StringIO()) as w:
        with pytest.raises(ValueError, match="format must be .* got 'nope'"):
            w.observe([{"role": "user", "content": "hi"}], None, policy=demo_policy, format="nope")
