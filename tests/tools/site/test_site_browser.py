"""The site in a real headless Chromium (Playwright, the system's Chromium): navigation,
sorting and filtering of the Face-à-Face matches, every link, no request off file://, the
Performance Simultané curve, phone width, and a KOPS oracle event's standings."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from urllib.parse import unquote, urlparse

import polars as pl
import pytest
from site_support import KOPS_EVENT, oracle_dir

from flows.storage.warehouse import Warehouse

PHONE = {"width": 390, "height": 844}


def url(site: Path, path: str = "index.html") -> str:
    return (site / path).as_uri()


def table_column(page, table: str, index: int, visible_only: bool = True) -> list[str]:
    return page.eval_on_selector_all(
        f"{table} tbody tr",
        """(rows, [index, visibleOnly]) => rows
            .filter(r => !visibleOnly || !r.hidden)
            .map(r => r.cells[index].textContent.trim())""",
        [index, visible_only],
    )


def test_navigate_index_month_player_tournament(browser, sample_site):
    page = browser
    page.goto(url(sample_site))
    assert page.locator("h1").inner_text() == "Résultats duplirank"
    page.locator("#simultane a", has_text="Dernier mois").click()
    assert "/simultane/2026-11/index.html" in page.url
    assert page.locator("h1").inner_text() == "Simultané individuel — novembre 2026"
    first = page.locator("table.sortable tbody tr").first.locator("th a")
    player = first.inner_text()
    first.click()
    assert page.url.endswith(f"/simultane/joueurs/{player}.html")
    assert page.locator("h1").inner_text() == f"Joueur {player}"
    tournament = (
        page.locator("section", has=page.locator("h2", has_text="Tournois"))
        .locator("tbody th a")
        .first
    )
    tid = tournament.inner_text()
    tournament.click()
    assert page.url.endswith(f"/simultane/tournois/{tid}.html")
    assert page.locator("h1").inner_text() == f"Tournoi {tid}"
    # the player is in the tournament's standings and in its deal-by-deal grid
    assert player in table_column(page, "table.sortable", 1)
    grid_players = table_column(page, "table.grid", 0)
    assert player in grid_players
    assert page.locator("table.grid td.top").count() > 0
    assert page.locator("table.grid td.bulle").count() > 0
    assert page.js_errors == [] and page.outside_requests == []


def test_a_match_of_the_list_opens_at_its_section_of_the_day(browser, sample_site, site_warehouse):
    """Each match is a section of the page of its day: the list's link scrolls to it, and it
    shows the match's 16 deals and its match points."""
    page = browser
    page.goto(url(sample_site, "face-a-face/2026-10/matches.html"))
    rows = page.locator("#matches tbody tr")
    last = rows.nth(rows.count() - 1).locator("th a")  # far down its day's page
    match = last.inner_text()
    last.click()
    assert page.url.endswith(f".html#m-{match}") and "/face-a-face/matches/" in page.url
    section = page.locator("article:target")
    assert section.locator("h2").inner_text() == f"Match {match}"
    assert section.is_visible()
    # scrolled to it, once the new page is laid out (the click returns before: it may not be)
    page.wait_for_function(
        """() => {
            const h = document.querySelector("article:target h2");
            const top = h ? h.getBoundingClientRect().top : -1;
            return top >= 0 && top < innerHeight;
        }""",
        timeout=5000,
    )
    row = Warehouse(site_warehouse).scan("ff_matches").filter(pl.col("match_id") == match)
    mp_a, mp_b = row.select("mp_a", "mp_b").collect().row(0)
    deals = Warehouse(site_warehouse).scan("ff_deal_results").filter(pl.col("match_id") == match)
    n = deals.select(pl.len()).collect().item()
    assert section.locator("tbody tr").count() == n == 16
    assert f"{mp_a} – {mp_b}" in section.locator("dl.facts").inner_text()
    assert page.js_errors == [] and page.outside_requests == []


def test_face_a_face_matches_sort_by_player_1_then_player_2(browser, sample_site, site_warehouse):
    page = browser
    page.goto(url(sample_site, "face-a-face/2026-10/matches.html"))
    header = page.locator("#matches thead th")
    assert header.nth(3).inner_text().startswith("Joueur 1")
    assert header.nth(4).inner_text().startswith("Joueur 2")
    before = table_column(page, "#matches", 0)
    header.nth(3).locator("button").click()
    p1 = table_column(page, "#matches", 3)
    assert p1 == sorted(p1) and header.nth(3).get_attribute("aria-sort") == "ascending"
    # by keyboard: focus Joueur 2's button and press Enter
    header.nth(4).locator("button").focus()
    page.keyboard.press("Enter")
    rows = list(
        zip(table_column(page, "#matches", 4), table_column(page, "#matches", 3), strict=True)
    )
    # sorted by Joueur 2; the sort is stable, so ties stay in Joueur 1 order
    assert rows == sorted(rows)
    assert header.nth(4).get_attribute("aria-sort") == "ascending"
    assert header.nth(3).get_attribute("aria-sort") is None
    page.keyboard.press("Enter")
    p2 = table_column(page, "#matches", 4)
    assert p2 == sorted(p2, reverse=True)
    assert header.nth(4).get_attribute("aria-sort") == "descending"
    assert sorted(table_column(page, "#matches", 0)) == sorted(before)  # same rows
    matches = Warehouse(site_warehouse).scan("ff_matches").filter(pl.col("month") == "2026-10")
    assert len(before) == matches.select(pl.len()).collect().item()


