"""The Python examples of docs/PYTHON.md run, in order, in one namespace, from the repository root."""

import os
import re

import pytest

from conftest import DOCS, REPO

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_docs_python_examples_run(capsys):
    blocks = BLOCK.findall((DOCS / "PYTHON.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 4, "the examples of docs/PYTHON.md were not found"
    namespace = {}
    here = os.getcwd()
    os.chdir(REPO)
    try:
        for i, code in enumerate(blocks):
            exec(compile(code, f"docs/PYTHON.md[python block {i}]", "exec"), namespace)
    finally:
        os.chdir(here)
    printed = capsys.readouterr().out
    # Every `print(...)  # text` (or a comment line right after a print) promises its output.
    promised = []
    for code in blocks:
        lines = code.splitlines()
        for k, line in enumerate(lines):
            if "print(" in line and "#" in line.split("print(", 1)[1]:
                promised.append(line.rsplit("#", 1)[1].strip())
            elif "print(" in line and k + 1 < len(lines) and lines[k + 1].strip().startswith("# "):
                promised.append(lines[k + 1].strip()[2:])
    assert len(promised) >= 9, promised
    at = 0
    for text in promised:
        found = printed.find(text, at)
        assert found >= 0, f"docs/PYTHON.md promises {text!r}, the examples printed:\n{printed}"
        at = found + len(text)


def test_readme_python_example_runs(capsys):
    """The README's Python example (the blocks that import the package) prints what it says."""
    blocks = [b for b in BLOCK.findall((REPO / "README.md").read_text(encoding="utf-8"))
              if "import hybrid_compaction" in b]
    assert blocks, "the README's Python example was not found"
    for i, code in enumerate(blocks):
        exec(compile(code, f"README.md[python block {i}]", "exec"), {})
        printed = capsys.readouterr().out.strip()
        promised = code.strip().splitlines()[-1].split("#", 1)[1].strip()
        assert printed == promised, (printed, promised)
