"""Publishing: one swap per run, numbered checksummed manifests, retention, damage, faults."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from flows.errors import UserError
from flows.storage.published import DamagedFile
from flows.storage.retention import collect_garbage, recover, verify
from flows.storage.warehouse import Warehouse
from flows.tools.query import run_sql


def publish(root, run_id: str, rows: dict[str, list[int]], fail: str | None = None, **kw):
    """One run publishing table `t` (months → values) through `Warehouse.run`."""
    wh = Warehouse(root)
    hooks = {fail: _raise} if fail else None
    with wh.run(run_id, lock_wait_s=1, hooks=hooks, **kw) as tx:
        frame = pl.DataFrame(
            {
                "month": [m for m, v in rows.items() for _ in v],
                "x": [x for v in rows.values() for x in v],
            }
        )
        tx.put_months("gold", "t", frame, sorted(rows))
    return wh


def _raise():
    raise RuntimeError("injected")


def data_files(root) -> set[str]:
    return {
        str(p.relative_to(root))
        for layer in ("bronze", "silver", "gold", "quarantine", "meta")
        for p in (root / layer).rglob("*")
        if p.is_file()
    }


def tree(root) -> dict[str, bytes]:
    """Every file (and symlink target) of a warehouse, for byte-for-byte comparisons."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = os.readlink(p).encode()
        elif p.is_file() and p.name != ".lock":
            out[rel] = p.read_bytes()
    return out


def test_a_month_is_replaced_whole_and_other_months_stay(tmp_path):
    wh = publish(tmp_path, "r1", {"2026-10": [1, 2], "2026-11": [3]})
    publish(tmp_path, "r2", {"2026-11": [4, 5]})
    assert sorted(wh.scan("t").collect()["x"]) == [1, 2, 4, 5]
    assert run_sql(tmp_path, "select sum(x) as s from t")["s"].to_list() == [12]
    assert wh.version() == 2
    # the replaced file is kept while the previous publication lists it, then collected
    assert len(list((tmp_path / "gold/t/month=2026-11").glob("*.parquet"))) == 2
    collect_garbage(wh, 0)
    assert len(list((tmp_path / "gold/t/month=2026-11").glob("*.parquet"))) == 2
    publish(tmp_path, "r3", {"2026-10": [1, 2, 3]}, retention_days=0)
    assert len(list((tmp_path / "gold/t/month=2026-11").glob("*.parquet"))) == 1
    assert run_sql(tmp_path, "select sum(x) as s from t")["s"].to_list() == [15]


@pytest.mark.parametrize("point", ["before_manifest", "before_views", "before_swap"])
def test_a_failure_before_the_swap_publishes_nothing_and_deletes_nothing(tmp_path, point):
    publish(tmp_path, "r1", {"2026-11": [1]})
    before = data_files(tmp_path)
    with pytest.raises(RuntimeError, match="injected"):
        publish(tmp_path, "r2", {"2026-11": [99]}, fail=point)
    wh = Warehouse(tmp_path)
    assert wh.version() == 1 and wh.scan("t").collect()["x"].to_list() == [1]
    assert run_sql(tmp_path, "select x from t")["x"].to_list() == [1]
    # the failing run collected nothing published, and took back the files it had written
    assert data_files(tmp_path) == before
    assert not (tmp_path / "_staging").exists()
    # the next run completes; the crashed attempt never counts as a publication
    publish(tmp_path, "r3", {"2026-11": [7]}, retention_days=0)
    assert run_sql(tmp_path, "select x from t")["x"].to_list() == [7]
    # the month, the table's _schema, and the previous publication's month (always kept)
    assert len(data_files(tmp_path)) == 3
    # the crashed attempt's folder is gone; the previous current one is kept
    kept = sorted(p.name.split("-")[0] for p in (tmp_path / "_publications").iterdir())
    assert kept == ["00000001", "00000002"]


def test_nothing_to_publish_changes_nothing_on_disk(tmp_path):
    publish(tmp_path, "r1", {"2026-11": [1]})
    before = tree(tmp_path)
    with Warehouse(tmp_path).run("r2", lock_wait_s=1):
        pass  # a run that staged nothing
    assert tree(tmp_path) == before


def _hold_lock(root, locked, release):
    with Warehouse(root).store.lock(wait_s=1):
        locked.set()
        release.wait(10)


