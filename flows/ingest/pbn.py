"""PBN files in the landing folder: bridge events read by the `score` command's parser.

A PBN file is one event (its id is the file name before the first dot, as `duplirank score`
names it). Its records (the event, each traveller line or played board) are checked against
the same declarations as JSON Lines records; a game the parser skips is quarantined with the
parser's reason. For a PBN file a "line" of the ingest log is one of those: lines_read =
records + skipped games (not the file's physical lines, most of which are tags).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from flows.ingest.context import Context
from flows.ingest.event_file import stage_event_file
from transforms.bridge.pbn import decode_pbn, parse_pbn

MAX_PBN_BYTES = 256 * 2**20


def ingest_pbn(ctx: Context, index: int, path: Path, name: str | None = None) -> None:
    """Stage the records of one PBN (or USEBIO `.xml`: `flows.ingest.usebio`) file (`name`:
    the file it was delivered as, if not `path`: a replayed file's kept copy)."""
    name = name or str(path)
    if name.lower().endswith(".xml"):
        from flows.ingest.usebio import ingest_usebio

        ingest_usebio(ctx, index, path, name)
        return
    report = ctx.sink.reports[index]
    if report.size is not None and report.size > MAX_PBN_BYTES:
        raise OSError(f"PBN file larger than {MAX_PBN_BYTES} bytes")
    data = path.read_bytes()
    report.sha256 = hashlib.sha256(data).hexdigest()
    event_id = Path(name).name.split(".")[0]
    parsed = parse_pbn(data, name, event_id, delivery=report.delivery)
    lines = decode_pbn(data)[0].splitlines()
    skipped = [(n, _line(lines, n), reason, "pbn") for n, reason in parsed.skipped]
    stage_event_file(ctx, index, parsed.frames, skipped)


def _line(lines: list[str], line_no: int) -> str:
    return lines[line_no - 1] if 0 < line_no <= len(lines) else ""
