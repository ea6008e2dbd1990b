"""Helpers shared by the tests: the sample logs, the published tables, reading and comparing
them."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from flows.storage.warehouse import Transaction, Warehouse


def read_table(wh: Warehouse, table: str) -> pl.DataFrame:
    """All published rows of a table (as the manifest lists them)."""
    files = wh.files(table)
    return wh.scan_files(files).collect() if files else pl.DataFrame()


def fail_at(monkeypatch, point: str) -> None:
    """Every commit of this process raises `injected failure <point>` at that point of
    `Transaction.commit` (its hooks: `before_manifest`, `before_views`, `before_swap`,
    `after_swap`) until the test ends."""
    hook = Transaction._hook

    def failing(self, name: str) -> None:
        if name == point:
            raise RuntimeError(f"injected failure {name}")
        hook(self, name)

    monkeypatch.setattr(Transaction, "_hook", failing)


# real KOPS results (tests/data/oracles/README.md), kept in the repository so a clone stands alone
ORACLES = Path(__file__).resolve().parent / "data" / "oracles"

# the committed sample logs `make run` publishes
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
PUBLISHED = (
    "simultane_deal_results",
    "simultane_tournament_results",
    "simultane_blocks",
    "simultane_monthly",
    "simultane_daily",
    "ff_deal_results",
    "ff_matches",
    "ff_elo",
    "ff_player_state",
    "ff_match_span",
    "simultane_player_state",
    "simultane_open_deals",
    "simultane_deal_span",
    "ff_monthly_ranking",
    "bridge_board_results",
    "bridge_standings",
    "data_issues",
    "scoring_rules",
    "quarantine",
)


def assert_same(left: dict, right: dict, tables) -> None:
    for table in tables:
        a, b = left[table], right[table]
        assert a.shape == b.shape, table
        diff = [c for c in a.columns if not a[c].equals(b[c])]
        assert not diff, (table, diff)


def snapshot(warehouse: Path) -> dict[str, pl.DataFrame]:
    """Every published table, sorted on all its columns (order is not part of the contract)."""
    from flows.tools.query import run_sql

    out = {}
    for table in PUBLISHED:
        frame = run_sql(
            warehouse,
            f'select * exclude (ingested_at) from "{table}"'
            if table == "quarantine"
            else f'select * from "{table}"',
        )
        out[table] = frame.sort(frame.columns, nulls_last=True)
    return out
