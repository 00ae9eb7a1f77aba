"""The integrations' extras (python/pyproject.toml) are version ranges, never exact pins: each
requirement admits one major, from a lower bound; python/oldest-supported.txt (what CI installs
to test each integration at the oldest release its extra admits) names exactly those lower
bounds, one block per extra."""

import re

import pytest

from conftest import REPO

tomllib = pytest.importorskip("tomllib")

REQUIREMENT = re.compile(r"^([A-Za-z0-9_.-]+)>=([0-9][0-9.]*),<([0-9]+)$")


def extras():
    project = tomllib.loads((REPO / "python" / "pyproject.toml").read_text(encoding="utf-8"))
    found = project["project"]["optional-dependencies"]
    return {name: reqs for name, reqs in found.items() if name != "test"}


def oldest():
    """``{extra: {package: version}}`` from python/oldest-supported.txt's ``# [extra]`` blocks."""
    blocks = {}
    current = None
    for line in (REPO / "python" / "oldest-supported.txt").read_text(encoding="utf-8").splitlines():
        header = re.match(r"^# \[([a-z0-9-]+)\]$", line)
        if header:
            current = blocks.setdefault(header.group(1), {})
        elif line and not line.startswith("#"):
            package, _, version = line.partition("==")
            assert current is not None and version, f"not under an extra, or not a pin: {line!r}"
            current[package] = version
    return blocks


def test_every_integration_extra_is_one_major_from_a_lower_bound():
    found = extras()
    assert {"langchain", "agent-framework", "openai-agents"} <= set(found)
    for extra, reqs in found.items():
        for req in reqs:
            m = REQUIREMENT.match(req)
            assert m, f"[{extra}] {req!r} is not a range `name>=X,<N`"
            major = int(m.group(2).split(".")[0])
            assert int(m.group(3)) == major + 1, f"[{extra}] {req!r} spans more than one major"


def test_the_oldest_pins_are_the_extras_lower_bounds():
    lower = {extra: dict(REQUIREMENT.match(r).group(1, 2) for r in reqs)
             for extra, reqs in extras().items()}
    assert oldest() == lower
