"""prefect.yaml: its deployments point at the real flows, with the settings' defaults."""

from __future__ import annotations

import importlib
from pathlib import Path

import yaml
from prefect import Flow

from flows.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_deployments_name_real_flows_with_the_default_schedule():
    spec = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    by_name = {d["name"]: d for d in spec["deployments"]}
    assert set(by_name) == {"nightly", "backfill"}
    for deployment in by_name.values():
        path, name = deployment["entrypoint"].split(":")
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        assert isinstance(getattr(module, name), Flow)
    (schedule,) = by_name["nightly"]["schedules"]
    defaults = Settings()
    assert schedule["cron"] == defaults.nightly_cron and schedule["timezone"] == defaults.timezone
    assert set(by_name["backfill"]["parameters"]) == {"first", "last"}


def test_the_flows_parameters_are_the_json_prefect_would_record():
    """The flows put their parameters in JSON with pydantic (Prefect's own way imports
    FastAPI, ~80 ms a run): the same JSON as Prefect's `jsonable_encoder`, and a flow made
    with other options (the Dask runner) keeps that way."""
    from datetime import date

    from fastapi.encoders import jsonable_encoder

    from flows.nightly import backfill_flow, nightly_flow

    settings = Settings(warehouse=Path("/tmp/wh"), landing=Path("/tmp/in"))
    parameters = {"settings": settings, "as_of": date(2026, 11, 14), "first": "2026-10"}
    expected = {key: jsonable_encoder(value) for key, value in parameters.items()}
    for flow in (nightly_flow, backfill_flow, nightly_flow.with_options(retries=0)):
        assert flow.serialize_parameters(parameters) == expected
        assert flow.serialize_parameters({"settings": None}) == {"settings": None}
    odd = {"x": Path("/tmp/p")}  # not one of the flows' kinds of value: Prefect's own way
    assert nightly_flow.serialize_parameters(odd) == {"x": jsonable_encoder(Path("/tmp/p"))}


def test_a_runs_recorded_parameters_never_show_the_object_stores_secrets():
    """Prefect's UI and API show every flow run's parameters: the secret key and the session
    token are masked there (the key id and the rest are kept), whatever way they are put in
    JSON; the settings the run gets are untouched."""
    from flows.nightly import MASK, nightly_flow

    storage = {"access_key_id": "AKIA1", "secret_access_key": "s3cr3t",
               "session_token": "T0KEN-xyz"}  # fmt: skip
    settings = Settings(warehouse="s3://bucket/wh", landing=Path("/tmp/in"), storage=storage)
    for parameters in ({"settings": settings}, {"settings": settings, "odd": Path("/tmp")}):
        recorded = nightly_flow.serialize_parameters(parameters)
        assert "s3cr3t" not in str(recorded) and "T0KEN-xyz" not in str(recorded)
        shown = recorded["settings"]["storage"]
        assert shown["secret_access_key"] == shown["session_token"] == MASK
        assert shown["access_key_id"] == "AKIA1"
    assert settings.storage.secret_access_key == "s3cr3t"
    unset = nightly_flow.serialize_parameters({"settings": Settings(warehouse=Path("/tmp/w"))})
    assert unset["settings"]["storage"]["secret_access_key"] is None
