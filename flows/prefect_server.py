"""The Prefect server a run talks to.

With `PREFECT_API_URL` set, that server is used. Without it, duplirank starts Prefect's
temporary server itself (instead of letting Prefect start one lazily), so that:
- it cannot outlive the run: it is started with `PR_SET_PDEATHSIG`, so the kernel kills it
  when the process that started it dies — SIGKILL included — and it writes to the run's log
  file, not to the run's stdout/stderr (a supervisor waiting on those pipes is not held up);
- its address is exported as `PREFECT_API_URL` before any worker starts, so Dask workers
  (`--runner dask`) report to it instead of each starting a server of their own;
- it costs this process little: the server runs Prefect's own app
  (`prefect.server.api.server:create_app` under uvicorn, as Prefect's `SubprocessASGIServer`
  runs it) without this process importing Prefect's server modules (~2 s of CPU), and a run
  launches it as soon as it starts (`launch_ahead`), so that it comes up in its own process
  while this one loads the flow's libraries; `prefect_api` then waits for it to answer.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

from flows.errors import UserError

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


class TemporaryServer:
    """Prefect's temporary server, bound to the life of this process."""

    log = None  # a binary file for the server's output (else it is discarded)

    def __init__(self) -> None:
        self.port: int | None = None
        self.server_process: subprocess.Popen[Any] | None = None
        self.running = False

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def command(self) -> list[str]:
        import prefect

        app = ["--factory", "prefect.server.api.server:create_app"]
        where = ["--host", "127.0.0.1", "--port", str(self.port)]
        rest = ["--log-level", "error", "--lifespan", "on"]
        home = ["--app-dir", str(prefect.__module_path__.parent)]
        return [sys.executable, "-m", "uvicorn", *home, *app, *where, *rest]

    def _run_uvicorn_command(self) -> subprocess.Popen[Any]:
        from prefect.settings import get_current_settings

        env = {
            **os.environ,
            "PREFECT_UI_ENABLED": "0",
            "PREFECT__SERVER_EPHEMERAL": "1",
            "PREFECT__SERVER_FINAL": "1",
            **get_current_settings().to_environment_variables(exclude_unset=True),
        }
        env.pop("PREFECT_API_URL", None)
        return subprocess.Popen(
            self.command(),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log or subprocess.DEVNULL,
            stderr=self.log or subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )

    def launch(self) -> None:
        """Start the server's process on a free port; `wait` until it answers."""
        if self.server_process is None:
            self.port = _free_port()
            self.server_process = self._run_uvicorn_command()
            self.running = True

    def wait(self, timeout: float | None = None) -> None:
        import httpx
        from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS

        limit = timeout or PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value()
        deadline = time.monotonic() + limit
        with httpx.Client() as client:
            while True:
                assert self.server_process is not None
                code = self.server_process.poll()
                if code == 3:  # uvicorn: the port was taken meanwhile
                    self.server_process = None
                    self.launch()
                    continue
                if code is not None:
                    raise RuntimeError(
                        f"the temporary Prefect server exited with code {code} (see the run log)"
                    )
                with contextlib.suppress(httpx.TransportError):
                    if client.get(f"{self.api_url}/health", timeout=5).status_code == 200:
                        return
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the temporary Prefect server did not answer within {limit:.0f} s "
                        "(setting PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS)"
                    )
                time.sleep(0.05)

    def start(self, timeout: float | None = None) -> None:
        try:
            self.launch()
            self.wait(timeout)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        process, self.server_process = self.server_process, None
        self.running = False
        if process is not None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_class() -> type[TemporaryServer]:
    return TemporaryServer


_AHEAD: list[TemporaryServer] = []  # launched by `launch_ahead`, not yet used by a flow


def _configured() -> bool:
    """A server is configured (`PREFECT_API_URL`, in the environment or Prefect's profile)."""
    from prefect.settings import PREFECT_API_URL

    return bool(os.environ.get("PREFECT_API_URL") or PREFECT_API_URL.value())


