"""Everything a publication serves is checked and repaired: its views database (a forged view, a
truncated file) and the results site (a run killed while it rebuilt it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from flows.cli import main
from flows.nightly import nightly_run
from flows.settings import Settings
from flows.storage.retention import verify
from flows.storage.warehouse import Warehouse
from flows.tools.query import run_sql
from flows.tools.site.served import site_problem

QUERY = "select month, player_id, indice, rank_indice from simultane_monthly order by all"


@pytest.fixture
def warehouse(states, tmp_path) -> Path:
    """A copy of the first night's warehouse, relinked to its own place."""
    root = tmp_path / "wh"
    shutil.copytree(states[0], root, symlinks=True)
    assert main(["relink", "--warehouse", str(root)]) == 0
    assert verify(Warehouse(root)) == []
    return root


def own_client(root: Path) -> list:
    con = duckdb.connect(str(root / "duplirank.duckdb"), read_only=True)
    try:
        return con.execute(QUERY).fetchall()
    finally:
        con.close()


def writable_database(root: Path) -> Path:
    database = (root / "duplirank.duckdb").resolve()
    database.chmod(0o644)
    return database


def test_a_forged_view_is_never_served_and_a_nightly_with_nothing_new_rebuilds_it(
    warehouse, tmp_path, capsys
):
    expected = run_sql(warehouse, QUERY)
    con = duckdb.connect(str(writable_database(warehouse)))  # an analyst's read-write DuckDB
    con.execute(
        "create or replace view simultane_monthly as select '2026-10' as month, "
        "'FORGED' as player_id, 100.0 as indice, 1::bigint as rank_indice"
    )
    con.close()
    assert own_client(warehouse) == [("2026-10", "FORGED", 100.0, 1)]
    problems = verify(Warehouse(warehouse))
    assert len(problems) == 1 and "duplirank.duckdb" in problems[0]
    assert main(["verify", "--warehouse", str(warehouse)]) == 2
    assert run_sql(warehouse, QUERY).equals(expected)  # `duplirank sql` never serves it
    empty = tmp_path / "landing"
    empty.mkdir()
    summary = nightly_run(Settings(warehouse=warehouse, landing=empty))
    assert not summary.published  # nothing new: a cheap check of what is served
    assert verify(Warehouse(warehouse)) == []
    assert own_client(warehouse) == list(expected.iter_rows())


def test_a_truncated_views_database_is_rebuilt_by_recover(warehouse, capsys):
    expected = run_sql(warehouse, QUERY)
    database = writable_database(warehouse)
    with open(database, "r+b") as handle:
        handle.truncate(4096)
    assert any("damaged" in p for p in verify(Warehouse(warehouse)))
    assert run_sql(warehouse, QUERY).equals(expected)  # served from the manifest meanwhile
    version = Warehouse(warehouse).version()
    assert main(["recover", "--warehouse", str(warehouse)]) == 0
    assert Warehouse(warehouse).version() == version  # the same publication, repaired
    assert verify(Warehouse(warehouse)) == []
    assert own_client(warehouse) == list(expected.iter_rows())


def pages(root: Path) -> dict:
    return json.loads((root / "site" / "_pages.json").read_text())["pages"]


def test_a_site_left_behind_is_rebuilt_by_the_next_nightly_with_nothing_new(
    states, warehouse, capsys
):
    _, landing, _, _ = states
    leftover = warehouse / ".site.staging-424242"  # a run killed while it rebuilt the site
    leftover.mkdir()
    (leftover / "index.html").write_text("half a site")
    first = pages(warehouse)
    # the second night is published, its site not rebuilt (as when killed in the site step)
    summary = nightly_run(Settings(warehouse=warehouse, landing=landing, site={"enabled": False}))
    assert summary.published and pages(warehouse) == first
    settings = Settings(warehouse=warehouse, landing=landing)
    assert site_problem(Warehouse(warehouse), settings) is not None
    assert main(["verify", "--warehouse", str(warehouse)]) == 2
    assert "results site" in capsys.readouterr().out
    summary = nightly_run(settings)  # nothing new
    assert not summary.published and "results site repaired" in summary.site
    assert not list(warehouse.glob(".site.*"))
    assert site_problem(Warehouse(warehouse), settings) is None
    after = states[0].parent / "after"  # both nights published in one clean sequence
    assert pages(warehouse) == pages(after)
    index = warehouse / "site" / "_pages.json"
    stamp = index.stat().st_mtime_ns
    summary = nightly_run(settings)  # nothing new, nothing wrong: the site is left as it is
    assert summary.site is None and index.stat().st_mtime_ns == stamp


def current_manifest(root: Path) -> dict:
    from flows.storage import manifest as mf

    return mf.parse((root / "manifest.json").read_bytes(), "test")


def sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_manifest_holds_the_views_database_and_the_site_and_verify_checks_them(
    warehouse, capsys
):
    manifest = current_manifest(warehouse)
    database = (warehouse / "duplirank.duckdb").resolve()
    assert manifest["database"] == {"sha256": sha256(database), "bytes": database.stat().st_size}
    assert manifest["site"] == sha256(warehouse / "site" / "_pages.json")
    assert not list(database.parent.glob("*.sha256"))  # no checksum beside it: in the manifest
    expected = run_sql(warehouse, QUERY)
    con = duckdb.connect(str(writable_database(warehouse)))  # other bytes, the same views
    con.execute("create table scratch as select 1 as x")
    con.execute("drop table scratch")
    con.execute("checkpoint")
    con.close()
    assert sha256(database) != manifest["database"]["sha256"]
    assert verify(Warehouse(warehouse)) == [
        "damaged (its bytes differ from the checksum in the manifest): "
        f"_publications/{database.parent.name}/duplirank.duckdb"
    ]
    assert main(["verify", "--warehouse", str(warehouse)]) == 2
    assert run_sql(warehouse, QUERY).equals(expected)  # served from the manifest meanwhile
    version = manifest["version"]
    assert main(["recover", "--warehouse", str(warehouse)]) == 0
    repaired = current_manifest(warehouse)
    assert repaired["version"] == version and repaired["tables"] == manifest["tables"]
    assert repaired["database"]["sha256"] == sha256(database)  # rebuilt, and recorded
    assert verify(Warehouse(warehouse)) == []
    assert own_client(warehouse) == list(expected.iter_rows())
    (warehouse / "site" / "_pages.json").chmod(0o644)
    with open(warehouse / "site" / "_pages.json", "a") as index:
        index.write(" ")  # the site changed since it was built
    assert main(["verify", "--warehouse", str(warehouse)]) == 2
    assert "results site: changed since it was built" in capsys.readouterr().out
