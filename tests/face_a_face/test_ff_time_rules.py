"""Time rules (face_a_face.md): cancel 10 min, attack 4 min, defence 3 min, disconnect 6 min."""

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest
from ff_builders import T0, History

from transforms.face_a_face import FaceAFaceOptions, elo_history, score_matches, with_elo

OPTS = FaceAFaceOptions()
SECOND = timedelta(seconds=1)
MINUTE = timedelta(minutes=1)
STARTED = T0 + MINUTE  # History's default start: one minute after creation


def scored(h: History):
    return score_matches(h.frames(), OPTS)


@pytest.mark.parametrize(
    ("start_after", "status"),
    [(10 * MINUTE, "played"), (10 * MINUTE + SECOND, "cancelled"), (None, "cancelled")],
)
def test_cancelled_when_not_started_within_10_minutes(start_after, status):
    h = History()
    h.match("m1", "ann", "bob", start_after=start_after)
    m = scored(h).tables["ff_match_scores"].collect()
    assert m.select("status", "mp_a", "outcome_a", "counts_for_ranking").row(0) == (
        (status, 0, "draw", True) if status == "played" else (status, None, None, False)
    )


def test_deferred_start_counts_from_the_scheduled_time():
    h = History()
    scheduled = T0 + timedelta(hours=2)
    h.match("late_ok", "ann", "bob", scheduled=scheduled, start_after=10 * MINUTE)
    h.match("too_late", "ann", "cid", scheduled=scheduled, start_after=10 * MINUTE + SECOND)
    m = scored(h).tables["ff_match_scores"].collect()
    assert m.select("match_id", "status").rows() == [
        ("late_ok", "played"),
        ("too_late", "cancelled"),
    ]


def test_month_of_start_or_of_creation_when_cancelled():
    # 2026-03-31 21:55 UTC = 23:55 in Paris (summer time); 22:01 UTC = 00:01 on April 1st
    created = datetime(2026, 3, 31, 21, 55, tzinfo=UTC)
    h = History()
    h.match("played", "ann", "bob", created=created, start_after=6 * MINUTE)
    h.match("cancelled", "ann", "cid", created=created, start_after=11 * MINUTE)
    m = scored(h).tables["ff_match_scores"].collect()
    assert m.select("match_id", "status", "month").sort("match_id").rows() == [
        ("cancelled", "cancelled", "2026-03"),
        ("played", "played", "2026-04"),
    ]


def test_cancelled_match_does_not_use_up_the_key():
    h = History()
    h.match("m1", "ann", "bob", start_after=None)
    h.match("m2", "ann", "bob", [30] + [0] * 15, created=T0 + timedelta(hours=1))
    s = scored(h)
    m = s.tables["ff_match_scores"].collect()
    assert m.select("match_id", "status", "counts_for_ranking").rows() == [
        ("m1", "cancelled", False),
        ("m2", "played", True),
    ]
    assert s.issues.collect().height == 0


@pytest.mark.parametrize(
    ("match_type", "took", "unfinished"),
    [
        ("attaque", timedelta(seconds=240), False),
        ("attaque", timedelta(seconds=241), True),
        ("attaque_surcontrat", timedelta(seconds=241), True),
        ("classique", timedelta(seconds=180), False),  # deal 1 of a classique is a defence deal
        ("classique", timedelta(seconds=181), True),
    ],
)
def test_deal_time_limits(match_type, took, unfinished):
    h = History()
    h.match("m1", "ann", "bob", [100] + [0] * 15, match_type=match_type, took_a={1: took})
    d = scored(h).tables["ff_deal_results"].collect().filter(pl.col("deal_no") == 1)
    # finished: √100 = 10 for ann; unfinished: 5 for bob
    expected = (True, 0, 5) if unfinished else (False, 10, 0)
    assert d.select("unfinished_a", "mp_a", "mp_b").row(0) == expected


def test_classique_attack_deal_has_4_minutes():
    h = History()
    # deals 13..16 of a classique are attack deals
    h.match("m1", "ann", "bob", took_a={13: timedelta(seconds=240), 14: timedelta(seconds=241)})
    d = scored(h).tables["ff_deal_results"].collect().filter(pl.col("deal_no").is_in([13, 14]))
    assert d.select("deal_no", "role", "unfinished_a").rows() == [
        (13, "attack", False),
        (14, "attack", True),
    ]


@pytest.mark.parametrize(
    ("away", "forfeit"),
    [
        (6 * MINUTE, False),
        (6 * MINUTE + SECOND, True),
        (None, True),  # never came back
        (timedelta(hours=2), True),  # back only after the match ended
    ],
)
def test_disconnection_limit(away, forfeit):
    h = History()
    h.match("m1", "ann", "bob")
    gone = STARTED + 5 * MINUTE
    h.disconnect("m1", "bob", gone, None if away is None else gone + away)
    m = scored(h).tables["ff_match_scores"].collect()
    expected = ("forfeit", "bob", "win") if forfeit else ("played", None, "draw")
    assert m.select("status", "forfeit_by", "outcome_a").row(0) == expected


def test_disconnection_after_the_end_is_no_forfeit():
    h = History()
    end = h.match("m1", "ann", "bob")
    h.disconnect("m1", "bob", end + MINUTE, None)
    assert scored(h).tables["ff_match_scores"].collect()["status"].to_list() == ["played"]


def test_disconnection_of_a_player_not_in_the_match_is_ignored_and_reported():
    h = History()
    h.match("m1", "ann", "bob")
    h.disconnect("m1", "zoe", STARTED + MINUTE, None)  # never back, but not a player of m1
    scores = scored(h)
    assert scores.tables["ff_match_scores"].collect()["status"].to_list() == ["played"]
    issues = scores.issues.collect().filter(pl.col("kind") == "ff_disconnect_player_not_in_match")
    assert issues.select("keys", "detail").rows() == [
        (
            '{"match_id":"m1","player_id":"zoe"}',
            "1 disconnection(s) of zoe in a match between ann and bob: ignored",
        ),
    ]


def test_forfeit_while_ahead_on_points_is_a_loss():
    h = History()
    h.match("m1", "ann", "bob", [600] + [0] * 15)  # ann: √600 → 24 match points
    h.disconnect("m1", "ann", STARTED + 10 * MINUTE, STARTED + 17 * MINUTE)  # 7 minutes away
    s = scored(h)
    elo = elo_history(s.tables["ff_match_scores"], OPTS)
    m = with_elo(s.tables["ff_match_scores"], elo, OPTS).collect()
    assert m.select(
        "status", "forfeit_by", "mp_a", "mp_b", "outcome_a", "outcome_b", "value_a", "value_b"
    ).row(0) == ("forfeit", "ann", 24, 0, "loss", "win", 0.0, 4800.0)
    # rated as a loss for ann
    assert m.select("elo_a_after", "elo_b_after").row(0) == (1580.0, 1620.0)


def test_first_player_to_forfeit_loses():
    h = History()
    h.match("m1", "ann", "bob")
    h.disconnect("m1", "bob", STARTED + 2 * MINUTE, None)  # forfeits at +8
    h.disconnect("m1", "ann", STARTED + 3 * MINUTE, None)  # would forfeit at +9
    m = scored(h).tables["ff_match_scores"].collect()
    assert m.select("forfeit_by", "outcome_a").row(0) == ("bob", "win")
