"""Whole processes, timed as a user waits for them (quality.md: commands are measured whole
process against whole process: interpreter start, imports, Prefect, publication).

`command(...)` is what the `duplirank` console script runs (`from flows.cli import main`),
started in this checkout; `timed(...)` runs one process and returns its wall time, its CPU
time (user + system, every thread, from `wait4`) and its peak RSS. The bench scripts that
use it stay small (no Polars, no DuckDB in their own process), so the peak of a child is its
own. `prepare()` compiles the project's modules once, as an installed package has them: an
environment with `PYTHONDONTWRITEBYTECODE` set would otherwise make every process compile
duplirank's sources again (measured: ~0.7 s more for `duplirank sql`).
"""

from __future__ import annotations

import compileall
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSOLE_SCRIPT = "import sys; from flows.cli import main; sys.exit(main())"


def prepare(root: Path = ROOT) -> None:
    """Bytecode of the project's packages, written next to them (as `pip install` does)."""
    for package in ("flows", "transforms"):
        compileall.compile_dir(root / package, quiet=1)


def environment(**extra: str) -> dict[str, str]:
    """The children's environment: this one, bytecode caches read, the checkout importable."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return env | extra


def command(*args: str) -> list[str]:
    """`duplirank ARGS` with this checkout's code (the venv's script imports its own copy)."""
    return [sys.executable, "-c", CONSOLE_SCRIPT, *args]


def python(code: str, *args: str) -> list[str]:
    return [sys.executable, "-c", code, *args]


# A small process starts the command and measures it with `wait4`: a child forked from a
# big process (one that imported Prefect to start a server) would report that process's own
# memory as its peak (Linux keeps the high-water mark across exec).
LAUNCHER = r"""
import json, os, subprocess, sys, time
out, err = open(sys.argv[1], "wb"), open(sys.argv[2], "wb")
started = time.perf_counter()
child = subprocess.Popen(sys.argv[3:], stdin=subprocess.DEVNULL, stdout=out, stderr=err)
_, status, usage = os.wait4(child.pid, 0)
wall = time.perf_counter() - started
print(json.dumps({"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "peak_rss_bytes": usage.ru_maxrss * 1024,
                  "code": os.waitstatus_to_exitcode(status)}))
"""


def timed(
    cmd: list[str],
    env: dict[str, str] | None = None,
    logs: Path | None = None,
    check: bool = True,
    cwd: Path = ROOT,
) -> dict:
    """Run `cmd` from the checkout's folder (`cwd`: another checkout, whose code `command`
    then runs): its wall and CPU time (user + system, every thread) and peak RSS, its stdout
    and stderr. A failing command stops the bench (`check`)."""
    logs = logs or Path(os.environ.get("TMPDIR", "/tmp"))
    out, err = logs / f"bench-{os.getpid()}.out", logs / f"bench-{os.getpid()}.err"
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, str(out), str(err), *cmd],
        cwd=cwd,
        env=env or environment(),
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout)
    result["stdout"] = out.read_text(errors="replace")
    result["stderr"] = err.read_text(errors="replace")
    out.unlink()
    err.unlink()
    if check and result["code"]:
        sys.exit(f"{' '.join(cmd[:5])}… failed ({result['code']}):\n{result['stderr'][-3000:]}")
    return result


def median(runs: list[dict], key: str = "wall_s") -> float:
    return statistics.median(r[key] for r in runs)


def load() -> float:
    return round(os.getloadavg()[0], 2)


def fresh(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


STAGE = re.compile(r"^  (\S.*?)\s+(\d+(?:\.\d+)?) (ms|s|min)\b")


def stage_times(stderr: str) -> dict[str, float]:
    """The run summary a run prints on stderr (`  score simultane  1.2 s …`): stage → seconds,
    and the whole run as the command measures it inside its process (`done in …`)."""
    stages: dict[str, float] = {}
    inside = False
    for line in stderr.splitlines():
        if line.startswith("run summary"):
            inside = True
        elif line.startswith("done in "):
            stages["whole run (in process)"] = float(line.split()[2])
        elif inside and (match := STAGE.match(line)):
            value, unit = float(match[2]), match[3]
            stages[match[1]] = value * {"ms": 0.001, "s": 1, "min": 60}[unit]
        elif not line.startswith("  "):
            inside = False
    return stages


def start_prefect_server(work: Path):
    """A Prefect server for a whole bench (its own database and home), as production keeps one
    running; exports its PREFECT_API_URL in this process's environment (the children's)."""
    home = fresh(work / "prefect-home")
    os.environ["PREFECT_HOME"] = str(home)
    os.environ.pop("PREFECT_API_URL", None)
    sys.path.insert(0, str(ROOT))
    from flows.prefect_env import use_prefect_defaults  # a long start timeout under load

    use_prefect_defaults()
    from flows.prefect_server import server_class  # it dies with this process, even on SIGKILL

    server = server_class()()
    started = time.perf_counter()
    server.start()
    os.environ["PREFECT_API_URL"] = server.api_url
    return server, time.perf_counter() - started
