"""A damaged bronze file: named with its repair, and `duplirank repair` rebuilds every table
from the landing folder (a clean run on it), or refuses when the landing lacks a delivery."""

from __future__ import annotations

import shutil

import pytest

from flows import cli
from flows.nightly import backfill_run, nightly_run
from flows.settings import Settings
from flows.steps.context import bronze_table
from flows.storage.published import DamagedFile
from flows.storage.retention import verify
from flows.storage.served import relink
from flows.storage.warehouse import Warehouse
from tests_support import PUBLISHED, SAMPLE, assert_same, snapshot


def _damaged_copy(sample_warehouse, tmp_path):
    """A copy of the sample warehouse with one bit flipped in a bronze file; its path."""
    root = tmp_path / "wh"
    shutil.copytree(sample_warehouse, root, symlinks=True)
    wh = Warehouse(root)
    relink(wh)  # the copy's views name its own files (else `verify` names the views database)
    entry = wh.entries(bronze_table("simultane.deal"), ["raw_month=2026-10"])[0]
    target = root / entry["path"]
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x10
    target.chmod(0o644)
    target.write_bytes(bytes(data))
    return root, entry["path"]


def test_a_damaged_bronze_file_is_named_and_repair_rebuilds_every_table(
    sample_warehouse, tmp_path, capsys
):
    root, path = _damaged_copy(sample_warehouse, tmp_path)
    wh = Warehouse(root)
    before = wh.version()
    hint = "(`duplirank repair` rebuilds it from the landing folder)"
    assert verify(wh) == [f"damaged: {path} {hint}"]
    with pytest.raises(DamagedFile, match="duplirank repair"):  # whoever reads it is told
        Warehouse(root).files(bronze_table("simultane.deal"))
    with pytest.raises(DamagedFile):  # a backfill reads bronze: it cannot repair bronze
        backfill_run(Settings(warehouse=root, landing=SAMPLE), "2026-10", "2026-10")
    capsys.readouterr()

    args = ["--landing", str(SAMPLE), "--warehouse", str(root)]
    assert cli.main(["repair", *args]) == 0
    assert "published a new version" in capsys.readouterr().out
    wh = Warehouse(root)
    assert wh.version() == before + 1 and wh.manifest()["command"] == "repair"
    assert verify(wh) == []
    assert cli.main(["verify", "--warehouse", str(root)]) == 0
    assert_same(snapshot(root), snapshot(sample_warehouse), PUBLISHED)
    # the earlier publications are kept; a nightly after the repair has nothing new
    assert not nightly_run(Settings(warehouse=root, landing=SAMPLE)).published
    assert Warehouse(root).version() == before + 1


def test_repair_refuses_when_the_landing_lacks_a_delivery_the_warehouse_read(
    sample_warehouse, tmp_path, capsys
):
    root, _ = _damaged_copy(sample_warehouse, tmp_path)
    landing = tmp_path / "landing"
    shutil.copytree(SAMPLE, landing)
    (landing / "ff-2026-11-01.jsonl").unlink()
    before = Warehouse(root).manifest()
    args = ["--landing", str(landing), "--warehouse", str(root)]
    assert cli.main(["repair", *args]) == 2
    err = capsys.readouterr().err
    assert "lacks 1 delivery(ies)" in err and "ff-2026-11-01.jsonl" in err
    assert Warehouse(root).manifest() == before  # nothing published
