"""Prefect defaults for a machine with no Prefect server (import before `prefect`).

With no `PREFECT_API_URL`, each process starts a temporary local Prefect server. Its state
(`PREFECT_HOME`: the server's database, profiles) goes to the user's state folder,
`$XDG_STATE_HOME/duplirank/prefect` (`~/.local/state/duplirank/prefect`), never into the
install folder; give the server time to start on a cold machine, and turn analytics off
(server and client).
Values already in the environment win (e.g. `PREFECT_HOME=~/.prefect` to share Prefect's own
profile and database).
"""

import contextlib
import os
import sys

from flows.runlog import state_dir

if "PREFECT_HOME" not in os.environ:
    os.environ["PREFECT_HOME"] = str(state_dir() / "prefect")
    try:  # Prefect creates its home on import, but not the folders above it
        (state_dir() / "prefect").mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: Prefect warns and runs without it
        pass
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")  # the client's telemetry (and its notice) too
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")


def start_temporary_server() -> None:
    """Start Prefect's temporary server now, as the progress stage "Prefect server".

    Prefect would start it anyway on the first flow call, silently (5–10 s); starting it here
    shows it. Nothing to do when a server is configured (`PREFECT_API_URL`, the test harness)
    or this process's temporary server is already up. When the run logs to a file
    (`flows/runlog.py`), the server process writes there too: its output (e.g. tracebacks of
    events still being recorded when it is stopped at exit) never reaches the terminal.
    """
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL

    from flows import progress, runlog

    if PREFECT_API_URL.value():
        return
    server = SubprocessASGIServer()
    if server.running:
        return
    log = runlog.current()
    if log is not None:
        launch = server._run_uvicorn_command  # Prefect starts the process with our stdio

        def launch_into_log():
            with _stdio_into(log):
                return launch()

        server._run_uvicorn_command = launch_into_log
    with progress.stage("Prefect server"):
        server.start()


@contextlib.contextmanager
def _stdio_into(path):
    """File descriptors 1 and 2 point at `path` (appended) for a child process to inherit."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.dup2(target, 1)
        os.dup2(target, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (target, *saved):
            os.close(fd)
