"""Two nights of the sample logs: the warehouse after the first, the tables before and after
the second (for crash and reader tests)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flows.nightly import nightly_run
from flows.settings import Settings
from tests_support import PUBLISHED, SAMPLE, assert_same, snapshot

ALL = (*PUBLISHED, "ingest_log")


def split_landing(tmp_path: Path) -> tuple[Path, Path]:
    """The sample's first day in `landing`, the other days in `later`."""
    landing, later = tmp_path / "landing", tmp_path / "later"
    shutil.copytree(SAMPLE, landing)
    later.mkdir()
    days = sorted({p.name.split("-", 1)[1].split(".")[0] for p in landing.iterdir()})
    for path in landing.iterdir():
        if days[0] not in path.name:
            shutil.move(path, later / path.name)
    return landing, later


@pytest.fixture(scope="session")
def states(tmp_path_factory):
    """(warehouse after night 1, landing with both nights, tables before, tables after)."""
    tmp = tmp_path_factory.mktemp("crash")
    landing, later = split_landing(tmp)
    before = tmp / "before"
    nightly_run(Settings(warehouse=before, landing=landing))
    for path in later.iterdir():
        shutil.move(path, landing / path.name)
    after = tmp / "after"
    shutil.copytree(before, after, symlinks=True)
    nightly_run(Settings(warehouse=after, landing=landing))
    return before, landing, snapshot_all(before), snapshot_all(after)


def snapshot_all(root: Path) -> dict:
    tables = snapshot(root)
    from flows.tools.query import run_sql

    log = run_sql(root, "select * exclude (run_id, ingested_at, delivery) from ingest_log")
    tables["ingest_log"] = log.sort(log.columns, nulls_last=True)
    return tables


def same(left: dict, right: dict) -> bool:
    try:
        assert_same(left, right, ALL)
        return True
    except AssertionError:
        return False
