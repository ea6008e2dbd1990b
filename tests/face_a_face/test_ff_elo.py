"""Elo (face_a_face.md): formula, cap, K (FIDE Decision), the Bot, order, history splits."""

from datetime import timedelta

import numpy as np
import polars as pl
import pytest
from ff_builders import T0, History
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.face_a_face import (
    FaceAFaceOptions,
    elo_history,
    elo_ratings,
    score_matches,
    with_elo,
)
from transforms.face_a_face.elo import carried_state, elo_state

OPTS = FaceAFaceOptions()
HOUR = timedelta(hours=1)
WIN, DRAW, LOSS = 1.0, 0.5, 0.0


def run(pairs, scores, n_players, start=None, rated=None):
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    return elo_ratings(
        a,
        b,
        np.array(scores, dtype=float),
        n_players,
        OPTS,
        None if start is None else np.array(start, dtype=float),
        None if rated is None else np.array(rated),
    )


@pytest.mark.parametrize(
    ("start", "rated", "score", "after", "k"),
    [
        # A 1600, B 1600, K 40/40, A wins → 1620 / 1580
        ((1600, 1600), (0, 0), WIN, (1620.0, 1580.0), (40, 40)),
        # A 1700 (K 20), B 1500 (K 40), draw → 1694.81 / 1510.39
        ((1700, 1500), (30, 0), DRAW, (1694.81, 1510.39), (20, 40)),
        # A 2100, B 1600, gap capped at 400, K 20/20, A wins → 2101.82 / 1598.18
        ((2100, 1600), (30, 30), WIN, (2101.82, 1598.18), (20, 20)),
    ],
)
def test_spec_elo_table(start, rated, score, after, k):
    r = run([(0, 1)], [score], 2, start, rated)
    assert (round(r.after_a[0], 2), round(r.after_b[0], 2)) == after
    assert (r.k_a[0], r.k_b[0]) == k


def test_spec_elo_table_against_the_bot():
    r = run([(0, -1)], [WIN], 1)  # A 1600 beats the Bot (index -1)
    assert (r.after_a[0], r.before_b[0], r.after_b[0]) == (1620.0, 1600.0, 1600.0)


def test_k_changes_after_30_rated_matches():
    # 29 rated matches before: the 30th still has K 40, the 31st K 20
    r = run([(0, -1), (0, -1)], [WIN, WIN], 1, rated=[29])
    assert list(r.k_a) == [40, 20]
    assert round(r.after_a[1], 2) == 1629.42  # 1620 + 20 · (1 − 0.52875)


def test_k_is_10_once_the_rating_has_reached_2400():
    # 2390 (K 20) beats 2390 → exactly 2400; then K 10, even after falling below 2400
    r = run([(0, 1), (0, 1), (0, 1)], [WIN, LOSS, WIN], 2, start=[2390, 2390], rated=[30, 30])
    assert list(r.k_a) == [20, 10, 10]
    assert r.after_a[0] == 2400.0
    assert round(r.after_a[1], 2) == 2394.71  # 2400 − 10 · 0.52875 (B is at 2380)
    assert list(r.k_b) == [20, 20, 20]


def test_elo_through_a_sequence_with_the_bot():
    h = History()
    h.match("m1", "ann", "bob", [30] + [0] * 15)  # ann wins
    h.match("m2", "ann", "BOT", d_b=[30] + [0] * 15, match_type="attaque", created=T0 + HOUR)
    h.match("m3", "bob", "BOT", [30] + [0] * 15, match_type="attaque", created=T0 + 2 * HOUR)
    h.match("m4", "ann", "bob", match_type="attaque", created=T0 + 3 * HOUR)  # draw
    s = score_matches(h.frames(), OPTS)
    elo = elo_history(s.tables["ff_match_scores"], OPTS)
    m = with_elo(s.tables["ff_match_scores"], elo, OPTS).collect().sort("match_id")
    got = [
        tuple(round(x, 2) for x in row)
        for row in m.select("elo_a_before", "elo_b_before", "elo_a_after", "elo_b_after").rows()
    ]
    assert got == [
        (1600.0, 1600.0, 1620.0, 1580.0),
        (1620.0, 1600.0, 1598.85, 1600.0),  # the Bot stays at 1600
        (1580.0, 1600.0, 1601.15, 1600.0),
        (1598.85, 1601.15, 1598.98, 1601.02),
    ]
    assert elo.collect().filter(pl.col("player_id") == "BOT").height == 0
    assert elo.collect().select("player_id", "match_id").rows() == [
        ("ann", "m1"),
        ("bob", "m1"),
        ("ann", "m2"),
        ("bob", "m3"),
        ("ann", "m4"),
        ("bob", "m4"),
    ]


