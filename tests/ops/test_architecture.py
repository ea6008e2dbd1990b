"""The import rules of docs/architecture.md: the rules never import the pipeline, the pipeline's
parts never import the tools around it (the site, the SQL sandbox, the generators, the CLI)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("flows.site", "flows.query", "flows.sandbox", "flows.synthetic", "flows.cli",
         "flows.chart", "flows.report", "flows.score_command")  # fmt: skip
PIPELINE_ABOVE_STORAGE = ("flows.runs", "flows.nightly", "flows.steps", "flows.ingest")
RULES = {
    "transforms": ("flows",),
    "flows/ingest": (*TOOLS, "flows.runs", "flows.nightly", "flows.steps"),
    "flows/steps": (*TOOLS, "flows.runs", "flows.nightly"),
    # storage knows nothing of the site (a tool) nor of the progress display
    "flows/storage": (*TOOLS, *PIPELINE_ABOVE_STORAGE, "flows.progress"),
}


def imported(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


@pytest.mark.parametrize("part", sorted(RULES))
def test_each_part_imports_only_what_the_architecture_allows(part):
    broken = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / part).rglob("*.py"))
        for name in sorted(imported(path))
        if any(name == bad or name.startswith(bad + ".") for bad in RULES[part])
    ]
    assert broken == []
