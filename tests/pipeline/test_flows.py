"""The real Prefect flows on the committed sample logs, checked through `duplirank sql`."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from flows import cli
from flows.nightly import backfill_run, nightly_run
from flows.settings import Settings
from flows.storage.warehouse import Warehouse
from tests_support import ORACLES, PUBLISHED, SAMPLE, assert_same, fail_at, snapshot


def sql(capsys, warehouse: Path, query: str) -> pl.DataFrame:
    assert cli.main(["sql", query, "--format", "csv", "--warehouse", str(warehouse)]) == 0
    from io import StringIO

    return pl.read_csv(StringIO(capsys.readouterr().out))


def test_nightly_publishes_the_sample_and_sql_reads_it(sample_warehouse, capsys):
    counts = sql(
        capsys,
        sample_warehouse,
        "select sum(lines_read) as lines, sum(rows_accepted) as accepted, "
        "sum(rows_quarantined) as quarantined from ingest_log",
    )
    lines, accepted, quarantined = counts.row(0)
    assert lines == accepted + quarantined and quarantined > 0
    # every accepted Simultané row is scored once (re-delivered rows are reported instead)
    counts = sql(
        capsys,
        sample_warehouse,
        """
        select (select count(*) from simultane_deal) as bronze,
               (select count(*) from simultane_deal_results) as scored,
               (select count(*) from data_issues where kind = 'superseded_record') as superseded
        """,
    )
    bronze, scored, superseded = counts.row(0)
    assert scored == bronze - superseded and scored > 3000
    # the bot is 100 on every scored deal
    check = sql(
        capsys,
        sample_warehouse,
        """
        select count(*) filter (where is_bot and scored and abs(pct - 100) > 1e-9) as bad_bot,
               count(*) filter (where pct < 0 or pct > 200) as bad_pct
        from simultane_deal_results
        """,
    )
    assert check.row(0) == (0, 0)
    # the n participants of a scored deal share top 2(n - 1); when all finished, their points
    # sum to n(n - 1)
    deals = sql(
        capsys,
        sample_warehouse,
        """
        with deals as (
            select tournament_id, deal_no, count(*) as n, sum(points) as points,
                   bool_and(finished) as all_finished, min(top) as top_min, max(top) as top_max
            from simultane_deal_results
            where scored
            group by tournament_id, deal_no
        )
        select count(*) filter (where all_finished) as finished_deals,
               count(*) filter (where all_finished and points <> n * (n - 1)) as bad_points,
               count(*) filter (where top_min <> 2 * (n - 1) or top_max <> 2 * (n - 1)) as bad_top
        from deals
        """,
    )
    finished_deals, bad_points, bad_top = deals.row(0)
    assert finished_deals > 100 and bad_points == 0 and bad_top == 0
    monthly = sql(
        capsys, sample_warehouse, "select * from simultane_monthly order by month, rank_indice"
    )
    assert set(monthly["month"]) == {"2026-10", "2026-11"}
    assert monthly.filter(pl.col("player_id") == "BOT").height == 0
    # the winners of a tournament are exactly the participants with its best result (the bot
    # included: when it is alone at the top, no human wins)
    winners = sql(
        capsys,
        sample_warehouse,
        """
        select count(distinct tournament_id) as tournaments,
               count(distinct tournament_id) filter (where is_winner) as with_winner,
               count(*) filter (where is_winner <> (points = best)) as wrong
        from (select *, max(points) over (partition by tournament_id) as best
              from simultane_tournament_results)
        """,
    )
    tournaments, with_winner, wrong = winners.row(0)
    assert tournaments > 10 and with_winner == tournaments and wrong == 0


def test_running_the_same_nightly_twice_gives_identical_tables(sample_warehouse, tmp_path):
    before = snapshot(sample_warehouse)
    copy = tmp_path / "again"
    shutil.copytree(sample_warehouse, copy)
    summary = nightly_run(Settings(warehouse=copy, landing=SAMPLE))
    assert all(f.status == "already_ingested" for f in summary.ingest.files)
    assert not any(f.logged for f in summary.ingest.files)  # nothing read, nothing staged
    after = snapshot(copy)
    assert_same(after, before, PUBLISHED)


def test_backfilling_a_month_twice_gives_identical_tables(sample_warehouse, tmp_path):
    copy = tmp_path / "bf"
    shutil.copytree(sample_warehouse, copy)
    settings = Settings(warehouse=copy, landing=SAMPLE)
    backfill_run(settings, "2026-10", "2026-10")
    once = snapshot(copy)
    backfill_run(settings, "2026-10", "2026-10")
    twice = snapshot(copy)
    reference = snapshot(sample_warehouse)
    assert_same(once, twice, PUBLISHED)
    assert_same(once, reference, PUBLISHED)


def test_backfilling_a_later_month_alone_gives_identical_tables(sample_warehouse, tmp_path):
    """Elo and blocks carried from earlier months are recomputed identically."""
    copy = tmp_path / "later"
    shutil.copytree(sample_warehouse, copy)
    summary = backfill_run(Settings(warehouse=copy, landing=SAMPLE), "2026-11", "2026-11")
    assert set(summary.rebuilt) == {"simultane", "face_a_face", "bridge"}
    assert_same(snapshot(copy), snapshot(sample_warehouse), PUBLISHED)


def test_a_failure_before_the_swap_publishes_nothing_and_the_rerun_completes(
    sample_warehouse, tmp_path, monkeypatch
):
    """One publication per run: a failure at the last moment leaves every table — bronze,
    quarantine and ingest log included — as it was; the next run redoes the whole night."""
    root = tmp_path / "crash"
    landing = tmp_path / "landing"
    shutil.copytree(SAMPLE, landing)
    later = tmp_path / "later"
    later.mkdir()
    days = sorted({p.name.split("-", 1)[1].split(".")[0] for p in landing.iterdir()})
    for path in landing.iterdir():
        if days[0] not in path.name:
            shutil.move(path, later / path.name)
    settings = Settings(warehouse=root, landing=landing)
    nightly_run(settings)
    published = snapshot(root)
    version = Warehouse(root).version()

    for path in later.iterdir():
        shutil.move(path, landing / path.name)
    with monkeypatch.context() as patch:
        fail_at(patch, "before_swap")
        with pytest.raises(RuntimeError, match="injected failure before_swap"):
            nightly_run(settings)
    assert Warehouse(root).version() == version
    assert_same(snapshot(root), published, PUBLISHED)

    summary = nightly_run(settings)  # the whole night again: ingest, rescore, publish
    assert summary.published and Warehouse(root).manifest()["dirty"] == {}
    assert_same(snapshot(root), snapshot(sample_warehouse), PUBLISHED[:-1])


def test_scoring_in_small_batches_gives_the_same_tables(sample_warehouse, tmp_path):
    """Months bigger than batch_rows are scored in tournament / player hash buckets."""
    root = tmp_path / "batched"
    nightly_run(Settings(warehouse=root, landing=SAMPLE, batch_rows=300))
    files = Warehouse(root).files("simultane_deal_results", ["raw_month=2026-11"])
    assert len(files) > 3  # really split
    batched, reference = snapshot(root), snapshot(sample_warehouse)
    assert_same(batched, reference, PUBLISHED[:-1])


@pytest.mark.parametrize(
    "folder, value",
    [
        ("kops_PCH1003_matchpoints", "round(pct, 2)"),
        ("kops_SM0807_cavendish_avg", "round(total, 2)"),
    ],
)
def test_nightly_publishes_kops_events_exactly_as_kops_ranked_them(tmp_path, capsys, folder, value):
    landing = tmp_path / "landing"
    landing.mkdir()
    shutil.copy(ORACLES / folder / "results.jsonl", landing / f"{folder}.jsonl")
    root = tmp_path / "wh"
    nightly_run(Settings(warehouse=root, landing=landing))
    published = sql(
        capsys,
        root,
        f"select rank, cast(pair as integer) as pair, {value} as value "
        "from bridge_standings order by rank, pair",
    )
    expected = pl.read_csv(ORACLES / folder / "expected_standings.csv").sort("rank", "pair")
    assert published.rows() == expected.rows()
    boards = sql(capsys, root, "select count(*) as n from bridge_board_results")["n"][0]
    assert boards == 2 * (pl.read_csv(ORACLES / folder / "expected_boards.csv").height)


def test_chart_of_a_player_from_the_published_blocks(sample_warehouse, tmp_path, capsys):
    player = sql(
        capsys, sample_warehouse, "select player_id from simultane_blocks order by all limit 1"
    )["player_id"][0]
    out = tmp_path / "p.png"
    argv = ["chart", "simultane", "--player", player, "--out", str(out)]
    assert cli.main([*argv, "--warehouse", str(sample_warehouse)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    argv[3] = "nobody"
    assert cli.main([*argv, "--warehouse", str(sample_warehouse)]) == 2
    assert "no results for player nobody" in capsys.readouterr().err


def test_the_nightly_publishes_the_results_site_with_its_tables(sample_warehouse, tmp_path):
    """Every publication rebuilds <warehouse>/site/ from its tables; a run with nothing new
    publishes nothing and leaves the site as it is."""
    index = sample_warehouse / "site" / "index.html"
    assert index.exists() and "Simultané" in index.read_text()
    copy = tmp_path / "again"
    shutil.copytree(sample_warehouse, copy, symlinks=True)
    before = {p: p.stat().st_mtime_ns for p in (copy / "site").rglob("*.html")}
    summary = nightly_run(Settings(warehouse=copy, landing=SAMPLE))
    assert not summary.published and summary.site is None
    assert {p: p.stat().st_mtime_ns for p in (copy / "site").rglob("*.html")} == before


def test_the_catalog_is_every_view_and_column_with_its_type_and_comment(sample_warehouse):
    """sql/catalog.toml documents the views exactly: names, columns, types; every view and
    column carries its comment inside the database (`duckdb_columns()`)."""
    from flows.storage.catalog import tables
    from flows.tools.query import run_sql

    columns = run_sql(
        sample_warehouse,
        "select table_name, column_name, data_type, comment from duckdb_columns() "
        "where not internal order by table_name, column_index",
    )
    views = run_sql(
        sample_warehouse, "select view_name, comment from duckdb_views() where not internal"
    )
    catalog = tables()
    assert set(views["view_name"]) == set(catalog)
    for name, table in catalog.items():
        mine = columns.filter(pl.col("table_name") == name)
        assert mine.select("column_name", "data_type").rows() == [
            (c.name, c.type) for c in table.columns
        ], name
        assert mine["comment"].to_list() == [c.description for c in table.columns], name
    assert views.filter(pl.col("comment").is_null()).height == 0


def test_each_catalog_key_identifies_a_row(sample_warehouse):
    """`key` in sql/catalog.toml (what `duplirank diff` matches rows on) is unique and never
    null in the sample warehouse, and every gold and silver table of the pipeline has one."""
    from flows.storage.catalog import tables
    from flows.tools.query import run_sql

    keyed = {name: t for name, t in tables().items() if t.key}
    assert {"simultane_monthly", "ff_monthly_ranking", "bridge_board_results"} <= set(keyed)
    for name, table in keyed.items():
        key = ", ".join(f'"{k}"' for k in table.key)
        nulls = " or ".join(f'"{k}" is null' for k in table.key if k != "section")
        frame = run_sql(
            sample_warehouse,
            f"select count(*) as n, count(distinct ({key})) as k, "
            f"count(*) filter (where {nulls}) as z from {name}",
        )
        n, k, z = frame.row(0)
        assert n > 0 and n == k and z == 0, (name, n, k, z)


def test_the_readme_table_list_is_the_catalog():
    from flows.storage.catalog import README_END, README_START, readme_table

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    generated = readme.split(README_START, 1)[1].split(README_END, 1)[0].strip()
    assert generated == readme_table(), "run: .venv/bin/python -m flows.storage.catalog --readme"


def test_the_bridge_report_names_the_winner_of_each_field(sample_warehouse):
    from flows.tools.report import rankings_text

    text = rankings_text(sample_warehouse, top=50)
    bridge = text[text.index("Bridge") :]
    assert "field" in bridge and " NS " in bridge and " EW " in bridge
