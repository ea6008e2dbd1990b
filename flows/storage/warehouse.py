"""The warehouse: Parquet files, a numbered history of publications, one current pointer.

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

How a run publishes (`Warehouse.run`): it takes the lock, stages data files under new names
(its `Transaction`), and at the end writes publication N+1 — the manifest with the checksum of
every file, then the views database, built and checked (every view answers) — and swaps the
pointer in one rename. Readers (the `sql` command, analysts' DuckDB, the pipeline) follow the
pointer, so they see publication N or N+1 whole, never parts of both. A crash before the swap
leaves publication N as it was; the next run redoes the work (landing files not in the
published `ingest_log` are read again). Garbage collection runs only after a successful
publication and keeps every file a publication of the last `retention_days` lists, so
connections opened on an older publication keep answering.
"""

from __future__ import annotations

import contextlib
import copy
import shutil
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from flows.errors import UserError
from flows.storage import manifest as mf
from flows.storage.manifest import ManifestError
from flows.storage.options import StorageOptions
from flows.storage.store import POINTER, STAGING, open_store, safe_path, sha256_of

if TYPE_CHECKING:  # imported where used: `duplirank sql` reads the manifest without Polars
    import polars as pl

PUBLICATIONS = "_publications"
MANIFEST = "manifest.json"
PUBLISHED = "published"  # marker written once a publication has been the current one
DATABASE = "duplirank.duckdb"
RECOVER_HINT = "run `duplirank recover` to restore the last valid publication"


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")


class DamagedFile(UserError):
    """A published file whose bytes no longer match the manifest's checksum."""


sha256_file = sha256_of

_UNSET = object()


class Warehouse:
    """A warehouse at a location: a local folder, or `s3://bucket/prefix` (`open_store`).

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
        return f"Warehouse({self.store.url})"

    def at(self, publication: str | None) -> Warehouse:
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

    def manifest(self, pending: list[dict] | None = None) -> dict:
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
        self, table: str, partitions: list[str] | None = None, pending: list[dict] | None = None
    ) -> list[dict]:
        return mf.table_files(self.manifest(pending), table, partitions)

    def files(
        self, table: str, partitions: list[str] | None = None, pending: list[dict] | None = None
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

    def partitions(self, table: str, pending: list[dict] | None = None) -> list[str]:
        entry = self.manifest(pending)["tables"].get(table)
        return sorted(entry["partitions"]) if entry else []

    def months(
        self, table: str, pending: list[dict] | None = None, key: str = "month"
    ) -> list[str]:
        """Values of the `key=…` partitions of a table (e.g. its months)."""
        prefix = key + "="
        return sorted(
            {k.split("/")[0][len(prefix) :] for k in self.partitions(table, pending)
             if k.startswith(prefix)}
        )  # fmt: skip

    def scan(
        self,
        table: str,
        partitions: list[str] | None = None,
        schema: dict | None = None,
        pending: list[dict] | None = None,
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

    # ------------------------------------------------------------------ running
    @contextlib.contextmanager
    def run(
        self,
        run_id: str,
        lock_wait_s: float = 30.0,
        retention_days: float = 7.0,
        hooks=None,
        command: str | None = None,
        retention=None,
    ) -> Iterator[Transaction]:
        """Lock, stage, publish once: the body stages into the yielded transaction and
        publishes it (`Transaction.publish`: one commit, its manifest naming `command`, then
        old files collected by `retention`, a `RetentionPolicy`, else `retention_days`);
        what it has not published when it ends is published then. The lock is held until the
        body ends, so what the body does after publishing (e.g. the results site) reads the
        publication it made, and no other run's. On an exception before the swap nothing is
        published and nothing but this run's own unpublished files is deleted."""
        with self.store.lock(lock_wait_s):
            self.manifest()  # a damaged publication stops the run before it writes anything
            tx = Transaction(self, run_id, hooks=hooks, command=command)
            tx.retention = retention if retention is not None else retention_days
            try:
                yield tx
                tx.publish()
            except BaseException:
                self._take_back(run_id)
                raise
            finally:
                tx.discard_staging()
                if self.store.kind == "local":
                    # every step's staging folder of this run (we hold the lock: nothing else
                    # stages here), also after a failure (a full disk must not stay full);
                    # on object storage staging folders are local temporary ones
                    self.store.delete_tree(STAGING)

    def repair_served(self) -> str | None:
        """Rebuild the current publication's views database if it does not serve the manifest
        from here (damaged, replaced, built for another folder); returns what was wrong."""
        from flows.storage.served import repair_database

        pointer = self.publication()
        if pointer is None:
            return None
        return repair_database(self, pointer, self.manifest())

    def _take_back(self, run_id: str) -> None:
        """After a failure: unless the pointer names this run's publication (it failed after
        its swap), delete the files it wrote. Its own publication, not "the base": on object
        storage a run that lost the race finds another run's publication current."""
        try:
            current = self.store.read_pointer() or ""
        except Exception:  # noqa: BLE001 - the original failure is the one to report
            return
        if not current.endswith(f"-{run_id}"):
            from flows.storage.retention import remove_run_files

            remove_run_files(self, run_id)

    def transaction(self, run_id: str) -> Transaction:
        return Transaction(self, run_id)


