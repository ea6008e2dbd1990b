"""Values as the pages show them, computed on whole columns (no Python per value).

Numbers get a fixed number of decimals and the language's decimal mark; a missing value shows
as an en dash. Timestamps are shown in the platform's time zone.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import polars as pl

from flows.site.labels import DECIMAL

MISSING = "–"


def num(expr: pl.Expr, decimals: int, lang: str) -> pl.Expr:
    """`expr` rounded half away from zero to `decimals`, as text ("97,5" in French)."""
    scale = 10**decimals
    scaled = (expr.cast(pl.Float64) * scale).round(0, mode="half_away_from_zero").cast(pl.Int64)
    magnitude = scaled.abs()
    sign = pl.when(scaled < 0).then(pl.lit("-")).otherwise(pl.lit(""))
    if decimals == 0:
        text = pl.concat_str(sign, magnitude.cast(pl.String))
    else:
        text = pl.concat_str(
            sign,
            (magnitude // scale).cast(pl.String),
            pl.lit(DECIMAL[lang]),
            (magnitude % scale).cast(pl.String).str.zfill(decimals),
        )
    missing = expr.is_null() | expr.cast(pl.Float64).is_nan()
    return pl.when(missing).then(pl.lit(MISSING)).otherwise(text)


def text(expr: pl.Expr) -> pl.Expr:
    """Any column as text, missing as an en dash."""
    return expr.cast(pl.String).fill_null(MISSING)


def local_time(expr: pl.Expr, timezone: str, pattern: str = "%Y-%m-%d %H:%M") -> pl.Expr:
    """A UTC timestamp column shown in the platform's time zone."""
    return expr.dt.convert_time_zone(timezone).dt.strftime(pattern).fill_null(MISSING)


def yes_no(expr: pl.Expr, words: dict) -> pl.Expr:
    return (
        pl.when(expr.is_null())
        .then(pl.lit(MISSING))
        .when(expr)
        .then(pl.lit(words["yes"]))
        .otherwise(pl.lit(words["no"]))
    )


def mapped(expr: pl.Expr, mapping: dict) -> pl.Expr:
    """A code column (status, type…) shown with the language's words; unknown codes as is."""
    return expr.replace_strict(mapping, default=expr, return_dtype=pl.String).fill_null(MISSING)


def escape(expr: pl.Expr) -> pl.Expr:
    """Text made safe inside HTML/SVG markup built from columns (ids come from raw logs)."""
    return (
        expr.cast(pl.String)
        .str.replace_all("&", "&amp;", literal=True)
        .str.replace_all("<", "&lt;", literal=True)
        .str.replace_all(">", "&gt;", literal=True)
        .str.replace_all('"', "&quot;", literal=True)
        .str.replace_all("'", "&#39;", literal=True)
    )


def num_value(value, decimals: int, lang: str) -> str:
    """`num` of one value (the facts at the top of a page): the same rounding, in Python."""
    if value is None or value != value:
        return MISSING
    scale = 10**decimals
    scaled = int(Decimal(repr(float(value) * scale)).to_integral_value(ROUND_HALF_UP))
    sign = "-" if scaled < 0 else ""
    whole, frac = divmod(abs(scaled), scale)
    return f"{sign}{whole}" + (f"{DECIMAL[lang]}{frac:0{decimals}d}" if decimals else "")
