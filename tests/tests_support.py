"""Helpers shared by the pipeline tests."""

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
