"""The read-only connection of `duplirank sql`: the views database attached READ_ONLY, file
access limited to the published Parquet files, configuration locked, a private spill folder
(layer 2 of `flows.tools.query`)."""

from __future__ import annotations

import itertools
import os
import stat
import tempfile
from pathlib import Path, PurePosixPath

import duckdb

from flows.errors import UserError
from flows.settings import SqlLimits
from flows.storage import manifest as mf
from flows.storage.published import DATABASE
from flows.storage.warehouse import Warehouse
from flows.tools.query.statement import one_line

_CONNECTIONS = itertools.count()


def connect_read_only(
    warehouse: Path | str | Warehouse,
    limits: SqlLimits | None = None,
    timezone: str | None = None,
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection that reads the published tables of `warehouse` and nothing else
    (its current publication, or the one a pinned `Warehouse` names: `sql --as-of`).

    The views name their files by absolute path; a database built for another place (a copied
    or moved warehouse not yet relinked), or whose bytes are not those recorded when it was
    built, is replaced by the same views built for this one, in memory. An older database
    names them relative to the warehouse: `file_search_path` is its root. On object storage
    (`s3://…`) the publication's views database is fetched to a local cache (a publication
    never changes) and the s3fs file system is registered on the connection; `allowed_paths`
    holds the full URIs of the listed files. `timezone`: the session's time zone (timestamps
    are stored in UTC and shown in it; `duplirank sql` gives the platform's).
    """
    limits = limits or SqlLimits()
    wh = warehouse if isinstance(warehouse, Warehouse) else Warehouse(warehouse)
    store, root = wh.store, wh.root
    publication = wh.publication()  # a damaged or missing publication: one line naming recover
    if publication is None or not store.has(f"{publication}/{DATABASE}"):
        raise UserError(f"no published tables in {store.url} (run `duplirank nightly` first)")
    # every later read (manifest, files, views) is of this publication, even if a run swaps
    # the pointer meanwhile
    wh = wh.at(publication)
    database = store.fetch(f"{publication}/{DATABASE}")
    files = published_files(wh)
    spill = spill_folder(limits, root) / f"{os.getpid()}-{next(_CONNECTIONS)}"
    con = duckdb.connect()  # in memory: an instance of its own, with settings of its own
    try:
        for name, value, setting in (
            ("memory_limit", limits.memory_limit, "sql.memory_limit (--memory)"),
            ("max_temp_directory_size", limits.max_temp_size, "sql.max_temp_size"),
        ):
            try:
                con.execute(f"set {name} = $value", {"value": value})
            except duckdb.Error as err:
                raise UserError(f"{setting} {value!r}: {one_line(err)}") from None
        store.prepare_duckdb(con)  # file_search_path, or the s3fs file system
        for name, value in (
            ("temp_directory", str(spill)),  # created by DuckDB when it spills, removed on close
            ("autoinstall_known_extensions", False),
            ("autoload_known_extensions", False),
            ("allow_community_extensions", False),
            ("allow_persistent_secrets", False),
            ("python_enable_replacements", False),
        ):
            con.execute(f"set {name} = $value", {"value": value})
        if timezone is not None:
            con.execute("set TimeZone = $zone", {"zone": timezone})
        _attach_views(con, wh, publication, database, files)
        con.execute("use duplirank")
        allowed = [path for rel in files for path in store.readable_paths(rel)]
        con.execute("set allowed_paths = $paths", {"paths": allowed})
        con.execute("set enable_external_access = false")
        con.execute("set lock_configuration = true")
    except duckdb.Error as err:
        con.close()
        raise UserError(one_line(err)) from None
    except BaseException:
        con.close()
        raise
    return con


def _attach_views(
    con: duckdb.DuckDBPyConnection, wh: Warehouse, publication: str, database: Path, files
) -> None:
    """Attach the publication's views database as `duplirank` if its bytes are those recorded
    when it was built and its views name this warehouse's files; else attach in its place an
    in-memory database holding the publication's views built for this warehouse (a damaged
    or replaced database is never served; `verify` reports it, the next run rebuilds it)."""
    from flows.storage.served import database_intact
    from flows.storage.views import comment_statements, database_root, view_statements

    if database_intact(wh, publication, database) is not False:
        con.execute("attach $path as duplirank (read_only)", {"path": str(database)})
        built_for = database_root(con, "duplirank")
        if built_for is None:  # relative paths (an older duplirank): the current folder must
            if wh.root is not None:  # not shadow the warehouse
                _refuse_shadowing(wh.root, files)
            return
        if built_for == wh.store.url:
            return
        con.execute("detach duplirank")
    con.execute("attach ':memory:' as duplirank")
    con.execute("use duplirank")
    statements = view_statements(wh.manifest(), wh.store.view_path, wh.store.url)
    con.execute(";\n".join(statements))
    comments = comment_statements(con)
    if comments:
        con.execute(";\n".join(comments))
    con.execute("use memory")


def published_files(wh: Warehouse) -> list[str]:
    """The files the current publication lists, relative to the warehouse: Parquet files in it.

    The manifest is validated when read (checksum, shape, every path inside a data layer);
    still, a listed path that is absolute, climbs out with `..`, is not Parquet, is missing, or
    is a link resolving outside the warehouse is left out: a view naming it fails with a
    permission error instead of reading it.
    """
    root = wh.root
    listed = mf.files(wh.manifest())
    files = []
    for rel in sorted(r for r in listed if isinstance(r, str)):
        path = PurePosixPath(rel)
        if path.is_absolute() or ".." in path.parts or path.suffix != ".parquet":
            continue
        if root is None:  # object storage: no links, and a missing object fails to read
            files.append(str(path))
            continue
        real = (root / rel).resolve()
        if real.is_relative_to(root) and real.is_file():
            files.append(str(path))
    return files


def _refuse_shadowing(root: Path, files: list[str]) -> None:
    """DuckDB tries a relative path in the current folder before `file_search_path`: from a
    folder holding the same relative files (a copy of the warehouse), the views would silently
    read those. Refused with a clear line instead."""
    try:
        cwd = Path.cwd().resolve()
    except OSError:
        return
    if cwd == root:
        return
    tops = {PurePosixPath(rel).parts[0] for rel in files}
    if not any((cwd / top).is_dir() for top in tops):
        return
    for rel in files:
        if (cwd / rel).exists():
            raise UserError(
                f"the current folder {cwd} holds {rel}, which DuckDB would read in place of the "
                f"warehouse's: run from another folder (or from {root})"
            )


def spill_folder(limits: SqlLimits, root: Path | str | None) -> Path:
    """The folder DuckDB spills to, made private and never inside the warehouse.

    `sql.temp_directory`, or `$TMPDIR/duplirank-sql-<uid>` (0700, owned by us: like tmux's
    socket folder, it stays; each connection's files go in a sub-folder DuckDB removes).
    """
    root = Path(root).resolve() if root is not None and "://" not in str(root) else None
    if limits.temp_directory is not None:
        folder = Path(limits.temp_directory).expanduser().absolute()
    else:
        folder = Path(tempfile.gettempdir()) / f"duplirank-sql-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(folder)
    except OSError as err:
        raise UserError(f"cannot make the spill folder {folder}: {err.strerror}") from None
    if limits.temp_directory is None and (
        not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077
    ):
        raise UserError(
            f"{folder} is not a private folder of this user (mode 0700): remove it, or set "
            "sql.temp_directory"
        )
    if root is not None and folder.resolve().is_relative_to(root):
        raise UserError(
            f"the spill folder {folder} is inside the warehouse: set sql.temp_directory"
        )
    return folder.resolve()
