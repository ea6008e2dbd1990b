"""Deal and match scores in match points (face_a_face.md)."""

from decimal import ROUND_HALF_UP, Decimal, localcontext

import polars as pl
import pytest
from ff_builders import History
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.face_a_face import FaceAFaceOptions, score_matches
from transforms.face_a_face.match_points import sqrt_half_up

OPTS = FaceAFaceOptions()


def mp_of(deltas: list[int], decimals: int = 0) -> list:
    return (
        pl.DataFrame({"delta": deltas})
        .select(sqrt_half_up(pl.col("delta"), decimals).alias("mp"))["mp"]
        .to_list()
    )


@pytest.mark.parametrize(
    ("delta", "mp"),
    [
        (0, 0),
        (30, 5),  # √30 = 5.477
        (-30, 5),
        (42, 6),  # √42 = 6.4807: just under 6.5
        (43, 7),  # √43 = 6.5574: just over 6.5
        (262, 16),  # √262 = 16.186
        (600, 24),  # √600 = 24.495
        (2, 1),  # 1.414
        (3, 2),  # 1.732
        (6, 2),  # 2.449 (6 = 2² + 2: the last n rounding down)
        (7, 3),  # 2.646
        (16, 4),
        (10**12 + 10**6, 1_000_000),  # m² + m: still rounds down (float √ would be ambiguous)
        (10**12 + 10**6 + 1, 1_000_001),
    ],
)
def test_sqrt_rounded_half_up(delta, mp):
    assert mp_of([delta]) == [mp]


def test_sqrt_with_one_decimal():
    # √30 = 5.477 → 5.5; √42 = 6.4807 → 6.5; √2 = 1.4142 → 1.4
    assert mp_of([30, 42, 2], decimals=1) == [5.5, 6.5, 1.4]


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(10**9), max_value=10**9), st.integers(min_value=0, max_value=2))
def test_sqrt_matches_exact_decimal(delta, decimals):
    with localcontext() as ctx:
        ctx.prec = 50
        exact = Decimal(abs(delta)).sqrt().quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
    assert mp_of([delta], decimals) == [float(exact) if decimals else int(exact)]


def score(history: History):
    scores = score_matches(history.frames(), OPTS)
    return scores.tables["ff_deal_results"].collect(), scores.tables["ff_match_scores"].collect()


def test_deal_points_go_to_the_better_player():
    h = History()
    h.match("m1", "ann", "bob", [262, 0] + [0] * 14, [0, 30] + [0] * 14)
    deals, matches = score(h)
    assert deals.filter(pl.col("deal_no") <= 2).select(
        "deal_no", "delta", "mp_a", "mp_b"
    ).rows() == [
        (1, 262, 16, 0),
        (2, -30, 0, 5),
    ]
    assert matches.select("mp_a", "mp_b", "outcome_a", "outcome_b").row(0) == (16, 5, "win", "loss")


def test_unfinished_on_one_side_gives_the_opponent_5():
    h = History()
    # ann is 600 points better on deal 1 but takes 5 minutes on a defence deal
    h.match("m1", "ann", "bob", [600] + [0] * 15, [0] * 16, took_a={1: _min(5)})
    deals, matches = score(h)
    first = deals.filter(pl.col("deal_no") == 1)
    assert first.select("unfinished_a", "unfinished_b", "mp_a", "mp_b").row(0) == (
        True,
        False,
        0,
        5,
    )
    assert matches.select("mp_a", "mp_b", "outcome_a").row(0) == (0, 5, "loss")


def test_unfinished_on_both_sides_gives_5_each():
    h = History()
    h.match("m1", "ann", "bob", [0] * 16, [0] * 16, took_a={3: None}, took_b={3: _min(4)})
    deals, matches = score(h)
    third = deals.filter(pl.col("deal_no") == 3)
    assert third.select("unfinished_a", "unfinished_b", "mp_a", "mp_b").row(0) == (
        True,
        True,
        5,
        5,
    )
    # equal totals: a draw
    assert matches.select("mp_a", "mp_b", "outcome_a", "outcome_b").row(0) == (
        5,
        5,
        "draw",
        "draw",
    )


def test_missing_deal_row_is_unfinished():
    h = History()
    h.match("m1", "ann", "bob", [None] + [0] * 15, [0] * 16)
    deals, matches = score(h)
    assert deals.filter(pl.col("deal_no") == 1).select("unfinished_a", "mp_b").row(0) == (True, 5)
    assert matches["mp_b"].to_list() == [5]


def test_draw_on_equal_totals():
    h = History()
    # ann: √30 → 5 on deal 1; bob: √25 → 5 on deal 2
    h.match("m1", "ann", "bob", [30, 0] + [0] * 14, [0, 25] + [0] * 14)
    _, matches = score(h)
    assert matches.select("mp_a", "mp_b", "outcome_a", "outcome_b").row(0) == (
        5,
        5,
        "draw",
        "draw",
    )


def _min(m: float):
    from datetime import timedelta

    return timedelta(minutes=m)
