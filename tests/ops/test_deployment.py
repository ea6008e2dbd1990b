"""The nightly's deployments. End to end (`test_both_deployments_run_on_a_real_server`): a real
`prefect server start`, `duplirank serve` and `prefect deploy` + a process worker, runs that
complete, wait for each other, fail with one line. Then their parts: prefect.yaml names the real
flows and takes its schedule and parameters from the settings, the flows' parameters are a few
locations (never the settings), a run loads its settings where its parameters say, transient
I/O is retried."""

from __future__ import annotations

import errno
import importlib
import itertools
import os
from datetime import date
from pathlib import Path

import pytest
import yaml
from prefect import Flow

from flows.errors import UserError
from flows.settings import Settings
from tests_support import SAMPLE

ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- end to end
# Every wait has a limit: a run or a process that never comes fails the test with the logs of
# the processes it started, and every one of them is killed at the end, whatever happened.
CRON, TIMEZONE = "15 4 * * 1-5", "America/Montreal"  # not the defaults: taken from settings
SECRET = "e2e-s3cr3t-never-stored"
LIMIT_S = 240  # for the runs of both deployments to end, from the moment they are triggered


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _descendants(pid: int) -> list[int]:
    """The processes below `pid` (Prefect starts each flow run in a session of its own)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Processes:
    """The long-running processes of a test, each in a session of its own, its output in a log
    file; `stop` ends each one's process groups and those of every process below it."""

    def __init__(self, folder: Path, env: dict[str, str]):
        self.folder, self.env, self.started = folder, env, {}

    def start(self, name: str, *args: str, **env: str):
        import subprocess

        with open(self.folder / f"{name}.log", "wb") as log:
            process = subprocess.Popen(
                args,
                cwd=ROOT,
                env={**self.env, **env},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.started[name] = process
        return process

    def finish(self, name: str, timeout: float) -> None:
        """Wait for a process that ends by itself; it must succeed."""
        code = self.started[name].wait(timeout)
        assert code == 0, f"{name} exited with {code}:\n{self.logs()}"

    def logs(self) -> str:
        return "\n".join(
            f"--- {name}\n" + (self.folder / f"{name}.log").read_text(errors="replace")[-3000:]
            for name in self.started
        )

    def stop(self) -> None:
        import signal
        import time

        groups = set()
        for process in self.started.values():
            for pid in (process.pid, *_descendants(process.pid)):
                try:
                    groups.add(os.getpgid(pid))
                except ProcessLookupError:
                    pass
        groups.discard(os.getpgrp())
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for group in groups:
                try:
                    os.killpg(group, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and any(
                p.poll() is None for p in self.started.values()
            ):
                time.sleep(0.1)
        for process in self.started.values():
            process.wait(5)


def _wait(what: str, found, processes: Processes, timeout: float, state=lambda: ""):
    """`found()`'s first true value, polled until `timeout` (seconds); else the test fails with
    `state()` and the processes' logs."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = found()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout} s {state()}\n{processes.logs()}")
        time.sleep(0.5)


def test_both_deployments_run_on_a_real_server(tmp_path):
    """`duplirank serve` and `prefect deploy --all` + `prefect worker start`, as the README says,
    on a `prefect server start` of the test's own. On each deployment, two runs triggered at
    once both complete, one after the other (Prefect's concurrency limit: the second waits),
    and publish; a run whose landing folder does not exist ends Failed with the one line of
    its user error. The schedule is the settings' cron in the platform time zone, and neither
    the deployment nor its runs record a setting's value or a secret."""
    import sys

    import httpx
    from prefect.client.orchestration import get_client
    from prefect.client.schemas import filters
    from prefect.client.schemas.objects import ConcurrencyLimitStrategy
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_CLIENT_RETRY_EXTRA_CODES,
        temporary_settings,
    )

    from flows.artifacts import SUMMARY_KEY
    from flows.nightly import DEPLOYMENT, USER_ERROR
    from flows.tools.query import run_sql

    url = f"http://127.0.0.1:{_free_port()}/api"
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_API_URL": url,
        "PREFECT_SERVER_UI_ENABLED": "false",
        # a run waiting for the deployment's slot retries after 1 s, and `serve` and the worker
        # look for runs every second (30 s, 10 s and 10 s by default)
        "PREFECT_SERVER_DEPLOYMENTS_CONCURRENCY_SLOT_WAIT_SECONDS": "1",
        "PREFECT_RUNNER_POLL_FREQUENCY": "1",
        "PREFECT_WORKER_QUERY_SECONDS": "1",
        # SQLite's lock on a loaded machine answers 500 at times: every client tries again
        "PREFECT_CLIENT_RETRY_EXTRA_CODES": "500",
        "DUPLIRANK_NIGHTLY_CRON": CRON,
        "DUPLIRANK_TIMEZONE": TIMEZONE,
        "DUPLIRANK_STORAGE__SECRET_ACCESS_KEY": SECRET,
    }
    # as in a user's shell: no landing or warehouse but the flags', Prefect's own log level
    # (the one duplirank's commands set for themselves when they import `flows`)
    for name in ("DUPLIRANK_LANDING", "DUPLIRANK_WAREHOUSE", "PREFECT_LOGGING_LEVEL"):
        env.pop(name, None)
    served, worked = tmp_path / "wh-served", tmp_path / "wh-worked"
    missing = tmp_path / "no-landing"
    prefect = [sys.executable, "-m", "prefect"]
    processes = Processes(tmp_path, env)

    def healthy() -> bool:
        try:
            return httpx.get(url + "/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        processes.start(
            "server",
            *prefect,
            "server",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            url.split(":")[2].split("/")[0],
        )
        _wait("the Prefect server answers", healthy, processes, 120)
        processes.start(
            "serve",
            sys.executable,
            "-m",
            "flows.cli",
            "serve",
            "--landing",
            str(SAMPLE),
            "--warehouse",
            str(served),
        )
        processes.start("pool", *prefect, "work-pool", "create", "duplirank", "--type", "process")
        processes.finish("pool", 60)
        processes.start(
            "deploy",
            *prefect,
            "--no-prompt",
            "deploy",
            "--all",
            DUPLIRANK_LANDING=str(SAMPLE),
            DUPLIRANK_WAREHOUSE=str(worked),
        )
        processes.start("worker", *prefect, "worker", "start", "--pool", "duplirank")
        processes.finish("deploy", 90)

        here = {PREFECT_API_URL: url, PREFECT_CLIENT_RETRY_EXTRA_CODES: {500}}
        with temporary_settings(here), get_client(sync_client=True) as client:

            def deployment(name: str):
                def read():
                    try:
                        return client.read_deployment_by_name(name)
                    except Exception:  # noqa: BLE001  (not registered yet)
                        return None

                return _wait(f"deployment {name}", read, processes, 60)

            deployments = [deployment(f"nightly/{DEPLOYMENT}"), deployment("nightly/nightly")]
            runs = {}  # deployment name: its flow runs (two to publish, then one to fail)
            for d in deployments:
                runs[d.name] = [client.create_flow_run_from_deployment(d.id) for _ in "ab"]
            served_deployment = deployments[0]
            failing = client.create_flow_run_from_deployment(
                served_deployment.id, parameters={"landing": str(missing)}
            )
            runs[served_deployment.name].append(failing)
            ids = [run.id for name in runs for run in runs[name]]

            def read_runs():
                by_id = filters.FlowRunFilter(id=filters.FlowRunFilterId(any_=ids))
                return client.read_flow_runs(flow_run_filter=by_id)

            def ended():
                done = {r.id: r for r in read_runs() if r.state and r.state.is_final()}
                return done if len(done) == len(ids) else None

            def states():
                return [(r.name, r.state and r.state.name) for r in read_runs()]

            ended_runs = _wait("the runs end", ended, processes, LIMIT_S, states)

            def logged(run_ids) -> str:
                by_run = filters.LogFilterFlowRunId(any_=list(run_ids))
                logs = client.read_logs(log_filter=filters.LogFilter(flow_run_id=by_run))
                return "\n".join(log.message for log in logs)

            for d in deployments:
                assert d.parameters == {
                    "landing": str(SAMPLE),
                    "warehouse": str(served if d.name == DEPLOYMENT else worked),
                    "project": str(ROOT),
                }
                assert SECRET not in d.model_dump_json()
                (schedule,) = d.schedules
                assert (schedule.schedule.cron, schedule.schedule.timezone) == (CRON, TIMEZONE)
                assert d.global_concurrency_limit.limit == 1
                assert d.concurrency_options.collision_strategy == ConcurrencyLimitStrategy.ENQUEUE

                mine = [ended_runs[run.id] for run in runs[d.name]]
                published = mine[:2]
                ended = [(r.name, r.state.type.value, r.state.message) for r in mine]
                assert [r.state.is_completed() for r in published] == [True, True], ended
                # one run of the deployment at a time: each starts after the one before ended
                spans = sorted((r.start_time, r.end_time) for r in mine)
                assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), spans
                for run in mine:
                    assert SECRET not in run.model_dump_json()

                artifacts = client.read_artifacts(
                    artifact_filter=filters.ArtifactFilter(
                        flow_run_id=filters.ArtifactFilterFlowRunId(any_=[r.id for r in published])
                    )
                )
                keys = {(a.flow_run_id, a.key) for a in artifacts}
                assert {(r.id, SUMMARY_KEY) for r in published} <= keys
                assert {"simultane-monthly-top", "bridge-standings-top"} <= {k for _, k in keys}

                # the summary of the run that published, in the run's log (the UI shows it)
                _wait(
                    f"{d.name}: the runs' logs",
                    lambda ids=[r.id for r in mine]: "rows accepted:" in logged(ids),
                    processes,
                    20,
                )

            # a user error: the run is Failed with its one line, also in the run's log
            failed = ended_runs[failing.id]
            message = f"landing folder {missing} does not exist"
            assert failed.state.is_failed() and failed.state.message == USER_ERROR + message
            _wait(
                "the user error in the run's log",
                lambda: message in logged([failed.id]),
                processes,
                20,
            )

        for warehouse in (served, worked):
            published = run_sql(warehouse, "select count(*) as n from simultane_deal_results")
            assert published["n"][0] > 0
            assert (warehouse / "site").is_dir()
    finally:
        processes.stop()


