"""Helpers shared by the pipeline tests."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from flows.storage.warehouse import Warehouse


def read_table(wh: Warehouse, table: str) -> pl.DataFrame:
    """All published rows of a table (as the manifest lists them)."""
    files = wh.files(table)
    return wh.scan_files(files).collect() if files else pl.DataFrame()


# real KOPS results (tests/data/oracles/README.md), kept in the repository so a clone stands alone
ORACLES = Path(__file__).resolve().parent / "data" / "oracles"
