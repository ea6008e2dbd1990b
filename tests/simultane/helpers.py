"""Build bronze `simultane.deal` frames from short literal rows for the tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

from transforms.record_types import RECORD_TYPES

SCHEMA = RECORD_TYPES["simultane.deal"].schema()
T0 = datetime(2026, 11, 3, 20, 0, tzinfo=UTC)


def deal_row(
    player: str,
    made: int | None,
    conceded: int | None,
    *,
    tournament: str = "T1",
    deal_no: int = 1,
    deals: int = 1,
    is_bot: bool = False,
    status: str = "finished",
    start: datetime | None = None,
    seconds: float | None = 60,
    tournament_start: datetime = T0,
    delivery: int = 0,
    line_no: int = 1,
    month: str | None = None,
) -> dict:
    started = start or tournament_start + timedelta(minutes=5 * (deal_no - 1))
    return {
        "tournament_id": tournament,
        "tournament_start": tournament_start,
        "deals_in_tournament": deals,
        "deal_no": deal_no,
        "player_id": player,
        "is_bot": is_bot,
        "started_at": started,
        "finished_at": None if seconds is None else started + timedelta(seconds=seconds),
        "status": status,
        "points_made": made,
        "points_conceded": conceded,
        "contract": None,
        "month": month or f"{tournament_start.year:04d}-{tournament_start.month:02d}",
        "extra": None,
        "source_file": "test.jsonl",
        "line_no": line_no,
        "delivery": delivery,
    }


def bot(made: int, conceded: int, **kw) -> dict:
    return deal_row("BOT", made, conceded, is_bot=True, **kw)


def frame(rows: list[dict]) -> pl.LazyFrame:
    return pl.DataFrame(rows, schema=SCHEMA, orient="row").lazy()
