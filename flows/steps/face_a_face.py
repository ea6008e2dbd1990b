"""Face-à-Face steps: deal results and scored matches of one bronze partition (a match and its
deals and disconnections share the partition of its creation); Elo over all matches in order
of end, then `ff_matches`, `ff_elo` and the ranking of every month from a first one."""

from __future__ import annotations

import polars as pl

from flows.steps.context import RAW, StepContext, compact_bronze
from flows.steps.isolate import failure_issues, isolated
from flows.steps.simultane import put_history, put_issues
from transforms.calendar import month_expr

MATCH = "match_id"


def month_step(ctx: StepContext, part: str) -> list[dict]:
    from transforms.face_a_face.matches import score_matches

    opts = ctx.settings.face_a_face_options()
    tx = ctx.transaction()
    matches, superseded_m = ctx.current("ff.match", [part])
    deals, superseded_d = ctx.current("ff.deal", [part])
    disconnects, superseded_x = ctx.current("ff.disconnect", [part])
    matches, deals, disconnects = (f.collect() for f in (matches, deals, disconnects))

    def score(keys):
        def some(frame: pl.DataFrame) -> pl.LazyFrame:
            return (frame if keys is None else frame.filter(pl.col(MATCH).is_in(keys))).lazy()

        inputs = {"ff.match": some(matches), "ff.deal": some(deals),
                  "ff.disconnect": some(disconnects)}  # fmt: skip
        tables, issues = score_matches(inputs, opts).collect()
        return tables["ff_deal_results"], tables["ff_match_scores"], issues

    units = sorted(set(matches[MATCH].to_list()) | set(deals[MATCH].to_list()))
    parts, failures = isolated(units, score)
    key = f"{RAW}={part}"
    months = dict(matches.select(MATCH, month_expr("created_at", opts.timezone)).iter_rows())
    issues = pl.concat(
        [s.collect() for s in (superseded_m, superseded_d, superseded_x)]
        + [p[2] for p in parts]
        + [failure_issues(failures, MATCH, months)],
        how="diagonal_relaxed",
    )
    compact_bronze(tx, "face_a_face", part)
    for index, table in ((0, "ff_deal_results"), (1, "ff_match_scores")):
        rows = pl.concat([p[index] for p in parts]) if parts else None
        if rows is not None and rows.height:
            tx.put("silver", table, key, rows)
            tx.put_schema("silver", table, rows)
        else:
            tx.remove(table, key)
    put_issues(tx, "face_a_face", part, issues)
    return tx.ops


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
