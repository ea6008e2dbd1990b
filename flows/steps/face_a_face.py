"""Face-à-Face steps: deal results and scored matches of one bronze partition (a match and its
deals and disconnections share the partition of its creation); Elo in order of end from the
first match a run changes, then `ff_matches`, `ff_elo` and the ranking of every month from a
first one."""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from flows.steps.context import StepContext, partition_spans, rescored_partitions
from flows.steps.outputs import put_history
from flows.steps.units import unit_partition_step
from flows.storage.operations import Operation
from transforms.calendar import (
    RAW_MONTH,
    month_expr,
    month_of,
    month_range,
    month_start,
    shift_month,
)

MATCH = "match_id"
SPAN = "ff_match_span"  # per ff_match_scores partition and month: its last end, first rated end
SPAN_SCHEMA = {RAW_MONTH: pl.String, "month": pl.String, "rows": pl.Int64,
               "last_ended_at": pl.Datetime("us", "UTC"),
               "first_rated_end": pl.Datetime("us", "UTC")}  # fmt: skip


def match_span(scores: pl.LazyFrame, part: str) -> pl.LazyFrame:
    """ff_match_span of one partition's ff_match_scores: per month, its matches, their last
    ended_at and the first ended_at of a rated one (null when none)."""
    rated = pl.col("ended_at").filter(pl.col("counts_for_ranking"))
    return (
        scores.group_by("month")
        .agg(
            pl.len().cast(pl.Int64).alias("rows"),
            pl.col("ended_at").max().alias("last_ended_at"),
            rated.min().alias("first_rated_end"),
        )
        .select(pl.lit(part).alias(RAW_MONTH), pl.all())
        .select(*SPAN_SCHEMA)
        .sort("month")
    )


def month_step(ctx: StepContext, part: str) -> list[Operation]:
    from transforms.face_a_face.matches import score_matches

    opts = ctx.settings.face_a_face_options()
    ops = unit_partition_step(
        ctx,
        "face_a_face",
        part,
        MATCH,
        score=lambda inputs: score_matches(
            {t: f.lazy() for t, f in inputs.items()}, opts
        ).collect(),
        tables=(("silver", "ff_deal_results"), ("silver", "ff_match_scores")),
        unit_types=("ff.match", "ff.deal"),
        month_of_unit=("ff.match", month_expr("created_at", opts.timezone)),
        rules=None,  # a match's scores read the other matches of its month (rematches)
    )
    tx, key = ctx.transaction(), f"{RAW_MONTH}={part}"
    view = [*ctx.pending, *ops]
    if ctx.wh.entries("ff_match_scores", [key], pending=view):
        span = match_span(ctx.wh.scan("ff_match_scores", [key], pending=view), part).collect()
        tx.put("silver", SPAN, key, span)
        tx.put_schema("silver", SPAN, span)
    else:
        tx.remove(SPAN, key)
    return [*ops, *tx.ops]


