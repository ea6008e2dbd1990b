"""A nightly continues the histories from the state the publication carries (Elo, blocks),
so a history cut into nightlies — days late, a day delivered twice, a match re-sent, a rule
change followed by a backfill and more nightlies — publishes exactly the tables of one fresh
run of the same data."""

from __future__ import annotations

import shutil
import tempfile
from datetime import date, timedelta
from pathlib import Path
from typing import NamedTuple

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flows.nightly import backfill_run, nightly_run
from flows.settings import Settings, SiteOptions
from flows.storage.published import Published
from flows.storage.warehouse import Warehouse
from flows.tools.synthetic.face_a_face import ff_lines
from flows.tools.synthetic.files import split_by_day
from flows.tools.synthetic.platform import player_ids
from flows.tools.synthetic.simultane import simultane_log
from tests.tests_support import read_table
from tests_support import PUBLISHED
from transforms.face_a_face.options import FaceAFaceOptions
from transforms.simultane.options import SimultaneOptions

START, DAYS, PLAYERS = date(2026, 1, 20), 48, 3  # three months, more than the 45-day window
NIGHTS = 3
# a rule change: shorter blocks, a smaller K for new players (both change every later value)
CHANGED = {
    "simultane": SimultaneOptions(block_deals=12),
    "face_a_face": FaceAFaceOptions(k_new=32),
}
# quarantine rows name the file, its lines and the time they were read: compared on what
# was refused and why
QUARANTINE = ("raw", "rule")


def day_files(out: Path, days: int = DAYS, players: int = PLAYERS) -> tuple[list[Path], list[Path]]:
    """One file per day holding that day's Simultané and Face-à-Face lines, and one per day
    holding its Face-à-Face lines alone (the day's matches sent again)."""
    simultane = {d.day: d.lines for d in simultane_log(5, players, START, days).days}
    ff = split_by_day(ff_lines(5, player_ids(players), START, days), START)
    out.mkdir(parents=True)
    files, resent = [], []
    for offset in range(days):
        day = START + timedelta(days=offset)
        path = out / f"day-{day.isoformat()}.jsonl"
        path.write_text("".join(line + "\n" for line in simultane[day] + ff.get(day, [])))
        files.append(path)
        again = out / f"resent-ff-{day.isoformat()}.jsonl"
        again.write_text("".join(line + "\n" for line in ff.get(day, [])))
        resent.append(again)
    return files, resent


def settings_for(warehouse: Path, landing: Path, changed: bool = False) -> Settings:
    rules = CHANGED if changed else {}
    return Settings(warehouse=warehouse, landing=landing, site=SiteOptions(enabled=False), **rules)


def tables(warehouse: Path) -> dict[str, pl.DataFrame]:
    wh = Warehouse(warehouse)
    out = {}
    for table in PUBLISHED:
        frame = read_table(wh, table)
        if table == "quarantine":
            frame = frame.select(QUARANTINE).unique()
        out[table] = frame.sort(frame.columns, nulls_last=True) if frame.width else frame
    return out


def assert_equal(got: dict, want: dict) -> None:
    for table, expected in want.items():
        assert got[table].schema == expected.schema, table
        assert got[table].equals(expected), table


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """The days' files and the tables of one fresh run of all of them (default rules, and the
    changed rules)."""
    root = tmp_path_factory.mktemp("incremental")
    files, resent = day_files(root / "days")
    landing = root / "landing"
    landing.mkdir()
    for path in files:
        shutil.copy(path, landing / path.name)
    fresh = {}
    for changed in (False, True):
        warehouse = root / f"fresh-{changed}"
        nightly_run(settings_for(warehouse, landing, changed))
        fresh[changed] = tables(warehouse)
    assert fresh[False]["simultane_blocks"].height > 50 and fresh[False]["ff_elo"].height > 20
    # the state a nightly continues Elo from: one per month end of the three months
    assert fresh[False]["ff_player_state"]["month"].n_unique() == 3
    assert not fresh[False]["simultane_blocks"].equals(fresh[True]["simultane_blocks"])
    assert not fresh[False]["ff_elo"].equals(fresh[True]["ff_elo"])
    return Days(files, resent, fresh)


class Days(NamedTuple):
    """The days' files, their Face-à-Face lines sent again, the fresh runs' tables."""

    files: list[Path]
    resent: list[Path]
    fresh: dict[bool, dict[str, pl.DataFrame]]

    def __repr__(self) -> str:  # hypothesis prints the failing example with it
        return f"Days({len(self.files)} days)"


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    nights=st.lists(st.integers(0, NIGHTS - 1), min_size=DAYS, max_size=DAYS),
    twice=st.integers(0, DAYS - 1),
    resent=st.tuples(st.integers(0, DAYS - 1), st.integers(0, NIGHTS - 1)),
    change_after=st.none() | st.integers(0, NIGHTS - 1),
)
def test_nightlies_publish_what_one_fresh_run_publishes(
    history, nights, twice, resent, change_after
):
    """Day d is delivered in nightly nights[d] (days arrive after later ones, months late);
    day `twice` comes again, under another name, in the last nightly; the Face-à-Face lines
    of day resent[0] are sent again in nightly resent[1]. With change_after = n, the rules
    change after nightly n, every month is backfilled, and the later nightlies continue from
    the state the backfill rebuilt."""
    files, again, fresh = history
    day, resent_night = resent
    with tempfile.TemporaryDirectory() as tmp:
        landing, warehouse = Path(tmp) / "landing", Path(tmp) / "warehouse"
        landing.mkdir()
        changed = False
        for night in range(NIGHTS):
            for path, when in zip(files, nights, strict=True):
                if when == night:
                    shutil.copy(path, landing / path.name)
            if night == resent_night:
                shutil.copy(again[day], landing / again[day].name)
            if night == NIGHTS - 1:
                shutil.copy(files[twice], landing / f"again-{files[twice].name}")
            nightly_run(settings_for(warehouse, landing, changed))
            if night == change_after:
                changed = True
                if any(landing.iterdir()):  # else there is nothing to backfill yet
                    backfill_run(settings_for(warehouse, landing, changed), "2026-01", "2026-03")
        assert_equal(tables(warehouse), fresh[changed])


