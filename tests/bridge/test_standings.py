"""Standings (bridge.md, Standings): fields, ranking by what is comparable, ties at the
published precision, artificial spellings and the two ways of rounding matchpoint totals."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from tests.bridge.conftest import board_scores, ns_values, score
from transforms.bridge.fields import two_winner
from transforms.bridge.standings import _imp_sum, _standings


def line(board: int, ns: str, ew: str, score_ns: int) -> dict:
    return {"board": board, "ns_pair": ns, "ew_pair": ew, "score_ns": score_ns}


def ranks(standings: pl.DataFrame) -> dict[str, int]:
    return dict(zip(standings["pair"], standings["rank"], strict=True))


# A Howell (pair 1 sits NS then EW) with a sit-out: pair 1 misses board 3, pair 7 plays only it.
HOWELL = [
    line(1, "1", "2", 500), line(1, "3", "4", 100), line(1, "5", "6", 0),
    line(2, "2", "1", -500), line(2, "4", "5", 0), line(2, "6", "3", 100),
    line(3, "7", "2", 100), line(3, "3", "6", 400), line(3, "5", "4", 0),
]  # fmt: skip


def test_howell_with_a_sit_out_is_ranked_by_percentage():
    standings = score("matchpoints", HOWELL).tables["bridge_standings"].collect()
    assert standings["field"].is_null().all()  # pairs sat both ways: one field
    by_pair = {r["pair"]: r for r in standings.iter_rows(named=True)}
    # pairs 1, 4 and 6 all total 8 MP, but pair 1 made them on 2 boards of top 4
    assert [by_pair[p]["total"] for p in "146"] == [8.0, 8.0, 8.0]
    assert [by_pair[p]["pct"] for p in "146"] == [100.0, 66.67, 66.67]
    assert [by_pair[p]["boards"] for p in "146"] == [2, 3, 3]
    # pair 7 (one board, 2 of 4) equals pair 3 (three boards, 6 of 12): 50 % each
    assert ranks(standings) == {"1": 1, "4": 2, "6": 2, "3": 4, "7": 4, "2": 6, "5": 6}


def test_imp_standings_rank_per_board_when_boards_differ():
    rows = [
        line(1, "1", "2", 420),
        line(1, "3", "4", -50),
        line(2, "5", "2", 420),
        line(2, "4", "3", 170),
        line(3, "5", "1", 420),
        line(3, "2", "6", 170),
    ]
    standings = score("butler", rows).tables["bridge_standings"].collect()
    by_pair = {r["pair"]: (r["total"], r["boards"]) for r in standings.iter_rows(named=True)}
    assert by_pair["5"] == (12.0, 2) and by_pair["6"] == (6.0, 1)
    # 6 IMPs a board each: the same rank, though the totals differ
    assert ranks(standings) == {"5": 1, "6": 1, "1": 3, "4": 3, "3": 5, "2": 6}


MITCHELL = [row for board in (1, 2, 3) for row in board_scores(board, [620, 170, -100, 140])]


def test_mitchell_has_two_fields_inferred():
    standings = score("matchpoints", MITCHELL).tables["bridge_standings"].collect()
    fields = dict(zip(standings["pair"], standings["field"], strict=True))
    assert {fields[p] for p in "1357"} == {"NS"} and {fields[p] for p in "2468"} == {"EW"}
    # each field has its own winner
    assert ranks(standings) == {"1": 1, "3": 2, "7": 3, "5": 4, "6": 1, "8": 2, "4": 3, "2": 4}


@pytest.mark.parametrize(
    ("movement", "extra", "fields"),
    [
        (None, None, 2),
        ("mitchell", None, 2),
        ("howell", None, 1),
        ("Arrow switch", None, 1),
        (None, json.dumps({"winner_type": 1}), 1),
        (None, json.dumps({"winner_type": "2"}), 2),
    ],
)
def test_fields_from_the_event_metadata(movement, extra, fields):
    scores = score("matchpoints", MITCHELL, movement=movement, extra=extra)
    standings = scores.tables["bridge_standings"].collect()
    assert standings["field"].n_unique() == fields
    # one field ranks the 8 pairs together, two fields 4 each
    assert standings["rank"].max() == (4 if fields == 2 else 7)


def test_two_winner_spellings():
    assert two_winner("Mitchell", None) is True
    assert two_winner("HOWELL", None) is False
    assert two_winner(None, '{"winner_type": 2}') is True
    assert two_winner(None, '{"event": "x"}') is None
    assert two_winner(None, "not json winner_type") is None


def _totals(rows: list[tuple[str, int, int]]) -> pl.LazyFrame:
    """Pair totals as `pair_standings` hands them to `_standings`: (pair, total_x100, boards)
    with a top of 10 a board."""
    return pl.DataFrame(
        [
            {
                "month": "2026-11",
                "event_id": "E",
                "section": None,
                "ev": 0,
                "pair": pair,
                "direction": "NS",
                "directions": 2,
                "two_winner": None,
                "exact_num": total,
                "exact_den": 1,
                "scored_boards": boards,
                "top_x100": 1000,
                "boards": boards,
                "real_boards": boards,
            }
            for pair, total, boards in rows
        ]
    ).lazy()


def test_percentages_equal_at_two_decimals_share_a_rank():
    no_penalties = pl.LazyFrame(
        schema={"event_id": pl.String, "pair": pl.String, "penalties_x100": pl.Int64}
    )
    # 25/30 = 83.333 %, 33.33/40 = 83.325 %: both published 83.33; 33.32/40 = 83.30
    totals = _totals([("A", 2500, 3), ("B", 3333, 4), ("C", 3332, 4)])
    standings = _standings(totals, no_penalties, True, False, "matchpoints").collect()
    assert standings["pct"].to_list() == [83.33, 83.33, 83.3]
    assert ranks(standings) == {"A": 1, "B": 1, "C": 3}


@pytest.mark.parametrize(
    ("spelling", "ns_pct", "ew_pct"),
    [
        ("A5050", 50, 50),
        ("A6040", 60, 40),
        ("A4060", 40, 60),
        ("A6060", 60, 60),
        ("A4040", 40, 40),
        ("A60/A40", 60, 40),
        ("A50", 50, 50),
        ("A40/A40", 40, 40),
    ],
)
def test_each_artificial_spelling(spelling, ns_pct, ew_pct):
    scores = score("matchpoints", board_scores(1, [500, 400, 300, spelling]))
    boards = scores.tables["bridge_board_results"].collect()
    assert scores.issues.collect().is_empty()
    artificial = boards.filter(pl.col("adjusted") == spelling)
    pcts = dict(zip(artificial["direction"], artificial["pct"], strict=True))
    assert pcts == {"NS": ns_pct, "EW": ew_pct}
    assert ns_values(scores, "mp")[:3] == [4.0, 2.0, 0.0]  # N = 3 real scores, top 4


def _rounding_event() -> list[dict]:
    """Board 1 has 8 real scores (N = 8, top 14); boards 2-4 have 7: pair 101 has the worst
    score of each, Neuberg 8/7 - 1 = 0.142857... MP a board."""
    rows = board_scores(1, [10 * i for i in range(8)], first_pair=1)
    for board in (2, 3, 4):
        rows += board_scores(board, [10 * i for i in range(1, 7)], first_pair=1)
        rows.append(line(board, "101", "102", -100))
    return rows


@pytest.mark.parametrize(
    ("rounding", "total", "pct"), [("per_board", 0.42, 1.0), ("exact", 0.43, 1.02)]
)
def test_both_roundings(rounding, total, pct):
    scores = score("matchpoints", _rounding_event(), pct_rounding=rounding)
    standings = scores.tables["bridge_standings"].collect()
    row = standings.filter(pl.col("pair") == "101").row(0, named=True)
    assert (row["boards"], row["max"]) == (3, 42.0)
    assert (row["total"], row["pct"]) == (total, pct)
    # the board values are the same either way: rounded to 0.01 each
    boards = scores.tables["bridge_board_results"].filter(pl.col("pair") == "101").collect()
    assert boards["mp"].to_list() == [0.14, 0.14, 0.14]


def test_per_board_is_the_default():
    default = score("matchpoints", _rounding_event()).tables["bridge_standings"].collect()
    assert default.filter(pl.col("pair") == "101")["total"].item() == 0.42


def test_exact_rounding_equals_per_board_when_nothing_is_rounded():
    rows = [row for board in (1, 2) for row in board_scores(board, [620, 170, -100, 140])]
    per_board = score("matchpoints", rows).tables["bridge_standings"].collect()
    exact = score("matchpoints", rows, pct_rounding="exact").tables["bridge_standings"].collect()
    assert per_board.sort("pair").equals(exact.sort("pair"))


def test_unknown_pct_rounding_is_refused():
    with pytest.raises(ValueError, match="pct_rounding"):
        score("matchpoints", MITCHELL, pct_rounding="nearest")


def test_an_imp_total_of_float_noise_is_published_as_zero_not_minus_zero():
    """-0.1 - 0.2 + 0.3 sums to -5.6e-17: rounded, -0.0, which one run published as "-0.0" and
    another, summing in another order, as "0.0"."""
    rows = pl.DataFrame({"pair": [1, 1, 1, 2, 2], "imp": [-0.1, -0.2, 0.3, 2.5, -1.0]})
    got = rows.group_by("pair").agg(_imp_sum(pl.col("imp")).alias("imps")).sort("pair")
    assert got["imps"].to_list() == [0.0, 1.5]
    assert math.copysign(1.0, got["imps"][0]) == 1.0
