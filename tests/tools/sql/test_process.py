"""`duplirank sql` as a real process: Ctrl-C, the timeout, memory that does not grow with the
rows, a closed pipe, and the Landlock sandbox holding on its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.tools.sandbox import landlock_abi

from .conftest import publish_sample, snapshot

ENDLESS = "select count(*) from range(1e12::bigint)"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("process") / "wh"
    publish_sample(root)
    return root


def command(root: Path, *argv: str, python: str | None = None) -> list[str]:
    """The `duplirank` command (`python -m flows.cli`, as the entry point runs it: sandboxed)."""
    prefix = [sys.executable, "-c", python] if python else [sys.executable, "-m", "flows.cli"]
    return [*prefix, "sql", *argv, "--warehouse", str(root)]


def environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "DUPLIRANK_SQL__TEMP_DIRECTORY": str(tmp_path / "spill")}


def test_ctrl_c_interrupts_a_running_query(root, tmp_path):
    process = subprocess.Popen(
        command(root, ENDLESS),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(tmp_path),
    )
    status = Path(f"/proc/{process.pid}/status")
    # imports, connection, sandbox (slow on a busy machine), then the query running
    deadline = time.monotonic() + (60 if landlock_abi() else 3)
    sandboxed = False
    while not sandboxed and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
        sandboxed = status.exists() and "NoNewPrivs:\t1" in status.read_text()
    time.sleep(1)
    assert process.poll() is None
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    out, err = process.communicate(timeout=30)
    assert time.monotonic() - sent < 5
    assert process.returncode == 130 and out == ""
    assert err == "duplirank sql: interrupted\n"
    if landlock_abi():
        assert sandboxed  # deny_writes ran (it sets no_new_privs before restricting)


def test_a_query_stops_at_its_timeout_with_one_line(root, tmp_path):
    started = time.monotonic()
    done = subprocess.run(
        command(root, ENDLESS, "--timeout", "2"),
        capture_output=True,
        text=True,
        env=environment(tmp_path),
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "duplirank sql: error: query stopped after 2 s (--timeout; setting sql.timeout_s)\n"
    )
    assert time.monotonic() - started < 15  # interpreter start-up included


# Linux counts in a child's ru_maxrss its parent's memory before `exec` (here pytest's): the
# command is started by a small launcher, so that the figure is the command's own.
LAUNCHER = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n"
)


def peak_rss_mb(argv: list[str], env: dict[str, str]) -> float:
    launched = subprocess.run(
        [sys.executable, "-S", "-c", LAUNCHER, *argv], env=env, capture_output=True, text=True
    )
    code, rss_kib = map(int, launched.stdout.split())
    assert code == 0
    return rss_kib / 1024


@pytest.mark.parametrize("fmt", ["csv"])  # jsonl and json: bench/bench_sql.py
def test_memory_does_not_grow_with_the_rows_printed(root, tmp_path, fmt):
    """Ten times the rows (2 M rows: ~100 MB of CSV): the peak RSS stays put."""

    def query(n):
        return f"select i, md5(i::varchar) as m, [i, i + 1] as l from range({n}) t(i)"

    env = environment(tmp_path)
    small = peak_rss_mb(command(root, query(200_000), "--format", fmt), env)
    large = peak_rss_mb(command(root, query(2_000_000), "--format", fmt), env)
    assert large - small < 100, (small, large)


def test_a_reader_that_goes_away_stops_the_query_quietly(root, tmp_path):
    reader = subprocess.Popen(
        command(root, "select * from range(1e12::bigint)", "--format", "csv"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(tmp_path),
    )
    assert reader.stdout.readline() == b"range\n"
    reader.stdout.close()  # as `| head -1` does
    assert reader.wait(timeout=30) == 0
    assert reader.stderr.read() == b""


@pytest.mark.skipif(not landlock_abi(), reason="no Landlock in this kernel")
def test_the_sandbox_alone_stops_a_write_the_statement_check_would_let_through(root, tmp_path):
    """With check_statement's tree walk switched off, a COPY inside a SELECT reaches DuckDB,
    whose file limits allow the published file it targets: the kernel still refuses it."""
    published = next((root / "gold" / "t").glob("month=2026-11/*.parquet"))
    attack = (
        "with x as (copy (select 'forged' as month, 9999 as x) to "
        f"'{published}' (format parquet, use_tmp_file false)) select * from x"
    )
    unchecked = (
        "import sys; import flows.tools.query.statement as q; q._not_reading = lambda sql: None; "
        "from flows import cli; sys.argv[0] = 'duplirank'; sys.exit(cli.main())"
    )
    before = snapshot(root)
    done = subprocess.run(
        command(root, attack, python=unchecked),
        capture_output=True,
        text=True,
        env=environment(tmp_path),
        timeout=60,
    )
    assert done.returncode == 2 and "Permission denied" in done.stderr, done.stderr
    assert snapshot(root) == before


@pytest.mark.skipif(not landlock_abi(), reason="no Landlock in this kernel")
def test_deny_writes_leaves_only_the_given_folders_writable(tmp_path):
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    allowed.mkdir()
    other.mkdir()
    (other / "kept.txt").write_text("kept")
    script = f"""
import os
from pathlib import Path
from flows.tools.sandbox import deny_writes
assert deny_writes([Path({str(allowed)!r})])
Path({str(allowed)!r}, "new.txt").write_text("ok")
os.mkdir({str(allowed)!r} + "/sub")
denied = []
for attempt in (
    lambda: Path({str(other)!r}, "new.txt").write_text("no"),
    lambda: open({str(other)!r} + "/kept.txt", "a"),
    lambda: os.truncate({str(other)!r} + "/kept.txt", 0),
    lambda: os.unlink({str(other)!r} + "/kept.txt"),
    lambda: os.rename({str(other)!r} + "/kept.txt", {str(other)!r} + "/moved.txt"),
    lambda: os.rename({str(allowed)!r} + "/new.txt", {str(other)!r} + "/new.txt"),
    lambda: os.mkdir({str(other)!r} + "/sub"),
    lambda: os.symlink("/etc/passwd", {str(other)!r} + "/link"),
):
    try:
        attempt()
    except PermissionError:
        denied.append(True)
print(len(denied), open({str(other)!r} + "/kept.txt").read())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "8 kept\n"
    assert sorted(p.name for p in other.iterdir()) == ["kept.txt"]
    assert sorted(p.name for p in allowed.iterdir()) == ["new.txt", "sub"]
