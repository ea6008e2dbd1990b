"""Traveller lines ready for scoring: the NS score (given or computed from the contract),
the artificial percentages, which lines are real scores, and the data issues they raise.
"""

from __future__ import annotations

import polars as pl

from transforms.bridge.adjusted import adjusted_pcts
from transforms.bridge.boards import board_vulnerability, canonical_vulnerability
from transforms.bridge.contracts import with_score_ns

LINE_KEYS = ["event_id", "section", "board", "ns_pair", "ew_pair"]
DISTINCT_KEYS = ["contract", "declarer", "result", "vulnerable", "adjusted"]


def traveller_lines(results: pl.LazyFrame) -> pl.LazyFrame:
    """Adds `line_id`, `vulnerable`, `contract_score`, `computed_score`, `adj_ns`, `adj_ew`,
    `real` and the final `score_ns` to bronze `bridge.result` rows (section null -> "")."""
    names = results.collect_schema().names()
    # a given vulnerability (a `vulnerable` column, or `vulnerable` in the extra JSON, as the
    # PBN reader writes it) wins over the board-number cycle
    given_vul = canonical_vulnerability(
        pl.col("vulnerable")
        if "vulnerable" in names
        else pl.col("extra").str.json_path_match("$.vulnerable")
        if "extra" in names
        else pl.lit(None, pl.String)
    )
    if "round" not in names:
        results = results.with_columns(pl.lit(None, pl.Int64).alias("round"))
    adj_ns, adj_ew = adjusted_pcts(pl.col("adjusted"))
    lines = results.with_columns(
        pl.col("section").fill_null(""),
        pl.coalesce(given_vul, board_vulnerability(pl.col("board"))).alias("vulnerable"),
    ).with_row_index("line_id")
    # A tournament has few distinct (contract, declarer, result, vulnerability, adjusted)
    # lines: their text is parsed and scored once each and joined back.
    distinct = (
        lines.select(DISTINCT_KEYS)
        .unique()
        .pipe(with_score_ns, alias="contract_score")
        .with_columns(
            pl.when(pl.col("contract").is_not_null()).then(pl.col("contract_score")),
            adj_ns.alias("adj_ns"),
            adj_ew.alias("adj_ew"),
        )
    )
    return (
        lines.join(distinct, on=DISTINCT_KEYS, how="left", nulls_equal=True)
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
    flagged = lines.filter(pl.any_horizontal([flag for _, flag, _ in checks])).select(
        *LINE_KEYS,
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