def history_step(ctx: StepContext, first: str) -> list[Operation]:
    """ff_elo, ff_matches, the ranking and ff_player_state of every month from `first` (or
    earlier, when a rescored match moves the Elo of a match of an earlier month).

    Elo is replayed from the first point of its order (end time) that the rescored matches
    touch, seeded by each player's state there: the published `ff_player_state` of the month
    before that point, carried over the ff_elo rows from that month's end to the point; the
    partitions of ff_match_scores and ff_elo it reads are those `ff_match_span` says hold a
    match ending from there or of a month rewritten. A backfill (`from_scratch`) replays
    every match.
    """
    from transforms.face_a_face.elo import carried_state, elo_history, elo_state, with_elo
    from transforms.face_a_face.ranking import monthly_ranking

    opts = ctx.settings.face_a_face_options()
    wh, tx, pending = ctx.wh, ctx.transaction(), list(ctx.pending)
    if not wh.entries("ff_match_scores", pending=pending):
        return tx.ops
    cut = None if ctx.from_scratch else _elo_cut(ctx)
    if cut is None:  # every match, from the start of the order
        scored = wh.scan("ff_match_scores", pending=pending)
        elo = elo_history(scored, opts).collect()
        rows = elo.sort("elo_seq", "player_id")
        states = _month_states(elo, None, None, opts)
        ranking_rows = rows
        first_state = "0000-01"
    else:
        cut_month = month_of(cut, opts.timezone)
        base_month, base = _published_state(ctx, shift_month(cut_month, -1))
        since = None
        if base_month is not None:
            since = month_start(shift_month(base_month, 1), opts.timezone)
        score_parts, elo_parts = _replay_reads(ctx, first, cut, since)
        scored = wh.scan("ff_match_scores", score_parts, pending=pending)
        published = wh.scan("ff_elo", elo_parts, pending=pending)
        stretch = published.filter(pl.col("ended_at") < cut)
        if since is not None:  # the rows from the end of the state's month
            stretch = stretch.filter(pl.col("ended_at") >= since)
        stretch = stretch.collect()
        state = carried_state(base.lazy(), elo_state(stretch.lazy(), opts)).collect()
        first_seq = (state["elo_seq"].max() + 1) if state.height else 0
        after = scored.filter(pl.col("ended_at") >= cut)
        elo = elo_history(after, opts, state, first_seq).collect()
        # a replayed match of a month before `first` changes that month too
        replayed = published.filter(pl.col("ended_at") >= cut).select("month").collect()
        months = pl.concat([replayed["month"], elo["month"]]).drop_nulls()
        first = min(first, months.min()) if months.len() else first
        kept = published.filter((pl.col("ended_at") < cut) & (pl.col("month") >= first)).collect()
        rows = pl.concat([kept, elo]).sort("elo_seq", "player_id")
        states = _month_states(pl.concat([stretch, elo]), base, base_month, opts)
        first_state = cut_month if base_month is not None else "0000-01"
        # the ranking reads each player's rating at the end of the month before `first`
        # (their state then) and every row ending from `first` on
        ranking_rows = _ranking_elo(ctx, published, elo, states, first, cut, opts)
    matches = with_elo(scored.filter(pl.col("month") >= first), rows.lazy(), opts).collect()
    ranking = monthly_ranking(matches.lazy(), ranking_rows.lazy(), opts).collect()
    put_history(tx, "ff_matches", matches, first, pending)
    put_history(tx, "ff_elo", rows, first, pending)
    put_history(tx, "ff_monthly_ranking", ranking, first, pending)
    put_history(
        tx, "ff_player_state", states.filter(pl.col("month") >= first_state), first_state, pending
    )
    return tx.ops


def _published_state(ctx: StepContext, month: str) -> tuple[str | None, pl.DataFrame]:
    """The latest published ff_player_state of a month ≤ `month` (its month and rows), or
    (None, no rows) when there is none: Elo then starts from the first match."""
    from transforms.face_a_face.elo import STATE_SCHEMA

    pending = list(ctx.pending)
    months = [m for m in ctx.wh.months("ff_player_state", pending) if m <= month]
    if not months:
        return None, pl.DataFrame(schema=STATE_SCHEMA)
    rows = ctx.wh.scan("ff_player_state", [f"month={months[-1]}"], pending=pending)
    return months[-1], rows.select(*STATE_SCHEMA).collect()


def _month_states(
    elo: pl.DataFrame, base: pl.DataFrame | None, base_month: str | None, opts
) -> pl.DataFrame:
    """ff_player_state of every month after `base_month` (whose state is `base`) to the last
    month an ff_elo row of `elo` (every row after base_month's end) ends in: each player's
    state after their last rated match ending by the end of the month."""
    from transforms.face_a_face.elo import STATE_SCHEMA, carried_state, elo_state

    state = pl.DataFrame(schema=STATE_SCHEMA) if base is None else base
    ended = elo.with_columns(_ended=month_expr("ended_at", opts.timezone))
    if ended.is_empty():
        return state.clear().with_columns(month=pl.lit(None, pl.String))
    first = ended["_ended"].min() if base_month is None else shift_month(base_month, 1)
    out = []
    for month in month_range(first, ended["_ended"].max()):
        stretch = ended.filter(pl.col("_ended") == month).lazy()
        state = carried_state(state.lazy(), elo_state(stretch, opts)).collect()
        out.append(state.sort("player_id").with_columns(month=pl.lit(month)))
    return pl.concat(out)


