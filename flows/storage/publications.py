"""Publications as records: when each was current, what it rebuilt, which ones are official.

A publication became current when its run swapped the pointer (the time its `published`
marker holds) and stopped being current when the next publication did. Official ones are kept
for ever (`retention.keep_official`):

- the publication current at the end of each month, in the platform time zone (the month's
  announced ranking), once that month has ended;
- a backfill's publication that changed a month already announced (its months' end had passed
  when it ran): what was published instead of the announced results.

`history` lists the publications still stored (oldest first); `find` resolves what `sql
--as-of` names: a publication number, or a time (the publication current then).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from flows.errors import UserError
from flows.storage import manifest as mf
from flows.storage.manifest import ManifestError
from flows.storage.published import MANIFEST, PUBLICATIONS, PUBLISHED, Published


@dataclasses.dataclass
class Publication:
    folder: str
    version: int
    run_id: str | None
    command: str | None
    created_at: datetime | None
    current_from: datetime | None  # None: never current (a crashed commit)
    current_until: datetime | None = None  # None: still current, or no later one
    is_current: bool = False
    changed_months: list[str] = dataclasses.field(default_factory=list)
    changed: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    official: str | None = None  # why it is kept for ever, if it is
    next_kept: bool = False  # the publication that replaced it is still stored

    def rebuilt(self) -> str:
        """What it rebuilt, in a few words (the months of the partitions it changed)."""
        if self.changed_months:
            return ", ".join(self.changed_months)
        return ", ".join(sorted(self.changed)) if self.changed else ""


def month_end(month: str, timezone: str) -> datetime:
    """The end of a month (the first instant of the next) in the platform time zone, in UTC."""
    year, number = int(month[:4]), int(month[5:7])
    year, number = (year + 1, 1) if number == 12 else (year, number + 1)
    return datetime(year, number, 1, tzinfo=ZoneInfo(timezone)).astimezone(UTC)


def month_of(moment: datetime, timezone: str) -> str:
    return moment.astimezone(ZoneInfo(timezone)).strftime("%Y-%m")


def _time(text: str | bytes | None) -> datetime | None:
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    text = (text or "").strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def history(
    wh: Published,
    timezone: str,
    now: datetime | None = None,
    read: Callable[[str], dict] | None = None,
) -> list[Publication]:
    """The stored publications with a readable manifest, oldest first, each with when it was
    current and whether it is official. `read(folder)`: the validated manifest of a
    publication folder (ManifestError or FileNotFoundError when it has none), if the caller
    reads them itself."""
    read = read or (lambda folder: mf.parse(wh.store.read_bytes(f"{folder}/{MANIFEST}"), folder))
    current = wh.store.read_pointer()
    records: list[Publication] = []
    for name in wh.store.folders(PUBLICATIONS):
        folder = f"{PUBLICATIONS}/{name}"
        try:
            manifest = read(folder)
        except (ManifestError, FileNotFoundError):
            continue
        created = _time(manifest.get("created_at"))
        marker = None
        if wh.store.has(f"{folder}/{PUBLISHED}"):
            marker = _time(wh.store.read_bytes(f"{folder}/{PUBLISHED}")) or created
        elif folder == current:
            marker = created
        changed = manifest.get("changed", {})
        months = sorted(
            {m for keys in changed.values() for k in keys if (m := mf.partition_month(k))}
        )
        records.append(
            Publication(
                folder=folder,
                version=manifest["version"],
                run_id=manifest.get("run_id"),
                command=manifest.get("command"),
                created_at=created,
                current_from=marker,
                is_current=folder == current,
                changed_months=months,
                changed=changed,
            )
        )
    records.sort(key=lambda p: p.version)
    published = [p for p in records if p.current_from is not None]
    for before, after in zip(published, published[1:], strict=False):
        before.current_until = after.current_from  # later, if the next one was collected
        before.next_kept = after.version == before.version + 1
    _mark_official(published, timezone, now or datetime.now(UTC))
    return records


def _mark_official(published: list[Publication], timezone: str, now: datetime) -> None:
    if not published:
        return
    first = month_of(published[0].current_from, timezone)
    month = first
    while (end := month_end(month, timezone)) <= now:
        holder = None
        for record in published:  # the last one that became current before the month ended
            if record.current_from <= end:
                holder = record
        if holder is not None and holder.official is None:
            holder.official = f"current at the end of {month}"
        month = month_of(end, timezone)
    for record in published:
        if record.command != "backfill" or record.created_at is None:
            continue
        announced = [
            m for m in record.changed_months if month_end(m, timezone) <= record.created_at
        ]
        if announced:
            record.official = f"backfill changing announced {', '.join(announced)}"


def find(wh: Published, spec: str, timezone: str) -> Publication:
    """The kept publication `spec` names: its number, or a time `YYYY-MM-DDTHH:MM` (platform
    time zone; the publication current then)."""
    records = [p for p in history(wh, timezone) if p.current_from is not None]
    if spec.isdigit():
        for record in records:
            if record.version == int(spec):
                return record
        raise UserError(
            f"publication {spec} is not kept in {wh.store.url} (`duplirank publications` lists "
            "those that are)"
        )
    try:
        moment = datetime.strptime(spec, "%Y-%m-%dT%H:%M")
    except ValueError:
        raise UserError(
            f"--as-of {spec!r}: give a publication number or a time YYYY-MM-DDTHH:MM"
        ) from None
    moment = moment.replace(tzinfo=ZoneInfo(timezone)).astimezone(UTC)
    then = [r for r in records if r.current_from <= moment]
    if not then:
        raise UserError(f"no publication of {wh.store.url} was current at {spec} ({timezone})")
    record = then[-1]
    if not record.is_current and not (record.next_kept and moment < record.current_until):
        raise UserError(f"the publication current at {spec} ({timezone}) is no longer kept")
    return record