def test_order_is_match_end_then_match_id():
    h = History()
    # same end time: m_a before m_b; m_c ends earlier although created later in the list
    h.match("m_b", "ann", "bob", [30] + [0] * 15, created=T0 + HOUR)
    h.match("m_a", "ann", "cid", [30] + [0] * 15, created=T0 + HOUR)
    h.match("m_c", "bob", "cid", [30] + [0] * 15)
    elo = elo_history(score_matches(h.frames(), OPTS).tables["ff_match_scores"], OPTS).collect()
    assert elo.unique("match_id").sort("elo_seq")["match_id"].to_list() == ["m_c", "m_a", "m_b"]


def test_unrated_matches_do_not_change_elo():
    h = History()
    h.match("m1", "ann", "bob", [30] + [0] * 15, ranked=False)
    h.match("m2", "ann", "bob", [30] + [0] * 15, start_after=None)  # cancelled
    h.match("m3", "ann", "cid", [30] + [0] * 15, created=T0 + HOUR)
    s = score_matches(h.frames(), OPTS)
    m = (
        with_elo(s.tables["ff_match_scores"], elo_history(s.tables["ff_match_scores"], OPTS), OPTS)
        .collect()
        .sort("match_id")
    )
    assert m.select("match_id", "counts_for_ranking", "elo_a_before", "elo_a_after").rows() == [
        ("m1", False, None, None),
        ("m2", False, None, None),
        ("m3", True, 1600.0, 1620.0),
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(-1, 4), st.integers(-1, 4), st.sampled_from([WIN, DRAW, LOSS])
        ).filter(lambda t: t[0] != t[1]),
        min_size=1,
        max_size=80,
    ),
    st.lists(st.floats(1000, 2600), min_size=5, max_size=5),
    st.lists(st.integers(0, 40), min_size=5, max_size=5),
)
def test_human_matches_exchange_elo(matches, start, rated):
    r = run([(a, b) for a, b, _ in matches], [s for *_, s in matches], 5, start, rated)
    humans = [i for i, (a, b, _) in enumerate(matches) if a >= 0 and b >= 0]
    for i in humans:
        gain_a = r.after_a[i] - r.before_a[i]
        gain_b = r.after_b[i] - r.before_b[i]
        if r.k_a[i] == r.k_b[i]:  # the spec's rule: what one gains the other loses
            assert gain_a == pytest.approx(-gain_b, abs=1e-9)
        # with different K (spec table row 2), the exchange is in proportion to K
        assert gain_a / r.k_a[i] == pytest.approx(-gain_b / r.k_b[i], abs=1e-12)
    bot_sides = [r.after_a[i] for i, m in enumerate(matches) if m[0] < 0]
    bot_sides += [r.after_b[i] for i, m in enumerate(matches) if m[1] < 0]
    assert all(x == OPTS.bot_elo for x in bot_sides)


