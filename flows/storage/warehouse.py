"""The warehouse you publish to: Parquet files, a numbered history of publications, one
current pointer (the layout: flows/storage/published.py).

How a run publishes (`Warehouse.run`): it takes the lock, stages data files under new names
(its `Transaction`), and at the end writes publication N+1 — the views database, built and
checked, then the manifest with the checksum of every file and of the database — and swaps the
pointer in one rename. Readers (the `sql` command, analysts' DuckDB, the pipeline) follow the
pointer, so they see publication N or N+1 whole, never parts of both. A crash before the swap
leaves publication N as it was; the next run redoes the work (landing files not in the
published `ingest_log` are read again). Garbage collection runs only after a successful
publication and keeps every file a publication of the last `retention_days` lists, so
connections opened on an older publication keep answering.
"""

from __future__ import annotations

import contextlib
import shutil
import uuid
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from flows.errors import UserError
from flows.storage import manifest as mf
from flows.storage.operations import (
    AddFile,
    MarkClean,
    MarkDirty,
    Operation,
    PutFile,
    RemovePartition,
    StagedFile,
)
from flows.storage.published import DATABASE, MANIFEST, PUBLICATIONS, PUBLISHED, Published
from flows.storage.store import POINTER, STAGING, sha256_of

if TYPE_CHECKING:
    import polars as pl


# told (warehouse URL, run id) when a run takes the lock: the supervising process
# (flows/supervise.py) cleans up after a run whose process died of a signal
RUN_STARTED: list = []


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")


