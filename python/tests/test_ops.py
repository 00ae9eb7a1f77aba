"""The operations added to the wire format (diagnostics, bridge, leases, node, the ADR ops)
through ``hc.run``: for one vector of each, the answer equals the ``hybrid-compaction run``
command's answer to the same case as JSON text, exactly (JSON types and the typed errors'
messages included), on both implementations, and matches the vector's expectation.
``test_vectors.py`` runs every vector; this pins that each op reaches Python at all and that the
in-process answer is the command's.
"""

import json
import subprocess
import sys

import pytest

import hybrid_compaction as hc
from hybrid_compaction import vectors

from conftest import VECTORS

OPS = ["diagnostics", "bridge", "leases", "node", "resolve", "compose", "trust", "record",
       "rehydrate", "offload", "configure"]

CORPUS = list(vectors.load(VECTORS))


def first_vector(op):
    # The longest case of the op: the most of it exercised.
    cases = [v for v in CORPUS if v.case.get("op") == op]
    assert cases, f"no vector in vectors/ runs the `{op}` op"
    return max(cases, key=lambda v: len(json.dumps(v.case)))


def cli(case, implementation):
    out = subprocess.run(
        [sys.executable, "-m", "hybrid_compaction", "run", f"--{implementation}", "-"],
        input=json.dumps(case).encode(), capture_output=True, check=True,
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize("implementation", hc.IMPLEMENTATIONS)
@pytest.mark.parametrize("op", OPS)
def test_the_op_answers_as_the_cli(op, implementation):
    v = first_vector(op)
    answer = hc.run(v.case, implementation)
    expected = cli(v.case, implementation)
    assert vectors.first_difference(expected, answer) is None
    assert json.dumps(answer, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert vectors.first_difference(v.expected, answer) is None, v.tc_id


@pytest.mark.parametrize("op", OPS)
def test_a_bad_member_of_the_op_is_named(op):
    case = {**first_vector(op).case, "noSuchMember": 1}
    with pytest.raises(hc.InvalidCaseError) as e:
        hc.run(case)
    assert e.value.path == "$.noSuchMember"
    assert e.value.reason.startswith("unknown member `noSuchMember`")
