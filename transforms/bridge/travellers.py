"""Traveller lines ready for scoring: the NS score (given or computed from the contract),
the artificial percentages, which lines are real scores, the integer keys and rank positions
of `frames` (one sort of all lines by group and score), and the data issues the lines raise.
"""

from __future__ import annotations

import polars as pl

from transforms.bridge.adjusted import adjusted_pcts
from transforms.bridge.boards import (
    board_vulnerability_code,
    given_vulnerability_code,
    vulnerability_name,
)
from transforms.bridge.contracts import score_distinct
from transforms.bridge.frames import codes, packed, packed_bounds

LINE_KEYS = ["event_id", "section", "board", "ns_pair", "ew_pair"]
# The text of a line's contract and artificial score, as codes (see `frames.codes`).
TEXT_CODES = {"contract": "contract", "declarer": "declarer", "result": "result",
              "adjusted": "adjusted"}  # fmt: skip


def traveller_lines(results: pl.DataFrame) -> pl.DataFrame:
    """Bronze `bridge.result` rows carrying `ev` (an integer number of their event), with
    section "" -> null, `line_id` (the row number), `contract_score`, `computed_score`,
    `adj_ns`, `adj_ew`, `real`, `usable`, the final `score_ns`, and the keys and positions of
    `frames`: `gid`, `ns_key`, `ew_key`, `m`, `below`, `ties`, `order`. Rows stay in their
    order."""
    names = results.columns
    # a given vulnerability (a `vulnerable` column, or `vulnerable` in the extra JSON, as the
    # PBN reader writes it) wins over the board-number cycle
    given_vul = given_vulnerability_code(
        pl.col("vulnerable")
        if "vulnerable" in names
        else pl.col("extra").str.json_path_match("$.vulnerable")
        if "extra" in names
        else pl.lit(None, pl.String)
    )
    if "round" not in names:
        results = results.with_columns(pl.lit(None, pl.Int64).alias("round"))
    if results["section"].eq("").any():  # no section: null (a fill of "" would copy them all)
        results = results.with_columns(
            pl.when(pl.col("section") != "").then(pl.col("section")).alias("section")
        )
    lines = results.drop("vulnerable", strict=False).with_columns(
        pl.coalesce(given_vul, board_vulnerability_code(pl.col("board"))).fill_null(0).alias("vul"),
        codes("section", "section").alias("sec"),
        codes("ns_pair", "pair").alias("ns_code"),
        codes("ew_pair", "pair").alias("ew_code"),
        *[codes(column, kind).alias(f"{column}_code") for column, kind in TEXT_CODES.items()],
    )
    lines = _with_scores(lines)
    return _with_positions(lines)


def _with_scores(lines: pl.DataFrame) -> pl.DataFrame:
    """A tournament has few distinct (contract, declarer, result, vulnerability, adjusted)
    lines: their text is parsed and scored once each and joined back on one integer key."""
    parts = [pl.col(f"{column}_code") for column in TEXT_CODES] + [pl.col("vul")]
    key = packed(parts, packed_bounds(lines, parts), "text_key")
    lines = lines.with_columns(key).drop(*[f"{column}_code" for column in TEXT_CODES])
    adj_ns, adj_ew = adjusted_pcts(pl.col("adjusted"))
    distinct = (
        lines.select("text_key", "contract", "declarer", "result", "adjusted", "vul")
        .unique("text_key", keep="any")
        .with_columns(vulnerability_name(pl.col("vul")).alias("vulnerable"))
        .pipe(score_distinct, "contract", "declarer", "result", "vulnerable", "contract_score")
        .select(
            "text_key",
            pl.when(pl.col("contract").is_not_null()).then(pl.col("contract_score")),
            adj_ns.alias("adj_ns"),
            adj_ew.alias("adj_ew"),
        )
    )
    return (
        lines.join(distinct, on="text_key", how="left")
        .drop("text_key", "vul")
        .with_columns(
            (pl.col("score_ns").is_null() & pl.col("contract_score").is_not_null()).alias(
                "computed_score"
            ),
            pl.coalesce("score_ns", "contract_score").alias("score_ns"),
        )
        .with_columns(
            (
                pl.col("adjusted").is_null()
                & pl.col("score_ns").is_not_null()
                & (pl.col("score_ns") % 10 == 0)
            ).alias("real"),
        )
        .with_columns(
            # unusable lines (unreadable contract, unknown artificial text) are kept for the
            # issues but are neither real nor artificial
            (pl.col("real") | pl.col("adj_ns").is_not_null()).alias("usable"),
        )
    )


