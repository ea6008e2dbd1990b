"""Publications as records: after a nightly, a rule change and a backfill, `publications` lists
both, `sql --as-of` answers the old ranking, `diff` names exactly the rows the backfill changed,
and the official month-end publication survives later runs and garbage collections."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from flows.artifacts import summary_markdown
from flows.cli import main
from flows.nightly import backfill_run, nightly_run
from flows.settings import Settings
from flows.storage.catalog import tables as tables_of_catalog
from flows.storage.retention import verify
from flows.storage.warehouse import Warehouse
from flows.tools.query import run_sql
from tests_support import PUBLISHED, SAMPLE, snapshot

RULE = {"simultane": {"indice_best": 2, "victoire_best": 1}}
RANKING = "select * from simultane_monthly order by month, player_id"


def cli(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def folders(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "_publications").iterdir())


def set_current_from(root: Path, number: int, moment: str) -> None:
    """When publication `number` became current (its `published` marker): the clock seam."""
    (marker,) = (root / "_publications").glob(f"{number:08d}-*/published")
    marker.write_text(moment)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """A nightly current at the end of November 2026, then a backfill of October and November
    after a rule change: (warehouse, the nightly's copy, the backfill's summary)."""
    tmp = tmp_path_factory.mktemp("publications")
    root = tmp / "wh"
    nightly_run(Settings(warehouse=root, landing=SAMPLE))
    set_current_from(root, 1, "2026-11-20T10:00:00+00:00")
    first = tmp / "first"
    shutil.copytree(root, first, symlinks=True)
    summary = backfill_run(Settings(warehouse=root, landing=SAMPLE, **RULE), "2026-10", "2026-11")
    return root, first, summary


def test_publications_lists_the_nightly_and_the_backfill_as_official(published, capsys):
    root, _, _ = published
    rc, out, _ = cli(capsys, "publications", "--warehouse", str(root), "--format", "json")
    assert rc == 0
    rows = json.loads(out)
    assert [r["number"] for r in rows] == [1, 2]
    assert [r["command"] for r in rows] == ["nightly", "backfill"]
    assert rows[0]["official"] == "current at the end of 2026-11"
    assert rows[0]["current from (Europe/Paris)"] == "2026-11-20 11:00"  # Paris time
    assert rows[1]["official"] == "backfill changing announced 2026-10, 2026-11"
    assert rows[1]["rebuilt"] == "2026-10, 2026-11" and rows[1]["until"] == "now"


def test_sql_as_of_answers_the_old_ranking_with_the_same_guards(published, capsys, tmp_path):
    root, first, _ = published
    old, new = run_sql(first, RANKING), run_sql(root, RANKING)
    assert not old.equals(new)  # the rule change changed the ranking
    for spec in ("1", "2026-11-25T12:00"):  # a number, or a time in the platform time zone
        rc, out, _ = cli(
            capsys, "sql", "--warehouse", str(root), "--as-of", spec, "--format", "csv", RANKING
        )
        assert rc == 0
        assert pl.read_csv(io.StringIO(out), schema=old.schema).equals(old)
    rc, out, _ = cli(
        capsys, "sql", "--warehouse", str(root), "--as-of", "2", "--format", "csv", RANKING
    )
    assert pl.read_csv(io.StringIO(out), schema=new.schema).equals(new)
    target = tmp_path / "out.csv"
    rc, _, err = cli(
        capsys,
        "sql",
        "--warehouse",
        str(root),
        "--as-of",
        "1",
        f"copy simultane_monthly to '{target}'",
    )
    assert rc == 2 and not target.exists() and "duplirank sql" in err
    for spec, message in (("7", "not kept"), ("2026-10-01T00:00", "no publication")):
        rc, _, err = cli(capsys, "sql", "--warehouse", str(root), "--as-of", spec, "select 1")
        assert rc == 2 and message in err


def _changed_keys(old: pl.DataFrame, new: pl.DataFrame, key: list[str]) -> set[tuple]:
    joined = old.join(new, on=key, how="full", suffix="__new", nulls_equal=True, coalesce=True)
    values = [c for c in old.columns if c not in key]
    differs = pl.any_horizontal(pl.col(c).ne_missing(pl.col(f"{c}__new")) for c in values)
    return set(joined.filter(differs).select(key).iter_rows())


def test_diff_names_exactly_the_rows_the_backfill_changed(published, capsys):
    root, first, summary = published
    old, new = snapshot(first), snapshot(root)
    changed_tables = {t for t in PUBLISHED if not old[t].equals(new[t])}
    rc, out, err = cli(capsys, "diff", "1", "2", "--warehouse", str(root), "--format", "json")
    assert rc == 0 and "publication 1 -> 2" in err
    tables = {r["table"]: r for r in json.loads(out)}
    assert set(tables) == changed_tables
    assert tables["simultane_monthly"]["months"] == "2026-10, 2026-11"
    old_rank, new_rank = run_sql(first, RANKING), run_sql(root, RANKING)
    expected = _changed_keys(old_rank, new_rank, ["month", "player_id"])
    assert expected and tables["simultane_monthly"]["changed"] == len(expected)
    rc, out, _ = cli(
        capsys,
        "diff",
        "1",
        "2",
        "--table",
        "simultane_monthly",
        "--warehouse",
        str(root),
        "--format",
        "csv",
    )
    rows = pl.read_csv(io.StringIO(out), infer_schema=False)
    assert set(rows["change"]) == {"changed"}
    assert set(rows.select("month", "player_id").iter_rows()) == expected
    for month, player, column, before, after in rows.select(
        "month", "player_id", "column", "before", "after"
    ).iter_rows():
        was = old_rank.filter(month=month, player_id=player)[column].item()
        now = new_rank.filter(month=month, player_id=player)[column].item()
        assert (str(was), str(now)) == (before, after)
    # the backfill's summary and its artifact: the announced months it changed, rows per month
    # (scoring_rules: the rules of every partition the backfill rescored, 2026-09..12, changed)
    assert tables["scoring_rules"]["changed"] > 0
    assert all(r["months"] == "2026-10, 2026-11" for t, r in tables.items() if t != "scoring_rules")
    gold = {name for name, t in tables_of_catalog().items() if t.layer == "gold"}
    total = sum(r["added"] + r["removed"] + r["changed"] for t, r in tables.items() if t in gold)
    assert "simultane_monthly" in gold and total > 0
    assert set(summary.announced_changes) == {"2026-10", "2026-11"}
    assert sum(summary.announced_changes.values()) == total
    assert "changed published months: 2026-10" in summary.text()
    markdown = summary_markdown(summary, {}, "backfill")
    assert "## Published months changed" in markdown
    assert f"**2026-10**: {summary.announced_changes['2026-10']} rows" in markdown


def test_the_official_publication_survives_later_runs_and_gcs(
    published, capsys, tmp_path, monkeypatch
):
    root, first, _ = published
    wh = tmp_path / "wh"
    shutil.copytree(root, wh, symlinks=True)
    old = run_sql(first, RANKING)
    later = Settings(warehouse=wh, landing=SAMPLE, retention_days=0)
    backfill_run(later, "2026-11", "2026-11")  # the default rules again
    monkeypatch.setenv("DUPLIRANK_RETENTION_DAYS", "0")
    for _ in range(2):
        nightly_run(later)  # nothing new: no publication
        backfill_run(
            Settings(warehouse=wh, landing=SAMPLE, retention_days=0, **RULE), "2026-10", "2026-10"
        )
        assert cli(capsys, "gc", "--warehouse", str(wh))[0] == 0
    kept = folders(wh)
    assert kept[0].startswith("00000001-") and kept[1].startswith("00000002-")
    assert verify(Warehouse(wh)) == []
    rc, out, _ = cli(
        capsys, "sql", "--warehouse", str(wh), "--as-of", "1", "--format", "csv", RANKING
    )
    assert rc == 0 and pl.read_csv(io.StringIO(out), schema=old.schema).equals(old)
    # without keep_official, only the current and the previous current are kept
    monkeypatch.setenv("DUPLIRANK_RETENTION__KEEP_OFFICIAL", "false")
    rc, out, _ = cli(capsys, "gc", "--warehouse", str(wh), "--dry-run")
    assert rc == 0 and "would delete" in out and "00000001-" in out
    assert folders(wh) == kept  # a dry run deletes nothing
    rc, out, _ = cli(capsys, "gc", "--warehouse", str(wh))
    assert rc == 0 and "00000001-" in out
    assert len(folders(wh)) == 2 and not folders(wh)[0].startswith("00000001-")
    assert verify(Warehouse(wh)) == []


def test_retention_counts_from_when_a_publication_stopped_being_current(tmp_path):
    """Four publications; the first current for a long quiet period: each is kept for
    retention_days after the next one became current, the previous current one always."""
    from flows.storage.retention import RetentionPolicy, collect_garbage
    from tests.storage.test_publication import publish

    root = tmp_path / "wh"
    for number, day in enumerate(("2026-09-01", "2026-09-02", "2026-11-28"), start=1):
        publish(root, f"r{number}", {"2026-08": [number]}, retention_days=10_000)
        set_current_from(root, number, f"{day}T10:00:00+00:00")
    policy = RetentionPolicy(days=7, keep_official=False)
    result = collect_garbage(Warehouse(root), policy)
    # 1 stopped being current on 09-02 (deleted), 2 on 11-28 (kept: within 7 days), 3 current
    assert [p.split("/")[1][:8] for p in result.publications] == ["00000001"]
    assert [f[:8] for f in folders(root)] == ["00000002", "00000003"]
    publish(root, "r4", {"2026-08": [4]}, retention=policy)  # 3 was current for 6 days
    assert [f[:8] for f in folders(root)] == ["00000002", "00000003", "00000004"]
    set_current_from(root, 4, "2026-11-29T10:00:00+00:00")
    publish(root, "r5", {"2026-08": [5]}, retention=policy)
    # 2 stopped being current on 11-28, less than 7 days ago: still kept, however old it is
    assert [f[:8] for f in folders(root)] == ["00000002", "00000003", "00000004", "00000005"]
    assert verify(Warehouse(root)) == []


def test_an_open_reader_keeps_answering_after_a_quiet_period(tmp_path, monkeypatch):
    from datetime import UTC, datetime

    from flows.storage import warehouse
    from flows.storage.retention import RetentionPolicy
    from flows.tools.query import connect_read_only
    from tests.storage.test_publication import publish

    class January(datetime):  # the clock of the first publication
        @classmethod
        def now(cls, tz=None):
            return datetime(2026, 1, 1, 10, tzinfo=UTC).astimezone(tz)

    root = tmp_path / "wh"
    with monkeypatch.context() as patch:
        patch.setattr(warehouse, "datetime", January)
        publish(root, "r1", {"2026-08": [1, 2]})  # created and current for months: quiet nights
    con = connect_read_only(root)
    policy = RetentionPolicy(days=7, keep_official=False)
    publish(root, "r2", {"2026-08": [3]}, retention=policy)  # collects garbage
    assert con.execute("select sum(x) from t").fetchone() == (3,)  # publication 1's rows
    publish(root, "r3", {"2026-08": [4]}, retention=policy)
    assert con.execute("select sum(x) from t").fetchone() == (3,)  # stopped being current now
    con.close()
    assert run_sql(root, "select sum(x) as s from t")["s"].to_list() == [4]
