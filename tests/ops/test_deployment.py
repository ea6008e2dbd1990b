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