def _with_positions(lines: pl.DataFrame) -> pl.DataFrame:
    """One sort by (event, section, board, real score; other lines last), then every rank the
    methods need as differences of row positions (eager: the order is kept)."""
    real = pl.when(pl.col("real")).then(pl.col("score_ns"))
    lo, hi = lines.select(real.min().alias("lo"), real.max().alias("hi")).row(0)
    lo, hi = lo or 0, hi or 0
    rank_part = pl.when(pl.col("real")).then(pl.col("score_ns") - lo).otherwise(hi - lo + 1)
    group = [pl.col("ev"), pl.col("sec"), pl.col("board")]
    sort_key = packed(
        [*group, rank_part], [*packed_bounds(lines, group), (0, hi - lo + 1)], "sort_key"
    )
    # NS and EW pairs share one key space: the pair code's bounds cover both columns
    ns, ew = packed_bounds(lines, [pl.col("ns_code"), pl.col("ew_code")])
    pair_bounds = [*packed_bounds(lines, group[:2]), (min(ns[0], ew[0]), max(ns[1], ew[1]))]
    index = pl.int_range(pl.len(), dtype=pl.Int64)
    first_of_group = pl.col("gid").ne_missing(pl.col("gid").shift(1))
    first_of_tie = first_of_group | real.ne_missing(real.shift(1))
    last_of_tie = first_of_tie.shift(-1, fill_value=True)
    group_start = pl.when(first_of_group).then(index).forward_fill()
    tie_start = pl.when(first_of_tie).then(index).forward_fill()
    tie_end = pl.when(last_of_tie).then(index).backward_fill()
    lines = lines.with_columns(
        index.cast(pl.UInt32).alias("line_id"),
        sort_key,
        packed([*group[:2], pl.col("ns_code")], pair_bounds, "ns_key"),
        packed([*group[:2], pl.col("ew_code")], pair_bounds, "ew_key"),
    )
    # only the few columns the positions need are sorted, and put back in line order
    positions = (
        lines.select("line_id", "sort_key", "ev", "sec", "board", "real", "score_ns")
        .sort("sort_key")
        .with_columns(pl.struct(*group).rle_id().cast(pl.Int64).alias("gid"))
        .select(
            "line_id",
            "gid",
            real.count().over("gid").cast(pl.Int64).alias("m"),
            pl.when(pl.col("real")).then(tie_start - group_start).alias("below"),
            pl.when(pl.col("real")).then(tie_end - tie_start + 1).alias("ties"),
            pl.when(pl.col("real")).then(index - group_start + 1).alias("order"),
        )
        .sort("line_id")
        .drop("line_id")
    )
    return pl.concat(
        [lines.drop("sort_key", "sec", "ns_code", "ew_code"), positions], how="horizontal"
    )


def traveller_issues(lines: pl.LazyFrame) -> pl.LazyFrame:
    """Rows flagged on traveller lines: (event_id, section, board, ns_pair, ew_pair, kind,
    detail). Flagged lines are not compared (except a contradicting given score, which is
    kept: the given score wins, as the director entered it)."""
    given = pl.col("score_ns")
    checks = [
        (
            "score_contradicts_contract",
            pl.col("contract_score").is_not_null()
            & ~pl.col("computed_score")
            & (given != pl.col("contract_score")),
            pl.format(
                "score_ns {} but {} {} {} scores {}",
                given,
                pl.col("contract"),
                pl.col("declarer"),
                pl.col("result"),
                pl.col("contract_score"),
            ),
        ),
        (
            "score_not_multiple_of_10",
            pl.col("adjusted").is_null() & given.is_not_null() & (given % 10 != 0),
            pl.format("score_ns {} is not a multiple of 10", given),
        ),
        (
            "unreadable_contract",
            pl.col("adjusted").is_null() & given.is_null() & pl.col("contract").is_not_null(),
            pl.format(
                "cannot score contract {} {} {}",
                pl.col("contract"),
                pl.col("declarer").fill_null("-"),
                pl.col("result").fill_null("-"),
            ),
        ),
        (
            "unknown_adjusted_score",
            pl.col("adjusted").is_not_null() & pl.col("adj_ns").is_null(),
            pl.format("artificial score {} not understood", pl.col("adjusted")),
        ),
    ]
    flagged = lines.filter(
        pl.any_horizontal([flag for _, flag, _ in checks])
    ).select(
        *LINE_KEYS[:1],
        pl.col("section").fill_null(""),  # keys name a line without section with ""
        *LINE_KEYS[2:],
        *[flag.alias(f"_is_{kind}") for kind, flag, _ in checks],
        *[detail.alias(f"_detail_{kind}") for kind, _, detail in checks],
    )
    return pl.concat(
        [
            flagged.filter(pl.col(f"_is_{kind}")).select(
                *LINE_KEYS, pl.lit(kind).alias("kind"), pl.col(f"_detail_{kind}").alias("detail")
            )
            for kind, _, _ in checks
        ]
    )
