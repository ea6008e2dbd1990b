"""Face-à-Face steps: deal results and scored matches of one bronze partition (a match and its
deals and disconnections share the partition of its creation); Elo over all matches in order
of end, then `ff_matches`, `ff_elo` and the ranking of every month from a first one."""

from __future__ import annotations

import polars as pl

from flows.steps.context import StepContext
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
    """Elo over all matches in order of end, then ff_matches, ff_elo, ranking of months ≥ first."""
    from transforms.face_a_face.elo import elo_history, with_elo
    from transforms.face_a_face.ranking import monthly_ranking

    opts = ctx.settings.face_a_face_options()
    wh, tx, pending = ctx.wh, ctx.transaction(), list(ctx.pending)
    if not wh.entries("ff_match_scores", pending=pending):
        return tx.ops
    scored = wh.scan("ff_match_scores", pending=pending)
    elo = elo_history(scored, opts).collect()
    matches = with_elo(scored.filter(pl.col("month") >= first), elo.lazy(), opts).collect()
    ranking = monthly_ranking(matches.lazy(), elo.lazy(), opts).collect()
    put_history(tx, "ff_matches", matches, first, pending)
    put_history(tx, "ff_elo", elo, first, pending)
    put_history(tx, "ff_monthly_ranking", ranking, first, pending)
    return tx.ops
