"""The entry point: options precedence, rounds, penalties, data issues, many events at once."""

from __future__ import annotations

import json
from datetime import date

import polars as pl
import pytest

from tests.bridge.conftest import board_scores, ns_values, results_frame, score
from transforms.bridge.event import score_events
from transforms.bridge.options import BridgeOptions, resolve_options

FIVE = [500, 400, 300, 200, 100]


@pytest.mark.parametrize(("kind", "points"), [("p", -0.4), ("z", -0.8), ("m", -1.2), ("w", 0.8)])
def test_matchpoint_penalties_are_shares_of_the_top(kind, points):
    scores = score("matchpoints", board_scores(1, FIVE), penalties=[{"pair": "3", "kind": kind}])
    row = (
        scores.tables["bridge_standings"].filter(pl.col("pair") == "3").collect().row(0, named=True)
    )
    assert row["penalties"] == points  # top 8: 5 / 10 / 15 / 10 %
    assert row["total"] == pytest.approx(6 + points)
    assert row["pct"] == round((6 + points) / 8 * 100, 2)


def test_given_amount_wins_in_a_matchpoint_event():
    scores = score(
        "matchpoints", board_scores(1, FIVE), penalties=[{"pair": "3", "kind": "p", "amount": 1}]
    )
    assert (
        scores.tables["bridge_standings"]
        .filter(pl.col("pair") == "3")
        .collect()["penalties"]
        .item()
        == -1.0
    )


def test_equal_totals_share_a_rank():
    scores = score("matchpoints", board_scores(1, [420, 420, 100]), movement="howell")
    standings = scores.tables["bridge_standings"].collect()
    ranks = dict(zip(standings["pair"], standings["rank"], strict=True))
    assert (ranks["1"], ranks["3"], ranks["5"]) == (2, 2, 6)  # NS and EW in one ranking
    assert ranks["6"] == 1
    assert standings["field"].is_null().all()


def test_rounds_from_consecutive_boards_against_one_opponent():
    rows = []
    for board, opponent in [(1, "2"), (2, "2"), (3, "4"), (4, "4")]:
        rows += [
            {"board": board, "ns_pair": "1", "ew_pair": opponent, "score_ns": 1000},
            {"board": board, "ns_pair": "5", "ew_pair": "6", "score_ns": 0},
            {"board": board, "ns_pair": "7", "ew_pair": "8", "score_ns": -10},
        ]
    scores = score("butler", rows)
    pair1 = (
        scores.tables["bridge_board_results"].filter(pl.col("pair") == "1").collect().sort("board")
    )
    assert pair1["round"].to_list() == [1, 1, 2, 2]
    # +14 per board: two rounds of 28, each capped at 10 + 2
    total = (
        scores.tables["bridge_standings"].filter(pl.col("pair") == "1").collect()["total"].item()
    )
    assert total == 24.0


def test_options_precedence_defaults_event_caller():
    event = {
        "event_id": "E",
        "scoring": "butler",
        "options": json.dumps({"datum_rounding": "nearest", "bog": True}),
    }
    assert resolve_options(event).datum_rounding == "nearest"
    assert resolve_options(event).bog is True
    resolved = resolve_options(event, {"datum_rounding": "half_even"})
    assert (resolved.datum_rounding, resolved.bog, resolved.method) == ("half_even", True, "butler")
    assert resolve_options(event, {"method": "cavendish"}).method == "cavendish"
    # an override wins even when it names the default back (bog=false over the event's true)
    assert resolve_options(event, {"bog": "false"}).bog is False
    assert resolve_options(event, {"bog": False, "method": None}).method == "butler"


def test_the_score_command_and_the_nightly_share_the_precedence_rule():
    """An override set to the default beats the event's own value in `score_events` itself (the
    nightly's entry point), as it does on the command line."""
    rows = board_scores(1, [1000, 0, -10]) + board_scores(2, [1000, 0, -10])
    capped = score("butler", rows, event_options=json.dumps({"bog": True}), bog=False)
    assert (
        capped.tables["bridge_standings"].filter(pl.col("pair") == "1").collect()["total"].item()
        == 12.0
    )  # one round of two boards, +28 capped at 10 + 2 (bog off); 28.0 with the event's bog


def test_bad_event_options_are_a_data_issue_and_the_other_events_are_scored():
    events = pl.DataFrame(
        {
            "event_id": ["BAD", "GOOD"],
            "date": [date(2026, 10, 31), date(2026, 11, 1)],
            "scoring": ["butler", "butler"],
            "options": [json.dumps({"colour": "red"}), None],
        }
    )
    results = pl.concat(
        [results_frame(board_scores(1, [420, 400, -50]), e) for e in ("BAD", "GOOD")]
    )
    scores = score_events({"bridge.event": events, "bridge.result": results})
    standings = scores.tables["bridge_standings"].collect()
    assert set(standings["event_id"]) == {"GOOD"}
    issues = scores.issues.collect()
    assert issues.select("month", "kind", "keys").rows() == [
        ("2026-10", "bad_event_options", '{"event_id":"BAD"}')
    ]
    assert issues["detail"].item() == "event not scored: unknown bridge option 'colour'"
    with pytest.raises(ValueError, match="unknown bridge option 'color'"):
        score_events({"bridge.event": events, "bridge.result": results}, {"color": "red"})


