"""Method `matchpoints`: from-zero matchpoints, Neuberg in exact hundredths, M < 4, N < 4,
the traditional adjustment, artificial scores."""

from __future__ import annotations

import polars as pl

from tests.bridge.conftest import board_scores, ew_values, ns_values, score
from transforms.bridge.frames import packed, packed_bounds

NINE = [1000, 900, 800, 700, 600, 500, 400, 300, 200]
FIVE = [500, 400, 300, 200, 100]


def test_from_zero_two_per_worse_one_per_equal():
    scores = score("matchpoints", board_scores(1, [420, 420, 400, -50]))
    assert ns_values(scores, "mp") == [5.0, 5.0, 2.0, 0.0]
    assert ew_values(scores, "mp") == [1.0, 1.0, 4.0, 6.0]
    assert ns_values(scores, "mp_top") == [6.0] * 4


def test_neuberg_exact_half_rounds_toward_the_average_both_ways():
    # N = 9 (board 1), board 2 has M = 8 distinct scores: x' = (1 + x)·9/8 − 1
    rows = board_scores(1, NINE) + board_scores(2, [800, 700, 600, 500, 400, 300, 200, 100])
    scores = score("matchpoints", rows)
    ns = ns_values(scores, "mp", board=2)
    # x = 14 -> 15.875 -> 15.87 (down, toward 8); x = 0 -> 0.125 -> 0.13 (up, toward 8)
    # x = 10 -> 11.375 -> 11.37; x = 4 -> 4.625 -> 4.63; x = 6 -> 6.875 -> 6.88
    assert ns == [15.87, 13.62, 11.37, 9.12, 6.88, 4.63, 2.38, 0.13]
    assert ew_values(scores, "mp", board=2) == [0.13, 2.38, 4.63, 6.88, 9.12, 11.37, 13.62, 15.87]


def test_neuberg_not_a_half_rounds_to_nearest():
    # N = 9, M = 7: x' = (1 + x)·9/7 − 1 ; x = 0 -> 0.2857 -> 0.29 ; x = 12 -> 15.714 -> 15.71
    rows = board_scores(1, NINE) + board_scores(2, [700, 600, 500, 400, 300, 200, 100])
    ns = ns_values(score("matchpoints", rows), "mp", board=2)
    assert ns[0] == 15.71 and ns[-1] == 0.29


def test_fewer_than_four_scores_get_fixed_percentages_when_n_at_least_4():
    rows = (
        board_scores(1, FIVE)  # N = 5, top 8
        + board_scores(2, [420])  # M = 1: 60 % / 60 %
        + board_scores(3, [420, 400])  # M = 2: 65 % / 55 %
        + board_scores(4, [420, 420])  # M = 2 tied: 60 % each
        + board_scores(5, [420, 400, 100])  # M = 3: 70 / 60 / 50 %
        + board_scores(6, [420, 420, 100])  # M = 3, best two tied: 65, 65, 50 %
        + board_scores(7, [420, 100, 100])  # M = 3, worst two tied: 70, 55, 55 %
        + board_scores(8, [420, 420, 420])  # M = 3 all tied: 60 % each
    )
    scores = score("matchpoints", rows)
    assert ns_values(scores, "mp", 2) == [4.8]
    assert ew_values(scores, "mp", 2) == [4.8]  # complement to 120 %
    assert ns_values(scores, "mp", 3) == [5.2, 4.4]
    assert ew_values(scores, "mp", 3) == [4.4, 5.2]
    assert ns_values(scores, "mp", 4) == [4.8, 4.8]
    assert ns_values(scores, "mp", 5) == [5.6, 4.8, 4.0]
    assert ew_values(scores, "mp", 5) == [4.0, 4.8, 5.6]
    assert ns_values(scores, "mp", 6) == [5.2, 5.2, 4.0]
    assert ns_values(scores, "mp", 7) == [5.6, 4.4, 4.4]
    assert ns_values(scores, "mp", 8) == [4.8, 4.8, 4.8]


def test_n_below_4_uses_the_formula_again():
    # N = 3 (top 4), M = 2: x = 0 -> 1·3/2 − 1 = 0.5 ; x = 2 -> 3·3/2 − 1 = 3.5
    rows = board_scores(1, [300, 200, 100]) + board_scores(2, [420, 400])
    scores = score("matchpoints", rows)
    assert ns_values(scores, "mp", 2) == [3.5, 0.5]
    assert ew_values(scores, "mp", 2) == [0.5, 3.5]
    # M = 1: x = 0 -> 3/1 − 1 = 2 (the average)
    rows = board_scores(1, [300, 200, 100]) + board_scores(2, [420])
    assert ns_values(score("matchpoints", rows), "mp", 2) == [2.0]


def test_traditional_adds_n_minus_m():
    rows = board_scores(1, FIVE) + board_scores(2, [620, 420, 170, -100, "A60/A40"])
    scores = score("matchpoints", rows, neuberg=False)
    assert ns_values(scores, "mp", 2) == [7.0, 5.0, 3.0, 1.0, 4.8]
    assert ew_values(scores, "mp", 2) == [1.0, 3.0, 5.0, 7.0, 3.2]


def test_neuberg_with_an_artificial_score_and_the_standing_pct():
    # N = 5, M = 4: x' = (1 + x)·5/4 − 1 -> 0.25, 2.75, 5.25, 7.75 ; A60/A40 = 4.8 / 3.2
    rows = board_scores(1, FIVE) + board_scores(2, [620, 420, 170, -100, "A60/A40"])
    scores = score("matchpoints", rows)
    assert ns_values(scores, "mp", 2) == [7.75, 5.25, 2.75, 0.25, 4.8]
    assert ew_values(scores, "mp", 2) == [0.25, 2.75, 5.25, 7.75, 3.2]
    standings = scores.tables["bridge_standings"].collect().sort(pl.col("pair").cast(pl.Int64))
    first = standings.row(0, named=True)  # pair 1: 8 + 7.75 of 16
    assert (first["total"], first["max"], first["pct"], first["rank"]) == (15.75, 16.0, 98.44, 1)


def test_huge_board_numbers_and_scores_take_the_struct_keys():
    """Keys too wide for one 63-bit integer (`frames.packed`) fall back to structs: the same
    ranks, the same totals."""
    big = 10**15
    rows = board_scores(2**40, [big, -big, 0, big]) + board_scores(1, [420, 420, -50, 100])
    scores = score("matchpoints", rows)
    assert ns_values(scores, "mp", board=2**40) == [5.0, 0.0, 2.0, 5.0]
    assert ns_values(scores, "mp", board=1) == [5.0, 5.0, 0.0, 2.0]
    standings = scores.tables["bridge_standings"].collect().sort(pl.col("pair").cast(pl.Int64))
    assert standings["total"].to_list() == [10.0, 2.0, 5.0, 7.0, 2.0, 10.0, 7.0, 5.0]


def test_packed_keys_keep_the_order_of_the_tuple_or_become_structs():
    frame = pl.DataFrame({"a": [2, 1, 1, None], "b": [0, 7, 3, 5]})
    parts = [pl.col("a"), pl.col("b")]
    narrow = frame.select(packed(parts, packed_bounds(frame, parts), "k"))["k"]
    assert narrow.dtype == pl.Int64
    assert narrow.arg_sort().to_list() == [3, 2, 1, 0]  # null first, then (1, 3), (1, 7), (2, 0)
    wide = frame.select(packed(parts, [(0, 2**40), (0, 2**40)], "k"))["k"]
    assert wide.dtype == pl.Struct
    assert wide.arg_sort().to_list() == [3, 2, 1, 0]
