"""The partition step of a game scored by units (a Face-à-Face match, a bridge event): the
current rows of each of its record types in one bronze partition, scored together, a unit
whose scoring fails left out and reported (`isolate.py`), its tables and data issues
published for that partition."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from flows.steps.context import COMPETITIONS, StepContext, compact_bronze
from flows.steps.isolate import failure_issues, isolated
from flows.steps.outputs import put_issues
from flows.storage.operations import Operation
from transforms.calendar import RAW_MONTH

Scored = tuple[dict[str, pl.DataFrame], pl.DataFrame]  # tables by name, data issues


def unit_partition_step(
    ctx: StepContext,
    competition: str,
    part: str,
    key: str,
    score: Callable[[dict[str, pl.DataFrame]], Scored],
    tables: tuple[tuple[str, str], ...],
    unit_types: tuple[str, ...],
    month_of_unit: tuple[str, pl.Expr],
) -> list[Operation]:
    """Score partition `part` of `competition`, whose units are the values of column `key`.

    `score(inputs)` gets the current rows by record type (all units, or some of them when a
    unit fails); `tables` are the (layer, table) it publishes per partition; the units are the
    `key`s of the `unit_types` records; `month_of_unit` = (record type, expression) gives a
    failed unit's month for its data issue.
    """
    tx = ctx.transaction()
    inputs, superseded = {}, []
    for record_type in COMPETITIONS[competition]:
        rows, old = ctx.current(record_type, [part])
        inputs[record_type] = rows.collect()
        superseded.append(old)

    def run(keys):
        if keys is None:
            return score(inputs)
        return score({t: f.filter(pl.col(key).is_in(keys)) for t, f in inputs.items()})

    units = sorted(set().union(*(inputs[t][key].to_list() for t in unit_types)))
    parts, failures = isolated(units, run)
    month_type, month = month_of_unit
    months = dict(inputs[month_type].select(key, month).iter_rows())
    issues = pl.concat(
        [s.collect() for s in superseded]
        + [issues for _, issues in parts]
        + [failure_issues(failures, key, months)],
        how="diagonal_relaxed",
    )
    compact_bronze(tx, competition, part)
    partition = f"{RAW_MONTH}={part}"
    for layer, table in tables:
        rows = pl.concat([scored[table] for scored, _ in parts]) if parts else None
        if rows is not None and rows.height:
            tx.put(layer, table, partition, rows)
            tx.put_schema(layer, table, rows)
        else:
            tx.remove(table, partition)
    put_issues(tx, competition, part, issues)
    return tx.ops
