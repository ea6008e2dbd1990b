"""The warehouse on S3-compatible object storage (moto's server): the same tables as on a
local folder, publication by conditional write, crashes, a race, verify and recover, analysts'
SQL, garbage collection that spares objects of runs in flight."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import threading

import polars as pl
import pytest

from flows import cli
from flows.nightly import backfill_run, nightly_run
from flows.storage import warehouse as warehouse_module
from flows.storage.published import DamagedFile
from flows.storage.retention import collect_garbage
from flows.storage.store import Conflict
from flows.storage.warehouse import Warehouse
from tests.storage.conftest import same, snapshot_all
from tests_support import SAMPLE, fail_at

from .conftest import settings, split_landing


def test_nightlies_and_a_backfill_on_s3_give_the_tables_of_a_local_folder(
    s3, tmp_path, capsys, monkeypatch
):
    temporary = tmp_path / "tmp"  # where an S3 run stages its files
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    landing, later = split_landing(tmp_path)
    local, remote = tmp_path / "local", s3.url("wh")
    for warehouse in (local, remote):
        nightly_run(settings(warehouse, landing))
    assert same(snapshot_all(remote), snapshot_all(local))
    keys = s3.keys("wh")
    assert "current.json" in keys and not any(k.startswith("_staging") for k in keys)

    for path in later.iterdir():
        shutil.move(path, landing / path.name)
    nightly_run(settings(local, landing))
    summary = nightly_run(settings(remote, landing, site=True))
    assert same(snapshot_all(remote), snapshot_all(local))
    assert "site/index.html" in s3.keys("wh") and "uploaded" in summary.site

    for warehouse in (local, remote):
        backfill_run(settings(warehouse, landing), "2026-10", "2026-11")
    assert same(snapshot_all(remote), snapshot_all(local))
    assert Warehouse(remote).version() == Warehouse(local).version() == 3
    assert not [p.name for p in temporary.iterdir() if p.name.startswith("duplirank-staging-")]

    # analysts: `duplirank sql --warehouse s3://…`, and nothing else than the listed files
    code = cli.main(
        [
            "sql",
            "select count(*) as n from simultane_deal_results",
            "--format",
            "csv",
            "--warehouse",
            remote,
        ]
    )
    assert code == 0
    assert (
        int(capsys.readouterr().out.split()[1])
        == snapshot_all(local)["simultane_deal_results"].height
    )
    other = s3.url("wh/current.json")
    code = cli.main(["sql", f"select * from read_text('{other}')", "--warehouse", remote])
    assert code == 2 and "reads only the published tables" in capsys.readouterr().err


def test_an_s3_landing_is_read_like_a_local_folder_and_only_once(s3, tmp_path):
    s3.fs.put(str(SAMPLE) + "/", f"{s3.name}/landing/", recursive=True)
    s3.fs.pipe(f"{s3.name}/landing/notes.txt", b"not a delivery")
    local = tmp_path / "local"
    nightly_run(settings(local, SAMPLE))
    summary = nightly_run(settings(s3.url("wh"), s3.url("landing")))
    assert {f.status for f in summary.ingest.files} == {"ingested", "skipped: unknown suffix"}
    assert all(f.file.startswith(f"s3://{s3.name}/landing/") for f in summary.ingest.files)
    left, right = snapshot_all(s3.url("wh")), snapshot_all(local)
    log = left["ingest_log"]
    assert log.filter(pl.col("file").str.ends_with("/notes.txt"))["status"].to_list() == [
        "skipped: unknown suffix"
    ]
    left["ingest_log"] = log.filter(~pl.col("file").str.ends_with("/notes.txt"))
    for table in left:  # the same rows; only the files' names and times (in the logs) differ
        # a file's identity on disk (mtime, ctime, inode) is not an object's
        a, b = (
            t.drop("file", "mtime_ns", "ctime_ns", "inode", strict=False)
            for t in (left[table], right[table])
        )
        assert a.sort(a.columns, nulls_last=True).equals(b.sort(b.columns, nulls_last=True)), table
    again = nightly_run(settings(s3.url("wh"), s3.url("landing")))
    assert not again.published and not any(f.logged for f in again.ingest.files)


# the two sides of the conditional PUT of current.json: every object written but the pointer,
# and the pointer swapped (the earlier steps are the same code on a folder: tests/storage/)
@pytest.mark.parametrize("point", ["before_swap", "after_swap"])
def test_a_failure_mid_commit_on_s3_leaves_a_whole_publication_and_the_next_run_completes(
    s3, tmp_path, monkeypatch, point
):
    landing, later = split_landing(tmp_path)
    remote = s3.url("wh")
    nightly_run(settings(remote, landing))
    before = snapshot_all(remote)
    for path in later.iterdir():
        shutil.move(path, landing / path.name)
    with monkeypatch.context() as patch:
        fail_at(patch, point)
        with pytest.raises(RuntimeError, match=f"injected failure {point}"):
            nightly_run(settings(remote, landing))
    now = snapshot_all(remote)
    if point == "after_swap":  # the pointer was swapped: the new publication is whole
        assert not same(now, before) and Warehouse(remote).version() == 2
    else:
        assert same(now, before) and Warehouse(remote).version() == 1
    nightly_run(settings(remote, landing))
    reference = tmp_path / "reference"  # the same files (quarantine names them) in one run
    nightly_run(settings(reference, landing))
    assert same(snapshot_all(remote), snapshot_all(reference))


def test_two_runs_racing_on_one_bucket_one_publishes_the_other_stops_and_no_line_is_lost(
    s3, tmp_path, monkeypatch
):
    """Run A is held just before its swap while run B publishes the warehouse's first
    publication (If-None-Match: *): A's conditional PUT gets 412, A stops with one line and
    publishes nothing; run again, it reads its files (no line lost)."""
    first, second = split_landing(tmp_path)
    remote = s3.url("wh")
    held, go = threading.Event(), threading.Event()
    hook = warehouse_module.Transaction._hook

    def hold(self, name):
        if name == "before_swap" and threading.current_thread().name == "run-a":
            held.set()
            go.wait(120)
        return hook(self, name)

    monkeypatch.setattr(warehouse_module.Transaction, "_hook", hold)
    outcome = {}

    def run_a():
        try:
            nightly_run(settings(remote, second))
        except Exception as err:  # noqa: BLE001
            outcome["error"] = err

    thread = threading.Thread(target=run_a, name="run-a")
    thread.start()
    assert held.wait(120)
    b = nightly_run(settings(remote, first))
    go.set()
    thread.join(120)
    assert b.published and isinstance(outcome.get("error"), Conflict)
    assert "published by another run" in str(outcome["error"])
    assert Warehouse(remote).version() == 1
    pointer = json.loads(s3.fs.cat(f"{s3.name}/wh/current.json"))
    assert pointer["publication"].startswith("_publications/00000001-")
    manifests = [k for k in s3.keys("wh") if k.endswith("/manifest.json")]
    assert manifests == [f"{pointer['publication']}/manifest.json"]  # A's files taken back

    nightly_run(settings(remote, second))  # A again: its files were not logged as read
    reference = tmp_path / "reference"  # B then A, one after the other
    nightly_run(settings(reference, first))
    nightly_run(settings(reference, second))
    assert same(snapshot_all(remote), snapshot_all(reference))


def test_a_stale_pointer_is_refused_by_the_conditional_write(s3):
    """If-Match on the ETag read first: a pointer rewritten since — even to the same
    publication (a `recover`) — refuses the swap."""
    from flows.storage.s3 import S3Store

    a, b = S3Store(s3.url("wh")), S3Store(s3.url("wh"))
    assert a.read_pointer() is None
    a.swap_pointer("_publications/00000001-x", None)
    assert b.read_pointer() == "_publications/00000001-x"
    a.swap_pointer("_publications/00000002-y", "_publications/00000001-x")
    with pytest.raises(Conflict):
        b.swap_pointer("_publications/00000002-z", "_publications/00000001-x")
    c = S3Store(s3.url("wh"))
    assert c.read_pointer() == "_publications/00000002-y"
    a.swap_pointer("_publications/00000002-y", "_publications/00000002-y")  # same target
    with pytest.raises(Conflict):  # its body (nonce) changed: so did its ETag
        c.swap_pointer("_publications/00000003-w", "_publications/00000002-y")


def test_verify_recover_and_a_damaged_object_on_s3(s3, tmp_path, capsys):
    remote = s3.url("wh")
    nightly_run(settings(remote, SAMPLE))
    reference = snapshot_all(remote)
    assert cli.main(["verify", "--warehouse", remote]) == 0
    assert "every file matches its checksum" in capsys.readouterr().out

    wh = Warehouse(remote)
    entry = next(e for e in wh.entries("simultane_deal_results") if "month=" in e["path"])
    key = f"{s3.name}/wh/{entry['path']}"
    data = bytearray(s3.fs.cat(key))
    data[len(data) // 2] ^= 1  # one flipped bit, same size, written by another tool
    s3.fs.pipe(key, bytes(data))
    assert cli.main(["verify", "--warehouse", remote]) == 2
    assert f"damaged: {entry['path']}" in capsys.readouterr().out
    with pytest.raises(DamagedFile, match=entry["path"]):
        Warehouse(remote).files("simultane_deal_results")
    s3.fs.rm(key)
    month = re.search(r"month=(\d{4}-\d{2})", entry["path"]).group(1)
    backfill_run(settings(remote, SAMPLE), month, month)
    assert cli.main(["verify", "--warehouse", remote]) == 0
    capsys.readouterr()

    s3.fs.rm(f"{s3.name}/wh/current.json")  # a lost pointer (publication 2 exists)
    assert cli.main(["nightly", "--warehouse", remote, "--landing", str(SAMPLE), "-q"]) == 2
    assert "current publication is missing" in capsys.readouterr().err
    s3.fs.pipe(f"{s3.name}/wh/current.json", b"{")  # a damaged pointer
    assert cli.main(["nightly", "--warehouse", remote, "--landing", str(SAMPLE), "-q"]) == 2
    assert "duplirank recover" in capsys.readouterr().err
    assert cli.main(["recover", "--warehouse", remote]) == 0
    assert "current publication: _publications/00000002-" in capsys.readouterr().out
    assert same(snapshot_all(remote), reference)


def test_garbage_collection_on_s3_spares_young_unlisted_objects(s3, tmp_path):
    """No lock on object storage: an unlisted object may be a run's in flight on another
    machine. Within the grace period it stays; past it, it goes; a listed file never does."""
    from flows.storage.options import StorageOptions

    remote = s3.url("wh")
    nightly_run(settings(remote, SAMPLE))
    orphan = "silver/simultane_deal_results/raw_month=2026-11/other-run.parquet"
    unpublished = "_publications/00000002-other-run/manifest.json"
    for key in (orphan, unpublished):
        s3.fs.pipe(f"{s3.name}/wh/{key}", b"in flight")
    from flows.storage import manifest as mf

    listed = set(mf.files(Warehouse(remote).manifest()))
    assert collect_garbage(Warehouse(remote), 0).files == ()
    assert {orphan, unpublished} <= set(s3.keys("wh"))
    layers = ("bronze/", "silver/", "gold/", "quarantine/", "meta/")
    unlisted = {k for k in s3.keys("wh") if k.startswith(layers)} - listed  # e.g. compacted
    assert orphan in unlisted
    past_grace = Warehouse(remote, StorageOptions(gc_grace_hours=0))
    assert len(collect_garbage(past_grace, 0).files) == len(unlisted)
    keys = set(s3.keys("wh"))
    assert orphan not in keys and unpublished not in keys
    assert listed <= keys  # a file the current publication lists is never deleted
