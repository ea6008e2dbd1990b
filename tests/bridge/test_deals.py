"""Each board's deal, dealer and vulnerability from the event file (bridge.md, Results pages)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from transforms.bridge.deals import board_deals, hands
from transforms.bridge.pbn import parse_pbn
from transforms.bridge.usebio import parse_usebio

DATA = Path(__file__).parent / "data"
DEAL = "N:AKQ2.KQJ5.A3.T98 JT9.A2.KQJ4.7654 8765.T9876.T2.AK 43.43.98765.QJ32"


def lines(extras: list[tuple[int, dict | None]]) -> pl.LazyFrame:
    return pl.LazyFrame(
        {
            "event_id": ["E"] * len(extras),
            "section": [None] * len(extras),
            "board": [b for b, _ in extras],
            "extra": [json.dumps(x) if x is not None else None for _, x in extras],
        },
        schema={
            "event_id": pl.String,
            "section": pl.String,
            "board": pl.Int64,
            "extra": pl.String,
        },
    )


def test_a_board_with_a_deal_has_one_row_given_values_first():
    frame = lines(
        [
            (1, {"deal": DEAL, "dealer": "s", "vulnerable": "Both"}),
            (1, {"deal": DEAL}),
            (2, {"deal": DEAL}),  # dealer and vulnerability from the board number
            (3, None),
            (4, {"reported_ns": 1.0}),  # no deal: no row
        ]
    )
    deals = board_deals(frame).collect().sort("board")
    assert deals.select("board", "dealer", "vulnerable").rows() == [
        (1, "S", "All"),
        (2, "E", "NS"),
    ]
    assert deals["deal"].to_list() == [DEAL, DEAL]


def test_the_readers_keep_the_deal_of_each_board():
    usebio = parse_usebio((DATA / "mitchell.xml").read_bytes(), "m.xml", "M")
    pbn = parse_pbn((DATA / "mitchell.pbn").read_bytes(), "m.pbn", "M")
    for parsed in (usebio, pbn):
        deals = board_deals(parsed.frames["bridge.result"].lazy()).collect()
        assert deals.select("board", "deal", "dealer", "vulnerable").rows() == [
            (1, DEAL, "N", "None")
        ]


def test_hands_start_at_the_given_seat():
    east_first = "E:JT9.A2.KQJ4.7654 8765.T9876.T2.AK 43.43.98765.QJ32 AKQ2.KQJ5.A3.T98"
    assert hands(east_first) == hands(DEAL)
    assert hands(DEAL)["W"] == ["43", "43", "98765", "QJ32"]
    # a hand not given (`-`) is left out; a void is an empty suit
    assert hands("N:AKQJT98765432... - - -") == {"N": ["AKQJT98765432", "", "", ""]}


@pytest.mark.parametrize(
    "text", [None, "", "AKQ2.KQJ5.A3.T98", "X:a b c d", "N:1 2 3 4", "N:A.K.Q J.T.9.8 - -"]
)
def test_what_is_not_a_deal(text):
    assert hands(text) is None
