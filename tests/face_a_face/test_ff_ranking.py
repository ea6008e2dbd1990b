"""Tournament points and the monthly ranking (face_a_face.md, "Tournament points")."""

import json
from dataclasses import replace
from datetime import timedelta

import polars as pl
from ff_builders import T0, History

from transforms.face_a_face import (
    FaceAFaceOptions,
    elo_history,
    monthly_ranking,
    score_matches,
    with_elo,
)

OPTS = FaceAFaceOptions()
WIN = [30] + [0] * 15  # player a wins √30 → 5 to 0
LOSS = [0] * 15 + [-30]
DRAW = [0] * 16


class Month(History):
    """History whose matches are one hour apart, in the order written."""

    def play(self, match_id, a, b, d_a, match_type="classique", **kw):
        hours = len(self.match_rows)
        return self.match(
            match_id, a, b, d_a, match_type=match_type, created=T0 + timedelta(hours=hours), **kw
        )


def pipeline(h: History, opts: FaceAFaceOptions = OPTS):
    s = score_matches(h.frames(), opts)
    elo = elo_history(s.tables["ff_match_scores"], opts)
    matches = with_elo(s.tables["ff_match_scores"], elo, opts)
    return matches.collect(), monthly_ranking(matches, elo, opts).collect(), s.issues.collect()


def test_a_win_against_the_bot_is_worth_4800():
    h = Month()
    h.play("m1", "ann", "BOT", WIN, "attaque")
    matches, ranking, _ = pipeline(h)
    assert matches.select("value_a", "value_b").row(0) == (4800.0, 1600.0)
    # the Bot is never ranked; 4800 / 12 = 400
    assert ranking.select("rank", "player_id", "points", "attaque_counted").rows() == [
        (1, "ann", 400.0, 1)
    ]


def test_best_6_per_category_and_no_spill():
    h = Month()
    # Classique: 8 matches against fresh opponents (all at 1600): 3 wins, 3 draws, 2 losses
    for i, d in enumerate([WIN, LOSS, WIN, DRAW, DRAW, LOSS, WIN, DRAW], start=1):
        h.play(f"c{i}", "ann", f"p{i}", d)
    # Attaque: only 2 matches — a win over the Bot and a loss: their slots stay partly empty
    h.play("a1", "ann", "BOT", WIN, "attaque")
    h.play("a2", "ann", "q1", LOSS, "attaque_surcontrat")
    matches, ranking, _ = pipeline(h)
    ann = ranking.filter(pl.col("player_id") == "ann").row(0, named=True)
    # (3 × 4800 + 3 × 3200 + (4800 + 1600)) / 12 = (24000 + 6400) / 12
    assert ann["points"] == 2533.33
    assert (ann["classique_counted"], ann["attaque_counted"], ann["matches"]) == (6, 2, 10)
    assert ann["elo"] == matches.filter(pl.col("match_id") == "a2")["elo_a_after"][0]


def test_attack_types_pooled_or_not():
    h = Month()
    for i in range(1, 5):
        h.play(f"a{i}", "ann", f"p{i}", WIN, "attaque")
        h.play(f"s{i}", "ann", f"q{i}", WIN, "attaque_surcontrat")
    _, pooled, _ = pipeline(h)
    ann = pooled.filter(pl.col("player_id") == "ann").row(0, named=True)
    assert (ann["points"], ann["attaque_counted"]) == (2400.0, 6)  # 6 × 4800 / 12
    _, apart, _ = pipeline(h, replace(OPTS, pool_attack_types=False))
    ann = apart.filter(pl.col("player_id") == "ann").row(0, named=True)
    assert (ann["points"], ann["attaque_counted"]) == (3200.0, 4)  # 8 × 4800 / 12
    assert ann["surcontrat_counted"] == 4


def test_ties_share_the_rank():
    h = Month()
    h.play("m1", "ann", "xav", WIN)
    h.play("m2", "bob", "yan", WIN)
    h.play("m3", "cid", "zoe", DRAW)
    _, ranking, _ = pipeline(h)
    assert ranking.select("rank", "player_id", "points").rows() == [
        (1, "ann", 400.0),
        (1, "bob", 400.0),
        (3, "cid", 266.67),
        (3, "zoe", 266.67),
        (5, "xav", 133.33),
        (5, "yan", 133.33),
    ]


def test_rematch_is_kept_not_ranked_and_reported():
    h = Month()
    h.play("m1", "ann", "bob", WIN)
    h.play("m2", "bob", "ann", WIN)  # same month, players and type: a rematch
    h.play("m3", "ann", "bob", WIN, "attaque")  # another type: fine
    h.play("m4", "ann", "BOT", WIN, "attaque")
    h.play("m5", "ann", "BOT", WIN, "attaque")  # the Bot included
    h.play("m6", "ann", "bob", WIN, ranked=False)  # unranked: allowed, no points
    matches, ranking, issues = pipeline(h)
    assert matches.select("match_id", "status", "counts_for_ranking", "rematch_of").rows() == [
        ("m1", "played", True, None),
        ("m2", "played", False, "m1"),
        ("m3", "played", True, None),
        ("m4", "played", True, None),
        ("m5", "played", False, "m4"),
        ("m6", "played", False, None),
    ]
    rematch = matches.filter(pl.col("match_id") == "m2")
    assert rematch.select("elo_a_before", "elo_a_after", "value_a", "value_b").row(0) == (
        None,
        None,
        None,
        None,
    )
    assert issues.filter(pl.col("kind") == "ff_rematch").select("month", "keys").rows() == [
        (
            "2026-03",
            json.dumps(
                {"match_id": "m2", "player_a": "bob", "player_b": "ann", "match_type": "classique"},
                separators=(",", ":"),
            ),
        ),
        (
            "2026-03",
            json.dumps(
                {"match_id": "m5", "player_a": "ann", "player_b": "BOT", "match_type": "attaque"},
                separators=(",", ":"),
            ),
        ),
    ]
    ann = ranking.filter(pl.col("player_id") == "ann").row(0, named=True)
    # ranked: m1 (win vs bob 1600), m3 (win vs bob at 1580), m4 (win vs Bot)
    assert ann["points"] == round((4800 + 3 * 1580 + 4800) / 12, 2)
    assert ann["matches"] == 6


