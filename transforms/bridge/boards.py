"""Vulnerability of a board: from the board number (16-board cycle) unless given.

The one definition of the cycle; the scorer (`travellers`) and the generator read it here. A
vulnerability is carried as a small integer code (the index in `VULNERABILITIES`) while lines
are scored, and as its name where it is shown or parsed. (The dealer, also fixed by the board
number, plays no part in scoring: a PBN file's `[Dealer]` is kept in `extra` as given.)
"""

from __future__ import annotations

import polars as pl

VULNERABILITIES = ("None", "NS", "EW", "All")  # the four values; a code is an index here
VULNERABILITY = (
    "None", "NS", "EW", "All", "NS", "EW", "All", "None",
    "EW", "All", "None", "NS", "All", "None", "NS", "EW",
)  # fmt: skip

# Spellings met in PBN files and exports, to the four canonical values.
VULNERABILITY_ALIASES = {
    "NONE": "None", "LOVE": "None", "-": "None", "NS": "NS", "EW": "EW",
    "ALL": "All", "BOTH": "All", "BOTH VUL": "All",
}  # fmt: skip


def board_vulnerability_code(board: pl.Expr) -> pl.Expr:
    """The code of a 1-based board number's vulnerability (any integer board: the cycle
    repeats; null board -> null)."""
    return ((board - 1) % 16).replace_strict(
        range(16), [VULNERABILITIES.index(v) for v in VULNERABILITY], return_dtype=pl.Int64
    )


def vulnerability_name(code: pl.Expr) -> pl.Expr:
    """'None' | 'NS' | 'EW' | 'All' of a code (null for anything else)."""
    return code.replace_strict(
        range(len(VULNERABILITIES)), VULNERABILITIES, default=None, return_dtype=pl.String
    )


def board_vulnerability(board: pl.Expr) -> pl.Expr:
    """'None' | 'NS' | 'EW' | 'All' for a 1-based board number."""
    return vulnerability_name(board_vulnerability_code(board))


def given_vulnerability_code(text: pl.Expr) -> pl.Expr:
    """The code of a given vulnerability spelled any usual way (null if unknown)."""
    canonical = text.str.strip_chars().str.to_uppercase()
    return canonical.replace_strict(
        list(VULNERABILITY_ALIASES),
        [VULNERABILITIES.index(v) for v in VULNERABILITY_ALIASES.values()],
        default=None,
        return_dtype=pl.Int64,
    )
