"""A nightly with nothing new is told before the pipeline and Prefect are loaded
(flows/nothing_new.py): only when the nightly would publish and repair nothing, with the same
report; anything new or damaged leaves the decision to the nightly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from flows.nightly import nightly_run
from flows.nothing_new import prefect_server, quiet_night, quiet_nightly
from flows.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Settings:
    """A landing of three sample files, published once (no Prefect: `nightly_run`)."""
    tmp = tmp_path_factory.mktemp("quiet")
    landing = tmp / "landing"
    (landing / "ff").mkdir(parents=True)
    for name in ("simultane-2026-10-30.jsonl", "simultane-2026-11-01.jsonl"):
        shutil.copy(SAMPLE / name, landing / name)
    ff = sorted(SAMPLE.glob("ff*"))[0]
    shutil.copy(ff, landing / "ff" / ff.name)
    settings = Settings(warehouse=tmp / "wh", landing=landing)
    assert nightly_run(settings).published
    return settings


def test_nothing_new_reports_what_the_nightly_reports(published):
    night = quiet_night(published)
    assert night is not None and len(night.ingest.files) == 3
    summary = nightly_run(published)  # the nightly itself: nothing published
    assert not summary.published
    assert night.text() == summary.text()
    assert quiet_night(published) is not None


@pytest.mark.parametrize("change", ["touched", "new file", "unknown suffix", "symlink", "site"])
def test_anything_new_or_to_repair_is_left_to_the_nightly(published, change):
    landing, wh = published.landing, published.warehouse
    first = sorted(landing.glob("*.jsonl"))[0]
    if change == "touched":  # same bytes, same mtime: a new ctime (a file corrected in place)
        stat = first.stat()
        os.utime(first, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    elif change == "new file":
        shutil.copy(SAMPLE / "bridge-2026-11-01.jsonl", landing / "late.jsonl")
    elif change == "unknown suffix":
        (landing / "notes.txt").write_text("not a delivery\n")
    elif change == "symlink":
        (landing / "link.jsonl").symlink_to(first)
    elif change == "site":
        index = wh / "site" / "_pages.json"
        index.write_text(index.read_text() + " ")
    assert quiet_night(published) is None
    nightly_run(published)  # reads or logs the file, or repairs the site
    if change == "symlink":
        (landing / "link.jsonl").unlink()
        nightly_run(published)
    night = quiet_night(published)
    assert night is not None
    assert night.text() == nightly_run(published).text()


def test_a_damaged_views_database_is_left_to_the_nightly(published):
    wh = published.warehouse
    database = wh / "duplirank.duckdb"
    target = database.resolve()
    target.chmod(0o644)
    with open(target, "ab") as handle:
        handle.write(b"\0")
    assert quiet_night(published) is None
    nightly_run(published)  # rebuilt in its place
    assert quiet_night(published) is not None


def test_a_date_or_prefect_settings_elsewhere_run_the_nightly(published, tmp_path, monkeypatch):
    calls = []
    assert quiet_nightly(published, date(2026, 11, 5), lambda: calls.append(1)) is None
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    Path(".env").write_text("PREFECT_API_URL=http://127.0.0.1:1/api\n")
    assert prefect_server() is False
    assert quiet_nightly(published, None, lambda: calls.append(1)) is None and calls == []


def test_prefect_server_reads_the_environment_and_the_active_profile(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PREFECT_PROFILE", raising=False)
    monkeypatch.delenv("PREFECT_PROFILES_PATH", raising=False)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    assert prefect_server() == "http://127.0.0.1:4200/api"
    monkeypatch.delenv("PREFECT_API_URL")
    assert prefect_server() is None  # no profile: a temporary server
    (tmp_path / "home").mkdir()
    profiles = tmp_path / "home" / "profiles.toml"
    profiles.write_text(
        'active = "prod"\n[profiles.prod]\nPREFECT_API_URL = "http://10.0.0.1:4200/api"\n'
    )
    assert prefect_server() == "http://10.0.0.1:4200/api"
    profiles.write_text(profiles.read_text() + 'PREFECT_API_KEY = "k"\n')
    assert prefect_server() is False  # Prefect's client applies what else the profile says


def test_the_command_loads_neither_polars_nor_prefect(published, tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PREFECT_", "DUPLIRANK_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env |= {"XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONPATH": str(ROOT)}
    code = (
        "import sys\nfrom flows.cli import main\n"
        f"code = main(['nightly', '--landing', {str(published.landing)!r}, '--warehouse', "
        f"{str(published.warehouse)!r}, '--no-show'])\n"
        "print(code, sorted({m.split('.')[0] for m in sys.modules} & {'polars', 'prefect'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 []"
    assert "nothing new to publish" in done.stdout
    assert "nothing-new check" in done.stderr


def test_the_night_is_recorded_as_a_completed_flow_run_with_its_summary(harness, published):
    import asyncio

    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId
    from prefect.settings import PREFECT_API_URL

    from flows.nothing_new import record_flow_run

    night = quiet_night(published)
    parameters = {"landing": "/in", "warehouse": "/wh", "project": None, "as_of": None}
    run_id = record_flow_run(PREFECT_API_URL.value(), night, parameters, "# the summary\n")

    async def recorded():
        async with get_client() as client:
            run = await client.read_flow_run(run_id)
            flow = await client.read_flow(run.flow_id)
            artifacts = await client.read_artifacts(
                artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run.id]))
            )
        return run, flow, artifacts

    run, flow, artifacts = asyncio.run(recorded())
    assert flow.name == "nightly" and run.parameters == parameters
    assert run.state.is_completed() and run.state.message == "nothing new to publish"
    assert [(a.key, a.type, a.data) for a in artifacts] == [
        ("duplirank-run-summary", "markdown", "# the summary\n")
    ]
