"""The Prefect server a run talks to.

With `PREFECT_API_URL` set, that server is used. Without it, duplirank starts Prefect's
temporary server itself (instead of letting Prefect start one lazily), so that:
- it cannot outlive the run: it is started with `PR_SET_PDEATHSIG`, so the kernel kills it
  when the process that started it dies — SIGKILL included — and it writes to the run's log
  file, not to the run's stdout/stderr (a supervisor waiting on those pipes is not held up);
- its address is exported as `PREFECT_API_URL` before any worker starts, so Dask workers
  (`--runner dask`) report to it instead of each starting a server of their own.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


def server_class():
    from prefect.server.api.server import SubprocessASGIServer

    class OwnedServer(SubprocessASGIServer):
        """Prefect's temporary server, bound to the life of this process."""

        log = None

        def __new__(cls, *args: Any, **kwargs: Any):
            return object.__new__(cls)  # not Prefect's per-port singleton: one per run

        def stop(self) -> None:
            super().stop()
            self.running = False

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
            )  # fmt: skip

    return OwnedServer


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

    if os.environ.get("PREFECT_API_URL") or PREFECT_API_URL.value():
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

    server = server_class()()
    path = log_file or runlog.current()
    server.log = open(path, "ab") if path else None  # noqa: SIM115 (closed below)
    try:
        with progress.stage("Prefect server"):
            server.start()
    except BaseException:
        server.stop()
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