def test_face_a_face_matches_filtered_by_a_player(browser, sample_site, site_warehouse):
    matches = (
        Warehouse(site_warehouse).scan("ff_matches").filter(pl.col("month") == "2026-10").collect()
    )
    player = matches["player_a"].mode().sort()[0]
    expected = matches.filter((pl.col("player_a") == player) | (pl.col("player_b") == player))
    page = browser
    page.goto(url(sample_site, "face-a-face/2026-10/matches.html"))
    search = page.get_by_label("Filtrer par joueur")
    search.fill(player)
    shown = set(table_column(page, "#matches", 0))
    assert shown == set(expected["match_id"])
    assert page.locator("form.filter output").inner_text() == str(expected.height)
    for p1, p2 in zip(
        table_column(page, "#matches", 3), table_column(page, "#matches", 4), strict=True
    ):
        assert player in (p1, p2)
    search.fill("")
    assert len(table_column(page, "#matches", 0)) == matches.height
    # the filter can come with the address (a link to one player's matches)
    page.goto(url(sample_site, "face-a-face/2026-10/matches.html") + f"?player={player}")
    assert set(table_column(page, "#matches", 0)) == set(expected["match_id"])


def test_every_internal_link_resolves_and_no_request_leaves_file(browser, sample_site):
    """Visit every page reachable from the index; every link and every resource it loads is a
    file of the site."""
    page = browser
    loaded: list[str] = []
    page.on("request", lambda request: loaded.append(request.url))
    start = url(sample_site)
    seen, todo = {start}, deque([start])
    while todo:
        current = todo.popleft()
        response = page.goto(current)
        assert response is not None and response.ok, current
        for href in page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)"):
            parsed = urlparse(href)
            assert parsed.scheme == "file", (current, href)
            target = Path(unquote(parsed.path))
            assert target.is_file(), (current, href)
            assert sample_site in target.parents, (current, href)
            clean = target.as_uri()
            if clean not in seen:
                seen.add(clean)
                todo.append(clean)
    pages = {p for p in sample_site.rglob("*.html")}
    assert {Path(unquote(urlparse(u).path)) for u in seen} == pages  # nothing unreachable
    assert page.outside_requests == []
    assert loaded and all(u.startswith("file://") for u in loaded)
    assert page.js_errors == []


def test_the_curve_has_one_point_per_block_in_the_seed_colours(
    browser, sample_site, site_warehouse
):
    blocks = Warehouse(site_warehouse).scan("simultane_blocks").collect()
    player = (
        blocks.group_by("player_id")
        .len()
        .sort("len", "player_id", descending=[True, False])[0, "player_id"]
    )
    mine = blocks.filter(pl.col("player_id") == player).sort("block_no")
    page = browser
    page.goto(url(sample_site, f"simultane/joueurs/{player}.html"))
    points = page.eval_on_selector_all(
        "svg.chart circle",
        "cs => cs.map(c => [c.querySelector('title').textContent.match(/\\(N° (\\d+)\\)$/)[1],"
        " c.getAttribute('fill'), c.querySelector('title').textContent])",
    )
    assert [int(p[0]) for p in points] == mine["block_no"].to_list()  # in order, each once
    expected = ["red" if w else "grey" for w in mine["in_window"]]
    if mine["in_window"].sum() == 20:
        expected[mine["in_window"].arg_true()[0]] = "blue"
    assert [p[1] for p in points] == expected
    assert all("% cumul" in p[2] for p in points)  # a tooltip per point
    assert page.locator("svg.chart polyline").get_attribute("stroke") == "green"


def test_curve_colours_of_a_full_window(browser, tmp_path):
    """25 results, the last 20 in the window: 19 red, the 20th most recent blue, 5 grey."""
    from test_site_build import blocks_site

    site = blocks_site(tmp_path)
    page = browser
    page.goto(url(site, "simultane/joueurs/P1.html"))
    fills = page.eval_on_selector_all(
        "svg.chart circle", "cs => cs.map(c => getComputedStyle(c).fill)"
    )
    grey, blue, red = "rgb(128, 128, 128)", "rgb(0, 0, 255)", "rgb(255, 0, 0)"
    assert fills == [grey] * 5 + [blue] + [red] * 19  # as drawn
    tooltip = page.locator("svg.chart circle").nth(5).locator("title").text_content()
    assert "N° 6" in tooltip
    assert page.locator("svg.chart polyline").get_attribute("stroke") == "green"


@pytest.mark.parametrize(
    "path",
    [
        "index.html",
        "simultane/2026-11/index.html",
        "simultane/joueurs/P0025.html",
        "simultane/tournois/SIM-20261030-1000.html",
        "face-a-face/2026-10/matches.html",
        "face-a-face/2026-10/index.html",
        "bridge/tournois/BR1-20261031-0001/index.html",
        "bridge/tournois/BR1-20261031-0001/donne-1.html",
    ],
)
def test_no_horizontal_scroll_at_390_px(browser, sample_site, path):
    page = browser
    page.set_viewport_size(PHONE)
    page.goto(url(sample_site, path))
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], (path, width)
    # wide tables scroll in their own region, which the keyboard can reach
    for region in page.locator("div.scroll").all():
        assert region.get_attribute("tabindex") == "0"


def test_kops_event_page_shows_kops_standings_exactly(browser, kops_site):
    expected = pl.read_csv(oracle_dir(KOPS_EVENT) / "expected_standings.csv")
    page = browser
    page.goto(url(kops_site))
    rows = page.eval_on_selector_all(
        "table.sortable tbody tr",
        "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent.trim()))",
    )
    headers = page.eval_on_selector_all(
        "table.sortable thead th", "ths => ths.map(t => t.textContent.trim())"
    )
    assert headers[:4] == ["Rang", "Paire", "Total", "%"]
    shown = [(int(r[0]), r[1], r[3].replace(",", ".")) for r in rows]
    assert shown == [(r, str(p), f"{v:.2f}") for r, p, v in expected.iter_rows()]
    assert page.outside_requests == []
