"""Face-à-Face steps: deal results and scored matches of one bronze partition (a match and its
deals and disconnections share the partition of its creation); Elo in order of end from the
first match a run changes, then `ff_matches`, `ff_elo` and the ranking of every month from a
first one."""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from flows.steps.context import StepContext, rescored_partitions
from flows.steps.simultane import put_history
from flows.steps.units import unit_partition_step
from transforms.calendar import month_expr

MATCH = "match_id"


def month_step(ctx: StepContext, part: str) -> list[dict]:
    from transforms.face_a_face.matches import score_matches

    opts = ctx.settings.face_a_face_options()
    return unit_partition_step(
        ctx, "face_a_face", part, MATCH,
        score=lambda inputs: score_matches({t: f.lazy() for t, f in inputs.items()}, opts)
        .collect(),
        tables=(("silver", "ff_deal_results"), ("silver", "ff_match_scores")),
        unit_types=("ff.match", "ff.deal"),
        month_of_unit=("ff.match", month_expr("created_at", opts.timezone)),
    )  # fmt: skip


def history_step(ctx: StepContext, first: str) -> list[dict]:
    """ff_elo, ff_matches and the ranking of every month from `first` (or earlier, when a
    rescored match moves the Elo of a match of an earlier month).

    Elo is replayed from the first point of its order (end time) that the rescored matches
    touch, seeded by each player's state there (`elo_state` of the published ff_elo rows
    before it); a backfill (`from_scratch`) replays every match.
    """
    from transforms.face_a_face.elo import elo_history, elo_state, with_elo
    from transforms.face_a_face.ranking import monthly_ranking

    opts = ctx.settings.face_a_face_options()
    wh, tx, pending = ctx.wh, ctx.transaction(), list(ctx.pending)
    if not wh.entries("ff_match_scores", pending=pending):
        return tx.ops
    scored = wh.scan("ff_match_scores", pending=pending)
    cut = None if ctx.from_scratch else _elo_cut(ctx)
    if cut is None:  # every match, from the start of the order
        elo = elo_history(scored, opts).collect()
        kept = elo.clear()
    else:
        published = wh.scan("ff_elo", pending=pending)
        before = published.filter(pl.col("ended_at") < cut)
        after = scored.filter(pl.col("ended_at") >= cut)
        seq = scored.filter(pl.col("counts_for_ranking") & (pl.col("ended_at") < cut))
        first_seq = seq.select(pl.len()).collect().item()
        elo = elo_history(after, opts, elo_state(before, opts).collect(), first_seq).collect()
        # a replayed match of a month before `first` changes that month too
        replayed = published.filter(pl.col("ended_at") >= cut).select("month").collect()
        months = pl.concat([replayed["month"], elo["month"]]).drop_nulls()
        first = min(first, months.min()) if months.len() else first
        kept = before.filter(pl.col("month") >= first).collect()
        # the ranking reads each player's rating at the end of every month from `first`
        ranking_elo = _last_before(pl.concat([before, elo.lazy()]), first, opts).collect()
    rows = pl.concat([kept, elo]).sort("elo_seq", "player_id")
    matches = with_elo(scored.filter(pl.col("month") >= first), rows.lazy(), opts).collect()
    ranking_rows = rows if cut is None else ranking_elo
    ranking = monthly_ranking(matches.lazy(), ranking_rows.lazy(), opts).collect()
    put_history(tx, "ff_matches", matches, first, pending)
    put_history(tx, "ff_elo", rows, first, pending)
    put_history(tx, "ff_monthly_ranking", ranking, first, pending)
    return tx.ops


def _elo_cut(ctx: StepContext):
    """The first end time of a rated match the run's rescored partitions changed (their
    published and their new rows), or None when the whole order is replayed: no published
    ff_elo to start from. A run that changed no rated match cuts after every match."""
    wh, pending = ctx.wh, list(ctx.pending)
    if not wh.entries("ff_elo", pending=pending):
        return None
    parts = rescored_partitions(ctx, "ff_match_scores")
    rated = pl.col("counts_for_ranking")
    table = "ff_match_scores"
    ends = [
        wh.scan(table, parts, pending=p)
        for p in (pending, None)
        if parts and wh.entries(table, parts, pending=p)
    ]  # as rescored, as published before
    first_end = None
    if ends:
        first_end = (
            pl.concat([f.filter(rated).select("ended_at") for f in ends])
            .select(pl.col("ended_at").min())
            .collect()
            .item()
        )
    if first_end is not None:
        return first_end
    last = wh.scan("ff_elo", pending=pending).select(pl.col("ended_at").max()).collect().item()
    return None if last is None else last + timedelta(microseconds=1)


def _last_before(elo: pl.LazyFrame, first: str, opts) -> pl.LazyFrame:
    """Of the ff_elo rows given, each player's last one ending before month `first` (the
    rating a ranking of `first` or later starts from), and all the others ending later."""
    earlier = month_expr("ended_at", opts.timezone) < first
    return pl.concat(
        [
            elo.filter(earlier).sort("elo_seq").group_by("player_id").last(),
            elo.filter(~earlier),
        ],
        how="diagonal",
    ).select(elo.collect_schema().names())
