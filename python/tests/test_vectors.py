"""The whole vector corpus through the Python module, on the model and on the engine.

One pytest test per vector and implementation (600 x 2), compared strictly: JSON types exact
(True is not 1, 1 is not 1.0), error.message ignored. A missing corpus is a failure, not a skip.
"""

import pytest

import hybrid_compaction as hc
from hybrid_compaction import vectors

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


def test_group_policy_is_inherited_except_by_policyless_ops():
    p = {"hardLimit": 1}
    assert vectors.effective_case({"op": "verify"}, p)["policy"] == p
    assert "policy" not in vectors.effective_case({"op": "entry"}, p)
    assert "policy" not in vectors.effective_case({"op": "analyze"}, p)
    own = {"hardLimit": 2}
    assert vectors.effective_case({"op": "select", "policy": own}, p)["policy"] == own
