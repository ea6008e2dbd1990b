"""IMP scale, Butler (datum, trimming, rounding, round cap), Sunday Times, Cavendish, VP."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bridge.conftest import board_scores, ew_values, ns_values, score
from transforms.bridge.imps import imps, imps_of
from transforms.bridge.vp import add_vp


@pytest.mark.parametrize(
    ("difference", "expected"),
    [
        (0, 0),
        (10, 0),
        (20, 1),
        (40, 1),
        (50, 2),
        (420, 9),
        (430, 10),
        (1490, 16),
        (1500, 17),
        (1750, 18),
        (2080, 19),
        (2240, 19),
        (3990, 23),
        (4000, 24),
        (7600, 24),
        (-430, -10),
    ],
)
def test_imp_scale(difference, expected):
    assert imps_of(difference) == expected
    assert pl.select(imps(pl.lit(difference))).item() == expected


def test_imp_scale_capped_at_17_for_cavendish():
    assert imps_of(2080, cap=17) == 17
    assert imps_of(-4000, cap=17) == -17


def test_butler_two_scores_compare_with_each_other():
    scores = score("butler", board_scores(1, [420, -50]))
    assert ns_values(scores, "imp") == [10.0, -10.0]
    assert ew_values(scores, "imp") == [-10.0, 10.0]


def test_butler_one_score_gets_zero():
    assert ns_values(score("butler", board_scores(1, [420])), "imp") == [0.0]


@pytest.mark.parametrize(
    ("scores", "datum", "expected"),
    [
        ([420, 400, -50], 400, [1, 0, -10]),  # n = 3: the middle one
        ([620, 170, 140, -100], 150, [10, 1, 0, -6]),  # n = 4: (170 + 140)/2 = 155 -> 150
        # n = 5: k = 1, mean of the middle three (450 + 420 + 170)/3 = 346.7 -> 340
        ([600, 450, 420, 170, -50], 340, [6, 3, 2, -5, -9]),
        # n = 9: k = 3, (600 + 450 + 420)/3 = 490
        (
            [1100, 650, 620, 600, 450, 420, 170, 140, -100],
            490,
            [12, 4, 4, 3, -1, -2, -8, -8, -11],
        ),
        # n = 10: k = 3, (600 + 450 + 420 + 400)/4 = 467.5 -> 460
        (
            [1100, 650, 620, 600, 450, 420, 400, 170, 140, -100],
            460,
            [12, 5, 4, 4, 0, -1, -2, -7, -8, -11],
        ),
        # negative datum truncated toward zero: (−170 − 140)/2 = −155 -> −150, not −160
        ([-620, -170, -140, 100], -150, [-10, -1, 0, 6]),
    ],
)
def test_butler_datum(scores, datum, expected):
    result = score("butler", board_scores(1, scores))
    assert ns_values(result, "datum") == [datum] * len(scores)
    assert ns_values(result, "imp") == [float(v) for v in expected]
    assert ew_values(result, "imp") == [-float(v) for v in expected]


@pytest.mark.parametrize(
    ("rounding", "scores", "datum"),
    [
        ("nearest", [-620, -170, -140, 100], -160),  # −155: half away from zero
        ("half_even", [-620, -170, -140, 100], -160),  # −15.5 tens -> −16
        ("half_even", [-620, -150, -140, 100], -140),  # −14.5 tens -> −14
        ("nearest", [-620, -150, -140, 100], -150),
        ("toward_zero", [-620, -150, -140, 100], -140),
    ],
)
def test_datum_rounding_options(rounding, scores, datum):
    result = score("butler", board_scores(1, scores), datum_rounding=rounding)
    assert ns_values(result, "datum")[0] == datum


def test_out_n_and_when_it_is_larger_than_possible():
    five = [600, 450, 420, 170, -50]
    # out = 2 with 5 scores: the middle one, 420
    assert ns_values(score("butler", board_scores(1, five), out=2), "datum")[0] == 420
    # out = 5 is more than possible: keep the middle one (n odd) or two (n even)
    assert ns_values(score("butler", board_scores(1, five), out=5), "datum")[0] == 420
    four = [620, 170, 140, -100]
    assert ns_values(score("butler", board_scores(1, four), out=9), "datum")[0] == 150
    # out = 0 keeps everything: (620 + 170 + 140 − 100)/4 = 207.5 -> 200
    assert ns_values(score("butler", board_scores(1, four), out=0), "datum")[0] == 200


def test_trim_median_and_fraction():
    ten = [1100, 650, 620, 600, 450, 420, 400, 170, 140, -100]
    assert ns_values(score("butler", board_scores(1, ten), trim="median"), "datum")[0] == 430
    # 0.1 of 10 = 1 each side: (650+620+600+450+420+400+170+140)/8 = 431.25 -> 430
    assert ns_values(score("butler", board_scores(1, ten), trim="0.1"), "datum")[0] == 430
    # 0.05 of 10 = 0.5 -> 0 dropped: 4450/10 = 445 -> 440
    assert ns_values(score("butler", board_scores(1, ten), trim="0.05"), "datum")[0] == 440


def _two_board_round(method: str, **options):
    # pair 1 (NS) meets pair 2 on boards 1 and 2: 1000 against a datum of 0 = +14 each
    rows = board_scores(1, [1000, 0, -10]) + board_scores(2, [1000, 0, -10])
    return score(method, rows, **options).tables["bridge_standings"].collect()


def test_round_cap_is_10_plus_boards_unless_bog():
    capped = {r["pair"]: r for r in _two_board_round("butler").iter_rows(named=True)}
    assert capped["1"]["total"] == 12.0  # 28 capped at 10 + 2
    assert capped["2"]["total"] == -28.0  # a negative total is not capped
    free = {r["pair"]: r for r in _two_board_round("butler", bog=True).iter_rows(named=True)}
    assert free["1"]["total"] == 28.0


def test_rounds_from_the_round_field_and_from_boards_per_round():
    rows = board_scores(1, [1000, 0, -10]) + board_scores(2, [1000, 0, -10])
    for row in rows:
        row["round"] = row["board"]  # two rounds of one board: 14 capped at 11, twice
    standings = score("butler", rows).tables["bridge_standings"].collect()
    assert standings.filter(pl.col("pair") == "1")["total"].item() == 22.0
    rows = board_scores(1, [1000, 0, -10]) + board_scores(2, [1000, 0, -10])
    by_size = score("butler", rows, boards_per_round=1).tables["bridge_standings"].collect()
    assert by_size.filter(pl.col("pair") == "1")["total"].item() == 22.0


def test_sunday_times_datum_from_the_other_scores():
    result = score("sunday_times", board_scores(1, [420, 400, -50]))
    # 420: others (400, −50) -> 175 -> 170 ; 400: (420, −50) -> 185 -> 180 ; −50: 410
    assert ns_values(result, "datum") == [170, 180, 410]
    assert ns_values(result, "imp") == [6.0, 6.0, -10.0]
    assert ew_values(result, "imp") == [-6.0, -6.0, 10.0]
    # n = 5: each datum from 4 others, k = 1: the middle two
    result = score("sunday_times", board_scores(1, [600, 450, 420, 170, -50]))
    # 600: (450, 420, 170, −50) -> (420+170)/2 = 295 -> 290 ; −50: (600, 450, 420, 170) -> 435
    assert ns_values(result, "datum") == [290, 290, 310, 430, 430]


def test_cavendish_caps_each_comparison_at_17():
    # 2220 vs −100 = 2320 (20 IMPs on the full scale) and vs 0 = 2220 (19): 17 each
    result = score("cavendish", board_scores(1, [2220, -100, 0]))
    assert ns_values(result, "imp") == [34.0, -20.0, -14.0]
    assert ew_values(result, "imp") == [-34.0, 20.0, 14.0]
    averaged = score("cavendish_avg", board_scores(1, [2220, -100, 0]))
    assert ns_values(averaged, "imp") == [17.0, -10.0, -7.0]


def test_cavendish_average_elsewhere_is_a_tie_or_lowers_the_divisor():
    rows = board_scores(1, [2220, -100, 0, "A50"])
    assert ns_values(score("cavendish", rows), "imp") == [34.0, -20.0, -14.0, 0.0]
    assert ns_values(score("cavendish_avg", rows), "imp") == [17.0, -10.0, -7.0, 0.0]


def test_artificial_scores_in_imp_methods():
    scores = score("butler", board_scores(1, [420, 400, -50, "A60/A40"]))
    assert ns_values(scores, "imp")[3] == 3.0
    assert ew_values(scores, "imp")[3] == -3.0


def _vp(margins: list[float], boards: int) -> list[float]:
    rounds = pl.LazyFrame(
        {"imps": [float(m) for m in margins], "boards": [boards] * len(margins)},
        schema={"imps": pl.Float64, "boards": pl.Int64},
    ).with_row_index("i")
    return add_vp(rounds).sort("i").collect()["vp"].to_list()  # joins do not keep the order


def test_vp_scale_16_boards():
    """The spec's check values (1 → 10.31, 20 → 15.00, 40 → 18.09, 60 → 20.00), the loser's
    complement, the cap at 20, a fractional margin read on the formula."""
    margins = [0, 1, 20, 40, 60, 75, -20, -1, 0.5, -0.5]
    assert _vp(margins, 16) == [10.0, 10.31, 15.0, 18.09, 20.0, 20.0, 5.0, 9.69, 10.16, 9.84]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.lists(st.integers(0, 120), min_size=1, max_size=30))
def test_vp_scale_is_a_published_table(boards, margins):
    """Winner + loser = 20; VP never fall as the margin grows, reach 20 and stay there; the
    increments never grow (the fix-up that reproduces the published tables)."""
    margins = sorted(set(margins) | {0, 1, 2})
    won = _vp(margins, boards)
    lost = _vp([-m for m in margins], boards)
    assert [round(w + v, 2) for w, v in zip(won, lost, strict=True)] == [20.0] * len(margins)
    assert won == sorted(won) and won[0] == 10.0 and max(won) <= 20.0
    everything = _vp(list(range(0, max(margins) + 3)), boards)
    steps = [round(b - a, 2) for a, b in zip(everything, everything[1:], strict=False)]
    assert all(later <= earlier for earlier, later in zip(steps, steps[1:], strict=False))


def test_vp_conversion_per_round():
    standings = {r["pair"]: r for r in _two_board_round("butler", vp=True).iter_rows(named=True)}
    # round of 2 boards, +28 IMPs: far past the 20-VP margin for 2 boards
    assert standings["1"]["vp"] == 20.0 and standings["1"]["total"] == 20.0
    assert standings["2"]["vp"] == 0.0
    assert standings["1"]["max"] == 20.0


def test_vp_not_allowed_for_cavendish_is_an_issue():
    rows = board_scores(1, [420, 400, -50])
    issues = score("cavendish", rows, vp=True).issues.collect()
    assert issues["kind"].to_list() == ["vp_not_allowed"]


@pytest.mark.parametrize(("kind", "amount", "expected"), [("p", 3, -3.0), ("w", 2, 2.0)])
def test_imp_penalties_use_the_amount(kind, amount, expected):
    scores = score(
        "butler",
        board_scores(1, [420, 400, -50]),
        penalties=[{"pair": "1", "kind": kind, "amount": amount}],
    )
    row = (
        scores.tables["bridge_standings"].filter(pl.col("pair") == "1").collect().row(0, named=True)
    )
    assert row["penalties"] == expected
    assert row["total"] == 1.0 + expected


def test_imp_penalty_without_amount_is_a_data_issue():
    scores = score(
        "butler", board_scores(1, [420, 400, -50]), penalties=[{"pair": "1", "kind": "z"}]
    )
    assert scores.issues.collect()["kind"].to_list() == ["imp_penalty_without_amount"]
    row = (
        scores.tables["bridge_standings"].filter(pl.col("pair") == "1").collect().row(0, named=True)
    )
    assert row["penalties"] == 0.0


@pytest.mark.parametrize("cap", [None, 17])
def test_imp_expression_is_the_scale_for_any_integer(cap):
    differences = [*range(-4100, 4101), 5, -15, 1499, 10**12, -(10**12)]
    frame = pl.DataFrame({"d": differences}).select(imps(pl.col("d"), cap).alias("imp"))
    assert frame["imp"].to_list() == [imps_of(d, cap) for d in differences]
