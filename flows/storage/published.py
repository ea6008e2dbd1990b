"""A warehouse's published state: the publication its pointer names, read whole.

    <warehouse>/
      bronze/ silver/ gold/ quarantine/ meta/      data files, written once, never modified
      _publications/00000042-<run>/manifest.json   publication 42: every listed file + checksum
      _publications/00000042-<run>/duplirank.duckdb   the views of publication 42
      current -> _publications/00000042-<run>      the one pointer readers follow
      duplirank.duckdb -> current/duplirank.duckdb   for analysts (`duckdb -readonly`)
      manifest.json -> current/manifest.json

On object storage (`s3://bucket/prefix`, flows/storage/s3.py) the pointer is the object
`current.json`, swapped by a conditional PUT instead of a rename under a lock, and there are no
convenience links (readers follow `current.json`).

`Published` reads: the pointer (or a publication it is pinned to), the validated manifest, a
table's files checked against their checksums, a table as a Polars scan. Writing is
`Warehouse`'s (flows/storage/warehouse.py), which is a `Published` too; what reads or keeps
publications (retention, the views database, the history) needs only a `Published`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Self

from flows.errors import UserError
from flows.storage import manifest as mf
from flows.storage.locations import open_store
from flows.storage.manifest import ManifestError
from flows.storage.operations import Operation
from flows.storage.options import StorageOptions
from flows.storage.store import POINTER, safe_path

if TYPE_CHECKING:  # imported where used: `duplirank sql` reads the manifest without Polars
    import polars as pl

PUBLICATIONS = "_publications"
MANIFEST = "manifest.json"
PUBLISHED = "published"  # marker written once a publication has been the current one
DATABASE = "duplirank.duckdb"
RECOVER_HINT = "run `duplirank recover` to restore the last valid publication"


class DamagedFile(UserError):
    """A published file whose bytes no longer match the manifest's checksum."""


_UNSET = object()


