"""Bridge pages as players read them (bridge.md, Results pages): the hand diagram of each board
whose deal the file gives, suit symbols, the page language's words, the players' names, no
column twice. From event files scored with `duplirank score --format html` and from a
warehouse's tables (`build_site`)."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from flows import cli
from flows.tools.site import build_site
from flows.tools.site.deal import contract_markup, diagram, seat
from flows.tools.site.labels import labels
from flows.tools.site.markup import rows
from transforms.bridge.event import score_events
from transforms.bridge.usebio import parse_usebio

DATA = Path(__file__).resolve().parents[2] / "bridge" / "data"
# in a table cell; a hand's lines have their own (`HAND_*`)
RED_HEART = "<span class=r>♥</span>"
RED_DIAMOND = "<span class=r>♦</span>"
HAND_HEART = '<span class="suit r">♥</span>'
HAND_SPADE = '<span class="suit">♠</span>'
HAND_CLUB = '<span class="suit">♣</span>'


def shown(expr_of, values: dict, lang: str) -> list[str]:
    """The markup of a `Keyed` cell (`expr_of(w)`) for each row of `values`."""
    frame = pl.DataFrame(values)
    joined = rows(frame, [expr_of(labels(lang)), "|"])
    return bytes(joined.view).decode().rstrip("|").split("|")


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        (
            "fr",
            [
                f"4{RED_HEART}",
                "3SA",
                "6♠<span class=dbl> contré</span>",
                f"2{RED_DIAMOND}<span class=dbl> surcontré</span>",
                "Passe",
                "–",
                "A60",
            ],
        ),
        (
            "en",
            [
                f"4{RED_HEART}",
                "3NT",
                "6♠<span class=dbl>X</span>",
                f"2{RED_DIAMOND}<span class=dbl>XX</span>",
                "Pass",
                "–",
                "A60",
            ],
        ),
    ],
)
def test_contracts_in_the_page_language(lang, expected):
    contracts = ["4H", "3nt", "6S*", "2D XX", "Pass", None, "A60"]  # as given, any spelling
    assert shown(lambda w: contract_markup(pl.col("c"), w), {"c": contracts}, lang) == expected


def test_declarer_and_result_beside_the_contract_for_phones():
    values = {"c": ["3NT", "4CX", "Pass"], "d": ["W", "N", None], "r": ["+1", "-3", None]}
    cells = shown(
        lambda w: contract_markup(pl.col("c"), w, (pl.col("d"), pl.col("r"))), values, "fr"
    )
    assert cells == [
        "3SA<span class=ph> O +1</span>",
        "4♣<span class=dbl> contré</span><span class=ph> N -3</span>",
        "Passe",
    ]


def test_seats_in_french():
    frame = pl.DataFrame({"s": ["N", "E", "S", "W", None]})
    assert frame.select(seat(pl.col("s"), labels("fr")))["s"].to_list() == [
        "N",
        "E",
        "S",
        "O",
        None,
    ]


def test_the_hand_diagram():
    deal = "E:JT9.A2.KQJ4.7654 8765.T9876.T2.AK 43.43.98765. AKQ2.KQJ5.A3.T98"
    html = diagram(7, deal, "S", "All", labels("fr"))
    hands = dict(
        re.findall(r'<div class="hand (\w)[^"]*"><strong>\w+</strong><ul>(.*?)</ul>', html)
    )
    assert list(hands) == ["n", "e", "s", "w"]
    assert hands["n"] == (
        f"<li>{HAND_SPADE} AKQ2<li>{HAND_HEART} KQJ5<li>"
        f'<span class="suit r">♦</span> A3<li>{HAND_CLUB} 1098'
    )
    assert hands["w"].endswith(f"{HAND_CLUB} —")  # a void
    assert "<dt>Donneur<dd>Sud<dt>Vulnérabilité<dd>Tous" in html
    assert html.count("hand") == 4 and html.count(" vul") == 4  # every side vulnerable
    assert diagram(7, None, "S", "All", labels("fr")) == ""


@pytest.fixture(scope="module")
def mitchell_pages(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mitchell") / "pages"
    assert (
        cli.main(["score", str(DATA / "mitchell.xml"), "--format", "html", "--out", str(out)]) == 0
    )
    return out


def test_a_board_page_shows_its_deal_and_contracts_in_french(mitchell_pages):
    board = (mitchell_pages / "donne-1.html").read_text()
    assert board.count('<figure class="deal"') == 1
    assert "<dt>Donneur<dd>Nord<dt>Vulnérabilité<dd>Personne" in board
    assert f"<td>4{RED_HEART}" in board
    assert "<td>3SA" in board
    # boards 2 and 3: no deal in the file, no diagram
    assert '<figure class="deal"' not in (mitchell_pages / "donne-2.html").read_text()
    lines = body_cells((mitchell_pages / "donne-2.html").read_text())
    # W as O in French; the artificial score without contract nor declarer
    assert [(line[2], line[3], line[5]) for line in lines] == [
        ("2♠ E -1", "E", "50"),
        ("2♠ E =", "E", "-110"),
        ("3♣ O =", "O", "-110"),
        ("–", "–", "A6040"),
    ]


def body_cells(html: str) -> list[list[str]]:
    """The text of each cell of each row of a page's first table body (tags dropped)."""
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.split(r"<t[dh](?: [^>]*)?>", row)[1:]]
        for row in body.split("<tr>")[1:]
    ]


