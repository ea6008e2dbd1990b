"""Validate lines or bytes in memory, without a warehouse: the reader and checks of the ingest
(for `duplirank score`, tests and the generators' own checks)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl

from flows.ingest.checked import QUARANTINE, RUNS
from flows.ingest.file_check import FileCheck
from flows.ingest.file_stream import FileStream
from flows.ingest.options import IngestOptions, Window
from flows.ingest.stage import quarantine_lines
from flows.ingest.validate import Validator
from transforms.record_types import RECORD_TYPES


@dataclass
class Validated:
    """Rows of one file: typed rows per record type, and quarantined lines."""

    rows: dict[str, pl.DataFrame]
    quarantine_rows: pl.DataFrame  # line_no, raw, reason, rule
    lines_read: int

    def frames(self) -> dict[str, pl.DataFrame]:
        """Bronze-shaped frames (month null) of the record types that have rows."""
        return {name: rows.select(*RECORD_TYPES[name].schema()) for name, rows in self.rows.items()}

    @property
    def quarantine(self) -> list[dict]:
        """Quarantined lines as dicts (file, line_no, raw, reason, rule), in line order."""
        return self.quarantine_rows.sort("line_no").to_dicts()

    @property
    def accepted(self) -> int:
        return sum(f.height for f in self.rows.values())


def validate_bytes(
    data: bytes,
    source: str,
    delivery: int = 0,
    known_types: Iterable[str] | None = None,
    window: Window | None = None,
) -> Validated:
    """Validate the content of one file (gzip, UTF-16 and BOMs read as the ingest does).

    `known_types` limits the record types accepted (others are `unknown type`); `window`
    (default: none) quarantines times outside it.
    """
    types = RECORD_TYPES if known_types is None else {t: RECORD_TYPES[t] for t in known_types}
    validator = Validator(window, types)
    stream = FileStream(data, source, IngestOptions())
    check = FileCheck(source, delivery)
    parts: dict[str, list[pl.DataFrame]] = {}
    rejected = [pl.DataFrame(schema=QUARANTINE | RUNS)]
    lines = 0
    try:
        for chunk in stream.chunks():
            check.encoding = stream.encoding
            checked = validator.check(chunk, check)
            lines += chunk.lines
            rejected.append(checked.quarantine)
            for name, rows in checked.rows.items():
                parts.setdefault(name, []).append(rows)
    finally:
        validator.close()
    rows = {name: pl.concat(frames).sort("line_no") for name, frames in parts.items()}
    quarantine = pl.concat(rejected).with_columns(pl.lit(source).alias("file"))
    quarantine = quarantine_lines(quarantine)  # a row per line, not per run of the same line
    return Validated(rows, quarantine.select("file", *QUARANTINE), lines)


def validate_lines(
    lines: Iterable[bytes | str],
    source: str,
    delivery: int = 0,
    known_types: Iterable[str] | None = None,
    window: Window | None = None,
) -> Validated:
    """`validate_bytes` of lines (without their line ends)."""
    data = b"".join(
        (x if isinstance(x, bytes) else x.encode("utf-8", "surrogatepass")) + b"\n" for x in lines
    )
    return validate_bytes(data, source, delivery, known_types, window)
