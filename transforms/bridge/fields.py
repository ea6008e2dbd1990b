"""Fields: the pairs ranked together (spec: bridge.md, Standings).

A one-winner movement (Howell, arrow-switch: pairs sit both ways) has one field; a two-winner
movement (Mitchell: every pair sits one way the whole session) has two, NS and EW, each ranked
on its own. The event says which (`movement`: `mitchell`/`two_winner`/`2` or
`howell`/`one_winner`/`1`...; or `winner_type` 1/2 in its `extra` JSON, as the USEBIO reader
writes USEBIO's `WINNER_TYPE`), else it is inferred per section: two fields when no pair
played both directions. A pair's `field` is its direction in a two-winner event, null in a
one-winner one.
"""

from __future__ import annotations

import json

import polars as pl

TWO_WINNER = ("mitchell", "two_winner", "two-winner", "two winner", "2", "2_winner")
ONE_WINNER = ("howell", "one_winner", "one-winner", "one winner", "1", "1_winner",
              "arrow_switch", "arrow-switch", "arrow switch", "individual")  # fmt: skip


def two_winner(movement: str | None, extra: str | None) -> bool | None:
    """True / False when the event names its kind of movement, None to infer it."""
    for text in (movement, _winner_type(extra)):
        value = (text or "").strip().lower()
        if value in TWO_WINNER:
            return True
        if value in ONE_WINNER:
            return False
    return None


def _winner_type(extra: str | None) -> str | None:
    if not extra or "winner_type" not in extra:
        return None
    try:
        values = json.loads(extra)
    except json.JSONDecodeError:
        return None
    value = values.get("winner_type") if isinstance(values, dict) else None
    return None if value is None else str(value)


def field_expr(group: list[str]) -> pl.Expr:
    """A pair's field from `direction` (the side it played, null if both), `directions` (how
    many it played) and the event's `two_winner` (null: inferred over `group`)."""
    inferred = (pl.col("directions") <= 1).all().over(group)
    split = pl.coalesce(pl.col("two_winner"), inferred)
    return pl.when(split).then(pl.col("direction")).otherwise(pl.lit(None, pl.String))
