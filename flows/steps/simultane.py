"""Simultané steps: deal and tournament results of one bronze partition; the history tables
(blocks, % actuel, monthly and daily Indice/Victoire) of every month from a first one.

What depends on what: deal- and tournament-level results of a partition depend only on its
bronze (a tournament's rows share its start, hence its partition); a player's 20-deal blocks
and % actuel run over their whole history, so new deals change blocks ending at or after them;
Indice and Victoire are per month. A rebuild of partitions {P…} therefore recomputes their
deal-level results, and the history tables of every month from min(P…) − 1 on.
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from flows.steps.context import RAW, StepContext, buckets, compact_bronze, in_bucket, resolved
from flows.steps.isolate import failure_issues, isolated
from transforms.calendar import day_expr, end_of_day, month_of
from transforms.issues import DATA_ISSUES_SCHEMA

TOURNAMENT = "tournament_id"


def month_step(ctx: StepContext, part: str) -> list[dict]:
    """Deal and tournament results of one partition, in tournament batches of ≤ batch_rows."""
    from transforms.simultane.scoring import tournament_month
    from transforms.simultane.tournaments import score_tournaments

    opts = ctx.settings.simultane_options()
    tx = ctx.transaction()
    raw = ctx.bronze("simultane.deal", [part]).with_columns(tournament_month(opts).alias("month"))
    count = buckets(raw.select(pl.len()).collect().item(), ctx.settings.batch_rows)
    key = f"{RAW}={part}"
    issue_parts = []
    for bucket in range(count):
        deals, superseded = resolved(
            raw.filter(in_bucket(TOURNAMENT, bucket, count)), "simultane.deal"
        )
        deals = deals.collect()

        def score(keys, deals=deals):
            rows = deals if keys is None else deals.filter(pl.col(TOURNAMENT).is_in(keys))
            tables, issues = score_tournaments({"simultane.deal": rows}, opts).collect()
            return (*tables.values(), issues)  # deal results, tournament results, issues

        units = deals[TOURNAMENT].unique().sort().to_list()
        parts, failures = isolated(units, score)
        deal_results = pl.concat([p[0] for p in parts]) if parts else None
        tournaments = pl.concat([p[1] for p in parts]) if parts else None
        months = dict(deals.group_by(TOURNAMENT).agg(pl.col("month").first()).iter_rows())
        issue_parts += [superseded.collect(), *[p[2] for p in parts],
                        failure_issues(failures, TOURNAMENT, months)]  # fmt: skip
        if deal_results is None:
            continue
        # written batch by batch: a partition never sits in memory whole
        write = tx.put if bucket == 0 else tx.add
        write("silver", "simultane_deal_results", key, deal_results)
        write("silver", "simultane_tournament_results", key, tournaments)
        tx.put_schema("silver", "simultane_deal_results", deal_results)
        tx.put_schema("silver", "simultane_tournament_results", tournaments)
        del deals, deal_results, tournaments
    compact_bronze(tx, "simultane", part)
    issues = pl.concat([i.select(*DATA_ISSUES_SCHEMA) for i in issue_parts])
    put_issues(tx, "simultane", part, issues)
    return tx.ops


def put_issues(tx, competition: str, part: str, issues: pl.DataFrame) -> None:
    """The data issues a partition's scoring found (one sub-partition per competition)."""
    key = f"{RAW}={part}/{competition}"
    if issues.height:
        tx.put("gold", "data_issues", key, issues.select(*DATA_ISSUES_SCHEMA))
    else:
        tx.remove("data_issues", key)
    tx.put_schema("gold", "data_issues", pl.DataFrame(schema=DATA_ISSUES_SCHEMA))


def history_step(ctx: StepContext, first: str) -> list[dict]:
    """Blocks, % actuel, monthly and daily tables of every month ≥ `first`.

    Blocks run over each player's whole history, in player batches of ≤ batch_rows deals.
    """
    from transforms.simultane.blocks import blocks
    from transforms.simultane.monthly import daily, monthly

    opts = ctx.settings.simultane_options()
    wh, tx, pending = ctx.wh, ctx.transaction(), list(ctx.pending)
    columns = ["player_id", "is_bot", "scored", "played_at", "tournament_id", "deal_no", "pct"]
    history = wh.scan("simultane_deal_results", pending=pending).select(columns)
    count = buckets(history.select(pl.len()).collect().item(), ctx.settings.batch_rows)
    as_of_ts = end_of_day(ctx.as_of, opts.timezone) if ctx.as_of else None
    latest = as_of_ts or history.select(pl.col("played_at").max()).collect().item()
    block_rows = pl.concat(
        [
            blocks(history.filter(in_bucket("player_id", b, count)), opts, latest).collect()
            for b in range(count)
        ]
    )
    tournaments = wh.scan("simultane_tournament_results", pending=pending).filter(
        pl.col("month") >= first
    )
    # `in_window` moves with time: blocks of the last window_days may change month too.
    first_block_month = first
    if latest is not None:
        window_start = latest - timedelta(days=opts.window_days)
        first_block_month = min(first, month_of(window_start, opts.timezone))
    # daily compares each player's days with their results of the month (days x results rows
    # per player): bucket players so that product stays under batch_rows per batch
    expansion = (
        tournaments.group_by("month", "player_id")
        .agg((pl.len() * day_expr("tournament_start", opts.timezone).n_unique()).alias("rows"))
        .select(pl.col("rows").sum())
        .collect()
        .item()
    )
    daily_count = buckets(expansion or 0, ctx.settings.batch_rows)
    daily_rows = pl.concat(
        [
            daily(tournaments.filter(in_bucket("player_id", b, daily_count)), opts).collect()
            for b in range(daily_count)
        ]
    ).sort("month", "player_id", "date")
    monthly_rows = monthly(
        tournaments, block_rows.lazy(), opts, as_of_ts, daily_rows.lazy()
    ).collect()
    put_history(tx, "simultane_blocks", block_rows, first_block_month, pending)
    put_history(tx, "simultane_monthly", monthly_rows, first, pending)
    put_history(tx, "simultane_daily", daily_rows, first, pending)
    return tx.ops


def put_history(tx, table: str, rows: pl.DataFrame, first: str, pending: list[dict]) -> None:
    """Replace every month ≥ `first` of a history table (months that lost all their rows are
    unpublished)."""
    published = [m for m in tx.wh.months(table, pending) if m >= first]
    fresh = [m for m in rows["month"].unique().drop_nulls().to_list() if m >= first]
    tx.put_months("gold", table, rows, sorted(set(published) | set(fresh)))
