"""The module API: run, the convenience wrappers, errors (with JSON paths), schema, the command."""

import json
import os
import subprocess
import sys

import pytest

import hybrid_compaction as hc

ENTRIES = [
    {"id": "s", "kind": "SystemInstruction", "text": "be brief"},
    {"id": "u1", "kind": "ConversationalMessage", "text": "an old question that takes up a lot of room......"},
    {"id": "u2", "kind": "ConversationalMessage", "text": "the latest question"},
]


def test_version_is_the_crate_version():
    assert hc.__version__ == "0.1.0"


@pytest.mark.parametrize("implementation", hc.IMPLEMENTATIONS)
def test_run_answers_a_case(implementation, demo_policy):
    out = hc.run({"op": "evaluate", "policy": demo_policy, "entries": ENTRIES}, implementation)
    assert out == {
        "evaluation": {
            "measurementUnit": "Utf8Bytes",
            "entrySizes": [8, 49, 19],
            "estimatedSize": 76,
            "hardLimit": 100,
            "triggerMargin": 10,
            "triggerThreshold": 90,
            "triggered": False,
        }
    }
    assert out["evaluation"]["triggered"] is False  # a JSON bool, not 0


def test_run_returns_typed_errors_as_answers(demo_policy):
    bad = {**demo_policy, "hardLimit": 0}
    out = hc.run({"op": "policy", "policy": bad})
    assert out["error"]["kind"] == "OutOfRange" and out["error"]["field"] == "HardLimit"


def test_wrappers_raise_typed_errors(demo_policy):
    with pytest.raises(hc.SpecError) as e:
        hc.evaluate(ENTRIES, {**demo_policy, "hardLimit": 0})
    assert (e.value.kind, e.value.field) == ("OutOfRange", "HardLimit")
    with pytest.raises(hc.SpecError) as e:
        hc.verify(ENTRIES + [ENTRIES[0]], ["s"], demo_policy)
    assert e.value.kind == "InvalidArgument" and e.value.entry_id == "s"


def test_verify(demo_policy):
    ok = hc.verify(ENTRIES, ["s", "u2"], demo_policy)
    assert ok["outcome"] == "Accepted"
    summary = {"id": "sum", "kind": "Summary", "text": "earlier: a question"}
    assert hc.verify(ENTRIES, ["s", summary, "u2"], demo_policy)["outcome"] == "Accepted"
    missing = hc.verify(ENTRIES, ["u2"], demo_policy)
    assert missing["outcome"] == "Rejected"
    assert missing["missingRequiredEntryIds"] == ["s"]


def test_assemble_matches_the_documented_example():
    # docs/WIRE.md, "Example (run, engine, pretty-printed)".
    p = hc.policy(
        hard_limit=100,
        trigger_margin=20,
        recent_message_retention_count=1,
        maximum_compaction_attempts=3,
        preservation_label="demo",
        preservation_version=1,
    )
    entries = [
        ENTRIES[0],
        {"id": "u1", "kind": "ConversationalMessage",
         "text": "an old question that takes up a lot of room in the context......"},
        ENTRIES[2],
    ]
    for implementation in hc.IMPLEMENTATIONS:
        out = hc.assemble(
            p,
            entries,
            reducer={"kind": "scripted", "steps": [{"propose": ["s", "u2"]}]},
            implementation=implementation,
        )
        assert out["assembly"]["outcome"] == "Reduced"
        assert out["assembly"]["finalEntryIds"] == ["s", "u2"]
        assert out["diagnostics"]["finalSequenceValid"] is True
        assert (out["assembly"]["originalEstimatedSize"], out["assembly"]["finalEstimatedSize"]) == (91, 27)


@pytest.mark.parametrize(
    "case, path",
    [
        ({"op": "verify", "policy": None, "original": [{"id": "a", "kind": "Nope"}], "proposed": []},
         "$.original[0].kind"),
        ({"op": "evaluate", "policy": {"hardLimit": "100"}, "entries": []}, "$.policy.hardLimit"),
        ({"op": "analyze", "entries": [], "extra": 1}, "$.extra"),
        ({"op": "analyze", "entries": [{"id": "a", "kind": "ToolExchange",
          "parts": [{"result": {"callId": "k", "value": {"u8": 256}}}]}]},
         "$.entries[0].parts[0].result.value.u8"),
        ({"op": "nope"}, "$.op"),
        ({"entries": []}, "$"),  # the CLI's place and words: "$: missing member `op`"
        ({"op": 3}, "$.op"),
    ],
)
def test_invalid_cases_raise_with_the_json_path(case, path):
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.run(case)
    assert e.value.path == path
    assert str(e.value).startswith(path + ": ")
    assert "hybrid_compaction" not in str(e.value) and "::" not in str(e.value)


