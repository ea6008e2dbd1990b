"""The manifest: which files make each table partition of one publication.

    {"format": 2, "version": 7, "parent": 6, "run_id": "…", "created_at": "…",
     "command": "nightly", "changed": {table: [partition key, …]},
     "dirty": {competition: [partition month, …]},
     "tables": {table: {"layer": "silver", "partitions": {key: [{"path", "sha256", "bytes"}]}}},
     "database": {"sha256", "bytes"}, "site": sha256 of the site's page index,
     "checksum": sha256 of the canonical JSON of everything else}

`database` is the views database served with the publication (`duplirank.duckdb` in its
folder), `site` the fingerprint of the results site built from it (flows/storage/served.py).
The database is built before the manifest is written; the site after the publication is
current. The manifest is rewritten with the new entry when either is (re)built (`relink` for a
warehouse's new place, `recover` and the runs for a damaged one); nothing else in a manifest
ever changes.

A manifest is trusted only after `parse` has checked its checksum, its shape and every path
(relative, inside a data layer, nothing like `..`): nothing is read or deleted on the word of a
manifest that failed validation. The operations a run stages (flows/storage/operations.py:
`PutFile`, `AddFile`, `RemovePartition`, `MarkDirty`, `MarkClean`) are applied by
`apply_ops`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from flows.storage.operations import (
    AddFile,
    MarkClean,
    MarkDirty,
    Operation,
    PutFile,
    RemovePartition,
)

FORMAT = 2
LAYERS = ("bronze", "silver", "gold", "quarantine", "meta")
_SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9_.=:+-]*"
DATA_PATH = re.compile(
    rf"^(?:{'|'.join(LAYERS)})/[a-z0-9_]+(?:/{_SEGMENT})*/[A-Za-z0-9_][A-Za-z0-9_.-]*$"
)
PARTITION = re.compile(rf"^{_SEGMENT}(?:/{_SEGMENT})*$")
TABLE = re.compile(r"^[a-z][a-z0-9_]*$")


class ManifestError(Exception):
    """A manifest that cannot be trusted (missing, empty, corrupt, forged)."""


Sha = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
DataPath = Annotated[str, StringConstraints(pattern=DATA_PATH.pattern)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class FileEntry(_Strict):
    path: DataPath
    sha256: Sha
    bytes: int = Field(ge=0)


class ServedFile(_Strict):
    sha256: Sha
    bytes: int = Field(ge=0)


class TableEntry(_Strict):
    layer: Literal["bronze", "silver", "gold", "quarantine", "meta"]
    partitions: dict[str, list[FileEntry]]


class Manifest(_Strict):
    format: Literal[2]
    version: int = Field(ge=0)
    parent: int | None = None
    run_id: str | None = None
    created_at: str | None = None
    command: str | None = None  # the command that published it (nightly, backfill, …)
    changed: dict[str, list[str]] = {}  # partitions whose files differ from its parent's
    dirty: dict[str, list[str]] = {}
    tables: dict[str, TableEntry] = {}
    database: ServedFile | None = None  # the views database (older publications: none)
    site: Sha | None = None  # the results site built from it (none yet, or no site)
    checksum: Sha


def empty() -> dict:
    """The state of a warehouse before its first publication."""
    return {"format": FORMAT, "version": 0, "parent": None, "dirty": {}, "tables": {}}


def checksum(manifest: dict) -> str:
    body = {k: v for k, v in manifest.items() if k != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def dumps(manifest: dict) -> bytes:
    """The manifest with its checksum, as stored."""
    signed = {k: v for k, v in manifest.items() if k != "checksum"}
    signed["checksum"] = checksum(signed)
    return (json.dumps(signed, indent=1, sort_keys=True) + "\n").encode()


def parse(data: bytes, where: str) -> dict:
    """A validated manifest, or ManifestError saying what is wrong with it."""
    try:
        raw = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ManifestError(f"{where} is not valid JSON") from None
    if not isinstance(raw, dict) or not raw:
        raise ManifestError(f"{where} is empty")
    try:
        Manifest.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        place = ".".join(str(p) for p in first["loc"])
        raise ManifestError(f"{where} is malformed ({place}: {first['msg']})") from None
    if raw["checksum"] != checksum(raw):
        raise ManifestError(f"{where} does not match its checksum (modified or damaged)")
    for table, entry in raw["tables"].items():
        if not TABLE.match(table):
            raise ManifestError(f"{where} names a bad table {table!r}")
        for key in entry["partitions"]:
            if not PARTITION.match(key):
                raise ManifestError(f"{where} names a bad partition {key!r}")
    return raw


def files(manifest: dict) -> dict[str, dict]:
    """Every listed file entry by path."""
    return {
        f["path"]: f
        for entry in manifest["tables"].values()
        for entries in entry["partitions"].values()
        for f in entries
    }


def table_files(manifest: dict, table: str, partitions: list[str] | None = None) -> list[dict]:
    """File entries of a table (some partitions — a key or a key prefix — or all)."""
    entry = manifest["tables"].get(table)
    if entry is None:
        return []
    parts = entry["partitions"]
    if partitions is None:
        keys = sorted(parts)
    else:
        keys = sorted(k for k in parts if any(k == p or k.startswith(p + "/") for p in partitions))
    return [f for k in keys for f in parts[k]]


def apply_ops(manifest: dict, ops: Iterable[Operation]) -> dict:
    """Apply staged operations to a manifest (a new dict is returned).

    Copy on write: the result shares with `manifest` every table, partition list and file
    entry the operations leave alone (neither is changed in place afterwards), so applying a
    run's few operations costs those operations, not the size of the warehouse's manifest."""
    manifest = dict(manifest)
    tables = manifest["tables"] = dict(manifest.get("tables", {}))
    dirty = manifest["dirty"] = dict(manifest.get("dirty", {}))
    copied: set[str] = set()  # tables whose entry and partitions dict are this result's own

    def own(table: str, layer: str | None = None) -> dict | None:
        entry = tables.get(table)
        if entry is None and layer is not None:
            entry = tables[table] = {"layer": layer, "partitions": {}}
            copied.add(table)
        elif entry is not None and table not in copied:
            entry = tables[table] = {**entry, "partitions": dict(entry["partitions"])}
            copied.add(table)
        return entry

    for op in ops:
        match op:
            case PutFile() | AddFile():
                partitions = own(op.table, op.layer)["partitions"]
                if isinstance(op, PutFile):
                    partitions[op.partition] = [op.file.entry()]
                else:
                    partitions[op.partition] = [*partitions.get(op.partition, []), op.file.entry()]
            case RemovePartition():
                if op.table in tables:
                    own(op.table)["partitions"].pop(op.partition, None)
            case MarkDirty():
                dirty[op.competition] = sorted(set(dirty.get(op.competition, [])) | set(op.months))
            case MarkClean():
                left = sorted(set(dirty.get(op.competition, [])) - set(op.months))
                if left:
                    dirty[op.competition] = left
                else:
                    dirty.pop(op.competition, None)
            case _:
                raise TypeError(f"not a staged operation: {op!r}")
    return manifest


def same_content(a: dict, b: dict) -> bool:
    """True when two manifests publish the same files and dirty marks."""
    return a.get("tables", {}) == b.get("tables", {}) and a.get("dirty", {}) == b.get("dirty", {})


def changed_partitions(before: dict, after: dict) -> dict[str, list[str]]:
    """The partitions of each table whose files differ between two manifests (added, removed
    or replaced), by table."""
    changed: dict[str, list[str]] = {}
    tables = set(before.get("tables", {})) | set(after.get("tables", {}))
    for table in sorted(tables):
        old = before.get("tables", {}).get(table, {}).get("partitions", {})
        new = after.get("tables", {}).get(table, {}).get("partitions", {})
        keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        if keys:
            changed[table] = keys
    return changed


def partition_month(key: str) -> str | None:
    """The month (YYYY-MM) a partition key names (`month=2026-11/…`, `raw_month=2026-11`), if
    any."""
    match = re.match(r"^(?:raw_)?month=(\d{4}-\d{2})(?:/|$)", key)
    return match.group(1) if match else None
