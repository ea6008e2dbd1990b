"""Calendar of the platform: the month (and later the day) a record belongs to, for every game."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import polars as pl


def month_of(ts: datetime | date, timezone: str) -> str:
    """Calendar month (YYYY-MM) of an instant in the platform's time zone (dates as they are)."""
    if isinstance(ts, datetime):
        ts = ts.astimezone(ZoneInfo(timezone))
    return f"{ts.year:04d}-{ts.month:02d}"


def month_expr(col: str, timezone: str) -> pl.Expr:
    """Vectorised `month_of` for a UTC datetime column."""
    return pl.col(col).dt.convert_time_zone(timezone).dt.strftime("%Y-%m")