def test_unknown_member_names_it(demo_policy):
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.run({"op": "evaluate", "policy": demo_policy, "entries": [], "entires": []})
    assert "entires" in e.value.reason


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), object(), b"bytes"])
def test_values_json_cannot_carry_are_invalid_cases(bad):
    case = {"op": "analyze", "entries": [{"id": "a", "kind": "ToolExchange",
            "parts": [{"result": {"callId": "k", "value": bad}}]}]}
    with pytest.raises(hc.InvalidCaseError):
        hc.run(case)


def test_an_internal_failure_is_an_internal_error(monkeypatch):
    # The oracle catches a panic of an implementation and the native module raises it as
    # InternalError(implementation, reason); no wire input is known to cause one, so the native
    # module's raise is simulated here.
    from hybrid_compaction import _core

    def panicked(case, imp):
        raise hc.InternalError(imp, "boom")

    monkeypatch.setattr(_core._native, "run_case", panicked)
    with pytest.raises(hc.InternalError) as e:
        hc.run({"op": "analyze", "entries": []}, "model")
    assert (e.value.implementation, e.value.reason) == ("model", "boom")
    assert str(e.value) == "internal failure of the model: boom"
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, hc.HybridCompactionError)


def test_the_native_module_raises_the_packages_own_exceptions(demo_policy):
    # No status tuples: every native entry point answers its value or raises the package's class
    # itself, with the attributes the Python constructor sets (python/src/errors.rs).
    from hybrid_compaction import _native

    with pytest.raises(hc.InvalidCaseError) as e:
        _native.run_case({"op": "evaluate"}, "engine")
    assert type(e.value) is hc.InvalidCaseError and e.value.path.startswith("$")
    with pytest.raises(hc.InvalidCaseError) as e:
        _native.trace_lines([{"x": float("nan")}])
    assert e.value.path.startswith("$[0]")
    with pytest.raises(hc.InvalidCaseError) as e:
        _native.check_json("not json\n", "model")
    assert e.value.path == "line 1"
    with pytest.raises(hc.InvalidCaseError) as e:
        _native.workload_json(3, 1, "openai-chat")
    assert (e.value.path, e.value.reason) == (
        "messages", "expected a whole number from 7 to 1000000, got 3")
    assert str(e.value) == "messages: expected a whole number from 7 to 1000000, got 3"
    with pytest.raises(hc.UnsupportedContentError) as e:
        _native.transcript_entries({"format": "openai-chat", "messages": [
            {"role": "assistant", "content": "", "audio": {"id": "a1"}}]})
    assert (e.value.kind, e.value.path) == ("NotSupported", "messages[0].audio")
    with pytest.raises(hc.TranscriptError) as e:
        _native.transcript_entries({"format": "openai-chat", "messages": [{"content": "x"}]})
    assert type(e.value) is hc.TranscriptError and e.value.kind == "InvalidArgument"
    with pytest.raises(hc.InvalidCaseError) as e:
        _native.new_session({**demo_policy, "hardLimit": "x"}, False, "wf")
    assert e.value.path.startswith("policy.")
    with pytest.raises(hc.SpecError) as e:
        _native.new_session({**demo_policy, "triggerMargin": 100}, False, "wf")
    assert (e.value.kind, e.value.field) == ("OutOfRange", "TriggerMargin")
    assert set(e.value.answer) == {"kind", "field", "message"}


def test_not_a_dict_and_unknown_implementation():
    with pytest.raises(hc.InvalidCaseError):
        hc.run([{"op": "analyze", "entries": []}])
    with pytest.raises(ValueError):
        hc.run({"op": "analyze", "entries": []}, "both")


def test_deep_nesting_is_refused_not_a_crash():
    value = "x"
    for _ in range(200):
        value = [value]
    case = {"op": "analyze", "entries": [{"id": "a", "kind": "ToolExchange",
            "parts": [{"result": {"callId": "k", "value": value}}]}]}
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.run(case)
    assert e.value.reason == "nested deeper than 128 levels"  # the CLI's words


