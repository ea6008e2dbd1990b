"""One bad unit never stops the others; a damaged file is named, and a backfill repairs it."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest

from flows.nightly import backfill_run
from flows.settings import Settings
from flows.steps import StepContext, bridge, face_a_face, simultane
from flows.steps.context import bronze_table
from flows.storage.published import DamagedFile
from flows.storage.retention import verify
from flows.storage.served import relink
from flows.storage.warehouse import Warehouse
from tests_support import PUBLISHED, SAMPLE, assert_same, snapshot


def test_a_tournament_whose_scoring_fails_is_reported_and_the_others_are_published(
    sample_warehouse, monkeypatch
):
    from transforms.simultane import tournaments

    wh = Warehouse(sample_warehouse)
    ids = wh.scan("simultane_deal", ["raw_month=2026-10"]).select("tournament_id").unique()
    ids = sorted(ids.collect()["tournament_id"])
    bad = ids[1]
    real = tournaments.score_tournaments

    def failing(inputs, opts):
        if bad in inputs["simultane.deal"]["tournament_id"].to_list():
            raise ValueError(f"cannot score {bad}")
        return real(inputs, opts)

    monkeypatch.setattr(tournaments, "score_tournaments", failing)
    ctx = StepContext(Settings(warehouse=sample_warehouse), "r-fail")
    ops = simultane.month_step(ctx, "2026-10")
    results = wh.scan("simultane_tournament_results", pending=ops).collect()
    scored = set(results.filter(pl.col("month") <= "2026-10")["tournament_id"])
    assert bad not in scored and set(ids) - {bad} <= set(results["tournament_id"])
    issues = wh.scan("data_issues", pending=ops).filter(pl.col("kind") == "scoring_failed")
    (issue,) = issues.collect().rows(named=True)
    assert json.loads(issue["keys"]) == {"tournament_id": bad}
    assert issue["detail"] == f"not scored: ValueError: cannot score {bad}"


UNIT_GAMES = {  # step, module and function that scores, record type and column of a unit, table
    "face_a_face": (face_a_face, "transforms.face_a_face.matches", "score_matches", "ff.match",
                    "match_id", "ff_match_scores"),
    "bridge": (bridge, "transforms.bridge.event", "score_events", "bridge.event", "event_id",
               "bridge_standings"),
}  # fmt: skip


@pytest.mark.parametrize("game", UNIT_GAMES)
def test_a_match_or_event_whose_scoring_fails_is_reported_and_the_others_are_published(
    sample_warehouse, monkeypatch, game
):
    import importlib

    step, module_name, function, record_type, key, table = UNIT_GAMES[game]
    module = importlib.import_module(module_name)
    wh = Warehouse(sample_warehouse)
    bronze = wh.scan(bronze_table(record_type), ["raw_month=2026-10"])
    ids = sorted(bronze.select(key).unique().collect()[key])
    assert len(ids) >= 2
    bad = ids[1]
    real = getattr(module, function)

    def failing(inputs, *args):
        frame = inputs[record_type]
        units = (frame.collect() if isinstance(frame, pl.LazyFrame) else frame)[key]
        if bad in units.to_list():
            raise ValueError(f"cannot score {bad}")
        return real(inputs, *args)

    monkeypatch.setattr(module, function, failing)
    ctx = StepContext(Settings(warehouse=sample_warehouse), "r-fail")
    ops = step.month_step(ctx, "2026-10")
    published = set(wh.scan(table, pending=ops).collect()[key])
    assert bad not in published and set(ids) - {bad} <= published
    issues = wh.scan("data_issues", pending=ops).filter(pl.col("kind") == "scoring_failed")
    (issue,) = issues.collect().rows(named=True)
    assert json.loads(issue["keys"]) == {key: bad}
    assert issue["detail"] == f"not scored: ValueError: cannot score {bad}"


def test_when_every_tournament_fails_the_step_fails(sample_warehouse, monkeypatch):
    """A fault in every unit is a bug, not bad data: no empty tables are published."""
    from transforms.simultane import tournaments

    def broken(inputs, opts):
        raise RuntimeError("bug")

    monkeypatch.setattr(tournaments, "score_tournaments", broken)
    ctx = StepContext(Settings(warehouse=sample_warehouse), "r-bug")
    with pytest.raises(RuntimeError, match="bug"):
        simultane.month_step(ctx, "2026-10")


def test_a_flipped_bit_is_named_and_a_backfill_of_its_month_repairs_it(sample_warehouse, tmp_path):
    root = tmp_path / "wh"
    shutil.copytree(sample_warehouse, root, symlinks=True)
    wh = Warehouse(root)
    relink(wh)  # the copy's views name its own files (else `verify` names the views database)
    (entry,) = wh.entries("simultane_deal_results", ["raw_month=2026-10"])
    target = root / entry["path"]
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x10
    target.chmod(0o644)
    target.write_bytes(bytes(data))
    assert verify(Warehouse(root)) == [f"damaged: {entry['path']}"]
    # a rebuild from the first deal reads it (a nightly reads the month-end state instead)
    ctx = StepContext(Settings(warehouse=root), "r-read", from_scratch=True)
    with pytest.raises(DamagedFile, match=target.name):  # whoever reads it is told which
        simultane.history_step(ctx, "2026-11")
    backfill_run(Settings(warehouse=root, landing=SAMPLE), "2026-10", "2026-10")
    assert verify(Warehouse(root)) == []
    assert_same(snapshot(root), snapshot(sample_warehouse), PUBLISHED)
