"""The analysts' database: one DuckDB view per published table, over that publication's files.

Views list every file by its **absolute path** (on object storage its full `s3://` URI, read
through the s3fs file system registered on the connection, `store.prepare_duckdb`), so the
database answers as it is in any client opened from any folder — DuckDB's CLI, Python's
`execute`, `cursor()` and `pl.read_database`, a JDBC tool — with no setting to make. The table
`_publication` names the warehouse the views were built for (`root`): a warehouse copied or
moved elsewhere is relinked by `duplirank relink` (`relink`: each kept publication's database
rebuilt for its new place), and `duplirank sql` builds the views of the place it reads without
waiting for it. Databases of an older duplirank list paths relative to the warehouse, resolved
through `file_search_path`. Every view
and column carries the comment of the catalog (`sql/catalog.toml`); a public table with no
file yet is an empty view with the catalog's columns, so queries never fail on a fresh
warehouse. The database is built into a local temporary file, every view is queried once,
and only then is it moved (uploaded) into the publication folder; the sha256 and size of its
bytes go into the publication's manifest (`database`: what `duplirank sql` and `verify` check).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil

import duckdb

from flows.errors import UserError
from flows.storage import catalog
from flows.storage import manifest as mf


def file_sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def build_database(wh, manifest: dict, target: str) -> dict:
    """Write the views database of `manifest` at `target` (a path inside the warehouse);
    returns its manifest entry (`{"sha256", "bytes"}` of the bytes written)."""
    store = wh.store
    stage = store.staging()
    tmp = stage / f".{target.rsplit('/', 1)[-1]}.{os.getpid()}.tmp"
    try:
        con = duckdb.connect(str(tmp))
        try:
            store.prepare_duckdb(con)
            # the Parquet footers the views' binding reads are kept for the check that every
            # view answers (the same files, on this connection: read once, not twice)
            con.execute("set parquet_metadata_cache = true")
            # one commit, not one per view and comment; the statements sent at once (one
            # call each: ~0.2 ms a statement, 300 comments, every run)
            con.execute("begin transaction")
            con.execute(";\n".join(view_statements(manifest, store.view_path, store.url)))
            comments = comment_statements(con)
            if comments:
                con.execute(";\n".join(comments))
            con.execute("commit")
            check_views(con)  # on the connection that wrote them: a second one cost ~35 ms
            con.execute("checkpoint")
        finally:
            con.close()
        entry = {"sha256": file_sha256(tmp), "bytes": tmp.stat().st_size}
        store.publish_file(target, tmp)
        return entry
    except duckdb.Error as err:
        raise UserError(
            f"cannot build the views database: {' '.join(str(err).split())[:300]}"
        ) from None
    except OSError as err:
        from flows.storage.store import describe_os_error

        raise UserError(
            f"warehouse {wh.store.url}: {describe_os_error(err, 'build the views')}"
        ) from err
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
        shutil.rmtree(stage, ignore_errors=True)


def view_statements(
    manifest: dict, view_path=lambda path: path, root: str | None = ""
) -> list[str]:
    """The SQL that creates every view of a publication and its `_publication` row (`view_path`:
    how the views name a stored file — an absolute path, or a URI on object storage; `root`:
    the warehouse they are built for, None for the views alone)."""
    statements = []
    tables = catalog.tables()
    names = sorted(set(tables) | set(manifest["tables"]))
    for name in names:
        # non-Parquet files (deliveries kept whole for replay) are listed, not viewed
        listed = mf.table_files(manifest, name)
        paths = [f["path"] for f in listed if f["path"].endswith(".parquet")]
        doc = tables.get(name)
        if paths:
            listing = ", ".join(literal(view_path(p)) for p in paths)
            source = (
                f"select * from read_parquet([{listing}], union_by_name = true, "
                "hive_partitioning = false)"
            )
        elif doc is not None:
            columns = ", ".join(f"null::{col.type} as {quote(col.name)}" for col in doc.columns)
            source = f"select {columns} where false"
        else:
            continue
        statements.append(f"create view {quote(name)} as {source}")
    if root is not None:
        statements.append(
            "create table _publication as select "
            f"{int(manifest['version'])} as version, "
            f"{literal(str(manifest.get('run_id')))} as run_id, "
            f"{literal(str(manifest.get('created_at')))} as created_at, "
            f"{literal(root)} as root"
        )
    return statements


def view_sources(manifest: dict, view_path=lambda path: path) -> dict[str, str]:
    """Each view's query (the part after `create view … as`), by view name."""
    prefix = re.compile(r'^create view ("(?:[^"]|"")*") as ')
    sources = {}
    for statement in view_statements(manifest, view_path, root=None):
        match = prefix.match(statement)
        name = match.group(1)[1:-1].replace('""', '"')
        sources[name] = statement[match.end() :]
    return sources


def database_root(con: duckdb.DuckDBPyConnection, catalog_name: str | None = None) -> str | None:
    """The warehouse a views database was built for (None: an older database, whose views
    name their files relative to the warehouse)."""
    where = f"{quote(catalog_name)}." if catalog_name else ""
    columns = {
        r[0]
        for r in con.execute(
            "select column_name from duckdb_columns() where table_name = '_publication'"
            + (" and database_name = $db" if catalog_name else ""),
            {"db": catalog_name} if catalog_name else None,
        ).fetchall()
    }
    if "root" not in columns:
        return None
    return con.execute(f"select root from {where}_publication").fetchone()[0]


def comment_statements(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Comments of the catalog on the views and the columns they really have (a column the
    catalog does not know stays uncommented; `tests` keep the catalog complete)."""
    tables = catalog.tables()
    columns = con.execute(
        "select table_name, column_name from duckdb_columns() where not internal"
    ).fetchall()
    statements = []
    for name in sorted({t for t, _ in columns} & set(tables)):
        statements.append(f"comment on view {quote(name)} is {literal(tables[name].summary)}")
    for table, column in columns:
        doc = tables.get(table)
        described = doc.column(column) if doc else None
        if described is not None:
            statements.append(
                f"comment on column {quote(table)}.{quote(column)} is "
                f"{literal(described.description)}"
            )
    return statements


def check_views(con: duckdb.DuckDBPyConnection) -> None:
    """Every view answers (its files exist and are readable Parquet): one query counting the
    rows of all (one query a view cost ~40 ms a run)."""
    views = [
        r[0]
        for r in con.execute("select view_name from duckdb_views() where not internal").fetchall()
    ]
    counts = ", ".join(f"(select count(*) from {quote(view)})" for view in views)
    con.execute(f"select {counts or 0}").fetchall()
