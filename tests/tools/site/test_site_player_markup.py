"""The markup of the player pages, pinned: the pages of small Simultané players (one with
20-deal results, one with none whose id needs escaping) and Face-à-Face players (with and
without ELO, a bot opponent, an id to escape), in both languages, byte for byte (the compact
markup of 2026-12-01, reviewed in a browser). A change to these pages shows here as a diff to
review (and to copy into `golden/*.html` when it is meant: `DUPLIRANK_GOLDEN=write`)."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from flows.tools.site import face_a_face, simultane
from flows.tools.site.labels import labels
from flows.tools.site.model import NO_PREVIOUS
from flows.tools.site.render import Renderer

GOLDEN = Path(__file__).parent / "golden" / "simultane_players.html"
FF_GOLDEN = Path(__file__).parent / "golden" / "face_a_face_players.html"
EVIL = "<i>Zoé \"&'</i>"


def frames() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    start = datetime(2026, 10, 3, 18, 30, tzinfo=UTC)
    blocks = pl.DataFrame(
        {
            "player_id": ["P1", "P1", "P1"],
            "block_no": [1, 2, 3],
            "ended_at": [start, start + timedelta(days=1), start + timedelta(days=33)],
            "month": ["2026-10", "2026-10", "2026-11"],
            "pct_cumul": [92.5, 104.25, 98.0],
            "pct_actuel": [None, 98.375, 98.25],
            "k": [1, 2, 3],
            "representative": [False, False, True],
            "in_window": [True, True, True],
        }
    )
    monthly = pl.DataFrame(
        {
            "month": ["2026-10", "2026-11", "2026-10"],
            "player_id": ["P1", "P1", EVIL],
            "indice": [10.5, 3.125, -2.0],
            "victoire": [0.0, 1.5, None],
            "tournaments": [2, 1, 1],
            "wins": [1, 0, 0],
            "pct_actuel": [98.375, 98.25, None],
            "representative": [False, True, None],
            "rank_indice": [1, 2, 2],
        }
    )
    results = pl.DataFrame(
        {
            "tournament_id": ["T1", "T<2>", "T3", "T<2>"],
            "month": ["2026-10", "2026-10", "2026-11", "2026-10"],
            "tournament_start": [
                start,
                start + timedelta(days=1),
                start + timedelta(days=33),
                start + timedelta(days=1),
            ],
            "player_id": ["P1", "P1", "P1", EVIL],
            "is_bot": [False] * 4,
            "points": [30, 41, 28, 12],
            "top": [40, 44, 40, 44],
            "mp_pct": [75.0, 93.18, 70.0, 27.27],
            "deals_played": [20, 20, 20, 8],
            "rank": [1, 1, 2, 3],
            "is_winner": [True, True, False, False],
            "completed": [True, True, True, False],
        },
        schema_overrides={"tournament_start": pl.Datetime("us", "UTC")},
    )
    return monthly, results, blocks


def ff_tables() -> dict[str, pl.DataFrame]:
    start = datetime(2026, 11, 2, 20, 0, tzinfo=UTC)
    ts = pl.Datetime("us", "UTC")
    matches = pl.DataFrame(
        {
            "match_id": ["M1", "M<2>", "M3"],
            "month": ["2026-11"] * 3,
            "match_type": ["classique", "attaque", "classique"],
            "player_a": ["Ann", EVIL, "Ann"],
            "player_b": [EVIL, "Ann", "BOT"],
            "ranked": [True, True, False],
            "status": ["finished", "finished", "finished"],
            "forfeit_by": [None, "Ann", None],
            "mp_a": [10, 0, 9],
            "mp_b": [6, 16, 7],
            "outcome_a": ["win", "loss", "win"],
            "counts_for_ranking": [True, True, False],
            "created_at": [start, start + timedelta(days=1), start + timedelta(days=2)],
            "started_at": [start, None, start + timedelta(days=2, minutes=3)],
            "ended_at": [
                start + timedelta(minutes=40),
                start + timedelta(days=1, minutes=2),
                start + timedelta(days=2, minutes=50),
            ],
            "elo_a_before": [1600.0, 1584.0, None],
            "elo_a_after": [1616.0, 1571.5, None],
            "elo_b_before": [1600.0, 1616.0, None],
            "elo_b_after": [1584.0, 1628.5, None],
            "value_a": [12.0, 0.0, None],
            "value_b": [4.0, 25.0, None],
        },
        schema_overrides={"created_at": ts, "started_at": ts, "ended_at": ts},
    )
    elo = pl.DataFrame(
        {
            "player_id": ["Ann", EVIL, EVIL, "Ann"],
            "match_id": ["M1", "M1", "M<2>", "M<2>"],
            "ended_at": [start + timedelta(minutes=40)] * 2
            + [start + timedelta(days=1, minutes=2)] * 2,
            "elo_seq": [1, 1, 2, 2],
            "elo_before": [1600.0, 1600.0, 1584.0, 1616.0],
            "elo_after": [1616.0, 1584.0, 1571.5, 1628.5],
        },
        schema_overrides={"ended_at": ts},
    )
    ranking = pl.DataFrame(
        {
            "month": ["2026-10", "2026-11", "2026-11", "2026-11"],
            "rank": [3, 1, 2, 3],
            "player_id": ["Ann", "Ann", EVIL, "Zed"],
            "points": [7.25, 16.5, 4.0, 0.0],
            "elo": [1590.0, 1628.5, 1571.5, None],
            "matches": [4, 3, 2, 0],
            "attaque_counted": [1, 1, 1, 0],
            "classique_counted": [3, 2, 1, 0],
        }
    )
    return {
        "ff_monthly_ranking": ranking,
        "ff_matches": matches,
        "ff_elo": elo,
        "ff_deal_results": None,
    }


def player_pages_markup(competition: str = "simultane") -> str:
    monthly, results, blocks = frames()
    shown = []
    for lang in ("fr", "en"):
        w = labels(lang)
        renderer = Renderer(lang, w)
        if competition == "simultane":
            crumb = (w["simultane"], "simultane/2026-11/index.html")
            pages = simultane.player_pages(
                monthly, results, blocks, w, lang, "Europe/Paris", 20, crumb, NO_PREVIOUS
            )
        else:
            pages = [
                p
                for part in face_a_face.parts(ff_tables(), w, lang, "Europe/Paris")
                for p in part()
                if p.path.startswith("face-a-face/joueurs/")
            ]
        for page in pages:
            shown.append(f"<!-- {lang} {page.path} -->\n" + renderer.text(page))
    return "\n".join(shown) + "\n"


def pinned(markup: str, golden: Path) -> str:
    if os.environ.get("DUPLIRANK_GOLDEN") == "write":  # after a change meant and reviewed
        golden.write_text(markup, encoding="utf-8")
    return golden.read_text(encoding="utf-8")


def test_simultane_player_pages_keep_their_markup():
    markup = player_pages_markup()
    assert markup.count("<!-- ") == 4  # P1 and the escaped id: fr, en
    assert markup == pinned(markup, GOLDEN)


def test_face_a_face_player_pages_keep_their_markup():
    markup = player_pages_markup("face_a_face")
    assert markup.count("<!-- ") == 6  # Ann, the escaped id, Zed (ranked, no match): fr, en
    assert markup == pinned(markup, FF_GOLDEN)


def test_every_text_of_a_player_page_is_escaped():
    markup = player_pages_markup().split("<!-- ")
    evil_page = next(p for p in markup if p.startswith("fr simultane/joueurs/~"))
    body = evil_page.split("-->\n", 1)[1]
    assert "<i>" not in body and "T<2>" not in body
    assert ">T&lt;2&gt;</a>" in body and 'href="../tournois/~543c323e.html"' in body
    assert "<title>Joueur &lt;i&gt;Zoé &#34;&amp;&#39;&lt;/i&gt; · " in body