class Warehouse(Published):
    """A warehouse you publish to: `run` locks it, stages into a `Transaction`, commits once.
    Everything it reads is `Published`'s (flows/storage/published.py)."""

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
            for tell in RUN_STARTED:
                tell(self.store.url, run_id)
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
                self._discard_staging()

    def _discard_staging(self) -> None:
        if self.store.kind == "local":
            # every step's staging folder (the caller holds the lock: nothing else stages
            # here), also after a failure (a full disk must not stay full); on object
            # storage staging folders are local temporary ones
            self.store.delete_tree(STAGING)

    def give_back_dead_runs(self, run_ids: list[str], lock_wait_s: float, retention=None) -> None:
        """What the runs `run_ids` of a process that died of a signal (aborted, killed) did
        not clean up, as `run` does after a failure: the files they wrote and did not publish,
        and the staging folders. A run that died after its swap gets the garbage collection it
        would have run (`retention`: a `RetentionPolicy`). Called by the process that watched
        it, once it is gone."""
        if self.root is not None and not self.root.is_dir():
            return  # it died before creating the warehouse: nothing was staged
        with self.store.lock(lock_wait_s):
            for run_id in run_ids:
                self._take_back(run_id)
            current = self.store.read_pointer() or ""
            if any(current.endswith(f"-{run_id}") for run_id in run_ids):
                from flows.storage.retention import RetentionPolicy, collect_garbage

                collect_garbage(self, retention or RetentionPolicy())
            self._discard_staging()

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
    changes in the published state is a list of staged operations (plain frozen dataclasses:
    flows/storage/operations.py), so tasks running elsewhere return theirs and the flow merges
    them (`extend`) before one commit.
    """

    def __init__(
        self,
        warehouse: Warehouse,
        run_id: str,
        hooks=None,
        pending: Iterable[Operation] = (),
        command: str | None = None,
    ):
        self.wh = warehouse
        self.run_id = run_id
        self.command = command  # named in the manifest: what published it
        self.pending = list(pending)  # staged earlier in the run (read, not re-published)
        self.ops: list[Operation] = []
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
        self,
        layer: str,
        table: str,
        partition: str,
        frame,
        suffix: str = ".parquet",
        statistics: bool = True,
    ) -> StagedFile:
        """Write a data file of a partition (not yet published); returns it as staged.
        `frame`: a DataFrame or LazyFrame (Parquet), or bytes / a file path kept as they are;
        `statistics`: min/max/null counts per row group (a third of the cost of a write)."""
        import polars as pl

        rel = f"{layer}/{table}/{partition}/{self.run_id}-{uuid.uuid4().hex[:10]}{suffix}"
        tmp = self.staging() / rel.replace("/", "__")
        try:
            guard = self.wh.store.guarded
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
            staged = StagedFile(rel, sha256_of(tmp), tmp.stat().st_size)
            self.wh.store.publish_file(rel, tmp, sha256=staged.sha256)
            self.wh.mark_verified(rel)
        finally:
            if self.wh.store.kind != "local":
                # object storage: the folder is a local temporary one, and the file has been
                # uploaded (or failed to be): nothing else removes it
                self.discard_staging()
        return staged

    def put(self, layer: str, table: str, partition: str, frame) -> None:
        """Replace a whole partition of a table by `frame`."""
        self._stage(PutFile, layer, table, partition, frame)

    def add(self, layer: str, table: str, partition: str, frame, statistics: bool = True) -> None:
        """Add a file to a partition (bronze deliveries, a month written batch by batch)."""
        self._stage(AddFile, layer, table, partition, frame, statistics)

    def add_bytes(
        self, layer: str, table: str, partition: str, data: bytes | Path, suffix: str
    ) -> str:
        """Add a file kept as it is (not Parquet: e.g. the bytes of a delivery quarantined
        whole, for replay); listed like any file, not in the views. Returns its path."""
        staged = self.write(layer, table, partition, data, suffix)
        self.ops.append(AddFile(layer, table, partition, staged))
        return staged.path

    def _stage(
        self,
        op: type[PutFile | AddFile],
        layer: str,
        table: str,
        partition: str,
        frame,
        statistics: bool = True,
    ) -> None:
        mf.PARTITION.match(partition) or _bad(f"partition {partition!r}")
        staged = self.write(layer, table, partition, frame, statistics=statistics)
        self.ops.append(op(layer, table, partition, staged))

    def compact(
        self, layer: str, table: str, partition: str, max_files: int = 1, statistics: bool = True
    ) -> None:
        """Rewrite a partition made of more than `max_files` files as one file."""
        files = self.wh.files(table, [partition], self.view())
        if len(files) > max_files:
            scan = self.wh.scan_files(files, hive_partitioning=False)
            self._stage(PutFile, layer, table, partition, scan, statistics)

    def put_schema(self, layer: str, table: str, frame: pl.DataFrame, suffix: str = "") -> None:
        """Keep the table's columns published even when it has no rows: an empty `_schema`."""
        key = "_schema" + (f"/{suffix}" if suffix else "")
        published = self.wh.entries(table, [key], self.view())
        if len(published) == 1 and _same_schema(self.wh, published[0], frame.schema):
            return  # unchanged: don't rewrite it every run
        self.put(layer, table, key, frame.clear())

    def remove(self, table: str, partition: str) -> None:
        """Unpublish a partition that no longer has rows."""
        self.ops.append(RemovePartition(table, partition))

    def mark_dirty(self, competition: str, months, clean: bool = False) -> None:
        """Months whose bronze changed and whose results must be rebuilt (survives until a run
        rebuilds them)."""
        if months:
            op = MarkClean if clean else MarkDirty
            self.ops.append(op(competition, tuple(sorted(months))))

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

    def extend(self, ops: Iterable[Operation]) -> None:
        self.ops.extend(ops)

    def view(self) -> list[Operation]:
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
                from flows.storage.served import repair_served

                repair_served(self.wh)
        return self.published

    def commit(self) -> dict:
        """Publish: write publication N+1 (its views database, built and checked, then the
        manifest naming every file and the database with their checksums), swap the pointer."""
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
        for served in ("database", "site"):  # the parent's views database and site
            manifest.pop(served, None)
        self._hook("before_views")
        manifest["database"] = build_database(wh, manifest, f"{folder}/{DATABASE}")
        self._hook("before_manifest")
        store.write_bytes(f"{folder}/{MANIFEST}", mf.dumps(manifest))
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
