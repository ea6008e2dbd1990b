"""The site built from the sample warehouse (real nightly): pages, escaping, what a rebuild
rewrites, the staged swap, the command line. Browser behaviour is in test_browser.py."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from site_support import KOPS_EVENT, oracle_dir

from flows import cli
from flows.errors import UserError
from flows.storage.warehouse import Warehouse
from flows.tools.site import build_site, paths, publish_site
from flows.tools.site.build import PAGE_INDEX, concurrently
from flows.tools.site.fmt import num, num_value
from flows.tools.site.paths import MAX_SLUG, slug, slug_expr
from flows.tools.site.svg import curve_colour


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []
        self.srcs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "href" in attrs:
            self.hrefs.append(attrs["href"])
        if "src" in attrs:
            self.srcs.append(attrs["src"])


def published(warehouse: Path, table: str) -> pl.DataFrame:
    return Warehouse(warehouse).scan(table).collect()


def test_every_page_of_the_sample_is_built(sample_site, site_warehouse):
    players = set(published(site_warehouse, "simultane_monthly")["player_id"])
    for player in players:
        assert (sample_site / f"simultane/joueurs/{player}.html").is_file()
    for tid in set(published(site_warehouse, "simultane_tournament_results")["tournament_id"]):
        assert (sample_site / f"simultane/tournois/{tid}.html").is_file()
    # each match: a section of the page of its day (local time), linked as `…#m-<id>`
    when = pl.coalesce("started_at", "created_at").dt.convert_time_zone("Europe/Paris")
    matches = published(site_warehouse, "ff_matches").select(
        "match_id", day=when.dt.strftime("%Y-%m-%d")
    )
    assert matches["day"].n_unique() > 1
    for day, ids in matches.group_by("day").agg("match_id").iter_rows():
        html = (sample_site / f"face-a-face/matches/{day}.html").read_text()
        assert sorted(re.findall(r'<article class="match" id="m-([^"]+)"', html)) == sorted(ids)
    standings = published(site_warehouse, "bridge_standings")
    boards = published(site_warehouse, "bridge_board_results")
    for event, pair in standings.select("event_id", "pair").iter_rows():
        assert (sample_site / f"bridge/tournois/{event}/paire-{pair}.html").is_file()
    for event, board in boards.select("event_id", "board").unique().iter_rows():
        assert (sample_site / f"bridge/tournois/{event}/donne-{board}.html").is_file()
    for day in published(site_warehouse, "simultane_daily")["date"].unique():
        assert (sample_site / f"simultane/{day:%Y-%m}/{day}.html").is_file()


def test_every_link_of_every_page_is_a_file_of_the_site(sample_site):
    pages = list(sample_site.rglob("*.html"))
    assert len(pages) > 200
    for page in pages:
        parser = Links()
        parser.feed(page.read_text())
        for href in parser.hrefs + parser.srcs:
            assert not re.match(r"^[a-z]+:|^//", href), (page, href)  # relative links only
            target = (page.parent / href.split("#")[0].split("?")[0]).resolve()
            assert target.is_file() and sample_site.resolve() in target.parents, (page, href)
            if "#" in href:  # a section of a page: its anchor is there
                assert f'id="{href.split("#")[1]}"' in target.read_text(), (page, href)


def test_monthly_ranking_page_shows_the_published_ranking(sample_site, site_warehouse):
    monthly = published(site_warehouse, "simultane_monthly").filter(pl.col("month") == "2026-11")
    html = (sample_site / "simultane/2026-11/index.html").read_text()
    rows = re.findall(
        r'<tr id="p-([^"]+)"><td>(\d+)<th scope=row>'
        r'<a href="[^"]+">([^<]+)</a><td>([\d,]+)<td>',
        html,
    )
    expected = monthly.sort("rank_indice", "player_id").select(
        "player_id",
        pl.col("rank_indice").cast(pl.String),
        pl.col("player_id").alias("p"),
        num(pl.col("indice"), 2, "fr").alias("shown"),
    )
    assert rows == expected.rows()  # each row with its anchor (players' pages link to it)
    assert 'lang="fr"' in html and "Indice" in html and "% actuel" in html


def test_tournament_grid_marks_top_and_bulle(sample_site, site_warehouse):
    deals = published(site_warehouse, "simultane_deal_results")
    tid = deals["tournament_id"].sort()[0]
    mine = deals.filter(pl.col("tournament_id") == tid)
    html = (sample_site / f"simultane/tournois/{tid}.html").read_text()
    grid = html[html.index('class="data grid') :]
    assert grid.count("<td class=top>") == mine["is_top"].sum()
    unfinished = mine.filter(pl.col("status") != "finished").height
    assert grid.count("<td class=bulle>") + grid.count('<td class="unfinished bulle">') == (
        mine.filter(pl.col("is_bulle") | (pl.col("status") != "finished")).height
    )
    assert grid.count('<td class="unfinished bulle">') == unfinished
    # a cell per deal of every participant (an empty one after a quit), no tooltip per cell
    results = published(site_warehouse, "simultane_tournament_results")
    players = results.filter(pl.col("tournament_id") == tid).height
    body = grid.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr") == players and body.count("<td") == players * mine["deal_no"].max()
    assert "title=" not in body


def test_english_site(site_warehouse, tmp_path):
    report = build_site(Warehouse(site_warehouse).scan, tmp_path / "en", lang="en")
    html = (tmp_path / "en/face-a-face/2026-11/index.html").read_text()
    assert 'lang="en"' in html and "Rank" in html and "# Matches" in html
    assert report.pages == len(list((tmp_path / "en").rglob("*.html")))


def test_rebuild_reuses_every_unchanged_page(sample_site, site_warehouse, tmp_path):
    report = build_site(Warehouse(site_warehouse).scan, tmp_path / "again", previous=sample_site)
    assert report.written == 0 and report.reused == report.pages + 2  # + stylesheet, script
    page = "simultane/2026-11/index.html"
    assert os.stat(tmp_path / "again" / page).st_ino == os.stat(sample_site / page).st_ino


def test_rebuild_rewrites_only_the_pages_whose_data_changed(sample_site, site_warehouse, tmp_path):
    wh = Warehouse(site_warehouse)
    monthly = wh.scan("simultane_monthly").collect()
    player = monthly.filter(pl.col("month") == "2026-10").sort("rank_indice")[-1, "player_id"]

    def read_table(name):
        if name == "simultane_monthly":  # one player's October Indice changes
            return monthly.with_columns(
                indice=pl.when((pl.col("player_id") == player) & (pl.col("month") == "2026-10"))
                .then(pl.col("indice") + 0.01)
                .otherwise(pl.col("indice"))
            )
        return wh.scan(name)

    report = build_site(read_table, tmp_path / "next", previous=sample_site)
    assert set(report.written_paths) == {
        "simultane/2026-10/index.html",
        f"simultane/joueurs/{player}.html",
    }
    assert report.reused == report.pages - 2 + 2  # (+ the stylesheet and the script)


def test_ids_too_long_for_a_file_name_still_get_their_pages(site_warehouse, tmp_path):
    """One absurd id in the logs never stops the site: its page is named by a digest."""
    wh = Warehouse(site_warehouse)
    player = wh.scan("simultane_monthly").collect()["player_id"][0]
    tournament = wh.scan("simultane_tournament_results").collect()["tournament_id"][0]
    long_player, long_tournament = "é" * 200, "T" * 300

    def read_table(name):
        frame = wh.scan(name)
        names = frame.collect_schema().names()
        return frame.with_columns(
            *(pl.col(c).replace(player, long_player) for c in ("player_id",) if c in names),
            *(
                pl.col(c).replace(tournament, long_tournament)
                for c in ("tournament_id",)
                if c in names
            ),
        )

    out = tmp_path / "long"
    build_site(read_table, out)
    player_page = out / paths.sim_player(slug(long_player))
    tournament_page = out / paths.sim_tournament(slug(long_tournament))
    assert slug(long_player).startswith("~~") and player_page.is_file()
    assert tournament_page.is_file() and long_tournament in tournament_page.read_text()
    assert long_player in player_page.read_text()


def test_ids_from_raw_logs_are_escaped_and_make_safe_file_names(site_warehouse, tmp_path):
    wh = Warehouse(site_warehouse)
    evil = '<b>"x"</b>/../&y'
    victim = wh.scan("ff_matches").collect()["player_a"][0]

    def read_table(name):
        frame = wh.scan(name)
        names = frame.collect_schema().names()
        swap = [c for c in ("player_id", "player_a", "player_b", "forfeit_by") if c in names]
        return frame.with_columns(pl.col(c).replace(victim, evil) for c in swap)

    out = tmp_path / "evil"
    build_site(read_table, out)
    page = out / "face-a-face/joueurs" / (slug(evil) + ".html")
    assert page.is_file() and slug(evil).startswith("~")
    html = page.read_text()
    assert "<b>" not in html and "&lt;b&gt;&#34;x&#34;&lt;/b&gt;/../&amp;y" in html
    assert all(out.resolve() in p.resolve().parents for p in out.rglob("*"))
    matches = (out / "face-a-face/2026-10/matches.html").read_text() + (
        out / "face-a-face/2026-11/matches.html"
    ).read_text()
    assert "<b>" not in matches and "&lt;b&gt;" in matches


def test_tables_not_published_give_a_site_without_those_pages(site_warehouse, tmp_path):
    wh = Warehouse(site_warehouse)

    def read_table(name):
        if name.startswith("bridge") or name.startswith("ff"):
            raise UserError(f"table {name} has no published data")
        return wh.scan(name)

    build_site(read_table, tmp_path / "sim")
    assert not (tmp_path / "sim/bridge").exists() and not (tmp_path / "sim/face-a-face").exists()
    assert "Pas encore de résultats." in (tmp_path / "sim/index.html").read_text()


def test_build_site_refuses_a_folder_that_is_not_empty(site_warehouse, tmp_path):
    (tmp_path / "x.txt").write_text("mine")
    with pytest.raises(UserError, match="not empty"):
        build_site(Warehouse(site_warehouse).scan, tmp_path)


def test_publish_swaps_the_new_site_in_and_leaves_no_staging(site_warehouse, tmp_path):
    out = tmp_path / "site"
    first = publish_site(Warehouse(site_warehouse).scan, out)
    assert first.written == first.pages + 2 and (out / PAGE_INDEX).is_file()
    second = publish_site(Warehouse(site_warehouse).scan, out)
    assert second.written == 0 and second.reused == first.pages + 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # staging and old site gone
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/notes.txt").write_text("keep me")
    with pytest.raises(UserError, match="not a duplirank site"):
        publish_site(Warehouse(site_warehouse).scan, tmp_path / "mine")
    assert (tmp_path / "mine/notes.txt").read_text() == "keep me"


def test_a_build_removes_what_killed_builds_left_beside_the_site(site_warehouse, tmp_path):
    """A build killed (kill -9) leaves its staging folder, a whole site, beside the live one;
    the next build removes those of processes that are gone, not a running build's."""
    done = subprocess.Popen(["true"])
    done.wait()  # a process that is gone
    out = tmp_path / "site"
    left = [tmp_path / f".site.staging-{done.pid}", tmp_path / f".site.old-{done.pid}"]
    running = tmp_path / f".site.staging-{os.getppid()}"
    other = tmp_path / f".other.staging-{done.pid}"  # not this site's
    for folder in [*left, running, other]:
        folder.mkdir()
        (folder / "index.html").write_text("a page")
    publish_site(Warehouse(site_warehouse).scan, out)
    assert (out / PAGE_INDEX).is_file()
    kept = sorted([out.name, running.name, other.name])
    assert sorted(p.name for p in tmp_path.iterdir()) == kept


