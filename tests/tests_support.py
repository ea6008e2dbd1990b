"""Helpers shared by the pipeline tests."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from flows.warehouse import Warehouse


def read_table(wh: Warehouse, table: str) -> pl.DataFrame:
    """All published rows of a table (as the manifest lists them)."""
    files = wh.files(table)
    return pl.read_parquet(files) if files else pl.DataFrame()


# `shared/` sits beside the repository (here and in CI's fresh clone)
ORACLES = Path(__file__).resolve().parents[2] / "shared" / "oracles"
