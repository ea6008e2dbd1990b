"""The import rules of docs/architecture.md: the rules never import the pipeline, the pipeline's
parts never import the tools beside it (`flows/tools`: the site, the SQL sandbox, the generators)
nor the CLI, and the tools never import the run's order; no module imports itself through
others (at its top, in a function or for type checking only); each package imports alone."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("flows.tools", "flows.cli")
PIPELINE_ABOVE_STORAGE = ("flows.runs", "flows.nightly", "flows.steps", "flows.ingest")
RULES = {
    "transforms": ("flows",),
    "flows/settings.py": (*TOOLS, "flows.runs", "flows.nightly", "flows.steps"),
    "flows/tools": ("flows.runs", "flows.nightly", "flows.steps", "flows.cli"),
    "flows/ingest": (*TOOLS, "flows.runs", "flows.nightly", "flows.steps"),
    "flows/steps": (*TOOLS, "flows.runs", "flows.nightly"),
    # the run's steps: the flows (flows/nightly.py) add the site and the artifacts
    "flows/runs.py": (*TOOLS, "flows.nightly"),
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
        for path in sorted([ROOT / part] if part.endswith(".py") else (ROOT / part).rglob("*.py"))
        for name in sorted(imported(path))
        if any(name == bad or name.startswith(bad + ".") for bad in RULES[part])
    ]
    assert broken == []


PACKAGES = ("flows", "transforms")  # the project's own modules (tests and benches excluded)


def module_files() -> dict[str, Path]:
    """Every module of the project by its dotted name (a package by its folder's name)."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module → the project modules it imports anywhere: at its top, inside a function, under
    `if TYPE_CHECKING:` (a circle hidden there is still a circle for the reader)."""

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets |= {resolve(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, `level - 1` folders up
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                for alias in node.names:  # `from package import module` names the module
                    full = f"{base}.{alias.name}"
                    targets.add(full if full in modules else resolve(base))
        graph[module] = targets - {None, module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_cycle_finder_sees_a_circle_hidden_in_a_function_or_under_type_checking(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from b import g\n")
    (tmp_path / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from c import h\n"
    )
    (tmp_path / "c.py").write_text("import a\n")
    (tmp_path / "d.py").write_text("import a\n")
    modules = {name: tmp_path / f"{name}.py" for name in "abcd"}
    assert import_graph(modules) == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(import_graph(modules)) == [["a", "b", "c"]]


def test_no_module_of_the_project_imports_itself_through_others():
    graph = import_graph(module_files())
    assert len(graph) > 100 and graph["flows.storage.warehouse"]  # the whole project is read
    assert cycles(graph) == []


def packages() -> list[str]:
    """The project's packages: folders of modules, with or without `__init__.py`."""
    folders = [ROOT / package for package in PACKAGES]
    folders += [f for package in PACKAGES for f in (ROOT / package).rglob("*") if f.is_dir()]
    return sorted(
        ".".join(folder.relative_to(ROOT).parts) for folder in folders if any(folder.glob("*.py"))
    )


def test_each_package_imports_alone():
    """`python -c "import <package>"` in a fresh interpreter, for each package by itself."""
    names = packages()
    assert {"flows", "flows.storage", "flows.ingest", "flows.steps", "transforms"} <= set(names)
    failed = {}
    for name in names:
        done = subprocess.run(
            [sys.executable, "-c", f"import {name}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            failed[name] = done.stderr.strip().splitlines()[-1:]
    assert failed == {}
