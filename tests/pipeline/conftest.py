"""The sample logs published once per session by the real Prefect flows (the integration
fixture the pipeline tests read and copy)."""

from __future__ import annotations

from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.fixture(scope="session")
def sample_warehouse(harness, tmp_path_factory):
    from flows.nightly import nightly
    from flows.settings import Settings

    root = tmp_path_factory.mktemp("wh")
    nightly(Settings(warehouse=root, landing=SAMPLE))
    return root
