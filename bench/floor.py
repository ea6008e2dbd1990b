"""Timing shared by the benchmarks: medians of wall and CPU time, and the DuckDB sort floor."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb


def timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, float, Any]:
    """(median wall s, median process CPU s, last result) of `repeat` runs of `fn`.

    CPU time is kept too because the machine is shared: other processes stretch wall times
    (DuckDB's, which uses every core, more than ours), CPU seconds much less.
    """
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        result = None  # the previous run's output is not kept alive during the next run
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), result


def t_sort(path: Path, order_by: str, repeat: int = 3, warmup: int = 0) -> tuple[float, float]:
    """The floor of quality.md: DuckDB materialising the Parquet file sorted by `order_by`
    (median wall and CPU s of `repeat` runs after `warmup` untimed ones)."""
    return t_sort_runs(path, order_by, repeat, warmup)[:2]


def t_sort_runs(
    path: Path, order_by: str, repeat: int = 3, warmup: int = 0
) -> tuple[float, float, float | None]:
    """`t_sort` and the wall time of the first (warm-up) run, None without warm-up."""
    con = duckdb.connect()
    query = (
        "create or replace table t as select * from read_parquet($path) "
        f"order by {order_by}"  # a constant of the calling script, not user input
    )
    try:
        first = None
        for _ in range(warmup):
            t0 = time.perf_counter()
            con.execute(query, {"path": str(path)})
            first = first if first is not None else time.perf_counter() - t0
        wall, cpu, _ = timed(lambda: con.execute(query, {"path": str(path)}), repeat)
        return wall, cpu, first
    finally:
        con.close()
