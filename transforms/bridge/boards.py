"""Vulnerability and dealer from the board number (16-board cycle)."""

from __future__ import annotations

import polars as pl

VULNERABILITY = (
    "None", "NS", "EW", "All", "NS", "EW", "All", "None",
    "EW", "All", "None", "NS", "All", "None", "NS", "EW",
)  # fmt: skip
DEALERS = ("N", "E", "S", "W")

# Spellings met in PBN files and exports, to the four canonical values.
VULNERABILITY_ALIASES = {
    "NONE": "None", "LOVE": "None", "-": "None", "NS": "NS", "EW": "EW",
    "ALL": "All", "BOTH": "All", "BOTH VUL": "All",
}  # fmt: skip


def board_vulnerability(board: pl.Expr) -> pl.Expr:
    """'None' | 'NS' | 'EW' | 'All' for a 1-based board number."""
    return ((board - 1) % 16).replace_strict(
        list(range(16)), list(VULNERABILITY), return_dtype=pl.String
    )


def board_dealer(board: pl.Expr) -> pl.Expr:
    return ((board - 1) % 4).replace_strict(list(range(4)), list(DEALERS), return_dtype=pl.String)


def canonical_vulnerability(text: pl.Expr) -> pl.Expr:
    """A given vulnerability spelled any usual way, as None/NS/EW/All (null if unknown)."""
    return (
        text.str.strip_chars()
        .str.to_uppercase()
        .replace_strict(
            list(VULNERABILITY_ALIASES),
            list(VULNERABILITY_ALIASES.values()),
            default=None,
            return_dtype=pl.String,
        )
    )
