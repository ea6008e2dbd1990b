"""The rows validation gives: rejected lines (`REJECTED`), quarantine rows (`QUARANTINE`, a
row per run of the same line: `RUNS`) and a checked chunk (`Checked`)."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

REJECTED = {"line_no": pl.Int64(), "_pos": pl.UInt32(), "reason": pl.String(), "rule": pl.String()}
QUARANTINE = {"line_no": pl.Int64(), "raw": pl.String(), "reason": pl.String(), "rule": pl.String()}
# a quarantine row stands for a run of consecutive lines of the same text, reason and rule
RUNS = {"last_line_no": pl.Int64(), "line_count": pl.Int64()}
TEXTS = REJECTED | {"_h1": pl.UInt64(), "_h2": pl.UInt64()}  # rejected rows with their text's hash


@dataclass
class Checked:
    rows: dict[str, pl.DataFrame]  # record type -> bronze-shaped rows (`month` null, `_pos`)
    quarantine: pl.DataFrame  # QUARANTINE and RUNS columns: a row per run of the same line

    @property
    def accepted(self) -> int:
        return sum(f.height for f in self.rows.values())