def test_prefect_yaml_takes_schedule_and_parameters_from_the_settings():
    spec = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    ((step, inputs),) = spec["build"][0].items()
    assert step == "flows.nightly.deployment_values" and inputs == {"id": "settings"}
    module, name = step.rsplit(".", 1)
    assert callable(getattr(importlib.import_module(module), name))
    by_name = {d["name"]: d for d in spec["deployments"]}
    assert set(by_name) == {"nightly", "backfill"}
    for deployment in by_name.values():
        module, name = deployment["entrypoint"].rsplit(".", 1)
        assert isinstance(getattr(importlib.import_module(module), name), Flow)
        assert deployment["concurrency_limit"] == {"limit": 1, "collision_strategy": "ENQUEUE"}
        assert deployment["parameters"]["project"] == "{{ settings.project }}"
        assert deployment["parameters"]["warehouse"] == "{{ settings.warehouse }}"
    (schedule,) = by_name["nightly"]["schedules"]
    assert schedule == {"cron": "{{ settings.cron }}", "timezone": "{{ settings.timezone }}"}
    assert by_name["nightly"]["parameters"]["landing"] == "{{ settings.landing }}"
    assert set(by_name["backfill"]["parameters"]) == {"first", "last", "warehouse", "project"}
    assert "schedules" not in by_name["backfill"]


