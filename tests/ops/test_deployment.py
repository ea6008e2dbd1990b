"""The nightly's deployments, their parts: prefect.yaml names the real
flows and takes its schedule and parameters from the settings, the flows' parameters are a few
locations (never the settings), a run loads its settings where its parameters say, transient
I/O is retried."""

from __future__ import annotations

import errno
import importlib
from datetime import date
from pathlib import Path

import pytest
import yaml
from prefect import Flow

from flows.errors import UserError
from flows.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"


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
        "landing", "warehouse", "project", "as_of",
    ]  # fmt: skip
    assert list(inspect.signature(backfill_flow.fn).parameters) == [
        "first", "last", "warehouse", "project", "as_of",
    ]  # fmt: skip
    schema = nightly_flow.parameters.model_dump()["properties"]
    assert "pyproject.toml" in schema["project"]["description"]


def test_the_flows_parameters_are_the_json_prefect_would_record():
    """The flows put their parameters in JSON themselves (Prefect's own way imports FastAPI,
    ~80 ms a run): the same JSON as Prefect's `jsonable_encoder`, and a flow made with other
    options (the Dask runner) keeps that way."""
    from fastapi.encoders import jsonable_encoder

    from flows.nightly import backfill_flow, nightly_flow

    parameters = {"landing": "/tmp/in", "warehouse": "s3://b/wh", "as_of": date(2026, 11, 14),
                  "project": None}  # fmt: skip
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
        {"landing": str(SAMPLE), "warehouse": str(warehouse), "project": None,
         "as_of": "2026-11-02"}
    ]  # fmt: skip


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
