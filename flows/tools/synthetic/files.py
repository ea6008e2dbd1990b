"""`duplirank generate`: write realistic synthetic raw logs, one JSON Lines file per day and game.

Files are named `<game>-YYYY-MM-DD.jsonl` (`simultane`, `ff`, `bridge`); every other day is
gzipped (`.jsonl.gz`, with mtime 0 so the bytes are reproducible). The logs of each game come
from its module: `simultane`, `face_a_face`, `bridge`. The committed sample `data/sample/` is
`generate(out, players=40, days=3, seed=1, start=2026-10-30)` (a test checks it byte for byte).
"""

from __future__ import annotations

import gzip
import json
from datetime import date, datetime
from pathlib import Path

from flows.tools.synthetic.bridge import bridge_lines
from flows.tools.synthetic.face_a_face import ff_lines
from flows.tools.synthetic.platform import PARIS, player_ids
from flows.tools.synthetic.simultane import simultane_log

# fields that date a record, in order of preference, and the ids that tie records to it
DATE_FIELDS = (
    "date",
    "tournament_start",
    "created_at",
    "scheduled_at",
    "started_at",
    "disconnected_at",
)
ID_FIELDS = ("match_id", "event_id", "tournament_id")


def _day_of(value: str) -> date | None:
    """Paris calendar date of an ISO timestamp (or the date itself), None if not one."""
    try:
        if len(value) == 10:
            return date.fromisoformat(value)
        stamp = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return None
    return stamp.astimezone(PARIS).date() if stamp.tzinfo else stamp.date()


def split_by_day(lines: list[str], default: date) -> dict[date, list[str]]:
    """Group lines by the Paris date of their record, keeping their order.

    A record that names a match/event/tournament already seen goes with it (a match's deals
    after midnight stay in the match's file); else its own first date field decides; a line
    that cannot be read (a corrupted one) stays with the line before it.
    """
    by_day: dict[date, list[str]] = {}
    id_day: dict[tuple[str, str], date] = {}
    day = default
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            ids = [(k, obj[k]) for k in ID_FIELDS if isinstance(obj.get(k), str)]
            found = next((id_day[i] for i in ids if i in id_day), None)
            for name in DATE_FIELDS:
                if found is None and isinstance(obj.get(name), str):
                    found = _day_of(obj[name])
            if found is not None:
                day = found
                for i in ids:
                    id_day.setdefault(i, day)
        by_day.setdefault(day, []).append(line)
    return by_day


def _write(path: Path, lines: list[str]) -> None:
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)


def generate(out: Path, players: int, days: int, seed: int, start: date) -> list[Path]:
    """Write the logs of `days` days from `start` into `out`; returns the files written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    per_game: dict[str, dict[date, list[str]]] = {
        "simultane": {d.day: d.lines for d in simultane_log(seed, players, start, days).days},
        "ff": split_by_day(ff_lines(seed, player_ids(players), start, days), start),
        "bridge": split_by_day(bridge_lines(seed, days, start, days), start),
    }
    written = []
    for game, by_day in per_game.items():
        for day in sorted(by_day):
            gz = ".gz" if (day - start).days % 2 == 1 else ""
            path = out / f"{game}-{day.isoformat()}.jsonl{gz}"
            _write(path, by_day[day])
            written.append(path)
    return written
