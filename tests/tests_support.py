"""Helpers shared by the pipeline tests."""

from __future__ import annotations

import polars as pl

from flows.warehouse import Warehouse


def read_table(wh: Warehouse, table: str) -> pl.DataFrame:
    """All published rows of a table (as the manifest lists them)."""
    files = wh.files(table)
    return pl.read_parquet(files) if files else pl.DataFrame()
