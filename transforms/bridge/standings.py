"""Standings (bridge.md, "Standings"): each pair's total over its boards, the maximum where
meaningful, the percentage for the matchpoint methods, penalties applied, and the rank (equal
totals share a rank) per event and section. IMP methods total by round first: a positive round
total is capped at cap_base + boards in the round (Butler, Sunday Times, unless `bog`) or
converted to VP (`vp`).

Pairs are grouped by their integer keys (`frames`) and get their names back at the end.
"""

from __future__ import annotations

from fractions import Fraction

import polars as pl

from transforms.bridge.fields import field_expr
from transforms.bridge.frames import hundredths, packed, packed_bounds
from transforms.bridge.options import MP_METHODS, ROUND_CAP_METHODS, BridgeOptions
from transforms.bridge.rounds import PAIR_KEY
from transforms.bridge.vp import add_vp

STANDINGS_SCHEMA: dict[str, pl.DataType] = {
    "month": pl.String(),
    "event_id": pl.String(),
    "section": pl.String(),
    "field": pl.String(),
    "pair": pl.String(),
    "method": pl.String(),
    "total": pl.Float64(),
    "max": pl.Float64(),
    "pct": pl.Float64(),
    "rank": pl.Int64(),
    "imps": pl.Float64(),
    "vp": pl.Float64(),
    "penalties": pl.Float64(),
    "boards": pl.Int64(),
    "names": pl.String(),
    "reported_total": pl.Float64(),
    "reported_pct": pl.Float64(),
    "reported_rank": pl.Int64(),
}

IMP_DIGITS = 12  # IMP sums are rounded to 1e-12: float noise off, fractions kept


def pair_standings(
    pair_boards: pl.LazyFrame,
    scored: pl.DataFrame,
    penalty_totals: pl.LazyFrame,
    opts: BridgeOptions,
    info: pl.DataFrame,
) -> pl.LazyFrame:
    """`bridge_standings` rows from the pair × board rows (with rounds) of the scored lines
    `scored`, the penalties per event and pair (`penalties_x100`) and the events' `info`
    (`ev`, `two_winner`: the fields, `fields.field_expr`)."""
    mp, vp = opts.method in MP_METHODS, opts.converts_to_vp
    # the totals stream over the pair rows (the board results are materialised once, by the
    # caller's collect)
    if mp:
        # a board a method leaves unscored (three_tables) counts neither in the total nor in
        # the maximum, nor as a real score
        totals = pair_boards.group_by(PAIR_KEY).agg(
            pl.col("row").first(),
            *DIRECTIONS,
            pl.len().cast(pl.Int64).alias("boards"),
            pl.col("mp_x100").count().cast(pl.Int64).alias("scored_boards"),
            (pl.col("real") & pl.col("mp_x100").is_not_null()).sum().alias("real_boards"),
            pl.col("mp_x100").sum().alias("total_x100"),
            pl.col("top_x100").max().alias("top_x100"),
        )
        if opts.pct_rounding == "exact":
            totals = totals.join(_exact_totals(pair_boards), on=PAIR_KEY, how="left")
        else:
            totals = totals.with_columns(
                pl.col("total_x100").alias("exact_num"), pl.lit(1, pl.Int64).alias("exact_den")
            )
    else:
        totals = _imp_totals(pair_boards, _round_key(scored), opts, vp)
    totals = _with_pair_names(totals.collect(), scored).join(
        info.select("ev", "two_winner"), on="ev", how="left"
    )
    return _standings(totals.lazy(), penalty_totals, mp, vp, opts.method)


# the side a pair played (its first) and how many sides it played: its field
DIRECTIONS = [
    pl.col("direction").first().alias("direction"),
    pl.col("direction").n_unique().cast(pl.Int64).alias("directions"),
]


