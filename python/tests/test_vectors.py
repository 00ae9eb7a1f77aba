"""The whole vector corpus through the Python module, on the model and on the engine.

One pytest test per vector and implementation (600 x 2), compared strictly: JSON types exact
(True is not 1, 1 is not 1.0), error.message ignored. A missing corpus is a failure, not a skip.
A group's policy is applied by the oracle's rule, and every file loads as the oracle loads it.
"""

import json

import pytest

import hybrid_compaction as hc
from hybrid_compaction import _native, vectors

from conftest import VECTORS

CORPUS = list(vectors.load(VECTORS))


def test_the_corpus_is_all_there():
    # docs/WIRE.md: 600 vectors in 13 topics; a truncated corpus must not pass quietly.
    assert len(CORPUS) >= 600
    assert len({v.topic for v in CORPUS}) >= 13
    assert len({v.tc_id for v in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("implementation", hc.IMPLEMENTATIONS)
@pytest.mark.parametrize("vector", CORPUS, ids=lambda v: f"{v.topic}-{v.tc_id}")
def test_vector(vector, implementation):
    actual = hc.run(vector.case, implementation)
    diff = vectors.first_difference(vector.expected, actual)
    assert diff is None, f"tcId {vector.tc_id} [{vector.topic}] on the {implementation}: {diff}"


def test_a_wrong_expectation_is_caught():
    # The harness can fail: flip one expected field of a real vector and watch it differ.
    v = next(v for v in CORPUS if "verification" in v.expected)
    actual = hc.run(v.case)
    wrong = {"verification": {**v.expected["verification"], "outcome": "Nope"}}
    assert vectors.first_difference(wrong, actual) == (
        f'$.verification.outcome: expected "Nope", got "{actual["verification"]["outcome"]}"'
    )


@pytest.mark.parametrize(
    "expected, actual",
    [
        (True, 1),
        (1, True),
        (False, 0),
        (1, 1.0),
        (0.0, 0),
        ([1, 2], [1, 2, 3]),
        ({"a": 1}, {"a": 1, "b": None}),
        ({"a": None}, {}),
        ({"a": [True]}, {"a": [1]}),
        ("1", 1),
    ],
)
def test_comparison_is_type_exact(expected, actual):
    assert vectors.first_difference(expected, actual) is not None


def test_comparison_ignores_member_order_and_error_message_only():
    e = {"error": {"kind": "OutOfRange", "field": "HardLimit", "message": "a"}}
    a = {"error": {"message": "b", "field": "HardLimit", "kind": "OutOfRange"}}
    assert vectors.first_difference(e, a) is None
    a["error"]["kind"] = "Overflow"
    assert vectors.first_difference(e, a) == '$.error.kind: expected "OutOfRange", got "Overflow"'


def _without_policy(op):
    """A published case of operation ``op`` without its policy member."""
    case = next(v.case for v in CORPUS if v.case["op"] == op)
    return {k: x for k, x in case.items() if k != "policy"}


def test_group_policy_is_inherited_by_the_operations_that_take_one(demo_policy):
    # docs/WIRE.md, "Group policy inheritance": assemble, verify, select, evaluate, policy and
    # node take a policy; a case without one inherits the group's, a case with one keeps it.
    for op in ("assemble", "verify", "select", "evaluate", "policy", "node"):
        assert vectors.effective_case(_without_policy(op), demo_policy)["policy"] == demo_policy
        own = next(v.case for v in CORPUS if v.case["op"] == op and "policy" in v.case)
        assert vectors.effective_case(own, demo_policy)["policy"] == own["policy"]
    # No other operation has a policy slot, `trust` included: its `policy` member chooses a
    # policy instead of the fixed one, and a group's policy must not choose it.
    for op in ("analyze", "entry", "trust", "compose", "leases", "bundle"):
        case = _without_policy(op)
        assert vectors.effective_case(case, demo_policy) == case, op
    assert vectors.effective_case(_without_policy("verify"), None) == _without_policy("verify")


def test_effective_case_refuses_what_is_not_wire_input(demo_policy):
    with pytest.raises(hc.InvalidCaseError) as e:
        vectors.effective_case({"op": "verify"}, demo_policy)
    assert e.value.path == "$"
    with pytest.raises(hc.InvalidCaseError) as e:
        vectors.effective_case(_without_policy("verify"), {**demo_policy, "hardLimit": "ten"})
    assert e.value.path == "$.policy.hardLimit"


@pytest.mark.parametrize("path", sorted(VECTORS.glob("*.json")), ids=lambda p: p.stem)
def test_every_vector_file_loads_as_the_oracle_loads_it(path):
    # One rule: the cases vectors.load_file derives (the group policy applied) are the cases the
    # oracle's loader derives from the same file, value for value and type for type.
    rust = json.loads(_native.vector_file_cases(str(path)))
    loaded = vectors.load_file(path)
    assert len(loaded) == len(rust)
    for v, expected in zip(loaded, rust):
        diff = vectors.first_difference(expected, v.case)
        assert diff is None, f"tcId {v.tc_id}: {diff}"
