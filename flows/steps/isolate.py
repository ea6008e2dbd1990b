"""Isolated scoring failures: one bad tournament, match or event never stops the others.

`isolated` runs a scoring function on all units at once (the fast path). If it raises, it
splits the units in halves and retries each half, down to the single units that fail: those
are reported as `data_issues` (`scoring_failed`, with the error) and left out; every other unit
is published. When every unit of several fails, the fault is not in the data: the error is
raised (a bug must not publish empty tables).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TypeVar

import polars as pl

from transforms.issues import DATA_ISSUES_SCHEMA

T = TypeVar("T")


def isolated(
    units: Sequence, run: Callable[[Sequence | None], T]
) -> tuple[list[T], list[tuple[object, BaseException]]]:
    """Results of `run` over all `units` (`run(None)` = all of them, `run(keys)` = some) and
    the units that failed alone, with their error."""
    try:
        return [run(None)], []
    except (MemoryError, KeyboardInterrupt, SystemExit):
        raise
    except Exception as err:  # noqa: BLE001 — narrowed below, unit by unit
        if len(units) <= 1:
            if not units:
                raise
            return [], [(units[0], err)]
        first = err
    results: list[T] = []
    failures: list[tuple[object, BaseException]] = []
    _bisect(list(units), run, results, failures)
    if len(failures) == len(units):
        raise first
    return results, failures


def _bisect(units: list, run, results: list, failures: list) -> None:
    try:
        results.append(run(units))
        return
    except (MemoryError, KeyboardInterrupt, SystemExit):
        raise
    except Exception as err:  # noqa: BLE001
        if len(units) == 1:
            failures.append((units[0], err))
            return
    half = len(units) // 2
    _bisect(units[:half], run, results, failures)
    _bisect(units[half:], run, results, failures)


def failure_issues(
    failures: list[tuple[object, BaseException]], column: str, months: dict
) -> pl.DataFrame:
    """`data_issues` rows (kind `scoring_failed`) for the units that could not be scored."""
    rows = [
        {
            "month": months.get(unit),
            "kind": "scoring_failed",
            "keys": json.dumps({column: str(unit)}),
            "detail": f"not scored: {type(err).__name__}: {_one_line(err)}",
        }
        for unit, err in failures
    ]
    return pl.DataFrame(rows, schema=DATA_ISSUES_SCHEMA)


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split())[:300]