def test_site_command(site_warehouse, tmp_path, capsys):
    out = tmp_path / "cli-site"
    assert (
        cli.main(["site", "--warehouse", str(site_warehouse), "--out", str(out), "--lang", "en"])
        == 0
    )
    assert "pages in" in capsys.readouterr().out
    assert 'lang="en"' in (out / "index.html").read_text()
    assert cli.main(["site", "--warehouse", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("duplirank site: error: warehouse") and "does not exist" in err
    assert "\n" not in err and not (tmp_path / "nothing").exists()
    (tmp_path / "empty").mkdir()
    assert cli.main(["site", "--warehouse", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("duplirank site: error: no published tables") and "\n" not in err


def test_score_html_needs_an_out_folder(capsys):
    source = oracle_dir(KOPS_EVENT) / "results.jsonl"
    assert cli.main(["score", str(source), "--format", "html"]) == 2
    assert "--format html needs --out DIR" in capsys.readouterr().err


def test_kops_event_pages_show_kops_standings_exactly(kops_site):
    expected = pl.read_csv(oracle_dir(KOPS_EVENT) / "expected_standings.csv")
    html = (kops_site / "index.html").read_text()
    rows = re.findall(
        r'<tr><td>(\d+)<th scope=row><a href="paire-(\d+)'
        r'\.html">\d+</a><td>[\d,]+<td>([\d,]+)\s',
        html,
    )
    assert [(int(r), p, v.replace(",", ".")) for r, p, v in rows] == [
        (r, str(p), f"{v:.2f}") for r, p, v in expected.iter_rows()
    ]
    boards = list(kops_site.glob("donne-*.html"))
    pairs = list(kops_site.glob("paire-*.html"))
    assert len(boards) == 26 and len(pairs) == 44


def blocks_site(tmp_path: Path) -> Path:
    """A site of one player with 25 results over 60 days, the last 20 in the window."""
    start = datetime(2026, 9, 1, 20, tzinfo=UTC)
    blocks = pl.DataFrame(
        {
            "player_id": ["P1"] * 25,
            "block_no": list(range(1, 26)),
            "ended_at": [start + timedelta(days=2 * i) for i in range(25)],
            "month": [(start + timedelta(days=2 * i)).strftime("%Y-%m") for i in range(25)],
            "pct_cumul": [90.0 + (i * 7) % 20 for i in range(25)],
            "pct_actuel": [95.0 + i * 0.2 for i in range(25)],
            "k": [min(i + 1, 20) for i in range(25)],
            "representative": [i >= 19 for i in range(25)],
            "in_window": [i >= 5 for i in range(25)],
        }
    )
    monthly = pl.DataFrame(
        {
            "month": ["2026-10"],
            "player_id": ["P1"],
            "indice": [10.0],
            "victoire": [0.0],
            "tournaments": [3],
            "wins": [0],
            "pct_actuel": [99.0],
            "representative": [True],
            "rank_indice": [1],
        }
    )
    results = pl.DataFrame(
        schema={
            "tournament_id": pl.String,
            "month": pl.String,
            "tournament_start": pl.Datetime("us", "UTC"),
            "player_id": pl.String,
            "is_bot": pl.Boolean,
            "points": pl.Int64,
            "top": pl.Int64,
            "mp_pct": pl.Float64,
            "deals_played": pl.Int64,
            "rank": pl.Int64,
            "is_winner": pl.Boolean,
            "completed": pl.Boolean,
        }
    )
    tables = {
        "simultane_blocks": blocks,
        "simultane_monthly": monthly,
        "simultane_tournament_results": results,
    }

    def read_table(name):
        if name not in tables:
            raise UserError(f"table {name} has no published data")
        return tables[name]

    out = tmp_path / "blocks"
    build_site(read_table, out)
    return out


def test_curve_colours_come_from_in_window(tmp_path):
    site = blocks_site(tmp_path)
    html = (site / "simultane/joueurs/P1.html").read_text()
    fills = re.findall(r"<circle [^>]*fill=(\w+)[^>]*><title>", html)
    assert fills == ["grey"] * 5 + ["blue"] + ["red"] * 19
    assert 'stroke="green"' in html


def test_no_blue_point_until_the_window_is_full():
    frame = pl.DataFrame(
        {
            "player_id": ["A"] * 4 + ["B"] * 3,
            "block_no": [1, 2, 3, 4, 1, 2, 3],
            "in_window": [False, True, True, True, True, True, True],
        }
    )
    colours = frame.select(curve_colour(window_results=3))["literal"].to_list()
    assert colours == ["grey", "blue", "red", "red", "blue", "red", "red"]
    colours = frame.select(curve_colour(window_results=20))["literal"].to_list()
    assert colours == ["grey", "red", "red", "red", "red", "red", "red"]


@settings(deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6)), max_size=50),
    st.integers(0, 2),
    st.sampled_from(["fr", "en"]),
)
def test_a_value_is_shown_the_same_in_tables_and_facts(values, decimals, lang):
    column = pl.DataFrame({"x": values}, schema={"x": pl.Float64})
    shown = column.select(num(pl.col("x"), decimals, lang).alias("x"))["x"].to_list()
    assert shown == [num_value(v, decimals, lang) for v in values]


@settings(deadline=None)
@given(st.lists(st.text(max_size=30) | st.text(min_size=55, max_size=300), max_size=30))
def test_slugs_of_a_column_are_the_slugs_of_its_values(ids):
    column = pl.DataFrame({"id": ids}, schema={"id": pl.String})
    assert column.select(slug_expr("id"))["id"].to_list() == [slug(i) for i in ids]
    slugs = [slug(i) for i in set(ids)]
    assert len(set(slugs)) == len(slugs)  # no two ids share a page
    assert all(
        "/" not in s
        and s not in ("", ".", "..")
        and not s.startswith(".")
        and len(s.encode()) <= MAX_SLUG
        for s in slugs
    )


def test_score_html_of_a_file_with_several_events(tmp_path, capsys):
    both = tmp_path / "two-events.jsonl"
    both.write_bytes(
        (oracle_dir(KOPS_EVENT) / "results.jsonl").read_bytes()
        + (oracle_dir("kops_SM0807_cavendish_avg") / "results.jsonl").read_bytes()
    )
    out = tmp_path / "pages"
    assert (
        cli.main(["score", str(both), "--format", "html", "--out", str(out), "--lang", "en"]) == 0
    )
    assert "pages in" in capsys.readouterr().out
    index = (out / "index.html").read_text()
    assert 'href="PCH1003/index.html"' in index and 'href="SM0807/index.html"' in index
    assert len(list((out / "PCH1003").glob("paire-*.html"))) == 44
    for page in out.rglob("*.html"):
        parser = Links()
        parser.feed(page.read_text())
        for href in parser.hrefs:
            assert (page.parent / href.split("?")[0]).resolve().is_file(), (page, href)


def test_a_day_of_matches_whose_rows_changed_is_made_again_the_others_are_linked(
    sample_site, site_warehouse, tmp_path
):
    wh = Warehouse(site_warehouse)
    deals = wh.scan("ff_deal_results").collect()
    match = deals["match_id"].sort()[0]

    def read_table(name):
        if name == "ff_deal_results":  # one deal of one match rescored
            return deals.with_columns(
                mp_a=pl.when((pl.col("match_id") == match) & (pl.col("deal_no") == 1))
                .then(pl.lit(97))
                .otherwise(pl.col("mp_a"))
            )
        return wh.scan(name)

    report = build_site(read_table, tmp_path / "next", previous=sample_site)
    days = [p for p in report.written_paths if p.startswith("face-a-face/matches/")]
    assert len(days) == 1  # the day of that match; the other days: linked, not made again
    html = (tmp_path / "next" / days[0]).read_text()
    section = html.split(f'id="m-{match}"')[1].split("</article>")[0]
    assert "<tr><th scope=row>1<td>" in section
    assert re.search(r"<tr><th scope=row>1(<td[^>]*>[^<]*){4}<td>97<", section)
    assert not re.search(
        r"<tr><th scope=row>1(<td[^>]*>[^<]*){4}<td>97<",
        (sample_site / days[0]).read_text().split(f'id="m-{match}"')[1].split("</article>")[0],
    )
    other = next(
        p
        for p in (sample_site / "face-a-face/matches").iterdir()
        if p.name != days[0].rsplit("/", 1)[1]
    )
    linked = tmp_path / "next/face-a-face/matches" / other.name
    assert os.stat(linked).st_ino == os.stat(other).st_ino


def test_pages_are_made_again_when_what_surrounds_their_rows_changes(
    sample_site, site_warehouse, tmp_path
):
    """The rows of the matches did not change, but the navigation of every page did
    (November's bridge events are gone): the pages of the days of matches are made again, not
    linked."""
    wh = Warehouse(site_warehouse)

    def read_table(name):
        frame = wh.scan(name)
        if name.startswith("bridge_") and "month" in frame.collect_schema().names():
            return frame.filter(pl.col("month") == "2026-10")
        return frame

    report = build_site(read_table, tmp_path / "next", previous=sample_site)
    matches = [p for p in report.written_paths if p.startswith("face-a-face/matches/")]
    assert len(matches) == len(list((sample_site / "face-a-face/matches").iterdir()))
    html = (tmp_path / "next" / matches[0]).read_text()
    assert 'href="../../bridge/2026-10/index.html">Bridge' in html


def test_a_player_whose_window_moved_gets_a_new_curve(sample_site, site_warehouse, tmp_path):
    wh = Warehouse(site_warehouse)
    blocks = wh.scan("simultane_blocks").collect()
    player = blocks.group_by("player_id").len().sort("len", "player_id")[-1, "player_id"]

    def read_table(name):
        if name == "simultane_blocks":  # the player's first result leaves the window
            return blocks.with_columns(
                in_window=pl.when((pl.col("player_id") == player) & (pl.col("block_no") == 1))
                .then(False)
                .otherwise(pl.col("in_window"))
            )
        return wh.scan(name)

    report = build_site(read_table, tmp_path / "next", previous=sample_site)
    page = f"simultane/joueurs/{player}.html"
    assert report.written_paths == [page]
    fills = re.findall(
        r"<circle [^>]*fill=(\w+)[^>]*><title>", (tmp_path / "next" / page).read_text()
    )
    assert fills[0] == "grey" and set(fills[1:]) == {"red"}


def test_ranks_moving_in_the_latest_month_rewrite_the_rankings_not_the_players_pages(
    sample_site, site_warehouse, tmp_path
):
    """Others played: every rank of the month in progress moved, no player's own results did.
    The month's rankings are made again; the players' pages are linked, not made (they show
    that month's rank as a link to the player's row of the ranking, earlier months' ranks as
    numbers)."""
    wh = Warehouse(site_warehouse)
    moved = {"simultane_monthly": "rank_indice", "ff_monthly_ranking": "rank"}

    def read_table(name):
        frame = wh.scan(name)
        if name in moved:
            rank = moved[name]
            return frame.with_columns(
                pl.when(pl.col("month") == "2026-11")
                .then(pl.col(rank) + 1)
                .otherwise(pl.col(rank))
                .alias(rank)
            )
        return frame

    report = build_site(read_table, tmp_path / "next", previous=sample_site)
    assert {"simultane/2026-11/index.html", "face-a-face/2026-11/index.html"} <= set(
        report.written_paths
    )
    assert [p for p in report.written_paths if "/joueurs/" in p] == []
    monthly = published(site_warehouse, "simultane_monthly")
    player = monthly.filter(pl.col("month") == "2026-10").sort("rank_indice")[0, "player_id"]
    assert player in set(monthly.filter(pl.col("month") == "2026-11")["player_id"])
    html = (tmp_path / "next" / f"simultane/joueurs/{player}.html").read_text()
    assert f'<a href="../2026-11/index.html#p-{player}">voir le classement</a>' in html
    assert html.split('<a href="../2026-10/index.html">2026-10</a>')[1].startswith("<td>1<td>")
    ranking = (tmp_path / "next/simultane/2026-11/index.html").read_text()
    assert f'<tr id="p-{player}">' in ranking


def test_only_the_bridge_events_whose_rows_changed_are_made_again(
    sample_site, site_warehouse, tmp_path, monkeypatch
):
    from flows.tools.site import bridge

    wh = Warehouse(site_warehouse)
    boards = wh.scan("bridge_board_results").collect()
    events = sorted(boards["event_id"].unique().to_list())
    assert len(events) > 1
    changed = events[0]
    made: list[str] = []
    event_pages = bridge.event_pages

    def recording(standings, *args):
        made.extend(standings["event_id"].unique().to_list())
        return event_pages(standings, *args)

    monkeypatch.setattr(bridge, "event_pages", recording)

    def read_table(name):
        if name == "bridge_board_results":  # one table of one board of one event re-keyed
            first = (pl.col("event_id") == changed) & (pl.int_range(pl.len()) == 0)
            return boards.with_columns(
                contract=pl.when(first).then(pl.lit("7NT")).otherwise(pl.col("contract"))
            )
        return wh.scan(name)

    report = build_site(read_table, tmp_path / "next", previous=sample_site)
    assert made == [changed]  # the other events: linked without being made
    written = [p for p in report.written_paths if p.startswith("bridge/tournois/")]
    assert written and all(p.startswith(f"bridge/tournois/{changed}/") for p in written)
    assert report.pages == len(list((tmp_path / "next").rglob("*.html")))
    again = build_site(wh.scan, tmp_path / "back", previous=tmp_path / "next")
    assert sorted(p for p in again.written_paths if p.startswith("bridge/")) == written


def test_a_past_month_whose_ranking_changed_is_made_again(sample_site, site_warehouse, tmp_path):
    """Month pages keep their page when their rows did not change: a change in a past month
    (a backfill) must still reach its ranking, and only its pages."""
    wh = Warehouse(site_warehouse)
    ranking = wh.scan("ff_monthly_ranking").collect()
    player = ranking.filter(pl.col("month") == "2026-10").sort("rank")[0, "player_id"]

    def read_table(name):
        if name == "ff_monthly_ranking":
            return ranking.with_columns(
                points=pl.when((pl.col("month") == "2026-10") & (pl.col("player_id") == player))
                .then(pl.lit(12345.0))
                .otherwise(pl.col("points"))
            )
        return wh.scan(name)

    report = build_site(read_table, tmp_path / "next", previous=sample_site)
    assert set(report.written_paths) == {
        "face-a-face/2026-10/index.html",
        f"face-a-face/joueurs/{player}.html",
    }
    assert "12345,00" in (tmp_path / "next/face-a-face/2026-10/index.html").read_text()


def test_a_day_whose_standings_changed_is_made_again_the_other_days_are_linked(
    sample_site, site_warehouse, tmp_path
):
    wh = Warehouse(site_warehouse)
    daily = wh.scan("simultane_daily").collect()
    day = daily["date"].min()
    player = daily.filter(pl.col("date") == day)[0, "player_id"]

    def read_table(name):
        if name == "simultane_daily":
            return daily.with_columns(
                indice=pl.when((pl.col("date") == day) & (pl.col("player_id") == player))
                .then(pl.lit(99.99))
                .otherwise(pl.col("indice"))
            )
        return wh.scan(name)

    report = build_site(read_table, tmp_path / "next", previous=sample_site)
    page = f"simultane/{day:%Y-%m}/{day}.html"
    assert report.written_paths == [page]
    assert "99,99" in (tmp_path / "next" / page).read_text()


def test_a_part_that_fails_stops_the_build_and_no_other_part_is_started():
    """The error of one part of the site reaches the build, and the other threads take no
    part after it (the build stops instead of making the rest of the site)."""
    started: list[str] = []
    failing = threading.Event()

    def part(label: str):
        def make():
            started.append(label)
            if label == "a":  # fails once another thread is making a part
                while len(started) < 2:
                    time.sleep(0.001)
                failing.set()
                raise OSError("a failed")
            if label == "0":  # still being made when "a" fails
                failing.wait(5)
                time.sleep(0.2)
            yield label

        return label, make

    parts = [part("a"), *(part(str(i)) for i in range(20))]
    with pytest.raises(OSError, match="a failed"):
        list(concurrently(parts, {}, workers=2))
    assert sorted(started) == ["0", "a"]
    made = list(concurrently([part(str(i)) for i in range(1, 8)], {}, workers=3))
    assert sorted(made) == [str(i) for i in range(1, 8)]
