"""The read-only connection with views naming their files by absolute path: read from any
folder, from a copy, from odd paths; a manifest that lies is not trusted."""

from __future__ import annotations

import json
import os
import shutil

import polars as pl
import pytest

from flows.errors import UserError
from flows.settings import SqlLimits
from flows.tools.query import connect_read_only, published_files, run_sql

from .conftest import publish_sample


@pytest.fixture
def limits(tmp_path):
    return SqlLimits(temp_directory=tmp_path / "spill")


def test_relative_views_are_read_from_another_folder(tmp_path, monkeypatch, limits):
    root = tmp_path / "wh"
    publish_sample(root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    frame = run_sql(root, "select player_id, l, s from t order by player_id", limits=limits)
    assert frame["player_id"].to_list() == ["P1", "P2", "P3"]
    assert frame["l"].to_list() == [[1, 2], [3], []]
    assert run_sql(root, "select sum(y) as y from u", limits=limits)["y"].to_list() == [0.5]


def test_a_copied_warehouse_answers_alone_once_the_original_is_gone(tmp_path, monkeypatch, limits):
    original = tmp_path / "wh"
    publish_sample(original)
    monkeypatch.chdir(tmp_path)
    query = "select * from t order by player_id"
    before = run_sql(original, query, limits=limits)
    copy = tmp_path / "moved" / "wh copy"
    shutil.copytree(original, copy, symlinks=True)
    shutil.rmtree(original)
    assert run_sql(copy, query, limits=limits).equals(before)


def test_a_folder_holding_the_same_files_does_not_shadow_the_warehouse(
    tmp_path, monkeypatch, limits
):
    root = tmp_path / "wh"
    publish_sample(root)
    backup = tmp_path / "backup"
    shutil.copytree(root, backup)
    for path in (backup / "gold").rglob("*.parquet"):  # the backup's rows differ
        path.chmod(0o644)
        pl.DataFrame({"month": ["x"], "player_id": ["FORGED"]}).write_parquet(path)
    monkeypatch.chdir(backup)  # the views name the warehouse's files by absolute path
    frame = run_sql(root, "select player_id from t order by 1", limits=limits)
    assert frame["player_id"].to_list() == ["P1", "P2", "P3"]


@pytest.mark.parametrize("name", ["with space", "quote ' and \" double", "br[a-c]ket [1]", "é"])
def test_odd_warehouse_names(tmp_path, monkeypatch, limits, name):
    root = tmp_path / name
    publish_sample(root)
    monkeypatch.chdir(tmp_path)
    assert run_sql(root, "select count(*) as n from t", limits=limits)["n"].to_list() == [3]
    assert run_sql(root, "select count(*) as n from t", limits=limits)["n"].to_list() == [3]


def test_a_comma_in_the_warehouse_path_works(tmp_path, monkeypatch, limits):
    root = tmp_path / "a,b"
    publish_sample(root)
    monkeypatch.chdir(tmp_path)
    assert run_sql(root, "select count(*) as n from t", limits=limits)["n"].to_list() == [3]


def test_a_forged_manifest_is_refused_and_unlisted_files_are_not_readable(
    tmp_path, monkeypatch, limits
):
    root = tmp_path / "wh"
    wh = publish_sample(root)
    outside = tmp_path / "outside"
    outside.mkdir()
    pl.DataFrame({"secret": ["s3cr3t"]}).write_parquet(outside / "secret.parquet")
    (root / "gold" / "link.parquet").symlink_to(outside / "secret.parquet")
    genuine = published_files(wh)
    assert genuine and all(not p.startswith("/") and ".." not in p for p in genuine)
    # files that the publication does not list cannot be read, even inside the warehouse
    con = connect_read_only(root, limits)
    try:
        for path in [
            "../outside/secret.parquet",
            str(outside / "secret.parquet"),
            "gold/link.parquet",
            f"{root}/gold/link.parquet",
        ]:
            with pytest.raises(Exception, match="disabled by configuration"):
                con.execute(f"select * from read_parquet('{path}')").fetchall()
    finally:
        con.close()
    # a manifest edited by hand (here: listing a file outside) is not trusted at all
    manifest = json.loads((root / "manifest.json").read_bytes())
    manifest["tables"]["secret"] = {
        "layer": "gold",
        "partitions": {
            "_": [{"path": "../outside/secret.parquet", "sha256": "0" * 64, "bytes": 1}]
        },
    }
    target = (root / "manifest.json").resolve()
    os.chmod(target, 0o644)
    target.write_text(json.dumps(manifest))
    with pytest.raises(UserError, match="duplirank recover"):
        run_sql(root, "select 1", limits=limits)
    assert (outside / "secret.parquet").exists() and os.path.islink(root / "gold/link.parquet")


def test_a_missing_views_database_is_a_user_error_a_damaged_one_is_not_served(tmp_path, limits):
    with pytest.raises(UserError, match="no published tables"):
        run_sql(tmp_path / "empty", "select 1", limits=limits)
    root = tmp_path / "wh"
    publish_sample(root)
    database = (root / "duplirank.duckdb").resolve()
    database.chmod(0o644)
    database.write_bytes(b"not a database")
    # its bytes are not those recorded: the publication's views are built from its manifest
    assert run_sql(root, "select count(*) as n from t", limits=limits)["n"].to_list() == [3]
    database.unlink()
    with pytest.raises(UserError, match="no published tables"):
        run_sql(root, "select 1", limits=limits)
