"""Warehouse publishing: atomic swaps, crash safety, one run at a time, read-only SQL."""

from __future__ import annotations

import multiprocessing
import time

import polars as pl
import pytest

from flows.query import run_sql
from flows.warehouse import UserError, Warehouse
from tests_support import read_table


def publish(wh: Warehouse, run_id: str, rows: dict[str, list[int]], fail=False):
    tx = wh.transaction(run_id)
    frame = pl.DataFrame(
        {
            "month": [m for m, v in rows.items() for _ in v],
            "x": [x for v in rows.values() for x in v],
        }
    )
    tx.put_months("gold", "t", frame, sorted(rows))
    return tx.commit(fail_before_swap=fail)


def test_a_month_is_replaced_whole_and_other_months_stay(tmp_path):
    wh = Warehouse(tmp_path)
    publish(wh, "r1", {"2026-10": [1, 2], "2026-11": [3]})
    publish(wh, "r2", {"2026-11": [4, 5]})
    assert sorted(read_table(wh, "t")["x"]) == [1, 2, 4, 5]
    assert run_sql(tmp_path, "select sum(x) as s from t")["s"].to_list() == [12]
    # the replaced files are gone: no stale file is left in the month's folder
    assert len(list((tmp_path / "gold/t/month=2026-11").glob("*.parquet"))) == 1


def test_a_failure_before_the_swap_leaves_published_tables_unchanged(tmp_path):
    wh = Warehouse(tmp_path)
    publish(wh, "r1", {"2026-11": [1]})
    with pytest.raises(RuntimeError, match="injected"):
        publish(wh, "r2", {"2026-11": [99]}, fail=True)
    # readers still see the old month (the new file exists but is not published)
    assert read_table(wh, "t")["x"].to_list() == [1]
    assert run_sql(tmp_path, "select x from t")["x"].to_list() == [1]
    assert len(list((tmp_path / "gold/t/month=2026-11").glob("*.parquet"))) == 2
    # the next run cleans the leftovers and completes
    wh.collect_garbage()
    assert len(list((tmp_path / "gold/t/month=2026-11").glob("*.parquet"))) == 1
    publish(wh, "r3", {"2026-11": [7]})
    assert run_sql(tmp_path, "select x from t")["x"].to_list() == [7]


def _hold_lock(root, seconds):
    with Warehouse(root).lock():
        time.sleep(seconds)


def test_a_second_run_waits_then_refuses_with_a_clear_message(tmp_path):
    holder = multiprocessing.get_context("fork").Process(target=_hold_lock, args=(tmp_path, 3))
    holder.start()
    time.sleep(0.5)
    try:
        with pytest.raises(UserError, match="is locked by a running job"):
            with Warehouse(tmp_path).lock(wait_s=0.5):
                pass
    finally:
        holder.join()
    with Warehouse(tmp_path).lock(wait_s=0.5):  # free again once the first run ended
        pass


@pytest.mark.parametrize(
    "query",
    [
        "create table z as select 1",
        "copy (select 1) to 'evil.csv'",
        "drop view t",
        "select 1; select 2",
        "select * from read_csv('/etc/passwd')",
    ],
)
def test_sql_is_read_only_and_confined_to_the_warehouse(tmp_path, query):
    wh = Warehouse(tmp_path)
    publish(wh, "r1", {"2026-11": [1]})
    with pytest.raises(UserError):
        run_sql(tmp_path, query)
    assert run_sql(tmp_path, "select x from t")["x"].to_list() == [1]
    assert not list(tmp_path.rglob("evil.csv"))
