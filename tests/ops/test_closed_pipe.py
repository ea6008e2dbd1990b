"""Output into a closed pipe (`duplirank nightly | head -1`): the command ends without a
traceback, and a run that published reports success (exit code 0)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flows.tools.query import run_sql
from tests_support import SAMPLE

ROOT = Path(__file__).resolve().parents[2]
PBN = ROOT / "tests" / "data" / "oracles" / "kops_PCH1003_matchpoints" / "PCH1003.pbn"


def into_closed_pipe(args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    """`duplirank ARGS` whose standard output is a pipe nobody reads any more."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte is written
    try:
        return subprocess.run(
            [sys.executable, "-m", "flows.cli", *args],
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=180,
        )
    finally:
        os.close(write)


def assert_quiet(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr


@pytest.mark.parametrize("extra", [[], ["--boards", "--format", "csv"]])
def test_a_command_writing_into_a_closed_pipe_ends_quietly_with_success(extra):
    """`score` writes a page of standings (with --boards ~170 kB: more than a pipe holds)."""
    done = into_closed_pipe(["score", str(PBN), *extra])
    assert_quiet(done)
    assert done.stderr == ""


def test_a_nightly_into_a_closed_pipe_publishes_and_reports_success(harness, tmp_path):
    from prefect.settings import PREFECT_API_URL

    warehouse = tmp_path / "wh"
    done = into_closed_pipe(
        ["nightly", "--quiet", "--landing", str(SAMPLE), "--warehouse", str(warehouse)],
        env={"PREFECT_API_URL": PREFECT_API_URL.value()},
    )
    assert_quiet(done)
    assert done.stderr == ""
    published = run_sql(warehouse, "select count(*) as n from simultane_deal_results")
    assert published["n"][0] > 0
