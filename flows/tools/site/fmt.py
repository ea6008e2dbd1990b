"""Values as the pages show them, computed on whole columns (no Python per value).

Numbers get a fixed number of decimals and the language's decimal mark; a missing value shows
as an en dash. Timestamps are shown in the platform's time zone.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import polars as pl

from flows.tools.site.labels import DECIMAL
from flows.tools.site.markup import Keyed

MISSING = "–"


def num(expr: pl.Expr, decimals: int, lang: str) -> pl.Expr:
    """`expr` rounded half away from zero to `decimals`, as text ("97,5" in French)."""
    return num_scaled(scaled(expr, decimals), decimals, lang)


def scaled(expr: pl.Expr, decimals: int) -> pl.Expr:
    """`expr` × 10^`decimals` rounded half away from zero, as an integer (null: missing or
    not a number) — what `num` shows."""
    value = expr.cast(pl.Float64).fill_nan(None) * 10**decimals
    return value.round(0, mode="half_away_from_zero").cast(pl.Int64, strict=False)


def num_scaled(scaled: pl.Expr, decimals: int, lang: str) -> pl.Expr:
    """`num` of a value already `scaled`."""
    scale = 10**decimals
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
    return pl.when(scaled.is_null()).then(pl.lit(MISSING)).otherwise(text)


def number(expr: pl.Expr, decimals: int, lang: str) -> Keyed:
    """`num` as a part of a row's markup (`markup.Keyed`): shown once per distinct rounded
    value, not once per row."""
    return Keyed.of(lambda k: num_scaled(k, decimals, lang), scaled(expr, decimals))


def minute(expr: pl.Expr, timezone: str, pattern: str = "%Y-%m-%d %H:%M") -> Keyed:
    """`local_time` (to the minute, or the local day with a pattern of days) as a part of a
    row's markup, shown once per distinct minute or day."""
    if "%H" in pattern or "%M" in pattern:
        return Keyed.of(
            lambda k: local_time(
                (k * 60_000_000).cast(pl.Datetime("us", "UTC")), timezone, pattern
            ),
            expr.dt.epoch("s").floordiv(60),
        )
    local_day = expr.dt.convert_time_zone(timezone).dt.date().cast(pl.Int32)
    return Keyed.of(
        lambda k: k.cast(pl.Int32).cast(pl.Date).dt.strftime(pattern).fill_null(MISSING),
        local_day,
    )


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
    """Text made safe inside HTML/SVG markup built from columns (ids come from raw logs); the
    same entities as the Jinja2 templates' (markupsafe) escaping."""
    return expr.cast(pl.String).str.replace_many(
        ["&", "<", ">", '"', "'"], ["&amp;", "&lt;", "&gt;", "&#34;", "&#39;"]
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
