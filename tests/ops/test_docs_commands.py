"""Every `duplirank` command the README and docs/ show is a command that works.

Each example line of a code block (indented or fenced) is parsed by the real command line; the
ones that need nothing but this machine (no `s3://`, no cluster, no placeholder, no server) run
as written, in order, with `/tmp/…` and `/srv/…` moved into a temporary folder.
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from flows import cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_ENV = re.compile(r"^[A-Z_][A-Z0-9_]*=")
_COMMAND = re.compile(r"^([A-Z_][A-Z0-9_]*=\S*\s+)*(\.venv/bin/)?duplirank\s")
# not on this machine alone: object storage, a cluster, a placeholder, a Prefect server (the
# "Scheduled runs" section and its warehouse are followed by tests/ops/test_deployment.py)
_NOT_HERE = ("s3://", "tcp://", "…", "<", "--runner", "--scheduler", " serve", "duplirank-wh")


def _code_lines(text: str) -> list[str]:
    """The lines of the text's code blocks: fenced, or indented by four spaces."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            lines.append(line.strip())
    return lines


def examples() -> list[tuple[str, str]]:
    """(where, command line) for every `duplirank` example in the docs, `#` comments dropped."""
    found = []
    for doc in DOCS:
        found += [(doc.name, line) for line in _code_lines(doc.read_text()) if _COMMAND.match(line)]
    return found


def _argv(line: str, home: Path) -> tuple[dict[str, str], list[str]]:
    words = shlex.split(line, comments=True)
    env = {}
    while _ENV.match(words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    moved = [re.sub(r"^/(tmp|srv)/", f"{home}/", w) for w in words[1:]]
    return env, moved


def test_the_docs_show_commands():
    names = {doc for doc, _ in examples()}
    assert {"README.md", "cluster.md", "site.md"} <= names


@pytest.mark.parametrize(("doc", "line"), examples(), ids=lambda x: x[:60])
def test_every_example_parses(doc, line, tmp_path):
    _, argv = _argv(line, tmp_path)
    # a synopsis line shows its optional flags in brackets: the rest is parsed
    argv = [w for w in argv if not (w.startswith("[") or w.endswith("]"))]
    cli.build_parser().parse_args(argv)


def test_the_runnable_examples_run_as_written(harness, tmp_path, monkeypatch, capsys):
    runnable = [
        (doc, line)
        for doc, line in examples()
        if doc == "README.md" and not any(mark in line for mark in _NOT_HERE) and "[" not in line
    ]
    assert len(runnable) >= 5, runnable
    monkeypatch.chdir(ROOT)
    # an example without --warehouse uses the warehouse the earlier examples made
    monkeypatch.setenv("DUPLIRANK_WAREHOUSE", str(tmp_path / "wh"))
    for doc, line in runnable:
        env, argv = _argv(line, tmp_path)
        with monkeypatch.context() as patch:
            for key, value in env.items():
                patch.setenv(key, value)
            code = cli.main(argv)
        err = capsys.readouterr().err
        assert code == 0, f"{doc}: {line}\n{err}"


def test_the_readme_table_lists_every_command():
    table = re.findall(r"^\| `duplirank (\w+)", (ROOT / "README.md").read_text(), re.M)
    actions = cli.build_parser()._actions
    commands = next(a for a in actions if isinstance(a, argparse._SubParsersAction))
    assert set(table) == set(commands.choices)
