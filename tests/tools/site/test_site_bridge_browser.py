"""Bridge pages in a real headless Chromium (bridge.md, Results pages): the hand diagram, red
hearts and diamonds, the players' names, and on a 390 px phone each traveller line's score and
MP/IMP on screen without scrolling the page sideways. Pages of a USEBIO Mitchell and of the
KOPS oracle's PBN (long pair ids, doubled contracts), written by `duplirank score --format
html`."""

from __future__ import annotations

from pathlib import Path

import pytest
from site_support import KOPS_EVENT, oracle_dir

from flows import cli

PHONE = {"width": 390, "height": 844}
DATA = Path(__file__).resolve().parents[2] / "bridge" / "data"
RED = "rgb(198, 40, 40)"


def write_pages(source: Path, out: Path) -> Path:
    assert cli.main(["score", str(source), "--format", "html", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def mitchell(tmp_path_factory) -> Path:
    return write_pages(DATA / "mitchell.xml", tmp_path_factory.mktemp("mitchell") / "pages")


@pytest.fixture(scope="module")
def butler(tmp_path_factory) -> Path:
    """The Mitchell scored as a Butler event (IMPs)."""
    folder = tmp_path_factory.mktemp("butler")
    source = folder / "butler.xml"
    source.write_bytes((DATA / "mitchell.xml").read_bytes().replace(b"MP_PAIRS", b"BUTLER_PAIRS"))
    return write_pages(source, folder / "pages")


@pytest.fixture(scope="module")
def kops_pbn(tmp_path_factory) -> Path:
    source = oracle_dir(KOPS_EVENT) / "PCH1003.pbn"
    return write_pages(source, tmp_path_factory.mktemp("pch1003") / "pages")


def cell_boxes(page, labels: list[str]) -> list[dict]:
    """Per traveller line, the on-screen box of the cells under each header of `labels`."""
    return page.evaluate(
        """labels => {
            const table = document.querySelector("table.traveller");
            const heads = Array.from(table.tHead.rows[0].cells).map(c => c.textContent.trim());
            const at = labels.map(l => heads.indexOf(l));
            return Array.from(table.tBodies[0].rows).map(r => Object.fromEntries(at.map(
                (i, k) => [labels[k], r.cells[i].getBoundingClientRect().toJSON()])));
        }""",
        labels,
    )


@pytest.mark.parametrize(
    ("pages", "board", "values"),
    [
        ("mitchell", 1, "Points"),
        ("mitchell", 2, "Points"),
        ("kops_pbn", 1, "Points"),
        ("kops_pbn", 13, "Points"),
        ("butler", 1, "IMP"),
    ],
)
def test_a_phone_shows_each_lines_score_and_matchpoints(browser, request, pages, board, values):
    site = request.getfixturevalue(pages)
    page = browser
    page.set_viewport_size(PHONE)
    page.goto((site / f"donne-{board}.html").as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shown = ["Marque NS", f"{values} NS", f"{values} EO"]
    lines = cell_boxes(page, shown)
    assert lines
    for line in lines:
        for label in shown:
            box = line[label]
            assert box["width"] > 0 and 0 <= box["left"] and box["right"] <= PHONE["width"], (
                label,
                box,
            )
    # the declarer and result columns are folded into the contract on a phone
    assert page.locator("table.traveller .ph").first.is_visible()
    assert not page.locator("table.traveller thead th", has_text="Décl.").is_visible()
    page.set_viewport_size({"width": 1280, "height": 900})
    assert page.locator("table.traveller thead th", has_text="Décl.").is_visible()
    assert not page.locator("table.traveller .ph").first.is_visible()


def test_the_hand_diagram(browser, mitchell):
    page = browser
    page.goto((mitchell / "donne-1.html").as_uri())
    boxes = {seat: page.locator(f"figure.deal .hand.{seat}").bounding_box() for seat in "nesw"}
    assert boxes["n"]["y"] < boxes["w"]["y"] < boxes["s"]["y"]
    assert boxes["w"]["x"] < boxes["n"]["x"] < boxes["e"]["x"]
    assert abs(boxes["w"]["y"] - boxes["e"]["y"]) < 1
    north = page.locator("figure.deal .hand.n").inner_text().split("\n")
    assert north == ["Nord", "♠ AKQ2", "♥ KQJ5", "♦ A3", "♣ 1098"]
    assert page.locator("figure.deal dl.centre").inner_text().split("\n") == [
        "Donne",
        "1",
        "Donneur",
        "Nord",
        "Vulnérabilité",
        "Personne",
    ]
    # board 2 has no deal in the file: no diagram
    page.goto((mitchell / "donne-2.html").as_uri())
    assert page.locator("figure.deal").count() == 0


def test_hearts_and_diamonds_are_red(browser, kops_pbn):
    page = browser
    page.goto((kops_pbn / "donne-1.html").as_uri())
    colours = page.eval_on_selector_all(
        ".suit", "els => els.map(e => [e.textContent, getComputedStyle(e).color])"
    )
    assert {suit for suit, _ in colours} == {"♠", "♥", "♦", "♣"}
    for suit, colour in colours:
        assert (colour == RED) == (suit in "♥♦"), (suit, colour)
    # in the traveller's contracts too (black suits are plain text)
    cells = page.eval_on_selector_all(
        "table.traveller .r", "els => els.map(e => [e.textContent, getComputedStyle(e).color])"
    )
    assert {suit for suit, _ in cells} == {"♥"} and {c for _, c in cells} == {RED}
    assert "♣" in page.locator("table.traveller").inner_text()
    # French words: SA for NT, contré, declarer O for W
    contracts = page.locator("table.traveller tbody tr td:nth-child(3)").all_inner_texts()
    assert any(c.startswith("3SA") for c in contracts)
    assert any("contré" in c for c in contracts)
    assert "O" in page.locator("table.traveller tbody tr td:nth-child(4)").all_inner_texts()


def test_pair_names_on_standings_and_travellers(browser, mitchell):
    page = browser
    page.goto((mitchell / "index.html").as_uri())
    ns = page.locator("#classement-ns tbody th").first
    assert ns.inner_text().split("\n") == ["1NS", "Anne Martin & Paul Roux"]
    page.goto((mitchell / "donne-1.html").as_uri())
    names = page.locator("table.traveller .names")
    assert names.first.is_visible() and names.first.inner_text() == "Anne Martin & Paul Roux"
    # on a phone: on the standings still, not in the traveller (its numbers stay on screen)
    page.set_viewport_size(PHONE)
    assert not names.first.is_visible()
    page.goto((mitchell / "index.html").as_uri())
    assert page.locator("#classement-ew tbody th .names").first.is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