def launch_ahead(log_file=None) -> None:
    """With no server configured, launch the temporary server now (a run calls this when it
    starts): it starts in its own process while this one imports the flow's libraries; the
    run's `prefect_api` waits for it. Stopped by `stop_ahead` if no flow uses it."""
    if _AHEAD or _configured():
        return
    server = server_class()()
    server.log = open(log_file, "ab") if log_file else None  # noqa: SIM115 (closed at stop)
    server.launch()
    _AHEAD.append(server)


def stop_ahead() -> None:
    """Stop a server `launch_ahead` started that no flow used (a run that failed before)."""
    while _AHEAD:
        server = _AHEAD.pop()
        server.stop()
        if server.log is not None:
            server.log.close()


@contextlib.contextmanager
def prefect_api(log_file=None) -> Iterator[str | None]:
    """The Prefect API URL for the flows of this process; starts and stops the temporary
    server when none is configured. Yields the URL (None when an external server is used)."""
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
        PREFECT_LOGGING_TO_API_ENABLED,
        temporary_settings,
    )

    if not _AHEAD and (os.environ.get("PREFECT_API_URL") or PREFECT_API_URL.value()):
        # A running server: flow-run heartbeats are off unless asked for (setting
        # PREFECT_FLOWS_HEARTBEAT_FREQUENCY, e.g. for an automation that marks a silent run as
        # crashed): their thread sleeps in one-second steps and each run waited for it to stop
        # (measured: 0.9 s of a 10 s nightly).
        if "PREFECT_FLOWS_HEARTBEAT_FREQUENCY" in os.environ:
            yield None
            return
        with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
            yield None
        return

    from flows import progress, runlog

    if _AHEAD:
        server = _AHEAD.pop()
    else:
        server = server_class()()
        path = log_file or runlog.current()
        server.log = open(path, "ab") if path else None  # noqa: SIM115 (closed below)
    try:
        with progress.stage("Prefect server"):
            server.start()
    except BaseException:
        server.stop()
        if server.log is not None:
            server.log.close()
        raise
    os.environ["PREFECT_API_URL"] = server.api_url  # for workers started from here
    try:
        # nothing watches heartbeats on a temporary server, and stopping their thread makes
        # every flow run wait up to one second more (it sleeps in 1 s steps)
        updates = {
            PREFECT_API_URL: server.api_url,
            PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None,
            PREFECT_LOGGING_TO_API_ENABLED: False,  # it stops with the run: nothing to ship
        }
        with temporary_settings(updates=updates):
            try:
                yield server.api_url
            finally:
                _deliver_events()
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        server.stop()
        if server.log is not None:
            server.log.close()


def _deliver_events(timeout_s: float = 10.0) -> None:
    """Send the run's pending Prefect events to its server before the server stops. A worker
    left bound to a stopped server retries its sends at the next drain (at exit, or when a
    later server of the same process stops): minutes of waiting for nothing."""
    from prefect.events.worker import EventsWorker

    try:
        EventsWorker.drain_all(timeout=timeout_s)
    except Exception:  # noqa: BLE001 (events are a convenience: never fail a run on them)
        pass


def running_server() -> str:
    """The URL of the running Prefect server `PREFECT_API_URL` names (what `serve` needs: a
    temporary server never runs schedules); a user error when none is set or answers."""
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    if not url:
        raise UserError(
            "serve needs a Prefect server: run `.venv/bin/prefect server start` and set "
            "PREFECT_API_URL=http://127.0.0.1:4200/api (or schedule `duplirank nightly` with cron)"
        )
    import httpx

    try:
        response = httpx.get(url.rstrip("/") + "/health", timeout=5)
        response.raise_for_status()
    except httpx.HTTPError as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise UserError(
            f"no Prefect server answers at PREFECT_API_URL={url} ({reason}); "
            "start it with `.venv/bin/prefect server start`"
        ) from None
    return url
