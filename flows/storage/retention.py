"""Garbage collection by "stopped being current", `verify` and `recover`.

A publication's files are kept while it is current, for `retention_days` after it stopped
being current (after the next publication became current: a connection or a query opened on it
keeps answering after any quiet period), always for the publication current before the current
one, and for ever for official publications (`publications.py`: current at a month's end, or a
backfill that changed an announced month; `retention.keep_official`). A file no kept
publication lists is deleted, only after a successful publication (never in a command that
then fails) or by `duplirank gc`, which can show what it would delete (`--dry-run`). Nothing is
deleted on the word of a manifest that fails validation: if a publication's manifest cannot be
read while it may be within the retention period, collection is skipped.

On object storage there is no lock: a run on another machine may be writing files and its
publication folder right now. There, an unlisted object (data file or unpublished publication
folder) younger than the store's grace period (`storage.gc_grace_hours`) is never deleted.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from flows.errors import UserError
from flows.storage import manifest as mf
from flows.storage.manifest import LAYERS, ManifestError
from flows.storage.published import DATABASE, MANIFEST, PUBLICATIONS, PUBLISHED, Published
from flows.storage.store import STAGING
from transforms.option_checks import PLATFORM_TIMEZONE


@dataclasses.dataclass(frozen=True)
class RetentionPolicy:
    """How long publications are kept (settings `retention_days`, `retention.keep_official`,
    `timezone`: month ends are the platform's)."""

    days: float = 7.0
    keep_official: bool = True
    timezone: str = PLATFORM_TIMEZONE


@dataclasses.dataclass(frozen=True)
class Collected:
    """What a garbage collection deleted, or, in a dry run, would delete; `str()` is the
    report `duplirank gc` prints."""

    dry_run: bool = False
    files: tuple[str, ...] = ()  # data files no kept publication lists
    bytes: int = 0  # their size
    publications: tuple[str, ...] = ()  # publication folders past their retention
    kept: tuple[str, ...] = ()  # publication folders kept, with every file they list
    skipped: str | None = None  # why nothing was collected

    def __str__(self) -> str:
        if self.skipped:
            return f"nothing collected: {self.skipped}"
        verb = "would delete" if self.dry_run else "deleted"
        lines = [
            f"{verb} {len(self.files)} files ({self.bytes:,} bytes) and "
            f"{len(self.publications)} publications; kept {len(self.kept)} publications"
        ]
        lines += [f"  {verb} {folder}" for folder in self.publications]
        return "\n".join(lines)


def publications(wh: Published) -> list[str]:
    """Publication folders, oldest first."""
    return [f"{PUBLICATIONS}/{name}" for name in wh.store.folders(PUBLICATIONS)]


def read_publication(wh: Published, folder: str) -> dict:
    """The validated manifest of a publication folder (ManifestError if it is not valid)."""
    try:
        data = wh.store.read_bytes(f"{folder}/{MANIFEST}")
    except FileNotFoundError:
        raise ManifestError(f"{folder} has no manifest") from None
    return mf.parse(data, folder)


def read_publications(wh: Published) -> Callable[[str], dict]:
    """`read_publication` of this warehouse, each folder's manifest read and validated once
    (a manifest that is not valid raises its ManifestError each time)."""
    read: dict[str, dict | ManifestError] = {}

    def manifest(folder: str) -> dict:
        if folder not in read:
            try:
                read[folder] = read_publication(wh, folder)
            except ManifestError as err:
                read[folder] = err
        found = read[folder]
        if isinstance(found, ManifestError):
            raise ManifestError(str(found))
        return found

    return manifest


def kept_publications(
    wh: Published,
    policy: RetentionPolicy,
    now: datetime | None = None,
    read: Callable[[str], dict] | None = None,
) -> set[str]:
    """The published publications whose files are kept (see the module's docstring);
    `read`: how their manifests are read (`read_publications`)."""
    from flows.storage.publications import history

    now = now or datetime.now(UTC)
    cutoff = now - timedelta(days=policy.days)
    records = [r for r in history(wh, policy.timezone, now, read) if r.current_from is not None]
    kept = set()
    ended = sorted(
        (r for r in records if not r.is_current and r.current_until is not None),
        key=lambda r: r.current_until,
    )
    if ended:
        kept.add(ended[-1].folder)  # the previous current one, always
    for record in records:
        if (
            record.is_current
            or record.current_until is None  # no later one: it may be current again
            or record.current_until >= cutoff
            or (policy.keep_official and record.official)
        ):
            kept.add(record.folder)
    return kept


def collect_garbage(
    wh: Published, policy: RetentionPolicy | float, dry_run: bool = False
) -> Collected:
    """Delete what no kept publication lists (`dry_run`: only say what); returns what it
    deleted (would delete)."""
    if not isinstance(policy, RetentionPolicy):
        policy = RetentionPolicy(float(policy))
    now = datetime.now(UTC)
    cutoff = now - timedelta(days=policy.days)
    current = wh.publication()
    grace = wh.store.gc_grace_s
    young = time.time() - grace  # on object storage: newer may belong to a run in flight
    read = read_publications(wh)  # each manifest read once: for what is kept, for its files
    keep = kept_publications(wh, policy, now, read)
    listed: set[str] = set()
    kept: list[str] = []
    expired: list[str] = []
    for folder in publications(wh):
        if folder != current and not wh.store.has(f"{folder}/{PUBLISHED}"):
            # a commit that crashed before its swap (never published), or, on object storage,
            # maybe one in flight on another machine: kept through the grace period
            if not grace or not _written_since(wh, folder, young):
                expired.append(folder)
            continue
        try:
            manifest = read(folder)
        except ManifestError:
            if folder == current or _age_ok(wh, folder, cutoff):
                # an unreadable publication (a crashed commit, damage): it may list files we
                # cannot know of — keep everything while it may be within the retention period
                why = f"the manifest of {folder} cannot be read (`duplirank recover`)"
                return Collected(dry_run, skipped=why)
            expired.append(folder)
            continue
        if folder in keep or folder == current:
            kept.append(folder)
            listed |= set(mf.files(manifest))
        else:
            expired.append(folder)
    if current is not None and not current.startswith(PUBLICATIONS + "/"):
        listed |= set(mf.files(wh.manifest()))  # a copy that followed the `current` link
    unlisted = [
        entry
        for layer in LAYERS
        for entry in wh.store.list(layer)
        if entry.path not in listed and not (grace and entry.mtime > young)
    ]
    result = Collected(
        dry_run,
        files=tuple(entry.path for entry in unlisted),
        bytes=sum(entry.size for entry in unlisted),
        publications=tuple(expired),
        kept=tuple(kept),
    )
    if not dry_run:
        for path in result.files:
            wh.store.delete(path)
        for layer in LAYERS:
            wh.store.prune_empty_folders(layer)
        for folder in expired:
            wh.store.delete_tree(folder)
        if wh.store.kind == "local":
            wh.store.delete_tree(STAGING)  # runs hold the lock: no other run is staging
    return result


def remove_run_files(wh: Published, run_id: str) -> int:
    """Delete the files a run wrote and did not publish (its data files are named
    `<run id>-…`, its publication folder `…-<run id>`): a failed run gives back its space."""
    removed = 0
    for layer in LAYERS:
        for entry in wh.store.list(layer):
            if entry.path.rsplit("/", 1)[-1].startswith(f"{run_id}-"):
                wh.store.delete(entry.path)
                removed += 1
    for folder in publications(wh):
        if folder.endswith(f"-{run_id}"):
            wh.store.delete_tree(folder)
    return removed


def _age_ok(wh: Published, folder: str, cutoff: datetime) -> bool:
    """True if a folder was written within the retention period (by its files' times)."""
    times = [e.mtime for e in wh.store.list(folder)]
    newest = max(times) if times else time.time()
    return datetime.fromtimestamp(newest, UTC) >= cutoff


def _written_since(wh: Published, folder: str, since: float) -> bool:
    """True if any file of a folder was written after `since` (seconds since the epoch)."""
    return any(e.mtime > since for e in wh.store.list(folder))


BRONZE_REPAIR = " (`duplirank repair` rebuilds it from the landing folder)"


def _bronze(path: str) -> bool:
    return path.startswith("bronze/")


def verify(wh: Published) -> list[str]:
    """Problems of the current publication: every listed file against its checksum, and its
    views database against the manifest (`served.database_problem`)."""
    problems = []
    manifest = wh.manifest()
    for path, entry in sorted(mf.files(manifest).items()):
        problem = wh.store.check(path, entry["sha256"], entry["bytes"], deep=True)
        if problem is not None:
            problems.append(f"{problem}: {path}" + (BRONZE_REPAIR if _bronze(path) else ""))
    pointer = wh.publication()
    if pointer is not None:
        from flows.storage.served import database_problem

        problem = database_problem(wh, pointer, manifest)
        if problem is not None:
            problems.append(f"{problem}: {pointer}/{DATABASE}")
    return problems


def recover(wh: Published) -> str:
    """Point `current` at the newest publication whose manifest and files are all intact."""
    from flows.storage.served import repair_database

    current = wh.store.read_pointer()
    for folder in reversed(publications(wh)):
        if folder != current and not wh.store.has(f"{folder}/{PUBLISHED}"):
            continue  # never published (a commit that crashed before its swap)
        try:
            manifest = read_publication(wh, folder)
        except ManifestError:
            continue
        intact = all(
            wh.store.check(p, e["sha256"], e["bytes"], deep=True) is None
            for p, e in mf.files(manifest).items()
        )
        if not intact:
            continue
        repair_database(wh, folder, manifest)  # missing, damaged, built for another folder
        if current != folder:
            wh.store.swap_pointer(folder, current)
        wh.store.ensure_link(DATABASE, f"current/{DATABASE}")
        wh.store.ensure_link(MANIFEST, f"current/{MANIFEST}")
        return folder
    raise UserError(f"warehouse {wh.store.url}: no intact publication to recover")
