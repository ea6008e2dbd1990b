"""Garbage collection with a retention period, `verify` and `recover`.

A file is deleted only when no publication of the last `retention_days` lists it (so
connections and queries opened on a recent publication keep working, as with Delta's and
Iceberg's 7-day defaults) and only after a successful publication (never in a command that then
fails). Nothing is deleted on the word of a manifest that fails validation: if any retained
publication's manifest cannot be read, collection is skipped.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from flows.errors import UserError
from flows.storage import manifest as mf
from flows.storage.manifest import LAYERS, ManifestError
from flows.storage.store import STAGING
from flows.storage.warehouse import MANIFEST, PUBLICATIONS, PUBLISHED, Warehouse, sha256_file


def publications(wh: Warehouse) -> list[str]:
    """Publication folders, oldest first."""
    return [f"{PUBLICATIONS}/{name}" for name in wh.store.folders(PUBLICATIONS)]


def read_publication(wh: Warehouse, folder: str) -> dict:
    """The validated manifest of a publication folder (ManifestError if it is not valid)."""
    try:
        data = wh.store.read_bytes(f"{folder}/{MANIFEST}")
    except FileNotFoundError:
        raise ManifestError(f"{folder} has no manifest") from None
    return mf.parse(data, folder)


def collect_garbage(wh: Warehouse, retention_days: float) -> int:
    """Delete what no publication of the retention period lists; returns files deleted."""
    current = wh.publication()
    cutoff = datetime.now(UTC) - timedelta(days=retention_days)
    kept: list[str] = []
    expired: list[str] = []
    listed: set[str] = set()
    for folder in publications(wh):
        if folder != current and not wh.store.has(f"{folder}/{PUBLISHED}"):
            expired.append(folder)  # a commit that crashed before its swap: never published
            continue
        try:
            manifest = read_publication(wh, folder)
        except ManifestError:
            if folder == current:
                return 0
            # an unreadable publication (a crashed commit, damage): it may list files we
            # cannot know of — keep everything while it is within the retention period
            if _age_ok(wh, folder, cutoff):
                return 0
            expired.append(folder)
            continue
        created = datetime.fromisoformat(manifest["created_at"]) if manifest.get(
            "created_at") else None  # fmt: skip
        if folder == current or created is None or created >= cutoff:
            kept.append(folder)
            listed |= set(mf.files(manifest))
        else:
            expired.append(folder)
    removed = 0
    for layer in LAYERS:
        for entry in wh.store.list(layer):
            if entry.path not in listed:
                wh.store.delete(entry.path)
                removed += 1
        wh.store.prune_empty_folders(layer)
    for folder in expired:
        wh.store.delete_tree(folder)
    wh.store.delete_tree(STAGING)
    return removed


def remove_run_files(wh: Warehouse, run_id: str) -> int:
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


def _age_ok(wh: Warehouse, folder: str, cutoff: datetime) -> bool:
    """True if a folder was written within the retention period (by its files' times)."""
    times = [e.mtime for e in wh.store.list(folder)]
    newest = max(times) if times else time.time()
    return datetime.fromtimestamp(newest, UTC) >= cutoff


def verify(wh: Warehouse) -> list[str]:
    """Problems of the current publication: every listed file against its checksum."""
    problems = []
    manifest = wh.manifest()
    for path, entry in sorted(mf.files(manifest).items()):
        local = wh.store.local(path)
        if not local.exists():
            problems.append(f"missing: {path}")
        elif local.stat().st_size != entry["bytes"] or sha256_file(local) != entry["sha256"]:
            problems.append(f"damaged: {path}")
    pointer = wh.publication()
    if pointer is not None and not wh.store.has(f"{pointer}/duplirank.duckdb"):
        problems.append(f"missing: {pointer}/duplirank.duckdb")
    return problems


def recover(wh: Warehouse) -> str:
    """Point `current` at the newest publication whose manifest and files are all intact."""
    from flows.storage.views import build_database

    current = wh.store.read_pointer()
    for folder in reversed(publications(wh)):
        if folder != current and not wh.store.has(f"{folder}/{PUBLISHED}"):
            continue  # never published (a commit that crashed before its swap)
        try:
            manifest = read_publication(wh, folder)
        except ManifestError:
            continue
        intact = all(
            wh.store.local(p).exists() and sha256_file(wh.store.local(p)) == e["sha256"]
            for p, e in mf.files(manifest).items()
        )
        if not intact:
            continue
        if not wh.store.has(f"{folder}/duplirank.duckdb"):
            build_database(wh, manifest, f"{folder}/duplirank.duckdb")
        if current != folder:
            wh.store.swap_pointer(folder, current)
        wh.store.ensure_link("duplirank.duckdb", "current/duplirank.duckdb")
        wh.store.ensure_link(MANIFEST, f"current/{MANIFEST}")
        return folder
    raise UserError(f"warehouse {wh.store.url}: no intact publication to recover")
