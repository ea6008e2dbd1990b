"""What an ingest did (`IngestResult`) and its part of a run's summary: files, lines, the counts
by quarantine reason, and the files quarantined whole."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the nothing-new nightly reports without loading Polars
    from flows.ingest.log import FileReport

SHOWN_REASONS = 12


@dataclass
class IngestResult:
    files: list[FileReport] = field(default_factory=list)
    # record type -> months that received rows in this run
    months: dict[str, set[str]] = field(default_factory=dict)
    # this run's quarantined lines per rule: (rule, lines, an example reason, distinct reasons)
    quarantined: list[tuple[str, int, str, int]] = field(default_factory=list)
    replayed: int = 0  # quarantined lines moved to bronze (late parents, replay)

    def touched(self, *record_types: str) -> set[str]:
        return set().union(*(self.months.get(t, set()) for t in record_types))

    def text(self) -> str:
        """The ingest part of a run's summary."""
        return ingest_text(self)


def ingest_text(result: IngestResult) -> str:
    files = result.files
    read = sum(f.lines_read for f in files if f.status != "replayed")
    accepted = sum(f.rows_accepted for f in files if f.status != "replayed")
    rejected = sum(f.rows_quarantined for f in files if f.status != "replayed")
    already = sum(f.status == "already_ingested" for f in files)
    whole = [f for f in files if f.status == "unreadable"]
    skipped = [f for f in files if f.logged and f.status.startswith(("skipped", "refused"))]
    errors = [f for f in files if f.status.startswith("error")]
    lines = [
        f"files: {len(files)} ({already} already ingested, {len(whole)} unreadable, "
        f"{len(skipped)} not read); lines read: {read}, rows accepted: {accepted}, "
        f"rows quarantined: {rejected}"
    ]
    counts = result.quarantined
    if counts:
        shown = [
            f"{n} × {example}" if reasons == 1 else f"{n} × {rule} (e.g. {example})"
            for rule, n, example, reasons in counts[:SHOWN_REASONS]
        ]
        more = len(counts) - SHOWN_REASONS
        lines.append(
            "quarantined by reason: " + "; ".join(shown) + (f"; … {more} more" if more > 0 else "")
        )
    lines += [f"quarantined whole (bytes kept for --replay-quarantine): {f.file}" for f in whole]
    lines += [f"not read: {f.file}: {f.status}" for f in skipped + errors]
    if result.replayed:
        lines.append(f"replayed from quarantine into bronze: {result.replayed} lines")
    return "\n".join(lines)