def test_deployment_values_are_the_settings_of_the_folder_and_environment(tmp_path, monkeypatch):
    from flows.nightly import deployment_values

    (tmp_path / "pyproject.toml").write_text(
        '[tool.duplirank]\nnightly_cron = "15 4 * * 1-5"\nwarehouse = "wh"\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DUPLIRANK_TIMEZONE", "America/Montreal")
    monkeypatch.setenv("DUPLIRANK_LANDING", "s3://drops/landing")
    assert deployment_values() == {
        "cron": "15 4 * * 1-5",
        "timezone": "America/Montreal",
        "landing": "s3://drops/landing",
        "warehouse": str(tmp_path / "wh"),
        "project": str(tmp_path),
    }


def test_the_flows_parameters_are_locations_and_dates_never_settings():
    """What Prefect records and shows for a run (UI, API): where it reads and writes."""
    import inspect

    from flows.nightly import backfill_flow, nightly_flow

    assert list(inspect.signature(nightly_flow.fn).parameters) == [
        "landing",
        "warehouse",
        "project",
        "as_of",
    ]
    assert list(inspect.signature(backfill_flow.fn).parameters) == [
        "first",
        "last",
        "warehouse",
        "project",
        "as_of",
    ]
    schema = nightly_flow.parameters.model_dump()["properties"]
    assert "pyproject.toml" in schema["project"]["description"]


def test_the_flows_parameters_are_the_json_prefect_would_record():
    """The flows put their parameters in JSON themselves (Prefect's own way imports FastAPI,
    ~80 ms a run): the same JSON as Prefect's `jsonable_encoder`, and a flow made with other
    options (the Dask runner) keeps that way."""
    from fastapi.encoders import jsonable_encoder

    from flows.nightly import backfill_flow, nightly_flow

    parameters = {
        "landing": "/tmp/in",
        "warehouse": "s3://b/wh",
        "as_of": date(2026, 11, 14),
        "project": None,
    }
    expected = {key: jsonable_encoder(value) for key, value in parameters.items()}
    for flow in (nightly_flow, backfill_flow, nightly_flow.with_options(retries=0)):
        assert flow.serialize_parameters(parameters) == expected
    odd = {"x": Path("/tmp/p")}  # not one of the flows' kinds of value: Prefect's own way
    assert nightly_flow.serialize_parameters(odd) == {"x": jsonable_encoder(Path("/tmp/p"))}


def test_a_run_loads_its_settings_from_its_project_folder(tmp_path, monkeypatch):
    from flows.nightly import run_settings

    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.duplirank]\ntimezone = "America/Montreal"\nlanding = "in"\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DUPLIRANK_SIMULTANE__INDICE_BEST", "12")
    settings = run_settings(warehouse="wh", project=str(project))
    assert settings.timezone == "America/Montreal" and settings.simultane.indice_best == 12
    assert settings.landing == project / "in" and settings.warehouse == project / "wh"
    assert Path.cwd() == tmp_path  # the working directory is given back
    assert run_settings(landing="/srv/in").landing == Path("/srv/in")  # no project: here
    with pytest.raises(UserError, match="project folder .*nowhere does not exist"):
        run_settings(project=str(tmp_path / "nowhere"))


