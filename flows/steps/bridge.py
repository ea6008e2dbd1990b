"""Bridge step: board results and standings of the events of one bronze partition (an event
and its traveller lines and penalties share the partition of its date)."""

from __future__ import annotations

import polars as pl

from flows.steps.context import RAW, StepContext, compact_bronze
from flows.steps.isolate import failure_issues, isolated
from flows.steps.simultane import put_issues
from transforms.calendar import date_month_expr

EVENT = "event_id"


def month_step(ctx: StepContext, part: str) -> list[dict]:
    from transforms.bridge.event import score_events

    tx = ctx.transaction()
    events, superseded_e = ctx.current("bridge.event", [part])
    results, superseded_r = ctx.current("bridge.result", [part])
    penalties, superseded_p = ctx.current("bridge.penalty", [part])
    events, results, penalties = (f.collect() for f in (events, results, penalties))

    def score(keys):
        def some(frame: pl.DataFrame) -> pl.DataFrame:
            return frame if keys is None else frame.filter(pl.col(EVENT).is_in(keys))

        inputs = {"bridge.event": some(events), "bridge.result": some(results),
                  "bridge.penalty": some(penalties)}  # fmt: skip
        tables, issues = score_events(inputs).collect()
        return tables["bridge_board_results"], tables["bridge_standings"], issues

    units = events[EVENT].unique().sort().to_list()
    parts, failures = isolated(units, score)
    months = dict(events.select(EVENT, date_month_expr("date")).iter_rows())
    issues = pl.concat(
        [s.collect() for s in (superseded_e, superseded_r, superseded_p)]
        + [p[2] for p in parts]
        + [failure_issues(failures, EVENT, months)],
        how="diagonal_relaxed",
    )
    key = f"{RAW}={part}"
    compact_bronze(tx, "bridge", part)
    for index, layer, table in ((0, "silver", "bridge_board_results"),
                                (1, "gold", "bridge_standings")):  # fmt: skip
        rows = pl.concat([p[index] for p in parts]) if parts else None
        if rows is not None and rows.height:
            tx.put(layer, table, key, rows)
            tx.put_schema(layer, table, rows)
        else:
            tx.remove(table, key)
    put_issues(tx, "bridge", part, issues)
    return tx.ops
