"""Contract scoring (Laws 77/2) and vulnerability from the board number."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bridge.conftest import score
from transforms.bridge.boards import board_vulnerability
from transforms.bridge.contracts import (
    PASSED_OUT,
    contract_text,
    is_passed_out,
    normal_contract,
    score_distinct,
)


def _score(contract: str, declarer: str, result: str, vulnerability: str) -> int | None:
    """The scorer's own function (`travellers` runs it on the distinct lines)."""
    frame = pl.DataFrame({"c": [contract], "d": [declarer], "r": [result], "v": [vulnerability]})
    return score_distinct(frame, "c", "d", "r", "v", "score_ns")["score_ns"][0]


@pytest.mark.parametrize(
    ("contract", "declarer", "result", "vul", "expected"),
    [
        # part scores
        ("2H", "N", "=", "None", 110),
        ("1NT", "S", "+1", "None", 120),
        ("3D", "N", "=", "All", 110),
        # games
        ("3NT", "N", "=", "None", 400),
        ("3NT", "N", "=", "NS", 600),
        ("4S", "S", "+1", "All", 650),
        ("5C", "N", "=", "None", 400),
        # slams
        ("6S", "N", "=", "NS", 1430),
        ("6NT", "S", "=", "None", 990),
        ("7C", "N", "=", "None", 1440),
        ("7NT", "N", "=", "All", 2220),
        # doubled / redoubled made, with overtricks
        ("1NTX", "N", "=", "None", 180),
        ("1NTX", "N", "+1", "None", 280),
        ("1NTX", "N", "+1", "NS", 380),
        ("2HX", "N", "=", "None", 470),
        ("1NTXX", "N", "=", "None", 560),
        ("2CXX", "N", "+1", "NS", 1160),
        ("1CXX", "N", "+2", "None", 630),
        # undertricks undoubled
        ("3NT", "N", "-2", "None", -100),
        ("3NT", "N", "-2", "NS", -200),
        # doubled non-vul: 100, 300, 500, then +300
        ("4SX", "N", "-1", "None", -100),
        ("4SX", "N", "-2", "None", -300),
        ("4SX", "N", "-3", "None", -500),
        ("4SX", "N", "-4", "None", -800),
        # doubled vul: 200, 500, then +300
        ("4SX", "N", "-1", "NS", -200),
        ("4SX", "N", "-2", "NS", -500),
        ("4SX", "N", "-3", "NS", -800),
        # redoubled = 2 × doubled
        ("4SXX", "N", "-3", "None", -1000),
        ("4SXX", "N", "-2", "All", -1000),
        # EW declarer: NS score is the negative; EW vulnerability used
        ("4H", "E", "=", "EW", -620),
        ("4H", "W", "=", "NS", -420),
        ("3NTX", "W", "-3", "None", 500),
        ("5CX", "N", "-3", "None", -500),  # PCH1003 board 1, first table
        # passed out, every spelling
        ("Pass", "", "", "All", 0),
        *[(spelling, "", "", "None", 0) for spelling in PASSED_OUT],
        (" passed out ", "", "", "None", 0),
        # spellings: lower case, spaces, alerts, `*` for a double
        ("4s", "N", "=", "None", 420),
        ("3 NT", "S", "=", "None", 400),
        ("4S!", "N", "=", "None", 420),
        ("4S*", "N", "-1", "None", -100),
        ("4S**", "N", "-1", "None", -200),
        # unreadable
        ("2H", "N", "+7", "None", None),
        ("8S", "N", "=", "None", None),
        ("4S", "X", "=", "None", None),
    ],
)
def test_contract_scores(contract, declarer, result, vul, expected):
    assert _score(contract, declarer, result, vul) == expected


CYCLE = ["None", "NS", "EW", "All", "NS", "EW", "All", "None",
         "EW", "All", "None", "NS", "All", "None", "NS", "EW"]  # fmt: skip


def test_vulnerability_cycle():
    boards = pl.DataFrame({"board": [*range(1, 34), 0, -15, None]})
    out = boards.select(board_vulnerability(pl.col("board")))["board"].to_list()
    assert out == CYCLE * 2 + ["None", "EW", "None", None]  # boards 33, 0, -15, null


def test_the_scorer_takes_the_vulnerability_from_the_board_number_unless_given():
    """3NT= by N scores 600 when NS is vulnerable, else 400; by E -600 when EW is."""
    rows = [
        {
            "board": board,
            "ns_pair": str(2 * k + 1),
            "ew_pair": str(2 * k + 2),
            "contract": "3NT",
            "declarer": declarer,
            "result": "=",
        }
        for board in range(1, 18)
        for k, declarer in enumerate(("N", "E"))
    ]
    given = {"board": 18, "ns_pair": "1", "ew_pair": "2", "contract": "3NT", "declarer": "N"}
    given |= {"result": "=", "extra": '{"vulnerable": " both "}'}  # board 18 is NS by the cycle
    scores = (
        score("butler", [*rows, given])
        .tables["bridge_board_results"]
        .filter(pl.col("direction") == "NS")
    )
    got = scores.collect().sort("board", "pair")["score_ns"].to_list()
    expected = []
    for board in range(1, 18):
        vul = CYCLE[(board - 1) % 16]
        expected += [600 if vul in ("NS", "All") else 400, -600 if vul in ("EW", "All") else -400]
    assert got == [*expected, 600]


CONTRACT_CHARS = st.sampled_from(list("1234567CDHSNTXPAx*! shn") + ["NT", "Pass", "\t"])


@settings(deadline=None)
@given(st.lists(CONTRACT_CHARS, max_size=6).map("".join))
def test_the_pbn_reader_and_the_scorer_read_a_contract_alike(text):
    """`normal_contract` (one text, PBN reader) and `contract_text` (a column, scorer) follow
    the same spelling rules: the text the reader stores is read the same by the scorer."""
    frame = pl.DataFrame({"c": [text]}, schema={"c": pl.String})
    column, passed = frame.select(
        contract_text(pl.col("c")).alias("text"), is_passed_out(pl.col("c")).alias("passed")
    ).row(0)
    stored = normal_contract(text)
    if stored is None:
        assert text.strip() in ("", "-")
    elif passed:
        assert stored == "Pass"
    else:
        assert stored == column