def _ranking_elo(ctx, published, elo, states, first, cut, opts) -> pl.DataFrame:
    """The ff_elo rows the ranking of the months from `first` reads: each player's last one
    ending before `first` (as their state of the month before carries it) and every row ending
    from `first` on (published before `cut`, replayed after)."""
    before = shift_month(first, -1)
    month, state = before, states.filter(pl.col("month") == before)
    if state.is_empty():
        month, state = _published_state(ctx, before)
    start = month_start(first, opts.timezone)
    later = published.filter((pl.col("ended_at") >= start) & (pl.col("ended_at") < cut))
    last = state.select("player_id", "ended_at", "elo_seq", pl.col("elo").alias("elo_after"))
    return pl.concat(
        [last, later.collect(), elo.filter(pl.col("ended_at") >= start)], how="diagonal_relaxed"
    ).select(elo.columns)


def _elo_cut(ctx: StepContext):
    """The first end time of a rated match the run's rescored partitions changed (their
    published and their new rows, by their ff_match_span), or None when the whole order is
    replayed: no published ff_elo to start from. A run that changed no rated match cuts after
    every match."""
    wh, pending = ctx.wh, list(ctx.pending)
    if not wh.entries("ff_elo", pending=pending):
        return None
    parts = tuple(rescored_partitions(ctx, "ff_match_scores"))
    changed = pl.concat([_match_spans(ctx, p, parts) for p in (pending, None)])
    first_end = changed["first_rated_end"].min()
    if first_end is not None:
        return first_end
    spans = pl.concat([_match_spans(ctx, p) for p in (pending, None)])
    last = spans.filter(pl.col("first_rated_end").is_not_null())["last_ended_at"].max()
    return None if last is None else last + timedelta(microseconds=1)


def _match_spans(
    ctx: StepContext, pending: list[Operation] | None, parts: tuple[str, ...] | None = None
) -> pl.DataFrame:
    """ff_match_span of the partitions of ff_match_scores (`parts`, or all) in a view
    (`pending`; None: as published), computed from the partition's rows where none is
    published."""
    table = "ff_match_scores"

    def compute(key: str) -> pl.DataFrame:
        rows = ctx.wh.scan(table, [key], pending=pending)
        return match_span(rows, key.split("=", 1)[1]).collect()

    return partition_spans(ctx, pending, table, SPAN, SPAN_SCHEMA, parts, compute)


def _replay_reads(
    ctx: StepContext, first: str, cut, since
) -> tuple[list[str] | None, list[str] | None]:
    """The partitions of ff_match_scores and of ff_elo a replay from `cut` reads (None: all),
    by the ff_match_span of the matches as rescored and as published: the matches ending from
    the cut, and those of the months it rewrites (`first`, or an earlier one of a match ending
    from the cut); the ff_elo rows of those months and those ending from `since` (the end of
    the state's month; None: every row before the cut) or from the first month rewritten."""
    tz = ctx.settings.face_a_face_options().timezone
    pending = list(ctx.pending)
    now, before = _match_spans(ctx, pending), _match_spans(ctx, None)
    late = pl.concat([now, before]).filter(pl.col("last_ended_at") >= cut)
    first = min([first, *late["month"].drop_nulls().to_list()])
    wanted = (pl.col("month") >= first) | (pl.col("last_ended_at") >= cut)
    scores = sorted({f"{RAW_MONTH}={m}" for m in now.filter(wanted)[RAW_MONTH]})
    scores += [k for k in ctx.wh.partitions("ff_match_scores", pending) if k.startswith("_")]
    if since is None:
        return scores, None
    low = min(since, month_start(first, tz))
    months = set(
        before.filter((pl.col("month") >= first) | (pl.col("last_ended_at") >= low))["month"]
    )
    elo = [
        k
        for k in ctx.wh.partitions("ff_elo", pending)
        if k.startswith("_")
        or k.split("/")[0].removeprefix("month=") in months
        or (k.startswith("month=") and k.split("/")[0].removeprefix("month=") >= first)
    ]
    return scores, elo