def _exact_totals(pair_boards: pl.LazyFrame) -> pl.LazyFrame:
    """Per pair, the sum of its unrounded matchpoints (100 × value = `mp_num` / `mp_den` on each
    board) as one reduced fraction `exact_num` / `exact_den` (option `pct_rounding=exact`).
    The numerators are summed per denominator by Polars; the few denominators of a pair (the
    numbers of real scores of its boards) are added as Python fractions: exact, whatever their
    least common multiple."""
    sums = (
        pair_boards.group_by(PAIR_KEY, "mp_den")
        .agg(pl.col("mp_num").sum())
        .group_by(PAIR_KEY)
        .agg(pl.col("mp_den"), pl.col("mp_num"))
        .collect()
    )
    exact = [
        sum((Fraction(n, d) for n, d in zip(nums, dens, strict=True) if n is not None), Fraction(0))
        for nums, dens in zip(sums["mp_num"], sums["mp_den"], strict=True)
    ]
    return (
        sums.select(PAIR_KEY)
        .with_columns(
            pl.Series("exact_num", [f.numerator for f in exact], dtype=pl.Int64),
            pl.Series("exact_den", [f.denominator for f in exact], dtype=pl.Int64),
        )
        .lazy()
    )


def _round_key(scored: pl.DataFrame) -> pl.Expr:
    """One key per (pair, round) of the pair rows of `scored`. A round number is at most the
    largest of the given rounds, of the board numbers (rounds from boards per round) and of the
    number of lines (rounds counted from opponent changes)."""
    if not scored.schema["ns_key"].is_integer():
        return pl.struct(PAIR_KEY, "round").alias("round_key")
    columns = [pl.col(name) for name in ("ns_key", "ew_key", "round", "board")]
    ns, ew, rounds, boards = packed_bounds(scored, columns)
    pair = (min(ns[0], ew[0]), max(ns[1], ew[1]))
    most = max(rounds[1], boards[1], scored.height)
    return packed([pl.col(PAIR_KEY), pl.col("round")], [pair, (0, most)], "round_key")


def _imp_totals(
    pair_boards: pl.LazyFrame, round_key: pl.Expr, opts: BridgeOptions, vp: bool
) -> pl.LazyFrame:
    """Per pair: the round totals (capped at cap_base + boards, or converted to VP), summed."""
    rounds = pair_boards.group_by(round_key).agg(
        pl.col(PAIR_KEY).first(),
        pl.col("row").first(),
        *DIRECTIONS,
        pl.len().cast(pl.Int64).alias("boards"),
        pl.col("real").sum().alias("real_boards"),
        # averaged Cavendish values are fractions: a float sum carries noise (1e-15) that
        # depends on the summing order; rounded off so totals, caps and VP are exact
        _imp_sum(pl.col("imp")).alias("imps"),
    )
    capped = opts.method in ROUND_CAP_METHODS and not opts.bog and not vp
    if capped:
        rounds = rounds.with_columns(
            pl.min_horizontal("imps", opts.cap_base + pl.col("boards")).alias("imps")
        )
    if vp:
        rounds = add_vp(rounds)
    else:
        rounds = rounds.with_columns(pl.lit(None, pl.Int64).alias("vp_x100"))
    return rounds.group_by(PAIR_KEY).agg(
        pl.col("row").first(),
        pl.col("direction").first(),
        pl.max_horizontal(pl.col("directions").max(), pl.col("direction").n_unique())
        .cast(pl.Int64)
        .alias("directions"),
        pl.col("boards").sum(),
        pl.col("real_boards").sum(),
        _imp_sum(pl.col("imps")).alias("imps"),
        hundredths(pl.col("vp_x100").sum()).alias("vp")
        if vp
        else pl.lit(None, pl.Float64).alias("vp"),
        pl.len().cast(pl.Int64).alias("rounds"),
    )


def _imp_sum(imps: pl.Expr) -> pl.Expr:
    """A sum of IMPs rounded to IMP_DIGITS, a zero always +0.0: noise of -1e-15 rounds to
    -0.0, which would be published (and shown) as "-0.0" by one run and "0.0" by another."""
    total = imps.sum().round(IMP_DIGITS)
    return pl.when(total == 0).then(pl.lit(0.0)).otherwise(total)