def test_a_nightly_continues_from_the_state_of_a_month_end(tmp_path):
    """Over 100 days, a nightly of the last 10 (April) rewrites blocks from March (the 45-day
    window) and Elo from April: it continues from each player's state at the end of February
    (Simultané: blocks of 250 deals, so a player's last block before the new deals may be
    February's) and of March (Face-à-Face), and publishes what one fresh run does."""
    files, _ = day_files(tmp_path / "days", days=100, players=2)
    landing = tmp_path / "landing"
    landing.mkdir()
    rules = {"simultane": SimultaneOptions(block_deals=250)}

    def run(warehouse: Path) -> None:
        nightly_run(
            Settings(warehouse=warehouse, landing=landing, site=SiteOptions(enabled=False), **rules)
        )

    for path in files[:90]:
        shutil.copy(path, landing / path.name)
    run(tmp_path / "nightly")
    for path in files[90:]:
        shutil.copy(path, landing / path.name)
    run(tmp_path / "nightly")
    run(tmp_path / "fresh")
    want = tables(tmp_path / "fresh")
    blocks = want["simultane_blocks"]
    # a player's blocks in April follow one of February's, none in March before the cut
    assert blocks.filter(pl.col("month") == "2026-04").height
    assert want["simultane_player_state"].filter(pl.col("month") == "2026-02").height
    assert_equal(tables(tmp_path / "nightly"), want)


def test_a_nightly_reads_the_state_not_the_months_before_it(tmp_path, monkeypatch):
    """A nightly of April's last days reads each player's state at the end of March (their
    last blocks and their open block), and the deals and tournaments of April (and of March,
    the month its Indice reads from): no file of the deals, tournaments or blocks of January
    or February; and the Elo state, not the matches or Elo rows of January. It publishes
    what one fresh run does."""
    files, _ = day_files(tmp_path / "days", days=100, players=2)
    landing = tmp_path / "landing"
    landing.mkdir()
    for path in files[:90]:
        shutil.copy(path, landing / path.name)
    nightly_run(settings_for(tmp_path / "nightly", landing))
    wh = Warehouse(tmp_path / "nightly")
    old = {  # the partitions a nightly of April has no need to read
        "simultane_deal_results": ("raw_month=2026-01", "raw_month=2026-02"),
        "simultane_tournament_results": ("raw_month=2026-01",),
        "simultane_blocks": ("month=2026-01",),
        "simultane_open_deals": ("month=2026-01", "month=2026-02"),
        "ff_match_scores": ("raw_month=2026-01",),
        "ff_elo": ("month=2026-01",),
    }
    earlier = {e["path"] for table, keys in old.items() for e in wh.entries(table, list(keys))}
    assert len(earlier) >= 6 and wh.entries("simultane_open_deals", ["month=2026-03"])
    read = []
    checked = Published.checked

    def recording(self, entry):
        read.append(entry["path"])
        return checked(self, entry)

    monkeypatch.setattr(Published, "checked", recording)
    for path in files[90:]:
        shutil.copy(path, landing / path.name)
    nightly_run(settings_for(tmp_path / "nightly", landing))
    assert read and not earlier & set(read)
    nightly_run(settings_for(tmp_path / "fresh", landing))
    assert_equal(tables(tmp_path / "nightly"), tables(tmp_path / "fresh"))


def test_a_nightly_leaves_the_months_before_its_units_as_published(tmp_path):
    """A nightly of March's 3rd to 5th (after a first nightly up to March 2nd) rescores
    March's partitions, whose records are all of March: the history tables of February
    (Simultané daily and monthly, Face-à-Face matches, Elo and ranking) keep their files;
    it publishes what one fresh run does."""
    files, _ = day_files(tmp_path / "days", days=45)
    landing, warehouse = tmp_path / "landing", tmp_path / "nightly"
    landing.mkdir()
    for path in files[:42]:
        shutil.copy(path, landing / path.name)
    nightly_run(settings_for(warehouse, landing))
    february = ["simultane_daily", "simultane_monthly", "ff_matches", "ff_elo",
                "ff_monthly_ranking"]  # fmt: skip
    before = {t: Warehouse(warehouse).entries(t, ["month=2026-02"]) for t in february}
    for path in files[42:]:
        shutil.copy(path, landing / path.name)
    summary = nightly_run(settings_for(warehouse, landing))
    assert summary.rebuilt["simultane"] == ["2026-03"]
    for table in february:
        assert before[table], table
        assert Warehouse(warehouse).entries(table, ["month=2026-02"]) == before[table], table
    nightly_run(settings_for(tmp_path / "fresh", landing))
    assert_equal(tables(warehouse), tables(tmp_path / "fresh"))
