"""What the steps of every game write the same way: a partition's data issues, and the months
of a history table from the first one a run changes."""

from __future__ import annotations

import polars as pl

from flows.storage.operations import Operation
from transforms.calendar import RAW_MONTH
from transforms.issues import DATA_ISSUES_SCHEMA


def put_issues(tx, competition: str, part: str, issues: pl.DataFrame) -> None:
    """The data issues a partition's scoring found (one sub-partition per competition)."""
    key = f"{RAW_MONTH}={part}/{competition}"
    if issues.height:
        tx.put("gold", "data_issues", key, issues.select(*DATA_ISSUES_SCHEMA))
    else:
        tx.remove("data_issues", key)
    tx.put_schema("gold", "data_issues", pl.DataFrame(schema=DATA_ISSUES_SCHEMA))


def put_history(tx, table: str, rows: pl.DataFrame, first: str, pending: list[Operation]) -> None:
    """Replace every month ≥ `first` of a history table (months that lost all their rows are
    unpublished)."""
    published = [m for m in tx.wh.months(table, pending) if m >= first]
    fresh = [m for m in rows["month"].unique().drop_nulls().to_list() if m >= first]
    tx.put_months("gold", table, rows, sorted(set(published) | set(fresh)))