def _with_pair_names(totals: pl.DataFrame, scored: pl.DataFrame) -> pl.DataFrame:
    """Totals grouped by a pair's integer key get the pair's names back from one of its rows
    (`row` = 2 × scored line + 1 for the EW side): a gather, much cheaper than carrying the
    texts through the group-bys."""
    rows = totals["row"]
    names = scored.select("event_id", "section", "month", "ev", "ns_pair", "ew_pair")[rows // 2]
    pair = pl.when(rows % 2 == 0).then(pl.col("ns_pair")).otherwise(pl.col("ew_pair"))
    names = names.with_columns(pair.alias("pair")).drop("ns_pair", "ew_pair")
    return pl.concat([totals.drop("row"), names], how="horizontal")


def _standings(
    totals: pl.LazyFrame, penalty_totals: pl.LazyFrame, mp: bool, vp: bool, method: str
) -> pl.LazyFrame:
    """Pairs with at least one real score (a pair with only artificial scores is a phantom or a
    sit-out and is not ranked), ranked within their (event, section, field) by what is
    comparable: matchpoints by total when every pair of the field has the same maximum, else
    by percentage; IMPs (or VPs) by total when every pair played as many boards, else per
    board. Figures equal at the published precision (2 decimals) share a rank."""
    frame = (
        totals.filter(pl.col("real_boards") > 0)
        .join(penalty_totals, on=["event_id", "pair"], how="left")
        .with_columns(pl.col("penalties_x100").fill_null(0))
    )
    frame = frame.with_columns(field_expr(["ev", "section"]).alias("field"))
    group = ["ev", "section", "field"]
    if mp:
        # 100 × the exact total (`exact_num` / `exact_den`: the per-board rounded hundredths
        # over 1 by default), penalties included, rounded once half up
        exact = pl.col("exact_num") + pl.col("penalties_x100") * pl.col("exact_den")
        den = pl.col("exact_den")
        total_x100 = (2 * exact + den) // (2 * den)
        most = pl.col("scored_boards") * pl.col("top_x100")
        # % to 0.01, half up, exactly: 10000·total / max
        pct_x100 = (2 * 10000 * exact + most * den) // (2 * most * den)
        same_max = most.n_unique().over(group) == 1
        key = pl.when(same_max).then(total_x100).otherwise(pct_x100)
        frame = frame.with_columns(
            hundredths(total_x100).alias("total"),
            hundredths(most).alias("max"),
            hundredths(pct_x100).alias("pct"),
            key.rank("min", descending=True).over(group).cast(pl.Int64).alias("rank"),
            pl.lit(None, pl.Float64).alias("imps"),
            pl.lit(None, pl.Float64).alias("vp"),
        )
    else:
        base = pl.col("vp") if vp else pl.col("imps")
        total = base + pl.col("penalties_x100") / 100
        same_boards = pl.col("boards").n_unique().over(group) == 1
        key = pl.when(same_boards).then(total).otherwise(total / pl.col("boards")).round(2)
        frame = frame.with_columns(
            total.alias("total"),
            (20.0 * pl.col("rounds") if vp else pl.lit(None, pl.Float64)).alias("max"),
            pl.lit(None, pl.Float64).alias("pct"),
            key.rank("min", descending=True).over(group).cast(pl.Int64).alias("rank"),
        )
    return frame.select(
        "month",
        "event_id",
        "section",
        "field",
        "pair",
        pl.lit(method).alias("method"),
        "total",
        "max",
        "pct",
        "rank",
        "imps",
        "vp",
        hundredths(pl.col("penalties_x100")).alias("penalties"),
        "boards",
        pl.lit(None, pl.String).alias("names"),
        pl.lit(None, pl.Float64).alias("reported_total"),
        pl.lit(None, pl.Float64).alias("reported_pct"),
        pl.lit(None, pl.Int64).alias("reported_rank"),
    )
