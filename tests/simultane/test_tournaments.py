"""Tournament results: Σ points, Σ top of scored deals, mp_pct, rank, winners, completed."""

from __future__ import annotations

from transforms.simultane.options import SimultaneOptions
from transforms.simultane.scoring import score_deals
from transforms.simultane.tournaments import score_tournaments, tournament_results

from .helpers import bot, deal_row, frame

OPTS = SimultaneOptions()


def results(rows: list[dict]) -> dict[str, dict]:
    deal_results = score_deals(frame(rows), OPTS)
    out = tournament_results(deal_results, OPTS).collect()
    return {r["player_id"]: r for r in out.iter_rows(named=True)}


def two_deals(a: list[tuple[int, int]], b: list[tuple[int, int]], bot_sides) -> list[dict]:
    rows = []
    for deal_no in (1, 2):
        kw = {"deal_no": deal_no, "deals": 2}
        rows.append(bot(*bot_sides[deal_no - 1], **kw))
        rows.append(deal_row("a", *a[deal_no - 1], **kw))
        rows.append(deal_row("b", *b[deal_no - 1], **kw))
    return rows


def test_co_winners_share_rank_one():
    # deal 1: a = 103.8 (4), b = 19.8 (0), bot 2; deal 2: the reverse -> a = b = 4, bot = 4
    res = results(two_deals([(220, 42), (0, 262)], [(0, 262), (220, 42)], [(210, 52)] * 2))
    assert [res[p]["points"] for p in ("a", "b", "BOT")] == [4, 4, 4]
    assert [res[p]["rank"] for p in ("a", "b", "BOT")] == [1, 1, 1]
    assert all(res[p]["is_winner"] for p in ("a", "b", "BOT"))
    assert res["a"]["top"] == 8 and res["a"]["mp_pct"] == 50.0


def test_human_wins_alone():
    res = results(two_deals([(220, 42), (220, 42)], [(0, 262), (0, 262)], [(210, 52)] * 2))
    assert [res[p]["points"] for p in ("a", "BOT", "b")] == [8, 4, 0]
    assert [res[p]["rank"] for p in ("a", "BOT", "b")] == [1, 2, 3]
    assert [res[p]["is_winner"] for p in ("a", "BOT", "b")] == [True, False, False]
    assert res["a"]["mp_pct"] == 100.0 and res["b"]["mp_pct"] == 0.0


def test_bot_wins_then_no_human_wins():
    res = results(two_deals([(200, 62), (0, 262)], [(0, 262), (200, 62)], [(210, 52)] * 2))
    assert res["BOT"]["points"] == 8 and res["BOT"]["is_winner"]
    assert not res["a"]["is_winner"] and not res["b"]["is_winner"]
    assert res["a"]["rank"] == res["b"]["rank"] == 2


def test_completed_needs_every_deal_and_no_quit():
    rows = []
    for deal_no in (1, 2, 3):
        kw = {"deal_no": deal_no, "deals": 3}
        rows.append(bot(210, 52, **kw))
        rows.append(deal_row("all", 220, 42, **kw))
        rows.append(
            deal_row("timeout", None, None, status="timeout", seconds=None, **kw)
            if deal_no == 2
            else deal_row("timeout", 220, 42, **kw)
        )
        if deal_no < 3:  # no row for deal 3
            rows.append(deal_row("missing", 220, 42, **kw))
        if deal_no == 3:
            rows.append(deal_row("quit", None, None, status="quit", seconds=None, **kw))
        else:
            rows.append(deal_row("quit", 220, 42, **kw))
    res = results(rows)
    assert res["all"]["completed"] and res["all"]["deals_played"] == 3
    # an unfinished deal (timeout) still completes the tournament; a quit does not
    assert res["timeout"]["completed"]
    assert not res["missing"]["completed"] and res["missing"]["deals_played"] == 2
    assert not res["quit"]["completed"]
    assert res["BOT"]["completed"]


def test_top_counts_only_scored_deals():
    rows = [
        bot(210, 52, deal_no=1, deals=2),
        deal_row("a", 220, 42, deal_no=1, deals=2),
        deal_row("a", 220, 42, deal_no=2, deals=2),  # deal 2 has no bot row: not scored
    ]
    res = results(rows)
    assert res["a"]["points"] == 2 and res["a"]["top"] == 2 and res["a"]["mp_pct"] == 100.0
    assert res["a"]["deals_played"] == 2 and res["a"]["completed"]


def test_score_tournaments_is_the_game_entry_point():
    """One call: the deal results, the tournament results and the data issues of the deals
    (here deal 2 has no bot row), in the shared `Scores` shape."""
    rows = [bot(210, 52, deal_no=1, deals=2), deal_row("a", 220, 42, deal_no=1, deals=2)]
    rows.append(deal_row("a", 0, 262, deal_no=2, deals=2))
    tables, issues = score_tournaments({"simultane.deal": frame(rows)}, OPTS).collect()
    assert sorted(tables) == ["simultane_deal_results", "simultane_tournament_results"]
    assert tables["simultane_deal_results"].height == 3
    tournament = tables["simultane_tournament_results"].sort("player_id")
    assert tournament.select("player_id", "points", "top", "completed").rows() == [
        ("BOT", 0, 2, False),
        ("a", 2, 2, True),
    ]
    assert issues.select("kind", "keys").rows() == [
        ("no_bot_reference", '{"tournament_id":"T1","deal_no":"2"}')
    ]
