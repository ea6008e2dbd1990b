"""Run logs: Prefect's logs to one file per run (never the terminal), the temporary server
shown as a stage and its output kept in the log, old logs pruned, `serve` in the platform's
time zone."""

from __future__ import annotations

import io
import logging
import os
import sys
import time

import pytest
from prefect.settings import PREFECT_API_URL, temporary_settings
from rich.console import Console

from flows import nightly, progress, runlog
from flows.prefect_server import prefect_api
from flows.settings import load_settings


@pytest.fixture
def captured(tmp_path):
    import prefect  # noqa: F401  (its logging configuration is what capture redirects)

    path = runlog.capture(tmp_path / "run.log")
    yield path
    runlog.release()


def test_prefect_logs_go_to_the_file_not_the_terminal(captured, capfd):
    logging.getLogger("prefect.flow_runs").info("flow run info line")
    logging.getLogger("prefect").warning("prefect warning line")
    logging.getLogger("duplirank").info("our own line")
    logging.getLogger("some.library").warning("a library's warning")
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    text = captured.read_text()
    for line in ("flow run info line", "prefect warning line", "our own line", "a library's"):
        assert line in text
    assert runlog.current() == captured


def test_release_puts_the_terminal_handlers_back(tmp_path):
    import prefect  # noqa: F401

    root = logging.getLogger()
    before = list(root.handlers), logging.getLogger("prefect").level
    assert any(type(h).__name__ == "PrefectConsoleHandler" for h in before[0])
    runlog.capture(tmp_path / "a.log")
    terminal = [h for h in root.handlers if type(h).__name__ == "PrefectConsoleHandler"]
    assert terminal == [] and any(isinstance(h, logging.FileHandler) for h in root.handlers)
    runlog.release()
    assert (list(root.handlers), logging.getLogger("prefect").level) == before
    assert runlog.current() is None


def test_logs_live_in_the_state_folder_and_old_ones_are_pruned(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    folder = runlog.log_dir()
    assert folder == tmp_path / "state" / "duplirank" / "logs"
    folder.mkdir(parents=True)
    old, recent = folder / "nightly-old.log", folder / "nightly-recent.log"
    old.write_text("x")
    recent.write_text("y")
    long_ago = time.time() - (runlog.KEEP_DAYS + 1) * 86400
    os.utime(old, (long_ago, long_ago))
    path = runlog.new_log_path("backfill")
    assert path.parent == folder and path.name.startswith("backfill-")
    assert not old.exists() and recent.exists()


def test_the_log_dir_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("DUPLIRANK_LOG_DIR", str(tmp_path / "logs"))
    assert load_settings().log_dir == tmp_path / "logs"


def fake_server_class():
    """Prefect's temporary server as duplirank starts it, but its process only prints on
    stdout and stderr (no server to wait for)."""
    from flows.prefect_server import server_class

    class FakeServer(server_class()):
        started: list = []

        def command(self):
            code = "import sys; print('server stdout'); print('server traceback', file=sys.stderr)"
            return [sys.executable, "-c", code]

        def start(self, timeout=None):
            FakeServer.started.append(self)
            self._run_uvicorn_command().wait()

        @property
        def api_url(self):
            return "http://127.0.0.1:1/api"

        def stop(self):
            pass

    return FakeServer


def test_the_temporary_server_is_a_stage_and_its_output_goes_to_the_log(
    captured, capfd, monkeypatch
):
    fake = fake_server_class()
    monkeypatch.setattr("flows.prefect_server.server_class", lambda: fake)
    buffer = io.StringIO()
    progress.configure("plain", Console(file=buffer))
    try:
        with temporary_settings(restore_defaults={PREFECT_API_URL}):
            with prefect_api() as url:
                assert url == "http://127.0.0.1:1/api"
                assert os.environ["PREFECT_API_URL"] == url  # for workers started from here
    finally:
        progress.configure("plain")
    assert "PREFECT_API_URL" not in os.environ
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "starting Prefect server…"
    assert lines[1].startswith("Prefect server: done in")
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # nothing from the server process reached the terminal
    text = captured.read_text()
    assert "server stdout" in text and "server traceback" in text


def test_no_temporary_server_when_one_is_configured(monkeypatch):
    fake = fake_server_class()
    monkeypatch.setattr("flows.prefect_server.server_class", lambda: fake)
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:4200/api"}):
        with prefect_api() as url:
            assert url is None
    assert fake.started == []


def test_a_running_server_gets_no_flow_heartbeats_unless_they_are_asked_for(monkeypatch):
    """The heartbeat thread sleeps in 1 s steps: every flow run waited up to 1 s for it."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY as HEARTBEAT

    monkeypatch.delenv("PREFECT_FLOWS_HEARTBEAT_FREQUENCY", raising=False)
    updates = {PREFECT_API_URL: "http://127.0.0.1:4200/api", HEARTBEAT: 180}
    with temporary_settings(updates=updates):
        with prefect_api():
            assert HEARTBEAT.value() is None
        assert HEARTBEAT.value() == 180
        monkeypatch.setenv("PREFECT_FLOWS_HEARTBEAT_FREQUENCY", "180")  # the user's choice
        with prefect_api():
            assert HEARTBEAT.value() == 180


def test_serve_registers_the_cron_in_the_platform_time_zone(monkeypatch):
    calls = []
    monkeypatch.setattr(nightly.nightly_flow, "serve", lambda **kwargs: calls.append(kwargs))
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    monkeypatch.setenv("DUPLIRANK_TIMEZONE", "America/Montreal")
    monkeypatch.setenv("DUPLIRANK_NIGHTLY_CRON", "15 4 * * *")
    nightly.serve(load_settings())
    (call,) = calls
    (schedule,) = call["schedules"]
    assert schedule.cron == "15 4 * * *" and schedule.timezone == "America/Montreal"
    assert set(call["parameters"]) == {"landing", "warehouse", "project"}


def test_a_server_launched_ahead_is_the_one_the_flow_waits_for(monkeypatch):
    from flows import prefect_server

    fake = fake_server_class()
    monkeypatch.setattr("flows.prefect_server.server_class", lambda: fake)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        prefect_server.launch_ahead()
        ahead = list(prefect_server._AHEAD)
        assert len(ahead) == 1 and ahead[0].server_process is not None  # launched, not waited
        with prefect_api() as url:
            assert url == "http://127.0.0.1:1/api"
    assert fake.started == ahead and prefect_server._AHEAD == []


def test_a_server_launched_ahead_that_no_flow_used_is_stopped(monkeypatch):
    from flows import prefect_server

    class Sleeper(prefect_server.server_class()):
        def command(self):
            return [sys.executable, "-c", "import time; time.sleep(60)"]

    monkeypatch.setattr("flows.prefect_server.server_class", lambda: Sleeper)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        prefect_server.launch_ahead()
    process = prefect_server._AHEAD[0].server_process
    assert process.poll() is None
    prefect_server.stop_ahead()
    assert process.poll() is not None and prefect_server._AHEAD == []


def test_no_server_is_launched_ahead_when_one_is_configured(monkeypatch):
    from flows import prefect_server

    fake = fake_server_class()
    monkeypatch.setattr("flows.prefect_server.server_class", lambda: fake)
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:4200/api"}):
        prefect_server.launch_ahead()
    assert prefect_server._AHEAD == []
