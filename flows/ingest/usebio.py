"""USEBIO files (`.xml`) in the landing folder: bridge events, read like PBN files
(`flows.ingest.pbn`): one event a file, its id the file name before the first dot, its records
checked against the same declarations as JSON Lines records.

What the parser sets aside is quarantined with its reason: a traveller line it cannot read, and
each element it does not know (read past, reported once per element name, rule
`usebio_unknown_element`). A file that is not a USEBIO pairs event (not XML, a DOCTYPE or
entity declaration, another event type) is quarantined whole, as one line with the reason.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from flows.ingest.context import Context
from flows.ingest.event_file import stage_event_file
from transforms.bridge.usebio import parse_usebio

MAX_USEBIO_BYTES = 256 * 2**20


def ingest_usebio(ctx: Context, index: int, path: Path, name: str) -> None:
    report = ctx.sink.reports[index]
    if report.size is not None and report.size > MAX_USEBIO_BYTES:
        raise OSError(f"USEBIO file larger than {MAX_USEBIO_BYTES} bytes")
    data = path.read_bytes()
    report.sha256 = hashlib.sha256(data).hexdigest()
    event_id = Path(name).name.split(".")[0]
    try:
        parsed = parse_usebio(data, name, event_id, delivery=report.delivery)
    except ValueError as err:
        stage_event_file(
            ctx, index, {}, [(1, data[:1024].decode("utf-8", "replace"), str(err), "usebio")]
        )
        return
    skipped = [(1, "", reason, "usebio") for reason in parsed.skipped]
    skipped += [
        (
            1,
            f"<{tag}>",
            f"unknown USEBIO element <{tag}> read past ({n}×)",
            "usebio_unknown_element",
        )
        for tag, n in sorted(parsed.unknown.items())
    ]
    stage_event_file(ctx, index, parsed.frames, skipped)