def _history() -> History:
    """Two months of matches between four players and the Bot."""
    h = History()
    players = ["ann", "bob", "cid", "dan", "BOT"]
    rng = np.random.default_rng(7)
    n = 0
    for day in (0, 5, 12, 25, 33, 40, 47):  # days after 2026-03-10: March and April
        for i, a in enumerate(players[:-1]):
            for b in players[i + 1 :]:
                n += 1
                d_a = [int(x) for x in rng.integers(-40, 40, 16)]
                h.match(
                    f"m{n:03d}",
                    a,
                    b,
                    d_a,
                    match_type=["classique", "attaque", "attaque_surcontrat"][day % 3],
                    created=T0 + timedelta(days=day, minutes=n),
                )
    return h


def test_same_elo_whatever_the_split_of_history():
    inputs = _history().frames()
    whole = score_matches(inputs, OPTS).tables["ff_match_scores"]
    by_month = []
    for month in ("2026-03", "2026-04"):
        ids = whole.filter(pl.col("month") == month).select("match_id")
        by_month.append(
            score_matches(
                inputs
                | {
                    kind: inputs[kind].join(ids, on="match_id", how="semi")
                    for kind in ("ff.match", "ff.deal")
                },
                OPTS,
            ).tables["ff_match_scores"]
        )
    split = pl.concat(by_month)
    elo_whole = elo_history(whole, OPTS).collect()
    elo_split = elo_history(split, OPTS).collect()
    # 7 days × (6 human matches × 2 rows + 4 with the Bot × 1 row); days 12 and 40 repeat the
    # type of days 0 and 25 in the same month (March / April, 2026-04-04 = day 25): rematches
    assert elo_whole.height == (7 - 2) * (6 * 2 + 4)
    assert elo_split.equals(elo_whole)
    # a nightly over March only gives the same March ratings as the backfill of everything
    march = elo_history(by_month[0], OPTS).collect()
    assert march.equals(elo_whole.filter(pl.col("month") == "2026-03"))


def test_elo_from_the_state_at_any_point_equals_elo_over_all():
    """Elo run from a point of the order (each player's state there: rating, rated matches,
    ever ≥ k_master_rating) continues exactly as the run over the whole history."""
    opts = FaceAFaceOptions(k_master_rating=1620)  # some players cross it, some never
    scored = score_matches(_history().frames(), opts).tables["ff_match_scores"].collect()
    whole = elo_history(scored.lazy(), opts).collect()
    assert whole["elo_after"].max() >= 1620 > whole["elo_after"].min()
    ends = whole["ended_at"].unique().sort()
    for cut in ends[1::5]:
        before = whole.filter(pl.col("ended_at") < cut)
        after = scored.filter(pl.col("ended_at") >= cut)
        state = elo_state(before.lazy(), opts).collect()
        first_seq = scored.filter(pl.col("counts_for_ranking") & (pl.col("ended_at") < cut)).height
        rest = elo_history(after.lazy(), opts, state, first_seq).collect()
        assert pl.concat([before, rest]).equals(whole), cut
        # the state carries the position in the order: its last elo_seq + 1
        assert state["elo_seq"].max() + 1 == first_seq, cut


def test_state_carried_over_a_stretch_equals_the_state_of_the_whole():
    """The state after two consecutive stretches of the order, carried from the state after
    the first, is the state after both (rating, rated matches summed, master, last match)."""
    opts = FaceAFaceOptions(k_master_rating=1620)
    scored = score_matches(_history().frames(), opts).tables["ff_match_scores"].collect()
    whole = elo_history(scored.lazy(), opts).collect()
    ends = whole["ended_at"].unique().sort()
    for cut, end in zip(ends[1::4], ends[3::4], strict=False):
        first, second = (
            whole.filter(pl.col("ended_at") < cut),
            whole.filter(pl.col("ended_at").is_between(cut, end, closed="left")),
        )
        carried = carried_state(elo_state(first.lazy(), opts), elo_state(second.lazy(), opts))
        want = elo_state(pl.concat([first, second]).lazy(), opts).collect().sort("player_id")
        got = carried.collect().sort("player_id")
        assert got.equals(want), cut
        assert (got["rated"] > elo_state(second.lazy(), opts).collect()["rated"].max()).any()
