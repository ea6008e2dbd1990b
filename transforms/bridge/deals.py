"""The deal of each board, where an event file gives it (PBN `[Deal]`, USEBIO `HANDSET`), with
its dealer and vulnerability (as given, else from the board number: `boards.py`).

The readers keep them in each traveller line's `extra` JSON (`deal`, a PBN deal text such as
`N:AKQ2.KQJ5.A3.T98 JT9.A2.KQJ4.7654 - -`; `dealer` N/E/S/W; `vulnerable`). `board_deals`
gives one row per board; `hands` splits a deal text into the four hands.
"""

from __future__ import annotations

import polars as pl

from transforms.bridge.boards import (
    board_vulnerability_code,
    given_vulnerability_code,
    vulnerability_name,
)

SEATS = "NESW"  # clockwise, the dealer of board 1 first
SUITS = "SHDC"  # the order of a PBN hand's suits
DEALS_SCHEMA: dict[str, pl.DataType] = {
    "event_id": pl.String(),
    "section": pl.String(),
    "board": pl.Int64(),
    "deal": pl.String(),
    "dealer": pl.String(),
    "vulnerable": pl.String(),
}


def board_dealer(board: pl.Expr) -> pl.Expr:
    """N, E, S, W in turn from board 1."""
    return ((board - 1) % 4).replace_strict(range(4), list(SEATS), return_dtype=pl.String)


def board_deals(results: pl.LazyFrame) -> pl.LazyFrame:
    """(event_id, section, board, deal, dealer, vulnerable) of every board of `results`
    (traveller lines with `extra`) whose lines give a deal; the first line's values."""
    extra = pl.col("extra")
    given = (
        results.select("event_id", "section", pl.col("board").cast(pl.Int64), "extra")
        .filter(extra.str.contains('"deal"', literal=True))
        .with_columns(
            extra.str.json_path_match("$.deal").alias("deal"),
            extra.str.json_path_match("$.dealer")
            .str.strip_chars()
            .str.to_uppercase()
            .alias("dealer"),
            extra.str.json_path_match("$.vulnerable").alias("vulnerable"),
        )
        .filter(pl.col("deal").is_not_null())
        .group_by("event_id", "section", "board")
        .agg(pl.col("deal", "dealer", "vulnerable").drop_nulls().first())
    )
    board = pl.col("board")
    return given.select(
        "event_id",
        "section",
        "board",
        "deal",
        pl.when(pl.col("dealer").is_in(list(SEATS)))
        .then(pl.col("dealer"))
        .otherwise(board_dealer(board))
        .alias("dealer"),
        vulnerability_name(
            pl.coalesce(
                given_vulnerability_code(pl.col("vulnerable")), board_vulnerability_code(board)
            )
        ).alias("vulnerable"),
    )


def hands(deal: str | None) -> dict[str, list[str]] | None:
    """{seat: [spades, hearts, diamonds, clubs]} of a PBN deal text (`T` kept for the ten; a
    hand given as `-` is left out); None when the text is not a deal."""
    first, sep, rest = (deal or "").strip().partition(":")
    first = first.strip().upper()
    parts = rest.split()
    if not sep or first not in SEATS or len(parts) != 4:
        return None
    start = SEATS.index(first)
    out: dict[str, list[str]] = {}
    for i, text in enumerate(parts):
        if text == "-":
            continue
        suits = text.upper().split(".")
        if len(suits) != 4:
            return None
        out[SEATS[(start + i) % 4]] = suits
    return out or None
