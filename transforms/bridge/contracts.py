"""The duplicate score of a contract (Laws 77/2), vectorised over traveller lines.

`with_score_ns` reads columns of the contract (`4H`, `3NTX`, `6SXX`, `Pass`), the declarer
(N/E/S/W), the result relative to the contract (`=`, `+1`, `-2`) and the board's vulnerability
(None/NS/EW/All) and gives the NS score as an integer; null where the contract or the result
cannot be read (the caller reports those lines).
"""

from __future__ import annotations

import polars as pl

from transforms.record_types import PASSED_OUT

CONTRACT_PATTERN = r"^([1-7])(C|D|H|S|NT|N)(X{0,2})$"


def parse_contract(contract: pl.Expr) -> pl.Expr:
    """Struct (level, strain, doubled, passed) of a contract text; nulls when unreadable."""
    text = contract.str.strip_chars().str.to_uppercase().str.replace_all(r"[\s*]", "")
    text = text.str.replace_all("[!]", "")
    passed = contract.str.strip_chars().str.to_uppercase().is_in(PASSED_OUT)
    return pl.struct(
        text.str.extract(CONTRACT_PATTERN, 1).cast(pl.Int64).alias("level"),
        text.str.extract(CONTRACT_PATTERN, 2).replace({"N": "NT"}).alias("strain"),
        text.str.extract(CONTRACT_PATTERN, 3).str.len_chars().alias("doubled"),
        passed.alias("passed"),
    )


def parse_result(result: pl.Expr) -> pl.Expr:
    """Tricks over (+) or under (-) the contract: `=` -> 0, `+1` -> 1, `-2` -> -2."""
    text = result.str.strip_chars().str.replace(r"^=$", "0").str.replace(r"^\+", "")
    return text.cast(pl.Int64, strict=False)


def declarer_score(
    level: pl.Expr, strain: pl.Expr, doubled: pl.Expr, over: pl.Expr, vulnerable: pl.Expr
) -> pl.Expr:
    """The declaring side's score; `over` < 0 means down that many tricks."""
    trick = pl.when(strain.is_in(["C", "D"])).then(20).otherwise(30)
    mult = pl.when(doubled == 2).then(4).when(doubled == 1).then(2).otherwise(1)
    contract_points = (
        pl.when(strain == "NT").then(40 + 30 * (level - 1)).otherwise(trick * level) * mult
    )
    game = (
        pl.when(contract_points >= 100)
        .then(pl.when(vulnerable).then(500).otherwise(300))
        .otherwise(50)
    )
    slam = (
        pl.when(level == 6)
        .then(pl.when(vulnerable).then(750).otherwise(500))
        .when(level == 7)
        .then(pl.when(vulnerable).then(1500).otherwise(1000))
        .otherwise(0)
    )
    insult = pl.when(doubled == 2).then(100).when(doubled == 1).then(50).otherwise(0)
    overtrick_value = (
        pl.when(doubled == 0)
        .then(trick)
        .otherwise(pl.when(vulnerable).then(200).otherwise(100) * (mult // 2))
    )
    made = contract_points + game + slam + insult + over.clip(lower_bound=0) * overtrick_value

    down = -over
    undoubled_down = down * pl.when(vulnerable).then(100).otherwise(50)
    doubled_down = (
        pl.when(vulnerable)
        .then(200 + 300 * (down - 1))
        .otherwise(
            100 + 200 * (down - 1).clip(upper_bound=2) + 300 * (down - 3).clip(lower_bound=0)
        )
    )
    penalty = pl.when(doubled == 0).then(undoubled_down).otherwise(doubled_down * (mult // 2))
    return pl.when(over >= 0).then(made).otherwise(-penalty)


def with_score_ns(
    frame: pl.LazyFrame | pl.DataFrame,
    contract: str = "contract",
    declarer: str = "declarer",
    result: str = "result",
    vulnerability: str = "vulnerable",
    alias: str = "score_ns",
):
    """`frame` with `alias` = the NS duplicate score of each played (or passed-out) board, null
    when unreadable.

    A tournament has few distinct (contract, declarer, result, vulnerability) lines, so they are
    scored once each and joined back: the string parsing runs on thousands of rows, not
    millions. The scoring itself is built in steps over helper columns (one nested expression
    would repeat the contract parsing in every branch).
    """
    keys = [contract, declarer, result, vulnerability]
    distinct = frame.select(keys).unique()
    scored = score_distinct(distinct, contract, declarer, result, vulnerability, alias)
    if isinstance(frame, pl.DataFrame):
        scored = scored.collect() if isinstance(scored, pl.LazyFrame) else scored
    return frame.join(scored, on=keys, how="left", nulls_equal=True)


def score_distinct(frame, contract, declarer, result, vulnerability, alias):
    parsed = parse_contract(pl.col(contract))
    level, strain, doubled, over = (pl.col(c) for c in ("_level", "_strain", "_doubled", "_over"))
    ns_declares = pl.col(declarer).is_in(["N", "S"])
    ew_declares = pl.col(declarer).is_in(["E", "W"])
    valid = (
        level.is_not_null()
        & over.is_not_null()
        & (ns_declares | ew_declares)
        & (over <= 7 - level)
        & (over >= -(6 + level))
    )
    points = pl.col("_points")
    return (
        frame.with_columns(parsed.alias("_parsed"))
        .with_columns(
            *(
                pl.col("_parsed").struct.field(name).alias(f"_{name}")
                for name in ("level", "strain", "doubled", "passed")
            ),
            parse_result(pl.col(result)).alias("_over"),
            pl.when(ns_declares)
            .then(pl.col(vulnerability).is_in(["NS", "All"]))
            .otherwise(pl.col(vulnerability).is_in(["EW", "All"]))
            .alias("_vulnerable"),
        )
        .with_columns(
            declarer_score(level, strain, doubled, over, pl.col("_vulnerable")).alias("_points")
        )
        .with_columns(
            pl.when(pl.col("_passed"))
            .then(pl.lit(0, pl.Int64))
            .when(valid)
            .then(pl.when(ns_declares).then(points).otherwise(-points))
            .otherwise(pl.lit(None, pl.Int64))
            .cast(pl.Int64)
            .alias(alias)
        )
        .drop(
            "_parsed", "_level", "_strain", "_doubled", "_passed", "_over", "_vulnerable", "_points"
        )
    )
