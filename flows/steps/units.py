"""The partition step of a game scored by units (a Face-à-Face match, a bridge event): the
current rows of each of its record types in one bronze partition, scored together, a unit
whose scoring fails left out and reported (`isolate.py`), its tables and data issues
published for that partition."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from flows.steps.context import COMPETITIONS, StepContext, compact_bronze, resolved
from flows.steps.delta import delta, kept_rows, put_rules, rules_digest
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
    rules: object | None,
) -> list[Operation]:
    """Score partition `part` of `competition`, whose units are the values of column `key`.

    `score(inputs)` gets the current rows by record type (all units, or some of them when a
    unit fails); `tables` are the (layer, table) it publishes per partition; the units are the
    `key`s of the `unit_types` records; `month_of_unit` = (record type, expression) gives a
    failed unit's month for its data issue; `rules` what a unit's scores depend on besides
    its own rows (the options), with which a nightly's delivery rescores only the units its
    new bronze holds and keeps the published rows of the others (delta.py), or None when a
    unit's scores also depend on other units' rows: the partition is rescored whole.
    """
    tx = ctx.transaction()
    digest = None if rules is None else rules_digest(rules)
    change = None if digest is None else delta(ctx, competition, part, key, digest)
    inputs, superseded = {}, []
    for record_type in COMPETITIONS[competition]:
        rows = (
            ctx.bronze(record_type, [part]) if change is None else change.bronze(ctx, record_type)
        )
        rows, old = resolved(rows, record_type)
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
        ([change.kept_issues] if change is not None else [])
        + [s.collect() for s in superseded]
        + [issues for _, issues in parts]
        + [failure_issues(failures, key, months)],
        how="diagonal_relaxed",
    )
    compact_bronze(tx, competition, part)
    partition = f"{RAW_MONTH}={part}"
    for layer, table in tables:
        frames = [scored[table] for scored, _ in parts]
        if change is not None:  # the published rows of the other units
            kept = kept_rows(ctx, table, part, change, key)
            frames = frames if kept is None else [kept.collect(), *frames]
        rows = pl.concat(frames) if frames else None
        if rows is not None and rows.height:
            tx.put(layer, table, partition, rows)
            tx.put_schema(layer, table, rows)
        else:
            tx.remove(table, partition)
    put_issues(tx, competition, part, issues)
    if digest is not None:
        put_rules(tx, competition, part, digest)
    return tx.ops