def test_a_command_records_where_its_run_reads_and_writes_never_a_setting(harness, tmp_path):
    """The CLI's settings (flags and secrets included) reach its run whole, in the process;
    Prefect records (and shows) only the run's locations."""
    import asyncio

    from prefect import get_client
    from prefect.client.schemas.filters import FlowFilter, FlowFilterName
    from prefect.client.schemas.sorting import FlowRunSort

    from flows.nightly import nightly

    warehouse = tmp_path / "wh"
    storage = {"access_key_id": "AKIA1", "secret_access_key": "s3cr3t"}
    nightly(Settings(warehouse=warehouse, landing=SAMPLE, storage=storage), date(2026, 11, 2))

    async def recorded() -> list[dict]:
        async with get_client() as client:
            runs = await client.read_flow_runs(
                flow_filter=FlowFilter(name=FlowFilterName(any_=["nightly"])),
                sort=FlowRunSort.START_TIME_DESC,
                limit=50,
            )
        return [r.parameters for r in runs if r.parameters.get("warehouse") == str(warehouse)]

    assert asyncio.run(recorded()) == [
        {
            "landing": str(SAMPLE),
            "warehouse": str(warehouse),
            "project": None,
            "as_of": "2026-11-02",
        }
    ]


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (OSError(errno.ECONNRESET, "reset"), True),
        (OSError(errno.EIO, "I/O"), True),
        (TimeoutError(), True),
        (OSError(errno.ENOENT, "no such file"), False),
        (ValueError("a bug"), False),
        (UserError("landing folder /x does not exist"), False),
    ],
)
def test_tasks_retry_transient_io_errors_only(error, retried):
    from prefect.states import Failed

    from flows.nightly import RETRY, io_retry

    assert io_retry(None, None, Failed(data=error)) is retried
    assert RETRY["retries"] >= 1 and RETRY["retry_condition_fn"] is io_retry
