"""Shared fixtures: where the repository's corpus and docs are."""

import os
import pathlib

import pytest

#: pytester runs the plugin's own sessions (test_pytest_plugin.py).
pytest_plugins = ["pytester"]

#: The repository root (python/tests/../..); HYBRID_COMPACTION_REPO overrides it.
REPO = pathlib.Path(os.environ.get("HYBRID_COMPACTION_REPO", pathlib.Path(__file__).parents[2]))
VECTORS = REPO / "vectors"
DOCS = REPO / "docs"


@pytest.fixture
def demo_policy():
    import hybrid_compaction as hc

    return hc.policy(
        hard_limit=100,
        trigger_margin=10,
        recent_message_retention_count=1,
        maximum_compaction_attempts=1,
        preservation_label="demo",
        preservation_version=1,
    )
