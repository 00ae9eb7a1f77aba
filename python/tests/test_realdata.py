"""Real conversations through the package, as an application passes them (issue: real
conversations pass through).

``../shared/realdata/conversations.jsonl`` holds conversations real models held with real tools
(its README says where each comes from); every one not marked ``"providerStatus": 400`` was
accepted by its provider. Each is turned into the request its last model call was sent (recorder
artifacts dropped: a closing ``role: "exit"`` message, the recorder's ``extra`` member, and the
model's final output after the last request), then:

* under a hard limit it fits, ``hc.compact`` must give back the very objects it was given;
* at two tighter limits, an answer must fit its limit and be valid by the provider's own request
  rules (``provider_rules.py``, written from the providers' documentation, not from our
  verifier); a termination (``CompactionTerminated``) is an allowed answer, a list the provider
  would refuse is not.

The data is used in place and never copied. Without it (a user's fresh clone, no ``../shared``)
the test skips with a message; CI sets ``HYBRID_COMPACTION_REQUIRE_REALDATA=1`` and fails
instead.
"""

from __future__ import annotations

import collections
import json
import os
import pathlib
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import hybrid_compaction as hc
from hybrid_compaction.convert import FORMATS
from provider_rules import JUDGES

from conftest import REPO

REALDATA = pathlib.Path(
    os.environ.get("HYBRID_COMPACTION_REALDATA", REPO.parent / "shared" / "realdata")
)

#: Conversations the package accepts today, per source and format: a floor that only rises as
#: the content model, the formats and the pairing rules of the real-conversation work land (the
#: goal is every provider-accepted conversation).
ACCEPTED_AT_LEAST = {
    ("tau-bench", "openai-chat"): 200,
    ("mini-swe-agent", "openai-chat"): 38,
    ("pydantic-ai-requests", "openai-chat"): 82,
    ("pydantic-ai-requests", "anthropic-messages"): 32,
    ("pydantic-ai-requests", "openai-responses"): 76,
}


def _policy(hard_limit: int) -> Dict[str, Any]:
    return {
        "hardLimit": hard_limit,
        "triggerMargin": max(1, hard_limit // 10),
        "recentMessageRetentionCount": 2,
        "maximumCompactionAttempts": 2,
        "preservationLabel": "realdata",
        "preservationVersion": 1,
        "estimator": {"kind": "utf8"},
    }


def _conversations() -> List[Dict[str, Any]]:
    path = REALDATA / "conversations.jsonl"
    if not path.is_file():
        if os.environ.get("HYBRID_COMPACTION_REQUIRE_REALDATA") == "1":
            pytest.fail(f"{path} is required here and absent")
        pytest.skip(f"{path} is absent (a fresh clone without ../shared): real data not checked")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _request(d: Dict[str, Any]) -> Tuple[List[Any], Any]:
    """What the conversation's last model call was sent: the messages and Anthropic's system."""
    messages = [m for m in d["messages"] if m.get("role") != "exit"]
    messages = [{k: v for k, v in m.items() if k != "extra"} for m in messages]
    if d["source"] == "mini-swe-agent":
        # A trajectory: the model's final output follows the last request.
        while messages and messages[-1].get("role") == "assistant":
            messages.pop()
    return messages, d.get("system")


def _half_reducer(messages: List[Any]) -> List[Any]:
    """A naive reducer (the kind agents ship): keeps the newer half. Never trusted."""
    return list(messages[len(messages) // 2 :])


def _outcomes(d: Dict[str, Any]) -> Iterator[Tuple[str, str]]:
    """(what happened, detail) for the conversation, then for its two tighter limits."""
    messages, system = _request(d)
    fmt = d["format"]
    if fmt not in FORMATS:
        yield "refused", f"no converter for {fmt}"
        return
    try:
        whole = hc.compact(messages, _policy(10**9), format=fmt, system=system)
    except hc.HybridCompactionError as e:
        yield "refused", f"{type(e).__name__}: {getattr(e, 'reason', e)}"
        return
    if len(whole.messages) != len(messages) or any(
        a is not b for a, b in zip(whole.messages, messages)
    ):
        yield "changed", "a fitting request came back changed"
        return
    yield "accepted", ""
    size = whole.assembly["finalEstimatedSize"]
    for limit in (size // 2, size // 4):
        if limit < 2:
            continue
        try:
            c = hc.compact(
                messages, _policy(limit), format=fmt, system=system, reducer=_half_reducer
            )
        except hc.CompactionTerminated:
            yield "terminated", ""
            continue
        if c.assembly["finalEstimatedSize"] > limit:
            yield "invalid", f"over the limit {limit}"
        broken = JUDGES[fmt](c.messages)
        yield ("invalid", f"limit {limit}: {broken[:3]}") if broken else ("compacted", "")


def test_real_conversations_pass_through_and_compact_validly() -> None:
    """Every provider-accepted conversation the package accepts comes back verbatim when it fits
    and compacts to a provider-valid list (or terminates) when it does not; the number accepted
    never falls below the floor."""
    counts: Dict[Tuple[str, str], collections.Counter[str]] = collections.defaultdict(
        collections.Counter
    )
    problems: List[str] = []
    refusals: collections.Counter[str] = collections.Counter()
    for d in _conversations():
        if d.get("providerStatus") == 400:
            continue
        key = (d["source"], d["format"])
        for what, detail in _outcomes(d):
            counts[key][what] += 1
            if what in ("changed", "invalid"):
                problems.append(f"{d['id']}: {detail}")
            if what == "refused":
                refusals[detail[:100]] += 1
    table = "\n".join(f"{k}: {dict(v)}" for k, v in sorted(counts.items()))
    assert not problems, "\n".join(problems[:20]) + "\n" + table
    low = {
        k: (counts[k]["accepted"], floor)
        for k, floor in ACCEPTED_AT_LEAST.items()
        if counts[k]["accepted"] < floor
    }
    assert not low, f"accepted below the floor: {low}\n{table}\n{refusals.most_common(10)}"


def _judged(fmt: str, messages: List[Any]) -> Optional[List[str]]:
    return JUDGES[fmt](messages) or None


def test_the_provider_rules_accept_every_accepted_request_and_can_fail() -> None:
    """The judge accepts what the providers accepted, and refuses the breakages compaction
    causes: a result without its call, a call without its result, a reasoning item cut from
    what it precedes."""
    for d in _conversations():
        if d.get("providerStatus") == 400:
            continue
        messages, _ = _request(d)
        assert _judged(d["format"], messages) is None, d["id"]
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    user = {"role": "user", "content": "hi"}
    assert _judged("openai-chat", [user, call, result]) is None
    assert _judged("openai-chat", [user, result])
    assert _judged("openai-chat", [user, call])
    assert _judged("openai-chat", [call, user, result])
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}
    answer = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}
    assert _judged("anthropic-messages", [user, use, answer]) is None
    assert _judged("anthropic-messages", [user, answer])
    assert _judged("anthropic-messages", [user, use, user, answer])
    fc = {"type": "function_call", "call_id": "k", "name": "f", "arguments": "{}"}
    out = {"type": "function_call_output", "call_id": "k", "output": "ok"}
    rs = {"type": "reasoning", "id": "rs_1", "summary": []}
    assert _judged("openai-responses", [user, rs, fc, out]) is None
    assert _judged("openai-responses", [user, out])
    assert _judged("openai-responses", [user, fc])
    assert _judged("openai-responses", [user, fc, out, rs])