def test_a_second_run_waits_then_refuses_with_a_clear_message(tmp_path):
    ctx = multiprocessing.get_context("fork")
    locked, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(tmp_path, locked, release))
    holder.start()
    try:
        assert locked.wait(10)
        with pytest.raises(UserError, match="is locked by a running job"):
            publish(tmp_path, "r2", {"2026-11": [1]})
    finally:
        release.set()
        holder.join()
    publish(tmp_path, "r3", {"2026-11": [2]})  # free again once the first run ended


def test_a_connection_opened_before_two_publications_keeps_answering(tmp_path):
    publish(tmp_path, "r1", {"2026-11": [1]})
    con = duckdb.connect(str(tmp_path / "duplirank.duckdb"), read_only=True)
    con.execute("set file_search_path = $p", {"p": str(tmp_path)})
    publish(tmp_path, "r2", {"2026-11": [2]})
    publish(tmp_path, "r3", {"2026-11": [3]})
    assert con.execute("select x from t").fetchall() == [(1,)]  # its snapshot, whole
    con.close()
    assert run_sql(tmp_path, "select x from t")["x"].to_list() == [3]


def test_a_copied_warehouse_answers_alone(tmp_path):
    publish(tmp_path / "wh", "r1", {"2026-10": [1], "2026-11": [2]})
    for name, copy in (
        ("cp", shutil.copytree),
        ("links", lambda a, b: shutil.copytree(a, b, symlinks=True)),
    ):  # noqa: E501
        copy(tmp_path / "wh", tmp_path / name)
    shutil.rmtree(tmp_path / "wh")
    for name in ("cp", "links"):
        assert run_sql(tmp_path / name, "select sum(x) as s from t")["s"].to_list() == [3]
        publish(tmp_path / name, "r2", {"2026-11": [5]})  # and it can be published to
        assert run_sql(tmp_path / name, "select sum(x) as s from t")["s"].to_list() == [6]


def test_a_warehouse_path_with_odd_characters_works(tmp_path):
    root = tmp_path / "my [wh] 'it''s' \"x\""
    publish(root, "r1", {"2026-11": [4]})
    assert run_sql(root, "select x from t")["x"].to_list() == [4]


@pytest.mark.parametrize(
    "damage, restored",
    [
        (lambda root: (root / "current").unlink(), 2),  # the pointer lost: r2 is intact
        (lambda root: _write(root / "manifest.json", b""), 1),  # r2's manifest lost: r1
        (lambda root: _write(root / "manifest.json", b"{}"), 1),
        (lambda root: _write(root / "manifest.json", b'{"format": 2, "tables": '), 1),
        (lambda root: _edit_manifest(root, lambda m: m["tables"]["t"]["partitions"].clear()), 1),
    ],
    ids=["pointer deleted", "empty", "{}", "corrupt JSON", "edited"],
)
def test_a_damaged_manifest_stops_every_write_and_recover_restores(tmp_path, damage, restored):
    publish(tmp_path, "r1", {"2026-11": [1]})
    publish(tmp_path, "r2", {"2026-11": [2]})
    files = data_files(tmp_path)
    damage(tmp_path)
    with pytest.raises(UserError, match="duplirank recover"):
        publish(tmp_path, "r3", {"2026-11": [3]}, retention_days=0)
    with pytest.raises(UserError, match="duplirank recover"):
        run_sql(tmp_path, "select x from t") if restored == 2 else Warehouse(tmp_path).scan("t")
    assert data_files(tmp_path) == files  # nothing deleted on the word of a bad manifest
    recover(Warehouse(tmp_path))
    assert Warehouse(tmp_path).version() == restored
    assert run_sql(tmp_path, "select x from t")["x"].to_list() == [restored]
    publish(tmp_path, "r4", {"2026-11": [4]})
    assert run_sql(tmp_path, "select x from t")["x"].to_list() == [4]


def _write(path, data: bytes) -> None:
    target = path.resolve()
    os.chmod(target, 0o644)
    target.write_bytes(data)


def _edit_manifest(root, edit) -> None:
    path = (root / "manifest.json").resolve()
    manifest = json.loads(path.read_bytes())
    edit(manifest)
    _write(path, json.dumps(manifest).encode())


