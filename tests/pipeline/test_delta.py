"""A nightly that only adds rows to a scored partition rescores only the Simultané
tournaments and bridge events of those rows, keeps the partition's other published rows
(flows/steps/delta.py), and publishes exactly what rescoring every unit publishes: a
tournament of an earlier day of the month sent again with a changed deal is rescored, and a
rule change or other scoring code (an upgrade) rescores every tournament of the partitions
the nightly touches."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest

import transforms.bridge.event as bridge_event
import transforms.simultane.tournaments as simultane_tournaments
from flows.nightly import nightly_run
from flows.steps import delta
from flows.tools.synthetic.bridge import bridge_lines
from flows.tools.synthetic.files import split_by_day
from tests.pipeline.test_incremental import assert_equal, day_files, settings_for, tables
from transforms.simultane.options import SimultaneOptions

START, DAYS = date(2026, 1, 20), 10  # January's last days and February's first


def days_with_bridge(out: Path) -> list[Path]:
    """One file per day: its Simultané and Face-à-Face lines, then its bridge events."""
    files, _ = day_files(out, days=DAYS, players=3)
    bridge = split_by_day(bridge_lines(3, 12, START, DAYS), START)
    for path in files:
        day = date.fromisoformat(path.stem.removeprefix("day-"))
        with path.open("a") as f:
            f.writelines(line + "\n" for line in bridge.get(day, []))
    return files


def resent_deal(day_file: Path, out: Path) -> str:
    """A file re-sending one human deal of the day's first tournament with other points;
    returns its tournament."""
    for line in day_file.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "simultane.deal" and not record["is_bot"]:
            record["points_made"] += 10
            out.write_text(json.dumps(record, ensure_ascii=False) + "\n")
            return record["tournament_id"]
    raise AssertionError("no human deal")


def units_of(path: Path, record_type: str, column: str) -> set[str]:
    units = set()
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:  # a corrupted line (quarantined)
            continue
        if record.get("type") == record_type and column in record:
            units.add(record[column])
    return units


def recording(monkeypatch, module, name: str, column: str, seen: set) -> None:
    """Record the units `module.name(inputs, …)` scores."""
    score = getattr(module, name)

    def recorded(inputs, *args):
        for frame in inputs.values():
            seen.update(frame.lazy().select(column).collect()[column].to_list())
        return score(inputs, *args)

    monkeypatch.setattr(module, name, recorded)


@pytest.mark.parametrize("rule_change", [None, "options", "code"])
def test_a_nightly_rescores_the_units_it_receives_as_a_full_rescore_does(
    tmp_path, monkeypatch, rule_change
):
    """Nine days, then the tenth with a deal of the second day sent again (and, with
    rule_change, shorter deals counted as finished, or the scoring code changed): the second
    nightly scores only the tournaments and events it received (every tournament of January
    under new rules), and publishes the tables of the same nightlies run with every unit
    rescored."""
    files = days_with_bridge(tmp_path / "days")
    resent = tmp_path / "resent.jsonl"
    tournament = resent_deal(files[1], resent)
    rules = (
        {"simultane": SimultaneOptions(deal_time_limit_s=40)} if rule_change == "options" else {}
    )

    def nightlies(warehouse: Path, tournaments: set, events: set) -> None:
        landing = warehouse.parent / f"{warehouse.name}-landing"
        landing.mkdir()
        for path in files[:-1]:
            shutil.copy(path, landing / path.name)
        nightly_run(settings_for(warehouse, landing))
        shutil.copy(files[-1], landing / files[-1].name)
        shutil.copy(resent, landing / "zz-resent.jsonl")
        with monkeypatch.context() as m:
            if rule_change == "code":
                m.setattr(delta, "code_digest", lambda: "other scoring code")
            recording(m, simultane_tournaments, "score_tournaments", "tournament_id", tournaments)
            recording(m, bridge_event, "score_events", "event_id", events)
            settings = settings_for(warehouse, landing)
            nightly_run(settings.model_copy(update=rules))

    tournaments, events = set(), set()
    nightlies(tmp_path / "delta", tournaments, events)
    january = set().union(
        *(units_of(f, "simultane.deal", "tournament_id") for f in files if "-01-" in f.name)
    )
    new = units_of(files[-1], "simultane.deal", "tournament_id") | {tournament}
    assert tournaments == (new | january if rule_change else new)
    received = units_of(files[-1], "bridge.event", "event_id")
    month = set().union(
        *(
            units_of(f, "bridge.event", "event_id")
            for f in files
            if f.name[:11] == files[-1].name[:11]
        )
    )  # every event of the partition the nightly touches: rescored by other code
    assert received < month
    assert events == (month if rule_change == "code" else received)
    assert tournament not in units_of(files[-1], "simultane.deal", "tournament_id")

    with monkeypatch.context() as m:  # every unit of the partitions rescored
        m.setattr(delta, "delta", lambda *args: None)
        m.setattr("flows.steps.simultane.delta", lambda *args: None)
        m.setattr("flows.steps.units.delta", lambda *args: None)
        nightlies(tmp_path / "full", set(), set())
    got, want = tables(tmp_path / "delta"), tables(tmp_path / "full")
    assert (
        want["data_issues"]
        .filter(
            want["data_issues"]["keys"].str.contains(tournament)
            & (want["data_issues"]["kind"] == "superseded_record")
        )
        .height
    )
    assert want["bridge_standings"].height and want["simultane_tournament_results"].height
    assert_equal(got, want)


@pytest.mark.parametrize("compact_files", [32, 1])
def test_new_tournaments_are_added_beside_the_published_files(tmp_path, monkeypatch, compact_files):
    """A nightly of new tournaments only (the tenth day, in January's partition) keeps the
    partition's published Simultané result files as they are and adds a file of the new
    rows (or, past COMPACT_FILES files, rewrites the partition as one file); it publishes
    what one fresh run of the ten days does."""
    import flows.steps.simultane as simultane_step
    from flows.storage.warehouse import Warehouse

    monkeypatch.setattr(simultane_step, "COMPACT_FILES", compact_files)
    files = days_with_bridge(tmp_path / "days")
    landing, warehouse = tmp_path / "landing", tmp_path / "wh"
    landing.mkdir()
    for path in files[:-1]:
        shutil.copy(path, landing / path.name)
    nightly_run(settings_for(warehouse, landing))
    key, results = ["raw_month=2026-01"], simultane_step.RESULTS
    before = {t: Warehouse(warehouse).entries(t, key) for t in results}
    shutil.copy(files[-1], landing / files[-1].name)
    nightly_run(settings_for(warehouse, landing))
    after = {t: Warehouse(warehouse).entries(t, key) for t in results}
    for table in results:
        assert len(before[table]) == 1
        if compact_files > 1:
            assert after[table][:-1] == before[table] and len(after[table]) == 2
        else:
            assert len(after[table]) == 1 and after[table] != before[table]

    fresh_landing = tmp_path / "fresh-landing"
    shutil.copytree(landing, fresh_landing)
    nightly_run(settings_for(tmp_path / "fresh", fresh_landing))
    assert_equal(tables(warehouse), tables(tmp_path / "fresh"))