class Transaction:
    """The files a run writes, published all at once by `commit()`.

    Data files are written immediately under new names (staged, then moved into place); what
    changes in the published state is a list of JSON-able operations, so tasks running
    elsewhere return theirs and the flow merges them (`extend`) before one commit.
    """

    def __init__(self, warehouse: Warehouse, run_id: str, hooks=None, pending=(), command=None):
        self.wh = warehouse
        self.run_id = run_id
        self.command = command  # named in the manifest: what published it
        self.pending = list(pending)  # staged earlier in the run (read, not re-published)
        self.ops: list[dict] = []
        self.base = warehouse.publication()  # the publication this run builds on
        self._staging: Path | None = None
        self.hooks = hooks or {}  # callables run at the named points of `commit`
        self.retention = None  # what `publish` keeps: a RetentionPolicy or a number of days
        self.published: bool | None = None  # once `publish` ran: whether it had anything

    # ------------------------------------------------------------------ staging data
    def staging(self) -> Path:
        if self._staging is None:
            self._staging = self.wh.store.staging()
        return self._staging

    def discard_staging(self) -> None:
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None

    def write(
        self, layer: str, table: str, partition: str, frame, suffix: str = ".parquet",
        statistics: bool = True,
    ):  # fmt: skip
        """Write a data file of a partition (not yet published); returns its manifest entry.
        `frame`: a DataFrame or LazyFrame (Parquet), or bytes / a file path kept as they are;
        `statistics`: min/max/null counts per row group (a third of the cost of a write)."""
        import polars as pl

        rel = f"{layer}/{table}/{partition}/{self.run_id}-{uuid.uuid4().hex[:10]}{suffix}"
        tmp = self.staging() / rel.replace("/", "__")
        guard = self.wh.store._guard
        if isinstance(frame, bytes):
            guard(lambda: tmp.write_bytes(frame), f"write {rel}")
        elif isinstance(frame, Path):
            guard(lambda: shutil.copyfile(frame, tmp), f"write {rel}")
        elif isinstance(frame, pl.LazyFrame):  # streamed to disk: bounded memory
            guard(
                lambda: frame.sink_parquet(tmp, compression="zstd", statistics=statistics),
                f"write {rel}",
            )
        else:
            guard(
                lambda: frame.write_parquet(tmp, compression="zstd", statistics=statistics),
                f"write {rel}",
            )
        entry = {"path": rel, "sha256": sha256_file(tmp), "bytes": tmp.stat().st_size}
        self.wh.store.publish_file(rel, tmp, sha256=entry["sha256"])
        self.wh._verified.add(rel)
        return entry

    def put(self, layer: str, table: str, partition: str, frame) -> None:
        """Replace a whole partition of a table by `frame`."""
        self._stage("put", layer, table, partition, frame)

    def add(self, layer: str, table: str, partition: str, frame, statistics: bool = True) -> None:
        """Add a file to a partition (bronze deliveries, a month written batch by batch)."""
        self._stage("add", layer, table, partition, frame, statistics)

    def add_bytes(
        self, layer: str, table: str, partition: str, data: bytes | Path, suffix: str
    ) -> str:
        """Add a file kept as it is (not Parquet: e.g. the bytes of a delivery quarantined
        whole, for replay); listed like any file, not in the views. Returns its path."""
        entry = self.write(layer, table, partition, data, suffix)
        self.ops.append({"op": "add", "layer": layer, "table": table, "partition": partition,
                         "file": entry})  # fmt: skip
        return entry["path"]

    def _stage(
        self, op: str, layer: str, table: str, partition: str, frame, statistics: bool = True
    ) -> None:
        mf.PARTITION.match(partition) or _bad(f"partition {partition!r}")
        entry = self.write(layer, table, partition, frame, statistics=statistics)
        self.ops.append(
            {"op": op, "layer": layer, "table": table, "partition": partition, "file": entry}
        )

    def compact(
        self, layer: str, table: str, partition: str, max_files: int = 1, statistics: bool = True
    ) -> None:
        """Rewrite a partition made of more than `max_files` files as one file."""
        files = self.wh.files(table, [partition], self.view())
        if len(files) > max_files:
            scan = self.wh.scan_files(files, hive_partitioning=False)
            self._stage("put", layer, table, partition, scan, statistics)

    def put_schema(self, layer: str, table: str, frame: pl.DataFrame, suffix: str = "") -> None:
        """Keep the table's columns published even when it has no rows: an empty `_schema`."""
        key = "_schema" + (f"/{suffix}" if suffix else "")
        published = self.wh.entries(table, [key], self.view())
        if len(published) == 1 and _same_schema(self.wh, published[0], frame.schema):
            return  # unchanged: don't rewrite it every run
        self.put(layer, table, key, frame.clear())

    def remove(self, table: str, partition: str) -> None:
        """Unpublish a partition that no longer has rows."""
        self.ops.append({"op": "remove", "table": table, "partition": partition})

    def mark_dirty(self, competition: str, months, clean: bool = False) -> None:
        """Months whose bronze changed and whose results must be rebuilt (survives until a run
        rebuilds them)."""
        if months:
            op = "clean" if clean else "dirty"
            self.ops.append({"op": op, "competition": competition, "months": sorted(months)})

    def put_months(
        self,
        layer: str,
        table: str,
        frame: pl.DataFrame,
        months: list[str],
        suffix: str = "",
        column: str = "month",
        key: str = "month",
    ) -> None:
        """Replace the given values of partition `key` of `table` by the rows of `frame` whose
        `column` has that value. A value with no rows is unpublished; the table keeps its
        schema through one empty `_schema` partition. `suffix` names a sub-partition
        (`month=…/suffix`) when several producers share a table (data_issues)."""
        import polars as pl

        for month in months:
            part = f"{key}={month}" + (f"/{suffix}" if suffix else "")
            rows = frame.filter(pl.col(column) == month)
            if rows.height:
                self.put(layer, table, part, rows)
            else:
                self.remove(table, part)
        self.put_schema(layer, table, frame, suffix)

    def extend(self, ops: list[dict]) -> None:
        self.ops.extend(ops)

    def view(self) -> list[dict]:
        """Everything staged so far in the run: what this transaction's reads see."""
        return self.pending + self.ops

    # ------------------------------------------------------------------ publishing
    def publish(self) -> bool:
        """Publish what is staged: one commit, then the files no kept publication lists are
        collected (`retention`); with nothing staged, what is served is checked (the views
        database rebuilt if it must be). Once: a second call does nothing. Returns whether
        anything was staged."""
        if self.published is None:
            self.published = bool(self.ops)
            if self.ops:
                from flows.storage.retention import collect_garbage

                self.commit()
                collect_garbage(self.wh, 7.0 if self.retention is None else self.retention)
            else:  # nothing new: what is served is checked, and repaired if it must be
                self.wh.repair_served()
        return self.published

    def commit(self) -> dict:
        """Publish: write publication N+1 (manifest, then views, checked), swap the pointer."""
        from flows.storage.views import build_database

        wh, store = self.wh, self.wh.store
        published = wh.manifest()
        if wh.publication() != self.base:
            raise _conflict(store.url)
        manifest = mf.apply_ops(published, self.ops)
        if mf.same_content(manifest, published):
            self.ops = []
            return published  # nothing changes: no new publication
        manifest.update(
            version=published["version"] + 1,
            parent=published["version"] or None,
            run_id=self.run_id,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            command=self.command,
            changed=mf.changed_partitions(published, manifest),
        )
        folder = f"{PUBLICATIONS}/{manifest['version']:08d}-{self.run_id}"
        self._hook("before_manifest")
        store.write_bytes(f"{folder}/{MANIFEST}", mf.dumps(manifest))
        self._hook("before_views")
        build_database(wh, manifest, f"{folder}/{DATABASE}")
        self._hook("before_swap")
        if (
            self.base
            and self.base.startswith(PUBLICATIONS)
            and not store.has(f"{self.base}/{PUBLISHED}")
        ):  # a run killed right after its swap: that publication was current, so published
            store.write_bytes(f"{self.base}/{PUBLISHED}", b"")
        store.swap_pointer(folder, self.base)
        self._hook("after_swap")
        store.write_bytes(f"{folder}/{PUBLISHED}", manifest["created_at"].encode())
        store.ensure_link(DATABASE, f"{POINTER}/{DATABASE}")
        store.ensure_link(MANIFEST, f"{POINTER}/{MANIFEST}")
        self.base = folder
        self.ops = []
        return manifest

    def _hook(self, name: str) -> None:
        """A point of `commit` (`before_manifest`, `before_views`, `before_swap`,
        `after_swap`): runs the callable `hooks` gives it, if any (fault injection)."""
        hook = self.hooks.get(name)
        if hook is not None:
            hook()


def _same_schema(wh: Warehouse, entry: dict, schema) -> bool:
    try:
        scan = wh.scan_files([wh.store.uri(entry["path"])], hive_partitioning=False)
        return dict(scan.collect_schema()) == dict(schema)
    except Exception:  # noqa: BLE001 (unreadable: rewrite it)
        return False


def _conflict(url: str) -> UserError:
    return UserError(
        f"warehouse {url} was published by another run while this one ran; nothing of this "
        "run was published: run it again"
    )


def _bad(what: str):
    raise ValueError(f"bad {what}")