def test_a_forged_path_outside_the_warehouse_is_refused_and_nothing_is_deleted(tmp_path):
    from flows.storage import manifest as mf

    root = tmp_path / "wh"
    publish(root, "r1", {"2026-11": [1]})
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    path = (root / "manifest.json").resolve()
    forged = json.loads(path.read_bytes())
    entry = forged["tables"]["t"]["partitions"]["month=2026-11"][0]
    entry["path"] = "gold/t/month=2026-11/../../../../victim.txt"
    _write(path, mf.dumps(forged))  # a checksum recomputed by the forger does not help
    with pytest.raises(UserError, match="malformed"):
        publish(root, "r2", {"2026-11": [2]}, retention_days=0)
    assert victim.read_text() == "keep me"


def test_a_flipped_bit_is_an_error_naming_the_file_and_verify_finds_it(tmp_path):
    wh = publish(tmp_path, "r1", {"2026-11": [1, 2, 3]})
    target = next((tmp_path / "gold/t/month=2026-11").glob("*.parquet"))
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    _write(target, bytes(data))
    fresh = Warehouse(tmp_path)
    with pytest.raises(DamagedFile, match=target.name):
        fresh.scan("t").collect()
    assert verify(fresh) == [f"damaged: {target.relative_to(tmp_path)}"]
    assert wh  # the publication itself is untouched


@pytest.mark.parametrize(
    "code, words",
    [(errno.ENOSPC, "no space left"), (errno.EROFS, "read-only"), (errno.EACCES, "permission")],
)
def test_storage_faults_are_one_line_errors_and_the_publication_stays(
    tmp_path, monkeypatch, code, words
):
    publish(tmp_path, "r1", {"2026-11": [1]})
    real = os.replace

    def failing(src, dst, *a, **k):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(UserError, match=words) as caught:
        publish(tmp_path, "r2", {"2026-11": [2]})
    assert "\n" not in str(caught.value)
    monkeypatch.setattr(os, "replace", real)
    assert run_sql(tmp_path, "select x from t")["x"].to_list() == [1]
    assert verify(Warehouse(tmp_path)) == []


def test_every_catalog_table_is_a_view_even_before_it_has_data(tmp_path):
    from flows.storage.catalog import tables

    publish(tmp_path, "r1", {"2026-11": [1]})
    views = set(
        run_sql(tmp_path, "select view_name from duckdb_views() where not internal")["view_name"]
    )
    assert set(tables()) <= views
    empty = run_sql(tmp_path, "select * from simultane_monthly")
    expected = [c.name for c in tables()["simultane_monthly"].columns]
    assert empty.height == 0 and empty.columns == expected
    comments = run_sql(
        tmp_path,
        "select comment from duckdb_columns() where table_name = 'simultane_monthly' "
        "and column_name = 'indice'",
    )
    assert "20 best" in comments["comment"][0]


def test_a_bronze_partition_is_compacted_once_it_holds_many_files(tmp_path):
    """A nightly scores the bronze it has just ingested without rewriting it; a partition of
    more than COMPACT_FILES files (one per chunk of each delivery) is rewritten as one."""
    from flows.ingest.options import IngestOptions
    from flows.nightly import nightly_run
    from flows.settings import Settings
    from flows.steps.context import COMPACT_FILES

    landing = tmp_path / "landing"
    landing.mkdir()
    sample = Path(__file__).resolve().parents[2] / "data" / "sample"
    source = (sample / "simultane-2026-11-01.jsonl").read_bytes()
    source = source.splitlines(True)
    (landing / "a.jsonl").write_bytes(b"".join(source[:200]))
    settings = Settings(
        warehouse=tmp_path / "wh", landing=landing, ingest=IngestOptions(chunk_bytes=8192)
    )
    nightly_run(settings)
    wh = Warehouse(settings.warehouse)
    first = wh.files("simultane_deal")
    assert 1 < len(first) <= COMPACT_FILES  # one per chunk, not rewritten
    (landing / "b.jsonl").write_bytes(b"".join(source[200:]))
    nightly_run(settings)
    files = wh.files("simultane_deal")
    assert len(files) == 1  # more than COMPACT_FILES: one file
    rows = wh.scan_files(files).select(pl.len()).collect().item()
    accepted = run_sql(settings.warehouse, "select sum(rows_accepted) n from ingest_log")
    assert rows == accepted["n"][0] > 0
