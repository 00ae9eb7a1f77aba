"""The seeded workload (``hc.workload``) and the token counter (``hc.count_tokens``): the same
conversation as ``hybrid-compaction workload``, every format read back by the oracle (TRN-1)."""

import json
import subprocess
import sys

import pytest

import hybrid_compaction as hc


def test_the_same_seed_gives_the_same_transcript():
    a = hc.workload(200, seed=5)
    assert a == hc.workload(200, seed=5)
    assert a != hc.workload(200, seed=6)
    assert len(a["messages"]) == 200
    assert a["ids"] == [f"m{i}" for i in range(200)]


def test_it_is_what_the_command_prints():
    out = subprocess.run(
        [sys.executable, "-m", "hybrid_compaction", "workload", "--messages", "100", "--seed", "7",
         "--format", "langchain"],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(out.stdout) == hc.workload(100, seed=7, format="langchain")


@pytest.mark.parametrize("fmt", hc.TRANSCRIPT_FORMATS)
def test_every_format_is_read_back_by_the_oracle(fmt):
    t = hc.workload(120, seed=3, format=fmt)
    entries = hc.run({"op": "entry", "transcript": t})["entries"]
    assert entries[0]["kind"] == "SystemInstruction" and entries[0]["id"] == "m0"
    kinds = {e["kind"] for e in entries}
    assert {"ToolExchange", "ConversationalMessage"} <= kinds


@pytest.mark.parametrize("ending", hc.ENDINGS)
def test_every_ending(ending):
    t = hc.workload(30, seed=1, ending=ending)
    last = t["messages"][-1]
    shape = {
        "user-question": last["role"] == "user",
        "tool-results": last["role"] == "tool",
        "pending-call": last["role"] == "assistant" and bool(last.get("tool_calls")),
        "final-answer": last["role"] == "assistant" and not last.get("tool_calls"),
    }
    assert shape[ending]


def test_bad_arguments_name_the_argument():
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.workload(3)
    assert e.value.path == "messages"
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.workload(10, format="xml")
    assert e.value.path == "format"
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.workload(10, ending="never")
    assert e.value.path == "ending"
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.workload(10, seed=-1)
    assert e.value.path == "seed"


def test_count_tokens_is_the_bundled_bpe():
    assert hc.count_tokens(["", "hello world"], "o200k_base") == [0, 2]
    assert hc.count_tokens(["hello world"], "cl100k_base") == [2]
    with pytest.raises(ValueError):
        hc.count_tokens(["x"], "p50k_base")
