"""A run that dies where no handler runs (an allocation that aborts in native code, the
kernel's out-of-memory killer) ends with one line and exit code 2. What it staged is removed,
the previous publication stays current and readable, and the next run succeeds
(flows/supervise.py)."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flows.nightly import nightly_run
from flows.runs import ingest_run
from flows.settings import Settings
from flows.storage import manifest as mf
from flows.storage.warehouse import Warehouse

from .conftest import same, snapshot_all

ROOT = Path(__file__).resolve().parents[2]
FAULTY_CLI = Path(__file__).resolve().parent / "faulty_cli.py"
LAYERS = ("bronze", "silver", "gold", "quarantine", "meta")


def run_cli(
    *args: str, env: dict | None = None, preexec_fn=None, fault: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    """`duplirank ARGS` as the command runs it (supervised); `-q` for the commands that show
    progress. `fault`: a fault of tests/storage/faulty_cli.py (e.g. `("abort", POINT)`)."""
    command = [str(FAULTY_CLI), *fault, "--"] if fault else ["-m", "flows.cli"]
    return subprocess.run(
        [sys.executable, *command, *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=180,
        preexec_fn=preexec_fn,
    )


def night(root: Path, landing: Path) -> list[str]:
    """The arguments of a quiet nightly of `landing` into `root`."""
    return ["nightly", "-q", "--no-show", "--warehouse", str(root), "--landing", str(landing)]


def left_behind(root: Path) -> list[str]:
    """What no publication of the warehouse accounts for: data files no manifest lists, folders
    of publications never made current, staging folders."""
    publications = sorted((root / "_publications").iterdir())
    current = (root / "current").resolve()
    listed: set[str] = set()
    left = []
    for folder in publications:
        if folder != current and not (folder / "published").exists():
            left.append(str(folder.relative_to(root)))
            continue
        manifest = mf.parse((folder / "manifest.json").read_bytes(), str(folder))
        listed |= set(mf.files(manifest))
    for layer in LAYERS:
        for path in (root / layer).rglob("*"):
            if path.is_file() and str(path.relative_to(root)) not in listed:
                left.append(str(path.relative_to(root)))
    left += [p.name for p in root.iterdir() if p.name.startswith(("_staging", ".tmp"))]
    return left


@pytest.fixture
def first_night(states, tmp_path) -> Path:
    root = tmp_path / "wh"
    shutil.copytree(states[0], root, symlinks=True)
    return root


@pytest.mark.parametrize(
    ("fault", "death"),
    [
        ("abort", "was aborted (SIGABRT)"),
        ("kill", "was killed (SIGKILL)"),
    ],
)
def test_a_run_that_dies_before_its_swap_ends_with_one_line_and_leaves_nothing(
    states, first_night, api_env, fault, death
):
    _, landing, before, after = states
    version = Warehouse(first_night).version()
    # every file and the views database staged
    done = run_cli(*night(first_night, landing), env=api_env, fault=(fault, "before_manifest"))
    lines = done.stderr.splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"duplirank nightly: the run {death}")
    assert (
        f"nothing was published, publication {version} is current; the files it staged "
        in (lines[0])
    )
    assert done.stdout == ""
    assert left_behind(first_night) == []
    assert Warehouse(first_night).version() == version
    assert same(snapshot_all(first_night), before)  # the previous publication, readable
    nightly_run(Settings(warehouse=first_night, landing=landing))
    assert same(snapshot_all(first_night), after)


def test_a_run_that_dies_after_its_swap_says_its_publication_is_current(
    states, first_night, api_env
):
    _, landing, _, after = states
    version = Warehouse(first_night).version()
    done = run_cli(*night(first_night, landing), env=api_env, fault=("abort", "after_swap"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"duplirank nightly: the run was aborted (SIGABRT): a library stopped the process, most "
        f"often because memory ran out; its publication {version + 1} was published before it "
        f"stopped and is current" + done.stderr.strip().rsplit(" is current", 1)[1]
    ]
    assert "(log: " in done.stderr
    assert same(snapshot_all(first_night), after)
    assert left_behind(first_night) == []


def test_exit_codes_and_output_pass_through_the_supervisor(states, first_night, tmp_path):
    _, landing, _, _ = states
    done = run_cli("ingest", "-q", "--warehouse", str(first_night), str(tmp_path / "nothing"))
    assert done.returncode == 2  # a user error, as before
    assert done.stderr.splitlines() == [
        f"duplirank ingest: error: no such file or folder: {tmp_path / 'nothing'}"
    ]
    done = run_cli("gc", "--dry-run", "--warehouse", str(first_night))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("would delete ")


def test_memory_exhausted_under_a_real_limit_ends_with_one_line(states, first_night):
    """Under an address-space limit that the imports fit in and the ingest does not: whichever
    library meets the limit first (an allocation that aborts, or a `MemoryError`), the run ends
    with exit code 2 and a last line naming memory, and nothing is left."""
    _, landing, before, _ = states
    version = Warehouse(first_night).version()

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1_300 << 20, 1_300 << 20))

    env = {"POLARS_MAX_THREADS": "2"}  # the threads' stacks the same on any machine
    done = run_cli(
        "ingest", "-q", "--warehouse", str(first_night), str(landing), env=env, preexec_fn=limit
    )
    assert done.returncode == 2, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith("duplirank ingest: ") and "memory" in last, done.stderr
    assert left_behind(first_night) == []
    assert Warehouse(first_night).version() == version
    assert same(snapshot_all(first_night), before)
    ingest_run(Settings(warehouse=first_night, landing=landing), [landing])
    assert Warehouse(first_night).version() == version + 1


@pytest.fixture
def api_env(harness) -> dict:
    """The subprocess reports to the session's test server (no server start per run)."""
    from prefect.settings import PREFECT_API_URL

    return {"PREFECT_API_URL": PREFECT_API_URL.value()}
