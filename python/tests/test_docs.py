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


#: A framework's own section of docs/CI.md; the LangChain walk-through is what comes before the
#: first one.
FRAMEWORK_SECTION = re.compile(r"^## (.+): the same three steps$", re.M)
#: The module each section's example needs (its test is skipped without it).
NEEDS = {"LangChain": "langchain.agents", "The OpenAI Agents SDK": "agents"}


def ci_sections():
    """docs/CI.md as ``{framework: its text}``."""
    parts = FRAMEWORK_SECTION.split((DOCS / "CI.md").read_text(encoding="utf-8"))
    found = {"LangChain": parts[0]}
    for name, body in zip(parts[1::2], parts[2::2]):
        found[name] = body.split("\n## ", 1)[0]
    return found


def test_every_framework_section_of_ci_md_is_run():
    assert set(ci_sections()) == set(NEEDS)


@pytest.mark.parametrize("framework", sorted(NEEDS))
def test_ci_example_runs_under_the_plugin_and_prints_what_the_page_shows(pytester, framework):
    """docs/CI.md, for each framework: its test file, run with ``pytest --hc-trace traces``,
    fails the session with the summary lines the page shows; its compaction test alone
    passes."""
    pytest.importorskip(NEEDS[framework])
    page = ci_sections()[framework]
    [example] = [b for b in BLOCK.findall(page) if "def test_" in b]
    texts = re.findall(r"^```text\n(.*?)^```", page, re.S | re.M)
    promised = [re.sub(r" {2,}", "*", line.replace("<pid>", "*").replace('"..."', "*"))
                for block in texts for line in block.splitlines()
                if " trace(s) in " in line or re.match(r"TRC-\d+: ", line)
                or line.startswith("trace ") or re.match(r"test_\w+\.py-", line)]
    [module] = {m for line in promised for m in re.findall(r"^(test_\w+)\.py-", line)}
    pytester.makepyfile(**{module: example})
    result = pytester.runpytest("--hc-trace", "traces")
    result.assert_outcomes(passed=2)
    assert result.ret == 1
    failing = [p for p in promised if not p.startswith("1 trace(s)")]
    assert len(failing) >= 6, promised
    result.stdout.fnmatch_lines(failing, consecutive=False)
    alone = pytester.runpytest("--hc-trace", "traces", "-k", "compaction")
    assert alone.ret == 0
    alone.stdout.fnmatch_lines([p for p in promised if p.startswith("1 trace(s)")])