def test_pair_names_on_standings_travellers_and_cards(mitchell_pages):
    index = (mitchell_pages / "index.html").read_text()
    assert '<a href="paire-1NS.html">1NS<span class=names>Anne Martin &amp; Paul Roux</span>' in (
        index
    )
    assert "Joueurs" not in index  # the names are in the pair's cell, no column of their own
    board = (mitchell_pages / "donne-1.html").read_text()
    assert "1EW<span class=names>Jean Petit &amp; Lise Blanc</span>" in board
    card = (mitchell_pages / "paire-2EW.html").read_text()
    assert "<dt>Joueurs<dd>Eric Morel &amp; Julie Faure" in card


def headers(html: str, table: int = 0) -> list[str]:
    head = re.findall(r"<thead><tr>(.*?)</thead>", html)[table]
    return re.findall(r"<th scope=col[^>]*>([^<]*)", head)


def test_a_butler_event_shows_its_imps_once(tmp_path):
    xml = (DATA / "mitchell.xml").read_bytes().replace(b"MP_PAIRS", b"BUTLER_PAIRS")
    source = tmp_path / "butler.xml"
    source.write_bytes(xml)
    out = tmp_path / "pages"
    assert cli.main(["score", str(source), "--format", "html", "--out", str(out)]) == 0
    assert headers((out / "index.html").read_text()) == ["Rang", "Paire", "Total"]
    card = (out / "paire-1NS.html").read_text()
    assert re.findall(r"<dt>([^<]*)<dd>", card) == ["Joueurs", "Rang", "Total"]
    assert headers((out / "donne-1.html").read_text()) == [
        "NS",
        "EO",
        "Contrat",
        "Décl.",
        "Résultat",
        "Marque NS",
        "IMP NS",
        "IMP EO",
        "Tour",
    ]


def test_the_site_shows_the_deals_of_the_warehouse(tmp_path):
    """`build_site` reads the deals from the published traveller lines (`bridge_result`)."""
    parsed = parse_usebio((DATA / "mitchell.xml").read_bytes(), "m.xml", "M")
    tables, _ = score_events(parsed.frames).collect()
    published = {
        "bridge_standings": tables["bridge_standings"].with_columns(month=pl.lit("2026-11")),
        "bridge_board_results": tables["bridge_board_results"].with_columns(
            month=pl.lit("2026-11")
        ),
        "bridge_event": parsed.frames["bridge.event"],
        "bridge_result": parsed.frames["bridge.result"],
    }
    build_site(lambda name: published[name], tmp_path / "site")
    board = (tmp_path / "site" / "bridge" / "tournois" / "M" / "donne-1.html").read_text()
    assert '<figure class="deal"' in board and "<dd>Nord<dt>" in board
