"""The warehouse folder: Parquet partitions, one manifest, one DuckDB file of views.

Layout (data.md):

    <warehouse>/
      bronze/<record type>/month=YYYY-MM/<run>-<n>.parquet   one file per delivery and month
      quarantine/file=<sha>/<run>-<n>.parquet                rejected lines of one delivery
      meta/ingest_log/run=<run>/<run>-<n>.parquet            one file per run
      silver/<table>/month=YYYY-MM/<run>-<n>.parquet         deal- and match-level results
      gold/<table>/month=YYYY-MM/<run>-<n>.parquet           ranking tables
      manifest.json                                          the published state
      duplirank.duckdb                                       views over the published files

How a run publishes (crash safety, idempotence):
- every data file is written once under a new name and never modified;
- the *manifest* lists, per table and partition, the files that are published; a run replaces
  it in one `os.replace` (atomic on POSIX), so readers of the manifest or of the DuckDB views see
  either the state before the run or the state after it, never half a month;
- the DuckDB file is rebuilt from the manifest into a temporary file, then `os.replace`d;
- files no longer listed (replaced partitions, leftovers of a crashed run) are deleted after
  the swap, or by the next run.
A crash before the manifest swap leaves only unreferenced files, cleaned up on the next run.

One run at a time: `Warehouse.lock()` takes an exclusive `flock` on `<warehouse>/.lock`; a
second run waits up to `wait_s` seconds, then stops with a clear message.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl

MANIFEST = "manifest.json"
DATABASE = "duplirank.duckdb"


class UserError(Exception):
    """An error the user can fix: printed as one line, exit code 2."""


class Warehouse:
    def __init__(self, root: Path | str):
        self.root = Path(root).resolve()

    # ------------------------------------------------------------------ reading
    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST

    @property
    def database_path(self) -> Path:
        return self.root / DATABASE

    def manifest(self, pending: list[dict] | None = None) -> dict:
        """{"version", "run_id", "dirty": {competition: [month]}, "tables": {table: {"layer",
        "partitions": {key: [relpath]}}}}, with the `pending` operations of a run applied."""
        try:
            manifest = json.loads(self.manifest_path.read_text())
        except FileNotFoundError:
            manifest = {"version": 0, "tables": {}, "dirty": {}}
        return apply_ops(manifest, pending or [])

    def files(
        self, table: str, partitions: list[str] | None = None, pending: list[dict] | None = None
    ) -> list[Path]:
        """Files of a table (some partitions, or all), as published plus `pending` changes."""
        entry = self.manifest(pending)["tables"].get(table)
        if entry is None:
            return []
        parts = entry["partitions"]
        if partitions is None:
            keys = sorted(parts)
        else:
            keys = [k for k in parts if any(k == p or k.startswith(p + "/") for p in partitions)]
        return [self.root / rel for k in sorted(keys) for rel in parts[k]]

    def partitions(self, table: str, pending: list[dict] | None = None) -> list[str]:
        entry = self.manifest(pending)["tables"].get(table)
        return sorted(entry["partitions"]) if entry else []

    def months(self, table: str, pending: list[dict] | None = None) -> list[str]:
        """Months that have a partition `month=YYYY-MM` in a table."""
        keys = self.partitions(table, pending)
        return sorted({k.split("/")[0][6:] for k in keys if k.startswith("month=")})

    def scan(
        self,
        table: str,
        partitions: list[str] | None = None,
        schema: dict | None = None,
        pending: list[dict] | None = None,
    ) -> pl.LazyFrame:
        """The rows of a table (optionally some partitions) as a LazyFrame."""
        files = self.files(table, partitions, pending)
        if not files:
            if schema is None:
                raise UserError(f"table {table} has no published data in {self.root}")
            return pl.LazyFrame(schema=schema)
        return pl.scan_parquet(files, missing_columns="insert", extra_columns="ignore")

    # ------------------------------------------------------------------ locking
    @contextlib.contextmanager
    def lock(self, wait_s: float = 30.0) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+") as handle:
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        handle.seek(0)
                        holder = handle.read().strip() or "another process"
                        raise UserError(
                            f"warehouse {self.root} is locked by a running job ({holder}); "
                            "try again when it has finished"
                        ) from None
                    time.sleep(0.2)
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # ------------------------------------------------------------------ writing
    def transaction(self, run_id: str) -> Transaction:
        return Transaction(self, run_id)

    def collect_garbage(self) -> int:
        """Delete data files the manifest does not list (leftovers of a crashed run)."""
        listed = listed_files(self.manifest())
        removed = 0
        for layer in ("bronze", "silver", "gold", "quarantine", "meta"):
            base = self.root / layer
            if not base.exists():
                continue
            for path in base.rglob("*"):
                if path.is_file() and str(path.relative_to(self.root)) not in listed:
                    path.unlink()
                    removed += 1
            for folder in sorted(base.rglob("*"), key=lambda p: len(p.parts), reverse=True):
                if folder.is_dir() and not any(folder.iterdir()):
                    folder.rmdir()
        for tmp in self.root.glob("*.tmp"):
            tmp.unlink()
        return removed


def listed_files(manifest: dict) -> set[str]:
    return {
        rel
        for entry in manifest["tables"].values()
        for files in entry["partitions"].values()
        for rel in files
    }


def apply_ops(manifest: dict, ops: list[dict]) -> dict:
    """Apply staged operations to a manifest (a deep copy is returned)."""
    manifest = json.loads(json.dumps(manifest))
    tables = manifest.setdefault("tables", {})
    dirty = manifest.setdefault("dirty", {})
    for op in ops:
        kind = op["op"]
        if kind in ("put", "add"):
            entry = tables.setdefault(op["table"], {"layer": op["layer"], "partitions": {}})
            files = entry["partitions"].setdefault(op["partition"], [])
            if kind == "put":
                files.clear()
            files.append(op["file"])
        elif kind == "remove":
            if op["table"] in tables:
                tables[op["table"]]["partitions"].pop(op["partition"], None)
        elif kind == "dirty":
            dirty[op["competition"]] = sorted(
                set(dirty.get(op["competition"], [])) | set(op["months"])
            )
        elif kind == "clean":
            left = sorted(set(dirty.get(op["competition"], [])) - set(op["months"]))
            if left:
                dirty[op["competition"]] = left
            else:
                dirty.pop(op["competition"], None)
        else:
            raise AssertionError(kind)
    return manifest


class Transaction:
    """The files a run writes, published all at once by `commit()`.

    Data files are written immediately under new names; what changes in the published state is
    kept as a list of plain operations (JSON-able), so tasks running elsewhere can return theirs
    and the flow merges them (`extend`) before one commit.
    """

    def __init__(self, warehouse: Warehouse, run_id: str):
        self.wh = warehouse
        self.run_id = run_id
        self.ops: list[dict] = []

    def _write(
        self, layer: str, table: str, partition: str, frame: pl.DataFrame | pl.LazyFrame
    ) -> str:
        rel = f"{layer}/{table}/{partition}/{self.run_id}-{uuid.uuid4().hex[:10]}.parquet"
        path = self.wh.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".parquet.tmp")
        if isinstance(frame, pl.LazyFrame):  # streamed to disk: bounded memory
            frame.sink_parquet(tmp, compression="zstd", statistics=True)
        else:
            frame.write_parquet(tmp, compression="zstd", statistics=True)
        os.replace(tmp, path)
        return rel

    def compact(self, layer: str, table: str, partition: str, max_files: int = 1) -> None:
        """Rewrite a partition made of many files (one per delivery) as one file."""
        files = self.wh.files(table, [partition], self.ops)
        if len(files) > max_files:
            self.put(layer, table, partition, pl.scan_parquet(files))

    def put(
        self, layer: str, table: str, partition: str, frame: pl.DataFrame | pl.LazyFrame
    ) -> None:
        """Replace a whole partition of a table by `frame`."""
        self._stage("put", layer, table, partition, frame)

    def add(
        self, layer: str, table: str, partition: str, frame: pl.DataFrame | pl.LazyFrame
    ) -> None:
        """Add a file to a partition (bronze deliveries, a month written batch by batch)."""
        self._stage("add", layer, table, partition, frame)

    def add_bytes(
        self, layer: str, table: str, partition: str, data: bytes | Path, suffix: str
    ) -> None:
        """Add a file kept as it is (not Parquet: e.g. the bytes of a delivery quarantined
        whole, for replay). Listed in the manifest like any file; not in the DuckDB views."""
        rel = f"{layer}/{table}/{partition}/{self.run_id}-{uuid.uuid4().hex[:10]}{suffix}"
        path = self.wh.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            shutil.copyfile(data, tmp)
        os.replace(tmp, path)
        self.ops.append(
            {"op": "add", "layer": layer, "table": table, "partition": partition, "file": rel}
        )

    def _stage(self, op: str, layer: str, table: str, partition: str, frame) -> None:
        rel = self._write(layer, table, partition, frame)
        self.ops.append(
            {"op": op, "layer": layer, "table": table, "partition": partition, "file": rel}
        )

    def put_schema(self, layer: str, table: str, frame: pl.DataFrame, suffix: str = "") -> None:
        """Keep the table's columns published even when it has no rows: an empty `_schema`."""
        self.put(layer, table, "_schema" + (f"/{suffix}" if suffix else ""), frame.clear())

    def remove(self, table: str, partition: str) -> None:
        """Unpublish a partition that no longer has rows."""
        self.ops.append({"op": "remove", "table": table, "partition": partition})

    def mark_dirty(self, competition: str, months: set[str] | list[str], clean: bool = False):
        """Months whose bronze changed and whose results must be rebuilt (survives a crash)."""
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
    ) -> None:
        """Replace the given months of `table` by the rows of `frame` in each month.

        A month with no rows is unpublished. A table always keeps its schema through one empty
        `_schema` partition. `suffix` names a sub-partition (`month=…/suffix`) when several
        producers share a table (data_issues).
        """
        for month in months:
            key = f"month={month}" + (f"/{suffix}" if suffix else "")
            rows = frame.filter(pl.col(column) == month)
            if rows.height:
                self.put(layer, table, key, rows)
            else:
                self.remove(table, key)
        self.put_schema(layer, table, frame, suffix)

    def extend(self, ops: list[dict]) -> None:
        self.ops.extend(ops)

    def commit(self, fail_before_swap: bool = False) -> dict:
        """Publish: one atomic manifest swap, then the DuckDB views, then cleanup."""
        published = self.wh.manifest()
        manifest = apply_ops(published, self.ops)
        manifest["version"] = manifest.get("version", 0) + 1
        manifest["run_id"] = self.run_id
        if fail_before_swap:  # used by the crash-safety tests
            raise RuntimeError("injected failure before the manifest swap")
        tmp = self.wh.manifest_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
        os.replace(tmp, self.wh.manifest_path)
        self.ops = []
        build_database(self.wh)
        for rel in listed_files(published) - listed_files(manifest):  # files it replaced
            (self.wh.root / rel).unlink(missing_ok=True)
        return manifest