def test_event_options_json_is_applied():
    rows = board_scores(1, [1000, 0, -10]) + board_scores(2, [1000, 0, -10])
    scores = score("butler", rows, event_options=json.dumps({"bog": True}))
    assert (
        scores.tables["bridge_standings"].filter(pl.col("pair") == "1").collect()["total"].item()
        == 28.0
    )


def test_bad_options_are_user_errors():
    with pytest.raises(ValueError, match="unknown bridge option"):
        BridgeOptions.from_mapping({"colour": "red"})
    with pytest.raises(ValueError, match="datum_rounding"):
        BridgeOptions.from_mapping({"datum_rounding": "up"})
    with pytest.raises(ValueError, match="must be true or false"):
        BridgeOptions.from_mapping({"bog": "maybe"})
    with pytest.raises(ValueError, match="unknown method"):
        BridgeOptions(method="pairs")
    assert BridgeOptions.from_mapping({"out": "2", "vp": "yes", "trim": "0.1"}) == BridgeOptions(
        out=2, vp=True, trim="0.1"
    )


def test_data_issues_and_unusable_lines():
    rows = [
        {"board": 1, "ns_pair": "1", "ew_pair": "2", "score_ns": 425},
        {
            "board": 1,
            "ns_pair": "3",
            "ew_pair": "4",
            "contract": "4S",
            "declarer": "N",
            "result": "=",
            "score_ns": 450,
        },
        {
            "board": 1,
            "ns_pair": "5",
            "ew_pair": "6",
            "contract": "4Q",
            "declarer": "N",
            "result": "=",
        },
        {"board": 1, "ns_pair": "7", "ew_pair": "8", "adjusted": "AVG?"},
        {
            "board": 1,
            "ns_pair": "9",
            "ew_pair": "10",
            "contract": "4S",
            "declarer": "N",
            "result": "-1",
        },
    ]
    scores = score("matchpoints", rows)
    issues = scores.issues.collect().sort("kind")
    assert issues["kind"].to_list() == [
        "score_contradicts_contract",
        "score_not_multiple_of_10",
        "unknown_adjusted_score",
        "unreadable_contract",
    ]
    assert issues["month"].unique().to_list() == ["2026-11"]
    assert json.loads(issues["keys"][0]) == {
        "event_id": "E1",
        "section": "",
        "board": "1",
        "ns_pair": "3",
        "ew_pair": "4",
    }
    # the line with the contradicting score keeps its given 450 and is compared; the unusable
    # lines are left out of the board (they are in data_issues)
    board = (
        scores.tables["bridge_board_results"]
        .filter(pl.col("direction") == "NS")
        .collect()
        .sort("pair")
    )
    assert board["pair"].to_list() == ["3", "9"]
    assert board["score_ns"].to_list() == [450, -50]
    assert board["computed_score"].to_list() == [False, True]
    assert board["mp"].to_list() == [2.0, 0.0]


def test_many_events_with_different_methods_and_sections():
    events = pl.DataFrame(
        {
            "event_id": ["MP", "IMP"],
            "date": [date(2026, 10, 31), date(2026, 11, 1)],
            "scoring": ["matchpoints", "butler"],
            "options": [None, None],
            "boards_per_round": [None, None],
        }
    )
    mp_rows = [r | {"section": "A"} for r in board_scores(1, [420, 400, -50])]
    mp_rows += [r | {"section": "B"} for r in board_scores(1, [100, 200])]
    results = pl.concat(
        [results_frame(mp_rows, "MP"), results_frame(board_scores(1, [420, 400, -50]), "IMP")]
    )
    scores = score_events({"bridge.event": events, "bridge.result": results})
    standings = scores.tables["bridge_standings"].collect().sort("event_id", "section", "pair")
    assert standings.filter(pl.col("event_id") == "MP")["section"].unique().sort().to_list() == [
        "A",
        "B",
    ]
    assert standings.filter(pl.col("event_id") == "IMP")["section"].to_list() == [None] * 6
    months = dict(zip(standings["event_id"], standings["month"], strict=False))
    assert months == {"MP": "2026-10", "IMP": "2026-11"}
    mp_a = (
        scores.tables["bridge_board_results"]
        .filter(
            (pl.col("event_id") == "MP")
            & (pl.col("section") == "A")
            & (pl.col("direction") == "NS")
        )
        .collect()
        .sort("pair")
    )
    assert mp_a["mp"].to_list() == [4.0, 2.0, 0.0]  # N = 3 for the whole event
    imp = ns_values(score("butler", board_scores(1, [420, 400, -50])), "imp")
    assert imp == [1.0, 0.0, -10.0]


def test_empty_and_missing_sections_are_one_group_published_as_null():
    rows = board_scores(1, [420, 400, -50, 100])
    rows = [r | {"section": ""} for r in rows[:2]] + rows[2:]
    scores = score("matchpoints", rows)
    board = scores.tables["bridge_board_results"].collect()
    assert board["section"].null_count() == board.height == 8
    assert ns_values(scores, "mp") == [6.0, 4.0, 0.0, 2.0]  # one group of four
    assert scores.tables["bridge_standings"].collect()["section"].null_count() == 8
