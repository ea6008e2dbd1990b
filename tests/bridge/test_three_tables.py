"""Method `three_tables`: every cell region of Peszke's table, its average case, penalties."""

from __future__ import annotations

import polars as pl
import pytest

from tests.bridge.conftest import board_scores, ew_values, ns_values, score

# The spec's table, rows A−B, columns B−C, cells NS points for A, B, C.
TABLE = [
    [(8, 8, 8), (9, 9, 6), (10, 10, 4), (11, 11, 2), (12, 12, 0)],
    [(10, 7, 7), (10, 8, 6), (11, 9, 4), (12, 10, 2), (13, 11, 0)],
    [(12, 6, 6), (12, 7, 5), (12, 8, 4), (13, 9, 2), (14, 10, 0)],
    [(14, 5, 5), (14, 6, 4), (14, 7, 3), (14, 8, 2), (15, 9, 0)],
    [(16, 4, 4), (16, 5, 3), (16, 6, 2), (16, 7, 1), (16, 8, 0)],
]
# Both ends of each bucket 0–10, 20–100, 110–210, 220–440, 450+.
LOW = [0, 20, 110, 220, 450]
HIGH = [10, 100, 210, 440, 2000]


@pytest.mark.parametrize("ab", range(5))
@pytest.mark.parametrize("bc", range(5))
@pytest.mark.parametrize("edge", [LOW, HIGH])
def test_each_cell(ab, bc, edge):
    c = -600
    b = c + edge[bc]
    a = b + edge[ab]
    # tables in the order C, A, B to show the order does not matter
    scores = score("three_tables", board_scores(1, [c, a, b]))
    expected = TABLE[ab][bc]
    assert ns_values(scores, "mp") == [expected[2], expected[0], expected[1]]
    assert ew_values(scores, "mp") == [16 - expected[2], 16 - expected[0], 16 - expected[1]]
    assert ns_values(scores, "mp_top") == [16.0] * 3


@pytest.mark.parametrize(
    ("a", "c", "expected_a", "expected_c"),
    [
        (600, 100, 14, 2),  # (A−C)/2 = 250 -> 220–440 diagonal: 14 8 2
        (330, 100, 12, 4),  # 115 -> 110 -> 110–210: 12 8 4
        (310, 100, 10, 6),  # 105 rounded down to 100 -> 20–100: 10 8 6
        (130, 100, 8, 8),  # 15 -> 10 -> 0–10: 8 8 8
        (1100, 100, 16, 0),  # 500 -> 450+: 16 8 0
    ],
)
def test_average_reads_the_diagonal(a, c, expected_a, expected_c):
    scores = score("three_tables", board_scores(1, [a, "A50", c]))
    assert ns_values(scores, "mp") == [expected_a, 8.0, expected_c]
    assert ew_values(scores, "mp") == [16 - expected_a, 8.0, 16 - expected_c]


def test_artificial_60_40_is_a_share_of_16():
    scores = score("three_tables", board_scores(1, [600, "A60/A40", 100]))
    assert ns_values(scores, "mp") == [14.0, 9.6, 2.0]
    assert ew_values(scores, "mp") == [2.0, 6.4, 14.0]


def test_missing_table_counts_as_an_average_by_default():
    scores = score("three_tables", board_scores(1, [600, 100]))
    assert ns_values(scores, "mp") == [14.0, 2.0]
    unscored = score("three_tables", board_scores(1, [600, 100]), missing_as_average=False)
    assert ns_values(unscored, "mp") == [None, None]


@pytest.mark.parametrize(("kind", "points"), [("p", -0.8), ("z", -1.6), ("m", -2.4), ("w", 1.6)])
def test_penalties_of_a_three_table_event(kind, points):
    scores = score(
        "three_tables", board_scores(1, [600, 300, 100]), penalties=[{"pair": "1", "kind": kind}]
    )
    standings = {
        r["pair"]: r for r in scores.tables["bridge_standings"].collect().iter_rows(named=True)
    }
    assert standings["1"]["penalties"] == points
    assert standings["1"]["total"] == pytest.approx(14 + points)  # 600/300/100: cell 14 7 3


def test_a_board_with_more_than_three_scores_is_reported_and_the_rest_scored():
    """Boards 1 and 3 have 3 tables; board 2 has 4: it is not scored (null, not 0) and reported;
    the pairs' totals and maximum count the two scored boards."""
    rows = board_scores(1, [600, 300, 100]) + board_scores(3, [600, 300, 100])
    rows += board_scores(2, [600, 300, 100, 50])
    scores = score("three_tables", rows)
    assert ns_values(scores, "mp", board=2) == [None] * 4
    assert ew_values(scores, "mp", board=2) == [None] * 4
    assert ns_values(scores, "mp", board=3) == [14.0, 7.0, 3.0]
    issues = scores.issues.collect()
    assert issues.rows() == [
        (
            "2026-11",
            "three_tables_board_not_scored",
            '{"event_id":"E1","section":"","board":"2"}',
            "board 2: 4 real scores, the 3-table scale compares 3: not scored",
        )
    ]
    standings = scores.tables["bridge_standings"].collect()
    pair1 = standings.filter(pl.col("pair") == "1").row(0, named=True)
    assert (pair1["total"], pair1["max"], pair1["pct"], pair1["boards"]) == (28.0, 32.0, 87.5, 3)
    # pair 7 played only board 2: no scored board, not ranked
    assert "7" not in standings["pair"].to_list() and "8" not in standings["pair"].to_list()


def test_a_board_short_of_tables_without_the_decision_is_reported():
    rows = board_scores(1, [600, 300, 100]) + board_scores(2, [600, 100])
    scores = score("three_tables", rows, missing_as_average=False)
    assert ns_values(scores, "mp", board=2) == [None, None]
    assert scores.issues.collect()["detail"].to_list() == [
        "board 2: 2 real scores and no artificial one (missing_as_average is off): not scored"
    ]
    assert score("three_tables", rows).issues.collect().is_empty()  # the Decision's default


def test_an_event_of_many_tables_declared_three_tables_never_crashes():
    """Every board has 5 tables: nothing is scored, every board is reported, no standings."""
    rows = [row for board in (1, 2) for row in board_scores(board, [600, 300, 100, 50, 0])]
    scores = score("three_tables", rows)
    assert scores.tables["bridge_standings"].collect().is_empty()
    assert scores.issues.collect()["kind"].to_list() == ["three_tables_board_not_scored"] * 2