def build_database(wh: Warehouse) -> Path:
    """Rebuild `duplirank.duckdb`: one view per published table over its listed files."""
    manifest = wh.manifest()
    tmp = wh.root / f"{DATABASE}.{os.getpid()}.tmp"
    if tmp.exists():
        tmp.unlink()
    con = duckdb.connect(str(tmp))
    try:
        for table, entry in sorted(manifest["tables"].items()):
            files = [
                str(wh.root / rel)
                for part in sorted(entry["partitions"])
                for rel in entry["partitions"][part]
                if rel.endswith(".parquet")  # files kept as they are (`add_bytes`) are not views
            ]
            if not files:
                continue
            listing = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
            con.execute(
                f'create view "{table}" as select * from read_parquet([{listing}], '
                "union_by_name = true)"
            )
        con.execute(
            "create table _published as select ?::integer as version, ?::varchar as run_id",
            [manifest["version"], manifest.get("run_id")],
        )
    finally:
        con.close()
    os.replace(tmp, wh.database_path)
    wal = wh.root / f"{DATABASE}.wal"
    if wal.exists():
        wal.unlink()
    return wh.database_path


def remove_warehouse(root: Path) -> None:
    """Delete a warehouse folder (tests and `make clean`)."""
    shutil.rmtree(root, ignore_errors=True)
