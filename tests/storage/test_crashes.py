"""Kill a real nightly (SIGKILL) at every publish step and at random moments of its work: after
each, every table is as before the run or as after it, no process is left, and the next run
gives the tables of an uninterrupted run. SIGTERM and Ctrl-C stop a run cleanly.

The runs are the command line started through `faulty_cli.py`, which patches the seams of the
warehouse's transaction: a kill at a point of the commit, or a pause at a chosen staged write
that the test ends with SIGKILL (so the kill always lands before the run ends)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.nightly import nightly_run
from flows.settings import Settings

from .conftest import same, snapshot_all

ROOT = Path(__file__).resolve().parents[2]
FAULTY_CLI = Path(__file__).resolve().parent / "faulty_cli.py"
POINTS = ["before_manifest", "before_views", "before_swap", "after_swap"]
# the second night's staged writes (50 data files) and commit points (4): a random moment of
# the run is the pause at one of them
MOMENTS = 54


def nightly_args(root: Path, landing: Path) -> list[str]:
    return ["nightly", "--no-show", "--warehouse", str(root), "--landing", str(landing)]


def start_nightly(root: Path, landing: Path, env: dict, fault: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(FAULTY_CLI), *fault, "--", *nightly_args(root, landing)],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def group_alive(pgid: int) -> list[int]:
    """Processes still running in the killed run's process group (its session)."""
    alive = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == pgid:
                    alive.append(int(entry))
            except ProcessLookupError:
                pass
    return alive


def wait_group_gone(pgid: int, seconds: float = 10) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := group_alive(pgid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


@pytest.fixture
def api_env(harness) -> dict:
    """The subprocess reports to the session's test server (no server start per run)."""
    from prefect.settings import PREFECT_API_URL

    return {"PREFECT_API_URL": PREFECT_API_URL.value()}


def killed_then_rerun(states, tmp_path, run, ends=(-signal.SIGKILL,)) -> None:
    before_root, landing, before, after = states
    root = tmp_path / "wh"
    shutil.copytree(before_root, root, symlinks=True)
    proc = run(root, landing)
    assert proc.wait(60) in ends, proc.stderr.read().decode()[-2000:]
    assert wait_group_gone(proc.pid) == []
    now = snapshot_all(root)
    assert same(now, before) or same(now, after)
    nightly_run(Settings(warehouse=root, landing=landing))
    assert same(snapshot_all(root), after)


@pytest.mark.parametrize("point", POINTS)
def test_sigkill_at_each_publish_step(states, tmp_path, point, api_env):
    # the run's process is killed; the process watching it (flows/supervise.py) ends with 2
    def run(root, landing):
        return start_nightly(root, landing, api_env, ["kill", point])

    killed_then_rerun(states, tmp_path, run, ends=(2,))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sigkill_at_a_random_moment(states, tmp_path, seed, api_env):
    moment = random.Random(seed).randint(1, MOMENTS)
    paused = tmp_path / "paused"

    def run(root, landing):
        proc = start_nightly(root, landing, api_env, ["pause", str(moment), str(paused)])
        deadline = time.monotonic() + 60
        while not paused.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert paused.exists(), f"the run never reached moment {moment} of {MOMENTS}"
        os.killpg(proc.pid, signal.SIGKILL)
        return proc

    killed_then_rerun(states, tmp_path, run)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_no_process_outlives_a_killed_run_with_its_own_prefect_server(states, tmp_path, sig):
    """Without PREFECT_API_URL a run starts Prefect's temporary server: it dies with the run,
    whatever signal ends it (only the run's own process is signalled)."""
    before_root, landing, _, _ = states
    root = tmp_path / "wh"
    shutil.copytree(before_root, root, symlinks=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", *nightly_args(root, landing)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    # the command, the run's process it watches (flows/supervise.py), the server it starts
    while len(group_alive(proc.pid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(group_alive(proc.pid)) >= 3, "the temporary server never started"
    # past the run's imports: CPython ends a process with SIGINT, whatever the code it exits
    # with, once a KeyboardInterrupt was raised inside `exec` (dataclasses create their
    # methods so while modules load)
    time.sleep(2.0)
    os.kill(proc.pid, sig)  # the command's process only, as a supervisor would
    proc.wait(30)
    assert wait_group_gone(proc.pid) == []
    if sig != signal.SIGKILL:
        err = proc.stderr.read().decode()
        assert proc.returncode in (130, 143), err
        assert err.strip().splitlines()[-1].startswith("duplirank nightly: ")
