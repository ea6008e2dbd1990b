"""Method `three_tables`: Marek Peszke's table for a 3-table tournament (top 16).

NS scores ordered A (best for NS), B, C; the differences A−B and B−C fall in buckets and the
table gives NS points for A, B, C; EW gets the complement to 16. With an artificial score (or,
by the Decision `missing_as_average`, a missing table), B is taken as A − ⌊(A−C)/2⌋₁₀ and the
points are read on the diagonal. Values are hundredths (`mp_ns_x100`) like `matchpoints`.

A board the table cannot score — more than three real scores (the spec has no rule for them),
or fewer with no artificial one when `missing_as_average` is off — is left unscored (null
values, not a silent 0) and reported by `unscored_boards`; the other boards are scored.
"""

from __future__ import annotations

import polars as pl

from transforms.bridge.adjusted import mp_sides
from transforms.bridge.frames import GROUP, real_score

TOP = 16
# PESZKE[a−b bucket][b−c bucket] = NS points for A, B, C.
PESZKE = (
    ((8, 8, 8), (9, 9, 6), (10, 10, 4), (11, 11, 2), (12, 12, 0)),
    ((10, 7, 7), (10, 8, 6), (11, 9, 4), (12, 10, 2), (13, 11, 0)),
    ((12, 6, 6), (12, 7, 5), (12, 8, 4), (13, 9, 2), (14, 10, 0)),
    ((14, 5, 5), (14, 6, 4), (14, 7, 3), (14, 8, 2), (15, 9, 0)),
    ((16, 4, 4), (16, 5, 3), (16, 6, 2), (16, 7, 1), (16, 8, 0)),
)
# Lower bounds of the buckets 0–10, 20–100, 110–210, 220–440, 450+.
BUCKET_FROM = (20, 110, 220, 450)


def bucket(difference: pl.Expr) -> pl.Expr:
    return pl.sum_horizontal([(difference >= b).cast(pl.Int64) for b in BUCKET_FROM])


def _cell(ab: pl.Expr, bc: pl.Expr, position: pl.Expr) -> pl.Expr:
    keys = [a * 15 + b * 3 + p for a in range(5) for b in range(5) for p in range(3)]
    values = [PESZKE[a][b][p] for a in range(5) for b in range(5) for p in range(3)]
    # total: a key out of the table (a board with more than 3 scores) gives null, and is never
    # used (`_scored`)
    return (ab * 15 + bc * 3 + position).replace_strict(
        keys, values, default=None, return_dtype=pl.Int64
    )


def _scored(m: pl.Expr, artificial: pl.Expr, missing_as_average: bool) -> pl.Expr:
    """Whether the table scores a board of m real scores and `artificial` artificial ones."""
    with_average = (m < 3) & ((artificial > 0) | pl.lit(missing_as_average))
    return (m == 3) | with_average


def three_tables(lines: pl.LazyFrame, missing_as_average: bool = True) -> pl.LazyFrame:
    """Adds `mp_ns_x100`, `mp_ew_x100`, `top_x100` (= 1600) to each traveller line."""
    real = real_score()
    a, c, m = pl.col("a"), pl.col("c"), pl.col("m")
    b = pl.when(m == 3).then(pl.col("total") - a - c).otherwise(a - ((a - c) // 20) * 10)
    ab = bucket(a - b)
    bc = pl.when(m == 3).then(bucket(b - c)).otherwise(ab)  # the diagonal
    # position 0 = A, 1 = B, 2 = C; with an average the two real scores are A and C.
    position = pl.when(m == 3).then(pl.col("order") - 1).otherwise(2 * (pl.col("order") - 1))
    points = _cell(ab, bc, position)
    real_ns = pl.when(_scored(m, pl.col("artificial"), missing_as_average)).then(100 * points)
    return (
        lines.with_columns(
            real.max().over(GROUP).alias("a"),
            real.min().over(GROUP).alias("c"),
            real.sum().over(GROUP).alias("total"),
            (pl.col("m") - pl.col("order") + 1).alias("order"),  # 1 = A, the best for NS
            _artificial().over(GROUP).alias("artificial"),
        )
        .with_columns(mp_sides(real_ns, 100 * TOP - real_ns, TOP))
        .drop("a", "c", "total", "artificial")
    )


def _artificial() -> pl.Expr:
    return (~pl.col("real")).sum().cast(pl.Int64)


def unscored_boards(lines: pl.LazyFrame, missing_as_average: bool) -> pl.LazyFrame:
    """(event_id, section, board, kind, detail) of each board of traveller `lines` that
    `three_tables` leaves unscored, with the reason."""
    m, artificial = pl.col("m"), pl.col("artificial")
    boards = lines.group_by(GROUP).agg(
        pl.col("event_id", "section", "board", "m").first(), _artificial().alias("artificial")
    )
    detail = (
        pl.when(m > 3)
        .then(pl.format("board {}: {} real scores, the 3-table scale compares 3", "board", m))
        .otherwise(
            pl.format("board {}: {} real scores and no artificial one", "board", m)
            + pl.lit(" (missing_as_average is off)")
        )
    )
    return boards.filter((m > 0) & ~_scored(m, artificial, missing_as_average)).select(
        "event_id",
        pl.col("section").fill_null(""),
        "board",
        pl.lit("three_tables_board_not_scored").alias("kind"),
        (detail + pl.lit(": not scored")).alias("detail"),
    )
