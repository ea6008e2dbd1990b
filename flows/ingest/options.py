"""Settings of the ingest (`settings.ingest`), and the plausible time window of a run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta


@dataclass(frozen=True)
class IngestOptions:
    # A timestamp (or date) before `earliest` or after the run date + `days_ahead` days is
    # implausible: its line is quarantined. The run date is the nightly's `--date`, else today.
    earliest: date = date(2000, 1, 1)
    days_ahead: int = 2
    # Files are read and validated `chunk_bytes` at a time, and at most `chunk_lines` lines
    # (memory is bounded by a chunk whatever its lines: a 32 MiB chunk of ~330-byte records
    # is ~100,000 lines; of empty lines, 32 million); a line longer than `max_line_bytes` is
    # quarantined without being read whole.
    chunk_bytes: int = 32 * 2**20
    chunk_lines: int = 2**17
    max_line_bytes: int = 2**20

    def __post_init__(self) -> None:
        if self.days_ahead < 0:
            raise ValueError(f"ingest.days_ahead must be 0 or more, not {self.days_ahead}")
        for name in ("chunk_bytes", "chunk_lines", "max_line_bytes"):
            if getattr(self, name) < 64:
                raise ValueError(f"ingest.{name} must be at least 64, not {getattr(self, name)}")


@dataclass(frozen=True)
class Window:
    """Plausible instants of a run: [first, end) in UTC; dates within [first, last day]."""

    first: datetime
    end: datetime

    @classmethod
    def around(cls, opts: IngestOptions, run_date: date | None = None) -> Window:
        last = (run_date or datetime.now(UTC).date()) + timedelta(days=opts.days_ahead)
        start = datetime.combine(opts.earliest, time(), UTC)
        return cls(start, datetime.combine(last + timedelta(days=1), time(), UTC))

    @property
    def text(self) -> str:
        last = (self.end - timedelta(days=1)).date()
        return f"{self.first.date().isoformat()}..{last.isoformat()}"
