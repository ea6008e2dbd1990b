"""Artificial (adjusted) scores such as `A60/A40`, `A50`, `A40/A40`, `A+/A-`, `A6040`.

They never take part in comparisons. Each side gets a percentage: `A60/A40` gives NS 60 and
EW 40; a single `A<p>` gives NS p and EW the complement 100 - p (so `A50` is a plain average);
`A+` = 60, `A=` = 50, `A-` = 40; USEBIO's four digits are NS % then EW % (`A5050`, `A6040`,
`A4060`, `A6060`, `A4040`). Matchpoint methods give that percentage of the top; IMP methods
give (pct - 50) / 10 × `adjusted_imps_per_10pct` IMPs (Decision, Law 86A: 60 % = +3).
"""

from __future__ import annotations

import polars as pl

from transforms.bridge.imps import opposite

ADJUSTED_PATTERN = r"^A(\d{1,3})(?:/A?(\d{1,3}))?$"
USEBIO_PATTERN = r"^A(\d{2})(\d{2})$"  # NS % then EW %, two digits each


def adjusted_pcts(adjusted: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """(NS %, EW %) as Int64 expressions; null when the text is not an artificial score."""
    text = (
        adjusted.str.strip_chars()
        .str.to_uppercase()
        .str.replace_all(r"\s", "")
        .str.replace_all(r"A\+", "A60")
        .str.replace_all(r"A=", "A50")
        .str.replace_all(r"A-", "A40")
    )
    ns = pl.coalesce(
        text.str.extract(ADJUSTED_PATTERN, 1), text.str.extract(USEBIO_PATTERN, 1)
    ).cast(pl.Int64)
    ew_given = pl.coalesce(
        text.str.extract(ADJUSTED_PATTERN, 2), text.str.extract(USEBIO_PATTERN, 2)
    ).cast(pl.Int64)
    ew = pl.when(ew_given.is_not_null()).then(ew_given).otherwise(100 - ns)
    return ns, ew


def adjusted_imps(pct: pl.Expr, imps_per_10pct: float) -> pl.Expr:
    return (pct - 50).cast(pl.Float64) / 10 * imps_per_10pct


def imp_sides(real_imps: pl.Expr, imps_per_10pct: float) -> list[pl.Expr]:
    """`imp_ns`, `imp_ew` of each line: a real score's IMPs and their opposite, or the IMPs of
    each side's artificial percentage (every IMP method shares this)."""
    real = pl.col("real")
    return [
        pl.when(real)
        .then(real_imps.cast(pl.Float64))
        .otherwise(adjusted_imps(pl.col("adj_ns"), imps_per_10pct))
        .alias("imp_ns"),
        pl.when(real)
        .then(opposite(real_imps))
        .otherwise(adjusted_imps(pl.col("adj_ew"), imps_per_10pct))
        .alias("imp_ew"),
    ]


def mp_sides(real_ns: pl.Expr, real_ew: pl.Expr, top: pl.Expr | int) -> list[pl.Expr]:
    """`mp_ns_x100`, `mp_ew_x100`, `top_x100` of each line: a real score's matchpoints (in
    hundredths), or each side's artificial percentage of the top (every matchpoint method
    shares this)."""
    real = pl.col("real")
    top = pl.lit(top, pl.Int64) if isinstance(top, int) else top
    return [
        pl.when(real)
        .then(real_ns)
        .otherwise(pl.col("adj_ns") * top)
        .cast(pl.Int64)
        .alias("mp_ns_x100"),
        pl.when(real)
        .then(real_ew)
        .otherwise(pl.col("adj_ew") * top)
        .cast(pl.Int64)
        .alias("mp_ew_x100"),
        (100 * top).cast(pl.Int64).alias("top_x100"),
    ]