def test_bool_is_not_int_on_the_way_in(demo_policy):
    # A JSON `true` where the wire wants an i32 is invalid input, not the number 1.
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.run({"op": "policy", "policy": {**demo_policy, "hardLimit": True}})
    assert e.value.path == "$.policy.hardLimit"


def test_schema():
    all_three = hc.schema()
    assert set(all_three) == {"case", "output", "vectorFile"}
    assert hc.schema("case") == all_three["case"]
    with pytest.raises(ValueError):
        hc.schema("nope")


def _command():
    here = os.path.join(os.path.dirname(sys.executable), "hybrid-compaction")
    return [here] if os.path.exists(here) else [sys.executable, "-m", "hybrid_compaction"]


def test_the_console_script(demo_policy):
    cmd = _command()
    version = subprocess.run(cmd + ["--version"], capture_output=True, text=True)
    assert (version.returncode, version.stdout.strip()) == (0, "hybrid-compaction 0.1.0")
    case = {"op": "evaluate", "policy": demo_policy, "entries": ENTRIES}
    ran = subprocess.run(cmd + ["run", "-"], input=json.dumps(case), capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == hc.run(case)
    bad = subprocess.run(cmd + ["run", "-"], input="{", capture_output=True, text=True)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr.startswith("hybrid-compaction: error: <stdin>:")


def test_python_dash_m_is_the_command():
    out = subprocess.run([sys.executable, "-m", "hybrid_compaction", "schema", "case"],
                         capture_output=True, text=True)
    assert out.returncode == 0
    assert json.loads(out.stdout) == hc.schema("case")


@pytest.mark.skipif(os.environ.get("HYBRID_COMPACTION_REQUIRE_INSTALLED") != "1",
                    reason="only CI insists on testing the installed wheel")
def test_the_installed_wheel_is_under_test():
    # CI installs the built wheel into a fresh venv; the source tree must not shadow it.
    source = os.path.join("python", "hybrid_compaction")
    assert source not in hc.__file__ and "site-packages" in hc.__file__, hc.__file__


def _example_trace():
    from conftest import DOCS

    return (DOCS / "trace-example.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("implementation", ["model", "engine"])
def test_check_a_recorded_trace(implementation):
    report = hc.check(_example_trace(), implementation)
    assert report["violations"] == [] and report["calls"] == 4 and report["runs"] == 2
    assert report["implementation"] == implementation


def test_check_takes_records_and_flags_a_changed_outcome():
    records = [json.loads(line) for line in _example_trace().splitlines() if line.strip()]
    assert hc.check(records)["violations"] == []
    call = next(r for r in records if r.get("type") == "call" and "result" in r)
    call["result"]["outcome"] = (
        "Irreducible" if call["result"]["outcome"] != "Irreducible" else "WithinLimit"
    )
    report = hc.check(records)
    assert report["violations"], "a changed outcome must be a violation"
    assert all(v["clause"].startswith("TRC-") for v in report["violations"])


def test_check_names_the_unreadable_line():
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.check('{"trace":1}\n{"type":"call",\n')
    assert e.value.path == "line 2"


@pytest.mark.parametrize("implementation", ["model", "engine"])
def test_check_reads_a_trace_file_as_its_text(implementation):
    from conftest import DOCS

    by_path = hc.check(DOCS / "trace-example.jsonl", implementation)
    assert by_path == hc.check(_example_trace(), implementation)
    assert by_path["violations"] == [] and by_path["calls"] == 4
    # Any os.PathLike is a file; a str is always text.
    class Named:
        def __fspath__(self) -> str:
            return str(DOCS / "trace-example.jsonl")

    assert hc.check(Named(), implementation) == by_path


def test_check_names_the_unreadable_line_of_a_file(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"trace":1}\n{"type":"call",\n', encoding="utf-8")
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.check(bad)
    assert e.value.path == "line 2"
    # Bytes that are not UTF-8: the line that holds them, not a replacement character.
    lines = _example_trace().splitlines(keepends=True)
    raw = "".join(lines[:2]).encode("utf-8") + lines[2].encode("utf-8").replace(b'"', b'"\xff', 1)
    bad.write_bytes(raw)
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.check(bad)
    assert e.value.path == "line 3" and "UTF-8" in e.value.reason, (e.value.path, e.value.reason)


def test_check_raises_pythons_own_error_for_a_file_it_cannot_open(tmp_path):
    with pytest.raises(FileNotFoundError):
        hc.check(tmp_path / "missing.jsonl")
    with pytest.raises(IsADirectoryError):
        hc.check(tmp_path)