def test_same_pair_and_type_next_month_is_not_a_rematch():
    h = Month()
    h.play("m1", "ann", "bob", WIN)
    h.match("m2", "ann", "bob", WIN, created=T0 + timedelta(days=30))
    matches, ranking, issues = pipeline(h)
    assert matches.select("month", "counts_for_ranking").rows() == [
        ("2026-03", True),
        ("2026-04", True),
    ]
    assert issues.height == 0
    # Elo at each month end: after m1 (1620 / 1580), then after m2
    # (K 40, E = 0.55731: 1620 + 40 · 0.44269)
    assert ranking.select("month", "player_id", "rank", pl.col("elo").round(2)).rows() == [
        ("2026-03", "ann", 1, 1620.0),
        ("2026-03", "bob", 2, 1580.0),
        ("2026-04", "ann", 1, 1637.71),
        ("2026-04", "bob", 2, 1562.29),
    ]
    # the Elo the site shows beside the float: rounded half away from zero
    assert ranking["elo_rounded"].to_list() == [1620, 1580, 1638, 1562]


def test_cross_record_problems_are_reported():
    h = Month()
    h.play("nodeals", "ann", "bob", WIN, deals=False)
    roles = ["defense"] * 11 + ["attack"] * 5
    h.play("roles", "ann", "cid", WIN, roles=roles)
    h.play("ok", "ann", "dan", WIN)
    h.deal_rows.append(dict(h.deal_rows[-1], player_id="eve"))
    matches, _, issues = pipeline(h)
    assert issues.sort("kind", "keys").select("kind", "detail").rows() == [
        (
            "ff_deal_player_not_in_match",
            "1 deal rows of eve for a match between ann and dan: not scored",
        ),
        ("ff_player_without_deals", "player ann has no deal rows: match not scored"),
        ("ff_player_without_deals", "player bob has no deal rows: match not scored"),
        ("ff_roles", "classique ann: 5 attack + 11 defense deals, expected 4 + 12"),
        ("ff_roles", "classique cid: 5 attack + 11 defense deals, expected 4 + 12"),
    ]
    assert matches.select("match_id", "mp_a", "outcome_a", "counts_for_ranking").rows() == [
        ("nodeals", None, None, False),
        ("ok", 5, "win", True),
        ("roles", 5, "win", True),
    ]


def test_the_shape_of_a_match_comes_from_the_options():
    """A classique of 6 defence + 2 attack deals is right for 8-deal matches with 2 attack
    deals, and a role problem for the spec's 16 = 12 + 4."""
    h = Month()
    h.play("short", "ann", "bob", [0] * 8, d_b=[0] * 8, roles=["defense"] * 6 + ["attack"] * 2)
    eight = replace(OPTS, deals_per_match=8, classique_attack_deals=2)
    assert pipeline(h, eight)[2].height == 0
    assert pipeline(h)[2].select("kind", "detail").rows() == [
        ("ff_roles", "classique ann: 2 attack + 6 defense deals, expected 4 + 12"),
        ("ff_roles", "classique bob: 2 attack + 6 defense deals, expected 4 + 12"),
    ]


def test_forfeit_cut_short_is_no_role_problem_but_stray_deals_are():
    h = Month()
    h.play("short", "ann", "bob", [0] * 5 + [None] * 11)
    h.deal_rows = [r for r in h.deal_rows if r["deal_no"] <= 5]  # bob stops too
    h.disconnect("short", "ann", T0 + timedelta(minutes=20), None)
    h.play("cancelled", "ann", "cid", WIN, start_after=timedelta(minutes=11))  # deals all the same
    h.play("noend", "bob", "cid", WIN)
    h.match_rows[-1]["ended_at"] = None
    matches, _, issues = pipeline(h)
    assert matches.select("match_id", "status", "forfeit_by", "counts_for_ranking").rows() == [
        ("cancelled", "cancelled", None, False),
        ("noend", "played", None, False),
        ("short", "forfeit", "ann", True),
    ]
    assert issues.sort("kind", "keys").select("kind", "detail").rows() == [
        ("ff_deal_player_not_in_match", "16 deal rows of ann for a cancelled match: not scored"),
        ("ff_deal_player_not_in_match", "16 deal rows of cid for a cancelled match: not scored"),
        ("ff_match_not_ended", "started match without end: no Elo, no points"),
    ]