class Published:
    """The published state of a warehouse at a location: a local folder, or
    `s3://bucket/prefix` (`open_store`).

    `pinned`: the publication to read instead of following the pointer (the steps of a run
    read the publication the run builds on, wherever they run: a Dask worker included)."""

    def __init__(
        self,
        location: Path | str,
        storage: StorageOptions | None = None,
        pinned: str | None | object = _UNSET,
    ):
        self.store = open_store(location, storage)
        self.root = self.store.root  # the local folder; None on object storage
        self._pinned = pinned
        self._cache: tuple[str | None, dict] | None = None
        self._verified: set[str] = set()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.store.url})"

    def at(self, publication: str | None) -> Self:
        """The same warehouse (same store) reading `publication` whatever the pointer says."""
        pinned = copy.copy(self)
        pinned._pinned, pinned._cache, pinned._verified = publication, None, set()
        return pinned

    # ------------------------------------------------------------------ the publication
    def publication(self) -> str | None:
        """Folder of the current publication (`_publications/…`), None for a new warehouse."""
        if self._pinned is not _UNSET:
            return self._pinned
        pointer = self.store.read_pointer()
        if pointer is None:
            folders = self.store.folders(PUBLICATIONS)
            # on object storage, a first publication being written by a run elsewhere is not
            # a lost pointer (its conditional swap decides which run publishes first): only
            # version 1 folders, all younger than the grace period; anything else was current
            if any(
                not f.startswith("00000001-") or not self.store.in_flight(f"{PUBLICATIONS}/{f}")
                for f in folders
            ):
                raise UserError(
                    f"warehouse {self.store.url}: its current publication is missing; "
                    + RECOVER_HINT
                )
            if self.store.is_legacy():
                raise UserError(
                    f"warehouse {self.store.url} was written by an older duplirank (manifest "
                    "format 1); ingest the landing archive into a new warehouse"
                )
            return None
        try:
            safe_path(pointer)
            if pointer != POINTER and not pointer.startswith(PUBLICATIONS + "/"):
                raise ValueError(pointer)
        except ValueError:
            raise UserError(
                f"warehouse {self.store.url}: `{POINTER}` points outside the warehouse "
                f"({pointer!r}); " + RECOVER_HINT
            ) from None
        return pointer

    def refresh_manifest(self, folder: str, manifest: dict) -> dict:
        """`manifest`, the manifest of `folder` as just rewritten (its views database rebuilt,
        `served.record_database`), replaces the one read before."""
        if self._cache is not None and self._cache[0] == folder:
            self._cache = (folder, manifest)
        return manifest

    def manifest(self, pending: Iterable[Operation] | None = None) -> dict:
        """The current (validated) manifest, with the `pending` operations of a run applied."""
        pointer = self.publication()
        if self._cache is None or self._cache[0] != pointer:
            self._cache = (pointer, self._read_manifest(pointer))
        current = self._cache[1]
        return mf.apply_ops(current, pending) if pending else current

    def _read_manifest(self, pointer: str | None) -> dict:
        if pointer is None:
            return mf.empty()
        where = f"warehouse {self.store.url}: the manifest of {pointer}"
        try:
            data = self.store.read_bytes(f"{pointer}/{MANIFEST}")
        except FileNotFoundError:
            raise UserError(f"{where} is missing; " + RECOVER_HINT) from None
        try:
            return mf.parse(data, where)
        except ManifestError as err:
            raise UserError(f"{err}; " + RECOVER_HINT) from None

    def version(self) -> int:
        return self.manifest()["version"]

    # ------------------------------------------------------------------ reading data
    def entries(
        self,
        table: str,
        partitions: list[str] | None = None,
        pending: Iterable[Operation] | None = None,
    ) -> list[dict]:
        return mf.table_files(self.manifest(pending), table, partitions)

    def files(
        self,
        table: str,
        partitions: list[str] | None = None,
        pending: Iterable[Operation] | None = None,
    ) -> list[str]:
        """Paths (URIs) of a table's files, checked against their checksums."""
        return [self.checked(e) for e in self.entries(table, partitions, pending)]

    def checked(self, entry: dict) -> str:
        """The URI of a listed file once its bytes match the manifest (checked once per
        process and file: a flipped bit is an error naming the file, never a wrong number)."""
        path = entry["path"]
        if path not in self._verified:
            problem = self.store.check(path, entry["sha256"], entry["bytes"])
            if problem == "missing":
                raise DamagedFile(
                    f"published file {path} is missing from {self.store.url}; "
                    + RECOVER_HINT
                    + " or rebuild its month with `duplirank backfill`"
                )
            if problem is not None:
                repair = (
                    "rebuild every table from the landing folder with `duplirank repair`"
                    if path.startswith("bronze/")
                    else "rebuild its month with `duplirank backfill --from M --to M`"
                )
                raise DamagedFile(
                    f"published file {path} is damaged (its checksum does not match the "
                    f"manifest); {repair}, or restore the file from a backup"
                )
            self._verified.add(path)
        return self.store.uri(path)

    def mark_verified(self, path: str) -> None:
        """A file this process wrote and hashed itself: `checked` need not read it again."""
        self._verified.add(path)

    def partitions(self, table: str, pending: Iterable[Operation] | None = None) -> list[str]:
        entry = self.manifest(pending)["tables"].get(table)
        return sorted(entry["partitions"]) if entry else []

    def months(
        self, table: str, pending: Iterable[Operation] | None = None, key: str = "month"
    ) -> list[str]:
        """Values of the `key=…` partitions of a table (e.g. its months)."""
        prefix = key + "="
        return sorted(
            {
                k.split("/")[0][len(prefix) :]
                for k in self.partitions(table, pending)
                if k.startswith(prefix)
            }
        )

    def scan(
        self,
        table: str,
        partitions: list[str] | None = None,
        schema: dict | None = None,
        pending: Iterable[Operation] | None = None,
    ) -> pl.LazyFrame:
        """The rows of a table (optionally some partitions) as a LazyFrame."""
        import polars as pl

        files = self.files(table, partitions, pending)
        if not files:
            if schema is None:
                raise UserError(f"table {table} has no published data in {self.store.url}")
            return pl.LazyFrame(schema=schema)
        return pl.scan_parquet(
            files,
            missing_columns="insert",
            extra_columns="ignore",
            hive_partitioning=False,
            storage_options=self.store.polars_options,
        )

    def scan_files(self, files: list[str], **options) -> pl.LazyFrame:
        """`pl.scan_parquet` of some files of this warehouse (URIs from `files`), with the
        store's credentials."""
        import polars as pl

        return pl.scan_parquet(files, storage_options=self.store.polars_options, **options)
